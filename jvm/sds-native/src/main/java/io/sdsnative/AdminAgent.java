package io.sdsnative;

import java.util.Optional;

/**
 * A client's table managed by the SDS console: made by
 * {@link Client#connectAdmin(AdminConfig)}. A native thread pulls the app's
 * strategies and applies them, and uploads each cycle's statistics when this
 * process is the host's reporter. Its life cycle is a
 * {@link BackgroundService}'s: {@link #close()} returns at once while the
 * agent sleeps, within one request timeout while a request is in flight; the
 * strategies in force stay, and on a shared table the reporter role is given
 * up.
 *
 * <p>Its log lines go to logger {@code io.sdsnative} ({@code System.Logger};
 * on Java 8 {@code java.util.logging}): warnings for failures, information for
 * a version applied and the reporter role taken. They are logged on the
 * agent's native thread, attached to the JVM as a daemon thread named
 * {@code sds-agent} for each line, so the JVM exits normally with an agent
 * running. Keep log handlers quick: the agent waits for them.
 */
public final class AdminAgent extends BackgroundService<AdminStatus> {
    /** The level numbers of the native log lines. */
    private static final int INFO = 0;

    AdminAgent(Client client, long nativeAgent) {
        super(client, nativeAgent, AdminStatus::new);
    }

    /**
     * The console's return value for {@code point} ({@code returnValueStr},
     * the raw string as the console holds it), from the strategy in force;
     * empty when the point has no strategy or the strategy has none.
     *
     * @throws SdsException {@code NULL_ARGUMENT}; {@code INVALID_ARGUMENT} for a name that is not
     *     valid UTF-16; {@code CLOSED}
     */
    public Optional<String> returnValue(String point) {
        Client.checkText(point, "point name");
        return Optional.ofNullable(call(handle -> Native.agentReturnValue(handle, this, point)));
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
