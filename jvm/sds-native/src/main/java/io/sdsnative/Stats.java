package io.sdsnative;

/**
 * A point's sliding values at one time and the sums of its last whole 10 s
 * cycle, as SDS uploads them.
 */
public final class Stats {
    // Positions in the core's stats table, found by name.
    private static final int VISIT = CoreTables.statsIndex("visit");
    private static final int EXCEPTION = CoreTables.statsIndex("exception");
    private static final int TIMEOUT = CoreTables.statsIndex("timeout");
    private static final int DOWNGRADE = CoreTables.statsIndex("downgrade");
    private static final int CONCURRENT = CoreTables.statsIndex("concurrent");
    private static final int ADAPTIVE_LIMIT = CoreTables.statsIndex("adaptiveLimit");
    private static final int ADAPTIVE_MIN_RTT = CoreTables.statsIndex("adaptiveMinRttUs");
    private static final int ADAPTIVE_RTT = CoreTables.statsIndex("adaptiveRttUs");
    private static final int ADAPTIVE_LONG_RTT = CoreTables.statsIndex("adaptiveLongRttUs");
    private static final int LAST_VISIT = CoreTables.statsIndex("lastCycle.visitNum");
    private static final int LAST_EXCEPTION = CoreTables.statsIndex("lastCycle.exceptionNum");
    private static final int LAST_TIMEOUT = CoreTables.statsIndex("lastCycle.timeoutNum");
    private static final int LAST_DOWNGRADE = CoreTables.statsIndex("lastCycle.downgradeNum");
    private static final int LAST_CONCURRENT = CoreTables.statsIndex("lastCycle.concurrentNum");

    /** The values in the order of {@link CoreTables#STATS_NAMES}. */
    private final long[] v;

    Stats(long[] values) {
        this.v = values;
    }

    /** Visits in the sliding window. */
    public long visit() {
        return v[VISIT];
    }

    /** Exceptions in the sliding window. */
    public long exception() {
        return v[EXCEPTION];
    }

    /** Timeouts in the sliding window. */
    public long timeout() {
        return v[TIMEOUT];
    }

    /** Downgrades in the sliding window. */
    public long downgrade() {
        return v[DOWNGRADE];
    }

    /** Requests holding a concurrency permit now. */
    public long concurrent() {
        return v[CONCURRENT];
    }

    /** The adaptive in-flight limit now ({@code adaptiveConcurrency}); 0 without one. */
    public long adaptiveLimit() {
        return v[ADAPTIVE_LIMIT];
    }

    /**
     * The reference RTT the adaptive limit compares against, in µs: VEGAS's
     * no-load RTT, GRADIENT2's long-term average, GRADIENT's and KNEE's
     * sampled min RTT (0 until measured); 0 for AIMD and without the row.
     */
    public long adaptiveMinRttUs() {
        return v[ADAPTIVE_MIN_RTT];
    }

    /**
     * The recent RTT, in µs: the last sample's (AIMD, VEGAS, GRADIENT2), the
     * last window's p50 (GRADIENT, KNEE); 0 without the row.
     */
    public long adaptiveRttUs() {
        return v[ADAPTIVE_RTT];
    }

    /**
     * The long RTT, in µs: GRADIENT2's exponential average over 600 samples,
     * GRADIENT's min RTT plus its 25 % buffer, KNEE's min RTT / (1 - h), h its headroom of 4 % or more (the
     * latency it settles at); 0 for AIMD, VEGAS and without the row.
     */
    public long adaptiveLongRttUs() {
        return v[ADAPTIVE_LONG_RTT];
    }

    /** Visits in the last whole cycle. */
    public long lastCycleVisitNum() {
        return v[LAST_VISIT];
    }

    /** Exceptions in the last whole cycle (counted at their requests' start). */
    public long lastCycleExceptionNum() {
        return v[LAST_EXCEPTION];
    }

    /** Timeouts in the last whole cycle (counted at their requests' start). */
    public long lastCycleTimeoutNum() {
        return v[LAST_TIMEOUT];
    }

    /** Downgrades in the last whole cycle. */
    public long lastCycleDowngradeNum() {
        return v[LAST_DOWNGRADE];
    }

    /** The most requests in flight at once in the last whole cycle. */
    public long lastCycleConcurrentNum() {
        return v[LAST_CONCURRENT];
    }

    @Override
    public String toString() {
        return "Stats{visit=" + visit() + ", exception=" + exception() + ", timeout=" + timeout()
                + ", downgrade=" + downgrade() + ", concurrent=" + concurrent()
                + ", adaptiveLimit=" + adaptiveLimit() + ", adaptiveMinRttUs=" + adaptiveMinRttUs()
                + ", adaptiveRttUs=" + adaptiveRttUs() + ", adaptiveLongRttUs=" + adaptiveLongRttUs()
                + ", lastCycle={visitNum=" + lastCycleVisitNum() + ", exceptionNum=" + lastCycleExceptionNum()
                + ", timeoutNum=" + lastCycleTimeoutNum() + ", downgradeNum=" + lastCycleDowngradeNum()
                + ", concurrentNum=" + lastCycleConcurrentNum() + "}}";
    }
}
