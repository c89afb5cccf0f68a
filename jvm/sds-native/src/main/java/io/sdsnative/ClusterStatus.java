package io.sdsnative;

import java.util.Optional;

/**
 * A snapshot of a {@link ClusterSync}'s syncer ({@link ClusterSync#status()}):
 * an accessor per field of the cluster crate's {@code Status} (a test checks
 * them against the library). Times are UTC milliseconds, 0 for never.
 * Immutable; equal when every field is.
 */
public final class ClusterStatus extends NativeStatus {
    ClusterStatus(String[] values) {
        super(CoreTables.CLUSTER_STATUS_NAMES, values);
    }

    /** Whether the last sync reached Redis (for at least one point: see {@link #pointsFailing()}). */
    public boolean connected() {
        return flag("connected");
    }

    /**
     * Whether this process holds the host's syncer role: always on a private
     * table; on a shared table one process of the host does.
     */
    public boolean syncing() {
        return flag("syncing");
    }

    /** When the last sync that reached Redis ended; 0 for none yet. */
    public long lastSyncMs() {
        return number("lastSyncMs");
    }

    /** How old the remote counts are: now minus {@link #lastSyncMs()} (0 before the first sync). */
    public long lagMs() {
        return number("lagMs");
    }

    /** The last successful round trip, in microseconds. */
    public long rttUs() {
        return number("rttUs");
    }

    /** Successful syncs since start. */
    public long syncs() {
        return number("syncs");
    }

    /** Failed connection attempts and round trips since start. */
    public long failures() {
        return number("failures");
    }

    /** Round trips sent to Redis since start. */
    public long roundTrips() {
        return number("roundTrips");
    }

    /** Redis commands sent since start. */
    public long commands() {
        return number("commands");
    }

    /** The last failure's message; empty once a sync succeeds again. */
    public Optional<String> lastError() {
        return Optional.ofNullable(text("lastError"));
    }

    /** The cluster points synced. */
    public long points() {
        return number("points");
    }

    /** Cluster points whose last sync failed (a Redis Cluster master down); 0 once all sync again. */
    public long pointsFailing() {
        return number("pointsFailing");
    }
}
