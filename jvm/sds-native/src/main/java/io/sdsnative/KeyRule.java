package io.sdsnative;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rule of a {@link KeyedLimit}: its kind and entries, by name, as the
 * native rule reader ({@code sds_settings::key_rule}) takes them. Immutable:
 * each method returns a new rule with one entry set.
 *
 * <pre>{@code
 * KeyRule.rate(10, 1000).burst(20).except("vip", 100)        // 10 per s, bursts of 20
 * KeyRule.fixedWindow(100, 60_000).windowFromFirstHit(true)  // express-rate-limit's MemoryStore
 * KeyRule.slidingWindow(100, 60_000)                         // limits' sliding window counter
 * KeyRule.inFlight(3)                                        // nginx limit_conn
 * }</pre>
 *
 * <p>Nothing is checked in Java: {@link KeyedLimit#create} hands the entries to
 * the native side, which refuses a rule it does not take with
 * {@link SdsException} ({@code INVALID_STRATEGY}, or {@code UNKNOWN_FIELD} for
 * a name it does not know) and the same message in every language
 * ({@code "invalid key rule: limit must be >= 1"}).
 */
public final class KeyRule {
    private final Map<String, Object> entries;

    private KeyRule(Map<String, Object> entries) {
        this.entries = Collections.unmodifiableMap(entries);
    }

    /** A rule with no entry: give it {@code kind} and the others with {@link #set}. */
    public static KeyRule empty() {
        return new KeyRule(new LinkedHashMap<String, Object>());
    }

    /**
     * A rate (GCRA): {@code limit} units per {@code periodMs} per key, a fresh
     * key taking up to {@link #burst} at once ({@code limit} unless set).
     */
    public static KeyRule rate(long limit, long periodMs) {
        return kind("rate", limit).set("periodMs", periodMs);
    }

    /**
     * A fixed window: at most {@code limit} units per key in each window of
     * {@code periodMs}, aligned to multiples of it unless
     * {@link #windowFromFirstHit}.
     */
    public static KeyRule fixedWindow(long limit, long periodMs) {
        return kind("fixedWindow", limit).set("periodMs", periodMs);
    }

    /** A sliding-window counter: the previous window's count weighted by its overlap, plus the current one's. */
    public static KeyRule slidingWindow(long limit, long periodMs) {
        return kind("slidingWindow", limit).set("periodMs", periodMs);
    }

    /** At most {@code limit} units held per key at once, given back by {@link KeyedLimit#release}. */
    public static KeyRule inFlight(long limit) {
        return kind("inFlight", limit);
    }

    private static KeyRule kind(String kind, long limit) {
        return empty().set("kind", kind).set("limit", limit);
    }

    /** A rate's burst: the units a fresh key may take at once. */
    public KeyRule burst(long burst) {
        return set("burst", burst);
    }

    /** A fixed window that starts at each key's first hit (live {@code periodMs} from it) instead of aligned. */
    public KeyRule windowFromFirstHit(boolean windowFromFirstHit) {
        return set("windowFromFirstHit", windowFromFirstHit);
    }

    /** A fixed window that counts every call, refused ones too. */
    public KeyRule countRefused(boolean countRefused) {
        return set("countRefused", countRefused);
    }

    /**
     * The key {@code key} (its UTF-8) with a limit of its own (a rate's burst
     * scales with it); added to the exceptions given so far (at most 8).
     */
    public KeyRule except(String key, long limit) {
        Object given = entries.get("exceptions");
        List<Object> pairs = given instanceof List ? new ArrayList<Object>((List<?>) given) : new ArrayList<>();
        pairs.add(Collections.unmodifiableList(Arrays.<Object>asList(key, limit)));
        return set("exceptions", Collections.unmodifiableList(pairs));
    }

    /**
     * Sets any entry by its name, camelCase ({@code "periodMs"}) or snake_case
     * ({@code "period_ms"}): {@code kind} ({@code "rate"}, {@code "fixedWindow"},
     * {@code "slidingWindow"}, {@code "inFlight"}), {@code limit},
     * {@code periodMs}, {@code burst}, {@code windowFromFirstHit},
     * {@code countRefused}, {@code exceptions} (a list of {@code [key, limit]}
     * lists). Values are typed as for {@link ServiceConfig.Builder#set}; null
     * leaves the entry unset. A later call to a name replaces the earlier
     * value.
     *
     * @throws SdsException {@code NULL_ARGUMENT} for a null name
     */
    public KeyRule set(String name, Object value) {
        if (name == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "key rule entry name is null");
        }
        Map<String, Object> copy = new LinkedHashMap<>(entries);
        copy.put(name, value);
        return new KeyRule(copy);
    }

    /** The entries by name as given, in the order each name was first set. */
    public Map<String, Object> entries() {
        return entries;
    }

    /** The entries as the native rule reader takes them: each name, then its value in {@link ServiceConfig}'s tokens. */
    String[] encoded() {
        return ServiceConfig.encoded(entries);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyRule && entries.equals(((KeyRule) o).entries);
    }

    @Override
    public int hashCode() {
        return entries.hashCode();
    }

    @Override
    public String toString() {
        return "KeyRule" + entries;
    }
}
