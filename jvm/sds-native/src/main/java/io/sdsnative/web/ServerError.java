package io.sdsnative.web;

/**
 * What a point's entry is exited with when the application answered 5xx
 * without throwing: the outcome is an error.
 */
public final class ServerError extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;

    ServerError(int status) {
        super("HTTP " + status, null, false, false);
        this.status = status;
    }

    /** The response's status. */
    public int status() {
        return status;
    }
}
