package io.sdsnative;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The core's tables as the native library reports them, read once. The Java
 * enums mirror them; the tests check that they agree.
 */
final class CoreTables {
    private CoreTables() {}

    /**
     * The library's tables, in this order: error codes, reasons, the packed entry's layout, the strategy
     * fields' names, the stats names, the agent's and the cluster sync's status field names, the adaptive
     * concurrency algorithms, the key table counters' names.
     */
    private static final String[] TABLES = Native.tables();

    /** Error code number to {name, description}. */
    static final Map<Integer, String[]> ERROR_CODES = rows(TABLES[0]);
    /** Reason code to {name}. */
    static final Map<Integer, String[]> REASONS = rows(TABLES[1]);
    /**
     * The core's packed entry: {downgraded bit, reason shift, reason mask, permit bit, probe bit,
     * shift of the probe generation or wait, bits in all}.
     */
    static final long[] PACKED_LAYOUT = longs(TABLES[2]);
    /** The SDS JSON names, in the order of a strategy's values. */
    static final String[] FIELD_NAMES = TABLES[3].split(",");
    /** SDS JSON name to its index in {@link #FIELD_NAMES}: setters map names without crossing. */
    private static final Map<String, Integer> FIELD_INDEX = indexOf(FIELD_NAMES);
    /** The names of the stats values, in the order the native side writes them. */
    static final String[] STATS_NAMES = TABLES[4].split(",");
    /** The field names of the console agent's status, as AdminStatus names its accessors. */
    static final String[] AGENT_STATUS_NAMES = TABLES[5].split(",");
    /** The field names of the cluster sync's status, as ClusterStatus names its accessors. */
    static final String[] CLUSTER_STATUS_NAMES = TABLES[6].split(",");
    /** Adaptive concurrency algorithm code to {name}. */
    static final Map<Integer, String[]> ALGORITHMS = rows(TABLES[7]);
    /** The names of a key table's counters, in the order the native side writes them. */
    static final String[] KEY_STATS_NAMES = TABLES[8].split(",");

    private static long[] longs(String row) {
        String[] columns = row.split("\t");
        long[] values = new long[columns.length];
        for (int i = 0; i < columns.length; i++) {
            values[i] = Long.parseLong(columns[i]);
        }
        return values;
    }

    static String errorDescription(int number) {
        String[] row = ERROR_CODES.get(number);
        return row == null ? "unknown error code " + number : row[1];
    }

    /** The index of this SDS JSON name; -1 for any other name. */
    static int fieldIndex(String jsonName) {
        Integer i = FIELD_INDEX.get(jsonName);
        return i == null ? -1 : i;
    }

    /** The index of this stats name ({@code "visit"}, {@code "lastCycle.visitNum"}). */
    static int statsIndex(String name) {
        for (int i = 0; i < STATS_NAMES.length; i++) {
            if (STATS_NAMES[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalStateException("the native library has no stats value \"" + name + "\"");
    }

    /** The indexes of these key table counters' names ({@code "admitted"}) in {@link #KEY_STATS_NAMES}. */
    static int[] keyStatsIndexes(String... names) {
        int[] at = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            at[i] = Arrays.asList(KEY_STATS_NAMES).indexOf(names[i]);
            if (at[i] < 0) {
                throw new IllegalStateException("the native library has no key stats value \"" + names[i] + "\"");
            }
        }
        return at;
    }

    private static Map<String, Integer> indexOf(String[] names) {
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < names.length; i++) {
            index.put(names[i], i);
        }
        return Collections.unmodifiableMap(index);
    }

    private static Map<Integer, String[]> rows(String text) {
        Map<Integer, String[]> rows = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] columns = line.split("\t");
            String[] rest = new String[columns.length - 1];
            System.arraycopy(columns, 1, rest, 0, rest.length);
            rows.put(Integer.parseInt(columns[0]), rest);
        }
        return rows;
    }
}
