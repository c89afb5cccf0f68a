package io.sdsnative;

/**
 * A snapshot of an {@link AdminAgent}'s state ({@link AdminAgent#status()}):
 * an accessor per field of the agent crate's {@code Status} (a test checks
 * them against the library). Times are UTC milliseconds, 0 for never.
 * Immutable; equal when every field is.
 */
public final class AdminStatus extends NativeStatus {
    AdminStatus(String[] values) {
        super(CoreTables.AGENT_STATUS_NAMES, values);
    }

    /** When the last pull finished (or failed); 0 for never. */
    public long lastPullMs() {
        return number("lastPullMs");
    }

    /**
     * Whether that pull succeeded: a response that changed nothing, or a set
     * applied (even with strategies refused one by one).
     */
    public boolean lastPullOk() {
        return flag("lastPullOk");
    }

    /** When the last upload finished (or failed); 0 for never. */
    public long lastUploadMs() {
        return number("lastUploadMs");
    }

    /** Whether that upload succeeded. */
    public boolean lastUploadOk() {
        return flag("lastUploadOk");
    }

    /**
     * The strategy version held: 0 until the first set is applied; -1 when
     * the console's version is null (the shipped console on H2), where every
     * pull brings the whole set and one that differs from the set in force is
     * applied.
     */
    public long version() {
        return number("version");
    }

    /** Whether this process is the host's reporter (the one that uploads); always on a private table. */
    public boolean isReporter() {
        return flag("isReporter");
    }

    /** The server the next request goes to. */
    public String server() {
        return text("server");
    }

    /**
     * The text of the last failure or warning (a request that failed, a
     * strategy refused, a delay dropped, a name left out of uploads); empty if
     * none yet. A later success does not clear it.
     */
    public String lastError() {
        return text("lastError");
    }

    /** Pulls that failed since start. */
    public long pullFailures() {
        return number("pullFailures");
    }

    /** Uploads that failed since start. */
    public long uploadFailures() {
        return number("uploadFailures");
    }

    /** Uploads delivered since start. */
    public long uploads() {
        return number("uploads");
    }

    /**
     * Strategies of the set in force that wait for room: their points are not
     * in the table, and the console may create points only while the table
     * holds at most half its capacity. Tried again at each pull: one applies
     * as soon as the application enters its point or room comes back.
     */
    public long strategiesWaiting() {
        return number("strategiesWaiting");
    }

    /**
     * Points left out of every upload because the console cannot store their
     * names (over 164 characters); the log names each once.
     */
    public long pointsLeftOut() {
        return number("pointsLeftOut");
    }
}
