package com.didiglobal.sds.client.counter;

import com.didiglobal.sds.client.bean.VisitWrapperValue;

/**
 * A counter over time buckets: a sliding window of the last buckets, and
 * whole cycles of aligned buckets. Same public API as SDS's class.
 */
public abstract class AbstractCycleData {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    /** Adds one to the bucket of {@code time}; that bucket's value and the sliding sum. */
    public abstract VisitWrapperValue incrementAndGet(long time);

    /** Sets the bucket of {@code time}. */
    public abstract void setBucketValue(long time, Long value);

    /** The value of the bucket of {@code time}. */
    public abstract long getBucketValue(long time);

    /** The sliding sum: the window of buckets ending at {@code time}'s, which is included. */
    public abstract long getCurSlidingCycleValue(long time);

    /** The sum of the whole cycle before the one holding {@code time}. */
    public abstract long getLastWholeCycleValue(long time);

    /** Zeroes the whole cycle after the one holding {@code time}. */
    public abstract void clearNextCycleValue(long time);
}
