package io.sdsnative;

/**
 * A key table's counters ({@link KeyedLimit#stats()}), the core's table of
 * them ({@code capacity}, {@code resident}, {@code evictions},
 * {@code lossyEvictions}, {@code admitted}, {@code refused}); a shared
 * table's are the file's, every process's keys and decisions. Immutable;
 * equal when every field is.
 */
public final class KeyStats extends Value {
    private final long capacity;
    private final long resident;
    private final long evictions;
    private final long lossyEvictions;
    private final long admitted;
    private final long refused;

    /** Stats of these values, in the core's order (the library makes them; public for tests and stubs). */
    public KeyStats(long capacity, long resident, long evictions, long lossyEvictions, long admitted,
            long refused) {
        this.capacity = capacity;
        this.resident = resident;
        this.evictions = evictions;
        this.lossyEvictions = lossyEvictions;
        this.admitted = admitted;
        this.refused = refused;
    }

    /** How many keys fit (the capacity asked for, rounded up to buckets of 4 keys). */
    public long capacity() {
        return capacity;
    }

    /** Keys held now. */
    public long resident() {
        return resident;
    }

    /** Keys whose cell was given to another key. */
    public long evictions() {
        return evictions;
    }

    /** Of those, keys whose state was not a fresh key's: the only way the table forgets a limit. */
    public long lossyEvictions() {
        return lossyEvictions;
    }

    /**
     * Calls of {@code decide} admitted since the table was opened (a shared
     * table's: by every process, since the file was first opened).
     */
    public long admitted() {
        return admitted;
    }

    /** Calls of {@code decide} refused since then (one that throws, a full table say, is neither). */
    public long refused() {
        return refused;
    }

    @Override
    Object[] fields() {
        return new Object[] {"capacity", capacity, "resident", resident, "evictions", evictions,
                "lossyEvictions", lossyEvictions, "admitted", admitted, "refused", refused};
    }
}
