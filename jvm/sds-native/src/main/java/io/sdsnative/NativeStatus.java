package io.sdsnative;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What {@link AdminStatus} and {@link ClusterStatus} are: a service's status
 * as the native side gives it, its fields' names (the Rust {@code Status}'s,
 * camelCased) and their values in that order. A status class declares one
 * private field per name, in that order, and an accessor of the same name;
 * the fields are set here by name, so no class lists them twice, and
 * {@code equals}, {@code hashCode} and {@code toString} go over them.
 */
public abstract class NativeStatus {
    NativeStatus() {}

    /**
     * Sets each field of {@code status} named in {@code names} to its value.
     * The fields are not final so that this can set them; nothing else does.
     */
    static <S extends NativeStatus> S fill(S status, String[] names, Object[] values) {
        for (int i = 0; i < names.length; i++) {
            try {
                Field field = status.getClass().getDeclaredField(names[i]);
                field.setAccessible(true);
                field.set(status, values[i]);
            } catch (ReflectiveOperationException | IllegalArgumentException e) {
                throw new IllegalStateException(status.getClass().getSimpleName() + " has no field " + names[i]
                        + " for the native value " + values[i], e);
            }
        }
        return status;
    }

    /** The instance fields, in declaration order (the native order). */
    private List<Field> fields() {
        List<Field> fields = new ArrayList<>();
        for (Field field : getClass().getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())) {
                field.setAccessible(true);
                fields.add(field);
            }
        }
        return fields;
    }

    private Object[] values() {
        List<Field> fields = fields();
        Object[] values = new Object[fields.size()];
        for (int i = 0; i < values.length; i++) {
            try {
                values[i] = fields.get(i).get(this);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && Arrays.equals(values(), ((NativeStatus) o).values());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values());
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(getClass().getSimpleName()).append('{');
        List<Field> fields = fields();
        Object[] values = values();
        for (int i = 0; i < values.length; i++) {
            out.append(i == 0 ? "" : ", ").append(fields.get(i).getName()).append('=').append(values[i]);
        }
        return out.append('}').toString();
    }
}
