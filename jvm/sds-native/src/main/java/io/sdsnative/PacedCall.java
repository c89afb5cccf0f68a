package io.sdsnative;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One admitted {@link Client#callAsync} request: its work starts once the
 * entry's wait has passed, and the entry exits when the work's stage
 * completes, or at once if the caller cancels before the start. The entry is
 * exited exactly once, by whichever of them wins the state.
 */
final class PacedCall<T> implements Runnable {
    private static final int WAITING = 0;
    private static final int STARTED = 1;
    private static final int ABANDONED = 2;

    private final Entry entry;
    private final Supplier<? extends CompletionStage<T>> work;
    private final CompletableFuture<T> result = new CompletableFuture<>();
    private final AtomicInteger state = new AtomicInteger(WAITING);

    PacedCall(Entry entry, Supplier<? extends CompletionStage<T>> work) {
        this.entry = entry;
        this.work = work;
    }

    /** Runs the work now (no wait) or schedules it; the caller's future. */
    CompletableFuture<T> start(ScheduledExecutorService scheduler) {
        long wait = entry.waitMs();
        if (wait == 0) {
            run();
            return result;
        }
        ScheduledFuture<?> timer;
        try {
            timer = scheduler.schedule(this, wait, TimeUnit.MILLISECONDS);
        } catch (RuntimeException refused) {
            // RejectedExecutionException (a scheduler shut down): the work never runs.
            abandon();
            result.completeExceptionally(refused);
            return result;
        }
        result.whenComplete((value, error) -> {
            if (error instanceof CancellationException && abandon()) {
                timer.cancel(false);
            }
        });
        return result;
    }

    /** The wait is over: starts the work, unless the caller cancelled first. */
    @Override
    public void run() {
        if (!state.compareAndSet(WAITING, STARTED)) {
            return;
        }
        CompletionStage<T> stage;
        try {
            stage = work.get();
            if (stage == null) {
                throw new NullPointerException("callAsync: work returned null instead of a stage");
            }
        } catch (Throwable t) {
            finish(null, t);
            return;
        }
        stage.whenComplete(this::finish);
    }

    /** The work ended: the entry exits (failed by an error), then the caller's future completes. */
    private void finish(T value, Throwable error) {
        try {
            if (error != null) {
                entry.error(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
            }
            entry.close();
        } finally {
            if (error != null) {
                result.completeExceptionally(error);
            } else {
                result.complete(value);
            }
        }
    }

    /** Exits the entry of work that will never start; whether it was still waiting. */
    private boolean abandon() {
        if (!state.compareAndSet(WAITING, ABANDONED)) {
            return false;
        }
        entry.close();
        return true;
    }
}
