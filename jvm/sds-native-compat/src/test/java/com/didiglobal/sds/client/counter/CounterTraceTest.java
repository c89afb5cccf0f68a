package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * A random trace of every {@link PowerfulCycleTimeCounter} call with explicit
 * times, against an exact model: counts per second kept forever, sums over
 * them. Times mostly move forward; 1 % of steps go back 1 ms to 8 s (never
 * more than 8 s behind the highest time); exceptions and timeouts come with
 * a start up to 8 s behind the present, 2 % up to 0.5 s after it and 1 % more
 * than 30 s before it (counted at the present: SEMANTICS §2).
 *
 * <p>Within these bounds no second the model reads has had its ring slot
 * taken by a newer lap (checked on every read), so the native ring must give
 * the exact counts, and SDS's results: {@code exceptionAddAndGet(start)} is
 * the sliding sum of the window ending at the second counted in.
 */
class CounterTraceTest {
    static final int SEEDS = 8;
    static final int STEPS = 25_000;

    @Test
    void matchesTheExactModelWithLateWritesAndStepsBack() {
        long late = 0;
        long old = 0;
        long back = 0;
        for (long seed = 1; seed <= SEEDS; seed++) {
            Trace trace = new Trace(seed);
            trace.run(STEPS);
            late += trace.lateWrites;
            old += trace.oldStarts;
            back += trace.stepsBack;
        }
        // The trace covered what it is about.
        assertTrue(late > 10_000, "late writes " + late);
        assertTrue(old > 100, "starts older than the ring " + old);
        assertTrue(back > 1_000, "steps back " + back);
    }

    /** One seeded trace: the counter under test and its model, step by step. */
    static final class Trace {
        static final long SECOND = 1000;
        static final int WINDOW = 10;
        static final int RING = 30;

        final Random random;
        final String seedText;
        final PowerfulCycleTimeCounter counter = new PowerfulCycleTimeCounter();
        final Counts visits = new Counts();
        final Counts tokens = new Counts();
        final Counts downgrades = new Counts();
        final Counts exceptions = new Counts();
        final Counts timeouts = new Counts();
        /** The most in flight per 10 s cycle. */
        final Map<Long, Long> cycleMax = new HashMap<>();
        long time = LateWritesTest.T0 + 7_777;
        long highest = time;
        long present = time;
        long maxSecondWritten = time / SECOND;
        int threshold = Integer.MAX_VALUE;
        int inFlight;
        long lateWrites;
        long oldStarts;
        long stepsBack;

        Trace(long seed) {
            random = new Random(seed);
            seedText = "seed " + seed;
        }

        void run(int steps) {
            for (int step = 0; step < steps; step++) {
                move();
                String where = seedText + " step " + step + " time " + time;
                int op = random.nextInt(100);
                if (op < 25) {
                    visit(where);
                } else if (op < 33) {
                    present(time);
                    assertEquals(tokens.add(second(time)), counter.tokenBucketInvokeAddAndGet(time), where);
                } else if (op < 43) {
                    concurrent(where);
                } else if (op < 48) {
                    present(time);
                    long s = second(time);
                    downgrades.add(s);
                    assertEquals(window(downgrades, s), counter.downgradeAddAndGet(time), where);
                } else if (op < 63) {
                    long start = start();
                    assertEquals(late(exceptions, start), counter.exceptionAddAndGet(start), where + " start " + start);
                } else if (op < 73) {
                    long start = start();
                    assertEquals(late(timeouts, start), counter.timeoutAddAndGet(start), where + " start " + start);
                } else {
                    read(where);
                }
            }
        }

        void move() {
            if (random.nextInt(100) == 0) {
                time = Math.max(time - 1 - random.nextInt(8_000), highest - 8_000);
                stepsBack++;
            } else {
                time += random.nextInt(300);
            }
            highest = Math.max(highest, time);
        }

