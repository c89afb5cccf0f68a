package io.sdsnative;

/**
 * The JNI methods of the native library. Internal: the public API is
 * {@link Client}, {@link Strategy} and the SDS drop-in classes, which call
 * these. Hot-path methods take a handle and primitives and return one
 * {@code long}; every method throws {@link SdsException} itself with the
 * core's code and message (a negative result is a fallback for {@link #check}).
 */
public final class Native {
    static {
        NativeLibrary.load();
    }

    private Native() {}

    // Tables (Client).
    static native long tableNew(int capacity);

    /** A table in the file of {@code nameOrPath} (UTF-8), shared by the processes that open it. */
    static native long tableOpenShared(byte[] nameOrPath, int capacity, int mode);

    /** The file of a shared table; null for a private one. */
    static native String tableSharedPath(long table, Object owner);

    static native void tableFree(long table);

    static native int pointId(long table, Object owner, byte[] name);

    static native long enter(long table, Object owner, int point, long nowMs, int flags);

    static native long exit(long table, Object owner, long startMs, long packed, long nowMs, int outcome);

    static native void setStrategy(long table, Object owner, byte[] name, long[] values);

    static native void stats(long table, Object owner, byte[] name, long nowMs, long[] out);

    // Key tables (KeyedLimit). The rule crosses as KeyRule's tokens (ServiceConfig's encoding). A key
    // crosses as {@code bytes} and its length, or when {@code bytes} is null as {@code text} (its UTF-8;
    // a lone surrogate is refused). Per-key calls return 1 or 0 (admitted, held) and write their numbers
    // to {@code out}; they throw SdsException themselves.

    /** A private key table of {@code capacity} keys. */
    static native long keysNew(String[] rule, long capacity);

    /** The key table in the file of {@code nameOrPath} (UTF-8), shared by the processes that open it. */
    static native long keysOpenShared(byte[] nameOrPath, String[] rule, long capacity, int mode);

    static native void keysFree(long keys);

    /** The shared table's file; null for a private one. */
    static native String keysPath(long keys, Object owner);

    /** The rule's kind: rate, fixedWindow, slidingWindow or inFlight. */
    static native String keysKind(long keys, Object owner);

    /** Writes capacity, resident, evictions, lossy evictions to {@code out}. */
    static native void keysStats(long keys, Object owner, long[] out);

    /** Writes limit, remaining, resetMs, retryAfterMs, windowMs to {@code out}; 1 if admitted. */
    static native long keysDecide(long keys, Object owner, byte[] bytes, int len, String text, long cost,
            long nowMs, long[] out);

    /** The address of a thread's scratch buffer (direct, at least 320 bytes); see KeyedLimit. */
    static native long keysScratchAddress(java.nio.ByteBuffer scratch);

    /**
     * As {@link #keysDecide} for the {@code len} bytes of key at offset 64 of the scratch memory at
     * {@code scratch}, the five numbers written at its offset 0 (native byte order): no JNI callback.
     */
    static native long keysDecideScratch(long keys, Object owner, long scratch, int len, long cost, long nowMs);

    /** As {@link #keysDecide} for a cost of 0, nothing taken. */
    static native long keysPeek(long keys, Object owner, byte[] bytes, int len, String text, long nowMs,
            long[] out);

    /** 1 if the key held units. */
    static native long keysRelease(long keys, Object owner, byte[] bytes, int len, String text, long units);

    /** 1 if the table held the key. */
    static native long keysReset(long keys, Object owner, byte[] bytes, int len, String text);

    /** How many keys the table held. */
    static native long keysResetAll(long keys, Object owner);

    /**
     * Adds {@code sign} (1, -1, or 0 to read) times {@code units} to the key's count; writes count,
     * previous, resetMs to {@code out}.
     */
    static native long keysCount(long keys, Object owner, byte[] bytes, int len, String text, int sign,
            long units, long nowMs, long[] out);

    static native long keysCapacity(long keys, Object owner);

    /**
     * Lists the key table in the process's metrics under {@code name} (null: the shared file's name, else
     * {@code private-N}): the label it shows under.
     */
    static native String keysRegister(long keys, Object owner, String name);

    // Metrics (Client.metrics, Client.prometheusText): an exporter per client. A service handle is 0 for
    // none (the last state kept of a stopped one is shown), else a live one with its object as owner.

    static native long metricsNew();

    static native void metricsFree(long metrics);

    /** Keeps the last state of the stopped service {@code service}, shown while the client has no other. */
    static native void metricsKeepStopped(long metrics, Object owner, long service, Object serviceOwner);

    /**
     * Every family with samples at {@code nowMs}: {@code String[]} texts (each once), {@code int[]} layout,
     * {@code double[]} values (see Client.metrics).
     */
    static native Object[] metricsCollect(long metrics, Object owner, long table, long agent, Object agentOwner,
            long cluster, Object clusterOwner, long nowMs);

    /** The Prometheus text (0.0.4), or OpenMetrics 1.0 text, of a collection at {@code nowMs}. */
    static native String metricsText(long metrics, Object owner, long table, long agent, Object agentOwner,
            long cluster, Object clusterOwner, long nowMs, boolean openMetrics);

