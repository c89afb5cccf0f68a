package com.didiglobal.sds.client.bean;

/**
 * A counter's value after an increment: the current bucket and the sliding
 * window's sum. Same public API as SDS's class of this name.
 */
public class VisitWrapperValue {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    private long bucketValue;
    private long slidingCycleValue;

    public VisitWrapperValue(long bucketValue, long slidingCycleValue) {
        this.bucketValue = bucketValue;
        this.slidingCycleValue = slidingCycleValue;
    }

    /** The value of the bucket written to. */
    public long getBucketValue() {
        return bucketValue;
    }

    /** The sum of the sliding window ending at that bucket. */
    public long getSlidingCycleValue() {
        return slidingCycleValue;
    }

    @Override
    public String toString() {
        return "VisitWrapperValue{bucketValue=" + bucketValue + ", slidingCycleValue=" + slidingCycleValue + "}";
    }
}
