package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import io.sdsnative.ErrorCode;
import io.sdsnative.SdsException;
import org.junit.jupiter.api.Test;

class SlidingWindowDataTest {
    /** The start of a 10 s cycle (a multiple of 10 000 ms). */
    static final long T0 = 1_700_000_000_000L;
    static final long S = 1000;

    /** {@code v} holds {@code bucket} in its bucket and {@code sliding} in its window. */
    static void assertTally(long bucket, long sliding, VisitWrapperValue v, String where) {
        assertEquals(bucket, v.getBucketValue(), where);
        assertEquals(sliding, v.getSlidingCycleValue(), where);
    }

    @Test
    void slidingSumCoversTheLastTenSeconds() {
        SlidingWindowData w = new SlidingWindowData();
        for (int s = 0; s < 15; s++) {
            VisitWrapperValue v = w.incrementAndGet(T0 + s * S + 500);
            assertTally(1, Math.min(s + 1, 10), v, "second " + s);
        }
        assertEquals(10, w.getCurSlidingCycleValue(T0 + 14 * S));
        assertEquals(9, w.getCurSlidingCycleValue(T0 + 15 * S), "second 5 is the oldest now");
        assertEquals(1, w.getBucketValue(T0 + 14 * S + 999));
        assertEquals(0, w.getBucketValue(T0 + 15 * S));
        VisitWrapperValue v = w.incrementAndGet(T0 + 14 * S);
        assertTally(2, 11, v, "");
    }

    @Test
    void wholeCycleSums() {
        SlidingWindowData w = new SlidingWindowData();
        for (int s = 0; s < 10; s++) {
            for (int n = 0; n <= s; n++) {
                w.incrementAndGet(T0 + s * S);
            }
        }
        w.incrementAndGet(T0 + 10 * S);
        assertEquals(55, w.getLastWholeCycleValue(T0 + 10 * S));
        assertEquals(55, w.getLastWholeCycleValue(T0 + 19 * S + 999));
        assertEquals(1, w.getLastWholeCycleValue(T0 + 20 * S));
        assertEquals(0, w.getLastWholeCycleValue(T0 + 30 * S));
    }

    @Test
    void oldLapsReadAsZeroWithoutACleanupThread() {
        SlidingWindowData w = new SlidingWindowData();
        w.incrementAndGet(T0);
        w.incrementAndGet(T0);
        // Same ring slot one lap (30 s) later: the old count is gone, not added.
        VisitWrapperValue v = w.incrementAndGet(T0 + 30 * S);
        assertTally(1, 1, v, "");
        assertEquals(0, w.getCurSlidingCycleValue(T0 + 3_600 * S));
        assertEquals(0, w.getBucketValue(T0 + 60 * S));
    }

    @Test
    void clearNextCycleValueZeroesOnlyTheNextCycle() {
        SlidingWindowData w = new SlidingWindowData();
        w.setBucketValue(T0 + 3 * S, 7L);
        w.setBucketValue(T0 + 12 * S, 5L);
        w.setBucketValue(T0 + 25 * S, 4L);
        assertEquals(7, w.getBucketValue(T0 + 3 * S));
        w.clearNextCycleValue(T0 + 5 * S);
        assertEquals(7, w.getBucketValue(T0 + 3 * S));
        assertEquals(0, w.getBucketValue(T0 + 12 * S));
        assertEquals(4, w.getBucketValue(T0 + 25 * S));
        assertEquals(0, w.getLastWholeCycleValue(T0 + 20 * S));
    }

    @Test
    void customWindowParameters() {
        // One 10 s bucket per cycle, as ConcurrentData's maximum uses.
        SlidingWindowData w = new SlidingWindowData(3, 1, 10);
        w.incrementAndGet(T0);
        VisitWrapperValue v = w.incrementAndGet(T0 + 9 * S);
        assertTally(2, 2, v, "");
        assertEquals(2, w.getLastWholeCycleValue(T0 + 10 * S));
        assertEquals(0, w.getCurSlidingCycleValue(T0 + 10 * S));
        // Two-second buckets, a 4-bucket (8 s) window.
        SlidingWindowData two = new SlidingWindowData(2, 4, 2);
        for (int s = 0; s < 10; s++) {
            two.incrementAndGet(T0 + s * S);
        }
        assertEquals(2, two.getBucketValue(T0 + 9 * S));
        assertEquals(8, two.getCurSlidingCycleValue(T0 + 9 * S));
    }

    @Test
    void invalidParametersThrow() {
        SdsException e = assertThrows(SdsException.class, () -> new SlidingWindowData(1, 10, 1));
        assertEquals(ErrorCode.INVALID_WINDOW, e.code());
        assertEquals(ErrorCode.INVALID_WINDOW,
                assertThrows(SdsException.class, () -> new SlidingWindowData(3, 0, 1)).code());
        assertEquals(ErrorCode.INVALID_WINDOW,
                assertThrows(SdsException.class, () -> new SlidingWindowData(3, 10, 0)).code());
        assertThrows(NullPointerException.class, () -> new SlidingWindowData(null, 10, 1));
        assertThrows(NullPointerException.class, () -> new SlidingWindowData().setBucketValue(T0, null));
    }

    @Test
    void aNegativeBucketValueIsStoredAsZero() {
        SlidingWindowData w = new SlidingWindowData();
        w.setBucketValue(T0, 5L);
        w.setBucketValue(T0, -3L);
        assertEquals(0, w.getBucketValue(T0), "documented: SDS would store -3");
    }

    @Test
    void threadsCountExactly() throws InterruptedException {
        SlidingWindowData w = new SlidingWindowData();
        int threads = 4;
        int each = 25_000;
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int offset = t;
            workers[t] = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    w.incrementAndGet(T0 + (i % 2) * S + offset);
                }
            });
            workers[t].start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertEquals(threads * each / 2, w.getBucketValue(T0));
        assertEquals(threads * each / 2, w.getBucketValue(T0 + S));
        assertEquals(threads * each, w.getCurSlidingCycleValue(T0 + S));
    }
}
