package io.sdsnative.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A request's key for a {@link Policy} as bytes ({@link Policy#ofBytes}):
 * any bytes, not only text's UTF-8 form (a hash, a token's binary id, a
 * header's raw bytes), as {@link io.sdsnative.KeyedLimit#decide(byte[], long)}
 * takes them. Two keys are one key when their bytes are equal; bytes that
 * are no valid UTF-8 are kept as they are, never replaced. A {@code null} key
 * exempts the request from that policy. Called on the request's thread, for
 * every request the filter sees.
 */
@FunctionalInterface
public interface BytesKeyFunction {
    /**
     * The key of {@code request}, or null to exempt it. The filter copies the
     * array as soon as the function returns (the request is decided with, and
     * an {@code inFlight} policy's units given back to, those bytes), so the
     * function may reuse it afterwards.
     */
    byte[] key(HttpServletRequest request);
}
