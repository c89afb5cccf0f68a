package io.sdsnative;

/**
 * A key table's counters ({@link KeyedLimit#stats()}); a shared table's are
 * the file's, every process's keys. Immutable; equal when every field is.
 */
public final class KeyStats {
    private final long capacity;
    private final long resident;
    private final long evictions;
    private final long lossyEvictions;

    /** Stats of these values (the library makes them; public for tests and stubs). */
    public KeyStats(long capacity, long resident, long evictions, long lossyEvictions) {
        this.capacity = capacity;
        this.resident = resident;
        this.evictions = evictions;
        this.lossyEvictions = lossyEvictions;
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

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KeyStats)) {
            return false;
        }
        KeyStats s = (KeyStats) o;
        return capacity == s.capacity && resident == s.resident && evictions == s.evictions
                && lossyEvictions == s.lossyEvictions;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(((capacity * 31 + resident) * 31 + evictions) * 31 + lossyEvictions);
    }

    @Override
    public String toString() {
        return "KeyStats[capacity=" + capacity + ", resident=" + resident + ", evictions=" + evictions
                + ", lossyEvictions=" + lossyEvictions + "]";
    }
}
