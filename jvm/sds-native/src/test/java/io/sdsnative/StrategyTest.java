package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class StrategyTest {
    private static SdsException assertCode(ErrorCode code, Runnable action) {
        SdsException e = assertThrows(SdsException.class, action::run);
        assertEquals(code, e.code(), e.getMessage());
        return e;
    }

    @Test
    void defaultsAreTheReferences() {
        assertEquals(-1, Strategy.DEFAULT.get("visitThreshold"));
        assertEquals(100, Strategy.DEFAULT.get("downgradeRate"));
        assertEquals(0, Strategy.DEFAULT.get("exceptionRateStart"));
        assertEquals(22, Strategy.fieldNames().length);
    }

    @Test
    void builderAndJsonAgree() {
        Strategy built = Strategy.builder().visitThreshold(10).delayTime(20_000).retryInterval(2_000).build();
        Strategy parsed = Strategy.fromJson(
                "{\"point\": \"order\", \"visitThreshold\": 10, \"delayTime\": 20000, \"retryInterval\": 2000}");
        assertEquals(built, parsed);
        assertEquals(built.hashCode(), parsed.hashCode());
        assertEquals(built, Strategy.fromJson(built.toJson()));
        assertEquals(10, built.toBuilder().build().get("visitThreshold"));
        assertEquals(7, Strategy.builder().set("tokenBucketSize", 7).build().get("tokenBucketSize"));
    }

    @Test
    void invalidJson() {
        SdsException e = assertCode(ErrorCode.INVALID_JSON, () -> Strategy.fromJson("{\"visitThreshold\": "));
        assertTrue(e.getMessage().contains("byte"), e.getMessage());
        assertCode(ErrorCode.INVALID_JSON, () -> Strategy.fromJson("[1]"));
        assertCode(ErrorCode.NULL_ARGUMENT, () -> Strategy.fromJson(null));
    }

    @Test
    void unknownFieldIsNamed() {
        SdsException e = assertCode(ErrorCode.UNKNOWN_FIELD, () -> Strategy.fromJson("{\"visitThresold\": 5}"));
        assertTrue(e.getMessage().contains("visitThresold"), e.getMessage());
        e = assertCode(ErrorCode.UNKNOWN_FIELD, () -> Strategy.builder().set("nope", 1));
        assertEquals("SDS_UNKNOWN_FIELD: unknown strategy field \"nope\"", e.getMessage());
        e = assertCode(ErrorCode.INVALID_STRATEGY, () -> Strategy.builder().set("point", 1));
        assertEquals("SDS_INVALID_STRATEGY: invalid strategy: \"point\" must be a string or null", e.getMessage());
        e = assertCode(ErrorCode.UNKNOWN_FIELD, () -> Strategy.DEFAULT.get("nope"));
        assertEquals("SDS_UNKNOWN_FIELD: unknown strategy field \"nope\"", e.getMessage());
        e = assertCode(ErrorCode.UNKNOWN_FIELD, () -> Strategy.DEFAULT.get("point"));
        assertEquals("SDS_UNKNOWN_FIELD: unknown strategy field \"point\"", e.getMessage());
    }

    @Test
    void invalidStrategyNamesFieldAndRule() {
        SdsException e = assertCode(ErrorCode.INVALID_STRATEGY, () -> Strategy.builder().delayTime(5).build());
        assertTrue(e.getMessage().contains("delayTime"), e.getMessage());
        e = assertCode(ErrorCode.INVALID_STRATEGY, () -> Strategy.builder().downgradeRate(101).build());
        assertTrue(e.getMessage().contains("downgradeRate"), e.getMessage());
        assertCode(ErrorCode.INVALID_STRATEGY, () -> Strategy.fromJson("{\"retryInterval\": 999}"));
        assertCode(ErrorCode.INVALID_STRATEGY, () -> Strategy.fromJson("{\"visitThreshold\": 1.5}"));
    }

    /** The builder's named setters are the core's field table: same names, count, and each writes its own field. */
    @Test
    void builderSettersAreTheCoresFieldTable() throws Exception {
        TreeSet<String> setters = new TreeSet<>();
        for (Method m : Strategy.Builder.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && m.getReturnType() == Strategy.Builder.class
                    && Arrays.equals(m.getParameterTypes(), new Class<?>[] {long.class})) {
                setters.add(m.getName());
            }
        }
        java.lang.reflect.Field valuesField = Strategy.Builder.class.getDeclaredField("values");
        valuesField.setAccessible(true);
        String[] names = Strategy.fieldNames();
        assertEquals(new TreeSet<>(Arrays.asList(names)), setters);
        assertEquals(names.length, setters.size());
        for (int i = 0; i < names.length; i++) {
            Strategy.Builder b = Strategy.builder();
            Strategy.Builder.class.getMethod(names[i], long.class).invoke(b, 1000 + i);
            long[] values = (long[]) valuesField.get(b);
            for (int j = 0; j < names.length; j++) {
                long expected = j == i ? 1000 + i : Strategy.DEFAULT.values()[j];
                assertEquals(expected, values[j], names[i] + " writes field " + j);
            }
        }
    }
}
