package io.sdsnative;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The native SDS engine for a fixed number of points: this client's own
 * ({@link #Client(int)}), or a table in a file that every process of the host
 * may open ({@link #openShared(String, int)}). Thread-safe; the hot
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
    /** The mode a shared table file is created with by default: this user only. */
    public static final int SHARED_MODE = 0600;
    /** The mode for processes of one group under several users: the group may read and write too. */
    public static final int SHARED_GROUP_MODE = 0660;

    private static final int PRESSURE_TEST = 1;
    /** The core's packed-entry bit of an entry that holds a concurrency permit. */
    private static final long PERMIT = CoreTables.PACKED_LAYOUT[3];
    /** The core's outcome code for an entry its caller lost. */
    private static final int ABANDONED = 2;
    private static final long DOWNGRADED = CoreTables.PACKED_LAYOUT[0];

    private final NativeHandle table;
    private final DroppedEntries dropped = new DroppedEntries();
    /** Points by name: the name crosses to native code once per point. */
    private final ConcurrentHashMap<String, Point> points = new ConcurrentHashMap<>();
    /** The console agents and cluster syncs of this client still running: {@link #close()} closes them. */
    private final Set<BackgroundService<?>> services =
            Collections.newSetFromMap(new ConcurrentHashMap<BackgroundService<?>, Boolean>());
    /** The metrics' exporter (its counters never go back). */
    private final NativeHandle metrics;
    /** The console agent and the cluster sync started last, running or not: the ones the metrics show. */
    private volatile AdminAgent lastAgent;
    private volatile ClusterSync lastCluster;

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
        this(Native.tableNew(capacity));
    }

    private Client(long nativeTable) {
        NativeHandle handle = new NativeHandle(nativeTable, Native::tableFree);
        this.table = handle;
        NativeReclaimer.whenCollected(this, handle::close);
        NativeHandle exporter = new NativeHandle(Native.metricsNew(), Native::metricsFree);
        this.metrics = exporter;
        NativeReclaimer.whenCollected(this, exporter::close);
    }

    /**
     * A client on the table in the file {@code nameOrPath}, shared with every
     * process of the host that opens the same file: visits, permits in flight,
     * strategies and delays count for all of them. A bare name (no {@code /})
     * is a file under {@code /dev/shm}; anything else is a path. The first
     * process creates the file (mode {@link #SHARED_MODE}), the others attach;
     * every one must give the same {@code capacity}. Everything else works as
     * on a private client; {@code close()} detaches this client (the file
     * stays). See "Several worker processes" in the README.
     *
     * @throws SdsException {@code NULL_ARGUMENT}; {@code INVALID_ARGUMENT} for
     *     an empty name, {@code .} or {@code ..}, a NUL character or a lone
     *     surrogate, and for a file that is refused (a symbolic link, not a
     *     regular file, another user's, granting more than the mode, not a
     *     table, truncated, still being initialised after 5 s, every process
     *     slot taken, a system call failing); {@code INVALID_CAPACITY} outside
     *     1..=2^20; {@code LAYOUT_MISMATCH} for a table of another capacity or
     *     layout (the message names the first field that differs, the file's
     *     value and this process's). Every message about a file names it.
     */
    public static Client openShared(String nameOrPath, int capacity) {
        return openShared(nameOrPath, capacity, SHARED_MODE);
    }

    /**
     * As {@link #openShared(String, int)}, with the {@code mode} a new file is
     * created with and the most an existing one may grant: {@code 0600}
     * ({@link #SHARED_MODE}) or {@code 0660} ({@link #SHARED_GROUP_MODE}); the
     * process's umask still applies on creation.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for another mode, and as
     *     {@link #openShared(String, int)}
     */
    public static Client openShared(String nameOrPath, int capacity, int mode) {
        if (nameOrPath == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "shared table name is null");
        }
        return new Client(Native.tableOpenShared(utf8(nameOrPath, "shared table name"), capacity, mode));
    }

    /**
     * The path of the shared table's file ({@code /dev/shm/...} for a bare
     * name); null for a client's own table.
     */
    public String sharedPath() {
        return table.call(handle -> Native.tableSharedPath(handle, this));
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
        table.run(this::returnDroppedPermits);
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
            // The core's outcome "abandoned": an exception (the request never
            // said it succeeded), a failed probe, no timeout and no adaptive
            // sample (when it ended is unknown), so its start serves as the time.
            Native.exit(handle, this, w.startMs, w.packed, w.startMs, ABANDONED);
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
        table.run(handle -> {
            Native.setStrategy(handle, this, name, strategy.values());
            p.limited = strategy.limitsConcurrency();
        });
    }

    /** Removes the strategy of {@code point}; its counters stay. */
    public void removeStrategy(String point) {
        byte[] name = name(point);
        table.run(handle -> {
            Native.setStrategy(handle, this, name, null);
            Point p = points.get(point);
            if (p != null) {
                p.limited = false;
            }
        });
    }

    /** The stats of {@code point} now. */
    public Stats stats(String point) {
        return stats(point, System.currentTimeMillis());
    }

    /** The stats of {@code point} at {@code nowMs}; all zero for an unknown point. */
    public Stats stats(String point, long nowMs) {
        byte[] name = name(point);
        long[] out = new long[CoreTables.STATS_NAMES.length];
        return table.call(handle -> {
            returnDroppedPermits(handle);
            Native.stats(handle, this, name, nowMs, out);
            return new Stats(out);
        });
    }

    /**
     * Runs {@code work} under {@code point}, entered now: returns what it
     * returns. When the request is downgraded, {@code work} is not called and
     * {@code fallback} gets the {@link Reason} instead (a null fallback: an
     * {@link SdsException} with {@link ErrorCode#DOWNGRADED} is thrown). On a
     * paced point ({@code maxQueueingTimeMs}) the calling thread first sleeps
     * the entry's {@link Entry#waitMs()}, so calls run evenly spaced at the
     * point's rate. An exception thrown by {@code work} counts as the
     * request's exception (see {@link Entry#error}) and is rethrown; the
     * entry exits when {@code work} ends, either way.
     *
     * <p>A thread interrupted during the wait does not run {@code work}: the
     * entry exits at once (counted as a visit, not as an exception nor a
     * timeout; its place in the pacing is not given back), the interrupt flag
     * is set again, and a {@link CancellationException} is thrown.
     *
     * @throws SdsException as {@link #enter(String)}; {@code DOWNGRADED} when
     *     downgraded without a fallback
     * @throws CancellationException when interrupted during a paced wait
     */
    public <T> T call(String point, Supplier<? extends T> work, Function<? super Reason, ? extends T> fallback) {
        if (work == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "work is null");
        }
        Entry e = enter(point);
        if (e.isDowngraded()) {
            e.close();
            if (fallback == null) {
                throw downgraded(point, e.reason());
            }
            return fallback.apply(e.reason());
        }
        awaitTurn(point, e);
        try {
            return work.get();
        } catch (RuntimeException | Error ex) {
            e.error(ex);
            throw ex;
        } finally {
            e.close();
        }
    }

    /**
     * As {@link #call(String, Supplier, Function)} without a fallback: a
     * downgraded request throws {@link SdsException} with
     * {@link ErrorCode#DOWNGRADED}.
     */
    public <T> T call(String point, Supplier<? extends T> work) {
        return call(point, work, null);
    }

    /**
     * As {@link #call(String, Supplier, Function)} for work without a result:
     * a downgraded request runs {@code fallback} with its reason (null: throws
     * {@code DOWNGRADED}).
     */
    public void run(String point, Runnable work, Consumer<? super Reason> fallback) {
        if (work == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "work is null");
        }
        call(point, () -> {
            work.run();
            return null;
        }, fallback == null ? null : reason -> {
            fallback.accept(reason);
            return null;
        });
    }

    /** As {@link #run(String, Runnable, Consumer)} without a fallback. */
    public void run(String point, Runnable work) {
        run(point, work, null);
    }

    /**
     * Starts {@code work} (which returns a stage: asynchronous work) under
     * {@code point}, entered now, without blocking the caller: on a paced
     * point {@code work} is started by {@code scheduler} once the entry's
     * {@link Entry#waitMs()} has passed (at once, on the calling thread, when
     * there is no wait). The entry exits when the stage completes; an
     * exceptional completion counts as the request's exception. The future
     * completes as the stage does; when downgraded, with
     * {@code fallback.apply(reason)} (null fallback: exceptionally, with
     * {@link SdsException} {@code DOWNGRADED}) and {@code work} is not called.
     * Cancelling the future before {@code work} started cancels the wait and
     * exits the entry (a visit that never ran); afterwards, the work goes on
     * and the entry exits when it ends. An exception thrown by {@code work}
     * itself or by {@code fallback}, and a scheduler that refuses the task,
     * complete the future exceptionally (the entry exits; a refused task
     * counts no exception).
     *
     * @throws SdsException as {@link #enter(String)} (nothing was counted)
     */
    public <T> CompletableFuture<T> callAsync(String point, ScheduledExecutorService scheduler,
            Supplier<? extends CompletionStage<T>> work, Function<? super Reason, ? extends T> fallback) {
        if (scheduler == null || work == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, scheduler == null ? "scheduler is null" : "work is null");
        }
        Entry e = enter(point);
        if (e.isDowngraded()) {
            e.close();
            CompletableFuture<T> result = new CompletableFuture<>();
            try {
                if (fallback == null) {
                    result.completeExceptionally(downgraded(point, e.reason()));
                } else {
                    result.complete(fallback.apply(e.reason()));
                }
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
            return result;
        }
        return new PacedCall<T>(e, work).start(scheduler);
    }

    /** As {@link #callAsync(String, ScheduledExecutorService, Supplier, Function)} without a fallback. */
    public <T> CompletableFuture<T> callAsync(String point, ScheduledExecutorService scheduler,
            Supplier<? extends CompletionStage<T>> work) {
        return callAsync(point, scheduler, work, null);
    }

    /** Sleeps an admitted entry's wait; interrupted: exits it and throws (see {@link #call}). */
    private static void awaitTurn(String point, Entry e) {
        long wait = e.waitMs();
        if (wait == 0) {
            return;
        }
        try {
            TimeUnit.MILLISECONDS.sleep(wait);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            e.close();
            CancellationException cancelled = new CancellationException("sds-native: interrupted during the "
                    + wait + " ms paced wait of point \"" + point + "\"; the work did not run");
            cancelled.initCause(interrupted);
            throw cancelled;
        }
    }

    private static SdsException downgraded(String point, Reason reason) {
        return new SdsException(ErrorCode.DOWNGRADED, "point \"" + point + "\" is downgraded (" + reason + ")");
    }

    /**
     * Connects this client's table to the SDS console: a native thread pulls
     * the app's strategies at once and every {@code pullIntervalMs} and applies
     * each set whole (a point missing from it loses its strategy; a strategy
     * the table refuses is logged and the point keeps its old one), and, when
     * this process is the host's reporter (always on a private table; one
     * process per shared table file), uploads the last whole cycle's
     * statistics at second 5 of every 10 s cycle. See {@link AdminAgent} and
     * "Managed by the SDS console" in the README.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} with the agent's message
     *     ({@code "cannot start the SDS agent: ..."}) for a setting it does not
     *     have, a value its setting does not take, or a config it refuses (no
     *     server, a blank app name, TLS files it cannot use, ...);
     *     {@code NULL_ARGUMENT} for a null config; {@code CLOSED}
     */
    public AdminAgent connectAdmin(AdminConfig config) {
        return connect(config, "admin config", AdminAgent::new);
    }

    /**
     * Makes {@code config}'s points cluster points of this client's table,
     * whose thresholds hold for every instance syncing them through the same
     * Redis: a native thread pushes this table's counts of them and reads
     * back the others' once per {@code syncMs}, and every decision (still
     * local, still {@link #enter}) reads local + remote counts. Never waits
     * for Redis: an unreachable server shows in {@link ClusterSync#status()}.
     * Other points stay local. See {@link ClusterSync} and "Cluster-wide
     * limits (Redis)" in the README.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} with the cluster crate's
     *     message ({@code "invalid cluster configuration: ..."}) for a setting
     *     it does not have, a value its setting does not take, or a config it
     *     refuses (no URL, a point name out of range, TLS files it cannot use,
     *     ...); {@code TABLE_FULL} when the table has no room for a point;
     *     {@code NULL_ARGUMENT} for a null config; {@code CLOSED}
     */
    public ClusterSync connectCluster(ClusterConfig config) {
        return connect(config, "cluster config", ClusterSync::new);
    }

    /** Starts a service with {@code config}'s settings and attaches it: {@link #close()} closes it. */
    private <T extends BackgroundService<?>> T connect(
            ServiceConfig config, String what, BiFunction<Client, Long, T> service) {
        if (config == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, what + " is null");
        }
        T started = table.call(handle -> service.apply(this,
                Native.serviceStart(handle, this, config.kind, config.encoded())));
        services.add(started);
        if (started instanceof AdminAgent) {
            lastAgent = (AdminAgent) started;
        } else {
            lastCluster = (ClusterSync) started;
        }
        if (table.isClosed()) {
            started.close(); // closed meanwhile: close() may have missed it
        }
        return started;
    }

    void forget(BackgroundService<?> service) {
        services.remove(service);
    }

    /**
     * Called by a service stopped, its handle still live: if it is the one
     * the metrics show, they keep its last state (not running).
     */
    void stopped(BackgroundService<?> service, long serviceHandle) {
        if (service != lastAgent && service != lastCluster) {
            return;
        }
        long handle = metrics.tryAcquire();
        if (handle == 0) {
            return; // the client is closed: no metrics to show it
        }
        try {
            Native.metricsKeepStopped(handle, this, serviceHandle, service);
        } finally {
            metrics.release();
        }
    }

    /**
     * This client's metrics now: see {@link #metrics(long)}.
     *
     * @throws SdsException {@code CLOSED}
     */
    public List<MetricFamily> metrics() {
        return metrics(System.currentTimeMillis());
    }

    /**
     * This client's metrics at {@code nowMs}, every family with samples: its
     * table's points (requests, downgrades by reason, exceptions, timeouts,
     * in flight), the table's size, its console agent and cluster sync (the
     * ones started last; a stopped one shows its last state and
     * {@code _up} 0), and every keyed limit of this process that is open
     * ({@link KeyedLimit#metricsLabel()}). On a shared table the counts are
     * the host's. Counters never go back from one call to the next. See
     * "Metrics" in the README; {@link io.sdsnative.metrics.SdsMeterBinder}
     * registers them with Micrometer.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a negative time; {@code CLOSED}
     */
    public List<MetricFamily> metrics(long nowMs) {
        return MetricFamily.decode(withSources((m, t, a, agent, c, cluster) ->
                Native.metricsCollect(m, this, t, a, agent, c, cluster, nowMs)));
    }

    /** {@link #prometheusText(boolean, long)} in the Prometheus text format (0.0.4), now. */
    public String prometheusText() {
        return prometheusText(false, System.currentTimeMillis());
    }

    /** {@link #prometheusText(boolean, long)} now. */
    public String prometheusText(boolean openMetrics) {
        return prometheusText(openMetrics, System.currentTimeMillis());
    }

    /**
     * The exposition of {@link #metrics(long)}: the Prometheus text format
     * 0.0.4, or with {@code openMetrics} OpenMetrics 1.0 text (ending in
     * {@code # EOF}). Serve it with {@link #prometheusContentType(boolean)}.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a negative time; {@code CLOSED}
     */
    public String prometheusText(boolean openMetrics, long nowMs) {
        return withSources((m, t, a, agent, c, cluster) ->
                Native.metricsText(m, this, t, a, agent, c, cluster, nowMs, openMetrics));
    }

    /**
     * The HTTP {@code Content-Type} of {@link #prometheusText(boolean)}:
     * {@code text/plain; version=0.0.4; charset=utf-8}, or OpenMetrics'.
     */
    public static String prometheusContentType(boolean openMetrics) {
        return Native.metricsContentType(openMetrics);
    }

    /**
     * A native call on the metrics' and table's handles and those of the
     * services shown with their owners (0 and null: none live).
     */
    private interface SourcesCall<T> {
        T apply(long metrics, long table, long agent, Object agentOwner, long cluster, Object clusterOwner);
    }

    private <T> T withSources(SourcesCall<T> call) {
        AdminAgent agent = lastAgent;
        ClusterSync cluster = lastCluster;
        return table.call(t -> metrics.call(m -> {
            // A service closed meanwhile is 0: its last state was kept before its handle closed.
            long a = agent == null ? 0 : agent.tryAcquire();
            try {
                long c = cluster == null ? 0 : cluster.tryAcquire();
                try {
                    return call.apply(m, t, a, agent, c, cluster);
                } finally {
                    if (c != 0) {
                        cluster.release();
                    }
                }
            } finally {
                if (a != 0) {
                    agent.release();
                }
            }
        }));
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return table.isClosed();
    }

    /** How many watches of permit holders are not settled yet (tests). */
    int watching() {
        return dropped.watching();
    }

    /** Slots of the newest array of watches, 0 before the first (tests). */
    int watchCapacity() {
        return dropped.capacity();
    }

    /** Whether the native memory was freed (tests). */
    boolean isFreed() {
        return table.isFreed();
    }

    /**
     * Closes the client, its console agents and its cluster syncs (each
     * joined, see {@link AdminAgent#close()} and {@link ClusterSync#close()}):
     * later calls throw {@code CLOSED}, a second
     * close does nothing. The native memory is freed at once, or by the
     * last call still running in another thread when it ends.
     */
    @Override
    public void close() {
        table.close();
        metrics.close();
        for (BackgroundService<?> service : new ArrayList<>(services)) {
            service.close();
        }
    }

    private Point point(String name) {
        Point known = name == null ? null : points.get(name);
        return known != null ? known : newPoint(name);
    }

    private Point newPoint(String name) {
        byte[] bytes = name(name);
        return table.call(handle -> {
            Point created = new Point(Native.pointId(handle, this, bytes));
            Point raced = points.putIfAbsent(name, created);
            return raced != null ? raced : created;
        });
    }

    /** The UTF-8 bytes of a point name; a lone surrogate has none, so it is refused. */
    private static byte[] name(String point) {
        if (point == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
        }
        return utf8(point, "point name");
    }

    /** The UTF-8 bytes of {@code text}, the {@code what} of a call; refused with a lone surrogate. */
    private static byte[] utf8(String text, String what) {
        int bad = loneSurrogate(text);
        if (bad >= 0) {
            throw new SdsException(ErrorCode.INVALID_ARGUMENT, String.format(
                    "%s is not valid UTF-16: lone surrogate U+%04X at index %d",
                    what, (int) text.charAt(bad), bad));
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Refuses a null {@code text} ({@code NULL_ARGUMENT}) and one that has no
     * UTF-8 form ({@code INVALID_ARGUMENT}), as {@link #utf8} does, for texts
     * JNI passes as strings.
     */
    static void checkText(String text, String what) {
        if (text == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, what + " is null");
        }
        utf8(text, what);
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
