package io.sdsnative;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The native SDS engine for a fixed number of points. Thread-safe; the hot
 * path ({@link #enter}, {@link Entry#close()}) is one JNI call each with
 * primitives only, and the time is read in Java.
 *
 * <p>Close it when done; {@code close()} is idempotent and a closed client
 * throws {@link SdsException} with {@link ErrorCode#CLOSED}. A call already
 * running in another thread when {@code close()} is called finishes normally:
 * the native memory is freed only once the client is garbage (every native
 * call passes the client, which keeps it reachable; see
 * {@link NativeReclaimer}).
 */
public final class Client implements AutoCloseable {
    private static final int PRESSURE_TEST = 1;

    private volatile long handle;
    /** Point ids by name: the name crosses to native code once per point. */
    private final ConcurrentHashMap<String, Integer> points = new ConcurrentHashMap<>();

    /**
     * A client for up to {@code capacity} points.
     *
     * @throws SdsException {@code INVALID_CAPACITY} outside 1..=2^20
     */
    public Client(int capacity) {
        this.handle = NativeReclaimer.track(this, Native.tableNew(capacity), Native::tableFree);
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
     *     {@code NAME_TOO_LONG}, {@code TABLE_FULL} or {@code CLOSED}
     */
    public Entry enter(String point, long nowMs, boolean pressureTest) {
        long table = live();
        int id = pointId(table, point);
        long packed = Native.check(Native.enter(table, this, id, nowMs, pressureTest ? PRESSURE_TEST : 0));
        return new Entry(this, nowMs, packed);
    }

    void exit(long startMs, long packed, long nowMs, boolean failed) {
        Native.check(Native.exit(live(), this, startMs, packed, nowMs, failed ? 1 : 0));
    }

    /**
     * Sets the strategy of {@code point} (created if needed). Counters and
     * permits in flight are kept.
     */
    public void setStrategy(String point, Strategy strategy) {
        if (strategy == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "strategy is null (use removeStrategy)");
        }
        Native.setStrategy(live(), this, name(point), strategy.values());
    }

    /** Removes the strategy of {@code point}; its counters stay. */
    public void removeStrategy(String point) {
        Native.setStrategy(live(), this, name(point), null);
    }

    /** The stats of {@code point} now. */
    public Stats stats(String point) {
        return stats(point, System.currentTimeMillis());
    }

    /** The stats of {@code point} at {@code nowMs}; all zero for an unknown point. */
    public Stats stats(String point, long nowMs) {
        long[] out = new long[CoreTables.STATS_NAMES.length];
        Native.stats(live(), this, name(point), nowMs, out);
        return new Stats(out);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return handle == 0;
    }

    /**
     * Closes the client: later calls throw {@code CLOSED}, a second close does
     * nothing. Its native memory is freed once the client is garbage.
     */
    @Override
    public void close() {
        handle = 0;
    }

    private long live() {
        long table = handle;
        if (table == 0) {
            throw SdsException.of(ErrorCode.CLOSED);
        }
        return table;
    }

    private int pointId(long table, String point) {
        if (point == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
        }
        Integer id = points.get(point);
        if (id != null) {
            return id;
        }
        int created = Native.pointId(table, this, name(point));
        points.putIfAbsent(point, created);
        return created;
    }

    private static byte[] name(String point) {
        if (point == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
        }
        return point.getBytes(StandardCharsets.UTF_8);
    }
}
