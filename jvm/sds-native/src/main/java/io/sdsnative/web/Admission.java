package io.sdsnative.web;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.sdsnative.Entry;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;

/**
 * An admitted request's debts: the in-flight units it holds and its point's
 * entry, settled once when its response completes ({@link #finish}), on
 * whichever thread that happens (an asynchronous request's listener).
 */
final class Admission implements AsyncListener {
    private final Entry entry;
    /** Null when it holds no in-flight units. */
    private final Holdings held;
    private final AtomicBoolean finished = new AtomicBoolean();
    /** The response's status, read when it completes (async: from the listener). */
    private final jakarta.servlet.http.HttpServletResponse response;

    Admission(Entry entry, Holdings held, jakarta.servlet.http.HttpServletResponse response) {
        this.entry = entry;
        this.held = held;
        this.response = response;
    }

    /**
     * Sleeps the paced wait of the point's entry ({@link Entry#waitMs()}),
     * before the application runs. False when the thread was interrupted
     * meanwhile: the interrupt flag is set again and everything is settled
     * as for a request that never ran (units back, the entry exited without
     * an exception).
     */
    boolean awaitTurn() {
        long wait = entry == null ? 0 : entry.waitMs();
        if (wait == 0) {
            return true;
        }
        try {
            TimeUnit.MILLISECONDS.sleep(wait);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            finish(null, 0);
            return false;
        }
    }

    /** Whether there is anything to settle. */
    boolean owes() {
        return entry != null || held != null;
    }

    /**
     * The response completed with {@code status}, or the application threw
     * {@code error}: in-flight units go back and the entry exits, failed by an
     * error or a 5xx. Later calls do nothing.
     */
    void finish(Throwable error, int status) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        try {
            Holdings.release(held);
        } finally {
            if (entry != null) {
                if (error != null) {
                    entry.error(error);
                } else if (status >= 500) {
                    entry.error(new ServerError(status));
                }
                entry.close();
            }
        }
    }

    @Override
    public void onComplete(AsyncEvent event) throws IOException {
        finish(null, response.getStatus());
    }

    @Override
    public void onTimeout(AsyncEvent event) throws IOException {
        finish(event.getThrowable() != null ? event.getThrowable() : new ServerError(503), 503);
    }

    @Override
    public void onError(AsyncEvent event) throws IOException {
        Throwable t = event.getThrowable();
        finish(t != null ? t : new ServerError(500), 500);
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // A new cycle (startAsync again): keep listening to it.
        event.getAsyncContext().addListener(this);
    }
}
