package io.sdsnative;

/**
 * Why an operation failed: the core's {@code ErrorCode} table, number for
 * number (a test checks it against the native library).
 */
public enum ErrorCode {
    /** A strategy field has a value its rule rejects. */
    INVALID_STRATEGY(1),
    /** A strategy key is not one of the SDS JSON names. */
    UNKNOWN_FIELD(2),
    /** Window parameters that cannot form a window. */
    INVALID_WINDOW(3),
    /** A point name of zero bytes. */
    EMPTY_NAME(4),
    /** A point name longer than 256 bytes of UTF-8. */
    NAME_TOO_LONG(5),
    /** The client has no free slot for a new point name. */
    TABLE_FULL(6),
    /** A client capacity of zero or too large. */
    INVALID_CAPACITY(7),
    /** An entry that does not belong to this client. */
    INVALID_ENTRY(8),
    /** Text that is not well-formed JSON. */
    INVALID_JSON(9),
    /** An argument of the wrong type or range. */
    INVALID_ARGUMENT(10),
    /** A required argument was null. */
    NULL_ARGUMENT(11),
    /** The client was closed. */
    CLOSED(12),
    /** A bug: a panic was caught at the native boundary. */
    PANIC(13),
    /**
     * A request was downgraded and no fallback was given (for callers that
     * turn {@link Entry#isDowngraded()} into an exception).
     */
    DOWNGRADED(14),
    /** A shared table laid out by another build (the message names what differs). */
    LAYOUT_MISMATCH(15),
    /**
     * A server the call needs could not be reached or failed (Redis for
     * {@link ClusterSync#syncNow()}); nothing was wrong with the arguments.
     */
    UNAVAILABLE(16);

    private final int number;

    ErrorCode(int number) {
        this.number = number;
    }

    /** The stable number, the same in every binding. */
    public int number() {
        return number;
    }

    /** The stable name every binding shows, such as {@code SDS_TABLE_FULL}. */
    public String codeName() {
        return "SDS_" + name();
    }

    /** The core's one-line description of the code. */
    public String description() {
        return CoreTables.errorDescription(number);
    }

    /** The code with this number; {@link #PANIC} for an unknown one (a bug). */
    public static ErrorCode fromNumber(int number) {
        for (ErrorCode code : values()) {
            if (code.number == number) {
                return code;
            }
        }
        return PANIC;
    }
}
