package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Client#metrics}, {@link Client#prometheusText} and the keyed limits they show. */
class MetricsTest {
    private static final long T = 1_700_000_000_000L;

    @TempDir
    Path dir;

    /** The family {@code name} of {@code families}; null if it has no samples. */
    static MetricFamily family(List<MetricFamily> families, String name) {
        for (MetricFamily f : families) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        return null;
    }

    /** The value of the series of {@code labelValues} in family {@code name}; null if absent. */
    static Double value(List<MetricFamily> families, String name, String... labelValues) {
        MetricFamily f = family(families, name);
        if (f == null) {
            return null;
        }
        for (MetricFamily.Sample s : f.samples()) {
            if (s.labelValues().equals(Arrays.asList(labelValues))) {
                return s.value();
            }
        }
        return null;
    }

    static String promtool(String text) throws Exception {
        return Promtool.check(text);
    }

    @Test
    void pointsCountRequestsDowngradesByReasonExceptionsAndTimeouts() {
        try (Client client = new Client(8)) {
            client.setStrategy("order", Strategy.builder().visitThreshold(2).build());
            client.setStrategy("pay", Strategy.builder().concurrentThreshold(1).timeoutThreshold(100).build());
            for (int i = 0; i < 3; i++) {
                client.enter("order", T).close();
            }
            Entry held = client.enter("pay", T);
            assertEquals(Reason.CONCURRENT, client.enter("pay", T + 1).reason());
            held.error(new IllegalStateException("boom"));
            held.exit(T + 500); // slower than 100 ms: a timeout, and an exception
            Entry open = client.enter("pay", T + 600);

            List<MetricFamily> m = client.metrics(T + 700);
            assertEquals(3.0, value(m, "sds_point_requests", "private", "order"));
            assertEquals(3.0, value(m, "sds_point_requests", "private", "pay"));
            for (Reason r : Reason.values()) {
                double order = r == Reason.VISIT ? 1 : 0;
                double pay = r == Reason.CONCURRENT ? 1 : 0;
                assertEquals(order, value(m, "sds_point_downgrades", "private", "order", r.name()), r.name());
                assertEquals(pay, value(m, "sds_point_downgrades", "private", "pay", r.name()), r.name());
            }
            assertEquals(1.0, value(m, "sds_point_exceptions", "private", "pay"));
            assertEquals(0.0, value(m, "sds_point_exceptions", "private", "order"));
            assertEquals(1.0, value(m, "sds_point_timeouts", "private", "pay"));
            assertEquals(1.0, value(m, "sds_point_in_flight", "private", "pay"), "the open entry");
            assertEquals(0.0, value(m, "sds_point_in_flight", "private", "order"));
            assertEquals(2.0, value(m, "sds_table_points", "private"));
            assertEquals(8.0, value(m, "sds_table_points_capacity", "private"));
            open.close();

            MetricFamily downgrades = family(m, "sds_point_downgrades");
            assertEquals(MetricFamily.Type.COUNTER, downgrades.type());
            assertEquals(Arrays.asList("table", "point", "reason"), downgrades.labelNames());
            assertFalse(downgrades.help().isEmpty());
            assertEquals(MetricFamily.Type.GAUGE, family(m, "sds_point_in_flight").type());
            assertNull(family(m, "sds_agent_up"), "no agent started");
            assertNull(family(m, "sds_cluster_up"), "no cluster sync started");
        }
    }

    @Test
    void counterTotalsOutliveTheWindowAndNeverGoBack() {
        try (Client client = new Client(4)) {
            client.enter("p", T).close();
            client.enter("p", T + 1).close();
            assertEquals(2.0, value(client.metrics(T + 2), "sds_point_requests", "private", "p"));
            // A minute later the 10 s window holds none of them; the total still does.
            client.enter("p", T + 60_000).close();
            assertEquals(3.0, value(client.metrics(T + 60_001), "sds_point_requests", "private", "p"));
            assertEquals(0, client.stats("p", T + 120_000).visit());
            assertEquals(3.0, value(client.metrics(T + 120_000), "sds_point_requests", "private", "p"));
        }
    }

