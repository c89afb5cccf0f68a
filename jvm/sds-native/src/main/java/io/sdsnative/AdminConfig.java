package io.sdsnative;

/**
 * How a {@link Client} connects to the SDS console ({@code sds-admin}): see
 * {@link Client#connectAdmin(AdminConfig)}. Immutable; made with
 * {@link #builder()}, whose setters are the agent's settings (or
 * {@link Builder#set(String, Object)} for any of them). The agent checks the
 * whole config when it starts; a setting not set takes the agent's default.
 */
public final class AdminConfig extends ServiceConfig {
    private AdminConfig(Builder builder) {
        super(Native.AGENT, builder);
    }

    /** A builder with no setting set. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds an {@link AdminConfig}; each setter returns the builder. */
    public static final class Builder extends ServiceConfig.Builder<Builder, AdminConfig> {
        private Builder() {
            super(AdminConfig::new);
        }

        /**
         * Required: comma-separated base URLs, {@code "http://admin1:8887,https://admin2:8443"};
         * {@code https://} servers are checked against the system's roots, or {@link #tlsCaFile}.
         */
        public Builder servers(String servers) {
            return set("servers", servers);
        }

        /** Required: the app group, as created in the console. */
        public Builder appGroup(String appGroup) {
            return set("appGroup", appGroup);
        }

        /** Required: the app, as created in the console. */
        public Builder appName(String appName) {
            return set("appName", appName);
        }

        /** This instance's IPv4 address (at most 16 characters); null: detected. */
        public Builder ip(String ip) {
            return set("ip", ip);
        }

        /** This instance's host name; null: the system's. */
        public Builder hostname(String hostname) {
            return set("hostname", hostname);
        }

        /** Milliseconds between strategy pulls (SDS's 5000 unless set; above 0). */
        public Builder pullIntervalMs(long pullIntervalMs) {
            return set("pullIntervalMs", pullIntervalMs);
        }

        /** Timeout of one request, connect to last byte, in milliseconds (SDS's 1000 unless set; above 0). */
        public Builder timeoutMs(long timeoutMs) {
            return set("timeoutMs", timeoutMs);
        }
    }
}
