package com.didiglobal.sds.client.counter;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * SDS's concurrency limit: permits in flight, and the most in flight per
 * 10 s cycle. Same public API as SDS's class. Differences: one counter of
 * permits for the object's life, so {@link #updateConcurrentThreshold}
 * keeps the permits of calls in flight (SDS makes a new semaphore and
 * forgets them, over-admitting); and each thread can only release what it
 * acquired, even when it calls {@link #concurrentRelease()} twice.
 */
public class ConcurrentData {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    private final AtomicInteger inFlight = new AtomicInteger();
    /** Negative: no permit can be taken (SDS's behaviour for a negative update). */
    private volatile int concurrentThreshold;
    /** Permits the current thread holds on this object. */
    private final ThreadLocal<int[]> heldByThread = new ThreadLocal<int[]>() {
        @Override
        protected int[] initialValue() {
            return new int[1];
        }
    };
    /** One 10 s bucket per cycle: the cycle's maximum in flight. */
    private final SlidingWindowData cycleMaxConcurrentData = new SlidingWindowData(3, 1, 10);

    public ConcurrentData() {
        this(Integer.MAX_VALUE);
    }

    /** {@code concurrentThreshold <= 0}: unlimited. */
    public ConcurrentData(int concurrentThreshold) {
        this.concurrentThreshold = concurrentThreshold <= 0 ? Integer.MAX_VALUE : concurrentThreshold;
    }

    /** Takes a permit if one is left, and records the cycle's maximum in flight. */
    public boolean concurrentAcquire(long time) {
        int limit = Math.max(concurrentThreshold, 0);
        int held;
        boolean acquired;
        while (true) {
            int current = inFlight.get();
            if (current >= limit) {
                held = current;
                acquired = false;
                break;
            }
            if (inFlight.compareAndSet(current, current + 1)) {
                held = current + 1;
                acquired = true;
                break;
            }
        }
        if (acquired) {
            heldByThread.get()[0]++;
        }
        cycleMaxConcurrentData.raiseBucketTo(time, held);
        return acquired;
    }

    /** Returns one permit this thread acquired; nothing if it holds none. */
    public void concurrentRelease() {
        int[] held = heldByThread.get();
        if (held[0] > 0) {
            held[0]--;
            inFlight.decrementAndGet();
        }
    }

    /** Permits in flight; -1 when the threshold is negative (as SDS). */
    public int getConcurrentValue() {
        return concurrentThreshold < 0 ? -1 : inFlight.get();
    }

    /** Sets the limit; permits in flight stay counted. */
    public void updateConcurrentThreshold(int concurrentThreshold) {
        this.concurrentThreshold = concurrentThreshold;
    }

    /** The most in flight during the whole cycle before {@code time}'s. */
    public int getLastConcurrentMaxCountAndClean(long time) {
        return (int) cycleMaxConcurrentData.getLastWholeCycleValue(time);
    }

    public AbstractCycleData getCycleMaxConcurrentData() {
        return cycleMaxConcurrentData;
    }

    @Override
    public String toString() {
        return "ConcurrentData{concurrentThreshold=" + concurrentThreshold + ", inFlight=" + inFlight.get() + "}";
    }
}
