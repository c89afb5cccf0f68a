package io.sdsnative;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * Run in a child JVM by ClientMemoryTest: creates and closes clients of 1024
 * points, never asking for a garbage collection, and prints the peak resident
 * size. Stops early once the resident size passes the bound, so a regression
 * fails fast instead of eating the machine's memory.
 */
public final class CloseMemoryProbe {
    private CloseMemoryProbe() {}

    /** A line of /proc/self/status, in kB. */
    static long statusKb(String field) throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"), StandardCharsets.UTF_8)) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no " + field + " in /proc/self/status");
    }

    public static void main(String[] args) throws IOException {
        int clients = Integer.getInteger("probe.clients", 3000);
        long boundKb = Long.getLong("probe.boundKb", 300 * 1024);
        for (int i = 0; i < clients; i++) {
            Client client = new Client(1024);
            client.enter("p", 1_700_000_000_000L).close();
            client.close();
            if (i % 100 == 0 && statusKb("VmRSS") > boundKb) {
                System.out.println("stopped at client " + i);
                break;
            }
        }
        System.out.println("peak " + statusKb("VmHWM"));
    }
}
