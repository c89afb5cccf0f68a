package io.sdsnative;

import static io.sdsnative.FakeConsole.waitUntil;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Watching the background services (agent, cluster sync) in tests: their
 * native threads, their statuses, and whether a strategy is in force.
 */
final class BackgroundThreads {
    private BackgroundThreads() {}

    /** The names of this process's threads (Linux). */
    static List<String> threadNames() throws IOException {
        List<String> names = new ArrayList<>();
        File[] tasks = new File("/proc/self/task").listFiles();
        for (File task : tasks == null ? new File[0] : tasks) {
            try {
                names.add(new String(Files.readAllBytes(new File(task, "comm").toPath()), StandardCharsets.UTF_8).trim());
            } catch (IOException gone) {
                // The thread ended meanwhile.
            }
        }
        return names;
    }

    /**
     * Fails unless no thread named {@code name} is left within 5 s: a thread
     * just joined can stay in /proc for a moment, so this waits rather than
     * asserting at once.
     */
    static void assertGone(String name) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (threadNames().contains(name)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("thread " + name + " still running: " + threadNames());
            }
            Thread.sleep(5);
        }
    }

    /** Polls {@code status} until {@code check} holds (or fails after {@code timeoutMs}); the status then. */
    static <S> S statusUntil(Supplier<S> status, long timeoutMs, String what, Predicate<S> check)
            throws InterruptedException {
        waitUntil(timeoutMs, what, () -> check.test(status.get()));
        return status.get();
    }

    /** Whether a second call to {@code point} at one instant is refused: a visit threshold of 1 is in force. */
    static boolean limitedToOne(Client client, String point) {
        long now = System.currentTimeMillis();
        client.enter(point, now).close();
        Entry second = client.enter(point, now);
        second.close();
        return second.isDowngraded();
    }
}
