package io.sdsnative.web;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;

import io.sdsnative.KeyDecision;
import org.junit.jupiter.api.Test;

/**
 * The per-request natives have a scratch-memory form and a {@code String}
 * form (for what does not fit the scratch memory): both give the same
 * answers, which are sds-http's.
 */
class NativePathsTest {
    private static final KeyDecision[] DECISIONS = {
        new KeyDecision(true, 100, 42, 16_001, 0, 60_000),
        new KeyDecision(false, 10, 0, 2_500, 2_500, 1_000),
        new KeyDecision(false, 5, 0, 30_000, KeyDecision.NEVER, 60_000),
        new KeyDecision(false, 3, 0, 0, 0, 0),
    };

    @Test
    void headerFieldsAreTheSameThroughScratchMemoryAndJniObjects() {
        String[] names = {"per-user", "a \"b\\", "never", "conn"};
        for (String style : new String[] {"draft-10", "draft-6", "x-ratelimit"}) {
            HeaderWriter writer = new HeaderWriter(style, names);
            for (int count = 1; count <= DECISIONS.length; count++) {
                Scratch s = writer.scratch();
                long[] io = new long[count * HttpNative.DECISION_LEN];
                for (int i = 0; i < count; i++) {
                    HeaderWriter.put(s, i, i, DECISIONS[i]);
                    put(io, i, i, DECISIONS[i]);
                }
                assertArrayEquals(writer.fields(io, count), writer.fields(s, count), style + " " + count);
            }
        }
        HeaderWriter writer = new HeaderWriter("draft-10", names);
        Scratch s = writer.scratch();
        HeaderWriter.put(s, 0, 0, DECISIONS[0]);
        HeaderWriter.put(s, 1, 2, DECISIONS[2]);
        assertEquals(Arrays.asList("RateLimit-Policy", "\"per-user\";q=100;w=60, \"never\";q=5;w=60",
                "RateLimit", "\"per-user\";r=42;t=17, \"never\";r=0;t=30"), Arrays.asList(writer.fields(s, 2)),
                "no Retry-After when no wait cures the refusal");
        HeaderWriter.put(s, 0, 1, DECISIONS[1]);
        assertEquals(Arrays.asList("RateLimit-Policy", "\"a \\\"b\\\\\";q=10;w=1", "RateLimit",
                "\"a \\\"b\\\\\";r=0;t=3", "Retry-After", "3"), Arrays.asList(writer.fields(s, 1)));
    }

    private static void put(long[] io, int slot, int policy, KeyDecision d) {
        long[] values = {policy, d.admitted() ? 1 : 0, d.limit(), d.remaining(), d.resetMs(), d.retryAfterMs(),
            d.windowMs()};
        System.arraycopy(values, 0, io, slot * HttpNative.DECISION_LEN, values.length);
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
