package io.sdsnative;

import static io.sdsnative.BackgroundThreads.threadNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigInteger;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What AdminAgent and ClusterSync share: configs as the settings their
 * builder collected, each Java value's way to a setting, statuses as the
 * native fields, and a service collected unclosed being stopped.
 */
class BackgroundServiceTest {
    /** Nobody listens there: a sync starts and keeps failing to connect. */
    private static final String NO_REDIS = "redis://127.0.0.1:1";

    /**
     * The status classes have one public accessor per native field, of its
     * name, each reading its own field: a field added in Rust and not here
     * fails, as does an accessor that reads another field.
     */
    @Test
    void theStatusAccessorsAreTheNativeFields() throws Exception {
        assertAccessors(new AdminStatus(numbered(CoreTables.AGENT_STATUS_NAMES)), CoreTables.AGENT_STATUS_NAMES);
        assertAccessors(new ClusterStatus(numbered(CoreTables.CLUSTER_STATUS_NAMES)), CoreTables.CLUSTER_STATUS_NAMES);
        assertEquals("lastPullMs", CoreTables.AGENT_STATUS_NAMES[0]);
    }

    /** The values "0", "1", ...: each field's text is its index. */
    private static String[] numbered(String[] names) {
        String[] values = new String[names.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = String.valueOf(i);
        }
        return values;
    }

    private static void assertAccessors(NativeStatus status, String[] nativeNames) throws Exception {
        List<String> accessors = new ArrayList<>();
        for (Method accessor : status.getClass().getDeclaredMethods()) {
            if (Modifier.isPublic(accessor.getModifiers()) && !Modifier.isStatic(accessor.getModifiers())) {
                accessors.add(accessor.getName());
                int index = Arrays.asList(nativeNames).indexOf(accessor.getName());
                String text = String.valueOf(index);
                Object expected = accessor.getReturnType() == long.class ? (Object) (long) index
                        : accessor.getReturnType() == boolean.class ? (Object) false
                        : accessor.getReturnType() == Optional.class ? (Object) Optional.of(text) : text;
                assertEquals(expected, accessor.invoke(status), accessor.toString());
            }
        }
        Collections.sort(accessors);
        List<String> names = new ArrayList<>(Arrays.asList(nativeNames));
        Collections.sort(names);
        assertEquals(names, accessors, status.getClass().getSimpleName());
    }

    @Test
    void aStatusIsItsFieldsByName() {
        try (Client client = new Client(16)) {
            ClusterSync sync = client.connectCluster(ClusterConfig.builder().url(NO_REDIS).points("p").build());
            ClusterStatus s = sync.status();
            assertEquals(1, s.points());
            assertTrue(s.toString().startsWith("ClusterStatus{connected=false, syncing="), s.toString());
            sync.close();
            assertEquals(sync.status(), sync.status());
            assertEquals(sync.status().hashCode(), sync.status().hashCode());
        }
    }

    @Test
    void aBuilderCollectsItsSettingsALaterCallReplacingAnEarlierOne() {
        AdminConfig.Builder builder = AdminConfig.builder().servers("http://a:1").pullIntervalMs(5)
                .set("pull_interval", 0.5).tlsCaFile(Paths.get("/ca.pem")).servers("http://b:1");
        AdminConfig config = builder.build();
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("servers", "http://b:1");
        expected.put("pullIntervalMs", 5L);
        expected.put("pull_interval", 0.5);
        expected.put("tlsCaFile", Paths.get("/ca.pem"));
        assertEquals(expected, config.settings());
        assertEquals(new ArrayList<>(expected.keySet()), new ArrayList<>(config.settings().keySet()));
        builder.appName("later");
        assertEquals(4, config.settings().size(), "a config keeps what was set when it was built");
        assertThrows(UnsupportedOperationException.class, () -> config.settings().put("ip", "x"));

        List<String> points = new ArrayList<>(Collections.singletonList("a"));
        ClusterConfig cluster = ClusterConfig.builder().url(NO_REDIS).points(points).build();
        points.add("b");
        assertEquals(Collections.singletonList("a"), cluster.settings().get("points"));
        assertEquals(NO_REDIS, cluster.settings().get("urls"));
        assertSame(ErrorCode.NULL_ARGUMENT, assertThrows(SdsException.class,
                () -> ClusterConfig.builder().set(null, 1)).code());
    }

