package io.sdsnative;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * The native side of a background service attached to a {@link Client}
 * ({@link AdminAgent}, {@link ClusterSync}): its handle, the calls on it,
 * its status (of type {@code S}), and the close that stops the native
 * thread, keeps the last status, frees the handle once no call uses it and
 * detaches the service from its client.
 */
final class ServiceHandle<S> {
    /** A native stop: stops the service's thread and joins it; idempotent. */
    interface Stop {
        void stop(long handle, Object owner);
    }

    private final NativeHandle handle;
    private final Client client;
    private final Stop stop;
    private final LongFunction<S> status;
    /** The status read after the native stop; set before the handle closes. */
    private volatile S last;
    private final AtomicBoolean closing = new AtomicBoolean();

    ServiceHandle(Client client, long address, LongConsumer free, Stop stop, LongFunction<S> status) {
        this.client = client;
        this.handle = new NativeHandle(address, free);
        this.stop = stop;
        this.status = status;
    }

    /** The service's status now; once closed, its last one. */
    S status() {
        S closed = last;
        if (closed != null) {
            return closed;
        }
        try {
            return call(status);
        } catch (SdsException e) {
            // Closed between the two reads: the last status is set by then.
            closed = last;
            if (closed == null) {
                throw e;
            }
            return closed;
        }
    }

    /**
     * {@code call} on the live handle, which stays valid until it returns.
     *
     * @throws SdsException {@code CLOSED} once closed
     */
    <T> T call(LongFunction<T> call) {
        long address = handle.acquire();
        try {
            return call.apply(address);
        } finally {
            handle.release();
        }
    }

    /** As {@link #call}, for a call without a result. */
    void run(LongConsumer call) {
        long address = handle.acquire();
        try {
            call.accept(address);
        } finally {
            handle.release();
        }
    }

    boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Stops the native thread of {@code owner} (the service, passed to the
     * native stop to keep it reachable), keeps its last status, then frees
     * the handle and detaches the service from its client. Only the first
     * call does this; the others return at once, also while the first still
     * waits for the thread (which may be the caller: a log handler closing
     * its own agent must not wait for itself).
     */
    void close(Client.Attached owner) {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        run(address -> stop.stop(address, owner));
        last = call(status);
        handle.close();
        client.forget(owner);
    }
}