    @Test
    void keyedLimitsShowTheirDecisionsUnderTheirLabelInEveryClient() {
        KeyedLimit login = KeyedLimit.create(KeyRule.rate(2, 1000), 64, "login");
        try (Client a = new Client(4); Client b = new Client(4);
                KeyedLimit unnamed = KeyedLimit.create(KeyRule.inFlight(1), 8)) {
            assertEquals("login", login.metricsLabel());
            assertTrue(unnamed.metricsLabel().matches("private-[0-9]+"), unnamed.metricsLabel());
            assertTrue(login.decide("ann", 1, T).admitted());
            assertTrue(login.decide("ann", 1, T).admitted());
            assertFalse(login.decide("ann", 1, T).admitted());
            assertTrue(login.decide("bob", 1, T).admitted());
            assertTrue(unnamed.decide("k", 1, T).admitted());
            assertFalse(unnamed.decide("k", 1, T).admitted());
            login.peek("ann", T); // not a decision

            for (Client client : Arrays.asList(a, b)) {
                List<MetricFamily> m = client.metrics(T);
                assertEquals(3.0, value(m, "sds_keyed_decisions", "login", "admitted"));
                assertEquals(1.0, value(m, "sds_keyed_decisions", "login", "refused"));
                assertEquals(2.0, value(m, "sds_keyed_keys", "login"));
                assertEquals((double) login.capacity(), value(m, "sds_keyed_keys_capacity", "login"));
                assertEquals(0.0, value(m, "sds_keyed_evictions", "login"));
                assertEquals(1.0, value(m, "sds_keyed_decisions", unnamed.metricsLabel(), "admitted"));
                assertEquals(1.0, value(m, "sds_keyed_decisions", unnamed.metricsLabel(), "refused"));
                assertEquals(Arrays.asList("limit", "outcome"), family(m, "sds_keyed_decisions").labelNames());
            }
            login.close();
            assertNull(value(a.metrics(T), "sds_keyed_decisions", "login", "admitted"), "a closed limit leaves");
            assertEquals(1.0, value(a.metrics(T), "sds_keyed_decisions", unnamed.metricsLabel(), "refused"));
        } finally {
            login.close();
        }
    }

    @Test
    void aSharedKeyTableIsLabelledByItsFileUnlessNamed() {
        String file = dir.resolve("logins.keys").toString();
        try (KeyedLimit first = KeyedLimit.shared(file, KeyRule.fixedWindow(5, 1000), 16);
                KeyedLimit named = KeyedLimit.shared(dir.resolve("other.keys").toString(),
                        KeyRule.fixedWindow(5, 1000), 16, Client.SHARED_MODE, "api");
                Client client = new Client(2)) {
            assertEquals("logins.keys", first.metricsLabel());
            assertEquals("api", named.metricsLabel());
            first.decide("x", 1, T);
            named.decide("y", 2, T);
            List<MetricFamily> m = client.metrics(T);
            assertEquals(1.0, value(m, "sds_keyed_decisions", "logins.keys", "admitted"));
            assertEquals(1.0, value(m, "sds_keyed_decisions", "api", "admitted"));
        }
        assertThrows(SdsException.class, () -> KeyedLimit.create(KeyRule.rate(1, 1000), 8, "bad\ud800"));
    }

    @Test
    void aSharedTableShowsTheHostsCountsAlikeInEveryClient() {
        String file = dir.resolve("points.sds").toString();
        try (Client a = Client.openShared(file, 16); Client b = Client.openShared(file, 16)) {
            a.setStrategy("p", Strategy.builder().visitThreshold(2).build());
            a.enter("p", T).close();
            b.enter("p", T).close();
            a.enter("p", T).close(); // the third: downgraded
            for (Client client : Arrays.asList(a, b)) {
                List<MetricFamily> m = client.metrics(T + 1);
                assertEquals(3.0, value(m, "sds_point_requests", "points.sds", "p"));
                assertEquals(1.0, value(m, "sds_point_downgrades", "points.sds", "p", Reason.VISIT.name()));
                assertEquals(16.0, value(m, "sds_table_points_capacity", "points.sds"));
            }
            // Same families, same series, same values.
            List<MetricFamily> fromA = withoutKeyed(a.metrics(T + 1));
            assertEquals(fromA, withoutKeyed(b.metrics(T + 1)));
            assertEquals(a.prometheusText(false, T + 1).replaceAll("(?m)^sds_keyed.*\n", ""),
                    b.prometheusText(false, T + 1).replaceAll("(?m)^sds_keyed.*\n", ""));
        }
    }

    /** The families of a table (keyed limits of other tests may come and go meanwhile). */
    private static List<MetricFamily> withoutKeyed(List<MetricFamily> families) {
        List<MetricFamily> out = new ArrayList<>();
        for (MetricFamily f : families) {
            if (!f.name().startsWith("sds_keyed")) {
                out.add(f);
            }
        }
        return out;
    }

