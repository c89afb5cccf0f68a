package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Warm-up, pacing and the slow-call rate through the public API, with
 * explicit times (the sugar that sleeps the waits: {@link PacingSugarTest}).
 */
class ShapingTest {
    private static final long T = 1_700_000_000_000L;

    private static Client client(Strategy strategy) {
        Client client = new Client(8);
        client.setStrategy("p", strategy);
        return client;
    }

    private static Strategy paced(long rate, long maxQueueMs) {
        return Strategy.builder().tokenBucketGeneratedTokensInSecond(rate).maxQueueingTimeMs(maxQueueMs).build();
    }

    /** The wait of each of {@code n} entries at {@code now}, null for a downgraded one (exited at once). */
    private static List<Long> waits(Client client, long now, int n) {
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Entry e = client.enter("p", now);
            waits.add(e.isDowngraded() ? null : e.waitMs());
            e.exit(now);
        }
        return waits;
    }

    @Test
    void pacingSpacesABurstAtTheRateAndRefusesPastTheQueue() {
        try (Client client = client(paced(10, 500))) {
            assertEquals(Arrays.asList(0L, 100L, 200L, 300L, 400L, 500L, null), waits(client, T, 7));
            Entry refused = client.enter("p", T);
            assertEquals(Reason.TOKEN_BUCKET, refused.reason());
            assertEquals(0, refused.waitMs(), "a refused request never waits");
            assertEquals(T, refused.runAtMs());
            refused.exit(T);
            // 250 ms later the slots go on from 600 ms: 350 and 450 ms away.
            assertEquals(Arrays.asList(350L, 450L, null), waits(client, T + 250, 3));
            Entry e = client.enter("p", T + 2_000);
            assertEquals(0, e.waitMs(), "the queue has drained");
            Entry next = client.enter("p", T + 2_000);
            assertEquals(100, next.waitMs());
            assertEquals(T + 2_100, next.runAtMs());
            assertTrue(next.toString().contains("waitMs=100"), next.toString());
            e.exit(T + 2_000);
            next.exit(T + 2_100);
        }
    }

    @Test
    void pacingKeepsSubMillisecondSlotsAndRoundsEachWaitUp() {
        try (Client client = client(paced(3, 2_000))) {
            assertEquals(Arrays.asList(0L, 334L, 667L, 1_000L, 1_334L), waits(client, T, 5));
        }
        try (Client client = client(paced(10, 0))) {
            assertEquals(Arrays.asList(0L, null), waits(client, T, 2), "no queue: a strict rate");
            assertEquals(Arrays.asList(0L), waits(client, T + 100, 1));
        }
    }

    @Test
    void theLongestQueueFitsThePackedEntry() {
        // 65535 ms is the most a wait can be: 65000 sets the top bit of the wait's 16.
        try (Client client = client(paced(1, 65_535))) {
            List<Long> waits = waits(client, T, 67);
            assertEquals(65_000L, waits.get(65));
            assertNull(waits.get(66));
        }
    }

    @Test
    void aPacedRequestIsTimedFromWhenItMayRun() {
        Strategy s = paced(2, 1_000).toBuilder().timeoutThreshold(100).build();
        try (Client client = client(s)) {
            Entry first = client.enter("p", T);
            Entry second = client.enter("p", T);
            assertEquals(500, second.waitMs());
            assertEquals(T + 500, second.runAtMs());
            first.exit(T + 50);
            // 550 ms after its enter, 50 ms after it could run: no timeout.
            second.exit(T + 550);
            assertEquals(0, client.stats("p", T + 600).timeout());
            Entry third = client.enter("p", T + 600);
            third.exit(third.runAtMs() + 101);
            assertEquals(1, client.stats("p", T + 2_000).timeout());
        }
    }

    @Test
    void aProbeNeverWaits() {
        Strategy s = Strategy.builder().timeoutThreshold(100).slowCallRateThreshold(50).slowCallRateStart(3)
                .delayTime(10_000).retryInterval(1_000).build();
        try (Client client = client(s)) {
            slowCallsUntilADelay(client);
            Entry probe = client.enter("p", T + 1_700);
            assertFalse(probe.isDowngraded());
            assertEquals(0, probe.waitMs());
            probe.exit(T + 1_710);
        }
    }

    /** One fast and two slow calls, then SLOW_CALL_RATE and a delay (from T to T + 700). */
    private static void slowCallsUntilADelay(Client client) {
        long[][] calls = {{T, 10}, {T + 200, 150}, {T + 400, 150}};
        for (long[] c : calls) {
            Entry e = client.enter("p", c[0]);
            assertFalse(e.isDowngraded(), e.toString());
            e.exit(c[0] + c[1]);
        }
        assertEquals(2, client.stats("p", T + 600).timeout(), "slower than timeoutThreshold");
        // 4 visits > start 3; 2 of the 3 finished calls were slow: 66 % >= 50 %.
        Entry e = client.enter("p", T + 600);
        assertEquals(Reason.SLOW_CALL_RATE, e.reason());
        assertEquals(9, e.reason().code());
        e.exit(T + 600);
        Entry delayed = client.enter("p", T + 700);
        assertEquals(Reason.DELAY, delayed.reason());
        delayed.exit(T + 700);
    }

    @Test
    void slowCallRateStartsADelay() {
        Strategy s = Strategy.builder().timeoutThreshold(100).slowCallRateThreshold(50).slowCallRateStart(3)
                .delayTime(10_000).build();
        try (Client client = client(s)) {
            slowCallsUntilADelay(client);
            assertEquals(Reason.DELAY, client.enter("p", T + 9_000).reason());
        }
        // Under the start, the same share downgrades nothing.
        Strategy high = s.toBuilder().slowCallRateStart(10).build();
        try (Client client = client(high)) {
            for (long at = T; at < T + 800; at += 200) {
                Entry e = client.enter("p", at);
                assertFalse(e.isDowngraded(), e.toString());
                e.exit(at + 150);
            }
        }
    }

    /** Admitted requests in each of {@code seconds} seconds at {@code perSecond} requests, evenly. */
    private static List<Long> admittedPerSecond(Client client, long from, int seconds, int perSecond) {
        List<Long> counts = new ArrayList<>();
        for (int k = 0; k < seconds; k++) {
            long n = 0;
            for (int i = 0; i < perSecond; i++) {
                long at = from + k * 1_000L + i * (1_000L / perSecond);
                Entry e = client.enter("p", at);
                n += e.isDowngraded() ? 0 : 1;
                e.exit(at);
            }
            counts.add(n);
        }
        return counts;
    }

    @Test
    void warmUpClimbsFromAThirdToTheRate() {
        // rate 10, 10 s, cold factor 3: a cold point admits 1 / (50 * 0.004 + 0.1) = 3.33 a second.
        Strategy s = Strategy.builder().tokenBucketGeneratedTokensInSecond(10).warmUpPeriodSec(10).coldFactor(3)
                .build();
        try (Client client = client(s)) {
            List<Long> perSecond = admittedPerSecond(client, T, 40, 20);
            assertEquals(3L, perSecond.get(0), perSecond.toString());
            for (int i = 1; i < perSecond.size(); i++) {
                assertTrue(perSecond.get(i - 1) <= perSecond.get(i), "never colder: " + perSecond);
            }
            int full = perSecond.indexOf(10L);
            assertTrue(full >= 8 && full <= 25, "full rate at second " + full + ": " + perSecond);
            assertTrue(perSecond.subList(full, perSecond.size()).stream().allMatch(n -> n == 10), perSecond.toString());
        }
    }

    @Test
    void warmPacingSpacesRequestsAtTheWarmingRate() {
        Strategy s = Strategy.builder().tokenBucketGeneratedTokensInSecond(10).warmUpPeriodSec(10)
                .maxQueueingTimeMs(1_000).build();
        assertEquals(3, s.get("coldFactor"), "the default cold factor");
        try (Client client = client(s)) {
            // Cold: 3.33 a second, 300 ms apart.
            assertEquals(Arrays.asList(0L, 300L, 600L, 900L, null), waits(client, T, 5));
        }
    }

    private static void assertInvalid(String message, Strategy.Builder builder) {
        SdsException e = assertThrows(SdsException.class, builder::build);
        assertEquals(ErrorCode.INVALID_STRATEGY, e.code());
        assertEquals(message, e.getMessage());
    }

    @Test
    void theNewFieldsAreValidatedWithTheCoresMessages() {
        String invalid = "SDS_INVALID_STRATEGY: invalid strategy: ";
        assertInvalid(invalid + "slowCallRateThreshold needs a timeoutThreshold > 0: the time above which a call is slow",
                Strategy.builder().slowCallRateThreshold(10));
        assertInvalid(invalid + "slowCallRateThreshold must be within 0..=100 (or negative: off)",
                Strategy.builder().timeoutThreshold(5).slowCallRateThreshold(101));
        assertInvalid(invalid + "coldFactor must be > 1", Strategy.builder().coldFactor(1));
        assertInvalid(invalid + "warmUpPeriodSec must be >= 1 s (or negative: no warm-up)",
                Strategy.builder().tokenBucketGeneratedTokensInSecond(10).warmUpPeriodSec(0));
        assertInvalid(invalid + "maxQueueingTimeMs must be <= 65535 ms (or negative: no pacing)",
                Strategy.builder().tokenBucketGeneratedTokensInSecond(10).maxQueueingTimeMs(65_536));
        assertInvalid(invalid + "maxQueueingTimeMs needs tokenBucketGeneratedTokensInSecond: the rate it shapes"
                + " (>= 1 to warm up)", Strategy.builder().maxQueueingTimeMs(100));
        assertInvalid(invalid + "warmUpPeriodSec needs tokenBucketGeneratedTokensInSecond: the rate it shapes"
                + " (>= 1 to warm up)", Strategy.builder().tokenBucketGeneratedTokensInSecond(0).warmUpPeriodSec(5));
        assertInvalid(invalid + "tokenBucketSize must not exceed the rate with warmUpPeriodSec or maxQueueingTimeMs"
                + " (they have no burst)", Strategy.builder().tokenBucketGeneratedTokensInSecond(10)
                .tokenBucketSize(20).maxQueueingTimeMs(100));
        // The JSON form gets the same verdict, word for word.
        SdsException json = assertThrows(SdsException.class, () -> Strategy.fromJson("{\"coldFactor\": 1}"));
        assertEquals(invalid + "coldFactor must be > 1", json.getMessage());
        // The edges that are allowed.
        assertEquals(65_535, paced(10, 65_535).get("maxQueueingTimeMs"));
        assertEquals(0, paced(0, 10).get("tokenBucketGeneratedTokensInSecond"), "rate 0 pacing closes the point");
        assertEquals(2, Strategy.builder().coldFactor(2).build().get("coldFactor"));
    }

    @Test
    void theNewFieldsRoundTripThroughJson() {
        Strategy s = Strategy.fromJson("{\"tokenBucketGeneratedTokensInSecond\": 10, \"warmUpPeriodSec\": 10,"
                + " \"coldFactor\": 4, \"maxQueueingTimeMs\": 500, \"timeoutThreshold\": 100,"
                + " \"slowCallRateThreshold\": 50, \"slowCallRateStart\": 20}");
        Strategy built = Strategy.builder().tokenBucketGeneratedTokensInSecond(10).warmUpPeriodSec(10).coldFactor(4)
                .maxQueueingTimeMs(500).timeoutThreshold(100).slowCallRateThreshold(50).slowCallRateStart(20).build();
        assertEquals(built, s);
        assertEquals(s, Strategy.fromJson(s.toJson()));
        assertTrue(s.toJson().contains("\"slowCallRateThreshold\":50,\"slowCallRateStart\":20,\"warmUpPeriodSec\":10,"
                + "\"coldFactor\":4,\"maxQueueingTimeMs\":500,"), s.toJson());
    }
}
