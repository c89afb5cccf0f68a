package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Runs work on several threads released at one moment, so that they contend. */
final class Together {
    private Together() {}

    /**
     * Starts {@code threads} threads that each wait for the others to start, then run {@code work}; returns
     * when all have finished, failing if one has not within a minute.
     */
    static void run(int threads, Runnable work) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                work.run();
            });
            t.start();
            workers.add(t);
        }
        go.countDown();
        for (Thread t : workers) {
            t.join(60_000);
            assertFalse(t.isAlive(), t + " is still running after a minute");
        }
    }
}
