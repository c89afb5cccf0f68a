package com.didiglobal.sds.client.counter;

/**
 * SDS's token counter: how many tokens the current second took. Same public
 * API as SDS's class; the rate and size are kept for SDS's executors.
 */
public class TokenBucketData {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    private Integer generatedTokensInSecond = -1;
    private Integer bucketSize = -1;

    private final SlidingWindowData cycleTokenBucketData = new SlidingWindowData(3, 10, 1);

    public TokenBucketData(Integer generatedTokensInSecond, Integer bucketSize) {
        this.generatedTokensInSecond = generatedTokensInSecond;
        this.bucketSize = bucketSize;
    }

    public TokenBucketData() {}

    /** Takes one token at {@code time}: the current second's count after the +1. */
    public long takeOneToken(long time) {
        return cycleTokenBucketData.incrementBucket(time);
    }

    public AbstractCycleData getCycleTokenBucketData() {
        return cycleTokenBucketData;
    }

    @Override
    public String toString() {
        return "TokenBucketData{generatedTokensInSecond=" + generatedTokensInSecond + ", bucketSize=" + bucketSize + "}";
    }
}
