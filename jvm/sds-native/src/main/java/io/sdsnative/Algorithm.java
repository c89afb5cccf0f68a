package io.sdsnative;

/**
 * The algorithms of {@code adaptiveConcurrency}: the core's table, code for
 * code (a test checks it against the native library). Each moves a point's
 * in-flight limit from the latency of its admitted requests, as its peer
 * defines it, with the peer's defaults (the core's
 * {@code core/src/adaptive/README.md} has the formulas).
 */
public enum Algorithm {
    /** Netflix concurrency-limits' {@code AIMDLimit}: +1 while busy, x0.9 on a failure; 20..200, from 20. */
    AIMD(1),
    /** concurrency-limits' {@code VegasLimit}: a queue estimated from the no-load RTT; 1..1000, from 20. */
    VEGAS(2),
    /** concurrency-limits' {@code Gradient2Limit}: the short against the long RTT average; 20..200, from 20. */
    GRADIENT2(3),
    /**
     * Envoy's adaptive concurrency filter, gradient controller: a sampled min RTT against 100 ms windows'
     * p50; 3..1000, from 3.
     */
    GRADIENT(4),
    /**
     * Ours: Envoy's min-RTT sampling, each window's p50 against it, settling 4 % above the knee (where latency
     * starts to grow), doubling until the first queue; 3..1000, from 3.
     */
    KNEE(5);

    private final int code;

    Algorithm(int code) {
        this.code = code;
    }

    /** Its value in {@code adaptiveConcurrency}. */
    public int code() {
        return code;
    }

    /** The algorithm of this {@code adaptiveConcurrency} value; null for any other (a negative one is off). */
    public static Algorithm fromCode(long code) {
        for (Algorithm a : values()) {
            if (a.code == code) {
                return a;
            }
        }
        return null;
    }
}
