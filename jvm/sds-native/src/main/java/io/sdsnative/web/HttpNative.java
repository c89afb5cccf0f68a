package io.sdsnative.web;

/**
 * The JNI methods of the servlet filter: the crate {@code sds-http}'s header
 * fields and client-address keys ({@code jvm/src/http.rs}), so that a request
 * gets the same answer from Java, Python and Node. Internal. Every method
 * throws {@link io.sdsnative.SdsException} itself ({@code INVALID_ARGUMENT}
 * with the crate's message, {@code NULL_ARGUMENT}).
 */
final class HttpNative {
    /** The numbers of one decision in {@link #headersFields}' array: see {@link HeaderWriter}. */
    static final int DECISION_LEN = 7;

    static {
        // The library is loaded by io.sdsnative.Native's initializer, through
        // this class loader: its functions then resolve for this class too.
        try {
            Class.forName("io.sdsnative.Native", true, HttpNative.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private HttpNative() {}

    /** Throws unless {@code name} can name a policy in a header (1 to 64 printable ASCII characters). */
    static native void checkPolicyName(String name);

    /** A header writer of {@code policies} in {@code style} ("draft-10", "draft-6", "x-ratelimit"). */
    static native long headersNew(String style, String[] policies);

    /**
     * The header fields of the first {@code count} decisions in {@code io}
     * ({@link #DECISION_LEN} numbers each: policy index, admitted 1/0, limit,
     * remaining, resetMs, retryAfterMs, windowMs), flat: name, value, ...
     */
    static native String[] headersFields(long writer, Object owner, long[] io, int count);

    static native void headersFree(long writer);

    /** A client-address key function's native side. */
    static native long addressNew(int ipv4Prefix, int ipv6Prefix, String[] trusted);

    /** The client key of {@code peer} with these {@code X-Forwarded-For} values (null: none). */
    static native String addressKey(long address, Object owner, String peer, String[] forwardedFor);

    static native void addressFree(long address);
}
