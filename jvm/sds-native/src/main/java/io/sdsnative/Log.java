package io.sdsnative;

import java.lang.reflect.Method;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Warnings and notices of sds-native, through {@code System.Logger} (Java 9+,
 * so an application's logging backend receives them) or, on Java 8,
 * {@code java.util.logging}. The bytecode targets Java 8, hence the
 * reflection. Internal to sds-native and its drop-in.
 */
public final class Log {
    /** The logger name. */
    public static final String NAME = "io.sdsnative";

    private static final Object SYSTEM_LOGGER;
    private static final Method LOG;
    private static final Object WARNING;
    private static final Object INFO;

    static {
        Object logger = null;
        Method log = null;
        Object warning = null;
        Object info = null;
        try {
            Class<?> loggerClass = Class.forName("java.lang.System$Logger");
            Class<?> levelClass = Class.forName("java.lang.System$Logger$Level");
            logger = System.class.getMethod("getLogger", String.class).invoke(null, NAME);
            log = loggerClass.getMethod("log", levelClass, String.class);
            warning = levelClass.getField("WARNING").get(null);
            info = levelClass.getField("INFO").get(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            logger = null; // Java 8: java.util.logging below.
        }
        SYSTEM_LOGGER = logger;
        LOG = log;
        WARNING = warning;
        INFO = info;
    }

    private Log() {}

    /** Logs {@code message} as a warning. */
    public static void warning(String message) {
        log(WARNING, Level.WARNING, message);
    }

    /** Logs {@code message} as information. */
    public static void info(String message) {
        log(INFO, Level.INFO, message);
    }

    private static void log(Object systemLevel, Level julLevel, String message) {
        if (SYSTEM_LOGGER != null) {
            try {
                LOG.invoke(SYSTEM_LOGGER, systemLevel, message);
                return;
            } catch (ReflectiveOperationException | RuntimeException e) {
                // A broken backend: fall through to java.util.logging.
            }
        }
        Logger.getLogger(NAME).log(julLevel, message);
    }
}
