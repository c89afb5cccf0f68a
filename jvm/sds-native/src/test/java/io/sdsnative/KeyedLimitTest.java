package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** {@link KeyedLimit} and {@link KeyRule}: keys, answers, errors, closing, and a table file two JVMs share. */
class KeyedLimitTest {
    private static final long T = 1_700_000_000_000L;

    @TempDir
    Path dir;

    private static SdsException assertCode(ErrorCode code, String message, Executable call) {
        SdsException e = assertThrows(SdsException.class, call);
        assertEquals(code, e.code(), e.getMessage());
        assertEquals(code.codeName() + ": " + message, e.getMessage());
        return e;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aStringKeyIsItsUtf8Bytes() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.rate(1, 60_000), 64)) {
            assertTrue(keys.decide("é", 1, T).admitted());
            assertFalse(keys.decide(new byte[] {(byte) 0xc3, (byte) 0xa9}, 1, T).admitted());
            assertTrue(keys.decide(new byte[0], 1, T).admitted());
            assertFalse(keys.decide("", 1, T).admitted());
            // Above the stack buffer (256 units, 256 bytes): the same key both ways.
            String longKey = String.join("", Collections.nCopies(300, "é😀"));
            assertTrue(keys.decide(longKey, 1, T).admitted());
            assertFalse(keys.decide(utf8(longKey), 1, T).admitted());
            byte[] longBytes = new byte[1000];
            Arrays.fill(longBytes, (byte) 'x');
            assertTrue(keys.decide(longBytes, 1, T).admitted());
            assertFalse(keys.decide(new String(longBytes, StandardCharsets.US_ASCII), 1, T).admitted());
            // At the scratch memory's edge (256 bytes) and past it: text and bytes are one key.
            for (int n : new int[] {255, 256, 257}) {
                String ascii = String.join("", Collections.nCopies(n, "k"));
                assertTrue(keys.decide(ascii, 1, T).admitted(), "length " + n);
                assertFalse(keys.decide(utf8(ascii), 1, T).admitted(), "length " + n);
                assertEquals(0, keys.peek(ascii, T).remaining(), "length " + n);
            }
            assertEquals(7, keys.stats().resident());
        }
    }

    @Test
    void aDecisionCarriesTheHeaderNumbers() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.rate(2, 1000).burst(5).except("vip", 20), 16)) {
            assertEquals(new KeyDecision(true, 5, 4, 500, 0, 2500), keys.decide("a", 1, T));
            KeyDecision refused = keys.decide("a", 5, T);
            assertEquals(new KeyDecision(false, 5, 4, 500, 500, 2500), refused);
            assertEquals(KeyDecision.NEVER, keys.decide("a", 6, T).retryAfterMs());
            assertTrue(keys.decide("a", 6, T).toString().contains("retryAfterMs=NEVER"));
            assertEquals(50, keys.decide("vip", 1, T).limit());
            assertEquals(new KeyDecision(true, 5, 4, 250, 0, 2500), keys.peek("a", T + 250));
            assertEquals(new KeyDecision(true, 5, 5, 0, 0, 2500), keys.peek("fresh", T));
            // Without a time: the clock, as Client.enter reads it.
            KeyDecision now = keys.decide("b");
            assertTrue(now.admitted() && now.resetMs() > 0 && now.resetMs() <= 500, now.toString());
        }
    }

    @Test
    void costsAndUnitsOutOfRangeAreRefused() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.rate(10, 1000), 16)) {
            assertCode(ErrorCode.INVALID_ARGUMENT, "cost must be >= 1",
                    () -> keys.decide("a", 0, T));
            assertCode(ErrorCode.INVALID_ARGUMENT, "cost must be an integer from 1 to 4294967295", () -> keys.decide("a", -1, T));
            assertCode(ErrorCode.INVALID_ARGUMENT, "cost must be an integer from 1 to 4294967295",
                    () -> keys.decide(utf8("a"), 1L << 32, T));
            assertFalse(keys.decide("a", 4294967295L, T).admitted());
            // Keys that cross as they are (non-ASCII text, more than 256 bytes) are checked alike.
            assertCode(ErrorCode.INVALID_ARGUMENT, "cost must be >= 1", () -> keys.decide("é", 0, T));
            assertCode(ErrorCode.INVALID_ARGUMENT, "cost must be an integer from 1 to 4294967295",
                    () -> keys.decide(new byte[300], -1, T));
            assertEquals(ErrorCode.INVALID_ARGUMENT, assertThrows(SdsException.class,
                    () -> keys.decide("a", 1, -1)).code());
            assertEquals(0, keys.stats().resident());
            assertEquals(ErrorCode.INVALID_ARGUMENT, assertThrows(SdsException.class,
                    () -> keys.release("a")).code());
            assertEquals(ErrorCode.INVALID_ARGUMENT, assertThrows(SdsException.class,
                    () -> keys.increment("a", 1, T)).code());
        }
    }

    @Test
    void badKeysAreRefused() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.rate(10, 1000), 16)) {
            assertCode(ErrorCode.NULL_ARGUMENT, "key is null", () -> keys.decide((String) null));
            assertCode(ErrorCode.NULL_ARGUMENT, "key is null", () -> keys.peek((byte[]) null, T));
            assertCode(ErrorCode.INVALID_ARGUMENT, "key is not valid UTF-16: lone surrogate U+D800 at index 1",
                    () -> keys.decide("a\ud800b", 1, T));
            String longBad = String.join("", Collections.nCopies(300, "a")) + "\udc00";
            assertCode(ErrorCode.INVALID_ARGUMENT, "key is not valid UTF-16: lone surrogate U+DC00 at index 300",
                    () -> keys.reset(longBad));
            assertEquals(0, keys.stats().resident());
        }
    }

    @Test
    void badRulesAreRefusedWithTheCoreMessage() {
        assertCode(ErrorCode.INVALID_STRATEGY, "invalid key rule: limit must be >= 1",
                () -> KeyedLimit.create(KeyRule.rate(0, 1000), 16));
        assertCode(ErrorCode.INVALID_STRATEGY, "invalid key rule: burst does not apply to this kind (burst: rate"
                + " only; periodMs: not inFlight; windowFromFirstHit, countRefused: fixedWindow only)",
                () -> KeyedLimit.create(KeyRule.slidingWindow(10, 1000).burst(5), 16));
        assertCode(ErrorCode.INVALID_STRATEGY, "invalid key rule: limit must be an integer",
                () -> KeyedLimit.create(KeyRule.inFlight(3).set("limit", "3"), 16));
        assertCode(ErrorCode.UNKNOWN_FIELD, "unknown key rule field \"limits\"",
                () -> KeyedLimit.create(KeyRule.rate(10, 1000).set("limits", 3), 16));
        assertCode(ErrorCode.INVALID_STRATEGY, "invalid key rule: kind is required",
                () -> KeyedLimit.create(KeyRule.empty().set("limit", 3), 16));
        assertCode(ErrorCode.NULL_ARGUMENT, "key rule is null", () -> KeyedLimit.create(null, 16));
        assertCode(ErrorCode.NULL_ARGUMENT, "key rule entry name is null", () -> KeyRule.empty().set(null, 1));
        assertEquals(ErrorCode.INVALID_CAPACITY, assertThrows(SdsException.class,
                () -> KeyedLimit.create(KeyRule.rate(1, 1000), 0)).code());
        assertEquals(ErrorCode.INVALID_CAPACITY, assertThrows(SdsException.class,
                () -> KeyedLimit.create(KeyRule.rate(1, 1000), -4)).code());
        // snake_case names are their camelCase spelling.
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.empty().set("kind", "fixedWindow").set("limit", 2)
                .set("period_ms", 1000).set("window_from_first_hit", true), 16)) {
            assertEquals(1000, keys.decide("a", 1, T + 7).resetMs());
        }
    }

    @Test
    void aRuleIsImmutableAndCollectsItsExceptions() {
        KeyRule base = KeyRule.rate(10, 1000);
        KeyRule both = base.except("vip", 100).except("bot", 1);
        assertEquals(3, base.entries().size());
        assertEquals(Arrays.asList(Arrays.asList("vip", 100L), Arrays.asList("bot", 1L)),
                both.entries().get("exceptions"));
        assertEquals(KeyRule.rate(10, 1000).except("vip", 100).except("bot", 1), both);
        assertNotEquals(base, both);
        assertEquals("KeyRule{kind=fixedWindow, limit=5, periodMs=60000, countRefused=true}",
                KeyRule.fixedWindow(5, 60_000).countRefused(true).toString());
        try (KeyedLimit keys = KeyedLimit.create(both, 16)) {
            assertEquals(100, keys.decide("vip", 1, T).limit());
            assertEquals(1, keys.decide("bot", 1, T).limit());
            assertEquals(10, keys.decide("other", 1, T).limit());
        }
    }

    @Test
    void storeCountsOfAWindowFromTheFirstHit() {
        KeyRule rule = KeyRule.fixedWindow(3, 60_000).windowFromFirstHit(true).countRefused(true);
        try (KeyedLimit keys = KeyedLimit.create(rule, 16)) {
            assertEquals(new KeyCount(0, 0, 0), keys.count("k", T));
            assertEquals(new KeyCount(2, 0, 60_000), keys.increment("k", 2, T));
            assertEquals(new KeyCount(3, 0, 59_000), keys.increment(utf8("k"), 1, T + 1000));
            assertEquals(new KeyCount(2, 0, 58_000), keys.decrement("k", 1, T + 2000));
            assertEquals(new KeyCount(2, 0, 58_000), keys.count(utf8("k"), T + 2000));
            assertTrue(keys.decide("k", 1, T + 2000).admitted());
            assertFalse(keys.decide("k", 1, T + 2000).admitted()); // counted all the same
            assertEquals(4, keys.count("k", T + 2000).count());
            assertEquals(new KeyCount(0, 0, 0), keys.decrement("never", 1, T));
            assertCode(ErrorCode.INVALID_ARGUMENT, "units must be an integer from 1 to 4294967295",
                    () -> keys.increment("k", -2, T));
            assertTrue(keys.reset("k"));
            assertFalse(keys.reset("k"));
        }
    }

    @Test
    void inFlightUnitsAreHeldUntilReleased() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.inFlight(2), 16)) {
            assertTrue(keys.decide("c", 2, T).admitted());
            KeyDecision full = keys.decide("c", 1, T);
            assertEquals(new KeyDecision(false, 2, 0, 0, 0, 0), full);
            assertTrue(keys.release("c"));
            assertTrue(keys.decide(utf8("c")).admitted());
            assertTrue(keys.release(utf8("c"), 2));
            assertFalse(keys.release("c"));
            assertTrue(keys.decide("d", 1, T).admitted());
            assertTrue(keys.decide("e", 1, T).admitted());
            assertEquals(2, keys.resetAll());
            assertEquals(0, keys.stats().resident());
        }
    }

    @Test
    void threadsDecideOnOneCountEachWithItsOwnAnswers() throws Exception {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.fixedWindow(1000, 60_000), 64)) {
            AtomicLong admitted = new AtomicLong();
            AtomicReference<String> wrong = new AtomicReference<>();
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                String own = "thread-" + t; // a key of its own: its answers must be its own
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 500; i++) {
                        admitted.addAndGet(keys.decide("shared", 1, T).admitted() ? 1 : 0);
                        KeyDecision mine = keys.decide(own, 1, T);
                        if (mine.remaining() != 999 - i) {
                            wrong.set(own + " at " + i + ": " + mine);
                        }
                    }
                });
                threads[t].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(null, wrong.get());
            assertEquals(1000, admitted.get());
            assertEquals(0, keys.peek("shared", T).remaining());
        }
    }

    @Test
    void kindReadsBackEachRuleKindAlsoAfterClose() {
        KeyRule[] rules = {KeyRule.rate(1, 1000), KeyRule.fixedWindow(1, 1000), KeyRule.slidingWindow(1, 1000),
            KeyRule.inFlight(1)};
        String[] kinds = {"rate", "fixedWindow", "slidingWindow", "inFlight"};
        for (int i = 0; i < rules.length; i++) {
            KeyedLimit keys = KeyedLimit.create(rules[i], 8);
            assertEquals(kinds[i], keys.kind());
            keys.close();
            assertEquals(kinds[i], keys.kind());
        }
    }

    @Test
    void capacityStatsPathAndClose() {
        KeyedLimit keys = KeyedLimit.create(KeyRule.slidingWindow(5, 1000), 5);
        assertEquals(8, keys.capacity());
        assertEquals(Optional.empty(), keys.path());
        assertEquals(new KeyStats(8, 0, 0, 0, 0, 0), keys.stats());
        keys.decide("a", 1, T);
        assertEquals(new KeyStats(8, 1, 0, 0, 1, 0), keys.stats());
        keys.close();
        keys.close();
        assertTrue(keys.isClosed());
        assertTrue(keys.isFreed());
        assertCode(ErrorCode.CLOSED, ErrorCode.CLOSED.description(), () -> keys.decide("a", 1, T));
        assertCode(ErrorCode.CLOSED, ErrorCode.CLOSED.description(), keys::stats);
        assertEquals(8, keys.capacity());
    }

    @Test
    void keyStatsAreTheCoresTableInItsOrder() {
        // The core's KeyTableStats::NAMES as the native side writes them: a rename or a new order fails here.
        assertArrayEquals(new String[] {"capacity", "resident", "evictions", "lossyEvictions", "admitted", "refused"},
                CoreTables.KEY_STATS_NAMES);
        KeyStats s = new KeyStats(8, 1, 2, 3, 4, 5);
        assertEquals(4, s.admitted());
        assertEquals(5, s.refused());
        assertEquals(new KeyStats(8, 1, 2, 3, 4, 5), s);
        assertEquals(new KeyStats(8, 1, 2, 3, 4, 5).hashCode(), s.hashCode());
        assertNotEquals(new KeyStats(8, 1, 2, 3, 5, 5), s);
        assertNotEquals(new KeyStats(8, 1, 2, 3, 4, 4), s);
        assertNotEquals(new KeyStats(8, 1, 2, 3, 5, 4).hashCode(), s.hashCode());
        assertEquals("KeyStats[capacity=8, resident=1, evictions=2, lossyEvictions=3, admitted=4, refused=5]",
                s.toString());
    }

    @Test
    void admittedAndRefusedCountEveryDecideOnceAcrossObjectsOfOneFile() {
        try (KeyedLimit keys = KeyedLimit.create(KeyRule.rate(3, 60_000), 8)) {
            for (int i = 0; i < 5; i++) {
                keys.decide("k", 1, T);
            }
            // Neither a peek, a read of the count, nor a refused argument is a decision.
            keys.peek("k", T);
            assertThrows(SdsException.class, () -> keys.decide("k", 0, T));
            assertEquals(new KeyStats(8, 1, 0, 0, 3, 2), keys.stats());
        }
        String file = dir.resolve("counted.sds").toString();
        try (KeyedLimit a = KeyedLimit.shared(file, KeyRule.rate(3, 60_000), 16);
                KeyedLimit b = KeyedLimit.shared(file, KeyRule.rate(3, 60_000), 16)) {
            assertTrue(a.decide("k", 1, T).admitted());
            assertTrue(b.decide("k", 1, T).admitted());
            assertTrue(a.decide("k", 1, T).admitted());
            assertFalse(b.decide("k", 1, T).admitted());
            assertFalse(a.decide("k", 1, T).admitted());
            KeyStats want = new KeyStats(16, 1, 0, 0, 3, 2);
            assertEquals(want, a.stats());
            assertEquals(want, b.stats());
        }
    }

    @Test
    void sharedFilesAreCheckedAsClientsAre() {
        String file = dir.resolve("keys.sds").toString();
        try (KeyedLimit flight = KeyedLimit.shared(dir.resolve("flight.sds").toString(), KeyRule.inFlight(1), 16)) {
            assertTrue(flight.decide("a").admitted());
            assertFalse(flight.decide("a").admitted());
            assertTrue(flight.release("a"));
        }
        assertCode(ErrorCode.NULL_ARGUMENT, "shared key table name is null",
                () -> KeyedLimit.shared(null, KeyRule.rate(1, 1000), 16));
        assertCode(ErrorCode.INVALID_ARGUMENT,
                "shared key table name is not valid UTF-16: lone surrogate U+D800 at index 0",
                () -> KeyedLimit.shared("\ud800", KeyRule.rate(1, 1000), 16));
        assertEquals(ErrorCode.INVALID_ARGUMENT, assertThrows(SdsException.class,
                () -> KeyedLimit.shared(file, KeyRule.rate(1, 1000), 16, 0644)).code());
        try (KeyedLimit keys = KeyedLimit.shared(file, KeyRule.rate(1, 1000), 16, Client.SHARED_GROUP_MODE)) {
            assertEquals(Optional.of(file), keys.path());
            int mode = Client.SHARED_GROUP_MODE;
            SdsException e = assertThrows(SdsException.class,
                    () -> KeyedLimit.shared(file, KeyRule.rate(2, 1000), 16, mode));
            assertEquals(ErrorCode.LAYOUT_MISMATCH, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains(file), e.getMessage());
            e = assertThrows(SdsException.class, () -> KeyedLimit.shared(file, KeyRule.rate(1, 1000), 32, mode));
            assertEquals(ErrorCode.LAYOUT_MISMATCH, e.code(), e.getMessage());
            // A second table on the same file in this JVM: one state per key.
            try (KeyedLimit again = KeyedLimit.shared(file, KeyRule.rate(1, 1000), 16, mode)) {
                assertTrue(keys.decide("k", 1, T).admitted());
                assertFalse(again.decide("k", 1, T).admitted());
            }
        }
    }

    @Test
    void twoJvmsCountOnceHostWideOnASharedFile() throws Exception {
        String file = dir.resolve("keys.sds").toString();
        try (KeyedLimit keys = KeyedLimit.shared(file, SharedKeysChild.RULE, SharedKeysChild.CAPACITY)) {
            for (int i = 0; i < 4; i++) {
                assertTrue(keys.decide("user-1", 1, T).admitted());
            }
            Process p = ChildJvm.start(SharedKeysChild.class, file, "user-1", "10", String.valueOf(T));
            String text = ChildJvm.output(p);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), text);
            assertEquals(0, p.exitValue(), text);
            // 10 per minute host-wide: the child got what this JVM left.
            assertEquals("admitted 6 remaining 0 resident 1", text);
            assertFalse(keys.decide("user-1", 1, T).admitted());
            // Every decision on the file, both JVMs': 4 + 6 admitted, the child's 4 and this one refused.
            assertEquals(new KeyStats(64, 1, 0, 0, 10, 5), keys.stats());
            assertTrue(keys.decide("user-2", 1, T).admitted());
        }
    }

    /** The child JVM of {@link #twoJvmsCountOnceHostWideOnASharedFile}: decides a key N times on a shared file. */
    public static final class SharedKeysChild {
        static final KeyRule RULE = KeyRule.fixedWindow(10, 60_000);
        static final long CAPACITY = 64;

        private SharedKeysChild() {}

        /** {@code FILE KEY N NOW_MS}: prints {@code admitted A remaining R resident S}. */
        public static void main(String[] args) {
            try (KeyedLimit keys = KeyedLimit.shared(args[0], RULE, CAPACITY)) {
                int admitted = 0;
                KeyDecision last = null;
                for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                    last = keys.decide(utf8(args[1]), 1, Long.parseLong(args[3]));
                    admitted += last.admitted() ? 1 : 0;
                }
                System.out.println("admitted " + admitted + " remaining " + last.remaining() + " resident "
                        + keys.stats().resident());
            }
        }
    }
}
