package com.didiglobal.sds.client.counter;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import io.sdsnative.Native;
import io.sdsnative.NativeReclaimer;
import io.sdsnative.compat.DropIn;

/**
 * SDS's sliding window on a native, epoch-tagged ring: buckets of
 * {@code bucketTimeSecond} seconds, a window of {@code cycleBucketNum}
 * buckets, a ring of {@code cycleNum * cycleBucketNum}. A bucket left from an
 * older lap of the ring reads as zero, so no cleanup thread is needed and
 * every sum is exact; {@link #clearNextCycleValue} still works. Each method
 * is one JNI call.
 */
public class SlidingWindowData extends AbstractCycleData {
    /** Tells this class from SDS's (io.sdsnative.compat.DropIn). */
    private static final boolean SDS_NATIVE_DROP_IN = true;

    private static final long LOW_32 = 0xFFFF_FFFFL;

    static {
        // Every drop-in counter makes a window: say once which classes are active.
        DropIn.logOnce();
    }

    protected Integer cycleNum;
    protected Integer cycleBucketNum;
    protected Integer bucketTimeSecond;
    protected Integer bucketSize;

    private final long window;

    /**
     * @throws io.sdsnative.SdsException {@code INVALID_WINDOW} when a value is
     *     not positive or {@code cycleNum < 2} (the ring must hold two cycles)
     */
    public SlidingWindowData(Integer cycleNum, Integer cycleBucketNum, Integer bucketTimeSecond) {
        this.cycleNum = cycleNum;
        this.cycleBucketNum = cycleBucketNum;
        this.bucketTimeSecond = bucketTimeSecond;
        this.bucketSize = cycleNum * cycleBucketNum;
        this.window = NativeReclaimer.track(
                this, Native.windowNew(1000L * bucketTimeSecond, cycleBucketNum, bucketSize), Native::windowFree);
    }

    /** Three cycles of ten 1 s buckets: SDS's counters. */
    public SlidingWindowData() {
        this(3, 10, 1);
    }

    @Override
    public VisitWrapperValue incrementAndGet(long time) {
        long packed = incrementPacked(time);
        return new VisitWrapperValue(packed & LOW_32, packed >>> 32);
    }

    /** Adds one: the sliding sum in the high 32 bits, the bucket in the low 32. */
    long incrementPacked(long time) {
        long packed = Native.windowIncrement(window, this, time);
        return packed < 0 ? Native.check(packed) : packed;
    }

    /** The current bucket's value after adding one. */
    long incrementBucket(long time) {
        return incrementPacked(time) & LOW_32;
    }

    /**
     * Adds one for an event of {@code time} recorded at the present
     * {@code now} (an exception counted at its request's start): into
     * {@code time}'s bucket while the ring still holds it, else into
     * {@code now}'s, never restarting a newer bucket. The sliding sum of the
     * window ending at the bucket written, as SDS's
     * {@code incrementAndGet(time).getSlidingCycleValue()}: a newer second
     * of the present outside {@code time}'s window is not in it.
     */
    long addLate(long time, long now) {
        long packed = Native.windowIncrementAt(window, this, time, now);
        return (packed < 0 ? Native.check(packed) : packed) >>> 32;
    }

    /** A negative value is stored as 0 (a native bucket holds 0 .. 2^32 - 1; SDS would store it). */
    @Override
    public void setBucketValue(long time, Long value) {
        Native.check(Native.windowSet(window, this, time, Math.max(0L, value)));
    }

    @Override
    public long getBucketValue(long time) {
        return Native.check(Native.windowBucket(window, this, time));
    }

    @Override
    public long getCurSlidingCycleValue(long time) {
        return Native.check(Native.windowSum(window, this, time));
    }

    @Override
    public long getLastWholeCycleValue(long time) {
        return Native.check(Native.windowLastCycle(window, this, time));
    }

    @Override
    public void clearNextCycleValue(long time) {
        Native.check(Native.windowClearNextCycle(window, this, time));
    }

    /** Raises the bucket of {@code time} to at least {@code value} (ConcurrentData's maximum). */
    long raiseBucketTo(long time, long value) {
        return Native.check(Native.windowFetchMax(window, this, time, value));
    }

    @Override
    public String toString() {
        return "SlidingWindowData{cycleNum=" + cycleNum + ", cycleBucketNum=" + cycleBucketNum
                + ", bucketTimeSecond=" + bucketTimeSecond + ", bucketSize=" + bucketSize + ", native=true}";
    }
}
