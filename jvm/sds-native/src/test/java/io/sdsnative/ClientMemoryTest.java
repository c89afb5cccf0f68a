package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

class ClientMemoryTest {
    /** 3000 tables of 1024 points are about 4.8 GB; a JVM of -Xmx64m needs well under 300 MB. */
    private static final long BOUND_KB = 300 * 1024;

    @Test
    void closedClientsFreeTheirTablesWithoutAGarbageCollection() throws Exception {
        assumeTrue(Files.isReadable(Paths.get("/proc/self/status")), "reads VmHWM from /proc/self/status");
        String out = ChildJvm.run(CloseMemoryProbe.class, "-Xmx64m", "-Dprobe.clients=3000", "-Dprobe.boundKb=" + BOUND_KB);
        assertTrue(out.startsWith("peak "), out);
        long peakKb = Long.parseLong(out.substring("peak ".length()).trim());
        assertTrue(peakKb < BOUND_KB, "peak resident size " + peakKb + " kB, bound " + BOUND_KB + " kB");
    }
}
