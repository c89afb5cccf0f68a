package io.sdsnative.web;

import java.nio.ByteOrder;

import io.sdsnative.ErrorCode;
import io.sdsnative.KeyedLimit;
import io.sdsnative.NativeReclaimer;
import io.sdsnative.SdsException;

/**
 * A filter's policies deciding a request: the crate {@code sds-http}'s
 * {@code RoutePolicies}, which holds a reference of each limit's table and
 * decides in the order every binding's middleware follows (the policies in
 * order, only peeking after a refusal; a full in-flight table is its own
 * verdict) and writes the header fields. Java only hands over each policy's
 * key and cost, in a thread's scratch memory, and reads the answer back.
 * Thread-safe; its native memory is freed once it is garbage.
 */
final class Route {
    /** The verdicts of {@link Decision#verdict}. */
    static final int ADMITTED = 0;
    static final int LIMITED = 1;
    static final int TABLE_FULL = 2;

    /** The scratch memory (see {@code jvm/src/http.rs}): the verdict and the units held, then a slot per policy. */
    private static final int HEAD = 16;
    private static final int SLOT = 16;
    private static final int NO_KEY = 0;
    private static final int BYTES = 1;
    private static final int UTF16 = 2;
    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final long handle;
    /** The limits, to answer as each alone does once closed. */
    private final KeyedLimit[] limits;
    private final int n;
    /** Where the header fields start in the scratch memory: after every policy's slot. */
    private final int outAt;
    /** The most the fields of every policy can take (each name written twice, escaped, and the numbers). */
    private final int capacity;
    /** Where the keys start: after the fields. */
    private final int keysAt;
    private final ThreadLocal<Scratch> scratch;

    /** What a request met: see {@link Route#decide}. */
    static final class Decision {
        /** {@link #ADMITTED}, {@link #LIMITED} or {@link #TABLE_FULL}. */
        final int verdict;
        /** Bit {@code i}: policy {@code i} holds units until the response completes. */
        final long held;
        /** The header fields, flat (name, value, ...); null when there are none. */
        final String[] fields;

        Decision(int verdict, long held, String[] fields) {
            this.verdict = verdict;
            this.held = held;
            this.fields = fields;
        }
    }

    Route(String style, String[] names, KeyedLimit[] limits) {
        this.handle = NativeReclaimer.track(this, HttpNative.routeNew(style, names, limits), HttpNative::routeFree);
        this.limits = limits.clone();
        this.n = names.length;
        int bound = 256;
        for (String name : names) {
            bound += 4 * name.length() + 100;
        }
        this.outAt = HEAD + n * SLOT;
        this.capacity = bound;
        this.keysAt = outAt + bound;
        final int size = keysAt + 256;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(size));
    }

    /**
     * Decides a request whose key for policy {@code i} is {@code keys[i]} (a
     * {@code String}, a {@code byte[]}, or null where the policy does not
     * apply) at cost {@code costs[i]}, now.
     *
     * @throws io.sdsnative.SdsException as {@link KeyedLimit#decide(String, long)}
     *     (a cost out of range, a key that is no valid UTF-16, a limit closed), with nothing held
     */
    Decision decide(Object[] keys, long[] costs) {
        for (KeyedLimit limit : limits) {
            // The route holds the table still; a closed limit decides nothing, as alone (and in Node).
            if (limit.isClosed()) {
                throw new SdsException(ErrorCode.CLOSED, ErrorCode.CLOSED.description());
            }
        }
        Scratch s = write(keys, costs, -1L);
        int written = (int) HttpNative.routeDecide(handle, this, s.address, outAt, capacity, s.keysLen,
                System.currentTimeMillis());
        java.nio.ByteBuffer b = s.buffer;
        int verdict = (int) b.getLong(0);
        long held = b.getLong(8);
        return new Decision(verdict, held, written == 0 ? null : s.lines(outAt, written));
    }

    /**
     * Gives back the units of the policies {@code held} names (a
     * {@link Decision#held}), with the keys and costs the request was decided
     * with: when the response completes, or when the point downgraded it.
     */
    void release(long held, Object[] keys, long[] costs) {
        if (held == 0) {
            return;
        }
        Scratch s = write(keys, costs, held);
        HttpNative.routeRelease(handle, this, s.address, keysAt, s.keysLen, held);
    }

    /**
     * Writes the keys and costs of the policies {@code only} names (-1: all)
     * to this thread's scratch memory, a larger one if they do not fit; the
     * keys' length is left in {@link Scratch#keysLen}.
     */
    private Scratch write(Object[] keys, long[] costs, long only) {
        int bound = 0;
        for (int i = 0; i < n; i++) {
            Object key = keys[i];
            if (key instanceof byte[]) {
                bound += ((byte[]) key).length;
            } else if (key != null) {
                bound += 2 * ((String) key).length() + 1;
            }
        }
        Scratch s = scratch.get();
        if (keysAt + bound > s.bytes.length) {
            s = new Scratch(Math.max(keysAt + bound, 2 * s.bytes.length));
            scratch.set(s);
        }
        java.nio.ByteBuffer b = s.buffer;
        byte[] out = s.bytes;
        int at = keysAt;
        for (int i = 0; i < n; i++) {
            Object key = (only >>> i & 1) != 0 ? keys[i] : null;
            int slot = HEAD + i * SLOT;
            if (key == null) {
                b.putInt(slot, NO_KEY);
                continue;
            }
            int kind;
            int len;
            if (key instanceof byte[]) {
                byte[] bytes = (byte[]) key;
                kind = BYTES;
                len = bytes.length;
                System.arraycopy(bytes, 0, out, at, len);
                at += len;
            } else {
                String text = (String) key;
                len = text.length();
                kind = s.putAscii(text, at, out.length) < 0 ? UTF16 : BYTES;
                if (kind == BYTES) {
                    at += len;
                } else {
                    // No UTF-8 here: the native side makes it, and refuses a lone surrogate as KeyedLimit does.
                    at += (at - keysAt) & 1;
                    for (int j = 0; j < len; j++) {
                        char c = text.charAt(j);
                        out[at + (LITTLE ? 0 : 1)] = (byte) c;
                        out[at + (LITTLE ? 1 : 0)] = (byte) (c >>> 8);
                        at += 2;
                    }
                }
            }
            b.putInt(slot, kind);
            b.putInt(slot + 4, len);
            b.putLong(slot + 8, costs[i]);
        }
        s.keysLen = at - keysAt;
        s.flush(keysAt, s.keysLen);
        return s;
    }

    /** This thread's scratch memory (tests). */
    Scratch scratch() {
        return scratch.get();
    }
}
