package io.sdsnative.web;

import io.sdsnative.KeyedLimit;

/**
 * The in-flight units a request holds: one holding per {@code inFlight}
 * policy that admitted it, all given back together when the request is
 * refused after all, throws, or completes.
 */
final class Holdings {
    private final KeyedLimit[] limits;
    /** Each a {@code String} or a {@code byte[]}, as the policy's key function gave it. */
    private final Object[] keys;
    private final long[] units;
    private int count;

    /** Room for {@code n} holdings: one per policy of the filter. */
    Holdings(int n) {
        limits = new KeyedLimit[n];
        keys = new Object[n];
        units = new long[n];
    }

    /** {@code units} of {@code key} (a {@code String} or a {@code byte[]} the caller will not change) held. */
    void add(KeyedLimit limit, Object key, long units) {
        limits[count] = limit;
        keys[count] = key;
        this.units[count++] = units;
    }

    /** Gives back every holding of {@code held}; null holds nothing. */
    static void release(Holdings held) {
        if (held == null) {
            return;
        }
        for (int i = 0; i < held.count; i++) {
            Object key = held.keys[i];
            if (key instanceof byte[]) {
                held.limits[i].release((byte[]) key, held.units[i]);
            } else {
                held.limits[i].release((String) key, held.units[i]);
            }
        }
    }
}
