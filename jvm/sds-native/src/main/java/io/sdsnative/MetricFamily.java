package io.sdsnative;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * One metric family of {@link Client#metrics()}: its name (without the
 * {@code _total} a counter's samples get in the Prometheus text), type, help,
 * label names and samples. The families, their names, help and labels are
 * the native library's, the same in every language (see "Metrics" in the
 * README). Immutable; equal when every part is.
 */
public final class MetricFamily extends Value {
    /** A family's type, as Prometheus names it. */
    public enum Type {
        /** Only grows over the life of what it counts. */
        COUNTER,
        /** A value now. */
        GAUGE;

        static Type of(String kind) {
            return valueOf(kind.toUpperCase(Locale.ROOT));
        }
    }

    /** One sample: its labels' values, in the order of {@link #labelNames()}, and its value. */
    public static final class Sample extends Value {
        private final List<String> labelValues;
        private final double value;

        /** A sample of these values (the library makes them; public for tests and stubs). */
        public Sample(List<String> labelValues, double value) {
            this.labelValues = Collections.unmodifiableList(new ArrayList<>(labelValues));
            this.value = value;
        }

        /** The values of the family's labels, in the order of {@link MetricFamily#labelNames()}. */
        public List<String> labelValues() {
            return labelValues;
        }

        /** The value. */
        public double value() {
            return value;
        }

        @Override
        Object[] fields() {
            return new Object[] {"labelValues", labelValues, "value", value};
        }

        @Override
        public String toString() {
            return labelValues + "=" + value;
        }
    }

    private final String name;
    private final Type type;
    private final String help;
    private final List<String> labelNames;
    private final List<Sample> samples;

    /** A family of these parts (the library makes them; public for tests and stubs). */
    public MetricFamily(String name, Type type, String help, List<String> labelNames, List<Sample> samples) {
        this.name = name;
        this.type = type;
        this.help = help;
        this.labelNames = Collections.unmodifiableList(new ArrayList<>(labelNames));
        this.samples = Collections.unmodifiableList(new ArrayList<>(samples));
    }

    /** The family's name, e.g. {@code sds_point_requests} (a counter's samples add {@code _total}). */
    public String name() {
        return name;
    }

    /** Counter or gauge. */
    public Type type() {
        return type;
    }

    /** The help text. */
    public String help() {
        return help;
    }

    /** Its labels' names, in the order of every sample's values. */
    public List<String> labelNames() {
        return labelNames;
    }

    /** Its samples, at least one. */
    public List<Sample> samples() {
        return samples;
    }

    /**
     * The families of a native collection ({@code Native.metricsCollect}):
     * distinct texts, a layout of indexes into them (per family: name, type,
     * help, label count k, sample count n, k label names, n times k label
     * values) and the values, n per family.
     */
    static List<MetricFamily> decode(Object[] collected) {
        String[] texts = (String[]) collected[0];
        int[] layout = (int[]) collected[1];
        double[] values = (double[]) collected[2];
        List<MetricFamily> families = new ArrayList<>();
        int at = 0;
        int value = 0;
        while (at < layout.length) {
            String name = texts[layout[at++]];
            Type type = Type.of(texts[layout[at++]]);
            String help = texts[layout[at++]];
            int k = layout[at++];
            int n = layout[at++];
            String[] labelNames = new String[k];
            for (int i = 0; i < k; i++) {
                labelNames[i] = texts[layout[at++]];
            }
            List<Sample> samples = new ArrayList<>(n);
            for (int s = 0; s < n; s++) {
                String[] labelValues = new String[k];
                for (int i = 0; i < k; i++) {
                    labelValues[i] = texts[layout[at++]];
                }
                samples.add(new Sample(Arrays.asList(labelValues), values[value++]));
            }
            families.add(new MetricFamily(name, type, help, Arrays.asList(labelNames), samples));
        }
        return Collections.unmodifiableList(families);
    }

    @Override
    Object[] fields() {
        return new Object[] {"name", name, "type", type, "help", help, "labelNames", labelNames, "samples", samples};
    }

    /** {@code MetricFamily[name type [label names] [samples]]}: the help left out. */
    @Override
    public String toString() {
        return "MetricFamily[" + name + " " + type.name().toLowerCase(Locale.ROOT) + " " + labelNames + " "
                + samples + "]";
    }
}
