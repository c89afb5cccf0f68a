package io.sdsnative.compat;

import io.sdsnative.Log;
import java.net.URL;
import java.security.CodeSource;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which implementation of SDS's counter classes the JVM loaded: the drop-in's
 * or SDS's own. The JVM takes the first class of a name on the class path,
 * so a wrong declaration order (or an agent or fat jar that bundles SDS's
 * classes) silently keeps SDS's. Call {@link #isActive()} from a test or a
 * health check; the drop-in also logs the answer once, when its first counter
 * is made.
 */
public final class DropIn {
    /** The classes the drop-in replaces. */
    static final String[] CLASSES = {
        "com.didiglobal.sds.client.counter.AbstractCycleData",
        "com.didiglobal.sds.client.counter.SlidingWindowData",
        "com.didiglobal.sds.client.counter.TokenBucketData",
        "com.didiglobal.sds.client.counter.ConcurrentData",
        "com.didiglobal.sds.client.counter.PowerfulCycleTimeCounter",
        "com.didiglobal.sds.client.bean.VisitWrapperValue",
    };
    /** A private static field each drop-in class declares and SDS's do not. */
    static final String MARKER = "SDS_NATIVE_DROP_IN";

    private static final AtomicBoolean LOGGED = new AtomicBoolean();

    private DropIn() {}

    /** Whether all six classes the drop-in's class loader resolves are the drop-in's. */
    public static boolean isActive() {
        return isActive(DropIn.class.getClassLoader());
    }

    /** Whether all six classes {@code loader} resolves are the drop-in's. */
    public static boolean isActive(ClassLoader loader) {
        for (String name : CLASSES) {
            if (!isDropIn(load(name, loader))) {
                return false;
            }
        }
        return true;
    }

    /** One line: whose each class is and where it was loaded from. */
    public static String describe() {
        return describe(DropIn.class.getClassLoader());
    }

    /** {@link #describe()} as {@code loader} resolves the classes. */
    public static String describe(ClassLoader loader) {
        StringBuilder s = new StringBuilder(isActive(loader)
                ? "sds-native drop-in active: "
                : "sds-native drop-in NOT active (SDS's own counter classes come first on the class path): ");
        for (int i = 0; i < CLASSES.length; i++) {
            Class<?> type = load(CLASSES[i], loader);
            String simple = CLASSES[i].substring(CLASSES[i].lastIndexOf('.') + 1);
            s.append(i == 0 ? "" : ", ").append(simple).append(type == null ? " missing"
                    : " " + whose(type) + " from " + location(type));
        }
        return s.toString();
    }

    /**
     * Logs {@link #describe()} once (per class loader of the drop-in): info
     * if active, else a warning. The drop-in's counters call it when the
     * first one is made.
     */
    public static void logOnce() {
        if (LOGGED.compareAndSet(false, true)) {
            if (isActive()) {
                Log.info(describe());
            } else {
                Log.warning(describe());
            }
        }
    }

    private static Class<?> load(String name, ClassLoader loader) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    private static boolean isDropIn(Class<?> type) {
        return type != null && whose(type).equals("sds-native");
    }

    /** "sds-native", "SDS", or why the class cannot be linked (a mix of both). */
    private static String whose(Class<?> type) {
        try {
            type.getDeclaredField(MARKER);
            return "sds-native";
        } catch (NoSuchFieldException | SecurityException e) {
            return "SDS";
        } catch (LinkageError e) {
            return "unlinkable (" + e + ")";
        }
    }

    private static String location(Class<?> type) {
        CodeSource source = type.getProtectionDomain() == null ? null : type.getProtectionDomain().getCodeSource();
        URL url = source == null ? null : source.getLocation();
        return url == null ? "the bootstrap class path" : url.toString();
    }
}
