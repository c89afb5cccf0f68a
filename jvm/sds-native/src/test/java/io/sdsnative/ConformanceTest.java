package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Runs every scenario of conformance/scenarios through io.sdsnative (format: conformance/README.md). */
class ConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static File[] scenarioFiles() {
        File dir = new File(System.getProperty("sds.conformance.dir", "../../conformance/scenarios"));
        File[] files = dir.listFiles((d, name) -> name.endsWith(".json"));
        assertTrue(files != null && files.length >= 3, "scenarios are missing in " + dir);
        Arrays.sort(files);
        return files;
    }

    @TestFactory
    Stream<DynamicTest> everyScenario() {
        return Arrays.stream(scenarioFiles()).map(f -> DynamicTest.dynamicTest(f.getName(), () -> run(f)));
    }

    private static void run(File file) throws Exception {
        JsonNode scenario = JSON.readTree(file);
        String defaultPoint = scenario.path("point").asText("p");
        try (Client client = new Client(16)) {
            if (scenario.has("strategy")) {
                String error = setStrategy(client, defaultPoint, scenario.get("strategy"));
                assertEquals(null, error, file.getName() + ": initial strategy");
            }
            Map<String, List<Entry>> open = new HashMap<>();
            JsonNode steps = scenario.get("steps");
            for (int i = 0; i < steps.size(); i++) {
                JsonNode step = steps.get(i);
                String where = file.getName() + " step " + i + " " + step;
                step(client, open, step, defaultPoint, where);
            }
        }
    }

    private static void step(Client client, Map<String, List<Entry>> open, JsonNode step, String defaultPoint,
            String where) {
        long at = step.get("at").asLong();
        String point = step.path("point").asText(defaultPoint);
        String op = step.path("op").asText();
        switch (op) {
            case "enter": {
                int repeat = step.path("repeat").asInt(1);
                boolean pressure = step.path("pressure_test").asBoolean(false);
                Map<String, Integer> tally = new TreeMap<>();
                for (int n = 0; n < repeat; n++) {
                    Entry e = client.enter(point, at, pressure);
                    tally.merge(e.reason() == null ? "pass" : e.reason().name(), 1, Integer::sum);
                    assertEquals(e.reason() != null, e.isDowngraded(), where + ": reason iff downgraded");
                    if (step.hasNonNull("id")) {
                        open.computeIfAbsent(step.get("id").asText(), k -> new ArrayList<>()).add(e);
                    } else {
                        e.exit(at);
                    }
                }
                JsonNode expect = step.get("expect");
                if (repeat == 1 && expect.isTextual()) {
                    assertEquals(expect.asText(), tally.keySet().iterator().next(), where);
                } else {
                    Map<String, Integer> want = new TreeMap<>();
                    expect.fields().forEachRemaining(en -> want.put(en.getKey(), en.getValue().asInt()));
                    assertEquals(want, tally, where);
                }
                break;
            }
            case "exit": {
                List<Entry> group = open.remove(step.get("id").asText());
                if (group == null) {
                    fail(where + ": no open group");
                }
                boolean failed = "error".equals(step.path("outcome").asText("ok"));
                for (Entry e : group) {
                    if (failed) {
                        e.error(new RuntimeException("scenario error"));
                    }
                    e.exit(at);
                }
                break;
            }
            case "set_strategy": {
                String got = setStrategy(client, point, step.get("strategy"));
                String want = step.hasNonNull("error") ? step.get("error").asText() : null;
                assertEquals(want, got, where);
                break;
            }
            case "stats": {
                Stats s = client.stats(point, at);
                Map<String, Long> actual = new HashMap<>();
                actual.put("visit", s.visit());
                actual.put("exception", s.exception());
                actual.put("timeout", s.timeout());
                actual.put("downgrade", s.downgrade());
                actual.put("concurrent", s.concurrent());
                actual.put("lastCycle.visitNum", s.lastCycleVisitNum());
                actual.put("lastCycle.exceptionNum", s.lastCycleExceptionNum());
                actual.put("lastCycle.timeoutNum", s.lastCycleTimeoutNum());
                actual.put("lastCycle.downgradeNum", s.lastCycleDowngradeNum());
                actual.put("lastCycle.concurrentNum", s.lastCycleConcurrentNum());
                checkSubset(step.get("expect"), "", actual, where);
                break;
            }
            default:
                fail(where + ": unknown op " + op);
        }
    }

    private static void checkSubset(JsonNode expect, String prefix, Map<String, Long> actual, String where) {
        for (Iterator<Map.Entry<String, JsonNode>> it = expect.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> en = it.next();
            String key = prefix + en.getKey();
            if (en.getValue().isObject()) {
                checkSubset(en.getValue(), key + ".", actual, where);
            } else {
                assertTrue(actual.containsKey(key), where + ": no such stat " + key);
                assertEquals(en.getValue().asLong(), (long) actual.get(key), where + ": stats." + key);
            }
        }
    }

    /** Sets (or with JSON null removes) a strategy; the error code name or null. */
    private static String setStrategy(Client client, String point, JsonNode strategy) {
        try {
            if (strategy == null || strategy.isNull()) {
                client.removeStrategy(point);
            } else {
                client.setStrategy(point, Strategy.fromJson(strategy.toString()));
            }
            return null;
        } catch (SdsException e) {
            return e.code().codeName();
        }
    }
}
