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
    /** The scratch memory: the peer and X-Forwarded-For before {@link #OUT}, the key from there. */
    private static final int OUT = 960;
    private static final int OUT_CAPACITY = 64;

    private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(() -> new Scratch(OUT + OUT_CAPACITY));

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
            Enumeration<String> forwarded = request.getHeaders("X-Forwarded-For");
            if (forwarded != null && forwarded.hasMoreElements()) {
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

    /**
     * The key of {@code peer} with the X-Forwarded-For values
     * {@code forwarded} (null: none): through the scratch memory, the values
     * joined by {@code ,} (one list either way); text that is not ASCII or
     * does not fit crosses as {@code String}s.
     */
    private String key(String peer, Enumeration<String> forwarded) {
        List<String> values = null;
        if (forwarded != null) {
            values = new ArrayList<>(1);
            while (forwarded.hasMoreElements()) {
                values.add(forwarded.nextElement());
            }
        }
        Scratch s = scratch.get();
        int peerLen = s.putAscii(peer, 0, OUT);
        int at = peerLen;
        for (int i = 0; values != null && i < values.size() && at >= 0; i++) {
            if (i > 0) {
                at = s.putAscii(",", at, OUT) < 0 ? -1 : at + 1;
            }
            int n = at < 0 ? -1 : s.putAscii(values.get(i), at, OUT);
            at = n < 0 ? -1 : at + n;
        }
        if (at < 0) {
            return crossing(peer, values == null ? null : values.toArray(new String[0]));
        }
        s.flush(at);
        long n = HttpNative.addressWrite(handle, this, s.address, peerLen, at - peerLen, OUT, OUT_CAPACITY);
        return n == HttpNative.NOT_AN_ADDRESS ? peer : s.text(OUT, (int) n);
    }

    /** {@link #key(String, Enumeration)} without the per-peer memory (tests: both native paths). */
    String keyOf(String peer, Enumeration<String> forwarded) {
        return key(peer, forwarded);
    }

    private String crossing(String peer, String[] forwarded) {
        try {
            return HttpNative.addressKey(handle, this, peer, forwarded);
        } catch (SdsException e) {
            if (e.code() == ErrorCode.INVALID_ARGUMENT) {
                return peer; // no IP address (a Unix socket): the peer as the container names it
            }
            throw e;
        }
    }
}
