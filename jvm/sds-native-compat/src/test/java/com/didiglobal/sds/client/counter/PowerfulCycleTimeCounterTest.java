package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import io.sdsnative.compat.WindowReclaimer;
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
    void windowsOfCollectedCountersAreFreed() throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            new SlidingWindowData().incrementAndGet(T0);
        }
        int freed = 0;
        for (int attempt = 0; attempt < 20 && freed == 0; attempt++) {
            System.gc();
            Thread.sleep(10);
            freed = WindowReclaimer.freeCollected();
        }
        assertTrue(freed > 0, "no window was freed after garbage collection");
    }
}
