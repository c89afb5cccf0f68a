package io.sdsnative;

import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * The native side of a background service attached to a {@link Client}
 * ({@link AdminAgent}, {@link ClusterSync}): its handle, the calls on it,
 * and the close that stops the native thread, frees the handle once no call
 * uses it and detaches the service from its client.
 */
final class ServiceHandle {
    /** A native stop: stops the service's thread and joins it; idempotent. */
    interface Stop {
        void stop(long handle, Object owner);
    }

    private final NativeHandle handle;
    private final Client client;
    private final Stop stop;

    ServiceHandle(Client client, long address, LongConsumer free, Stop stop) {
        this.client = client;
        this.handle = new NativeHandle(address, free);
        this.stop = stop;
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
     * native stop to keep it reachable), then frees the handle and detaches
     * the service from its client; a second call does nothing.
     */
    synchronized void close(Client.Attached owner) {
        if (handle.isClosed()) {
            return;
        }
        run(address -> stop.stop(address, owner));
        handle.close();
        client.forget(owner);
    }
}
