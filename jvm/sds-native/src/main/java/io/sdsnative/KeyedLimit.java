package io.sdsnative;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Per-key limits with a hard memory bound: one {@link KeyRule} for every key
 * (a user, an API key, an IP address), over a table of {@code capacity} keys
 * that never grows (16 bytes a key; give it about twice the keys that owe
 * something at once). Private to this process ({@link #create}) or in a file
 * every process of the host shares ({@link #shared}). Thread-safe, lock-free.
 *
 * <p>A key is a {@code String} (its UTF-8 bytes; a lone surrogate, which has
 * none, is refused with {@code INVALID_ARGUMENT}) or a {@code byte[]}: any
 * bytes, the empty key included; {@code "é"} and the bytes {@code c3 a9} are
 * one key. Calls without {@code nowMs} read {@link System#currentTimeMillis()},
 * like {@link Client#enter(String)}. A call given a null key throws
 * {@code NULL_ARGUMENT}.
 *
 * <p>Every open limit shows in the metrics of every {@link Client} of the
 * process ({@link Client#metrics()}: its decisions, keys and evictions) under
 * its {@link #metricsLabel()}: the name given to {@link #create(KeyRule, long,
 * String)} or {@link #shared(String, KeyRule, long, int, String)}, else a
 * shared table's file name, else {@code private-N}. A closed one leaves them.
 *
 * <p>Close it when done ({@code close()} is idempotent; later calls throw
 * {@code CLOSED}; a shared table's file stays). One never closed is freed once
 * it is garbage.
 */
public final class KeyedLimit implements AutoCloseable {
    /** The numbers of an answer, filled by the native call: one array per thread, so no allocation. */
    private static final ThreadLocal<long[]> OUT = ThreadLocal.withInitial(() -> new long[5]);
    /** Where the core's table of a key table's counters puts each of {@link KeyStats}'s, found by name. */
    private static final int[] KEY_STATS = CoreTables.keyStatsIndexes(
            "capacity", "resident", "evictions", "lossyEvictions", "admitted", "refused");
    /** The hot path's memory: one per platform thread (see {@link Scratch}). */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
    /** {@code Thread.isVirtual()} on Java 21+, null before. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private final NativeHandle keys;
    private final long capacity;
    private final String kind;
    private final String metricsLabel;

    private KeyedLimit(long nativeKeys, String name) {
        NativeHandle handle = new NativeHandle(nativeKeys, Native::keysFree);
        this.keys = handle;
        NativeReclaimer.whenCollected(this, handle::close);
        this.capacity = keys.call(h -> Native.keysCapacity(h, this));
        this.kind = keys.call(h -> Native.keysKind(h, this));
        this.metricsLabel = keys.call(h -> Native.keysRegister(h, this, name));
    }

    /** Refuses a name with no UTF-8 form; null is no name. */
    private static String metricsName(String name) {
        if (name != null) {
            Client.checkText(name, "keyed limit name");
        }
        return name;
    }

    /**
     * A table of this process of {@code capacity} keys (rounded up to
     * buckets of 4), allocated up front.
     *
     * @throws SdsException {@code INVALID_STRATEGY} or {@code UNKNOWN_FIELD}
     *     for a rule the core refuses (its message); {@code INVALID_CAPACITY}
     *     for a capacity out of range or memory that cannot be had;
     *     {@code NULL_ARGUMENT} for a null rule
     */
    public static KeyedLimit create(KeyRule rule, long capacity) {
        return create(rule, capacity, null);
    }

    /**
     * As {@link #create(KeyRule, long)}, shown in metrics as {@code name}
     * (its {@code limit} label; null: {@code private-N}).
     *
     * @throws SdsException as {@link #create(KeyRule, long)};
     *     {@code INVALID_ARGUMENT} for a name that is not valid UTF-16
     */
    public static KeyedLimit create(KeyRule rule, long capacity, String name) {
        String label = metricsName(name);
        return new KeyedLimit(Native.keysNew(encoded(rule), capacity), label);
    }

    /** {@link #shared(String, KeyRule, long, int)} with mode {@link Client#SHARED_MODE}. */
    public static KeyedLimit shared(String nameOrPath, KeyRule rule, long capacity) {
        return shared(nameOrPath, rule, capacity, Client.SHARED_MODE);
    }

    /**
     * The key table in the file {@code nameOrPath}, shared with every process
     * of the host that opens it: their calls count against one state per key.
     * A bare name (no {@code /}) is a file under {@code /dev/shm}, as for
     * {@link Client#openShared}; the first process creates it with
     * {@code mode} ({@link Client#SHARED_MODE} or
     * {@link Client#SHARED_GROUP_MODE}), the others attach and must give the
     * same rule and capacity. On an {@code inFlight} file the units of a
     * process killed while holding them are given back.
     *
     * @throws SdsException as {@link #create}; {@code LAYOUT_MISMATCH} for a
     *     file of another rule or capacity; {@code INVALID_ARGUMENT} for a name
     *     or file that is refused (as {@link Client#openShared})
     */
    public static KeyedLimit shared(String nameOrPath, KeyRule rule, long capacity, int mode) {
        return shared(nameOrPath, rule, capacity, mode, null);
    }

    /**
     * As {@link #shared(String, KeyRule, long, int)}, shown in metrics as
     * {@code name} (its {@code limit} label; null: the file's name).
     *
     * @throws SdsException as {@link #shared(String, KeyRule, long, int)};
     *     {@code INVALID_ARGUMENT} for a name that is not valid UTF-16
     */
    public static KeyedLimit shared(String nameOrPath, KeyRule rule, long capacity, int mode, String name) {
        Client.checkText(nameOrPath, "shared key table name");
        String label = metricsName(name);
        byte[] file = nameOrPath.getBytes(StandardCharsets.UTF_8);
        return new KeyedLimit(Native.keysOpenShared(file, encoded(rule), capacity, mode), label);
    }

    private static String[] encoded(KeyRule rule) {
        if (rule == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "key rule is null");
        }
        return rule.encoded();
    }

    /** Decides one unit for {@code key} now. */
    public KeyDecision decide(String key) {
        return decide(key, 1, System.currentTimeMillis());
    }

    /** Decides one unit for {@code key} now. */
    public KeyDecision decide(byte[] key) {
        return decide(key, 1, System.currentTimeMillis());
    }

    /** Decides {@code cost} units for {@code key} now. */
    public KeyDecision decide(String key, long cost) {
        return decide(key, cost, System.currentTimeMillis());
    }

    /** Decides {@code cost} units for {@code key} now. */
    public KeyDecision decide(byte[] key, long cost) {
        return decide(key, cost, System.currentTimeMillis());
    }

    /**
     * Decides {@code cost} units for {@code key} at {@code nowMs}: admitted,
     * they are taken; refused, nothing is (unless the rule counts refused
     * calls).
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a cost outside
     *     1..=2^32 - 1 or a negative time; {@code TABLE_FULL} for a new in-flight key whose every
     *     candidate cell holds units; {@code CLOSED}
     */
    public KeyDecision decide(String key, long cost, long nowMs) {
        return decide(null, nonNull(key), cost, nowMs);
    }

    /** As {@link #decide(String, long, long)}, for a key of any bytes. */
    public KeyDecision decide(byte[] key, long cost, long nowMs) {
        return decide(nonNull(key), null, cost, nowMs);
    }

    private KeyDecision decide(byte[] bytes, String text, long cost, long nowMs) {
        if (IS_VIRTUAL != null && onVirtualThread()) {
            // A virtual thread often lives for one request: a direct buffer each would cost more than it saves.
            return decideCrossing(bytes, text, cost, nowMs);
        }
        Scratch scratch = SCRATCH.get();
        int len = bytes != null ? scratch.put(bytes) : scratch.putAscii(text);
        if (len < 0) {
            return decideCrossing(bytes, text, cost, nowMs);
        }
        // No finally, as in Client.enter: the native call throws only as it returns.
        long handle = keys.acquire();
        long admitted = Native.keysDecideScratch(handle, this, scratch.address, len, cost, nowMs);
        keys.release();
        Native.check(admitted);
        return scratch.decision(admitted == 1);
    }

    /** A key longer than the scratch memory, or text that is not ASCII: it crosses as it is. */
    private KeyDecision decideCrossing(byte[] bytes, String text, long cost, long nowMs) {
        long[] out = OUT.get();
        long handle = keys.acquire();
        long admitted = Native.keysDecide(handle, this, bytes, length(bytes), text, cost, nowMs, out);
        keys.release();
        Native.check(admitted);
        return new KeyDecision(admitted == 1, out[0], out[1], out[2], out[3], out[4]);
    }

    /** The decision a cost of 0 would get now: remaining and reset, nothing taken. */
    public KeyDecision peek(String key) {
        return peek(key, System.currentTimeMillis());
    }

    /** The decision a cost of 0 would get now. */
    public KeyDecision peek(byte[] key) {
        return peek(key, System.currentTimeMillis());
    }

    /** The decision a cost of 0 would get at {@code nowMs}, nothing taken. */
    public KeyDecision peek(String key, long nowMs) {
        return peek(null, nonNull(key), nowMs);
    }

    /** The decision a cost of 0 would get at {@code nowMs}, nothing taken. */
    public KeyDecision peek(byte[] key, long nowMs) {
        return peek(nonNull(key), null, nowMs);
    }

    private KeyDecision peek(byte[] bytes, String text, long nowMs) {
        long[] out = OUT.get();
        long admitted = keys.call(h -> Native.keysPeek(h, this, bytes, length(bytes), text, nowMs, out));
        return new KeyDecision(admitted == 1, out[0], out[1], out[2], out[3], out[4]);
    }

    /** Gives back one unit of an {@code inFlight} rule's key. */
    public boolean release(String key) {
        return release(key, 1);
    }

    /** Gives back one unit of an {@code inFlight} rule's key. */
    public boolean release(byte[] key) {
        return release(key, 1);
    }

    /**
     * Gives back {@code units} (at most what the key holds) of an
     * {@code inFlight} rule's key: whether it held any.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a rule that is not in
     *     flight, or {@code units} outside 1..=2^32 - 1
     */
    public boolean release(String key, long units) {
        String text = nonNull(key);
        return keys.call(h -> Native.keysRelease(h, this, null, 0, text, units)) == 1;
    }

    /** As {@link #release(String, int)}. */
    public boolean release(byte[] key, long units) {
        byte[] bytes = nonNull(key);
        return keys.call(h -> Native.keysRelease(h, this, bytes, bytes.length, null, units)) == 1;
    }

    /** Forgets {@code key} (its next call starts fresh, in-flight units included): whether it was held. */
    public boolean reset(String key) {
        String text = nonNull(key);
        return keys.call(h -> Native.keysReset(h, this, null, 0, text)) == 1;
    }

    /** As {@link #reset(String)}. */
    public boolean reset(byte[] key) {
        byte[] bytes = nonNull(key);
        return keys.call(h -> Native.keysReset(h, this, bytes, bytes.length, null)) == 1;
    }

    /** Forgets every key: how many were held. */
    public long resetAll() {
        return keys.call(h -> Native.keysResetAll(h, this));
    }

    /** {@link #increment(String, long, long)} of one unit now. */
    public KeyCount increment(String key) {
        return increment(key, 1, System.currentTimeMillis());
    }

    /** {@link #increment(String, long, long)} of one unit now. */
    public KeyCount increment(byte[] key) {
        return increment(key, 1, System.currentTimeMillis());
    }

    /** {@link #increment(String, long, long)} now. */
    public KeyCount increment(String key, long units) {
        return increment(key, units, System.currentTimeMillis());
    }

    /** {@link #increment(String, long, long)} now. */
    public KeyCount increment(byte[] key, long units) {
        return increment(key, units, System.currentTimeMillis());
    }

    /**
     * A window rule's store count: counts {@code units} whatever the limit
     * (starting a window if the key has none) and returns the count after it.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a rule that is no
     *     window, or {@code units} outside 1..=2^32 - 1
     */
    public KeyCount increment(String key, long units, long nowMs) {
        return count(null, nonNull(key), 1, units, nowMs);
    }

    /** As {@link #increment(String, long, long)}. */
    public KeyCount increment(byte[] key, long units, long nowMs) {
        return count(nonNull(key), null, 1, units, nowMs);
    }

    /** {@link #decrement(String, long, long)} of one unit now. */
    public KeyCount decrement(String key) {
        return decrement(key, 1, System.currentTimeMillis());
    }

    /** {@link #decrement(String, long, long)} of one unit now. */
    public KeyCount decrement(byte[] key) {
        return decrement(key, 1, System.currentTimeMillis());
    }

    /** {@link #decrement(String, long, long)} now. */
    public KeyCount decrement(String key, long units) {
        return decrement(key, units, System.currentTimeMillis());
    }

    /** {@link #decrement(String, long, long)} now. */
    public KeyCount decrement(byte[] key, long units) {
        return decrement(key, units, System.currentTimeMillis());
    }

    /**
     * Takes up to {@code units} off a live window's count (never below 0,
     * never starting a window): the count after it.
     *
     * @throws SdsException as {@link #increment(String, long, long)}
     */
    public KeyCount decrement(String key, long units, long nowMs) {
        return count(null, nonNull(key), -1, units, nowMs);
    }

    /** As {@link #decrement(String, long, long)}. */
    public KeyCount decrement(byte[] key, long units, long nowMs) {
        return count(nonNull(key), null, -1, units, nowMs);
    }

    /** The key's count now. */
    public KeyCount count(String key) {
        return count(key, System.currentTimeMillis());
    }

    /** The key's count now. */
    public KeyCount count(byte[] key) {
        return count(key, System.currentTimeMillis());
    }

    /**
     * A window rule's count of {@code key} at {@code nowMs} ({@code resetMs}
     * 0 for a key with no fixed window).
     *
     * @throws SdsException {@code INVALID_ARGUMENT} for a rule that is no window
     */
    public KeyCount count(String key, long nowMs) {
        return count(null, nonNull(key), 0, 0, nowMs);
    }

    /** As {@link #count(String, long)}. */
    public KeyCount count(byte[] key, long nowMs) {
        return count(nonNull(key), null, 0, 0, nowMs);
    }

    private KeyCount count(byte[] bytes, String text, int sign, long units, long nowMs) {
        long[] out = OUT.get();
        keys.call(h -> Native.keysCount(h, this, bytes, length(bytes), text, sign, units, nowMs, out));
        return new KeyCount(out[0], out[1], out[2]);
    }

    /** The table's counters (a shared table's: every process's keys and decisions). */
    public KeyStats stats() {
        long[] out = new long[CoreTables.KEY_STATS_NAMES.length];
        keys.run(h -> Native.keysStats(h, this, out));
        int[] at = KEY_STATS;
        return new KeyStats(out[at[0]], out[at[1]], out[at[2]], out[at[3]], out[at[4]], out[at[5]]);
    }

    /** How many keys fit: the capacity asked for, rounded up to buckets of 4. */
    public long capacity() {
        return capacity;
    }

    /**
     * The rule's kind, as the core names it: {@code "rate"}, {@code "fixedWindow"},
     * {@code "slidingWindow"} or {@code "inFlight"} (readable after {@link #close()}).
     */
    public String kind() {
        return kind;
    }

    /** The shared table's file ({@code /dev/shm/...} for a bare name); empty for a private table. */
    public Optional<String> path() {
        return Optional.ofNullable(keys.call(h -> Native.keysPath(h, this)));
    }

    /**
     * Its {@code limit} label in metrics: the name it was given, else a
     * shared table's file name, else {@code private-N} (N counting this
     * process's unnamed private limits). While two open limits share a
     * label, the metrics show the first.
     */
    public String metricsLabel() {
        return metricsLabel;
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return keys.isClosed();
    }

    /** Whether the native memory was freed (tests). */
    boolean isFreed() {
        return keys.isFreed();
    }

    /**
     * Closes the table: later calls throw {@code CLOSED}, a second close does
     * nothing. Its memory (this process's mapping of a shared file) is freed
     * at once, or by the last call still running in another thread.
     */
    @Override
    public void close() {
        keys.close();
    }

    /**
     * A thread's direct memory for {@link #decide}: Java writes the key at
     * {@link #KEY}, the native call reads it and writes the decision's five
     * numbers at 0, by address, so the call makes no JNI callback (each costs
     * a thread-state transition).
     */
    private static final class Scratch {
        static final int KEY = 64;
        static final int KEY_MAX = 256;
        final ByteBuffer buffer = ByteBuffer.allocateDirect(KEY + KEY_MAX).order(ByteOrder.nativeOrder());
        final long address = Native.keysScratchAddress(buffer);
        /** A text key's bytes on their way: array stores, then one bulk copy (cheaper than a put per byte). */
        final byte[] staging = new byte[KEY_MAX];

        /** Writes {@code key}: its length, or -1 if it does not fit. */
        int put(byte[] key) {
            if (key.length > KEY_MAX) {
                return -1;
            }
            buffer.position(KEY);
            buffer.put(key);
            return key.length;
        }

        /** Writes {@code key} if it is ASCII (its UTF-8 then) and fits: its length, or -1. */
        int putAscii(String key) {
            int n = Ascii.copy(key, staging, 0, KEY_MAX);
            if (n >= 0) {
                buffer.position(KEY);
                buffer.put(staging, 0, n);
            }
            return n;
        }

        KeyDecision decision(boolean admitted) {
            ByteBuffer b = buffer;
            return new KeyDecision(admitted, b.getLong(0), b.getLong(8), b.getLong(16), b.getLong(24), b.getLong(32));
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private static boolean onVirtualThread() {
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.isVirtual() failed", e);
        }
    }

    private static int length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    private static <T> T nonNull(T key) {
        if (key == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "key is null");
        }
        return key;
    }
}
