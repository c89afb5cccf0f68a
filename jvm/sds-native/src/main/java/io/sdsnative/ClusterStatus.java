package io.sdsnative;

import java.util.Optional;

/**
 * A snapshot of a {@link ClusterSync}'s syncer ({@link ClusterSync#status()}):
 * every field of the cluster crate's {@code Status}, in its order (a test
 * checks them against the library). Times are UTC milliseconds, 0 for never.
 * Immutable; equal when every field is.
 */
public final class ClusterStatus extends NativeStatus {
    // Set by name from the native status (NativeStatus.fill), in its order.
    private boolean connected;
    private boolean syncing;
    private long lastSyncMs;
    private long lagMs;
    private long rttUs;
    private long syncs;
    private long failures;
    private long roundTrips;
    private long commands;
    private String lastError;
    private long points;
    private long pointsFailing;

    ClusterStatus() {}

    /** Whether the last sync reached Redis (for at least one point: see {@link #pointsFailing()}). */
    public boolean connected() {
        return connected;
    }

    /**
     * Whether this process holds the host's syncer role: always on a private
     * table; on a shared table one process of the host does.
     */
    public boolean syncing() {
        return syncing;
    }

    /** When the last sync that reached Redis ended; 0 for none yet. */
    public long lastSyncMs() {
        return lastSyncMs;
    }

    /** How old the remote counts are: now minus {@link #lastSyncMs()} (0 before the first sync). */
    public long lagMs() {
        return lagMs;
    }

    /** The last successful round trip, in microseconds. */
    public long rttUs() {
        return rttUs;
    }

    /** Successful syncs since start. */
    public long syncs() {
        return syncs;
    }

    /** Failed connection attempts and round trips since start. */
    public long failures() {
        return failures;
    }

    /** Round trips sent to Redis since start. */
    public long roundTrips() {
        return roundTrips;
    }

    /** Redis commands sent since start. */
    public long commands() {
        return commands;
    }

    /** The last failure's message; empty once a sync succeeds again. */
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
    }

    /** The cluster points synced. */
    public long points() {
        return points;
    }

    /** Cluster points whose last sync failed (a Redis Cluster master down); 0 once all sync again. */
    public long pointsFailing() {
        return pointsFailing;
    }
}
