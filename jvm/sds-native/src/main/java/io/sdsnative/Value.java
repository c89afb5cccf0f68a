package io.sdsnative;

import java.util.Arrays;

/**
 * What the immutable value classes ({@link KeyDecision}, {@link KeyStats},
 * {@link KeyCount}, {@link MetricFamily} and its samples) share: equality,
 * hash and text over one table of their fields, {@link #fields()}, so that
 * no class lists its fields again for each. Two values are equal when they
 * are of one class and their tables are.
 */
abstract class Value {
    /**
     * The fields as (name, value) pairs, in order:
     * {@code {"count", count, "previous", previous}}.
     */
    abstract Object[] fields();

    /** How {@link #toString()} shows the field {@code name}: as it is, unless a class says otherwise. */
    Object shown(String name, Object value) {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Arrays.equals(fields(), ((Value) o).fields());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(fields());
    }

    /** {@code Name[field=value, ...]}. */
    @Override
    public String toString() {
        Object[] f = fields();
        StringBuilder out = new StringBuilder(getClass().getSimpleName()).append('[');
        for (int i = 0; i < f.length; i += 2) {
            out.append(i == 0 ? "" : ", ").append(f[i]).append('=').append(shown((String) f[i], f[i + 1]));
        }
        return out.append(']').toString();
    }
}
