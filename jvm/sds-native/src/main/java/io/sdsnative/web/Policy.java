package io.sdsnative.web;

import java.util.function.ToLongFunction;

import io.sdsnative.ErrorCode;
import io.sdsnative.KeyedLimit;
import io.sdsnative.SdsException;
import jakarta.servlet.http.HttpServletRequest;

/**
 * A per-key limit of a filter: {@code limit} decides for the key that a
 * {@link KeyFunction} (a {@code String}: its UTF-8 bytes, {@link #of}) or a
 * {@link BytesKeyFunction} (any bytes, {@link #ofBytes}) gives each request,
 * at a cost of 1 unit or of a function of the request. Its {@code name}
 * names it in the {@code RateLimit} headers. Immutable: {@link #cost}
 * returns a copy.
 *
 * <p>A limit of an {@code inFlight} rule holds its units while the request
 * runs: they come back when the response completes (also when the
 * application throws, and when an asynchronous request completes, fails or
 * times out).
 */
public final class Policy {
    private final String name;
    private final KeyedLimit limit;
    /** Exactly one of {@code key} and {@code bytesKey} is set. */
    private final KeyFunction key;
    private final BytesKeyFunction bytesKey;
    /** A fixed cost is a function that always gives it. */
    private final ToLongFunction<HttpServletRequest> costOf;
    private final boolean inFlight;

    private Policy(String name, KeyedLimit limit, KeyFunction key, BytesKeyFunction bytesKey,
            ToLongFunction<HttpServletRequest> costOf) {
        this.name = name;
        this.limit = limit;
        this.key = key;
        this.bytesKey = bytesKey;
        this.costOf = costOf;
        this.inFlight = limit.kind().equals("inFlight");
    }

    /** A policy keyed by the client's address ({@link KeyFunctions#clientAddress()}). */
    public static Policy of(String name, KeyedLimit limit) {
        return of(name, limit, KeyFunctions.clientAddress());
    }

    /**
     * A policy named {@code name} (1 to 64 printable ASCII characters, the
     * rule of {@code sds-http}) deciding with {@code limit} for the key
     * {@code key} gives each request, one unit per request.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a name a header cannot
     *     carry; {@code NULL_ARGUMENT} for a null argument
     */
    public static Policy of(String name, KeyedLimit limit, KeyFunction key) {
        return make(name, limit, key, null, key == null);
    }

    /**
     * As {@link #of(String, KeyedLimit, KeyFunction)}, with a key of any bytes:
     * {@code key} gives each request a {@code byte[]} ({@link KeyedLimit}
     * takes it as it is: keys that differ only in bytes that are no valid
     * UTF-8 are different keys), or null to exempt it. A distinct name rather
     * than an overload of {@code of}, so that a lambda passed to {@code of}
     * stays unambiguous.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a name a header cannot
     *     carry; {@code NULL_ARGUMENT} for a null argument
     */
    public static Policy ofBytes(String name, KeyedLimit limit, BytesKeyFunction key) {
        return make(name, limit, null, key, key == null);
    }

    private static Policy make(String name, KeyedLimit limit, KeyFunction key, BytesKeyFunction bytesKey,
            boolean noKey) {
        if (name == null || limit == null || noKey) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "policy name, limit and key function must not be null");
        }
        HttpNative.checkPolicyName(name);
        return new Policy(name, limit, key, bytesKey, request -> 1);
    }

    /** This policy with each request costing {@code units} (1 to 2^32 - 1). */
    public Policy cost(long units) {
        if (units < 1) {
            throw new SdsException(ErrorCode.INVALID_ARGUMENT, "policy " + name + ": cost must be at least 1, not "
                    + units);
        }
        return new Policy(name, limit, key, bytesKey, request -> units);
    }

    /** This policy with each request costing what {@code units} says of it. */
    public Policy cost(ToLongFunction<HttpServletRequest> units) {
        if (units == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "cost function is null");
        }
        return new Policy(name, limit, key, bytesKey, units);
    }

    /** The name in the headers. */
    public String name() {
        return name;
    }

    /** The limit it decides with. */
    public KeyedLimit limit() {
        return limit;
    }

    /** The key function of a policy made by {@link #of}; null for one made by {@link #ofBytes}. */
    public KeyFunction keyFunction() {
        return key;
    }

    /** The key function of a policy made by {@link #ofBytes}; null for one made by {@link #of}. */
    public BytesKeyFunction bytesKeyFunction() {
        return bytesKey;
    }

    /** The key of {@code request}: a {@code String}, a {@code byte[]}, or null (exempt). */
    Object keyOf(HttpServletRequest request) {
        return key != null ? key.key(request) : bytesKey.key(request);
    }

    /** Whether its units are held while a request runs (an {@code inFlight} rule). */
    public boolean isInFlight() {
        return inFlight;
    }

    long costOf(HttpServletRequest request) {
        return costOf.applyAsLong(request);
    }

    @Override
    public String toString() {
        return "Policy[" + name + (inFlight ? ", in flight" : "") + "]";
    }
}
