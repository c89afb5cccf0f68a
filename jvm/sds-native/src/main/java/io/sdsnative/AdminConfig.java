package io.sdsnative;

import java.nio.file.Path;

/**
 * How a {@link Client} connects to the SDS console ({@code sds-admin}): see
 * {@link Client#connectAdmin(AdminConfig)}. Immutable; made with
 * {@link #builder()}. Nothing is checked here: the agent checks the whole
 * config when it starts.
 */
public final class AdminConfig {
    /** Milliseconds between strategy pulls unless set: SDS's 5000. */
    public static final long DEFAULT_PULL_INTERVAL_MS = CoreTables.AGENT_DEFAULTS[0];
    /** Connect-and-read timeout of one request in milliseconds unless set: SDS's 1000. */
    public static final long DEFAULT_TIMEOUT_MS = CoreTables.AGENT_DEFAULTS[1];

    private final String servers;
    private final Path tlsCaFile;
    private final Path tlsCertFile;
    private final Path tlsKeyFile;
    private final String appGroup;
    private final String appName;
    private final String ip;
    private final String hostname;
    private final long pullIntervalMs;
    private final long timeoutMs;

    private AdminConfig(Builder b) {
        servers = b.servers;
        tlsCaFile = b.tlsCaFile;
        tlsCertFile = b.tlsCertFile;
        tlsKeyFile = b.tlsKeyFile;
        appGroup = b.appGroup;
        appName = b.appName;
        ip = b.ip;
        hostname = b.hostname;
        pullIntervalMs = b.pullIntervalMs;
        timeoutMs = b.timeoutMs;
    }

    /** A builder with the defaults and no servers, app group or app name yet. */
    public static Builder builder() {
        return new Builder();
    }

    /** Comma-separated {@code http://} or {@code https://} base URLs of the console. */
    public String servers() {
        return servers;
    }

    /** The PEM file of the CA(s) the {@code https://} servers are checked against; null: the system's roots. */
    public Path tlsCaFile() {
        return tlsCaFile;
    }

    /** The PEM client certificate (chain) shown to {@code https://} servers that ask for one; null: none. */
    public Path tlsCertFile() {
        return tlsCertFile;
    }

    /** The PEM private key of {@link #tlsCertFile()}; null: none. */
    public Path tlsKeyFile() {
        return tlsKeyFile;
    }

    /** The app group, as created in the console. */
    public String appGroup() {
        return appGroup;
    }

    /** The app, as created in the console. */
    public String appName() {
        return appName;
    }

    /** This instance's IPv4 address; null: detected (the last non-loopback IPv4 address). */
    public String ip() {
        return ip;
    }

    /** This instance's host name; null: the system's. */
    public String hostname() {
        return hostname;
    }

    /** Milliseconds between strategy pulls. */
    public long pullIntervalMs() {
        return pullIntervalMs;
    }

    /** Connect-and-read timeout of one request, in milliseconds. */
    public long timeoutMs() {
        return timeoutMs;
    }

    /** Builds an {@link AdminConfig}; each setter returns the builder. */
    public static final class Builder {
        private String servers;
        private Path tlsCaFile;
        private Path tlsCertFile;
        private Path tlsKeyFile;
        private String appGroup;
        private String appName;
        private String ip;
        private String hostname;
        private long pullIntervalMs = DEFAULT_PULL_INTERVAL_MS;
        private long timeoutMs = DEFAULT_TIMEOUT_MS;

        private Builder() {}

        /**
         * Required: comma-separated base URLs, {@code "http://admin1:8887,https://admin2:8443"};
         * {@code https://} servers are checked against the system's roots, or {@link #tlsCaFile}.
         */
        public Builder servers(String servers) {
            this.servers = servers;
            return this;
        }

        /**
         * The PEM file of the CA(s) that signed the {@code https://} servers'
         * certificates, for a console with a CA of its own; it replaces the
         * system's roots. Read when the agent starts, which refuses it without
         * an {@code https://} server. Null: none.
         */
        public Builder tlsCaFile(Path tlsCaFile) {
            this.tlsCaFile = tlsCaFile;
            return this;
        }

        /**
         * The PEM client certificate (chain) for mutual TLS, with
         * {@link #tlsKeyFile}: shown to the {@code https://} servers that ask
         * for one. Read when the agent starts, which refuses one without its
         * key (or the reverse), a key that is not the certificate's, and the
         * pair without an {@code https://} server. Null: none.
         */
        public Builder tlsCertFile(Path tlsCertFile) {
            this.tlsCertFile = tlsCertFile;
            return this;
        }

        /** The PEM private key of {@link #tlsCertFile} (PKCS#8, SEC1 or PKCS#1). Null: none. */
        public Builder tlsKeyFile(Path tlsKeyFile) {
            this.tlsKeyFile = tlsKeyFile;
            return this;
        }

        /** Required: the app group, as created in the console. */
        public Builder appGroup(String appGroup) {
            this.appGroup = appGroup;
            return this;
        }

        /** Required: the app, as created in the console. */
        public Builder appName(String appName) {
            this.appName = appName;
            return this;
        }

        /** This instance's IPv4 address (at most 16 characters); null: detected. */
        public Builder ip(String ip) {
            this.ip = ip;
            return this;
        }

        /** This instance's host name; null: the system's. */
        public Builder hostname(String hostname) {
            this.hostname = hostname;
            return this;
        }

        /** Milliseconds between strategy pulls ({@link #DEFAULT_PULL_INTERVAL_MS} unless set). */
        public Builder pullIntervalMs(long pullIntervalMs) {
            this.pullIntervalMs = pullIntervalMs;
            return this;
        }

        /** Timeout of one request in milliseconds ({@link #DEFAULT_TIMEOUT_MS} unless set). */
        public Builder timeoutMs(long timeoutMs) {
            this.timeoutMs = timeoutMs;
            return this;
        }

        public AdminConfig build() {
            return new AdminConfig(this);
        }
    }
}
