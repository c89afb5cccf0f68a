package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every case of conformance/settings.json (format: conformance/README.md)
 * through the public API: each pair as {@code builder().set(camelCaseKey,
 * value)} with the JSON value as Java has it (null, Boolean, Long, Double,
 * String, List), then {@code connectAdmin} / {@code connectCluster}. A case
 * that starts is closed (Java cannot read the native config back); a refused
 * one throws {@code INVALID_ARGUMENT} with the case's message, {@code {name}}
 * spelled in camelCase. Every case can be expressed so: none is skipped.
 */
class SettingsConformanceTest {
    private static final Pattern NAME = Pattern.compile("\\{([a-z_]+)\\}");

    @TestFactory
    Stream<DynamicTest> everyCaseGetsItsVerdict() throws Exception {
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : ConformanceTest.cases("settings.json")) {
            String name = c.get("service").asText() + ": " + c.get("name").asText();
            tests.add(DynamicTest.dynamicTest(name, () -> run(c)));
        }
        assertTrue(tests.size() >= 41, "settings.json has too few cases: " + tests.size());
        return tests.stream();
    }

    private static void run(JsonNode c) {
        boolean agent = c.get("service").asText().equals("agent");
        ServiceConfig.Builder<?, ?> builder = agent ? AdminConfig.builder() : ClusterConfig.builder();
        for (JsonNode pair : c.get("settings")) {
            builder.set(camelCase(pair.get(0).asText()), ConformanceTest.javaValue(pair.get(1)));
        }
        ServiceConfig config = builder.build();
        try (Client client = new Client(16)) {
            if (c.has("error")) {
                SdsException e = assertThrows(SdsException.class, () -> start(client, config));
                assertSame(ErrorCode.INVALID_ARGUMENT, e.code(), e.getMessage());
                assertEquals("SDS_INVALID_ARGUMENT: " + spelled(c.get("error").asText()), e.getMessage());
            } else {
                BackgroundService<?> service = start(client, config);
                assertFalse(service.isClosed());
                service.close();
                assertTrue(service.isClosed());
            }
        }
    }

    private static BackgroundService<?> start(Client client, ServiceConfig config) {
        return config instanceof AdminConfig ? client.connectAdmin((AdminConfig) config)
                : client.connectCluster((ClusterConfig) config);
    }

    /** The case's message with each {@code {name}} as Java spells it. */
    private static String spelled(String message) {
        Matcher m = NAME.matcher(message);
        StringBuffer out = new StringBuffer();
        while (m.find()) {
            m.appendReplacement(out, camelCase(m.group(1)));
        }
        return m.appendTail(out).toString();
    }

    static String camelCase(String snake) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char ch : snake.toCharArray()) {
            if (ch == '_') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(ch) : ch);
                upper = false;
            }
        }
        return out.toString();
    }
}
