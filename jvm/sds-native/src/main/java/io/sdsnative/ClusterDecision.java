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

    private final boolean admitted;
    private final boolean exact;
    private final Reason reason;

    private ClusterDecision(boolean admitted, boolean exact, Reason reason) {
        this.admitted = admitted;
        this.exact = exact;
        this.reason = reason;
    }

    static ClusterDecision of(long bits) {
        return new ClusterDecision((bits & ADMITTED) != 0, (bits & EXACT) != 0,
                Reason.fromCode((int) (bits >>> REASON_SHIFT)));
    }

    /** Whether the request may go on. */
    public boolean isAdmitted() {
        return admitted;
    }

    /** Whether it was refused ({@code !isAdmitted()}), as {@link Entry#isDowngraded()}. */
    public boolean isDowngraded() {
        return !admitted;
    }

    /**
     * Why it was refused: {@code VISIT} or {@code TOKEN_BUCKET} from Redis, any
     * reason from a local decision; null when admitted.
     */
    public Reason reason() {
        return reason;
    }

    /**
     * Whether Redis decided (true), or Redis could not be reached and the
     * table decided locally on its local and last synced remote counts (false).
     */
    public boolean isExact() {
        return exact;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ClusterDecision)) {
            return false;
        }
        ClusterDecision d = (ClusterDecision) o;
        return admitted == d.admitted && exact == d.exact && reason == d.reason;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(admitted, exact, reason);
    }

    @Override
    public String toString() {
        return "ClusterDecision{admitted=" + admitted + ", exact=" + exact + ", reason=" + reason + "}";
    }
}
