package io.sdsnative;

/**
 * A window rule's counts for one key, as stores keep them
 * ({@link KeyedLimit#increment}, {@link KeyedLimit#decrement},
 * {@link KeyedLimit#count}). Immutable; equal when every field is.
 */
public final class KeyCount extends Value {
    private final long count;
    private final long previous;
    private final long resetMs;

    /** A count of these values (the library makes them; public for tests and stubs). */
    public KeyCount(long count, long previous, long resetMs) {
        this.count = count;
        this.previous = previous;
        this.resetMs = resetMs;
    }

    /** Units counted in the key's window (sliding: the current aligned window), after the call. */
    public long count() {
        return count;
    }

    /** Sliding window: the previous aligned window's count; fixed window: 0. */
    public long previous() {
        return previous;
    }

    /**
     * Milliseconds until the window ends: a fixed window's, 0 when the key
     * has none; a sliding window's current aligned one.
     */
    public long resetMs() {
        return resetMs;
    }

    @Override
    Object[] fields() {
        return new Object[] {"count", count, "previous", previous, "resetMs", resetMs};
    }
}
