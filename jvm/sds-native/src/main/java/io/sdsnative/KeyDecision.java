package io.sdsnative;

/**
 * What {@link KeyedLimit#decide} answers for one key: whether the call may
 * run, and the numbers of the {@code RateLimit} headers. Immutable; equal when
 * every field is.
 */
public final class KeyDecision extends Value {
    /** A {@link #retryAfterMs()} that no wait makes true: the cost is above the key's quota. */
    public static final long NEVER = Long.MAX_VALUE;

    private final boolean admitted;
    private final long limit;
    private final long remaining;
    private final long resetMs;
    private final long retryAfterMs;
    private final long windowMs;

    /** A decision of these values (the library makes them; public for tests and stubs). */
    public KeyDecision(boolean admitted, long limit, long remaining, long resetMs, long retryAfterMs,
            long windowMs) {
        this.admitted = admitted;
        this.limit = limit;
        this.remaining = remaining;
        this.resetMs = resetMs;
        this.retryAfterMs = retryAfterMs;
        this.windowMs = windowMs;
    }

    /** Whether the call may run: its cost was taken only if so. */
    public boolean admitted() {
        return admitted;
    }

    /** The quota: a rate's burst, a window's limit (the rule's, or the key's exception). */
    public long limit() {
        return limit;
    }

    /** Units still available now, after this call. */
    public long remaining() {
        return remaining;
    }

    /** Milliseconds until the key is back to a fresh key's state if no call comes; 0 when fresh. */
    public long resetMs() {
        return resetMs;
    }

    /**
     * When refused: milliseconds until the same cost would be admitted if no
     * other call comes, {@link #NEVER} if the cost is above the quota; 0 when
     * admitted, and for a refused in-flight call (a release frees units, not
     * time).
     */
    public long retryAfterMs() {
        return retryAfterMs;
    }

    /** The policy's window in milliseconds: the window, or the time a rate's whole burst takes to refill. */
    public long windowMs() {
        return windowMs;
    }

    @Override
    Object[] fields() {
        return new Object[] {"admitted", admitted, "limit", limit, "remaining", remaining, "resetMs", resetMs,
                "retryAfterMs", retryAfterMs, "windowMs", windowMs};
    }

    @Override
    Object shown(String name, Object value) {
        return name.equals("retryAfterMs") && value.equals(NEVER) ? "NEVER" : value;
    }
}
