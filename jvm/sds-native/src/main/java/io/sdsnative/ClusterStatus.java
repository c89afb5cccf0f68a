package io.sdsnative;

import java.util.Optional;

/**
 * A snapshot of a {@link ClusterSync}'s syncer ({@link ClusterSync#status()}):
 * every field of the cluster crate's {@code Status}. Times are UTC
 * milliseconds, 0 for never. Immutable.
 */
public final class ClusterStatus {
    private final boolean connected;
    private final boolean syncing;
    private final long lastSyncMs;
    private final long lagMs;
    private final long rttUs;
    private final long syncs;
    private final long failures;
    private final long roundTrips;
    private final long commands;
    private final long points;
    private final long pointsFailing;
    private final String lastError;

    /** {@code values} in the order the native side writes them; {@code lastError} null for none. */
    ClusterStatus(long[] values, String lastError) {
        connected = values[0] != 0;
        syncing = values[1] != 0;
        lastSyncMs = values[2];
        lagMs = values[3];
        rttUs = values[4];
        syncs = values[5];
        failures = values[6];
        roundTrips = values[7];
        commands = values[8];
        points = values[9];
        pointsFailing = values[10];
        this.lastError = lastError;
    }

    /** Whether the last sync reached Redis (for at least one point: see {@link #pointsFailing()}). */
    public boolean isConnected() {
        return connected;
    }

    /**
     * Whether this process holds the host's syncer role: always on a private
     * table; on a shared table one process of the host does.
     */
    public boolean isSyncing() {
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

    /** The cluster points synced. */
    public long points() {
        return points;
    }

    /** Cluster points whose last sync failed (a Redis Cluster master down); 0 once all sync again. */
    public long pointsFailing() {
        return pointsFailing;
    }

    /** The last failure's message; empty once a sync succeeds again. */
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ClusterStatus)) {
            return false;
        }
        ClusterStatus s = (ClusterStatus) o;
        return connected == s.connected && syncing == s.syncing && lastSyncMs == s.lastSyncMs && lagMs == s.lagMs
                && rttUs == s.rttUs && syncs == s.syncs && failures == s.failures && roundTrips == s.roundTrips
                && commands == s.commands && points == s.points && pointsFailing == s.pointsFailing
                && java.util.Objects.equals(lastError, s.lastError);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(connected, syncing, lastSyncMs, lagMs, rttUs, syncs, failures, roundTrips,
                commands, points, pointsFailing, lastError);
    }

    @Override
    public String toString() {
        return "ClusterStatus{connected=" + connected + ", syncing=" + syncing + ", lastSyncMs=" + lastSyncMs
                + ", lagMs=" + lagMs + ", rttUs=" + rttUs + ", syncs=" + syncs + ", failures=" + failures
                + ", roundTrips=" + roundTrips + ", commands=" + commands + ", points=" + points
                + ", pointsFailing=" + pointsFailing + ", lastError=" + lastError + "}";
    }
}
