package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Exceptions and timeouts come with their request's start time, behind the
 * present: their results are SDS's ({@code incrementAndGet(start)}'s sliding
 * sum, the window ending at the start's second), and clock steps do not
 * switch them off. The randomized trace is in {@link CounterTraceTest}.
 */
class LateWritesTest {
    /** A multiple of 30 s: second 0 of SDS's ring of 30. */
    static final long T0 = SlidingWindowDataTest.T0 - SlidingWindowDataTest.T0 % 30_000;

    /** The outside sweep's minimal case: SDS returns 1 (the window of seconds -5..4). */
    @Test
    void aLateExceptionReturnsTheWindowOfItsStart() {
        assertLateWrites(PowerfulCycleTimeCounter::exceptionAddAndGet, PowerfulCycleTimeCounter::getExceptionValue);
        assertLateWrites(PowerfulCycleTimeCounter::timeoutAddAndGet, PowerfulCycleTimeCounter::getTimeoutValue);
    }

    /** A counter call at a time: {@code exceptionAddAndGet}, {@code getTimeoutValue}, ... */
    private interface Call {
        long at(PowerfulCycleTimeCounter counter, long time);
    }

    private static void assertLateWrites(Call add, Call read) {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        assertEquals(1, add.at(c, T0 + 8_727));
        assertEquals(1, c.tokenBucketInvokeAddAndGet(T0 + 8_732));
        assertEquals(1, add.at(c, T0 + 4_301), "second 8 is not in the window ending at second 4");
        assertEquals(2, read.at(c, T0 + 12_942), "both in the window of now");
    }

    /**
     * After a visit at {@code visitMs}, an exception of a request started at
     * {@code firstMs} and one started at {@code lateMs}: the second returns
     * 2 ({@code why}), and both are in the window at {@code readMs}.
     */
    private static void assertBothCounted(long visitMs, long firstMs, long lateMs, long readMs, String why) {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        c.visitAddAndGet(visitMs);
        assertEquals(1, c.exceptionAddAndGet(firstMs));
        assertEquals(2, c.exceptionAddAndGet(lateMs), why);
        assertEquals(2, c.getExceptionValue(readMs));
    }

    /** A start older than the ring counts now: the window of now. */
    @Test
    void aStartOlderThanTheRingReturnsTheWindowOfNow() {
        assertBothCounted(T0 + 40_000, T0 + 39_000, T0 + 5_000, T0 + 40_500, "35 s back: counted at second 40");
    }

    /**
     * One visit far ahead (an outlier) or a clock stepped back must not move
     * the later exceptions out of the windows the decisions read.
     */
    @Test
    void anOutlierOrAStepBackDoesNotHideLaterExceptions() {
        PowerfulCycleTimeCounter c = new PowerfulCycleTimeCounter();
        c.visitAddAndGet(T0 + 3_600_000);
        c.visitAddAndGet(T0 + 1_000);
        assertEquals(1, c.exceptionAddAndGet(T0 + 1_000));
        assertEquals(1, c.getExceptionValue(T0 + 1_500), "counted in its second, not an hour ahead");
        assertEquals(1, c.timeoutAddAndGet(T0 + 900));
        assertEquals(1, c.getTimeoutValue(T0 + 1_500));

        PowerfulCycleTimeCounter back = new PowerfulCycleTimeCounter();
        back.visitAddAndGet(T0 + 100_000);
        back.visitAddAndGet(T0 + 10_000); // the clock stepped back 90 s
        back.exceptionAddAndGet(T0 + 9_500);
        assertEquals(1, back.getExceptionValue(T0 + 10_000));
    }

    /** A start after the last present-time call (another thread's) is the present. */
    @Test
    void aStartAfterTheLastVisitIsThePresent() {
        assertBothCounted(T0 + 1_000, T0 + 40_000, T0 + 9_000, T0 + 40_000,
                "31 s before that present: counted at second 40");
    }
}
