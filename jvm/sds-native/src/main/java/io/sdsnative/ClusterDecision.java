package io.sdsnative;

/**
 * An exact-mode decision ({@link ClusterSync#enterExact}): admitted or
 * refused with its reason, and whether Redis took it. No exit follows it.
 * Immutable.
 */
public final class ClusterDecision {
    /** The bits of the native result. */
    private static final long ADMITTED = 1;
    private static final long EXACT = 2;
    private static final int REASON_SHIFT = 8;

    /** The native result: everything below is read from it. */
    private final long bits;

    private ClusterDecision(long bits) {
        this.bits = bits;
    }

    static ClusterDecision of(long bits) {
        return new ClusterDecision(bits);
    }

    /** Whether the request may go on. */
    public boolean isAdmitted() {
        return (bits & ADMITTED) != 0;
    }

    /** Whether it was refused ({@code !isAdmitted()}), as {@link Entry#isDowngraded()}. */
    public boolean isDowngraded() {
        return !isAdmitted();
    }

    /**
     * Why it was refused: {@code VISIT} or {@code TOKEN_BUCKET} from Redis, any
     * reason from a local decision; null when admitted.
     */
    public Reason reason() {
        return Reason.fromCode((int) (bits >>> REASON_SHIFT));
    }

    /**
     * Whether Redis decided (true), or Redis could not be reached and the
     * table decided locally on its local and last synced remote counts (false).
     */
    public boolean isExact() {
        return (bits & EXACT) != 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterDecision && ((ClusterDecision) o).bits == bits;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(bits);
    }

    @Override
    public String toString() {
        return "ClusterDecision{admitted=" + isAdmitted() + ", exact=" + isExact() + ", reason=" + reason() + "}";
    }
}
