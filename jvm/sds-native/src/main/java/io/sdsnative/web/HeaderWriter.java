package io.sdsnative.web;

import io.sdsnative.KeyDecision;
import io.sdsnative.NativeReclaimer;

/**
 * The {@code RateLimit} header fields of one filter's policies in one style,
 * written by {@code sds-http}: Java only hands over the decisions' numbers,
 * in a thread's scratch memory, and reads the fields back. Thread-safe; its
 * native memory is freed once it is garbage.
 */
final class HeaderWriter {
    private static final int DECISION_BYTES = HttpNative.DECISION_LEN * 8;

    private final long handle;
    /** Where the fields start in the scratch memory: after every policy's decision. */
    private final int outAt;
    /** The most the fields of every policy can take (each name written twice, escaped, and the numbers). */
    private final int capacity;
    private final ThreadLocal<Scratch> scratch;

    HeaderWriter(String style, String[] policies) {
        this.handle = NativeReclaimer.track(this, HttpNative.headersNew(style, policies), HttpNative::headersFree);
        int bound = 256;
        for (String name : policies) {
            bound += 4 * name.length() + 100;
        }
        this.outAt = policies.length * DECISION_BYTES;
        this.capacity = bound;
        final int size = outAt + bound;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(size));
    }

    /** This thread's scratch memory, for {@link #put} and {@link #fields}. */
    Scratch scratch() {
        return scratch.get();
    }

    /** Writes decision {@code d} of policy {@code policy} at slot {@code slot}. */
    static void put(Scratch s, int slot, int policy, KeyDecision d) {
        int at = slot * DECISION_BYTES;
        java.nio.ByteBuffer b = s.buffer;
        b.putLong(at, policy);
        b.putLong(at + 8, d.admitted() ? 1 : 0);
        b.putLong(at + 16, d.limit());
        b.putLong(at + 24, d.remaining());
        b.putLong(at + 32, d.resetMs());
        b.putLong(at + 40, d.retryAfterMs());
        b.putLong(at + 48, d.windowMs());
    }

    /** The fields of the first {@code count} decisions {@link #put} in {@code s}, flat: name, value, ... */
    String[] fields(Scratch s, int count) {
        int n = (int) HttpNative.headersWrite(handle, this, s.address, count, outAt, capacity);
        return s.lines(outAt, n);
    }

    /**
     * The fields of the first {@code count} decisions in {@code io}
     * ({@link HttpNative#DECISION_LEN} numbers each), through JNI objects:
     * for tests, which compare both paths.
     */
    String[] fields(long[] io, int count) {
        return HttpNative.headersFields(handle, this, io, count);
    }
}
