package io.sdsnative.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sdsnative.Client;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.Promtool;
import io.sdsnative.Strategy;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@link SdsMeterBinder} in Micrometer's Prometheus registry, next to the JVM's meters. */
class SdsMeterBinderTest {
    /** A sample line: its name, labels and value. */
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /**
     * The {@code sds_} series of a Prometheus text, by name and labels sorted
     * by name (Micrometer sorts them, we keep the family's order): value.
     */
    static Map<String, Double> sdsSeries(String text) {
        Map<String, Double> out = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (!line.startsWith("sds_")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), line);
            Map<String, String> labels = new TreeMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            out.put(m.group(1) + labels, Double.valueOf(m.group(4)));
        }
        return out;
    }

    /** The {@code # HELP} and {@code # TYPE} lines of the {@code sds_} families, sorted. */
    static Map<String, String> sdsMeta(String text) {
        Map<String, String> out = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# HELP sds_") || line.startsWith("# TYPE sds_")) {
                out.put(line.substring(0, line.indexOf(' ', 7)), line);
            }
        }
        return out;
    }

    static String promtool(String text) throws Exception {
        return Promtool.check(text);
    }

    private static PrometheusMeterRegistry registryWithJvmMeters() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);

        return registry;
    }

    @Test
    void theRegistryRendersOurNamesLabelsAndValuesNextToTheJvmsCleanly() throws Exception {
        try (Client client = new Client(8);
                KeyedLimit limit = KeyedLimit.create(KeyRule.rate(1, 60_000), 8, "binder-test");
                SdsMeterBinder binder = new SdsMeterBinder(client)) {
            client.setStrategy("order", Strategy.builder().visitThreshold(1).build());
            client.enter("order").close();
            client.enter("order").close();
            limit.decide("k");
            limit.decide("k");
            PrometheusMeterRegistry registry = registryWithJvmMeters();
            binder.bindTo(registry);

            String scraped = registry.scrape();
            String ours = client.prometheusText();
            assertTrue(scraped.contains("jvm_memory_used_bytes"), "the JVM's meters are there");
            Map<String, Double> expected = sdsSeries(ours);
            assertTrue(expected.containsKey("sds_point_downgrades_total{point=order, reason=VISIT, table=private}"),
                    expected.toString());
            assertEquals(1.0, expected.get("sds_keyed_decisions_total{limit=binder-test, outcome=refused}"));
            // in_flight_max reads the last whole 10 s cycle, which may turn between the two reads.
            expected.keySet().removeIf(k -> k.startsWith("sds_point_in_flight_max"));
            Map<String, Double> got = sdsSeries(scraped);
            got.keySet().removeIf(k -> k.startsWith("sds_point_in_flight_max"));
            assertEquals(expected, got);
            assertEquals(sdsMeta(ours), sdsMeta(scraped));
            promtool(scraped);
        }
    }

    @Test
    void aSeriesRegisteredByOneCollectionReadsFreshAtItsFirstRead() throws Exception {
        // A collection that registers a series (here refresh(); in a scrape,
        // one the registry does not iterate to its end) must not leave it
        // reading that collection's value at the next scrape's first read.
        try (Client client = new Client(8); SdsMeterBinder binder = new SdsMeterBinder(client)) {
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            binder.bindTo(registry);
            KeyedLimit limit = KeyedLimit.create(KeyRule.rate(5, 1000), 8, "fresh-limit");
            limit.decide("k");
            binder.refresh();
            limit.decide("k");
            FunctionCounter admitted = registry.find("sds.keyed.decisions")
                    .tags("limit", "fresh-limit", "outcome", "admitted").functionCounter();
            assertEquals(2.0, admitted.count());
            limit.close();
        }
    }

    @Test
    void eachScrapeCollectsAgainAndShowsSeriesThatAppearedAfterBinding() throws Exception {
        try (Client client = new Client(8); SdsMeterBinder binder = new SdsMeterBinder(client)) {
            client.enter("early").close();
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            binder.bindTo(registry);
            String early = "sds_point_requests_total{point=early, table=private}";
            String late = "sds_point_requests_total{point=late, table=private}";
            client.enter("early").close();
            assertEquals(2.0, sdsSeries(registry.scrape()).get(early), "the first scrape collects");
            client.enter("early").close();
            assertEquals(3.0, sdsSeries(registry.scrape()).get(early), "and every one after");

            client.enter("late").close();
            KeyedLimit limit = KeyedLimit.create(KeyRule.rate(5, 1000), 8, "late-limit");
            String limitSeries = "sds_keyed_decisions_total{limit=late-limit, outcome=admitted}";
            try {
                limit.decide("k");
                registry.scrape(); // collects: the new series are registered
                client.enter("late").close();
                limit.decide("k");
                Map<String, Double> scraped = sdsSeries(registry.scrape());
                assertEquals(2.0, scraped.get(late));
                assertEquals(2.0, scraped.get(limitSeries));
                assertEquals(3.0, scraped.get(early));
                assertEquals(2.0, scraped.get("sds_table_points{table=private}"));
            } finally {
                limit.close();
            }
            registry.scrape(); // collects: the closed limit's series are removed
            assertFalse(sdsSeries(registry.scrape()).containsKey(limitSeries));
            assertTrue(registry.find("sds.keyed.decisions").tag("limit", "late-limit").meters().isEmpty());
        }
    }

    @Test
    void refreshCollectsAtOnceAndAClosedClientsMetersLeave() {
        Client client = new Client(4);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        SdsMeterBinder binder = new SdsMeterBinder(client);
        binder.bindTo(registry);
        client.enter("p").close();
        binder.refresh();
        assertEquals(1.0, registry.get("sds.point.requests").tags("point", "p").functionCounter().count());
        assertEquals(1.0, registry.get("sds.table.points").gauge().value());
        client.close();
        registry.scrape(); // its first read finds the client closed
        assertTrue(registry.find("sds.point.requests").meters().isEmpty());
        assertFalse(registry.scrape().contains("sds_"));
    }
}
