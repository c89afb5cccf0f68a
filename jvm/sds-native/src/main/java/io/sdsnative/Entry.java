package io.sdsnative;

/**
 * One request between {@link Client#enter} and its exit. It carries what the
 * exit needs (start time, permit, probe), so it may cross threads and async
 * callbacks. Use it with try-with-resources: {@link #close()} is the exit.
 *
 * <pre>{@code
 * try (Entry e = client.enter("order")) {
 *     if (e.isDowngraded()) return fallback();
 *     Thread.sleep(e.waitMs()); // 0 unless the point is paced (maxQueueingTimeMs)
 *     try { return work(); } catch (RuntimeException ex) { e.error(ex); throw ex; }
 * }
 * }</pre>
 *
 * {@link Client#call}, {@link Client#run} and {@link Client#callAsync} do
 * all of this, the wait included.
 *
 * An entry is meant for one thread at a time: exit it once (later calls do
 * nothing).
 *
 * <p>On a point whose strategy has a {@code concurrentThreshold} (set through
 * this client), an entry holding a permit is watched: if it is garbage
 * collected without an exit, its permit comes back at the client's next
 * {@code enter} of a point with a limit, next refused {@code enter} or next
 * {@code stats}, and a warning naming its point is logged (once per entry).
 * Watching costs two small objects per entry, so entries of other points are
 * not watched: a dropped one there only stays counted in {@code concurrent}
 * (in flight).
 */
public final class Entry implements AutoCloseable {
    // The core's packed entry (point, state, reason, probe generation), read
    // with the core's layout.
    private static final long DOWNGRADED = CoreTables.PACKED_LAYOUT[0];
    private static final int REASON_SHIFT = (int) CoreTables.PACKED_LAYOUT[1];
    private static final long REASON_MASK = CoreTables.PACKED_LAYOUT[2];
    private static final long PERMIT = CoreTables.PACKED_LAYOUT[3];
    private static final long PROBE = CoreTables.PACKED_LAYOUT[4];
    /** Where a probe's generation or, for any other entry, its wait in ms sits. */
    private static final int WAIT_SHIFT = (int) CoreTables.PACKED_LAYOUT[5];
    private static final long WAIT_MASK = (1L << (CoreTables.PACKED_LAYOUT[6] - WAIT_SHIFT)) - 1;

    private final Client client;
    private final long startMs;
    private final long packed;
    /** Set when the entry holds a permit: returns it if the entry is dropped. */
    private DroppedEntries.Watch watch;
    private boolean failed;
    private boolean exited;

    Entry(Client client, long startMs, long packed) {
        this.client = client;
        this.startMs = startMs;
        this.packed = packed;
    }

    /**
     * An entry holding a permit, watched in case it is dropped. Its own
     * allocation site, so the JIT can still remove the unwatched entries.
     */
    static Entry watched(Client client, String point, long startMs, long packed) {
        Entry entry = new Entry(client, startMs, packed);
        entry.watch = client.watch(entry, point, startMs, packed);
        return entry;
    }

    /** Whether the caller must skip the real work and use its fallback. */
    public boolean isDowngraded() {
        return (packed & DOWNGRADED) != 0;
    }

    /** Why it was downgraded; null when it was not. */
    public Reason reason() {
        return Reason.fromCode((int) ((packed >>> REASON_SHIFT) & REASON_MASK));
    }

    /**
     * How many ms the caller must wait before it runs the request: a paced
     * point ({@code maxQueueingTimeMs}) spaces its requests evenly at its
     * token-bucket rate. 0 on any other point, for a downgraded entry and
     * for a probe. The library never sleeps in {@link Client#enter}: wait
     * this long yourself ({@code Thread.sleep(e.waitMs())}), or use
     * {@link Client#call}, which does. A timeout ({@code timeoutThreshold})
     * is measured from {@link #runAtMs()}, so the wait is not counted as
     * slowness.
     */
    public long waitMs() {
        return (packed & PROBE) != 0 ? 0 : (packed >>> WAIT_SHIFT) & WAIT_MASK;
    }

    /** When the request may run: {@link #startMs()} + {@link #waitMs()}. */
    public long runAtMs() {
        return startMs + waitMs();
    }

    /** The time of the enter, in ms. */
    public long startMs() {
        return startMs;
    }

    /**
     * Marks the request as failed: the exit counts one exception. As SDS's
     * {@code exceptionSign}, a null error and the library's own downgrade
     * error (an {@link SdsException} with code {@link ErrorCode#DOWNGRADED})
     * do not count; every other error does.
     */
    public Entry error(Throwable error) {
        if (error != null && !isDowngradeError(error)) {
            failed = true;
        }
        return this;
    }

    private static boolean isDowngradeError(Throwable error) {
        return error instanceof SdsException && ((SdsException) error).code() == ErrorCode.DOWNGRADED;
    }

    /** Exits now. */
    @Override
    public void close() {
        exit(System.currentTimeMillis());
    }

    /**
     * Exits at {@code nowMs}: returns the permit, counts the exception and
     * the timeout, settles a probe. Only the first call counts.
     *
     * @throws SdsException {@code CLOSED} when the client was closed first
     */
    public void exit(long nowMs) {
        if (exited) {
            return;
        }
        if (nowMs < 0) {
            // The core refuses the time before it touches anything (without
            // the permit, so nothing could be returned twice): the entry stays
            // open and a later exit with a valid time still settles it.
            client.exit(startMs, packed & ~PERMIT, nowMs, failed);
        }
        exited = true;
        long settled = packed;
        if (watch != null && !client.settle(watch)) {
            settled &= ~PERMIT; // returned already, for a collected-looking entry
        }
        client.exit(startMs, settled, nowMs, failed);
    }

    @Override
    public String toString() {
        return "Entry{startMs=" + startMs + ", downgraded=" + isDowngraded() + ", reason=" + reason()
                + ", waitMs=" + waitMs() + "}";
    }
}
