package io.sdsnative;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;

/**
 * Frees native memory once its Java owner is garbage. Each allocation is tied
 * to its owner by a phantom reference, and every native call that uses the
 * memory passes the owner, which keeps it reachable for the call. So memory
 * is never freed under a running call. The memory of collected owners is
 * freed whenever new memory is tracked, and by {@link #freeCollected()}: no
 * thread, no finalizer. (A {@link Client} frees its table earlier, at
 * {@code close()}, through {@link NativeHandle}; this only catches the
 * clients never closed, and the drop-in's windows.)
 * Internal to sds-native and its drop-in.
 */
public final class NativeReclaimer {
    private static final ReferenceQueue<Object> COLLECTED = new ReferenceQueue<>();
    /** Keeps the references themselves reachable until their owner is gone. */
    private static final Set<Owned> LIVE = Collections.newSetFromMap(new ConcurrentHashMap<Owned, Boolean>());

    private NativeReclaimer() {}

    private static final class Owned extends PhantomReference<Object> {
        final Runnable free;

        Owned(Object owner, Runnable free) {
            super(owner, COLLECTED);
            this.free = free;
        }
    }

    /**
     * Ties the native memory at {@code address} to {@code owner}: {@code free}
     * releases it once {@code owner} is collected. Every native call on it
     * must pass {@code owner}.
     */
    public static long track(Object owner, long address, LongConsumer free) {
        whenCollected(owner, () -> free.accept(address));
        return address;
    }

    /**
     * Runs {@code free} once {@code owner} is collected. {@code free} must not
     * reach {@code owner}, or it never will be.
     */
    static void whenCollected(Object owner, Runnable free) {
        freeCollected();
        LIVE.add(new Owned(owner, free));
    }

    /** Frees the memory of owners that were collected; returns how many. */
    public static int freeCollected() {
        int freed = 0;
        for (Reference<?> ref; (ref = COLLECTED.poll()) != null; freed++) {
            Owned owned = (Owned) ref;
            LIVE.remove(owned);
            owned.free.run();
        }
        return freed;
    }

    /** How many allocations are alive (tests). */
    public static int liveCount() {
        return LIVE.size();
    }
}
