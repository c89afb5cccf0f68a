package io.sdsnative;

/**
 * The rule that downgraded a request: the core's {@code Reason} table, code
 * for code (a test checks it against the native library).
 */
public enum Reason {
    /** Too many visits in the sliding window. */
    VISIT(1),
    /** The current second took more tokens than the bucket gives. */
    TOKEN_BUCKET(2),
    /** No concurrency permit was left. */
    CONCURRENT(3),
    /** Too many timeouts in the sliding window. */
    TIMEOUT(4),
    /** Too many exceptions in the sliding window. */
    EXCEPTION(5),
    /** Too high a share of exceptions in the sliding window. */
    EXCEPTION_RATE(6),
    /** Load-test traffic on a point that downgrades it. */
    PRESSURE_TEST(7),
    /** A delay started by an earlier downgrade is still running. */
    DELAY(8),
    /**
     * Too high a share of slow calls (slower than {@code timeoutThreshold})
     * in the sliding window ({@code slowCallRateThreshold}).
     */
    SLOW_CALL_RATE(9);

    private static final Reason[] BY_CODE = new Reason[256];

    static {
        for (Reason r : values()) {
            BY_CODE[r.code] = r;
        }
    }

    private final int code;

    Reason(int code) {
        this.code = code;
    }

    /** The stable code (0 means not downgraded). */
    public int code() {
        return code;
    }

    /** The reason with this code; null for 0 (not downgraded) or an unknown code. */
    public static Reason fromCode(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
