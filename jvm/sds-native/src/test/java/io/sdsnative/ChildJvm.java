package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a main class of the tests in a new JVM on this classpath; its output. */
final class ChildJvm {
    private ChildJvm() {}

    /**
     * Starts {@code main} with program arguments {@code args} in a new JVM on
     * this classpath, its error output merged into its output, and returns it
     * running (for tests that talk to it or kill it).
     */
    static Process start(Class<?> main, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(new File(System.getProperty("java.home"), "bin/java").getPath());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(Arrays.asList(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /**
     * Runs {@code main} (which prints {@code "main ends"} as its last act)
     * with program arguments {@code args} in a new JVM and asserts that the
     * JVM exits with 0 within 5 s after that line; its output.
     */
    static String exitsPromptlyAfterMain(Class<?> main, String... args) throws Exception {
        Process p = start(main, args);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder text = new StringBuilder();
        long mainEnded = 0;
        for (String line; (line = out.readLine()) != null; ) {
            text.append(line).append('\n');
            if (line.equals("main ends")) {
                mainEnded = System.nanoTime();
            }
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), text.toString());
        long exitMs = (System.nanoTime() - mainEnded) / 1_000_000;
        assertEquals(0, p.exitValue(), text.toString());
        assertTrue(mainEnded != 0, text.toString());
        assertTrue(exitMs < 5_000, "exited " + exitMs + " ms after main ended");
        return text.toString();
    }

    static String run(Class<?> main, String... jvmArgs) throws Exception {
        return run(System.getProperty("java.class.path"), main.getName(), jvmArgs);
    }

    static String run(String classPath, String main, String... jvmArgs) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(new File(System.getProperty("java.home"), "bin/java").getPath());
        command.addAll(Arrays.asList(jvmArgs));
        command.add("-cp");
        command.add(classPath);
        command.add(main);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String text = output(p);
        assertEquals(0, p.waitFor(), text);
        return text;
    }

    /** All that {@code p} writes until it closes its output, trimmed. */
    static String output(Process p) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            byte[] buf = new byte[4096];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        }
        return out.toString("UTF-8").trim();
    }
}
