package io.sdsnative;

import java.util.function.BooleanSupplier;

/** Waiting on what only a garbage collection brings (freed memory, permits of dropped entries), bounded. */
final class GarbageCollection {
    private GarbageCollection() {}

    /**
     * Runs the collector and sleeps {@code sleepMs} until {@code done} holds,
     * at most {@code attempts} times: whether it held.
     */
    static boolean until(int attempts, long sleepMs, BooleanSupplier done) throws InterruptedException {
        for (int attempt = 0; attempt < attempts; attempt++) {
            System.gc();
            Thread.sleep(sleepMs);
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }
}
