package io.sdsnative;

/**
 * A snapshot of an {@link AdminAgent}'s state ({@link AdminAgent#status()}):
 * every field of the agent crate's {@code Status}, in its order (a test checks
 * them against the library). Times are UTC milliseconds, 0 for never.
 * Immutable; equal when every field is.
 */
public final class AdminStatus extends NativeStatus {
    // Set by name from the native status (NativeStatus.fill), in its order.
    private long lastPullMs;
    private boolean lastPullOk;
    private long lastUploadMs;
    private boolean lastUploadOk;
    private long version;
    private boolean isReporter;
    private String server;
    private String lastError;
    private long pullFailures;
    private long uploadFailures;
    private long uploads;
    private long strategiesWaiting;
    private long pointsLeftOut;

    AdminStatus() {}

    /** When the last pull finished (or failed); 0 for never. */
    public long lastPullMs() {
        return lastPullMs;
    }

    /**
     * Whether that pull succeeded: a response that changed nothing, or a set
     * applied (even with strategies refused one by one).
     */
    public boolean lastPullOk() {
        return lastPullOk;
    }

    /** When the last upload finished (or failed); 0 for never. */
    public long lastUploadMs() {
        return lastUploadMs;
    }

    /** Whether that upload succeeded. */
    public boolean lastUploadOk() {
        return lastUploadOk;
    }

    /**
     * The strategy version held: 0 until the first set is applied; -1 when
     * the console's version is null (the shipped console on H2), where every
     * pull brings the whole set and one that differs from the set in force is
     * applied.
     */
    public long version() {
        return version;
    }

    /** Whether this process is the host's reporter (the one that uploads); always on a private table. */
    public boolean isReporter() {
        return isReporter;
    }

    /** The server the next request goes to. */
    public String server() {
        return server;
    }

    /**
     * The text of the last failure or warning (a request that failed, a
     * strategy refused, a delay dropped, a name left out of uploads); empty if
     * none yet. A later success does not clear it.
     */
    public String lastError() {
        return lastError;
    }

    /** Pulls that failed since start. */
    public long pullFailures() {
        return pullFailures;
    }

    /** Uploads that failed since start. */
    public long uploadFailures() {
        return uploadFailures;
    }

    /** Uploads delivered since start. */
    public long uploads() {
        return uploads;
    }

    /**
     * Strategies of the set in force that wait for room: their points are not
     * in the table, and the console may create points only while the table
     * holds at most half its capacity. Tried again at each pull: one applies
     * as soon as the application enters its point or room comes back.
     */
    public long strategiesWaiting() {
        return strategiesWaiting;
    }

    /**
     * Points left out of every upload because the console cannot store their
     * names (over 164 characters); the log names each once.
     */
    public long pointsLeftOut() {
        return pointsLeftOut;
    }
}