    @Test
    void theTextIsWhatPromtoolAccepts() throws Exception {
        try (Client client = new Client(8);
                KeyedLimit quoted = KeyedLimit.create(KeyRule.rate(1, 1000), 8, "a \"quoted\\\" name\nhere")) {
            client.setStrategy("order", Strategy.builder().visitThreshold(1).build());
            client.enter("order", T).close();
            client.enter("order", T).close();
            client.enter("é \"point\"", T).close();
            quoted.decide("k", 1, T);
            String text = client.prometheusText(false, T + 1);
            assertTrue(text.contains("# TYPE sds_point_requests_total counter\n"), text);
            assertTrue(text.contains("sds_point_requests_total{table=\"private\",point=\"order\"} 2\n"), text);
            assertTrue(text.contains(
                    "sds_point_downgrades_total{table=\"private\",point=\"order\",reason=\"VISIT\"} 1\n"), text);
            assertTrue(text.contains("point=\"é \\\"point\\\"\""), text);
            assertTrue(text.contains("limit=\"a \\\"quoted\\\\\\\" name\\nhere\""), text);
            promtool(text);

            String open = client.prometheusText(true, T + 1);
            assertTrue(open.endsWith("# EOF\n"), open);
            assertTrue(open.contains("# TYPE sds_point_requests counter\n"), open);
            assertNotEquals(text, open);
            assertEquals("text/plain; version=0.0.4; charset=utf-8", Client.prometheusContentType(false));
            assertTrue(Client.prometheusContentType(true).startsWith("application/openmetrics-text"));
        }
    }

    @Test
    void theFamiliesAreTheTextsFamilies() {
        try (Client client = new Client(8)) {
            client.enter("p", T).close();
            String text = client.prometheusText(false, T);
            Set<String> typed = new HashSet<>();
            for (String line : text.split("\n")) {
                if (line.startsWith("# TYPE ")) {
                    typed.add(line);
                }
            }
            Set<String> fromFamilies = new HashSet<>();
            for (MetricFamily f : client.metrics(T)) {
                String type = f.type().name().toLowerCase(java.util.Locale.ROOT);
                String named = f.type() == MetricFamily.Type.COUNTER ? f.name() + "_total" : f.name();
                fromFamilies.add("# TYPE " + named + " " + type);
                assertTrue(text.contains("# HELP " + named + " " + f.help() + "\n"), f.name());
            }
            assertEquals(typed, fromFamilies);
        }
    }

    @Test
    void aClusterSyncShowsUpWhileRunningAndDownOnceClosed() throws Exception {
        try (RedisServer redis = RedisServer.start(); Client client = new Client(8)) {
            ClusterSync sync = client.connectCluster(ClusterConfig.builder().url(redis.url()).points("c").build());
            sync.syncNow();
            List<MetricFamily> m = client.metrics();
            assertEquals(1.0, value(m, "sds_cluster_up", "private"));
            assertEquals(1.0, value(m, "sds_cluster_connected", "private"));
            assertEquals(1.0, value(m, "sds_cluster_points", "private"));
            double syncs = value(m, "sds_cluster_syncs", "private");
            assertTrue(syncs >= 1, "syncs " + syncs);
            sync.close();
            m = client.metrics();
            assertEquals(0.0, value(m, "sds_cluster_up", "private"), "its last state stays, not running");
            assertTrue(value(m, "sds_cluster_syncs", "private") >= syncs);
            assertNull(family(m, "sds_agent_up"));
            promtool(client.prometheusText());
        }
    }

    /** An agent of a console where nothing listens: its pulls fail, it runs. */
    private static AdminConfig agentConfig() {
        return AdminConfig.builder().servers("http://127.0.0.1:9").appGroup("g").appName("metrics-test")
                .ip("10.1.2.3").hostname("test-host").timeoutMs(100).build();
    }

    @Test
    void aConsoleAgentShowsUpWhileRunningAndDownOnceClosed() throws Exception {
        try (Client client = new Client(8)) {
            AdminAgent agent = client.connectAdmin(agentConfig());
            List<MetricFamily> m = client.metrics();
            assertEquals(1.0, value(m, "sds_agent_up", "private"));
            assertEquals(MetricFamily.Type.COUNTER, family(m, "sds_agent_pull_failures").type());
            agent.close();
            m = client.metrics();
            assertEquals(0.0, value(m, "sds_agent_up", "private"));
            AdminAgent second = client.connectAdmin(agentConfig());
            assertEquals(1.0, value(client.metrics(), "sds_agent_up", "private"), "the one started last");
            second.close();
        }
    }

    @Test
    void aClosedClientHasNoMetrics() {
        Client client = new Client(2);
        client.close();
        SdsException e = assertThrows(SdsException.class, client::metrics);
        assertEquals(ErrorCode.CLOSED, e.code());
        assertThrows(SdsException.class, () -> client.prometheusText(true));
    }
}
