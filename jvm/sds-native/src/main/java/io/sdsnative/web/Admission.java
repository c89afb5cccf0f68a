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
    private final Route route;
    /** The policies that hold units (bits, as {@link Route.Decision#held}); 0: none. */
    private final long held;
    /** The keys and costs the units were taken with. */
    private final Object[] keys;
    private final long[] costs;
    private final AtomicBoolean finished = new AtomicBoolean();
    /** The response's status, read when it completes (async: from the listener). */
    private final jakarta.servlet.http.HttpServletResponse response;

    Admission(Entry entry, Route route, long held, Object[] keys, long[] costs,
            jakarta.servlet.http.HttpServletResponse response) {
        this.entry = entry;
        this.route = route;
        this.held = held;
        this.keys = keys;
        this.costs = costs;
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
        return entry != null || held != 0;
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
            if (held != 0) {
                route.release(held, keys, costs);
            }
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
