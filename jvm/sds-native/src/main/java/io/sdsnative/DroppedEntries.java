package io.sdsnative;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The entries of one client that hold a concurrency permit, watched so that
 * an entry dropped without {@code exit()} still returns its permit once it is
 * garbage collected. Only permit holders of points with a concurrency limit
 * are watched: an entry without a permit leaks nothing, one of a point
 * without a limit only stays counted in flight, and a dropped probe only
 * holds its delay's probe until the delay ends. Like {@link NativeReclaimer},
 * no thread: the client asks for the dropped entries where they matter (an
 * {@code enter} of a point with a limit, a refused one, {@code stats}); an
 * empty queue costs one volatile read.
 *
 * <p>The cost per watched entry is two allocations and two compare-and-sets:
 * a watch is pushed on a lock-free stack, which only keeps it reachable, and
 * an exit marks it settled without unlinking it; the stack drops the settled
 * watches when it has grown to twice what it kept last time.
 * ({@code java.lang.ref.Cleaner} needs Java 9 and a thread, and its
 * registration takes a lock twice per entry.)
 */
final class DroppedEntries {
    private static final int MIN_PRUNE = 256;
    private static final AtomicIntegerFieldUpdater<Watch> SETTLED =
            AtomicIntegerFieldUpdater.newUpdater(Watch.class, "settled");

    private final ReferenceQueue<Entry> collected = new ReferenceQueue<>();
    private final AtomicReference<Watch> top = new AtomicReference<>();
    private volatile int pruneAt = MIN_PRUNE;

    /** One watched entry: what returning its permit needs, never the entry. */
    static final class Watch extends PhantomReference<Entry> {
        final String point;
        final long startMs;
        final long packed;
        Watch below;
        /** How many watches were below it when pushed: when to prune. */
        int depth;
        volatile int settled;

        Watch(Entry entry, ReferenceQueue<Entry> queue, String point, long startMs, long packed) {
            super(entry, queue);
            this.point = point;
            this.startMs = startMs;
            this.packed = packed;
        }
    }

    /** Watches {@code entry}, which holds a permit. */
    Watch watch(Entry entry, String point, long startMs, long packed) {
        Watch w = new Watch(entry, collected, point, startMs, packed);
        Watch below;
        do {
            below = top.get();
            w.below = below;
            w.depth = below == null ? 1 : below.depth + 1;
        } while (!top.compareAndSet(below, w));
        if (w.depth >= pruneAt) {
            prune();
        }
        return w;
    }

    /**
     * Settles a watch once: true for the first caller, who returns the
     * permit (the exit, or {@link #nextDropped()} for a collected entry).
     */
    boolean settle(Watch w) {
        return SETTLED.compareAndSet(w, 0, 1);
    }

    /** The next collected entry whose permit is still out, or null. */
    Watch nextDropped() {
        for (Reference<? extends Entry> r; (r = collected.poll()) != null; ) {
            Watch w = (Watch) r;
            if (settle(w)) {
                return w;
            }
        }
        return null;
    }

    /**
     * Takes the whole stack, drops the settled watches and pushes the others
     * back: while taken, they are reachable from this thread's locals.
     */
    private void prune() {
        Watch kept = null;
        Watch keptBottom = null;
        int count = 0;
        for (Watch w = top.getAndSet(null), next; w != null; w = next) {
            next = w.below;
            if (w.settled == 0) {
                w.below = kept;
                kept = w;
                if (keptBottom == null) {
                    keptBottom = w;
                }
                count++;
            }
        }
        pruneAt = Math.max(MIN_PRUNE, 2 * count);
        if (kept == null) {
            return;
        }
        int depth = count;
        for (Watch w = kept; w != null; w = w.below) {
            w.depth = depth--;
        }
        Watch below;
        do {
            below = top.get();
            keptBottom.below = below;
        } while (!top.compareAndSet(below, kept));
    }

    /** Watches on the stack, settled or not (tests). */
    int stackSize() {
        int n = 0;
        for (Watch w = top.get(); w != null; w = w.below) {
            n++;
        }
        return n;
    }
}