        /** A request's start for an exception or timeout, relative to the present. */
        long start() {
            int kind = random.nextInt(100);
            if (kind == 0) {
                oldStarts++;
                return present - 31 * SECOND - random.nextInt(60_000);
            }
            if (kind <= 2) {
                return present + 1 + random.nextInt(500);
            }
            lateWrites++;
            return present - random.nextInt(8_000);
        }

        void present(long t) {
            present = t;
        }

        void visit(String where) {
            present(time);
            long s = second(time);
            long bucket = visits.add(s);
            VisitWrapperValue v = counter.visitAddAndGet(time);
            assertEquals(bucket, v.getBucketValue(), where);
            assertEquals(window(visits, s), v.getSlidingCycleValue(), where);
        }

        void concurrent(String where) {
            if (random.nextInt(20) == 0) {
                threshold = 1 + random.nextInt(4);
                counter.updateConcurrentThreshold(threshold);
            }
            if (inFlight > 0 && random.nextBoolean()) {
                counter.concurrentRelease();
                inFlight--;
                return;
            }
            present(time);
            boolean acquired = inFlight < threshold;
            if (acquired) {
                inFlight++;
            }
            cycleMax.merge(time / (WINDOW * SECOND), (long) inFlight, Math::max);
            assertEquals(acquired, counter.concurrentAcquire(time), where);
        }

        /** +1 for a request of {@code start}: the model's result, as SDS's. */
        long late(Counts counts, long start) {
            if (start > present) {
                present = start;
            }
            long s = second(start);
            long written = second(present) - s >= RING ? second(present) : s;
            counts.add(written);
            maxSecondWritten = Math.max(maxSecondWritten, written);
            return window(counts, written);
        }

        void read(String where) {
            long s = second(time);
            long lastCycleEnd = s / WINDOW * WINDOW - 1;
            long cycle = time / (WINDOW * SECOND) - 1;
            // One of these reads, each {the model's value, the counter's}.
            LongSupplier[][] reads = {
                {() -> window(exceptions, s), () -> counter.getExceptionValue(time)},
                {() -> window(timeouts, s), () -> counter.getTimeoutValue(time)},
                {() -> window(downgrades, s), () -> counter.getDowngradeValue(time)},
                {() -> window(visits, lastCycleEnd), () -> counter.getLastCycleVisitValue(time)},
                {() -> window(exceptions, lastCycleEnd), () -> counter.getLastCycleExceptionValue(time)},
                {() -> window(timeouts, lastCycleEnd), () -> counter.getLastCycleTimeoutValue(time)},
                {() -> window(downgrades, lastCycleEnd), () -> counter.getLastCycleDowngradeValue(time)},
                {() -> visits.get(s - 1), () -> counter.getLastSecondVisitBucketValue(time)},
                {() -> cycleMax.getOrDefault(cycle, 0L), () -> counter.getLastCycleConcurrentValue(time)},
            };
            LongSupplier[] read = reads[random.nextInt(reads.length)];
            assertEquals(read[0].getAsLong(), read[1].getAsLong(), where);
        }

        long second(long t) {
            long s = t / SECOND;
            maxSecondWritten = Math.max(maxSecondWritten, s);
            return s;
        }

        /** The sum of the {@link #WINDOW} seconds ending at {@code last}. */
        long window(Counts counts, long last) {
            // The exact domain: no second read shares its slot with a newer one written.
            assertTrue(last - WINDOW + 1 > maxSecondWritten - RING, seedText + ": the trace left the exact domain");
            long sum = 0;
            for (long s = last - WINDOW + 1; s <= last; s++) {
                sum += counts.get(s);
            }
            return sum;
        }
    }

    /** Counts per second, kept forever. */
    static final class Counts {
        private final Map<Long, Long> bySecond = new HashMap<>();

        long add(long second) {
            return bySecond.merge(second, 1L, Long::sum);
        }

        long get(long second) {
            return bySecond.getOrDefault(second, 0L);
        }
    }
}
