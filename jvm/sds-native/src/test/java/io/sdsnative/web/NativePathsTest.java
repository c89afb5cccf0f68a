package io.sdsnative.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;

import io.sdsnative.ErrorCode;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.SdsException;
import org.junit.jupiter.api.Test;

/**
 * The per-request natives through the scratch memory: a route's keys of
 * every form, and the client-address key, whose {@code String} form (for
 * what does not fit the scratch memory) gives the same answers, sds-http's.
 */
class NativePathsTest {
    /**
     * A fixed window of {@code limit} a minute from each key's first hit: one
     * aligned to the minute would reset if a test crossed a minute's end
     * between a decision and the peek that reads what it took (both on the
     * real clock).
     */
    private static KeyRule window(long limit) {
        return KeyRule.fixedWindow(limit, 60_000).windowFromFirstHit(true);
    }

    @Test
    void aRouteDecidesKeysOfEveryFormAndWritesTheirHeaderFields() {
        try (KeyedLimit perUser = KeyedLimit.create(window(2), 64);
                KeyedLimit quoted = KeyedLimit.create(window(100), 64);
                KeyedLimit conn = KeyedLimit.create(KeyRule.inFlight(1), 64)) {
            Route route = new Route("draft-10", new String[] {"per-user", "a \"b\\", "conn"},
                    new KeyedLimit[] {perUser, quoted, conn});
            byte[] bytes = {'k', (byte) 0xff};
            // Longer than the scratch memory a thread starts with: it gets a larger one.
            String longKey = String.join("", Collections.nCopies(300, "caf\u00e9"));
            Object[] keys = {"caf\u00e9", bytes, longKey};
            long[] costs = {1, 10, 1};
            Route.Decision d = route.decide(keys, costs);
            assertEquals(Route.ADMITTED, d.verdict);
            assertEquals(0b100, d.held, "the in-flight policy holds its unit");
            assertEquals(1, perUser.peek("caf\u00e9").remaining(), "a String key is its UTF-8");
            assertEquals(90, quoted.peek(bytes).remaining());
            assertEquals(0, conn.peek(longKey).remaining());
            assertEquals(Arrays.asList("RateLimit-Policy", "\"per-user\";q=2;w=60, \"a \\\"b\\\\\";q=100;w=60, "
                    + "\"conn\";q=1;w=1", "RateLimit"), Arrays.asList(d.fields).subList(0, 3));
            route.release(d.held, keys, costs);
            assertEquals(1, conn.peek(longKey).remaining(), "released with the keys it was decided with");

            Route.Decision exempt = route.decide(new Object[3], new long[3]);
            assertEquals(Route.ADMITTED, exempt.verdict);
            assertNull(exempt.fields, "no policy applied: no header fields");

            SdsException e = assertThrows(SdsException.class,
                    () -> route.decide(new Object[] {"a\ud800", null, null}, new long[] {1, 0, 0}));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().endsWith("key is not valid UTF-16: lone surrogate U+D800 at index 1"),
                    e.getMessage());
            e = assertThrows(SdsException.class,
                    () -> route.decide(new Object[] {"a", null, "b"}, new long[] {1, 0, 1L << 32}));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
            assertEquals(2, perUser.peek("a").remaining(), "a cost out of range is refused before any policy decides");
        }
    }

    @Test
    void aRouteOfAClosedLimitThrowsClosedAsTheLimitAloneDoes() {
        KeyedLimit limit = KeyedLimit.create(KeyRule.fixedWindow(2, 60_000), 64);
        Route route = new Route("draft-10", new String[] {"p"}, new KeyedLimit[] {limit});
        assertEquals(Route.ADMITTED, route.decide(new Object[] {"k"}, new long[] {1}).verdict);
        limit.close();
        SdsException e = assertThrows(SdsException.class, () -> route.decide(new Object[] {"k"}, new long[] {1}));
        assertEquals(ErrorCode.CLOSED, e.code());
        assertEquals(ErrorCode.CLOSED, assertThrows(SdsException.class, () -> limit.decide("k", 1)).code());
    }

    @Test
    void clientKeysAreTheSameThroughScratchMemoryAndJniObjects() {
        ClientAddressKey keys = new ClientAddressKey(32, 64, new String[] {"10.0.0.0/8", "::1"});
        assertEquals("2001:db8:1:2::/64", keys.keyOf("10.1.2.3", values("198.51.100.1, 2001:db8:1:2:aa::1")));
        assertEquals("198.51.100.1", keys.keyOf("::1", values("198.51.100.1", "10.9.9.9")),
                "several headers are one list, walked from the right");
        assertEquals("203.0.113.7", keys.keyOf("::ffff:203.0.113.7", null));
        assertEquals("local", keys.keyOf("local", null), "a peer that is no address is its own key");
        // Too long for the scratch memory, or not ASCII: the same answers through JNI objects.
        String padding = String.join(", ", Collections.nCopies(100, "10.0.0.1"));
        assertEquals("2001:db8:1:2::/64", keys.keyOf("10.1.2.3", values("2001:db8:1:2::9, " + padding)));
        assertEquals("10.1.2.3", keys.keyOf("10.1.2.3", values("2001:db8::9, caf\u00e9")),
                "a hop that is no address stops the walk at the hop that added it");
        assertEquals("caf\u00e9", keys.keyOf("caf\u00e9", null));
    }

    private static Enumeration<String> values(String... values) {
        return Collections.enumeration(Arrays.asList(values));
    }
}
