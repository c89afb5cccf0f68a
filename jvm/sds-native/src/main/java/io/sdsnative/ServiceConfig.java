package io.sdsnative;

import java.math.BigInteger;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What {@link AdminConfig} and {@link ClusterConfig} are: the settings their
 * builder collected, by key, handed as they are to the native service when it
 * starts. Nothing is checked in Java: the service's table of settings
 * ({@code sds-settings}) judges every key and value, with one message per
 * input for every language, and the service its values.
 */
public abstract class ServiceConfig {
    /** The service it configures: {@link Native#AGENT} or {@link Native#CLUSTER}. */
    final int kind;
    private final Map<String, Object> settings;

    ServiceConfig(int kind, Builder<?, ?> builder) {
        this.kind = kind;
        settings = Collections.unmodifiableMap(new LinkedHashMap<>(builder.settings));
    }

    /** The settings given, by key as given, in the order each key was first set; absent ones take the service's defaults. */
    public Map<String, Object> settings() {
        return settings;
    }

    /**
     * The settings as the native start reads them: each key, then its value
     * in tokens, by its Java type: {@code n} null, {@code b} and the boolean,
     * {@code i} and an integer, {@code f} and a {@code double}, {@code t} and
     * text (a {@code CharSequence} or a {@code Path} of the default file
     * system), {@code l} and a count then that many values (a {@code List} or
     * an array), {@code o} and the type's name for anything else, a text with
     * a lone surrogate (it has no UTF-8 form) included.
     */
    String[] encoded() {
        return encoded(settings);
    }

    /** Each key of {@code entries}, then its value's tokens (see {@link #encoded()}); a {@link KeyRule}'s too. */
    static String[] encoded(Map<String, Object> entries) {
        List<String> tokens = new ArrayList<>();
        for (Map.Entry<String, Object> entry : entries.entrySet()) {
            tokens.add(entry.getKey());
            encode(entry.getValue(), tokens);
        }
        return tokens.toArray(new String[0]);
    }

    /** Appends {@code value}'s tokens (see {@link #encoded()}). */
    private static void encode(Object value, List<String> tokens) {
        if (value instanceof List || value instanceof Object[]) {
            Object[] items = value instanceof List ? ((List<?>) value).toArray() : (Object[]) value;
            tokens.add("l" + items.length);
            for (Object item : items) {
                encode(item, tokens);
            }
        } else if (value == null) {
            tokens.add("n");
        } else if (value instanceof Boolean) {
            tokens.add("b" + value);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger) {
            tokens.add("i" + value);
        } else if (value instanceof Double || value instanceof Float) {
            tokens.add("f" + ((Number) value).doubleValue());
        } else {
            String type = value.getClass().getTypeName();
            boolean text = value instanceof CharSequence
                    || value instanceof Path && ((Path) value).getFileSystem() == FileSystems.getDefault();
            String s = text ? value.toString() : null;
            tokens.add(!text ? "o" + type : Client.loneSurrogate(s) < 0 ? "t" + s : "o" + type + " with a lone surrogate");
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + settings;
    }

    /**
     * A config's builder: every setter sets one setting, a later call to the
     * same key replacing the earlier value. The TLS files, which both
     * services take, are set here.
     *
     * @param <B> the builder's own type, which the setters return
     * @param <C> the config it builds
     */
    public abstract static class Builder<B extends Builder<B, C>, C extends ServiceConfig> {
        private final Map<String, Object> settings = new LinkedHashMap<>();
        private final Function<B, C> build;

        Builder(Function<B, C> build) {
            this.build = build;
        }

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
            return self();
        }

        /**
         * The PEM file of the CA(s) that signed the TLS servers' certificates
         * ({@code https://} consoles, {@code rediss://} Redis), for servers
         * with a CA of their own; it replaces the system's roots. Read when
         * the service starts, which refuses it without a TLS server. Null:
         * none.
         */
        public B tlsCaFile(Path tlsCaFile) {
            return set("tlsCaFile", tlsCaFile);
        }

        /**
         * The PEM client certificate (chain) for mutual TLS, with
         * {@link #tlsKeyFile}: shown to the TLS servers that ask for one.
         * Read when the service starts, which refuses one without its key (or
         * the reverse), a key that is not the certificate's, and the pair
         * without a TLS server. Null: none.
         */
        public B tlsCertFile(Path tlsCertFile) {
            return set("tlsCertFile", tlsCertFile);
        }

        /** The PEM private key of {@link #tlsCertFile} (PKCS#8, SEC1 or PKCS#1). Null: none. */
        public B tlsKeyFile(Path tlsKeyFile) {
            return set("tlsKeyFile", tlsKeyFile);
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /** The config of the settings set so far. */
        public C build() {
            return build.apply(self());
        }
    }
}