    /** The message connectCluster gives for the points and {@code key} = {@code value}. */
    private static String refusal(String key, Object value) {
        ClusterConfig config = ClusterConfig.builder().url(NO_REDIS).points("p").set(key, value).build();
        try (Client client = new Client(16)) {
            SdsException e = assertThrows(SdsException.class, () -> client.connectCluster(config));
            assertSame(ErrorCode.INVALID_ARGUMENT, e.code());
            return e.getMessage().replace("SDS_INVALID_ARGUMENT: invalid cluster configuration: ", "");
        }
    }

    private static final String WHOLE_MS = "syncMs must be a whole number of milliseconds from 0 to 18446744073709551615, not ";

    @Test
    void eachJavaValueReachesTheSettingAsItsKind() {
        assertEquals("redisCluster must be true or false, not 1", refusal("redisCluster", 1));
        assertEquals("redisCluster must be true or false, not 1", refusal("redisCluster", (short) 1));
        assertEquals("redisCluster must be true or false, not -1", refusal("redisCluster", (byte) -1));
        assertEquals(WHOLE_MS + "1180591620717411303424", refusal("syncMs", BigInteger.ONE.shiftLeft(70)));
        assertEquals(WHOLE_MS + "1e40", refusal("syncMs", BigInteger.TEN.pow(40)));
        assertEquals(WHOLE_MS + "1.5", refusal("syncMs", 1.5f));
        assertEquals(WHOLE_MS + "the text \"5\"", refusal("syncMs", new StringBuilder("5")));
        assertEquals(WHOLE_MS + "a value of type java.lang.Character", refusal("syncMs", 'x'));
        assertEquals(WHOLE_MS + "a value of type long[]", refusal("syncMs", new long[] {5}));
        assertEquals("points must be text or a list of text, not a value of type java.util.HashSet",
                refusal("points", new HashSet<>(Collections.singletonList("p"))));
        assertEquals("points[1] \"a\" is listed twice (also points[0])", refusal("points", new String[] {"a", "a"}));
        assertEquals("points[0] must be text, not a list", refusal("points", new Object[] {new String[] {"a"}}));
        assertEquals("points[0] must be text, not a value of type java.lang.StringBuilder with a lone surrogate",
                refusal("points", Collections.singletonList(new StringBuilder("\udc00"))));

        // Integers of every size, text of any CharSequence and a Path as text start.
        ClusterConfig config = ClusterConfig.builder().set("urls", new StringBuilder(NO_REDIS)).points("p")
                .set("syncMs", 50).set("timeout_ms", BigInteger.valueOf(300)).set("keyPrefix", Paths.get("svc"))
                .set("max_backoff", (byte) 2).build();
        try (Client client = new Client(16); ClusterSync sync = client.connectCluster(config)) {
            assertEquals(1, sync.status().points());
        }
    }

    /** Starts a sync whose client and itself are then unreachable. */
    private static void startAndForget() {
        new Client(16).connectCluster(ClusterConfig.builder().url(NO_REDIS).points("p").build());
    }

    @Test
    void aServiceCollectedUnclosedIsStopped() throws Exception {
        BackgroundThreads.assertGone("sds-cluster");
        startAndForget();
        // The thread names itself once running: wait for it.
        FakeConsole.waitUntil(5_000, "the sds-cluster thread", () -> {
            try {
                return threadNames().contains("sds-cluster");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (threadNames().contains("sds-cluster") && System.nanoTime() < deadline) {
            System.gc();
            NativeReclaimer.freeCollected();
            Thread.sleep(20);
        }
        BackgroundThreads.assertGone("sds-cluster");
        BackgroundThreads.assertGone("sds-reaper");
    }
}
