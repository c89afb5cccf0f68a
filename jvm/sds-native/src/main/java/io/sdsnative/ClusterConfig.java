package io.sdsnative;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * How a {@link Client}'s cluster points sync with Redis: see
 * {@link Client#connectCluster(ClusterConfig)}. Immutable; made with
 * {@link #builder()}. Nothing is checked here: the cluster crate checks the
 * whole config when the sync starts.
 */
public final class ClusterConfig {
    /** Milliseconds between two syncs unless set: 100. */
    public static final long DEFAULT_SYNC_MS = Long.parseLong(CoreTables.CLUSTER_DEFAULTS[0]);
    /** Connect, read and write timeout of one round trip in milliseconds unless set: 1000. */
    public static final long DEFAULT_TIMEOUT_MS = Long.parseLong(CoreTables.CLUSTER_DEFAULTS[1]);
    /** Longest wait between two connection attempts in milliseconds unless set: 5000. */
    public static final long DEFAULT_MAX_BACKOFF_MS = Long.parseLong(CoreTables.CLUSTER_DEFAULTS[2]);
    /** The first part of every key and hash tag unless set: {@code "sds"}. */
    public static final String DEFAULT_KEY_PREFIX = CoreTables.CLUSTER_DEFAULTS[3];

    private final List<String> urls;
    private final boolean redisCluster;
    private final List<String> points;
    private final long syncMs;
    private final long timeoutMs;
    private final long maxBackoffMs;
    private final String keyPrefix;
    private final Path tlsCaFile;
    private final Path tlsCertFile;
    private final Path tlsKeyFile;

    private ClusterConfig(Builder b) {
        urls = Collections.unmodifiableList(new ArrayList<>(b.urls));
        redisCluster = b.redisCluster;
        points = Collections.unmodifiableList(new ArrayList<>(b.points));
        syncMs = b.syncMs;
        timeoutMs = b.timeoutMs;
        maxBackoffMs = b.maxBackoffMs;
        keyPrefix = b.keyPrefix;
        tlsCaFile = b.tlsCaFile;
        tlsCertFile = b.tlsCertFile;
        tlsKeyFile = b.tlsKeyFile;
    }

    /** A builder with the defaults and no URL or point yet. */
    public static Builder builder() {
        return new Builder();
    }

    /** The Redis URLs: one server, or seed nodes of a Redis Cluster. */
    public List<String> urls() {
        return urls;
    }

    /** Whether the URLs are seed nodes of a Redis Cluster. */
    public boolean redisCluster() {
        return redisCluster;
    }

    /** The names of the cluster points. */
    public List<String> points() {
        return points;
    }

    /** Milliseconds between two syncs (one round trip each; one per master on a Redis Cluster). */
    public long syncMs() {
        return syncMs;
    }

    /** Connect, read and write timeout of one round trip, in milliseconds. */
    public long timeoutMs() {
        return timeoutMs;
    }

    /** Longest wait between two connection attempts, in milliseconds. */
    public long maxBackoffMs() {
        return maxBackoffMs;
    }

    /** The first part of every key and of each point's hash tag. */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** The PEM file of the CA(s) the servers' certificates are checked against; null: the system's roots. */
    public Path tlsCaFile() {
        return tlsCaFile;
    }

    /** The PEM client certificate (chain) for mutual TLS; null: none. */
    public Path tlsCertFile() {
        return tlsCertFile;
    }

    /** The PEM private key of {@link #tlsCertFile()}; null: none. */
    public Path tlsKeyFile() {
        return tlsKeyFile;
    }

    @Override
    public String toString() {
        return "ClusterConfig{urls=" + urls + ", redisCluster=" + redisCluster + ", points=" + points
                + ", syncMs=" + syncMs + ", timeoutMs=" + timeoutMs + ", maxBackoffMs=" + maxBackoffMs
                + ", keyPrefix=" + keyPrefix + ", tlsCaFile=" + tlsCaFile + ", tlsCertFile=" + tlsCertFile
                + ", tlsKeyFile=" + tlsKeyFile + "}";
    }

    /** Builds a {@link ClusterConfig}; each setter returns the builder. */
    public static final class Builder {
        private final List<String> urls = new ArrayList<>();
        private boolean redisCluster;
        private final List<String> points = new ArrayList<>();
        private long syncMs = DEFAULT_SYNC_MS;
        private long timeoutMs = DEFAULT_TIMEOUT_MS;
        private long maxBackoffMs = DEFAULT_MAX_BACKOFF_MS;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private Path tlsCaFile;
        private Path tlsCertFile;
        private Path tlsKeyFile;

        private Builder() {}

        /**
         * Required: the one Redis server,
         * {@code redis://[user[:password]@]host[:port][/db]} (AUTH and ACL
         * users through the URL), {@code rediss://} for TLS. Replaces the
         * URLs set before.
         */
        public Builder url(String url) {
            return urls(Collections.singletonList(url));
        }

        /** The URLs: one server, or with {@link #redisCluster} seed nodes. Replaces those set before. */
        public Builder urls(String... urls) {
            return urls(Arrays.asList(urls));
        }

        /** As {@link #urls(String...)}. */
        public Builder urls(Collection<String> urls) {
            this.urls.clear();
            this.urls.addAll(urls);
            return this;
        }

        /** Talk to a Redis Cluster (slots, redirections) instead of one server. */
        public Builder redisCluster(boolean redisCluster) {
            this.redisCluster = redisCluster;
            return this;
        }

        /** The points whose thresholds hold cluster-wide (created if absent). Replaces those set before. */
        public Builder points(String... points) {
            return points(Arrays.asList(points));
        }

        /** As {@link #points(String...)}. */
        public Builder points(Collection<String> points) {
            this.points.clear();
            this.points.addAll(points);
            return this;
        }

        /** Milliseconds between two syncs ({@link #DEFAULT_SYNC_MS} unless set; at least 1). */
        public Builder syncMs(long syncMs) {
            this.syncMs = syncMs;
            return this;
        }

        /** Timeout of one round trip in milliseconds ({@link #DEFAULT_TIMEOUT_MS} unless set; at least 1). */
        public Builder timeoutMs(long timeoutMs) {
            this.timeoutMs = timeoutMs;
            return this;
        }

        /** Longest reconnect wait in milliseconds ({@link #DEFAULT_MAX_BACKOFF_MS} unless set). */
        public Builder maxBackoffMs(long maxBackoffMs) {
            this.maxBackoffMs = maxBackoffMs;
            return this;
        }

        /** The key prefix ({@link #DEFAULT_KEY_PREFIX} unless set): services sharing a Redis use different ones. */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * The PEM file of the CA(s) that signed the servers' certificates,
         * for a Redis with a CA of its own; it replaces the system's roots,
         * which {@code rediss://} URLs trust without it. With any TLS file
         * every URL must be {@code rediss://}. Null: none.
         */
        public Builder tlsCaFile(Path tlsCaFile) {
            this.tlsCaFile = tlsCaFile;
            return this;
        }

        /** The PEM client certificate (chain) for mutual TLS, with {@link #tlsKeyFile}. Null: none. */
        public Builder tlsCertFile(Path tlsCertFile) {
            this.tlsCertFile = tlsCertFile;
            return this;
        }

        /** The PEM private key of {@link #tlsCertFile}. Null: none. */
        public Builder tlsKeyFile(Path tlsKeyFile) {
            this.tlsKeyFile = tlsKeyFile;
            return this;
        }

        public ClusterConfig build() {
            return new ClusterConfig(this);
        }
    }
}
