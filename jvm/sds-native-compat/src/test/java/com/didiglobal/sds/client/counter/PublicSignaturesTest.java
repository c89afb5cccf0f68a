package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.didiglobal.sds.client.bean.VisitWrapperValue;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The drop-in's public API must be SDS's, signature for signature
 * (SEMANTICS.md section 6), so sds-client links against it unchanged: no
 * method missing, none added.
 */
class PublicSignaturesTest {
    private static Set<String> publicApi(Class<?> type) {
        Set<String> api = new TreeSet<>();
        for (Constructor<?> c : type.getDeclaredConstructors()) {
            if (Modifier.isPublic(c.getModifiers())) {
                api.add("<init>(" + params(c.getParameterTypes()) + ")");
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.getName().equals("toString")) {
                String kind = Modifier.isAbstract(m.getModifiers()) ? "abstract " : "";
                api.add(kind + m.getReturnType().getSimpleName() + " " + m.getName() + "(" + params(m.getParameterTypes()) + ")");
            }
        }
        return api;
    }

    private static String params(Class<?>[] types) {
        StringBuilder s = new StringBuilder();
        for (Class<?> t : types) {
            s.append(s.length() == 0 ? "" : ",").append(t.getSimpleName());
        }
        return s.toString();
    }

    private static void assertApi(Class<?> type, String... expected) {
        assertEquals(new TreeSet<>(Arrays.asList(expected)), publicApi(type), type.getName());
    }

    private static final String[] CYCLE_DATA = {
        "VisitWrapperValue incrementAndGet(long)",
        "void setBucketValue(long,Long)",
        "long getBucketValue(long)",
        "long getCurSlidingCycleValue(long)",
        "long getLastWholeCycleValue(long)",
        "void clearNextCycleValue(long)",
    };

    @Test
    void abstractCycleData() {
        String[] api = new String[CYCLE_DATA.length + 1];
        for (int i = 0; i < CYCLE_DATA.length; i++) {
            api[i] = "abstract " + CYCLE_DATA[i];
        }
        api[CYCLE_DATA.length] = "<init>()";
        assertApi(AbstractCycleData.class, api);
        assertEquals(true, Modifier.isAbstract(AbstractCycleData.class.getModifiers()));
    }

    @Test
    void slidingWindowData() {
        String[] api = Arrays.copyOf(CYCLE_DATA, CYCLE_DATA.length + 2);
        api[CYCLE_DATA.length] = "<init>()";
        api[CYCLE_DATA.length + 1] = "<init>(Integer,Integer,Integer)";
        assertApi(SlidingWindowData.class, api);
        assertEquals(AbstractCycleData.class, SlidingWindowData.class.getSuperclass());
    }

    @Test
    void tokenBucketData() {
        assertApi(TokenBucketData.class, "<init>()", "<init>(Integer,Integer)", "long takeOneToken(long)",
                "AbstractCycleData getCycleTokenBucketData()");
    }

    @Test
    void concurrentData() {
        assertApi(ConcurrentData.class, "<init>()", "<init>(int)", "boolean concurrentAcquire(long)",
                "void concurrentRelease()", "int getConcurrentValue()", "void updateConcurrentThreshold(int)",
                "int getLastConcurrentMaxCountAndClean(long)", "AbstractCycleData getCycleMaxConcurrentData()");
    }

    @Test
    void powerfulCycleTimeCounter() {
        assertApi(PowerfulCycleTimeCounter.class, "<init>()",
                "VisitWrapperValue visitAddAndGet(long)", "long getLastSecondVisitBucketValue(long)",
                "long getLastCycleVisitValue(long)", "boolean concurrentAcquire(long)", "void concurrentRelease()",
                "int getLastCycleConcurrentValue(long)", "long exceptionAddAndGet(long)",
                "long getExceptionValue(long)", "long getLastCycleExceptionValue(long)",
                "long timeoutAddAndGet(long)", "long getTimeoutValue(long)", "long getLastCycleTimeoutValue(long)",
                "long tokenBucketInvokeAddAndGet(long)", "long downgradeAddAndGet(long)",
                "long getDowngradeValue(long)", "long getLastCycleDowngradeValue(long)",
                "void updateConcurrentThreshold(int)");
    }

    @Test
    void visitWrapperValue() {
        assertApi(VisitWrapperValue.class, "<init>(long,long)", "long getBucketValue()", "long getSlidingCycleValue()");
    }
}
