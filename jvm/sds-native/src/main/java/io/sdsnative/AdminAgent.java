package io.sdsnative;

import java.util.Optional;

/**
 * A client's table managed by the SDS console: made by
 * {@link Client#connectAdmin(AdminConfig)}. A native thread pulls the app's
 * strategies and applies them, and uploads each cycle's statistics when this
 * process is the host's reporter; {@link Client#enter} never waits on it.
 * Thread-safe.
 *
 * <p>It runs until {@link #close()} or its client's {@code close()}; it is not
 * stopped by garbage collection. Its log lines go to logger {@code io.sdsnative}
 * ({@code System.Logger}; on Java 8 {@code java.util.logging}): warnings for
 * failures, information for a version applied and the reporter role taken.
 * They are logged on the agent's native thread, attached to the JVM as a daemon
 * thread named {@code sds-agent} for each line, so the JVM exits normally with
 * an agent running. Keep log handlers quick: the agent waits for them.
 */
public final class AdminAgent implements AutoCloseable, Client.Attached {
    private static final int STATUS_VALUES = 11;
    /** The level numbers of the native log lines. */
    private static final int INFO = 0;

    private final ServiceHandle<AdminStatus> agent;

    AdminAgent(Client client, long nativeAgent) {
        this.agent = new ServiceHandle<>(client, nativeAgent, Native::agentFree, Native::agentStop, this::readStatus);
    }

    private AdminStatus readStatus(long handle) {
        long[] values = new long[STATUS_VALUES];
        String[] texts = Native.agentStatus(handle, this, values);
        return new AdminStatus(values, texts);
    }

    /** The agent's state now; once closed, its last state. */
    public AdminStatus status() {
        return agent.status();
    }

    /**
     * The console's return value for {@code point} ({@code returnValueStr},
     * the raw string as the console holds it), from the strategy in force;
     * empty when the point has no strategy or the strategy has none.
     */
    public Optional<String> returnValue(String point) {
        if (point == null) {
            throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
        }
        return Optional.ofNullable(agent.call(handle -> Native.agentReturnValue(handle, this, point)));
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return agent.isClosed();
    }

    /**
     * Stops the agent and waits for its thread to end: at once while it sleeps,
     * within one request timeout while a request is in flight. The strategies
     * in force stay; on a shared table the reporter role is given up. A second
     * call does nothing; later {@link #status()} calls give the last state and
     * {@link #returnValue} throws {@code CLOSED}.
     */
    @Override
    public void close() {
        agent.close(this);
    }

    /** Called by the native agent's thread for each of its log lines. */
    static void log(int level, String line) {
        try {
            if (level == INFO) {
                Log.info(line);
            } else {
                Log.warning(line);
            }
        } catch (Throwable e) {
            // A failing logging backend must not reach the native thread.
        }
    }
}
