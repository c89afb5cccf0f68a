package io.sdsnative.web;

import java.util.Collections;
import java.util.List;

import io.sdsnative.ErrorCode;
import io.sdsnative.SdsException;

/** The common {@link KeyFunction}s. */
public final class KeyFunctions {
    private KeyFunctions() {}

    /** {@link #clientAddress(int, int, List)} with IPv4 /32, IPv6 /64 and no trusted proxy. */
    public static KeyFunction clientAddress() {
        return clientAddress(32, 64, Collections.<String>emptyList());
    }

    /** {@link #clientAddress(int, int, List)} with IPv4 /32. */
    public static KeyFunction clientAddress(int ipv6Prefix, List<String> trustedProxies) {
        return clientAddress(32, ipv6Prefix, trustedProxies);
    }

    /**
     * The client's address: the peer's ({@code getRemoteAddr()}), or when the
     * peer is one of {@code trustedProxies} (addresses or CIDR networks:
     * {@code "10.0.0.0/8"}, {@code "::1"}), the first untrusted address of
     * {@code X-Forwarded-For} read from the right (as nginx's
     * {@code real_ip_recursive}); masked to {@code ipv4Prefix} (0 to 32) or
     * {@code ipv6Prefix} (0 to 128) bits, since one IPv6 host usually owns a
     * whole /64. Keys are canonical text: {@code 203.0.113.7},
     * {@code 2001:db8:1:2::/64}; an IPv4-mapped IPv6 peer is its IPv4
     * address. A peer that is no IP address (a Unix socket) is its own key,
     * as the container gives it. The rules are the crate {@code sds-http}'s,
     * the same as the Python and Node middleware's.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a prefix out of range
     *     or a trusted proxy that is no address or network
     */
    public static KeyFunction clientAddress(int ipv4Prefix, int ipv6Prefix, List<String> trustedProxies) {
        if (trustedProxies == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "trusted proxies is null");
        }
        return new ClientAddressKey(ipv4Prefix, ipv6Prefix, trustedProxies.toArray(new String[0]));
    }

    /** The first value of header {@code name}; a request without it is exempt (null key). */
    public static KeyFunction header(String name) {
        return header(name, null);
    }

    /**
     * The first value of header {@code name} (an API key, a tenant); a
     * request without it gets {@code missing}: null exempts it, a key puts
     * all such requests under that one key.
     */
    public static KeyFunction header(final String name, final String missing) {
        if (name == null || name.isEmpty()) {
            throw new SdsException(ErrorCode.INVALID_ARGUMENT, "header name must not be null or empty");
        }
        return request -> {
            String value = request.getHeader(name);
            return value == null ? missing : value;
        };
    }
}
