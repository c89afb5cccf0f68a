package io.sdsnative;

import java.util.Arrays;

/**
 * A point's thresholds, immutable and validated. Field names are SDS's JSON
 * names ({@code visitThreshold}, {@code delayTime}, ...); names, defaults,
 * parsing and rules all come from the native core, so every binding accepts
 * and rejects the same strategies.
 *
 * <pre>{@code
 * Strategy s = Strategy.builder().visitThreshold(100).delayTime(20_000).build();
 * Strategy t = Strategy.fromJson("{\"point\":\"order\",\"visitThreshold\":100}");
 * }</pre>
 */
public final class Strategy {
    /** The reference's defaults: every rule off, downgradeRate 100. */
    public static final Strategy DEFAULT = new Strategy(Native.strategyDefaults());

    /** Values in the order of the core's field table (see {@link #fieldNames()}). */
    private final long[] values;

    private Strategy(long[] values) {
        this.values = values;
    }

    /**
     * Parses SDS strategy JSON: a flat object of SDS names with integer values
     * ({@code "point"} is skipped), validated.
     *
     * @throws SdsException {@code INVALID_JSON}, {@code UNKNOWN_FIELD} or
     *     {@code INVALID_STRATEGY}, naming the problem
     */
    public static Strategy fromJson(String json) {
        if (json == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "strategy JSON is null");
        }
        return new Strategy(Native.strategyFromJson(json));
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder(DEFAULT.values.clone());
    }

    /** A builder starting from this strategy. */
    public Builder toBuilder() {
        return new Builder(values.clone());
    }

    /** The SDS JSON names of every field, in the core's order. */
    public static String[] fieldNames() {
        return CoreTables.FIELD_NAMES.clone();
    }

    /**
     * The value of the field with this SDS JSON name.
     *
     * @throws SdsException {@code UNKNOWN_FIELD} for any other name
     */
    public long get(String jsonName) {
        return values[index(jsonName, 0, false)];
    }

    /**
     * The index of a field name, looked up in Java; for any other name the
     * core's error (its code and message) on setting it to {@code value}
     * (or, when not {@code given}, on naming it) is thrown.
     */
    private static int index(String jsonName, long value, boolean given) {
        if (jsonName == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "field name is null");
        }
        int i = CoreTables.fieldIndex(jsonName);
        if (i < 0) {
            Native.strategyKeyVerdict(jsonName, value, given);
            // The core lets "point" be named without a value; it is still no field.
            throw new SdsException(ErrorCode.UNKNOWN_FIELD, "unknown strategy field \"" + jsonName + "\"");
        }
        return i;
    }

    /** The algorithm of {@code adaptiveConcurrency}; null when it is off. */
    public Algorithm adaptiveConcurrency() {
        return Algorithm.fromCode(get("adaptiveConcurrency"));
    }

    /** The strategy as SDS JSON, every field included. */
    public String toJson() {
        StringBuilder json = new StringBuilder("{");
        String[] names = CoreTables.FIELD_NAMES;
        for (int i = 0; i < names.length; i++) {
            json.append(i == 0 ? "" : ",").append('"').append(names[i]).append("\":").append(values[i]);
        }
        return json.append('}').toString();
    }

    /** Whether requests hold permits that a limit counts: a concurrentThreshold or an adaptive limit. */
    boolean limitsConcurrency() {
        return get("concurrentThreshold") >= 0 || get("adaptiveConcurrency") > 0;
    }

    long[] values() {
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Strategy && Arrays.equals(values, ((Strategy) o).values);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values);
    }

    @Override
    public String toString() {
        return "Strategy" + toJson();
    }

    /**
     * Sets fields by SDS JSON name, the last value of a field winning;
     * {@link #build()} hands every value to the core's strategy builder, which
     * judges each and validates the whole. The named setters are shorthands
     * for {@link #set(String, long)}; names map to fields in Java, without a
     * native call.
     */
    public static final class Builder {
        private final long[] values;

        private Builder(long[] values) {
            this.values = values;
        }

        /**
         * Sets the field with this SDS JSON name.
         *
         * @throws SdsException the core's verdict on a name that is no field:
         *     {@code UNKNOWN_FIELD}, or {@code INVALID_STRATEGY} for {@code "point"}
         */
        public Builder set(String jsonName, long value) {
            values[index(jsonName, value, true)] = value;
            return this;
        }

        public Builder visitThreshold(long v) {
            return set("visitThreshold", v);
        }

        public Builder concurrentThreshold(long v) {
            return set("concurrentThreshold", v);
        }

        public Builder exceptionThreshold(long v) {
            return set("exceptionThreshold", v);
        }

        public Builder exceptionRateThreshold(long v) {
            return set("exceptionRateThreshold", v);
        }

        public Builder exceptionRateStart(long v) {
            return set("exceptionRateStart", v);
        }

        public Builder timeoutThreshold(long v) {
            return set("timeoutThreshold", v);
        }

        public Builder timeoutCountThreshold(long v) {
            return set("timeoutCountThreshold", v);
        }

        public Builder tokenBucketGeneratedTokensInSecond(long v) {
            return set("tokenBucketGeneratedTokensInSecond", v);
        }

        public Builder tokenBucketSize(long v) {
            return set("tokenBucketSize", v);
        }

        public Builder delayTime(long v) {
            return set("delayTime", v);
        }

        public Builder retryInterval(long v) {
            return set("retryInterval", v);
        }

        public Builder downgradeRate(long v) {
            return set("downgradeRate", v);
        }

        public Builder pressureTestDowngrade(long v) {
            return set("pressureTestDowngrade", v);
        }

        /** Percent (0..=100) of slow calls (slower than {@code timeoutThreshold}) that downgrades. */
        public Builder slowCallRateThreshold(long v) {
            return set("slowCallRateThreshold", v);
        }

        /** Visits in the window above which {@code slowCallRateThreshold} is judged. */
        public Builder slowCallRateStart(long v) {
            return set("slowCallRateStart", v);
        }

        /** Seconds over which the token-bucket rate climbs from rate / {@code coldFactor} to rate. */
        public Builder warmUpPeriodSec(long v) {
            return set("warmUpPeriodSec", v);
        }

        /** How much colder than the rate a cold point starts (> 1, default 3). */
        public Builder coldFactor(long v) {
            return set("coldFactor", v);
        }

        /**
         * Paces the token-bucket rate: requests are spaced evenly, each told
         * its wait ({@link Entry#waitMs()}), refused when it would pass this
         * many ms (0..=65535).
         */
        public Builder maxQueueingTimeMs(long v) {
            return set("maxQueueingTimeMs", v);
        }

        /**
         * Finds the in-flight limit from latency with this algorithm code
         * (1 AIMD, 2 VEGAS, 3 GRADIENT2, 4 GRADIENT, 5 KNEE; negative: off) instead of
         * {@code concurrentThreshold}, which must then stay negative.
         */
        public Builder adaptiveConcurrency(long v) {
            return set("adaptiveConcurrency", v);
        }

        /** {@link #adaptiveConcurrency(long)} with the algorithm's code. */
        public Builder adaptiveConcurrency(Algorithm algorithm) {
            if (algorithm == null) {
                throw new SdsException(ErrorCode.NULL_ARGUMENT, "algorithm is null");
            }
            return set("adaptiveConcurrency", algorithm.code());
        }

        /** The least the adaptive limit goes to (>= 1; negative: the algorithm's default). */
        public Builder adaptiveMinLimit(long v) {
            return set("adaptiveMinLimit", v);
        }

        /** The most the adaptive limit goes to (<= 1000000; negative: the algorithm's default). */
        public Builder adaptiveMaxLimit(long v) {
            return set("adaptiveMaxLimit", v);
        }

        /** The adaptive limit a point starts from (within the bounds; negative: the algorithm's default). */
        public Builder adaptiveInitialLimit(long v) {
            return set("adaptiveInitialLimit", v);
        }

        /**
         * The validated strategy.
         *
         * @throws SdsException {@code INVALID_STRATEGY} naming the field and rule
         */
        public Strategy build() {
            return new Strategy(Native.strategyBuild(values));
        }
    }
}
