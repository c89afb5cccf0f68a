package io.sdsnative.web;

import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import io.sdsnative.ErrorCode;
import io.sdsnative.NativeReclaimer;
import io.sdsnative.SdsException;
import jakarta.servlet.http.HttpServletRequest;

/**
 * {@link KeyFunctions#clientAddress(int, int, java.util.List)}: the key is
 * {@code sds-http}'s {@code ClientAddress::key} of the peer and its
 * {@code X-Forwarded-For} values. Thread-safe.
 */
final class ClientAddressKey implements KeyFunction {
    /**
     * Keys remembered by peer when the peer alone makes the key (no proxy
     * trusted, or no header): a map hit instead of a native call. Bounded:
     * emptied when full.
     */
    static final int KNOWN_PEERS = 4096;

    private final long handle;
    private final boolean trusts;
    private final ConcurrentHashMap<String, String> known = new ConcurrentHashMap<>();

    ClientAddressKey(int ipv4Prefix, int ipv6Prefix, String[] trusted) {
        this.handle = NativeReclaimer.track(this, HttpNative.addressNew(ipv4Prefix, ipv6Prefix, trusted),
                HttpNative::addressFree);
        this.trusts = trusted.length > 0;
    }

    @Override
    public String key(HttpServletRequest request) {
        String peer = request.getRemoteAddr();
        if (peer == null) {
            return "";
        }
        if (trusts) {
            String[] forwarded = forwardedFor(request);
            if (forwarded != null) {
                return key(peer, forwarded);
            }
        }
        String key = known.get(peer);
        if (key == null) {
            key = key(peer, null);
            if (known.size() >= KNOWN_PEERS) {
                known.clear();
            }
            known.put(peer, key);
        }
        return key;
    }

    private String key(String peer, String[] forwarded) {
        try {
            return HttpNative.addressKey(handle, this, peer, forwarded);
        } catch (SdsException e) {
            if (e.code() == ErrorCode.INVALID_ARGUMENT) {
                return peer; // no IP address (a Unix socket): the peer as the container names it
            }
            throw e;
        }
    }

    /** Every {@code X-Forwarded-For} value, in order; null when there is none. */
    private static String[] forwardedFor(HttpServletRequest request) {
        Enumeration<String> values = request.getHeaders("X-Forwarded-For");
        if (values == null || !values.hasMoreElements()) {
            return null;
        }
        List<String> all = new ArrayList<>(1);
        while (values.hasMoreElements()) {
            all.add(values.nextElement());
        }
        return all.toArray(new String[0]);
    }
}
