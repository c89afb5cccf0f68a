package io.sdsnative;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The core's tables as the native library reports them, read once. The Java
 * enums mirror them; the tests check that they agree.
 */
final class CoreTables {
    private CoreTables() {}

    /** Error code number to {name, description}. */
    static final Map<Integer, String[]> ERROR_CODES = rows(Native.errorCodes());
    /** Reason code to {name}. */
    static final Map<Integer, String[]> REASONS = rows(Native.reasons());
    /** The SDS JSON names, in the order of a strategy's values. */
    static final String[] FIELD_NAMES = Native.fieldNames().split(",");
    /** The core's packed entry: {downgraded bit, reason shift, reason mask, permit bit, probe bit}. */
    static final long[] PACKED_LAYOUT = longs(Native.packedLayout());

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

    static int fieldIndex(String jsonName) {
        for (int i = 0; i < FIELD_NAMES.length; i++) {
            if (FIELD_NAMES[i].equals(jsonName)) {
                return i;
            }
        }
        return -1;
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
