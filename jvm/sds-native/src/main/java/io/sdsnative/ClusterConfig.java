package io.sdsnative;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;

/**
 * How a {@link Client}'s cluster points sync with Redis: see
 * {@link Client#connectCluster(ClusterConfig)}. Immutable; made with
 * {@link #builder()}, whose setters are the cluster sync's settings (or
 * {@link Builder#set(String, Object)} for any of them). The cluster crate
 * checks the whole config when the sync starts; a setting not set takes the
 * crate's default. With a TLS file ({@code tlsCaFile}, {@code tlsCertFile},
 * {@code tlsKeyFile}) every URL must be {@code rediss://}, whose servers are
 * checked against the system's roots without {@code tlsCaFile}.
 */
public final class ClusterConfig extends ServiceConfig {
    private ClusterConfig(Builder builder) {
        super(Native.CLUSTER, builder);
    }

    /** A builder with no setting set. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link ClusterConfig}; each setter returns the builder. */
    public static final class Builder extends ServiceConfig.Builder<Builder, ClusterConfig> {
        private Builder() {
            super(ClusterConfig::new);
        }

        /**
         * Required: the one Redis server,
         * {@code redis://[user[:password]@]host[:port][/db]} (AUTH and ACL
         * users through the URL), {@code rediss://} for TLS. Replaces the
         * URLs set before.
         */
        public Builder url(String url) {
            return set("urls", url);
        }

        /** The URLs: one server, or with {@link #redisCluster} seed nodes. Replaces those set before. */
        public Builder urls(String... urls) {
            return urls(Arrays.asList(urls));
        }

        /** As {@link #urls(String...)}. */
        public Builder urls(Collection<String> urls) {
            return set("urls", copy(urls));
        }

        /** Talk to a Redis Cluster (slots, redirections) instead of one server. */
        public Builder redisCluster(boolean redisCluster) {
            return set("redisCluster", redisCluster);
        }

        /** The points whose thresholds hold cluster-wide (created if absent). Replaces those set before. */
        public Builder points(String... points) {
            return points(Arrays.asList(points));
        }

        /** As {@link #points(String...)}. */
        public Builder points(Collection<String> points) {
            return set("points", copy(points));
        }

        /** Milliseconds between two syncs (100 unless set; at least 1). */
        public Builder syncMs(long syncMs) {
            return set("syncMs", syncMs);
        }

        /** Timeout of one round trip in milliseconds (1000 unless set; at least 1). */
        public Builder timeoutMs(long timeoutMs) {
            return set("timeoutMs", timeoutMs);
        }

        /** Longest reconnect wait in milliseconds (5000 unless set). */
        public Builder maxBackoffMs(long maxBackoffMs) {
            return set("maxBackoffMs", maxBackoffMs);
        }

        /** The key prefix ({@code "sds"} unless set): services sharing a Redis use different ones. */
        public Builder keyPrefix(String keyPrefix) {
            return set("keyPrefix", keyPrefix);
        }

        /** A list of its own, in the collection's order, so a later change of the caller's is not seen. */
        private static Object copy(Collection<String> items) {
            return items == null ? null : new ArrayList<>(items);
        }
    }
}