    /** The HTTP Content-Type of that text. */
    static native String metricsContentType(boolean openMetrics);

    // The background services (BackgroundService): AdminAgent, ClusterSync. One handle type for both, so
    // start, status, stop and free are shared.
    /** {@link #serviceStart}'s {@code kind}: the console agent, the cluster sync. */
    static final int AGENT = 0, CLUSTER = 1;

    /**
     * Starts the service {@code kind} for the table {@code table} of {@code owner} from its config's
     * {@link ServiceConfig#encoded() settings}: its handle.
     */
    static native long serviceStart(long table, Object owner, int kind, String[] settings);

    /** The console's returnValueStr of {@code point}; null when it has none. */
    static native String agentReturnValue(long agent, Object owner, String point);

    /** One sync on the calling thread. */
    static native void clusterSyncNow(long cluster, Object owner);

    /** Exact mode: the decision's bits (see ClusterDecision). */
    static native long clusterEnterExact(long cluster, Object owner, String point, long nowMs);

    /**
     * The status values as text (a boolean, a number, text, or null for none), in the order of the service's
     * names; once stopped, the last.
     */
    static native String[] serviceStatus(long service, Object owner);

    /** Stops the service and joins its thread; idempotent. */
    static native void serviceStop(long service, Object owner);

    static native void serviceFree(long service);

    // Strategies.
    static native long[] strategyDefaults();

    static native long[] strategyFromJson(String json);

    /** The validated strategy of one value per field, through the core's builder. */
    static native long[] strategyBuild(long[] values);

    /**
     * Throws the core's error for {@code key}, a name that is no field, given
     * {@code value} (or looked up, when not {@code given}); only called then.
     */
    static native void strategyKeyVerdict(String key, long value, boolean given);

    /** The core's tables of names and the services' status names, one text each (see CoreTables). */
    static native String[] tables();

    // Windows (the core's SlidingWindow), used by the SDS drop-in. {@code owner} is the
    // object holding the handle: passing it keeps it reachable for the whole call. Counts
    // and values ({@code n}, {@code value}) are read as unsigned 64-bit integers ({@code -1L}
    // is 2^64 - 1; see Long.parseUnsignedLong); a bucket saturates at 2^32 - 1. Results are
    // never negative: a negative one is an error code (pass it to check), and the call has
    // thrown SdsException.

    /** A window of {@code buckets} buckets of {@code bucketMs} ms over a ring of {@code ring}. */
    public static native long windowNew(long bucketMs, int buckets, int ring);

    /** Frees a window; 0 is a no-op. */
    public static native void windowFree(long window);

    /** Adds one: sliding sum in the high 32 bits, bucket in the low 32. */
    public static native long windowIncrement(long window, Object owner, long timeMs);

    /**
     * Adds one for an event of {@code atMs} recorded at the present {@code nowMs} (in
     * {@code atMs}'s bucket while the ring still holds it, else in {@code nowMs}'s; never
     * restarting a newer bucket), packed as {@link #windowIncrement}: the sliding sum of the
     * window ending at the bucket written in the high 32 bits, that bucket in the low 32.
     */
    public static native long windowIncrementAt(long window, Object owner, long atMs, long nowMs);

    /**
     * Adds {@code n} (unsigned) to the bucket of {@code timeMs}: the bucket's value. When
     * {@code tally} is not null, also writes the bucket's value and the sliding sum ending
     * there to {@code tally[0]} and {@code tally[1]}.
     */
    public static native long windowAdd(long window, Object owner, long timeMs, long n, long[] tally);

    /** The value of the bucket of {@code timeMs}. */
    public static native long windowBucket(long window, Object owner, long timeMs);

    /** The sliding sum at {@code timeMs}. */
    public static native long windowSum(long window, Object owner, long timeMs);

    /** The sum of the last whole cycle before {@code timeMs}. */
    public static native long windowLastCycle(long window, Object owner, long timeMs);

    /** Sets the bucket of {@code timeMs} to {@code value} (unsigned). */
    public static native long windowSet(long window, Object owner, long timeMs, long value);

    /** Zeroes the whole cycle after the one of {@code timeMs}. */
    public static native long windowClearNextCycle(long window, Object owner, long timeMs);

    /** Raises the bucket of {@code timeMs} to at least {@code value} (unsigned): the bucket's value. */
    public static native long windowFetchMax(long window, Object owner, long timeMs, long value);

    /**
     * Adds {@code n} (unsigned) for an event of {@code atMs} recorded at the present
     * {@code nowMs} (in {@code atMs}'s bucket while the ring still holds it, else in
     * {@code nowMs}'s; never restarting a newer bucket): the value of the bucket written.
     */
    public static native long windowAddAt(long window, Object owner, long atMs, long nowMs, long n);

    /** Throws the exception of a negative hot-path result; returns {@code result} otherwise. */
    public static long check(long result) {
        if (result < 0) {
            throw SdsException.of(ErrorCode.fromNumber((int) -result));
        }
        return result;
    }
}
