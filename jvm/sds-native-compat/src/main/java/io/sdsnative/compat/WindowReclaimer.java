package io.sdsnative.compat;

import io.sdsnative.Native;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Frees the native window of an SDS counter once the counter is garbage.
 * SDS's classes have no close method, so the drop-in cannot ask callers to
 * close them: each window is tied to its owner by a phantom reference, and
 * the windows of collected owners are freed whenever a new one is made.
 * No thread and no finalizer. Internal to the drop-in.
 */
public final class WindowReclaimer {
    private static final ReferenceQueue<Object> COLLECTED = new ReferenceQueue<>();
    /** Keeps the references themselves reachable until their owner is gone. */
    private static final Set<OwnedWindow> LIVE = Collections.newSetFromMap(new ConcurrentHashMap<OwnedWindow, Boolean>());

    private WindowReclaimer() {}

    private static final class OwnedWindow extends PhantomReference<Object> {
        final long window;

        OwnedWindow(Object owner, long window) {
            super(owner, COLLECTED);
            this.window = window;
        }
    }

    /**
     * A new native window owned by {@code owner}: freed after {@code owner}
     * is collected. Every native call on it must pass {@code owner}, which
     * keeps it reachable during the call.
     */
    public static long newWindow(Object owner, long bucketMs, int buckets, int ring) {
        freeCollected();
        long window = Native.windowNew(bucketMs, buckets, ring);
        LIVE.add(new OwnedWindow(owner, window));
        return window;
    }

    /** Frees the windows whose owners were collected; returns how many. */
    public static int freeCollected() {
        int freed = 0;
        for (Reference<?> ref; (ref = COLLECTED.poll()) != null; freed++) {
            OwnedWindow owned = (OwnedWindow) ref;
            LIVE.remove(owned);
            Native.windowFree(owned.window);
        }
        return freed;
    }

    /** How many windows are alive (tests). */
    public static int liveCount() {
        return LIVE.size();
    }
}
