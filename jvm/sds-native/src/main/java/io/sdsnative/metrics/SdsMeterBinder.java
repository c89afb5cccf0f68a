package io.sdsnative.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sdsnative.Client;
import io.sdsnative.ErrorCode;
import io.sdsnative.MetricFamily;
import io.sdsnative.SdsException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registers a {@link Client}'s metrics ({@link Client#metrics()}) with
 * Micrometer: a {@link FunctionCounter} per counter series and a
 * {@link Gauge} per gauge series, named as the family with {@code _} made
 * {@code .} ({@code sds_point_requests} is {@code sds.point.requests}, which
 * Micrometer's Prometheus registry renders as {@code sds_point_requests_total}
 * again), tagged with the series' labels, described by the family's help.
 *
 * <pre>{@code
 * new SdsMeterBinder(client).bindTo(registry);
 * }</pre>
 *
 * <p><b>Fresh at every scrape.</b> The binder collects once per scrape, not
 * once per meter: the first read of one of its meters that was already read
 * since the last collection (so: the first read of the next scrape or
 * publication) collects again, and that read and the rest of the scrape
 * give the new values. Each collection also registers the series that
 * appeared since (a point created, a keyed limit opened, a service started
 * after {@link #bindTo}) and removes the ones gone (a keyed limit closed):
 * they show from that scrape or the next, as the registry iterates.
 * {@link #refresh()} collects at once. Bound, the binder is held (with its
 * client) until {@link #close()}, or until a collection finds its client
 * closed, which removes its meters.
 *
 * <p>Bind one client's binder per registry: keyed limits are the process's,
 * so two clients' binders would register the same series. Micrometer is an
 * optional dependency of sds-native: this class needs
 * {@code io.micrometer:micrometer-core} on the class path, nothing else does.
 */
public final class SdsMeterBinder implements MeterBinder, AutoCloseable {
    /** The binders bound: counters hold their state weakly, so something must hold it. */
    private static final Set<SdsMeterBinder> BOUND =
            Collections.newSetFromMap(new ConcurrentHashMap<SdsMeterBinder, Boolean>());

    private final Client client;
    /** Each series' value, by family name and label values; guarded by this. */
    private final Map<List<String>, Series> series = new HashMap<>();
    /** The registries bound and their meters; guarded by this. */
    private final List<Binding> bindings = new ArrayList<>();
    /** {@link #collect}'s trigger for a refresh of every registry. */
    private static final Binding EVERY = new Binding(null);

    /** A binder of {@code client}'s metrics. */
    public SdsMeterBinder(Client client) {
        if (client == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "client is null");
        }
        this.client = client;
    }

    /** One series: its family, label values and last value collected. */
    private static final class Series {
        final MetricFamily family;
        final List<String> labelValues;
        volatile double value;

        Series(MetricFamily family, List<String> labelValues) {
            this.family = family;
            this.labelValues = labelValues;
        }
    }

    /** A registry and this binder's meters in it. */
    private static final class Binding {
        final MeterRegistry registry;
        final Map<List<String>, Reader> readers = new HashMap<>();

        Binding(MeterRegistry registry) {
            this.registry = registry;
        }
    }

    /** The state of one meter: reads its series, collecting first when a new scrape begins. */
    private final class Reader {
        final Series series;
        final Binding binding;
        Meter meter;
        /** Read since the last collection: a second read starts a new scrape. */
        volatile boolean read = true;

        Reader(Series series, Binding binding) {
            this.series = series;
            this.binding = binding;
        }

        double value() {
            if (read) {
                try {
                    collect(binding);
                } catch (RuntimeException e) {
                    // The registry logs nothing of it; the last values stay.
                }
            }
            read = true;
            return series.value;
        }
    }

    /**
     * Registers the client's series with {@code registry} (a second call
     * with the same registry does nothing).
     *
     * @throws SdsException {@code CLOSED} for a closed client
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        for (Binding b : bindings) {
            if (b.registry == registry) {
                return;
            }
        }
        List<MetricFamily> families = client.metrics();
        Binding binding = new Binding(registry);
        bindings.add(binding);
        BOUND.add(this);
        update(families, null);
    }

    /**
     * Collects now: every bound registry's meters read the new values, the
     * series that appeared are registered and those gone removed.
     *
     * @throws SdsException {@code CLOSED} for a closed client (its meters are removed first)
     */
    public void refresh() {
        collect(EVERY);
    }

    /** Collects, as {@code trigger}'s next scrape ({@link #EVERY}: every registry's). */
    private synchronized void collect(Binding trigger) {
        if (bindings.isEmpty()) {
            return;
        }
        List<MetricFamily> families;
        try {
            families = client.metrics();
        } catch (SdsException e) {
            if (e.code() == ErrorCode.CLOSED) {
                close();
            }
            throw e;
        }
        update(families, trigger);
    }

    /**
     * Sets every series' value, removes those gone, registers the new ones
     * (their first read collects); the reads of {@code trigger}
     * ({@link #EVERY}: all; null: none) start over.
     */
    private void update(List<MetricFamily> families, Binding trigger) {
        Set<List<String>> seen = new HashSet<>();
        for (MetricFamily family : families) {
            for (MetricFamily.Sample sample : family.samples()) {
                List<String> key = new ArrayList<>(sample.labelValues().size() + 1);
                key.add(family.name());
                key.addAll(sample.labelValues());
                Series s = series.get(key);
                if (s == null) {
                    s = new Series(family, sample.labelValues());
                    series.put(key, s);
                }
                s.value = sample.value();
                seen.add(key);
            }
        }
        series.keySet().retainAll(seen);
        for (Binding b : bindings) {
            for (Iterator<Map.Entry<List<String>, Reader>> it = b.readers.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<List<String>, Reader> e = it.next();
                if (!seen.contains(e.getKey())) {
                    b.registry.remove(e.getValue().meter);
                    it.remove();
                }
            }
            if (trigger == EVERY || trigger == b) {
                for (Reader r : b.readers.values()) {
                    r.read = false;
                }
            }
            // After the reset: a new meter's first read collects. The scrape
            // under way may not reach it (the registry iterates what it held
            // when it began), and then its first read is the next scrape's,
            // which must not find this collection's values.
            for (Map.Entry<List<String>, Series> e : series.entrySet()) {
                if (!b.readers.containsKey(e.getKey())) {
                    b.readers.put(e.getKey(), register(b, e.getValue()));
                }
            }
        }
    }

    private Reader register(Binding binding, Series s) {
        Reader reader = new Reader(s, binding);
        MetricFamily family = s.family;
        String name = family.name().replace('_', '.');
        List<Tag> tags = new ArrayList<>(s.labelValues.size());
        for (int i = 0; i < s.labelValues.size(); i++) {
            tags.add(Tag.of(family.labelNames().get(i), s.labelValues.get(i)));
        }
        if (family.type() == MetricFamily.Type.COUNTER) {
            reader.meter = FunctionCounter.builder(name, reader, Reader::value)
                    .description(family.help()).tags(tags).register(binding.registry);
        } else {
            reader.meter = Gauge.builder(name, reader, Reader::value)
                    .description(family.help()).tags(tags).strongReference(true).register(binding.registry);
        }
        return reader;
    }

    /** Removes this binder's meters from every registry it was bound to, and lets it go. */
    @Override
    public synchronized void close() {
        for (Binding b : bindings) {
            for (Reader r : b.readers.values()) {
                b.registry.remove(r.meter);
            }
        }
        bindings.clear();
        series.clear();
        BOUND.remove(this);
    }
}
