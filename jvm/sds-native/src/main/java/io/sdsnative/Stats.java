package io.sdsnative;

/**
 * A point's sliding values at one time and the sums of its last whole 10 s
 * cycle, as SDS uploads them.
 */
public final class Stats {
    private final long[] v;

    Stats(long[] values) {
        this.v = values;
    }

    /** Visits in the sliding window. */
    public long visit() {
        return v[0];
    }

    /** Exceptions in the sliding window. */
    public long exception() {
        return v[1];
    }

    /** Timeouts in the sliding window. */
    public long timeout() {
        return v[2];
    }

    /** Downgrades in the sliding window. */
    public long downgrade() {
        return v[3];
    }

    /** Requests holding a concurrency permit now. */
    public long concurrent() {
        return v[4];
    }

    /** Visits in the last whole cycle. */
    public long lastCycleVisitNum() {
        return v[5];
    }

    /** Exceptions in the last whole cycle (counted at their requests' start). */
    public long lastCycleExceptionNum() {
        return v[6];
    }

    /** Timeouts in the last whole cycle (counted at their requests' start). */
    public long lastCycleTimeoutNum() {
        return v[7];
    }

    /** Downgrades in the last whole cycle. */
    public long lastCycleDowngradeNum() {
        return v[8];
    }

    /** The most requests in flight at once in the last whole cycle. */
    public long lastCycleConcurrentNum() {
        return v[9];
    }

    @Override
    public String toString() {
        return "Stats{visit=" + visit() + ", exception=" + exception() + ", timeout=" + timeout()
                + ", downgrade=" + downgrade() + ", concurrent=" + concurrent()
                + ", lastCycle={visitNum=" + lastCycleVisitNum() + ", exceptionNum=" + lastCycleExceptionNum()
                + ", timeoutNum=" + lastCycleTimeoutNum() + ", downgradeNum=" + lastCycleDowngradeNum()
                + ", concurrentNum=" + lastCycleConcurrentNum() + "}}";
    }
}
