package io.sdsnative.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * A request's key for a {@link Policy}: the client's address, an API key, a
 * user id. A {@code null} key exempts the request from that policy. Called on
 * the request's thread, for every request the filter sees. A key of bytes
 * that are no text (any {@code byte[]}) is a {@link BytesKeyFunction}'s
 * ({@link Policy#ofBytes}).
 */
@FunctionalInterface
public interface KeyFunction {
    /** The key of {@code request} (its UTF-8 bytes are the key), or null to exempt it. */
    String key(HttpServletRequest request);
}
