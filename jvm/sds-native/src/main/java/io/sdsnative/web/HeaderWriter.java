package io.sdsnative.web;

import io.sdsnative.KeyDecision;
import io.sdsnative.NativeReclaimer;

/**
 * The {@code RateLimit} header fields of one filter's policies in one style,
 * written by {@code sds-http}: Java only hands over the decisions' numbers.
 * Immutable and thread-safe; its native memory is freed once it is garbage.
 */
final class HeaderWriter {
    private final long handle;

    HeaderWriter(String style, String[] policies) {
        this.handle = NativeReclaimer.track(this, HttpNative.headersNew(style, policies), HttpNative::headersFree);
    }

    /** Writes decision {@code d} of policy {@code policy} at slot {@code slot} of {@code io}. */
    static void put(long[] io, int slot, int policy, KeyDecision d) {
        int at = slot * HttpNative.DECISION_LEN;
        io[at] = policy;
        io[at + 1] = d.admitted() ? 1 : 0;
        io[at + 2] = d.limit();
        io[at + 3] = d.remaining();
        io[at + 4] = d.resetMs();
        io[at + 5] = d.retryAfterMs();
        io[at + 6] = d.windowMs();
    }

    /** The fields of the first {@code count} decisions of {@code io}, flat: name, value, name, value, ... */
    String[] fields(long[] io, int count) {
        return HttpNative.headersFields(handle, this, io, count);
    }
}
