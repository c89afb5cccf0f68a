package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** {@code promtool check metrics} (installed by {@code make servers}) for the metrics tests. */
public final class Promtool {
    private Promtool() {}

    /** Runs {@code promtool check metrics} on {@code text}: its output, asserting it exits 0. */
    public static String check(String text) throws Exception {
        Process p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream from = p.getInputStream()) {
            byte[] buf = new byte[8192];
            for (int n; (n = from.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool ended");
        String said = new String(out.toByteArray(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), said + "\n" + text);
        return said;
    }
}
