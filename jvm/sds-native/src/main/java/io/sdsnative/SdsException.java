package io.sdsnative;

/**
 * The one exception of sds-native: unchecked, with the core's {@link ErrorCode}
 * and a message that names the field and the rule where one applies.
 */
public class SdsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    /** An exception with this code and message. */
    public SdsException(ErrorCode code, String message) {
        super(code.codeName() + ": " + message);
        this.code = code;
    }

    /** Called by the native library with the core's code number. */
    SdsException(int number, String message) {
        this(ErrorCode.fromNumber(number), message);
    }

    /** The code. */
    public ErrorCode code() {
        return code;
    }

    static SdsException of(ErrorCode code) {
        return new SdsException(code, code.description());
    }
}
