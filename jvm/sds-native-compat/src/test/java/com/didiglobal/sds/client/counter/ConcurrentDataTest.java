package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ConcurrentDataTest {
    static final long T0 = SlidingWindowDataTest.T0;

    private static void inThread(Runnable r) throws InterruptedException {
        Thread t = new Thread(r);
        t.start();
        t.join();
    }

    @Test
    void permitsAreReleasedOnlyByTheAcquiringThread() throws InterruptedException {
        ConcurrentData c = new ConcurrentData(2);
        assertTrue(c.concurrentAcquire(T0));
        assertTrue(c.concurrentAcquire(T0));
        assertFalse(c.concurrentAcquire(T0));
        assertEquals(2, c.getConcurrentValue());
        inThread(c::concurrentRelease);
        assertEquals(2, c.getConcurrentValue(), "another thread holds none of them");
        AtomicInteger otherGot = new AtomicInteger();
        inThread(() -> otherGot.set(c.concurrentAcquire(T0) ? 1 : 0));
        assertEquals(0, otherGot.get());
        c.concurrentRelease();
        assertEquals(1, c.getConcurrentValue());
        c.concurrentRelease();
        c.concurrentRelease();
        assertEquals(0, c.getConcurrentValue(), "a thread releases no more than it took");
    }

    @Test
    void thresholdsAsSds() {
        ConcurrentData unlimited = new ConcurrentData();
        for (int i = 0; i < 1000; i++) {
            assertTrue(unlimited.concurrentAcquire(T0));
        }
        assertTrue(new ConcurrentData(0).concurrentAcquire(T0), "<= 0 at construction: unlimited");
        ConcurrentData c = new ConcurrentData(5);
        assertTrue(c.concurrentAcquire(T0));
        c.updateConcurrentThreshold(1);
        assertFalse(c.concurrentAcquire(T0), "the permit in flight still counts");
        c.concurrentRelease();
        assertTrue(c.concurrentAcquire(T0));
        c.concurrentRelease();
        c.updateConcurrentThreshold(0);
        assertFalse(c.concurrentAcquire(T0), "0 closes");
        c.updateConcurrentThreshold(-1);
        assertFalse(c.concurrentAcquire(T0));
        assertEquals(-1, c.getConcurrentValue());
    }

    @Test
    void maxConcurrencyPerCycle() {
        ConcurrentData c = new ConcurrentData(10);
        for (int i = 0; i < 3; i++) {
            c.concurrentAcquire(T0 + 1000);
        }
        for (int i = 0; i < 3; i++) {
            c.concurrentRelease();
        }
        c.concurrentAcquire(T0 + 5000);
        c.concurrentRelease();
        assertEquals(0, c.getLastConcurrentMaxCountAndClean(T0 + 9999));
        assertEquals(3, c.getLastConcurrentMaxCountAndClean(T0 + 10_000));
        c.concurrentAcquire(T0 + 12_000);
        assertEquals(1, c.getLastConcurrentMaxCountAndClean(T0 + 20_000));
        assertEquals(1, c.getCycleMaxConcurrentData().getLastWholeCycleValue(T0 + 20_000));
        // A failed acquire still records what is in flight, in its own cycle.
        ConcurrentData full = new ConcurrentData(1);
        full.concurrentAcquire(T0);
        assertFalse(full.concurrentAcquire(T0 + 30_000));
        assertEquals(1, full.getLastConcurrentMaxCountAndClean(T0 + 40_000));
    }

    @Test
    void threadsNeverExceedTheLimitAndEndAtZero() throws InterruptedException {
        ConcurrentData c = new ConcurrentData(3);
        int threads = 6;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger maxSeen = new AtomicInteger();
        AtomicInteger acquiredTotal = new AtomicInteger();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    if (c.concurrentAcquire(T0)) {
                        acquiredTotal.incrementAndGet();
                        maxSeen.accumulateAndGet(c.getConcurrentValue(), Math::max);
                    }
                    c.concurrentRelease();
                }
            });
            workers[t].start();
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        assertEquals(0, c.getConcurrentValue());
        assertTrue(maxSeen.get() <= 3, "max " + maxSeen.get());
        assertTrue(acquiredTotal.get() > 0);
        int cycleMax = c.getLastConcurrentMaxCountAndClean(T0 + 10_000);
        assertTrue(cycleMax >= 1 && cycleMax <= 3, "cycle max " + cycleMax);
    }
}
