package io.sdsnative;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReferenceArray;

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
 * <p>A watch must stay reachable until it is settled, or it would be
 * collected with its entry and never enqueued. Each sits in a slot of an
 * array from its entry's enter to its settling, which empties the slot: the
 * cost per watched entry is two allocations and two compare-and-sets, and
 * nothing ever walks the watches. (An earlier lock-free stack kept the
 * settled watches until a walk dropped them: that walk, one cache miss per
 * watch scattered through the heap, was most of an enter under a web
 * server's allocations.) An enter claims a free slot first in a cache line
 * of its thread's own, then at a random place; when {@link #PROBES} slots in
 * a row are taken at both, the array is replaced by one twice as large, and
 * the old arrays stay referenced until the client is garbage, so that their
 * watches stay reachable and settle where they sit. ({@code java.lang.ref.Cleaner} needs
 * Java 9 and a thread, and its registration takes a lock twice per entry.)
 */
final class DroppedEntries {
    /** The first array's slots (1 KB with compressed references). */
    static final int FIRST_SLOTS = 256;
    /** Slots tried from each start (the thread's own, a random one) before the array grows. */
    static final int PROBES = 8;

    private final ReferenceQueue<Entry> collected = new ReferenceQueue<>();
    /** Where new watches go: null until the first one. */
    private volatile Slots slots;

    /** An array of watches, and the arrays it replaced (whose watches must stay reachable). */
    private static final class Slots {
        final AtomicReferenceArray<Watch> array;
        final Slots older;

        Slots(int length, Slots older) {
            this.array = new AtomicReferenceArray<>(length);
            this.older = older;
        }
    }

    /** One watched entry: what returning its permit needs, never the entry. */
    static final class Watch extends PhantomReference<Entry> {
        final String point;
        final long startMs;
        final long packed;
        /** Its slot, holding it until it is settled. */
        final AtomicReferenceArray<Watch> array;
        final int index;

        Watch(Entry entry, ReferenceQueue<Entry> queue, String point, long startMs, long packed,
                AtomicReferenceArray<Watch> array, int index) {
            super(entry, queue);
            this.point = point;
            this.startMs = startMs;
            this.packed = packed;
            this.array = array;
            this.index = index;
        }
    }

    /** Watches {@code entry}, which holds a permit. */
    Watch watch(Entry entry, String point, long startMs, long packed) {
        // First a cache line of this thread's own (16 slots), where its last exit most likely freed a
        // slot, so that claims and exits rarely move a line between cores; then a random place, so
        // that a thread holding many entries grows the array only as it fills.
        int home = (int) Thread.currentThread().getId() << 4;
        for (Slots s = slots; ; s = grow(s)) {
            if (s != null) {
                Watch w = claim(s.array, home, entry, point, startMs, packed);
                if (w == null) {
                    w = claim(s.array, ThreadLocalRandom.current().nextInt(), entry, point, startMs, packed);
                }
                if (w != null) {
                    return w;
                }
            }
        }
    }

    /** A watch in the first free slot of {@link #PROBES} from {@code start}, or null. */
    private Watch claim(AtomicReferenceArray<Watch> array, int start, Entry entry, String point, long startMs,
            long packed) {
        int mask = array.length() - 1;
        for (int k = 0; k < PROBES; k++) {
            int i = (start + k) & mask;
            if (array.get(i) == null) {
                // Made for this slot (its fields final); one lost to another thread is garbage
                // before its entry and so never enqueued.
                Watch w = new Watch(entry, collected, point, startMs, packed, array, i);
                if (array.compareAndSet(i, null, w)) {
                    return w;
                }
            }
        }
        return null;
    }

    /** Replaces {@code full} by an array twice as large, unless another thread did. */
    private synchronized Slots grow(Slots full) {
        Slots now = slots;
        if (now == full) {
            now = new Slots(full == null ? FIRST_SLOTS : 2 * full.array.length(), full);
            slots = now;
        }
        return now;
    }

    /**
     * Settles a watch once, emptying its slot: true for the first caller,
     * who returns the permit (the exit, or {@link #nextDropped()} for a
     * collected entry).
     */
    boolean settle(Watch w) {
        return w.array.compareAndSet(w.index, w, null);
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

    /** Watches not settled yet, in every array (tests). */
    int watching() {
        int n = 0;
        for (Slots s = slots; s != null; s = s.older) {
            for (int i = 0; i < s.array.length(); i++) {
                n += s.array.get(i) != null ? 1 : 0;
            }
        }
        return n;
    }

    /** Slots of the newest array, 0 before the first watch (tests). */
    int capacity() {
        Slots s = slots;
        return s == null ? 0 : s.array.length();
    }
}
