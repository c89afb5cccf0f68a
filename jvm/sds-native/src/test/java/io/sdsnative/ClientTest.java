package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ClientTest {
    private static final long T = 1_700_000_000_000L;

    private static void assertCode(ErrorCode code, Runnable action) {
        SdsException e = assertThrows(SdsException.class, action::run);
        assertEquals(code, e.code(), e.getMessage());
        assertTrue(e.getMessage().startsWith(code.codeName()), e.getMessage());
    }

    @Test
    void visitThresholdDowngradesAboveIt() {
        try (Client client = new Client(8)) {
            client.setStrategy("order", Strategy.builder().visitThreshold(2).build());
            assertFalse(client.enter("order", T).isDowngraded());
            assertFalse(client.enter("order", T).isDowngraded());
            Entry third = client.enter("order", T);
            assertTrue(third.isDowngraded());
            assertEquals(Reason.VISIT, third.reason());
            assertEquals(T, third.startMs());
            Stats s = client.stats("order", T);
            assertEquals(3, s.visit());
            assertEquals(1, s.downgrade());
            assertEquals(3, s.concurrent(), "no entry exited yet");
        }
    }

    @Test
    void entryCloseExitsOnceAndCountsTheError() {
        try (Client client = new Client(8)) {
            client.setStrategy("p", Strategy.builder().concurrentThreshold(1).build());
            Entry e = client.enter("p", T);
            assertNull(e.reason());
            assertEquals(Reason.CONCURRENT, client.enter("p", T).reason());
            e.error(new IllegalStateException("boom")).error(null);
            e.exit(T + 5);
            e.exit(T + 6);
            Stats s = client.stats("p", T + 10);
            assertEquals(0, s.concurrent());
            assertEquals(1, s.exception(), "the error counts once");
            try (Entry next = client.enter("p", T + 20)) {
                assertFalse(next.isDowngraded(), "the permit came back");
            }
            assertEquals(0, client.stats("p", T + 20).concurrent());
        }
    }

    @Test
    void nullErrorDoesNotCount() {
        try (Client client = new Client(8)) {
            client.enter("p", T).error(null).exit(T);
            assertEquals(0, client.stats("p", T).exception());
        }
    }

    @Test
    void theLibrarysDowngradeErrorDoesNotCountEveryOtherErrorDoes() {
        try (Client client = new Client(8)) {
            client.enter("p", T).error(new SdsException(ErrorCode.DOWNGRADED, "no fallback")).exit(T);
            assertEquals(0, client.stats("p", T).exception(), "the library's own downgrade error");
            client.enter("p", T).error(new SdsException(ErrorCode.TABLE_FULL, "full")).exit(T);
            client.enter("p", T).error(new RuntimeException("boom")).exit(T);
            client.enter("p", T).error(new Error("fatal")).exit(T);
            assertEquals(3, client.stats("p", T).exception());
        }
    }

    @Test
    void pressureTestTrafficIsDowngradedWhenAsked() {
        try (Client client = new Client(8)) {
            client.setStrategy("p", Strategy.builder().pressureTestDowngrade(1).build());
            assertEquals(Reason.PRESSURE_TEST, client.enter("p", T, true).reason());
            assertNull(client.enter("p", T, false).reason());
        }
    }

    @Test
    void lastWholeCycleStats() {
        try (Client client = new Client(8)) {
            for (int i = 0; i < 7; i++) {
                client.enter("p", 100_000 + i).exit(100_000 + i);
            }
            assertEquals(0, client.stats("p", 109_999).lastCycleVisitNum());
            assertEquals(7, client.stats("p", 110_000).lastCycleVisitNum());
            assertEquals(1, client.stats("p", 110_000).lastCycleConcurrentNum());
            assertEquals(0, client.stats("never-entered", 110_000).visit());
        }
    }

    @Test
    void threadsCountExactly() throws Exception {
        try (Client client = new Client(8)) {
            int threads = 4;
            int each = 20_000;
            AtomicLong downgraded = new AtomicLong();
            client.setStrategy("p", Strategy.builder().visitThreshold(50_000).build());
            Together.run(threads, () -> {
                for (int i = 0; i < each; i++) {
                    try (Entry e = client.enter("p", T)) {
                        if (e.isDowngraded()) {
                            downgraded.incrementAndGet();
                        }
                    }
                }
            });
            Stats s = client.stats("p", T);
            assertEquals(threads * each, s.visit());
            assertEquals(downgraded.get(), s.downgrade());
            // Each decision reads the sums of its moment, so under contention a
            // few more may pass than in a serial run; never fewer than 80000-50000-threads.
            assertTrue(s.downgrade() >= 30_000 - threads && s.downgrade() <= 30_000, "downgrades " + s.downgrade());
            assertEquals(0, s.concurrent());
        }
    }

    @Test
    void anEntryMayExitOnAnotherThread() throws Exception {
        try (Client client = new Client(4)) {
            client.setStrategy("p", Strategy.builder().concurrentThreshold(1).build());
            Entry e = client.enter("p", T);
            assertEquals(Reason.CONCURRENT, client.enter("p", T).reason());
            Thread other = new Thread(() -> e.exit(T + 1));
            other.start();
            other.join();
            assertEquals(0, client.stats("p", T + 1).concurrent());
            assertNull(client.enter("p", T + 2).reason(), "the permit came back through the other thread");
        }
    }

    @Test
    void realClockSmoke() {
        try (Client client = new Client(4)) {
            long before = System.currentTimeMillis();
            try (Entry e = client.enter("smoke")) {
                assertTrue(e.startMs() >= before && e.startMs() <= System.currentTimeMillis());
            }
            assertEquals(1, client.stats("smoke").visit());
        }
    }

    @Test
    void badPointNames() {
        try (Client client = new Client(2)) {
            assertCode(ErrorCode.NULL_ARGUMENT, () -> client.enter(null, T));
            assertCode(ErrorCode.NULL_ARGUMENT, () -> client.stats(null, T));
            assertCode(ErrorCode.NULL_ARGUMENT, () -> client.setStrategy(null, Strategy.DEFAULT));
            assertCode(ErrorCode.NULL_ARGUMENT, () -> client.setStrategy("p", null));
            assertCode(ErrorCode.EMPTY_NAME, () -> client.enter("", T));
            StringBuilder longName = new StringBuilder();
            for (int i = 0; i < 257; i++) {
                longName.append('x');
            }
            assertCode(ErrorCode.NAME_TOO_LONG, () -> client.enter(longName.toString(), T));
            for (String lone : new String[] {"\ud800", "\udc00", "a\ud83d", "\ude00b", "\ude00\ud83d"}) {
                assertCode(ErrorCode.INVALID_ARGUMENT, () -> client.enter(lone, T));
                assertCode(ErrorCode.INVALID_ARGUMENT, () -> client.stats(lone, T));
                assertCode(ErrorCode.INVALID_ARGUMENT, () -> client.setStrategy(lone, Strategy.DEFAULT));
                assertCode(ErrorCode.INVALID_ARGUMENT, () -> client.removeStrategy(lone));
            }
            assertEquals(0, client.stats("?", T).visit(), "no lone surrogate became \"?\"");
            client.enter("a", T).exit(T);
            client.enter("b", T).exit(T);
            assertCode(ErrorCode.TABLE_FULL, () -> client.enter("c", T));
            SdsException full = assertThrows(SdsException.class, () -> client.enter("c", T));
            assertEquals("SDS_TABLE_FULL: point table is full (capacity 2)", full.getMessage());
            client.enter("a", T).exit(T);
            assertEquals(2, client.stats("a", T).visit(), "a full table keeps working for its points");
        }
    }

    @Test
    void surrogatePairsAreNamesOfTheirOwn() {
        try (Client client = new Client(4)) {
            client.enter("\ud83d\ude00", T).exit(T);
            client.enter("?", T).exit(T);
            client.enter("?", T).exit(T);
            assertEquals(1, client.stats("\ud83d\ude00", T).visit());
            assertEquals(2, client.stats("?", T).visit());
            assertEquals(-1, Client.loneSurrogate("x\ud83d\ude00y"));
            assertEquals(1, Client.loneSurrogate("x\ud83d"));
        }
    }

    @Test
    void badCapacity() {
        // -1, 0 and huge: one verdict and the core's message, as in every binding.
        for (int capacity : new int[] {-1, 0, -5, (1 << 20) + 1, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            SdsException e = assertThrows(SdsException.class, () -> new Client(capacity));
            assertEquals(ErrorCode.INVALID_CAPACITY, e.code(), "capacity " + capacity);
            assertEquals("SDS_INVALID_CAPACITY: table capacity must be within 1..=1048576", e.getMessage());
        }
    }

    @Test
    void closedClientThrowsAndCloseIsIdempotent() {
        Client client = new Client(2);
        Entry open = client.enter("p", T);
        client.close();
        client.close();
        assertTrue(client.isClosed());
        assertCode(ErrorCode.CLOSED, () -> client.enter("p", T));
        assertCode(ErrorCode.CLOSED, () -> client.stats("p", T));
        assertCode(ErrorCode.CLOSED, () -> client.setStrategy("p", Strategy.DEFAULT));
        assertCode(ErrorCode.CLOSED, () -> client.removeStrategy("p"));
        assertCode(ErrorCode.CLOSED, () -> open.exit(T));
    }

    @Test
    void closingWhileOtherThreadsCallNeverCrashes() throws InterruptedException {
        for (int round = 0; round < 20; round++) {
            Client client = new Client(4);
            List<Throwable> unexpected = java.util.Collections.synchronizedList(new ArrayList<Throwable>());
            CountDownLatch running = new CountDownLatch(2);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Thread thread = new Thread(() -> {
                    running.countDown();
                    try {
                        for (int i = 0; ; i++) {
                            Entry e = client.enter("p", T + i);
                            e.exit(T + i);
                        }
                    } catch (SdsException e) {
                        if (e.code() != ErrorCode.CLOSED) {
                            unexpected.add(e);
                        }
                    } catch (Throwable e) {
                        unexpected.add(e);
                    }
                });
                thread.start();
                threads.add(thread);
            }
            running.await();
            client.close();
            for (Thread thread : threads) {
                thread.join(10_000);
                assertFalse(thread.isAlive(), "a caller did not see the close");
            }
            assertTrue(unexpected.isEmpty(), unexpected.toString());
            assertTrue(client.isFreed(), "the last call to end freed the table");
        }
    }

    @Test
    void closeFreesTheTableAtOnceWhenNoCallRuns() {
        Client client = new Client(4);
        client.enter("p", T).exit(T);
        assertFalse(client.isFreed());
        client.close();
        assertTrue(client.isFreed());
    }

    @Test
    void theMemoryOfCollectedClientsIsFreed() throws InterruptedException {
        List<java.lang.ref.WeakReference<Client>> forgotten = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            forgotten.add(new java.lang.ref.WeakReference<>(new Client(4)));
        }
        assertTrue(GarbageCollection.until(50, 10, () -> NativeReclaimer.freeCollected() > 0),
                "no table of an unclosed client was freed after garbage collection");
    }

    @Test
    void invalidStrategyIsRejectedWholeAndTheOldOneStays() {
        try (Client client = new Client(2)) {
            client.setStrategy("p", Strategy.builder().visitThreshold(1).build());
            assertCode(ErrorCode.INVALID_STRATEGY, () -> client.setStrategy("p",
                    Strategy.fromJson("{\"visitThreshold\": 100, \"delayTime\": 9999}")));
            assertFalse(client.enter("p", T).isDowngraded());
            assertTrue(client.enter("p", T).isDowngraded());
            client.removeStrategy("p");
            assertFalse(client.enter("p", T).isDowngraded());
        }
    }

    private static void assertRefused(ErrorCode code, String message, Runnable action) {
        SdsException e = assertThrows(SdsException.class, action::run);
        assertEquals(code, e.code(), e.getMessage());
        assertEquals(code.codeName() + ": " + message, e.getMessage());
    }

    private static final String TIME_RULE = "time must be a whole number of ms within 0..2^64";

    @Test
    void aNegativeTimeIsRefusedWithTheCoresRule() {
        try (Client client = new Client(2)) {
            assertRefused(ErrorCode.INVALID_ARGUMENT, TIME_RULE, () -> client.enter("p", -1));
            assertRefused(ErrorCode.INVALID_ARGUMENT, TIME_RULE, () -> client.stats("p", -1));
            Entry entry = client.enter("p", T);
            assertRefused(ErrorCode.INVALID_ARGUMENT, TIME_RULE, () -> entry.exit(-5));
            assertEquals(1, client.stats("p", T).concurrent(), "a refused exit leaves the entry open");
            entry.exit(T + 1);
            assertEquals(0, client.stats("p", T + 1).concurrent(), "a valid exit then returns the permit");
        }
    }

    @Test
    void unknownFlagsAndOutcomesAreRefusedByTheCore() {
        long table = Native.tableNew(2);
        try {
            Object owner = new Object();
            int point = Native.pointId(table, owner, new byte[] {'p'});
            assertRefused(ErrorCode.INVALID_ARGUMENT, "flags may only hold the pressure-test bit (1)",
                    () -> Native.enter(table, owner, point, T, 2));
            assertRefused(ErrorCode.INVALID_ARGUMENT, "flags may only hold the pressure-test bit (1)",
                    () -> Native.enter(table, owner, point, T, -1));
            long packed = Native.check(Native.enter(table, owner, point, T, 1));
            assertRefused(ErrorCode.INVALID_ARGUMENT, "outcome must be 0 (ok), 1 (error) or 2 (abandoned)",
                    () -> Native.exit(table, owner, T, packed, T, 3));
            assertEquals(0, Native.exit(table, owner, T, packed, T, 1));
        } finally {
            Native.tableFree(table);
        }
    }

    @Test
    void windowParametersAreCheckedBeforeTheRingIsAllocated() {
        // 2^31 - 1 buckets of 8 bytes would be 16 GiB: refused, not allocated.
        assertRefused(ErrorCode.INVALID_WINDOW, "invalid window: the ring must hold <= 65536 buckets",
                () -> Native.windowNew(1000, 10, Integer.MAX_VALUE));
        assertCode(ErrorCode.INVALID_WINDOW, () -> Native.windowNew(0, 10, 30));
        assertCode(ErrorCode.INVALID_WINDOW, () -> Native.windowNew(1000, -1, 30));
        assertCode(ErrorCode.INVALID_CAPACITY, () -> new Client(-1));
    }

    /** windowIncrementAt packs the window ending at the bucket written, not the present's. */
    @Test
    void windowIncrementAtTalliesTheBucketWritten() {
        Object owner = new Object();
        long w = Native.windowNew(1000, 10, 30);
        try {
            Native.check(Native.windowIncrement(w, owner, 8727));
            // At 4.3 s: the window of seconds -5..4 holds only this event.
            assertEquals(1L << 32 | 1, Native.check(Native.windowIncrementAt(w, owner, 4301, 8732)));
            assertEquals(2, Native.check(Native.windowSum(w, owner, 8732)));
            // 40 s back: the ring no longer holds it, counted at the present's second 44.
            assertEquals(1L << 32 | 1, Native.check(Native.windowIncrementAt(w, owner, 4000, 44000)));
            assertCode(ErrorCode.INVALID_ARGUMENT, () -> Native.windowIncrementAt(w, owner, -1, 44000));
            assertCode(ErrorCode.INVALID_ARGUMENT, () -> Native.windowIncrementAt(w, owner, 44000, -1));
        } finally {
            Native.windowFree(w);
        }
    }

    @Test
    void windowNativesTakeUnsignedCountsAndLateEvents() {
        Object owner = new Object();
        long w = Native.windowNew(1000, 10, 30);
        try {
            long[] tally = {-1, -1};
            assertEquals(2, Native.check(Native.windowAdd(w, owner, 5000, 2, tally)));
            assertArrayEquals(new long[] {2, 2}, tally);
            // An event of 3 s recorded at 12 s lands in the bucket of 3 s.
            assertEquals(4, Native.check(Native.windowAddAt(w, owner, 3000, 12000, 4)));
            assertEquals(4, Native.check(Native.windowBucket(w, owner, 3500)));
            assertEquals(6, Native.check(Native.windowSum(w, owner, 12000)));
            // At 40 s the ring no longer holds 3 s: counted at the present.
            assertEquals(1, Native.check(Native.windowAddAt(w, owner, 3000, 40000, 1)));
            assertEquals(1, Native.check(Native.windowBucket(w, owner, 40000)));
            // -1L is 2^64 - 1: every count saturates the bucket at 2^32 - 1.
            assertEquals(1, Native.check(Native.windowAdd(w, owner, 41000, 1, null)));
            assertEquals(0xFFFF_FFFFL, Native.check(Native.windowAdd(w, owner, 41000, -1L, tally)));
            assertArrayEquals(new long[] {0xFFFF_FFFFL, 0xFFFF_FFFFL + 1}, tally);
            assertEquals(0xFFFF_FFFFL, Native.check(Native.windowAddAt(w, owner, 39000, 40000, -1L)));
            Native.check(Native.windowSet(w, owner, 50000, Long.MIN_VALUE)); // 2^63
            assertEquals(0xFFFF_FFFFL, Native.check(Native.windowBucket(w, owner, 50000)));
            Native.check(Native.windowSet(w, owner, 51000, 7));
            assertEquals(0xFFFF_FFFFL, Native.check(Native.windowFetchMax(w, owner, 51000, -2L)));
            assertRefused(ErrorCode.INVALID_ARGUMENT, TIME_RULE, () -> Native.windowAdd(w, owner, -1, 1, tally));
            assertCode(ErrorCode.INVALID_ARGUMENT, () -> Native.windowAddAt(w, owner, -1, 40000, 1));
            assertCode(ErrorCode.INVALID_ARGUMENT, () -> Native.windowAddAt(w, owner, 40000, -1, 1));
            assertEquals(0xFFFF_FFFFL, Native.check(Native.windowBucket(w, owner, 41000)), "refused calls change nothing");
        } finally {
            Native.windowFree(w);
        }
    }

    @Test
    void javaEnumsMirrorTheCoreTables() {
        assertEquals(ErrorCode.values().length, CoreTables.ERROR_CODES.size());
        for (ErrorCode c : ErrorCode.values()) {
            assertEquals(c.codeName(), CoreTables.ERROR_CODES.get(c.number())[0]);
            assertFalse(c.description().isEmpty());
        }
        assertEquals(Reason.values().length, CoreTables.REASONS.size());
        for (Reason r : Reason.values()) {
            assertEquals(r.name(), CoreTables.REASONS.get(r.code())[0]);
            assertEquals(r, Reason.fromCode(r.code()));
        }
        assertNull(Reason.fromCode(0));
        assertEquals(Algorithm.values().length, CoreTables.ALGORITHMS.size());
        for (Algorithm a : Algorithm.values()) {
            assertEquals(a.name(), CoreTables.ALGORITHMS.get(a.code())[0]);
            assertEquals(a, Algorithm.fromCode(a.code()));
        }
        assertNull(Algorithm.fromCode(-1));
        assertNull(Algorithm.fromCode(6));
    }
}
