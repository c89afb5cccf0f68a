package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import io.sdsnative.NativeReclaimer;
import org.junit.jupiter.api.Test;

class PowerfulCycleTimeCounterTest {
    static final long T0 = SlidingWindowDataTest.T0;

    @Test
    void everyCounterOfAPoint() {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        VisitWrapperValue v = null;
        for (int i = 0; i < 3; i++) {
            v = c.visitAddAndGet(T0 + 1000);
        }
        assertEquals(3, v.getBucketValue());
        v = c.visitAddAndGet(T0 + 2000);
        assertEquals(1, v.getBucketValue());
        assertEquals(4, v.getSlidingCycleValue());
        assertEquals(3, c.getLastSecondVisitBucketValue(T0 + 2000));
        assertEquals(4, c.getLastCycleVisitValue(T0 + 10_000));

        assertEquals(1, c.exceptionAddAndGet(T0));
        assertEquals(2, c.exceptionAddAndGet(T0 + 9000));
        assertEquals(1, c.getExceptionValue(T0 + 10_000), "the exception at T0 left the window");
        assertEquals(2, c.getLastCycleExceptionValue(T0 + 10_000));

        assertEquals(1, c.timeoutAddAndGet(T0));
        assertEquals(1, c.getTimeoutValue(T0 + 9999));
        assertEquals(1, c.getLastCycleTimeoutValue(T0 + 15_000));

        assertEquals(1, c.tokenBucketInvokeAddAndGet(T0));
        assertEquals(2, c.tokenBucketInvokeAddAndGet(T0 + 1));
        assertEquals(1, c.tokenBucketInvokeAddAndGet(T0 + 1000));

        assertEquals(1, c.downgradeAddAndGet(T0));
        assertEquals(2, c.downgradeAddAndGet(T0 + 1));
        assertEquals(2, c.getDowngradeValue(T0 + 5000));
        assertEquals(2, c.getLastCycleDowngradeValue(T0 + 10_000));

        c.updateConcurrentThreshold(1);
        assertTrue(c.concurrentAcquire(T0));
        assertFalse(c.concurrentAcquire(T0));
        c.concurrentRelease();
        assertTrue(c.concurrentAcquire(T0 + 1));
        c.concurrentRelease();
        assertEquals(1, c.getLastCycleConcurrentValue(T0 + 10_000));
    }

    @Test
    void realClockSmoke() {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        VisitWrapperValue v = c.visitAddAndGet(System.currentTimeMillis());
        assertTrue(v.getBucketValue() >= 1 && v.getSlidingCycleValue() >= v.getBucketValue(), v.toString());
        assertTrue(c.getLastCycleVisitValue(System.currentTimeMillis() + 20_000) <= 1);
    }

    @Test
    void sdsCleanupCadenceKeepsExactCounts() {
        // SDS's CycleDataService clears the next cycle at second 5 of every
        // cycle; with it or without it the counts are the same.
        SlidingWindowData cleaned = new SlidingWindowData();
        SlidingWindowData plain = new SlidingWindowData();
        for (int s = 0; s < 95; s++) {
            long t = T0 + s * 1000L;
            if (s % 10 == 5) {
                cleaned.clearNextCycleValue(t);
            }
            for (int n = 0; n < s % 7; n++) {
                cleaned.incrementAndGet(t);
                plain.incrementAndGet(t);
            }
            assertEquals(plain.getCurSlidingCycleValue(t), cleaned.getCurSlidingCycleValue(t), "second " + s);
            assertEquals(plain.getLastWholeCycleValue(t), cleaned.getLastWholeCycleValue(t), "second " + s);
        }
        long expected = 0;
        for (int s = 80; s < 90; s++) {
            expected += s % 7;
        }
        assertEquals(expected, plain.getLastWholeCycleValue(T0 + 90_000));
    }

    @Test
    void windowsOfCollectedCountersAreFreed() throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            new SlidingWindowData().incrementAndGet(T0);
        }
        int freed = 0;
        for (int attempt = 0; attempt < 20 && freed == 0; attempt++) {
            System.gc();
            Thread.sleep(10);
            freed = NativeReclaimer.freeCollected();
        }
        assertTrue(freed > 0, "no window was freed after garbage collection");
    }

    /**
     * SDS reports exceptions and timeouts with their request's start time. A
     * start a whole ring (30 s) back must neither restart the newer second
     * sharing its slot nor be lost: it counts now.
     */
    @Test
    void exceptionsAndTimeoutsOfAnOldStartAreLateWrites() {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        long now = T0 + 31_000;
        c.visitAddAndGet(now);
        assertEquals(1, c.exceptionAddAndGet(T0 + 30_000), "a start 1 s ago counts in its second");
        assertEquals(1, c.timeoutAddAndGet(T0 + 30_000));
        // T0 shares its ring slot with T0 + 30 s.
        assertEquals(2, c.exceptionAddAndGet(T0), "counted now, the second of T0 + 30 s kept");
        assertEquals(2, c.timeoutAddAndGet(T0));
        assertEquals(2, c.getExceptionValue(now));
        assertEquals(2, c.getTimeoutValue(now));
        assertEquals(1, c.getLastSecondVisitBucketValue(now + 1000), "the visit's bucket is intact");
        assertEquals(1, c.visitAddAndGet(now).getSlidingCycleValue() - 1);
    }
}
