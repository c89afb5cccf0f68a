package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every scenario of conformance/scenarios through io.sdsnative, and every case of
 * conformance/windows.json through the window functions of {@link Native} (format:
 * conformance/README.md).
 */
class ConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The folder conformance/scenarios. */
    private static File scenarioDir() {
        return new File(System.getProperty("sds.conformance.dir", "../../conformance/scenarios"));
    }

    /** The cases of a file of conformance/ ({@code "settings.json"}, {@code "strategies.json"}). */
    static JsonNode cases(String file) throws IOException {
        return JSON.readTree(new File(scenarioDir().getParentFile(), file)).get("cases");
    }

    static File[] scenarioFiles() {
        return jsonFiles(scenarioDir(), 3, "scenarios");
    }

    /** The {@code .json} files of {@code dir} by name; fails with fewer than {@code atLeast}. */
    static File[] jsonFiles(File dir, int atLeast, String what) {
        File[] files = dir.listFiles((d, name) -> name.endsWith(".json"));
        assertTrue(files != null && files.length >= atLeast, what + " are missing in " + dir);
        Arrays.sort(files);
        return files;
    }

    @TestFactory
    Stream<DynamicTest> everyScenario() {
        return Arrays.stream(scenarioFiles()).map(f -> DynamicTest.dynamicTest(f.getName(), () -> run(f)));
    }

    /** Every scenario again on a table shared through a file (a new file each). */
    @TestFactory
    Stream<DynamicTest> everyScenarioOnASharedTable() throws Exception {
        return eachOnANewFile(scenarioFiles(), ".sds", (f, table) -> run(f, Client.openShared(table.toString(), 16)));
    }

    /** A test of a scenario file given a table file of its own. */
    interface OnAFile {
        void run(File scenario, Path table) throws Exception;
    }

    /**
     * A test per scenario file, each given a new path in a temp folder (the
     * scenario's name and {@code suffix}), deleted after it.
     */
    static Stream<DynamicTest> eachOnANewFile(File[] scenarios, String suffix, OnAFile test) throws IOException {
        Path dir = Files.createTempDirectory("sds-conformance");
        dir.toFile().deleteOnExit();
        return Arrays.stream(scenarios).map(f -> DynamicTest.dynamicTest(f.getName(), () -> {
            Path table = dir.resolve(f.getName() + suffix);
            try {
                test.run(f, table);
            } finally {
                Files.deleteIfExists(table);
            }
        }));
    }

    /**
     * A JSON value as a Java caller would give it to a setter or {@code set}: null, Boolean, Long (a number
     * beyond a long as a BigInteger), Double, String, List, or a Map of an object.
     */
    static Object javaValue(JsonNode v) {
        if (v.isNull()) {
            return null;
        } else if (v.isBoolean()) {
            return v.booleanValue();
        } else if (v.isIntegralNumber()) {
            return v.canConvertToLong() ? (Object) v.longValue() : v.bigIntegerValue();
        } else if (v.isNumber()) {
            return v.doubleValue();
        } else if (v.isTextual()) {
            return v.textValue();
        } else if (v.isArray()) {
            List<Object> items = new ArrayList<>();
            v.forEach(item -> items.add(javaValue(item)));
            return items;
        }
        Map<String, Object> members = new LinkedHashMap<>();
        v.fields().forEachRemaining(m -> members.put(m.getKey(), javaValue(m.getValue())));
        return members;
    }

    private static void run(File file) throws Exception {
        run(file, new Client(16));
    }

    private static void run(File file, Client fresh) throws Exception {
        JsonNode scenario = JSON.readTree(file);
        String defaultPoint = scenario.path("point").asText("p");
        try (Client client = fresh) {
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
                List<Long> waits = new ArrayList<>();
                for (int n = 0; n < repeat; n++) {
                    Entry e = client.enter(point, at, pressure);
                    tally.merge(e.reason() == null ? "pass" : e.reason().name(), 1, Integer::sum);
                    waits.add(e.waitMs());
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
                checkWaits(step.get("waitMs"), waits, where);
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
                actual.put("adaptiveLimit", s.adaptiveLimit());
                actual.put("adaptiveMinRttUs", s.adaptiveMinRttUs());
                actual.put("adaptiveRttUs", s.adaptiveRttUs());
                actual.put("adaptiveLongRttUs", s.adaptiveLongRttUs());
                actual.put("lastCycle.visitNum", s.lastCycleVisitNum());
                actual.put("lastCycle.exceptionNum", s.lastCycleExceptionNum());
                actual.put("lastCycle.timeoutNum", s.lastCycleTimeoutNum());
                actual.put("lastCycle.downgradeNum", s.lastCycleDowngradeNum());
                actual.put("lastCycle.concurrentNum", s.lastCycleConcurrentNum());
                // Every value of the core's stats table has its accessor, and no more.
                assertEquals(new TreeSet<>(Arrays.asList(CoreTables.STATS_NAMES)), new TreeSet<>(actual.keySet()),
                        where + ": the stats accessors");
                checkSubset(step.get("expect"), "", actual, where);
                break;
            }
            default:
                fail(where + ": unknown op " + op);
        }
    }

    /**
     * An enter step's {@code waitMs}, as conformance/src/lib.rs checks it: absent (not
     * checked), one number (one entry) or one number per entry, in order.
     */
    static void checkWaits(JsonNode want, List<Long> got, String where) {
        boolean ok;
        if (want == null || want.isNull()) {
            ok = true;
        } else if (want.isIntegralNumber()) {
            ok = got.size() == 1 && want.canConvertToLong() && want.asLong() >= 0 && want.asLong() == got.get(0);
        } else if (want.isArray()) {
            ok = want.size() == got.size();
            for (int i = 0; ok && i < got.size(); i++) {
                JsonNode w = want.get(i);
                ok = w.isIntegralNumber() && w.canConvertToLong() && w.asLong() >= 0 && w.asLong() == got.get(i);
            }
        } else {
            throw new AssertionError(where + ": waitMs must be a number or a list, got " + want);
        }
        assertTrue(ok, where + ": waitMs: expected " + want + ", got " + got);
    }

    /** The wait check fails on what it must refuse (so a scenario's waits are really compared). */
    @Test
    void waitCheckRefusesMismatches() throws Exception {
        List<Long> one = Arrays.asList(100L);
        List<Long> three = Arrays.asList(0L, 100L, 0L);
        checkWaits(null, three, "absent");
        checkWaits(JSON.readTree("100"), one, "number");
        checkWaits(JSON.readTree("[0, 100, 0]"), three, "list");
        for (String bad : new String[] {"99", "[100, 0]", "[0, 100, 1]", "[0, 100, 0, 0]"}) {
            List<Long> got = bad.startsWith("[") ? three : one;
            assertThrows(AssertionError.class, () -> checkWaits(JSON.readTree(bad), got, bad), bad);
        }
        assertThrows(AssertionError.class, () -> checkWaits(JSON.readTree("100"), three, "number, three entries"));
        assertThrows(AssertionError.class, () -> checkWaits(JSON.readTree("\"100\""), one, "text"));
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

    // conformance/windows.json, every step, through the window functions of Native. Counts
    // and values above 2^63 - 1 go in as the long of the same 64 bits (Native reads them
    // unsigned).

    private static final BigInteger MAX_JSON_NUMBER = BigInteger.ONE.shiftLeft(53);

    static File windowsFile() {
        return new File(scenarioFiles()[0].getParentFile().getParentFile(), "windows.json");
    }

    @TestFactory
    Stream<DynamicTest> everyWindowCase() throws Exception {
        JsonNode cases = JSON.readTree(windowsFile()).get("cases");
        assertTrue(cases.size() >= 10, "window cases are missing");
        List<DynamicTest> tests = new ArrayList<>();
        int[] ran = {0};
        for (JsonNode c : cases) {
            tests.add(DynamicTest.dynamicTest(c.get("name").asText(), () -> ran[0] += runWindowCase(c)));
        }
        int total = 0;
        for (JsonNode c : cases) {
            total += c.get("steps").size();
        }
        int steps = total;
        tests.add(DynamicTest.dynamicTest("every window step runs here",
                () -> assertTrue(ran[0] == steps && steps >= 125, ran[0] + " of " + steps + " window steps ran")));
        return tests.stream();
    }

    /** An integer of the format: a number up to 2^53 or decimal text. */
    private static BigInteger windowInt(JsonNode v, String what) {
        BigInteger n;
        if (v != null && v.isTextual() && v.asText().matches("[0-9]+")) {
            n = new BigInteger(v.asText());
        } else if (v != null && v.isIntegralNumber()) {
            n = v.bigIntegerValue();
            assertTrue(n.compareTo(MAX_JSON_NUMBER) <= 0, what + ": " + v + " above 2^53 must be a string");
        } else {
            throw new AssertionError(what + ": " + v + " is no integer of the format");
        }
        assertTrue(n.signum() >= 0, what + ": " + v + " is negative");
        return n;
    }

    /** {@code v} (0 .. 2^64 - 1) as the long of its 64 bits, as Native reads counts. */
    private static long unsigned(BigInteger v) {
        return v.longValue();
    }

    /** Runs every step of the case; how many ran. */
    private static int runWindowCase(JsonNode c) {
        JsonNode shape = c.get("window");
        long w = Native.windowNew(windowInt(shape.get("bucket_ms"), "bucket_ms").longValueExact(),
                windowInt(shape.get("buckets"), "buckets").intValueExact(),
                windowInt(shape.get("ring"), "ring").intValueExact());
        try {
            JsonNode steps = c.get("steps");
            for (int i = 0; i < steps.size(); i++) {
                JsonNode step = steps.get(i);
                String where = windowsFile() + ": " + c.get("name").asText() + ": step " + i + " " + step;
                windowStep(w, step, where);
            }
            return steps.size();
        } finally {
            Native.windowFree(w);
        }
    }

    /** One step. */
    private static void windowStep(long w, JsonNode step, String where) {
        // The handle is freed by runWindowCase, not a reclaimer: any object will do as owner.
        Object owner = step;
        long at = windowInt(step.get("at"), "at").longValueExact();
        JsonNode expect = step.get("expect");
        String op = step.path("op").asText();
        switch (op) {
            case "add": {
                long[] tally = {-1, -1};
                long n = unsigned(windowInt(step.get("n"), "n"));
                long bucket = Native.check(Native.windowAdd(w, owner, at, n, tally));
                check(where, "bucket", windowInt(expect.get("bucket"), "bucket"), bucket);
                check(where, "tally[0]", windowInt(expect.get("bucket"), "bucket"), tally[0]);
                check(where, "total", windowInt(expect.get("total"), "total"), tally[1]);
                return;
            }
            case "add_at": {
                long now = windowInt(step.get("now"), "now").longValueExact();
                long n = unsigned(windowInt(step.get("n"), "n"));
                long bucket = Native.check(Native.windowAddAt(w, owner, at, now, n));
                check(where, "bucket", windowInt(expect.get("bucket"), "bucket"), bucket);
                check(where, "total", windowInt(expect.get("total"), "total"),
                        Native.check(Native.windowSum(w, owner, now)));
                return;
            }
            case "sum":
                check(where, op, windowInt(expect, "expect"), Native.check(Native.windowSum(w, owner, at)));
                return;
            case "bucket":
                check(where, op, windowInt(expect, "expect"), Native.check(Native.windowBucket(w, owner, at)));
                return;
            case "last_whole_cycle":
                check(where, op, windowInt(expect, "expect"), Native.check(Native.windowLastCycle(w, owner, at)));
                return;
            case "set":
                Native.check(Native.windowSet(w, owner, at, unsigned(windowInt(step.get("value"), "value"))));
                return;
            case "fetch_max": {
                long value = unsigned(windowInt(step.get("value"), "value"));
                check(where, op, windowInt(expect, "expect"), Native.check(Native.windowFetchMax(w, owner, at, value)));
                return;
            }
            case "clear_next_cycle":
                Native.check(Native.windowClearNextCycle(w, owner, at));
                return;
            default:
                throw new AssertionError(where + ": unknown op " + op);
        }
    }

    private static void check(String where, String what, BigInteger want, long got) {
        assertEquals(want, BigInteger.valueOf(got), where + ": " + what + ": expected " + want + ", got " + got);
    }
}
