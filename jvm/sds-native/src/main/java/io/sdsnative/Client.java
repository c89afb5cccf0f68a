package io.sdsnative;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The native SDS engine for a fixed number of points. Thread-safe; the hot
 * path ({@link #enter}, {@link Entry#close()}) is one JNI call each with
 * primitives only, and the time is read in Java.
 *
 * <p>Close it when done; {@code close()} is idempotent and a closed client
 * throws {@link SdsException} with {@link ErrorCode#CLOSED}. {@code close()}
 * frees the native memory as soon as no call is running on it: a call already
 * running in another thread finishes normally, and the last one to finish
 * frees. A client that is never closed is freed once it is garbage (see
 * {@link NativeReclaimer}).
 */
public final class Client implements AutoCloseable {
    private static final int PRESSURE_TEST = 1;
    /** The core's packed-entry bit of an entry that holds a concurrency permit. */
    private static final long PERMIT = CoreTables.PACKED_LAYOUT[3];
    private static final long PROBE = CoreTables.PACKED_LAYOUT[4];
    private static final long DOWNGRADED = CoreTables.PACKED_LAYOUT[0];

    private final NativeHandle table;
    private final DroppedEntries dropped = new DroppedEntries();
    /** Points by name: the name crosses to native code once per point. */
    private final ConcurrentHashMap<String, Point> points = new ConcurrentHashMap<>();

    /** A point's id, and whether its strategy limits concurrency. */
    private static final class Point {
        final int id;
        /**
         * Set by this client's setStrategy: only then does a lost permit
         * block requests, so only then are entries watched (see Entry).
         */
        volatile boolean limited;

        Point(int id) {
            this.id = id;
        }
    }

    /**
     * A client for up to {@code capacity} points.
     *
     * @throws SdsException {@code INVALID_CAPACITY} outside 1..=2^20
     */
    public Client(int capacity) {
        NativeHandle handle = new NativeHandle(Native.tableNew(capacity), Native::tableFree);
        this.table = handle;
        NativeReclaimer.whenCollected(this, handle::close);
    }

    /** Enters {@code point} now. */
    public Entry enter(String point) {
        return enter(point, System.currentTimeMillis(), false);
    }

    /** Enters {@code point} at {@code nowMs}. */
    public Entry enter(String point, long nowMs) {
        return enter(point, nowMs, false);
    }

    /**
     * Enters {@code point} at {@code nowMs}; {@code pressureTest} marks
     * load-test traffic.
     *
     * @throws SdsException {@code NULL_ARGUMENT}, {@code EMPTY_NAME},
     *     {@code NAME_TOO_LONG}, {@code INVALID_ARGUMENT} (a name that is not
     *     valid UTF-16), {@code TABLE_FULL} or {@code CLOSED}
     */
    public Entry enter(String point, long nowMs, boolean pressureTest) {
        Point p = point(point);
        // Nothing between acquire and release throws (the native call returns
        // codes; only a VM error such as StackOverflowError could, and would
        // leave the table unfreed), so no finally: less code on the hot path,
        // which helps the JIT inline it and drop the entry.
        long handle = table.acquire();
        long packed = Native.enter(handle, this, p.id, nowMs, pressureTest ? PRESSURE_TEST : 0);
        table.release();
        Native.check(packed);
        if (!p.limited && (packed & DOWNGRADED) == 0) {
            return new Entry(this, nowMs, packed);
        }
        return limitedOrDowngraded(p, point, nowMs, packed);
    }

    /**
     * Where a dropped entry's permit matters: a point with a concurrency
     * limit, or a request just refused. Returns the permits of collected
     * entries, then watches the new entry if it holds a permit.
     */
    private Entry limitedOrDowngraded(Point p, String point, long nowMs, long packed) {
        long handle = table.acquire();
        try {
            returnDroppedPermits(handle);
        } finally {
            table.release();
        }
        if (p.limited && (packed & PERMIT) != 0) {
            return Entry.watched(this, point, nowMs, packed);
        }
        return new Entry(this, nowMs, packed);
    }

    DroppedEntries.Watch watch(Entry entry, String point, long startMs, long packed) {
        return dropped.watch(entry, point, startMs, packed);
    }

    /** Whether the exit of a watched entry still owns its permit. */
    boolean settle(DroppedEntries.Watch watch) {
        return dropped.settle(watch);
    }

    void exit(long startMs, long packed, long nowMs, boolean failed) {
        long handle = table.acquire();
        long result = Native.exit(handle, this, startMs, packed, nowMs, failed ? 1 : 0);
        table.release();
        Native.check(result);
    }

    /**
     * Returns the permits of entries collected without an exit: an exit at
     * their start time, as ok, and no longer a probe, so that nothing but the
     * permit changes. Each is logged once.
     */
    private void returnDroppedPermits(long handle) {
        for (DroppedEntries.Watch w; (w = dropped.nextDropped()) != null; ) {
            Native.exit(handle, this, w.startMs, w.packed & ~PROBE, w.startMs, 0);
            Log.warning("sds-native: an entry of point \"" + w.point + "\" (entered at " + w.startMs
                    + " ms) was garbage collected without exit(); its concurrency permit is returned now."
                    + " Exit every entry, e.g. with try-with-resources.");
        }
    }

    /**
     * Sets the strategy of {@code point} (created if needed). Counters and
     * permits in flight are kept.
     */
    public void setStrategy(String point, Strategy strategy) {
        if (strategy == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "strategy is null (use removeStrategy)");
        }
        byte[] name = name(point);
        Point p = point(point);
        long handle = table.acquire();
        try {
            Native.setStrategy(handle, this, name, strategy.values());
            p.limited = strategy.get("concurrentThreshold") >= 0;
        } finally {
            table.release();
        }
    }

    /** Removes the strategy of {@code point}; its counters stay. */
    public void removeStrategy(String point) {
        byte[] name = name(point);
        long handle = table.acquire();
        try {
            Native.setStrategy(handle, this, name, null);
            Point p = points.get(point);
            if (p != null) {
                p.limited = false;
            }
        } finally {
            table.release();
        }
    }

    /** The stats of {@code point} now. */
    public Stats stats(String point) {
        return stats(point, System.currentTimeMillis());
    }

    /** The stats of {@code point} at {@code nowMs}; all zero for an unknown point. */
    public Stats stats(String point, long nowMs) {
        byte[] name = name(point);
        long[] out = new long[CoreTables.STATS_NAMES.length];
        long handle = table.acquire();
        try {
            returnDroppedPermits(handle);
            Native.stats(handle, this, name, nowMs, out);
        } finally {
            table.release();
        }
        return new Stats(out);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return table.isClosed();
    }

    /** How many watches of permit holders are kept, settled or not (tests). */
    int watchStackSize() {
        return dropped.stackSize();
    }

    /** Whether the native memory was freed (tests). */
    boolean isFreed() {
        return table.isFreed();
    }

    /**
     * Closes the client: later calls throw {@code CLOSED}, a second close does
     * nothing. The native memory is freed at once, or by the last call still
     * running in another thread when it ends.
     */
    @Override
    public void close() {
        table.close();
    }

    private Point point(String name) {
        Point known = name == null ? null : points.get(name);
        return known != null ? known : newPoint(name);
    }

    private Point newPoint(String name) {
        byte[] bytes = name(name);
        long handle = table.acquire();
        try {
            Point created = new Point(Native.pointId(handle, this, bytes));
            Point raced = points.putIfAbsent(name, created);
            return raced != null ? raced : created;
        } finally {
            table.release();
        }
    }

    /** The UTF-8 bytes of a point name; a lone surrogate has none, so it is refused. */
    private static byte[] name(String point) {
        if (point == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
        }
        int bad = loneSurrogate(point);
        if (bad >= 0) {
            throw new SdsException(ErrorCode.INVALID_ARGUMENT, String.format(
                    "point name is not valid UTF-16: lone surrogate U+%04X at index %d",
                    (int) point.charAt(bad), bad));
        }
        return point.getBytes(StandardCharsets.UTF_8);
    }

    /** The index of the first unpaired surrogate of {@code s}, or -1. */
    static int loneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }
}
