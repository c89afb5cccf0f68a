package io.sdsnative;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@link AdminStatus} and {@link ClusterStatus} are: a service's status
 * as the native side gives it, its fields' names (the Rust {@code Status}'s,
 * camelCased) and their values as text, in that order. Each accessor reads
 * its field by name, so no class lists the fields twice; {@code equals},
 * {@code hashCode} and {@code toString} go over all of them, in order.
 */
public abstract class NativeStatus {
    private final Map<String, String> fields = new LinkedHashMap<>();

    NativeStatus(String[] names, String[] values) {
        for (int i = 0; i < names.length; i++) {
            fields.put(names[i], values[i]);
        }
    }

    /** The text of the field {@code name}; null for none. */
    String text(String name) {
        if (!fields.containsKey(name)) {
            throw new IllegalStateException(getClass().getSimpleName() + ": the library has no field " + name);
        }
        return fields.get(name);
    }

    long number(String name) {
        return Long.parseLong(text(name));
    }

    boolean flag(String name) {
        return Boolean.parseBoolean(text(name));
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && fields.equals(((NativeStatus) o).fields);
    }

    @Override
    public int hashCode() {
        return fields.hashCode();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + fields;
    }
}
