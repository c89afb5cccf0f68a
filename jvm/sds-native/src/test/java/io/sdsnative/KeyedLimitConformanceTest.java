package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every scenario of conformance/keyed through {@link KeyedLimit} (format:
 * conformance/README.md, "Keyed scenarios"): on a private table with text keys
 * as {@code String} and hex keys as {@code byte[]}, on a private table with
 * every key as {@code byte[]}, and (rules that are not in flight) on a table
 * file in a temp folder.
 */
class KeyedLimitConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static File[] keyedFiles() {
        File dir = new File(ConformanceTest.scenarioFiles()[0].getParentFile().getParentFile(), "keyed");
        return ConformanceTest.jsonFiles(dir, 30, "keyed scenarios");
    }

    @TestFactory
    Stream<DynamicTest> everyScenarioWithTextKeys() {
        return Arrays.stream(keyedFiles()).map(f -> DynamicTest.dynamicTest(f.getName(),
                () -> run(f, false, s -> KeyedLimit.create(rule(s.get("rule")), integer(s.get("capacity"))))));
    }

    @TestFactory
    Stream<DynamicTest> everyScenarioWithByteKeys() {
        return Arrays.stream(keyedFiles()).map(f -> DynamicTest.dynamicTest(f.getName(),
                () -> run(f, true, s -> KeyedLimit.create(rule(s.get("rule")), integer(s.get("capacity"))))));
    }

    @TestFactory
    Stream<DynamicTest> everyScenarioOnASharedFile() throws Exception {
        return ConformanceTest.eachOnANewFile(keyedFiles(), ".keys", (f, table) -> run(f, false, s -> {
            KeyedLimit keys = KeyedLimit.shared(table.toString(), rule(s.get("rule")), integer(s.get("capacity")));
            assertEquals(table.toString(), keys.path().orElse(null));
            return keys;
        }));
    }

    /** A rule object as Java builder calls give it: each member through {@link KeyRule#set}. */
    static KeyRule rule(JsonNode rule) {
        KeyRule built = KeyRule.empty();
        for (Iterator<Map.Entry<String, JsonNode>> it = rule.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> member = it.next();
            built = built.set(member.getKey(), ConformanceTest.javaValue(member.getValue()));
        }
        return built;
    }

    /** An integer of the format: a JSON number or a decimal string. */
    private static long integer(JsonNode v) {
        return v.isTextual() ? Long.parseLong(v.textValue()) : v.longValue();
    }

    private static long integer(JsonNode step, String name, long absent) {
        return step.has(name) ? integer(step.get(name)) : absent;
    }

    private interface Opener {
        KeyedLimit open(JsonNode scenario);
    }

    private static void run(File file, boolean allBytes, Opener opener) throws Exception {
        JsonNode scenario = JSON.readTree(file);
        try (KeyedLimit keys = opener.open(scenario)) {
            JsonNode steps = scenario.get("steps");
            for (int i = 0; i < steps.size(); i++) {
                JsonNode step = steps.get(i);
                step(keys, step, allBytes, file.getName() + " step " + i + " " + step);
            }
        }
    }

    /** The key of a step: its text as a String (or bytes), or its hex as bytes. */
    private static final class Key {
        final String text;
        final byte[] bytes;

        Key(JsonNode step, boolean allBytes) {
            if (step.has("key")) {
                String t = step.get("key").textValue();
                text = allBytes ? null : t;
                bytes = allBytes ? t.getBytes(StandardCharsets.UTF_8) : null;
            } else {
                String hex = step.get("keyHex").textValue();
                text = null;
                bytes = new byte[hex.length() / 2];
                for (int i = 0; i < bytes.length; i++) {
                    bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
                }
            }
        }

        <T> T call(Function<String, T> onText, Function<byte[], T> onBytes) {
            return text != null ? onText.apply(text) : onBytes.apply(bytes);
        }
    }

    private static void step(KeyedLimit keys, JsonNode step, boolean allBytes, String where) {
        String op = step.get("op").asText();
        if (op.equals("rule")) {
            rule(step, where);
            return;
        }
        if (step.has("error")) {
            SdsException e = assertThrows(SdsException.class, () -> call(keys, op, step, allBytes), where);
            assertEquals(step.get("error").asText(), e.code().codeName(), where + ": " + e.getMessage());
            return;
        }
        if (!step.has("expect")) {
            fail(where + ": a step that expects nothing");
        }
        int repeat = (int) integer(step, "repeat", 1);
        Map<String, Object> last = null;
        long admitted = 0;
        for (int n = 0; n < repeat; n++) {
            Object answer = call(keys, op, step, allBytes);
            last = fields(answer);
            admitted += Boolean.TRUE.equals(last.get("admitted")) ? 1 : 0;
        }
        if (step.has("tally")) {
            assertEquals(step.get("tally").get("admitted").asLong(), admitted, where + ": admitted");
            assertEquals(step.get("tally").get("refused").asLong(), repeat - admitted, where + ": refused");
        }
        JsonNode expect = step.get("expect");
        if (!expect.isObject()) {
            Object want = expect.isBoolean() ? (Object) expect.booleanValue() : (Object) expect.longValue();
            assertEquals(want, last.get("value"), where);
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = expect.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            assertTrue(last.containsKey(field.getKey()), where + ": no field " + field.getKey());
            JsonNode v = field.getValue();
            Object want = v.isBoolean() ? (Object) v.booleanValue()
                    : "never".equals(v.textValue()) ? (Object) KeyDecision.NEVER : (Object) integer(v);
            assertEquals(want, last.get(field.getKey()), where + ": " + field.getKey());
        }
    }

    private static Object call(KeyedLimit keys, String op, JsonNode step, boolean allBytes) {
        Key key = step.has("key") || step.has("keyHex") ? new Key(step, allBytes) : null;
        long at = integer(step, "at", 0);
        long units = integer(step, "units", 1);
        switch (op) {
            case "decide": {
                long cost = integer(step, "cost", 1);
                return key.call(k -> keys.decide(k, cost, at), k -> keys.decide(k, cost, at));
            }
            case "peek":
                return key.call(k -> keys.peek(k, at), k -> keys.peek(k, at));
            case "release":
                return key.call(k -> keys.release(k, units), k -> keys.release(k, units));
            case "reset":
                return key.call(keys::reset, keys::reset);
            case "reset_all":
                return keys.resetAll();
            case "increment":
                return key.call(k -> keys.increment(k, units, at), k -> keys.increment(k, units, at));
            case "decrement":
                return key.call(k -> keys.decrement(k, units, at), k -> keys.decrement(k, units, at));
            case "count":
                return key.call(k -> keys.count(k, at), k -> keys.count(k, at));
            case "stats":
                return keys.stats();
            default:
                throw new AssertionError("unknown op " + op);
        }
    }

    /**
     * An answer's fields by the format's names (a value class's table, whose names are the format's); a bare
     * value as {@code value}.
     */
    private static Map<String, Object> fields(Object answer) {
        Map<String, Object> f = new LinkedHashMap<>();
        if (!(answer instanceof Value)) {
            f.put("value", answer);
            return f;
        }
        Object[] table = ((Value) answer).fields();
        for (int i = 0; i < table.length; i += 2) {
            f.put((String) table[i], table[i + 1]);
        }
        return f;
    }

    /** A {@code rule} step: the step's rule builds, or is refused with its code and message word for word. */
    private static void rule(JsonNode step, String where) {
        KeyRule rule = rule(step.get("rule"));
        if (!step.has("error")) {
            KeyedLimit.create(rule, 4).close();
            return;
        }
        SdsException e = assertThrows(SdsException.class, () -> KeyedLimit.create(rule, 4), where);
        String code = step.get("error").asText();
        assertEquals(code, e.code().codeName(), where);
        assertEquals(code + ": " + step.get("message").asText(), e.getMessage(), where);
    }
}
