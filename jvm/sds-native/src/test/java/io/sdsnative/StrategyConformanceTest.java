package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs conformance/strategies.json (format: conformance/README.md) in both
 * forms: the JSON text through {@link Strategy#fromJson}, and builder calls
 * where every pair is a name and a {@code long} (a builder takes nothing
 * else, so cases with fractions, strings, booleans, arrays, objects, out of
 * range numbers or a null for an unknown key are skipped in that form).
 */
class StrategyConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    @TestFactory
    Stream<DynamicTest> everyCaseAsText() throws Exception {
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : ConformanceTest.cases("strategies.json")) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(),
                    () -> check(c, () -> Strategy.fromJson(c.get("json").asText()))));
        }
        assertTrue(tests.size() >= 30, "strategies.json has too few cases");
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyCaseAsBuilderCalls() throws Exception {
        List<DynamicTest> tests = new ArrayList<>();
        int skipped = 0;
        for (JsonNode c : ConformanceTest.cases("strategies.json")) {
            Supplier<Strategy> build = builderCalls(c);
            if (build == null) {
                skipped++;
                continue;
            }
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> check(c, build)));
        }
        System.out.println("strategies.json: " + tests.size() + " cases through the builder, " + skipped
                + " skipped (values a builder of longs cannot hold, or text only)");
        assertTrue(tests.size() >= 15, "too few cases run through the builder");
        return tests.stream();
    }

    /** The builder calls of a case; null when a builder cannot express it. */
    private static Supplier<Strategy> builderCalls(JsonNode c) {
        if (c.has("forms") && !c.get("forms").toString().contains("\"native\"")) {
            return null;
        }
        JsonNode object;
        try {
            object = JSON.readTree(c.get("json").asText());
        } catch (Exception e) {
            return null; // Malformed text: only the text form.
        }
        if (!object.isObject()) {
            return null;
        }
        List<Map.Entry<String, JsonNode>> pairs = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> pair = it.next();
            JsonNode v = pair.getValue();
            boolean point = "point".equals(pair.getKey());
            if (v.isNull() || (point && v.isTextual())) {
                // Omitted: a builder has no null, nor a point name, to pass.
                if (!point && CoreTables.fieldIndex(pair.getKey()) < 0) {
                    return null; // An unknown key with null: only a dict can say that.
                }
                continue;
            }
            if (!v.isIntegralNumber() || !v.canConvertToLong()) {
                return null;
            }
            pairs.add(pair);
        }
        return () -> {
            Strategy.Builder b = Strategy.builder();
            for (Map.Entry<String, JsonNode> pair : pairs) {
                b.set(pair.getKey(), pair.getValue().asLong());
            }
            return b.build();
        };
    }

    private static void check(JsonNode c, Supplier<Strategy> make) {
        if (c.has("error")) {
            SdsException e = assertThrows(SdsException.class, make::get);
            assertEquals(c.get("error").asText(), e.code().codeName());
            assertEquals(c.get("error").asText() + ": " + c.get("message").asText(), e.getMessage());
            return;
        }
        Strategy s = make.get();
        JsonNode expect = c.get("expect");
        for (String name : Strategy.fieldNames()) {
            long want = expect.has(name) ? expect.get(name).asLong() : Strategy.DEFAULT.get(name);
            assertEquals(want, s.get(name), name);
        }
    }
}
