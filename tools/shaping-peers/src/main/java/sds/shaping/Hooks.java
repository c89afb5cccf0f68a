package sds.shaping;

import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import com.alibaba.csp.sentinel.slots.block.flow.controller.ThrottlingController;
import com.alibaba.csp.sentinel.slots.block.flow.controller.WarmUpController;
import com.alibaba.csp.sentinel.slots.block.flow.controller.WarmUpRateLimiterController;
import com.alibaba.csp.sentinel.util.TimeUtil;
import java.util.concurrent.locks.LockSupport;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.ByteBuddyAgent;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.dynamic.loading.ClassReloadingStrategy;
import net.bytebuddy.matcher.ElementMatchers;

/**
 * The harness's clock. Sentinel's controllers read {@code TimeUtil.currentTimeMillis()} (milliseconds)
 * and, for pacing at a rate that does not divide 1000, {@code System.nanoTime()}; they sleep with
 * {@code Thread.sleep} or {@code LockSupport.parkNanos}. {@link #install()} rewrites those four call
 * sites inside the three controller classes (and nowhere else) so that they read {@link #millis()}
 * and {@link #nanos()} and record the sleep instead of sleeping. The controllers' arithmetic is
 * untouched: it is the jar's own bytecode. {@code TimeUtil.currentTimeMillis()} itself answers the
 * harness's time too, for the comparison with Sentinel's own StatisticNode.
 */
public final class Hooks {
    /** A multiple of 1000, so peer seconds and scenario seconds start together; large like a real
     * epoch time, so that WarmUpController's first refill (from lastFilledTime 0) fills it cold. */
    public static final long BASE_MS = 1_700_000_000_000L;

    private static long nowMs;
    private static long sleptNs;

    private Hooks() {}

    /** Sets the scenario time (ms) and clears the recorded sleep. */
    public static void at(long scenarioMs) {
        nowMs = scenarioMs;
        sleptNs = 0;
    }

    /** What the last call slept, in ns (0 when it did not sleep). */
    public static long sleptNs() {
        return sleptNs;
    }

    public static long millis() {
        return BASE_MS + nowMs;
    }

    public static long nanos() {
        return (BASE_MS + nowMs) * 1_000_000L;
    }

    public static void sleepMs(long ms) {
        sleptNs = ms * 1_000_000L;
    }

    public static void parkNanos(long ns) {
        sleptNs = ns;
    }

    /** TimeUtil.currentTimeMillis() returns the harness's time (for Sentinel's own StatisticNode). */
    static final class TimeUtilAdvice {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter() {
            return true;
        }

        @Advice.OnMethodExit
        static void exit(@Advice.Return(readOnly = false) long time) {
            time = Hooks.millis();
        }
    }

    public static void install() throws Exception {
        ByteBuddyAgent.install();
        // Sentinel's sliding windows (LeapArray under StatisticNode) read TimeUtil directly.
        new ByteBuddy()
                .redefine(TimeUtil.class)
                .visit(Advice.to(TimeUtilAdvice.class).on(named("currentTimeMillis")))
                .make()
                .load(TimeUtil.class.getClassLoader(), ClassReloadingStrategy.fromInstalledAgent());
        for (Class<?> c : new Class<?>[] {ThrottlingController.class, WarmUpController.class,
                WarmUpRateLimiterController.class}) {
            new ByteBuddy()
                    .redefine(c)
                    .visit(MemberSubstitution.strict()
                            .method(named("currentTimeMillis").and(isDeclaredBy(TimeUtil.class)))
                            .replaceWith(Hooks.class.getMethod("millis"))
                            .method(named("nanoTime").and(isDeclaredBy(System.class)))
                            .replaceWith(Hooks.class.getMethod("nanos"))
                            .method(named("sleep").and(isDeclaredBy(Thread.class)).and(takesArguments(long.class)))
                            .replaceWith(Hooks.class.getMethod("sleepMs", long.class))
                            .method(named("parkNanos").and(isDeclaredBy(LockSupport.class)).and(takesArguments(long.class)))
                            .replaceWith(Hooks.class.getMethod("parkNanos", long.class))
                            .on(ElementMatchers.any()))
                    .make()
                    .load(c.getClassLoader(), ClassReloadingStrategy.fromInstalledAgent());
        }
    }
}
