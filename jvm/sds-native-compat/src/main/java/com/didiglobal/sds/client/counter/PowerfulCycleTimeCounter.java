package com.didiglobal.sds.client.counter;

import com.didiglobal.sds.client.bean.VisitWrapperValue;

/**
 * Every counter of one SDS point. Same public API as SDS's class, on native
 * windows that need no cleanup thread.
 */
public class PowerfulCycleTimeCounter {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    static {
        startSdsServices();
    }

    private final AbstractCycleData visitData = new SlidingWindowData();
    private final ConcurrentData concurrentData = new ConcurrentData();
    private final SlidingWindowData exceptionData = new SlidingWindowData();
    private final SlidingWindowData timeoutData = new SlidingWindowData();
    private final TokenBucketData tokenBucketData = new TokenBucketData();
    private final AbstractCycleData downgradeData = new SlidingWindowData();

    /**
     * SDS's counters are made by its CycleDataService, whose first use starts
     * the heartbeat and strategy-pull threads. These counters do not need it
     * (no cleanup), but the rest of sds-client does: start it when present.
     */
    private static void startSdsServices() {
        try {
            Class.forName("com.didiglobal.sds.client.service.CycleDataService", true,
                    PowerfulCycleTimeCounter.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            // Used without sds-client: nothing to start.
        }
    }

    /**
     * The present for exceptions and timeouts, which SDS reports with their
     * request's start time: the time of the latest present-time call
     * (visit, permit, token, downgrade), or a later start. Not the highest
     * time ever given: after a clock step back, or one outlier time far
     * ahead, the next call brings it back, so late events count again in
     * the windows the decisions read (SEMANTICS: clock steps). Threads
     * racing to set it cost at most a start near the ring's edge counted
     * now rather than in its second.
     */
    private volatile long present;

    private void seen(long time) {
        present = time;
    }

    /** +1 in {@code data} for a request that started at {@code time}, at the {@link #present}. */
    private long addLate(SlidingWindowData data, long time) {
        long now = present;
        if (time > now) {
            present = now = time;
        }
        return data.addLate(time, now);
    }

    /** Visit +1: the current second and the 10 s sliding sum. */
    public VisitWrapperValue visitAddAndGet(long time) {
        seen(time);
        return visitData.incrementAndGet(time);
    }

    public long getLastSecondVisitBucketValue(long time) {
        return visitData.getBucketValue(time - 1000);
    }

    public long getLastCycleVisitValue(long time) {
        return visitData.getLastWholeCycleValue(time);
    }

    public boolean concurrentAcquire(long time) {
        seen(time);
        return concurrentData.concurrentAcquire(time);
    }

    public void concurrentRelease() {
        concurrentData.concurrentRelease();
    }

    public int getLastCycleConcurrentValue(long time) {
        return concurrentData.getLastConcurrentMaxCountAndClean(time);
    }

    /**
     * Exception +1 for a request that started at {@code time}: counted in
     * that second while the ring still holds it (else now), never wiping a
     * newer second. The sliding sum of the window ending at the second
     * counted in, as SDS returns.
     */
    public long exceptionAddAndGet(long time) {
        return addLate(exceptionData, time);
    }

    public long getExceptionValue(long time) {
        return exceptionData.getCurSlidingCycleValue(time);
    }

    public long getLastCycleExceptionValue(long time) {
        return exceptionData.getLastWholeCycleValue(time);
    }

    /** Timeout +1 for a request that started at {@code time}, as {@link #exceptionAddAndGet}. */
    public long timeoutAddAndGet(long time) {
        return addLate(timeoutData, time);
    }

    public long getTimeoutValue(long time) {
        return timeoutData.getCurSlidingCycleValue(time);
    }

    public long getLastCycleTimeoutValue(long time) {
        return timeoutData.getLastWholeCycleValue(time);
    }

    /** Token +1: the current second's count. */
    public long tokenBucketInvokeAddAndGet(long time) {
        seen(time);
        return tokenBucketData.takeOneToken(time);
    }

    /** Downgrade +1: the sliding sum. */
    public long downgradeAddAndGet(long time) {
        seen(time);
        return downgradeData.incrementAndGet(time).getSlidingCycleValue();
    }

    public long getDowngradeValue(long time) {
        return downgradeData.getCurSlidingCycleValue(time);
    }

    public long getLastCycleDowngradeValue(long time) {
        return downgradeData.getLastWholeCycleValue(time);
    }

    public void updateConcurrentThreshold(int concurrentThreshold) {
        concurrentData.updateConcurrentThreshold(concurrentThreshold);
    }
}
