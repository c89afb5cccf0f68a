package com.google.common.util.concurrent;

import java.util.concurrent.TimeUnit;

/**
 * Guava's RateLimiter on a fake stopwatch. {@code RateLimiter.SleepingStopwatch} and the factories
 * that take one are package-private, so this class lives in Guava's package (as Guava's own
 * RateLimiterTest does). Like that test's FakeStopwatch, a sleep advances the clock.
 */
public final class GuavaPeer {
    private final Watch watch = new Watch();
    private final RateLimiter limiter;

    private static final class Watch extends RateLimiter.SleepingStopwatch {
        long micros;
        long lastSleepMicros;

        @Override
        protected long readMicros() {
            return micros;
        }

        @Override
        protected void sleepMicrosUninterruptibly(long m) {
            lastSleepMicros = m;
            if (m > 0) {
                micros += m;
            }
        }
    }

    private GuavaPeer(double rate, long warmupMs, double coldFactor) {
        limiter = warmupMs < 0
                ? RateLimiter.create(rate, watch)
                : RateLimiter.create(rate, warmupMs, TimeUnit.MILLISECONDS, coldFactor, watch);
    }

    /** SmoothBursty (maxBurstSeconds 1), as {@code RateLimiter.create(rate)}. */
    public static GuavaPeer bursty(double rate) {
        return new GuavaPeer(rate, -1, 0);
    }

    /** SmoothWarmingUp, as {@code RateLimiter.create(rate, warmup, MILLISECONDS, coldFactor)}. */
    public static GuavaPeer warmingUp(double rate, long warmupMs, double coldFactor) {
        return new GuavaPeer(rate, warmupMs, coldFactor);
    }

    public long nowMicros() {
        return watch.micros;
    }

    public void sleepMillis(long ms) {
        watch.micros += ms * 1000;
    }

    /** acquire(permits): the wait in microseconds (the clock moves on by it). */
    public long acquire(int permits) {
        watch.lastSleepMicros = 0;
        limiter.acquire(permits);
        return watch.lastSleepMicros;
    }

    /** tryAcquire(1, timeoutMs): admitted, and the wait in microseconds when admitted. */
    public long[] tryAcquire(long timeoutMs) {
        watch.lastSleepMicros = 0;
        boolean ok = limiter.tryAcquire(1, timeoutMs, TimeUnit.MILLISECONDS);
        return new long[] {ok ? 1 : 0, ok ? watch.lastSleepMicros : 0};
    }
}
