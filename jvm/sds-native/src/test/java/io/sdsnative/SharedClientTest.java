package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Client#openShared}: two JVMs on one table file, and what is refused. */
class SharedClientTest {
    private static final long T = 1_700_000_000_000L;
    private static final int CAPACITY = 64;

    @TempDir
    Path dir;

    private String file() {
        return dir.resolve("table.sds").toString();
    }

    /** Runs {@link SharedChild} on {@code path} to its end; its one output line. */
    private static String child(String path, String... args) throws Exception {
        String[] all = new String[args.length + 2];
        all[0] = path;
        all[1] = String.valueOf(CAPACITY);
        System.arraycopy(args, 0, all, 2, args.length);
        Process p = ChildJvm.start(SharedChild.class, all);
        String text = ChildJvm.output(p);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), text);
        assertEquals(0, p.exitValue(), text);
        return text;
    }

    private static int addAndExit(Client client, String point, int n, long nowMs) {
        int admitted = 0;
        for (int i = 0; i < n; i++) {
            try (Entry e = client.enter(point, nowMs)) {
                admitted += e.isDowngraded() ? 0 : 1;
            }
        }
        return admitted;
    }

    private static void assertCode(ErrorCode code, String messagePart, Runnable action) {
        SdsException e = assertThrows(SdsException.class, action::run);
        assertEquals(code, e.code(), e.getMessage());
        assertTrue(e.getMessage().startsWith(code.codeName() + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(messagePart), e.getMessage());
    }

    @Test
    void twoJvmsAddToTheSameCountsAndReadTheSameTotals() throws Exception {
        try (Client client = Client.openShared(file(), CAPACITY)) {
            assertEquals(file(), client.sharedPath());
            assertEquals(3, addAndExit(client, "p", 3, T));
            assertEquals("admitted 5 visit 8 downgrade 0", child(file(), "add", "p", "5", String.valueOf(T)));
            Stats s = client.stats("p", T);
            assertEquals(8, s.visit());
            assertEquals(0, s.concurrent());
            assertEquals(2, addAndExit(client, "p", 2, T));
            assertEquals("admitted 4 visit 14 downgrade 0", child(file(), "add", "p", "4", String.valueOf(T)));
            assertEquals(14, client.stats("p", T).visit());
        }
    }

    @Test
    void aVisitThresholdSetInOneJvmLimitsTheSumOfBoth() throws Exception {
        int threshold = 10;
        try (Client client = Client.openShared(file(), CAPACITY)) {
            client.setStrategy("p", Strategy.builder().visitThreshold(threshold).build());
            assertEquals(6, addAndExit(client, "p", 6, T));
            // The child sets no strategy: the parent's limits it.
            assertEquals("admitted 4 visit 16 downgrade 6", child(file(), "add", "p", "10", String.valueOf(T)));
            assertEquals(0, addAndExit(client, "p", 3, T + 100));
            Stats s = client.stats("p", T + 100);
            assertEquals(19, s.visit());
            assertEquals(19 - threshold, s.downgrade(), "exactly the threshold was admitted by both");
        }
    }

    @Test
    void aPermitHeldByAKilledJvmComesBackOnARefusedRequest() throws Exception {
        try (Client client = Client.openShared(file(), CAPACITY)) {
            client.setStrategy("slow", Strategy.builder().concurrentThreshold(2).build());
            Process holder = ChildJvm.start(SharedChild.class,
                    file(), String.valueOf(CAPACITY), "hold", "slow", "2", String.valueOf(T));
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                        StandardCharsets.UTF_8));
                assertEquals("held 2", out.readLine());
                Entry refused = client.enter("slow", T);
                assertEquals(Reason.CONCURRENT, refused.reason(), "the child holds both permits");
                refused.exit(T);
                assertEquals(2, client.stats("slow", T).concurrent());
            } finally {
                holder.destroyForcibly(); // SIGKILL on Linux: no exit, no detach
                assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
            }
            // The refusal above scanned for dead holders at T: the next scan is due a second later.
            Entry early = client.enter("slow", T + 500);
            assertEquals(Reason.CONCURRENT, early.reason());
            early.exit(T + 500);
            assertEquals(2, client.stats("slow", T + 500).concurrent(), "no scan before the interval");
            Entry scans = client.enter("slow", T + 1000);
            assertEquals(Reason.CONCURRENT, scans.reason(), "refused, then gives back the dead JVM's permits");
            scans.exit(T + 1000);
            assertEquals(0, client.stats("slow", T + 1000).concurrent());
            try (Entry a = client.enter("slow", T + 1000); Entry b = client.enter("slow", T + 1000)) {
                assertFalse(a.isDowngraded());
                assertFalse(b.isDowngraded());
                assertEquals(Reason.CONCURRENT, client.enter("slow", T + 1000).reason());
            }
        }
    }

    @Test
    void twoClientsOfOneJvmShareTheFileAndCloseDetachesOnlyOne() {
        try (Client a = Client.openShared(file(), CAPACITY)) {
            try (Client b = Client.openShared(file(), CAPACITY)) {
                addAndExit(a, "p", 2, T);
                addAndExit(b, "p", 3, T);
                assertEquals(5, a.stats("p", T).visit());
            }
            assertEquals(5, a.stats("p", T).visit(), "closing b left a attached");
            assertEquals(1, addAndExit(a, "p", 1, T));
        }
    }

    @Test
    void aBareNameIsAFileUnderDevShm() throws Exception {
        String name = "sds-jvm-test-" + UUID.randomUUID() + ".sds";
        Path path = Paths.get("/dev/shm", name);
        try (Client client = Client.openShared(name, 8, Client.SHARED_GROUP_MODE)) {
            assertEquals(path.toString(), client.sharedPath());
            assertTrue(Files.isRegularFile(path));
        } finally {
            Files.deleteIfExists(path);
        }
    }

    @Test
    void aPrivateClientHasNoSharedPath() {
        try (Client client = new Client(8)) {
            assertNull(client.sharedPath());
        }
    }

    @Test
    void namesThatAreNoFileAreRefused() {
        assertCode(ErrorCode.NULL_ARGUMENT, "shared table name is null", () -> Client.openShared(null, 8));
        assertCode(ErrorCode.INVALID_ARGUMENT, "shared table name \"\" is empty", () -> Client.openShared("", 8));
        assertCode(ErrorCode.INVALID_ARGUMENT, "shared table name \"..\" is not a file name",
                () -> Client.openShared("..", 8));
        assertCode(ErrorCode.INVALID_ARGUMENT, "holds a NUL character", () -> Client.openShared("a\0b", 8));
        assertCode(ErrorCode.INVALID_ARGUMENT, "shared table name is not valid UTF-16: lone surrogate U+D800",
                () -> Client.openShared("a\ud800", 8));
    }

    @Test
    void aSymlinkIsRefusedAndNotFollowed() throws Exception {
        Path target = dir.resolve("target.sds");
        Path link = Files.createSymbolicLink(dir.resolve("link.sds"), target);
        assertCode(ErrorCode.INVALID_ARGUMENT, link + ": is a symbolic link (refused)",
                () -> Client.openShared(link.toString(), 8));
        assertFalse(Files.exists(target), "nothing was created through the link");
    }

    @Test
    void aCapacityOutOfRangeIsRefused() {
        for (int capacity : new int[] {0, -1, (1 << 20) + 1, Integer.MIN_VALUE}) {
            // The core's verdict and message, as for a private table.
            SdsException e = assertThrows(SdsException.class, () -> Client.openShared(file(), capacity));
            assertEquals(ErrorCode.INVALID_CAPACITY, e.code());
            assertEquals("SDS_INVALID_CAPACITY: table capacity must be within 1..=1048576", e.getMessage());
        }
        assertFalse(Files.exists(Paths.get(file())), "no file for a bad capacity");
    }

    @Test
    void aFileOfAnotherCapacityIsALayoutMismatch() {
        try (Client client = Client.openShared(file(), 8)) {
            assertCode(ErrorCode.LAYOUT_MISMATCH,
                    file() + ": table layout differs in capacity: the file has 8, this process needs 16",
                    () -> Client.openShared(file(), 16));
        }
        assertCode(ErrorCode.LAYOUT_MISMATCH, "the file has 8, this process needs 16",
                () -> Client.openShared(file(), 16));
    }

    @Test
    void onlyModes0600And0660AreTaken() {
        assertCode(ErrorCode.INVALID_ARGUMENT, "mode must be 0600 or 0660 (octal), not 0644",
                () -> Client.openShared(file(), 8, 0644));
        try (Client client = Client.openShared(file(), 8, 0660)) {
            assertEquals(file(), client.sharedPath());
        }
        assertCode(ErrorCode.INVALID_ARGUMENT, "grants more than the 0600 asked for (refused)",
                () -> Client.openShared(file(), 8));
    }

    @Test
    void aClosedSharedClientThrowsClosed() {
        Client client = Client.openShared(file(), 8);
        client.close();
        assertCode(ErrorCode.CLOSED, "", () -> client.enter("p", T));
        assertCode(ErrorCode.CLOSED, "", client::sharedPath);
    }
}
