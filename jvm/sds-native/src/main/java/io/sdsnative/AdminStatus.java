package io.sdsnative;

/**
 * A snapshot of an {@link AdminAgent}'s state ({@link AdminAgent#status()}).
 * Times are UTC milliseconds, 0 for never. Immutable.
 */
public final class AdminStatus {
    private final long lastPullMs;
    private final long lastUploadMs;
    private final long version;
    private final long pullFailures;
    private final long uploadFailures;
    private final long uploads;
    private final boolean lastPullOk;
    private final boolean lastUploadOk;
    private final boolean reporter;
    private final long strategiesWaiting;
    private final long pointsLeftOut;
    private final String server;
    private final String lastError;

    /** {@code values} in the order the native side writes them; {@code texts}: {server, lastError}. */
    AdminStatus(long[] values, String[] texts) {
        lastPullMs = values[0];
        lastUploadMs = values[1];
        version = values[2];
        pullFailures = values[3];
        uploadFailures = values[4];
        uploads = values[5];
        lastPullOk = values[6] != 0;
        lastUploadOk = values[7] != 0;
        reporter = values[8] != 0;
        strategiesWaiting = values[9];
        pointsLeftOut = values[10];
        server = texts[0];
        lastError = texts[1];
    }

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
        return reporter;
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

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AdminStatus)) {
            return false;
        }
        AdminStatus s = (AdminStatus) o;
        return lastPullMs == s.lastPullMs && lastUploadMs == s.lastUploadMs && version == s.version
                && pullFailures == s.pullFailures && uploadFailures == s.uploadFailures && uploads == s.uploads
                && lastPullOk == s.lastPullOk && lastUploadOk == s.lastUploadOk && reporter == s.reporter
                && strategiesWaiting == s.strategiesWaiting && pointsLeftOut == s.pointsLeftOut
                && server.equals(s.server) && lastError.equals(s.lastError);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(lastPullMs, lastUploadMs, version, pullFailures, uploadFailures, uploads,
                lastPullOk, lastUploadOk, reporter, strategiesWaiting, pointsLeftOut, server, lastError);
    }

    @Override
    public String toString() {
        return "AdminStatus{lastPullMs=" + lastPullMs + ", lastPullOk=" + lastPullOk
                + ", lastUploadMs=" + lastUploadMs + ", lastUploadOk=" + lastUploadOk
                + ", version=" + version + ", reporter=" + reporter + ", server=" + server
                + ", lastError=" + lastError + ", pullFailures=" + pullFailures
                + ", uploadFailures=" + uploadFailures + ", uploads=" + uploads
                + ", strategiesWaiting=" + strategiesWaiting + ", pointsLeftOut=" + pointsLeftOut + "}";
    }
}
