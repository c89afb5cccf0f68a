package io.sdsnative.web;

/**
 * The JNI methods of the servlet filter: the crate {@code sds-http}'s route
 * policies (their order, verdict and header fields) and client-address keys
 * ({@code jvm/src/http.rs}), so that a request gets the same answer from
 * Java, Python and Node. Internal. Every method
 * throws {@link io.sdsnative.SdsException} itself ({@code INVALID_ARGUMENT}
 * with the crate's message, {@code NULL_ARGUMENT}).
 */
final class HttpNative {
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

    /**
     * The route of the policies {@code names} deciding with {@code limits} (a
     * reference of each one's table), in that order, answering in
     * {@code style} ("draft-10", "draft-6", "x-ratelimit").
     */
    static native long routeNew(String style, String[] names, io.sdsnative.KeyedLimit[] limits);

    /**
     * Decides the request whose keys and costs are in the scratch memory at
     * {@code scratch} (see {@link Route}; the keys, {@code keysLen} bytes, at
     * {@code outAt + capacity}) at {@code nowMs}: the verdict and the units
     * held at 0 and 8, the header fields at {@code outAt} as
     * {@code name\nvalue\n} lines (ASCII), at most {@code capacity} bytes:
     * their length. No JNI callback.
     */
    static native long routeDecide(long route, Object owner, long scratch, int outAt, int capacity, int keysLen,
            long nowMs);

    /** Gives back the units of the policies {@code held} names, their keys and costs in the scratch memory. */
    static native long routeRelease(long route, Object owner, long scratch, int keysAt, int keysLen, long held);

    static native void routeFree(long route);

    /** The address of a direct buffer of at least {@code size} bytes (a thread's scratch memory). */
    static native long scratchAddress(java.nio.ByteBuffer buffer, int size);

    /** What {@link #addressWrite} answers for a peer that is no IP address. */
    static final long NOT_AN_ADDRESS = -1;

    /** A client-address key function's native side. */
    static native long addressNew(int ipv4Prefix, int ipv6Prefix, String[] trusted);

    /** The client key of {@code peer} with these {@code X-Forwarded-For} values (null: none). */
    static native String addressKey(long address, Object owner, String peer, String[] forwardedFor);

    /**
     * As {@link #addressKey} for the peer's {@code peerLen} bytes at offset 0
     * of the scratch memory and the {@code forwardedLen} bytes after them (the
     * X-Forwarded-For values joined by {@code ,}), the key written at
     * {@code outAt} (at most {@code capacity} bytes): its length, or
     * {@link #NOT_AN_ADDRESS}. No JNI callback.
     */
    static native long addressWrite(long address, Object owner, long scratch, int peerLen, int forwardedLen,
            int outAt, int capacity);

    static native void addressFree(long address);
}
