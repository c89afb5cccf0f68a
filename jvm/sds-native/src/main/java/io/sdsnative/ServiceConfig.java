package io.sdsnative;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@link AdminConfig} and {@link ClusterConfig} are: the settings their
 * builder collected, by key, handed as they are to the native service when it
 * starts. Nothing is checked in Java: the service's table of settings
 * ({@code sds-settings}) judges every key and value, with one message per
 * input for every language, and the service its values.
 */
public abstract class ServiceConfig {
    private final Map<String, Object> settings;

    ServiceConfig(Builder<?, ?> builder) {
        settings = Collections.unmodifiableMap(new LinkedHashMap<>(builder.settings));
    }

    /** The settings given, by key as given, in the order each key was first set; absent ones take the service's defaults. */
    public Map<String, Object> settings() {
        return settings;
    }

    String[] keys() {
        return settings.keySet().toArray(new String[0]);
    }

    Object[] values() {
        return settings.values().toArray();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + settings;
    }

    /**
     * A config's builder: every setter sets one setting, a later call to the
     * same key replacing the earlier value.
     *
     * @param <B> the builder's own type, which the setters return
     * @param <C> the config it builds
     */
    public abstract static class Builder<B extends Builder<B, C>, C extends ServiceConfig> {
        private final Map<String, Object> settings = new LinkedHashMap<>();

        Builder() {}

        /**
         * Sets any setting the service has, by its name in camelCase
         * ({@code "pullIntervalMs"}) or snake_case ({@code "pull_interval_ms"}),
         * or a {@code *Ms} setting in seconds under its name without {@code Ms}
         * ({@code "pullInterval"}). A value is null (the default), a
         * {@code Boolean}, an integer ({@code Long}, {@code Integer},
         * {@code Short}, {@code Byte}, {@code BigInteger}), a {@code Double} or
         * {@code Float}, text (a {@code CharSequence}), a {@code Path} (of the
         * default file system) or a {@code List} or array of these; the
         * service refuses, when it starts, a key it does not have and a value
         * its setting does not take ({@code INVALID_ARGUMENT}).
         *
         * @throws SdsException {@code NULL_ARGUMENT} for a null key
         */
        public B set(String key, Object value) {
            if (key == null) {
                throw new SdsException(ErrorCode.NULL_ARGUMENT, "setting key is null");
            }
            settings.put(key, value);
            @SuppressWarnings("unchecked")
            B self = (B) this;
            return self;
        }

        /** The config of the settings set so far. */
        public abstract C build();
    }
}
