package io.sdsnative;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Native memory that {@link #close()} frees as soon as no call is using it.
 * Every call brackets its use with {@link #acquire()} and {@link #release()}:
 * the count of running calls is striped by thread (one padded cell per
 * stripe), so threads calling one client do not all write one cache line.
 *
 * <p>Why it is safe without a lock: a call counts itself, then reads
 * {@code closed}; {@code close()} writes {@code closed}, then reads the
 * counts. All are volatile, so either the call sees {@code closed} (and backs
 * out without touching the memory) or {@code close()} sees the call's count
 * (and leaves the free to the call's release). Whoever finds every count at
 * zero after the close frees, once.
 */
final class NativeHandle {
    /** Longs per stripe: 128 bytes, two cache lines, so stripes never share one. */
    private static final int PAD = 16;
    private static final int STRIPES = stripes();

    private final long address;
    private final LongConsumer free;
    private final AtomicLongArray calls = new AtomicLongArray(STRIPES * PAD);
    private final AtomicBoolean freed = new AtomicBoolean();
    private volatile boolean closed;

    NativeHandle(long address, LongConsumer free) {
        this.address = address;
        this.free = free;
    }

    /** A power of two near the processor count, at most 32. */
    private static int stripes() {
        int cpus = Math.min(Runtime.getRuntime().availableProcessors(), 32);
        return Integer.highestOneBit(Math.max(cpus, 1) * 2 - 1);
    }

    private static int stripe() {
        return ((int) Thread.currentThread().getId() & (STRIPES - 1)) * PAD;
    }

    /**
     * Counts a call on this thread and returns the address, valid until the
     * matching {@link #release()} on the same thread.
     *
     * @throws SdsException {@code CLOSED} once closed
     */
    long acquire() {
        int stripe = stripe();
        calls.getAndIncrement(stripe);
        if (closed) {
            done(stripe);
            throw closedError();
        }
        return address;
    }

    /**
     * As {@link #acquire()}, but 0 (and nothing to release) once closed.
     */
    long tryAcquire() {
        int stripe = stripe();
        calls.getAndIncrement(stripe);
        if (closed) {
            done(stripe);
            return 0;
        }
        return address;
    }

    /**
     * {@code call} with the address, which stays valid until it returns.
     *
     * @throws SdsException {@code CLOSED} once closed
     */
    <T> T call(LongFunction<T> call) {
        long address = acquire();
        try {
            return call.apply(address);
        } finally {
            release();
        }
    }

    /** As {@link #call}, for a call without a result. */
    void run(LongConsumer call) {
        call(address -> {
            call.accept(address);
            return null;
        });
    }

    private static SdsException closedError() {
        return SdsException.of(ErrorCode.CLOSED);
    }

    /** Ends the call {@link #acquire()} counted on this thread. */
    void release() {
        done(stripe());
    }

    private void done(int stripe) {
        calls.getAndDecrement(stripe);
        if (closed) {
            freeIfIdle();
        }
    }

    /** Later calls throw {@code CLOSED}; the memory is freed once the running ones end. */
    void close() {
        closed = true;
        freeIfIdle();
    }

    boolean isClosed() {
        return closed;
    }

    /** Whether the memory was freed (tests). */
    boolean isFreed() {
        return freed.get();
    }

    private void freeIfIdle() {
        for (int i = 0; i < STRIPES; i++) {
            if (calls.get(i * PAD) != 0) {
                return;
            }
        }
        if (freed.compareAndSet(false, true)) {
            free.accept(address);
        }
    }
}
