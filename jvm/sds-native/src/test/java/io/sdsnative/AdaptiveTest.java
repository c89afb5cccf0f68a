package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Adaptive concurrency ({@code adaptiveConcurrency}) through the public API,
 * with explicit times: the limit caps requests in flight, each admitted
 * request's exit moves it, and the stats show it with its RTTs.
 */
class AdaptiveTest {
    private static final long T = 1_700_000_000_000L;

    /** AIMD from {@code initial}, bounds 1..200. */
    private static Strategy aimd(long initial) {
        return Strategy.builder().adaptiveConcurrency(Algorithm.AIMD).adaptiveMinLimit(1)
                .adaptiveInitialLimit(initial).build();
    }

    private static Client client(Strategy strategy) {
        Client client = new Client(8);
        client.setStrategy("p", strategy);
        return client;
    }

    /** {@code n} entries at {@code now}, in order. */
    private static List<Entry> enter(Client client, long now, int n) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(client.enter("p", now));
        }
        return entries;
    }

    @Test
    void theBuilderSetsTheFourFields() {
        Strategy s = Strategy.builder().adaptiveConcurrency(Algorithm.GRADIENT2).adaptiveMinLimit(5)
                .adaptiveMaxLimit(500).adaptiveInitialLimit(50).build();
        assertEquals(3, s.get("adaptiveConcurrency"));
        assertEquals(Algorithm.GRADIENT2, s.adaptiveConcurrency());
        assertEquals(5, s.get("adaptiveMinLimit"));
        assertEquals(500, s.get("adaptiveMaxLimit"));
        assertEquals(50, s.get("adaptiveInitialLimit"));
        assertEquals(s, Strategy.builder().adaptiveConcurrency(3).adaptiveMinLimit(5).adaptiveMaxLimit(500)
                .adaptiveInitialLimit(50).build());
        assertEquals(s, Strategy.fromJson(s.toJson()));
        assertTrue(s.toJson().contains("\"adaptiveConcurrency\":3,\"adaptiveMinLimit\":5,"
                + "\"adaptiveMaxLimit\":500,\"adaptiveInitialLimit\":50"), s.toJson());
        // Off by default, every bound the algorithm's own.
        for (String f : new String[] {"adaptiveConcurrency", "adaptiveMinLimit", "adaptiveMaxLimit",
                "adaptiveInitialLimit"}) {
            assertEquals(-1, Strategy.DEFAULT.get(f), f);
        }
        assertNull(Strategy.DEFAULT.adaptiveConcurrency());
        SdsException e = assertThrows(SdsException.class,
                () -> Strategy.builder().adaptiveConcurrency((Algorithm) null));
        assertEquals(ErrorCode.NULL_ARGUMENT, e.code());
    }

    @Test
    void aimdTheInitialLimitCapsRequestsInFlightAndGrowsWhileBusy() {
        try (Client client = client(aimd(4))) {
            List<Entry> entries = enter(client, T, 5);
            for (int i = 0; i < 4; i++) {
                assertFalse(entries.get(i).isDowngraded(), "entry " + i);
            }
            Entry refused = entries.get(4);
            assertEquals(Reason.CONCURRENT, refused.reason());
            Stats s = client.stats("p", T);
            assertEquals(4, s.concurrent());
            assertEquals(4, s.adaptiveLimit());
            refused.exit(T + 5);
            assertEquals(4, client.stats("p", T + 5).adaptiveLimit(), "a refused request is no sample");
            // Exits with 4, 3, 2, 1 in flight (the ending one included): +1 while that is at least half the limit.
            long[] limits = {5, 6, 6, 6};
            for (int i = 0; i < 4; i++) {
                entries.get(i).exit(T + 10 * (i + 1));
                assertEquals(limits[i], client.stats("p", T + 10 * (i + 1)).adaptiveLimit(), "exit " + i);
            }
            s = client.stats("p", T + 40);
            assertEquals(40_000, s.adaptiveRttUs(), "the last sample: entered at T, out at T + 40 ms");
            assertEquals(0, s.adaptiveMinRttUs(), "AIMD keeps no reference RTT");
            assertEquals(0, s.adaptiveLongRttUs());
            assertEquals(0, s.concurrent());
            // The grown limit admits 6 now.
            List<Entry> more = enter(client, T + 100, 7);
            assertEquals(6, more.stream().filter(e -> !e.isDowngraded()).count());
            assertEquals(Reason.CONCURRENT, more.get(6).reason());
            more.forEach(e -> e.exit(T + 100));
        }
    }

    @Test
    void aimdBacksOffOnAFailureOrATimeout() {
        Strategy s = aimd(100).toBuilder().timeoutThreshold(100).build();
        try (Client client = client(s)) {
            Entry failed = client.enter("p", T);
            failed.error(new IllegalStateException("overloaded")).exit(T + 10);
            assertEquals(90, client.stats("p", T + 10).adaptiveLimit(), "100 x 0.9");
            Entry slow = client.enter("p", T + 20);
            slow.exit(T + 121);
            Stats after = client.stats("p", T + 121);
            assertEquals(81, after.adaptiveLimit(), "a timeout is a drop too: 90 x 0.9");
            assertEquals(1, after.timeout());
            assertEquals(1, after.exception());
            // The sugar marks a thrown call failed: 81 x 0.9 = 72.9, rounded down.
            assertThrows(IllegalStateException.class, () -> client.call("p", () -> {
                throw new IllegalStateException("overloaded");
            }));
            assertEquals(72, client.stats("p").adaptiveLimit());
            // A quick call with 1 in flight of 72 leaves it (not busy).
            client.run("p", () -> {});
            assertEquals(72, client.stats("p").adaptiveLimit());
        }
    }

    @Test
    void aimdNeverBacksOffBelowItsMinimum() {
        Strategy s = Strategy.builder().adaptiveConcurrency(Algorithm.AIMD).adaptiveMinLimit(2)
                .adaptiveInitialLimit(2).build();
        try (Client client = client(s)) {
            for (int i = 0; i < 3; i++) {
                client.enter("p", T).error(new RuntimeException()).exit(T + 1);
            }
            assertEquals(2, client.stats("p", T + 1).adaptiveLimit());
        }
    }

    @Test
    void vegasShowsItsNoLoadRtt() {
        Strategy s = Strategy.builder().adaptiveConcurrency(Algorithm.VEGAS).build();
        try (Client client = client(s)) {
            Stats fresh = client.stats("p", T);
            assertEquals(20, fresh.adaptiveLimit(), "VEGAS starts at 20");
            assertEquals(0, fresh.adaptiveMinRttUs(), "no sample yet");
            // The first sample is the no-load RTT; a lower one replaces it, a higher one does not.
            long[][] calls = {{30, 30_000}, {20, 20_000}, {50, 20_000}};
            long at = T;
            for (long[] c : calls) {
                client.enter("p", at).exit(at + c[0]);
                Stats st = client.stats("p", at + c[0]);
                assertEquals(c[1], st.adaptiveMinRttUs(), "after a call of " + c[0] + " ms");
                assertEquals(c[0] * 1_000, st.adaptiveRttUs());
                assertEquals(0, st.adaptiveLongRttUs());
                // One in flight of 20 is no load: the limit stays.
                assertEquals(20, st.adaptiveLimit());
                at += 100;
            }
        }
    }

    @Test
    void kneeMeasuresItsMinRttThenDoublesWhileThereIsNoQueue() {
        Strategy s = Strategy.builder().adaptiveConcurrency(Algorithm.KNEE).build();
        assertEquals(Algorithm.KNEE, s.adaptiveConcurrency());
        try (Client client = client(s)) {
            assertEquals(3, client.stats("p", T).adaptiveLimit(), "KNEE starts at 3");
            // The min RTT: the p50 of 100 requests sent after the first sample, the limit at its minimum (3)
            // meanwhile.
            long at = T;
            for (int i = 0; i < 101; i++) {
                client.enter("p", at).exit(at + 40);
                at += 50;
                if (i < 100) {
                    assertEquals(3, client.stats("p", at).adaptiveLimit(), "sample " + i);
                }
            }
            Stats measured = client.stats("p", at);
            long minRtt = measured.adaptiveMinRttUs();
            assertTrue(minRtt >= 36_000 && minRtt <= 40_000, "the p50 of 40 ms samples in its bucket: " + minRtt);
            assertEquals(40_000, measured.adaptiveRttUs());
            assertEquals(minRtt * 100 / 96, measured.adaptiveLongRttUs(), "the latency it settles at");
            // The slow start: a busy window (2 of 3 in flight), 25 samples over 100 ms at the min RTT: doubled.
            at += 100;
            for (int i = 0; i < 13; i++, at += 10) {
                long now = at;
                enter(client, now, 2).forEach(e -> e.exit(now + 40));
            }
            Stats doubled = client.stats("p", at + 40);
            assertEquals(6, doubled.adaptiveLimit());
            assertEquals(minRtt, doubled.adaptiveMinRttUs());
            // The decision follows: 6 admitted, the 7th refused.
            List<Entry> seven = enter(client, at + 50, 7);
            for (int i = 0; i < 6; i++) {
                assertFalse(seven.get(i).isDowngraded(), "entry " + i);
            }
            assertEquals(Reason.CONCURRENT, seven.get(6).reason());
            assertEquals(6, client.stats("p", at + 50).concurrent());
            long end = at + 90;
            seven.forEach(e -> e.exit(end));
        }
    }

    @Test
    void aPacedRequestIsTimedFromWhenItMayRun() {
        Strategy s = Strategy.builder().adaptiveConcurrency(Algorithm.VEGAS).tokenBucketGeneratedTokensInSecond(10)
                .maxQueueingTimeMs(1_000).build();
        try (Client client = client(s)) {
            Entry first = client.enter("p", T);
            Entry second = client.enter("p", T);
            assertEquals(100, second.waitMs());
            first.exit(T + 30);
            second.exit(second.runAtMs() + 20);
            assertEquals(20_000, client.stats("p", T + 120).adaptiveMinRttUs(),
                    "out 120 ms after its enter, 20 ms after its slot");
        }
    }

    @Test
    void changingTheAlgorithmOrItsBoundsStartsAfresh() {
        try (Client client = client(aimd(4))) {
            List<Entry> entries = enter(client, T, 4);
            entries.forEach(e -> e.exit(T + 10));
            assertEquals(6, client.stats("p", T + 10).adaptiveLimit());
            // Another field changes: the limit goes on.
            client.setStrategy("p", aimd(4).toBuilder().visitThreshold(1_000).build());
            assertEquals(6, client.stats("p", T + 10).adaptiveLimit(), "same algorithm and bounds: kept");
            // Another algorithm: its own start.
            client.setStrategy("p", Strategy.builder().adaptiveConcurrency(Algorithm.VEGAS).build());
            assertEquals(20, client.stats("p", T + 20).adaptiveLimit());
            client.enter("p", T + 20).exit(T + 50);
            assertEquals(30_000, client.stats("p", T + 50).adaptiveMinRttUs());
            // Back to AIMD: from its initial limit again, nothing of VEGAS's left.
            client.setStrategy("p", aimd(4));
            Stats s = client.stats("p", T + 60);
            assertEquals(4, s.adaptiveLimit());
            assertEquals(0, s.adaptiveMinRttUs());
            assertEquals(0, s.adaptiveRttUs());
            // Other bounds: afresh as well.
            client.setStrategy("p", aimd(7));
            assertEquals(7, client.stats("p", T + 60).adaptiveLimit());
            // Off: no limit, no stats, concurrentThreshold back in charge.
            client.setStrategy("p", Strategy.builder().concurrentThreshold(1).build());
            Stats off = client.stats("p", T + 70);
            assertEquals(0, off.adaptiveLimit());
            List<Entry> two = enter(client, T + 70, 2);
            assertEquals(Reason.CONCURRENT, two.get(1).reason());
            two.forEach(e -> e.exit(T + 70));
        }
    }

    @Test
    void aSharedTableHasOneLimitForTheHost() throws Exception {
        Path dir = Files.createTempDirectory("sds-adaptive");
        Path file = dir.resolve("table.sds");
        try (Client a = Client.openShared(file.toString(), 8); Client b = Client.openShared(file.toString(), 8)) {
            a.setStrategy("p", aimd(2));
            Entry one = a.enter("p", T);
            Entry two = b.enter("p", T);
            assertFalse(two.isDowngraded());
            Entry third = b.enter("p", T);
            assertEquals(Reason.CONCURRENT, third.reason(), "two in flight across both views");
            third.exit(T);
            one.exit(T + 10);
            assertEquals(3, b.stats("p", T + 10).adaptiveLimit(), "a's sample moved the limit b reads");
            two.exit(T + 20);
            assertEquals(3, a.stats("p", T + 20).adaptiveLimit());
            assertEquals(20_000, a.stats("p", T + 20).adaptiveRttUs(), "b's sample, read through a");
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void theLimitIsAGaugeForAdaptivePointsOnly() {
        try (Client client = client(aimd(4))) {
            client.setStrategy("plain", Strategy.builder().concurrentThreshold(3).build());
            enter(client, T, 4).forEach(e -> e.exit(T + 10));
            MetricFamily family = client.metrics(T + 10).stream()
                    .filter(f -> f.name().equals("sds_point_adaptive_limit")).findFirst()
                    .orElseThrow(AssertionError::new);
            assertEquals(MetricFamily.Type.GAUGE, family.type());
            assertEquals(1, family.samples().size(), family.toString());
            MetricFamily.Sample sample = family.samples().get(0);
            assertTrue(sample.labelValues().contains("p"), sample.toString());
            assertEquals(6.0, sample.value(), "the same limit as stats: 4 grown to 6");
            assertEquals(client.stats("p", T + 10).adaptiveLimit(), (long) sample.value());
            assertTrue(client.prometheusText(false, T + 10).contains("# TYPE sds_point_adaptive_limit gauge"));
        }
    }

    /** Enters and forgets the entry: nothing refers to it once this returns. */
    private static void dropAnEntry(Client client) {
        assertFalse(client.enter("p", T).isDowngraded());
    }

    @Test
    void aDroppedEntryOfAnAdaptivePointGivesItsPermitBack() throws InterruptedException {
        try (Client client = client(aimd(1))) {
            dropAnEntry(client);
            Entry refused = client.enter("p", T);
            assertEquals(Reason.CONCURRENT, refused.reason(), "the dropped entry holds the one permit");
            refused.exit(T);
            assertEquals(0, DroppedEntryTest.concurrentAfterGc(client, "p"),
                    "watched like a concurrentThreshold's permits, returned once collected");
            try (Entry next = client.enter("p", T)) {
                assertFalse(next.isDowngraded());
            }
        }
    }

    /** The adaptive row's messages, word for word as conformance/strategies.json has them. */
    @Test
    void theAdaptiveRowsMessages() {
        assertInvalid("invalid strategy: adaptiveConcurrency must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), "
                + "4 (GRADIENT) or 5 (KNEE), or negative: off", () -> Strategy.builder().adaptiveConcurrency(6).build());
        assertInvalid("invalid strategy: concurrentThreshold must be negative with adaptiveConcurrency (the limit "
                + "is found from latency)",
                () -> Strategy.builder().adaptiveConcurrency(Algorithm.AIMD).concurrentThreshold(10).build());
        assertInvalid("invalid strategy: adaptiveMaxLimit needs adaptiveConcurrency",
                () -> Strategy.builder().adaptiveMaxLimit(10).build());
        assertInvalid("invalid strategy: adaptiveMinLimit must be >= 1 (or negative: the algorithm's default)",
                () -> Strategy.builder().adaptiveConcurrency(Algorithm.VEGAS).adaptiveMinLimit(0).build());
        assertInvalid("invalid strategy: adaptiveMaxLimit must be <= 1000000",
                () -> Strategy.builder().adaptiveConcurrency(Algorithm.VEGAS).adaptiveMaxLimit(1_000_001).build());
        assertInvalid("invalid strategy: adaptiveMaxLimit must be >= the minimum limit",
                () -> Strategy.builder().adaptiveConcurrency(Algorithm.AIMD).adaptiveMaxLimit(10).build());
        assertInvalid("invalid strategy: adaptiveInitialLimit must be within the minimum and maximum limits",
                () -> Strategy.builder().adaptiveConcurrency(Algorithm.GRADIENT2).adaptiveInitialLimit(500).build());
        // The same verdict from JSON.
        assertInvalid("invalid strategy: adaptiveMaxLimit must be >= the minimum limit",
                () -> Strategy.fromJson("{\"adaptiveConcurrency\": 1, \"adaptiveMaxLimit\": 10}"));
    }

    private static void assertInvalid(String message, Supplier<Strategy> build) {
        SdsException e = assertThrows(SdsException.class, build::get);
        assertEquals(ErrorCode.INVALID_STRATEGY, e.code());
        assertEquals("SDS_INVALID_STRATEGY: " + message, e.getMessage());
    }
}
