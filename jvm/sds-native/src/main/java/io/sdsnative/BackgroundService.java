package io.sdsnative;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * A native background service working on a {@link Client}'s table:
 * {@link AdminAgent} (the SDS console agent) or {@link ClusterSync} (the
 * cluster sync with Redis). Its native thread, started by the client's
 * {@code connect...} call, runs until {@link #close()} or the client's
 * {@code close()}; {@link Client#enter} never waits on it. Thread-safe.
 *
 * <p>The client holds its services and each service its client, so a service
 * runs while either is in use. One never closed is stopped once both are
 * garbage (see {@link NativeReclaimer}; the join happens on a native thread
 * of its own, {@code sds-reaper}): close it rather than rely on that.
 *
 * @param <S> its status
 */
public abstract class BackgroundService<S extends NativeStatus> implements AutoCloseable {
    private final NativeHandle handle;
    private final Client client;
    /** The status of the native values. */
    private final Function<String[], S> status;
    /** The status read after the native stop; set before the handle closes. */
    private volatile S last;
    private final AtomicBoolean closing = new AtomicBoolean();

    BackgroundService(Client client, long address, Function<String[], S> status) {
        this.client = client;
        this.handle = new NativeHandle(address, Native::serviceFree);
        this.status = status;
        NativeReclaimer.whenCollected(this, handle::close);
    }

    /** The service's state now; once closed, its last state (as of the join). */
    public S status() {
        S closed = last;
        if (closed != null) {
            return closed;
        }
        try {
            return call(this::readStatus);
        } catch (SdsException e) {
            // Closed between the two reads: the last status is set by then.
            closed = last;
            if (closed == null) {
                throw e;
            }
            return closed;
        }
    }

    private S readStatus(long address) {
        return status.apply(Native.serviceStatus(address, this));
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Stops the service and waits for its thread to end (how long: see the
     * service); detaches it from its client. A second call does nothing, also
     * while the first still waits (which may be the service's own thread: a
     * log handler closing its agent must not wait for itself); later
     * {@link #status()} calls give the last state, the service's other calls
     * throw {@code CLOSED}.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        handle.run(address -> {
            Native.serviceStop(address, this);
            client.stopped(this, address);
        });
        last = call(this::readStatus);
        handle.close();
        client.forget(this);
    }

    /**
     * {@code call} on the live handle, which stays valid until it returns.
     *
     * @throws SdsException {@code CLOSED} once closed
     */
    <T> T call(LongFunction<T> call) {
        return handle.call(call);
    }

    /** As {@link #call}, for a call without a result. */
    void run(LongConsumer call) {
        handle.run(call);
    }

    /** The live handle, to pass with this service as owner until {@link #release()}; 0 once closed. */
    long tryAcquire() {
        return handle.tryAcquire();
    }

    /** Ends a {@link #tryAcquire()} that gave a handle. */
    void release() {
        handle.release();
    }
}
