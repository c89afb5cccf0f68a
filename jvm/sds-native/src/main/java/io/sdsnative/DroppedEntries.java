package io.sdsnative;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;

/**
 * The entries of one client that hold a concurrency permit, watched so that
 * an entry dropped without {@code exit()} still returns its permit once it is
 * garbage collected. Only permit holders are watched: an entry without a
 * permit leaks nothing, and a dropped probe only holds its delay's probe until
 * the delay ends. Like {@link NativeReclaimer}, no thread: the client asks
 * for the dropped entries on {@code enter} and {@code stats}, where an empty
 * queue costs one volatile read. ({@code java.lang.ref.Cleaner} would need
 * Java 9 and a thread, and costs the same per entry.)
 */
final class DroppedEntries {
    private final ReferenceQueue<Entry> collected = new ReferenceQueue<>();
    /** Sentinel of a doubly linked ring that keeps each watch reachable. */
    private final Watch ring = new Watch();

    /** One watched entry: what returning its permit needs, never the entry. */
    static final class Watch extends PhantomReference<Entry> {
        final String point;
        final long startMs;
        final long packed;
        Watch prev;
        Watch next;

        private Watch() {
            super(null, null);
            this.point = null;
            this.startMs = 0;
            this.packed = 0;
            prev = this;
            next = this;
        }

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
        synchronized (ring) {
            w.prev = ring;
            w.next = ring.next;
            ring.next.prev = w;
            ring.next = w;
        }
        return w;
    }

    /**
     * Stops watching: true when the caller now owns the permit's return,
     * false when it was already returned for a collected entry.
     */
    boolean settle(Watch w) {
        synchronized (ring) {
            if (w.next == null) {
                return false;
            }
            w.prev.next = w.next;
            w.next.prev = w.prev;
            w.prev = null;
            w.next = null;
        }
        w.clear();
        return true;
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
}
