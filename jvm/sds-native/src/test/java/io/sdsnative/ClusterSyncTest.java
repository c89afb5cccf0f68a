package io.sdsnative;

import static io.sdsnative.BackgroundThreads.assertGone;
import static io.sdsnative.BackgroundThreads.threadNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sdsnative.RedisServer.Tls;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Client#connectCluster}: cluster points synced through a real redis-server. */
class ClusterSyncTest {
    private static final long WAIT_MS = 10_000;
    private static final String POINT = "pay";

    private RedisServer redis;

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisServer.start();
    }

    @AfterEach
    void stopRedis() throws Exception {
        redis.close();
    }

    private ClusterConfig.Builder config() {
        return ClusterConfig.builder().url(redis.url()).points(POINT);
    }

    private static Client clientLimitedTo(int visitThreshold) {
        Client client = new Client(16);
        Strategy strategy = Strategy.builder().visitThreshold(visitThreshold).build();
        client.setStrategy(POINT, strategy);
        client.setStrategy("local", strategy);
        return client;
    }

    /** How many of {@code tries} enter + exit on {@code point} now are admitted. */
    private static int admit(Client client, String point, int tries) {
        int admitted = 0;
        for (int i = 0; i < tries; i++) {
            try (Entry e = client.enter(point)) {
                admitted += e.isDowngraded() ? 0 : 1;
            }
        }
        return admitted;
    }

    private static ClusterStatus statusUntil(ClusterSync cluster, String what, Predicate<ClusterStatus> check)
            throws InterruptedException {
        return BackgroundThreads.statusUntil(cluster::status, WAIT_MS, what, check);
    }

    /** Waits until {@code cluster} has completed a sync that started after this call. */
    private static void aWholeSync(ClusterSync cluster) throws InterruptedException {
        long syncs = cluster.status().syncs();
        statusUntil(cluster, "two more syncs", s -> s.syncs() >= syncs + 2);
    }

    /** How the counts of one client's sync reach the other's table. */
    private interface Carry {
        void carry(ClusterSync sync) throws InterruptedException;
    }

    /**
     * Two clients limited to {@code t} on {@link #POINT}, each syncing every
     * {@code syncMs}: the first admits up to {@code first}, {@code carry} runs
     * on its sync then on the other's, and the second admits up to {@code t}.
     * What each admitted; a local point counts per client.
     */
    private int[] admittedOneAfterTheOther(int t, int syncMs, int first, Carry carry) throws Exception {
        try (Client a = clientLimitedTo(t); Client b = clientLimitedTo(t);
                ClusterSync ca = a.connectCluster(config().syncMs(syncMs).build());
                ClusterSync cb = b.connectCluster(config().syncMs(syncMs).build())) {
            int[] admitted = {admit(a, POINT, first), 0};
            carry.carry(ca);
            carry.carry(cb);
            admitted[1] = admit(b, POINT, t);
            assertEquals(t, admit(a, "local", t));
            assertEquals(t, admit(b, "local", t), "a local point counts per client");
            return admitted;
        }
    }

    /** After one client's sync, its admissions count against the other's; a local point stays per client. */
    @Test
    void twoClientsShareAClusterPointsVisitThreshold() throws Exception {
        // a's 6 visits in Redis, then b reads them.
        int[] admitted = admittedOneAfterTheOther(10, 60_000, 6, ClusterSync::syncNow);
        System.out.printf("cluster point, sync_now between: T=%d, bound=%d (every count synced before the"
                + " other decides), admitted %d + %d%n", 10, 10, admitted[0], admitted[1]);
        assertEquals(6, admitted[0]);
        assertEquals(4, admitted[1]);
    }

    /** The same through the background thread alone (sync every 20 ms). */
    @Test
    void theSyncThreadCarriesTheCountsToTheOtherClient() throws Exception {
        int[] admitted = admittedOneAfterTheOther(10, 20, 7, ClusterSyncTest::aWholeSync);
        System.out.printf("cluster point, sync_ms 20: T=%d, admitted %d + %d%n", 10, admitted[0], admitted[1]);
        assertEquals(7, admitted[0]);
        assertEquals(3, admitted[1]);
    }

    /**
     * Two clients sending at once: the total admitted is at least T and
     * within the documented bound, T + (N - 1) x R x (sync_ms + RTT), plus a
     * margin for this shared machine's scheduling (a late sync).
     */
    @Test
    void twoClientsAtOnceAdmitAboutTheThreshold() throws Exception {
        int t = 50;
        int syncMs = 20;
        int perSecond = 100;
        int tries = 150;
        try (Client a = clientLimitedTo(t); Client b = clientLimitedTo(t);
                ClusterSync ca = a.connectCluster(config().syncMs(syncMs).build());
                ClusterSync cb = b.connectCluster(config().syncMs(syncMs).build())) {
            aWholeSync(ca);
            aWholeSync(cb);
            int[] admitted = new int[2];
            Thread[] senders = new Thread[2];
            Client[] clients = {a, b};
            for (int i = 0; i < 2; i++) {
                int n = i;
                senders[i] = new Thread(() -> {
                    for (int k = 0; k < tries; k++) {
                        admitted[n] += admit(clients[n], POINT, 1);
                        sleepMs(1000 / perSecond);
                    }
                });
                senders[i].start();
            }
            for (Thread s : senders) {
                s.join();
            }
            long rttUs = Math.max(ca.status().rttUs(), cb.status().rttUs());
            double bound = t + perSecond * (syncMs + rttUs / 1000.0) / 1000.0;
            int total = admitted[0] + admitted[1];
            System.out.printf("2 clients x %d/s, sync_ms %d: T=%d, bound=%.1f, admitted %d (%d + %d)%n",
                    perSecond, syncMs, t, bound, total, admitted[0], admitted[1]);
            assertTrue(total >= t, "admitted " + total);
            assertTrue(total <= bound + 5, "admitted " + total + ", bound " + bound);
        }
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Nanoseconds of each of {@code n} enter + exit on the point. */
    private static long[] timed(Client client, int n) {
        long[] ns = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            client.enter(POINT).close();
            ns[i] = System.nanoTime() - start;
        }
        Arrays.sort(ns);
        return ns;
    }

    private static long at(long[] sorted, double quantile) {
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))];
    }

    /**
     * The status while connected; with Redis stopped, enter and exit take no
     * longer, the status says disconnected with the error, exact mode decides
     * locally; after a restart on the same port it reconnects.
     */
    @Test
    void redisDownDoesNotDelayEnterAndIsInTheStatus() throws Exception {
        long started = System.currentTimeMillis();
        try (Client client = clientLimitedTo(1_000_000);
                ClusterSync cluster = client.connectCluster(
                        config().syncMs(20).timeoutMs(200).maxBackoffMs(100).build())) {
            ClusterStatus s = statusUntil(cluster, "two syncs", x -> x.syncs() >= 2);
            assertTrue(s.connected(), s.toString());
            assertTrue(s.syncing(), s.toString());
            assertTrue(s.lastSyncMs() >= started && s.lastSyncMs() <= System.currentTimeMillis(), s.toString());
            assertTrue(s.lagMs() < 5_000, s.toString());
            assertTrue(s.rttUs() > 0, s.toString());
            assertTrue(s.roundTrips() >= s.syncs() && s.commands() >= s.roundTrips(), s.toString());
            assertEquals(1, s.points());
            assertEquals(0, s.pointsFailing());
            assertEquals(0, s.failures(), s.toString());
            assertEquals(Optional.empty(), s.lastError());
            timed(client, 20_000); // warm-up: compiled before either measure
            long[] up = timed(client, 20_000);

            redis.stop();
            s = statusUntil(cluster, "disconnected", x -> !x.connected() && x.lastError().isPresent());
            assertTrue(s.failures() > 0, s.toString());
            long[] down = timed(client, 20_000);
            System.out.printf("enter + exit median / p99 ns: connected %d / %d, Redis down %d / %d; status %s%n",
                    at(up, 0.5), at(up, 0.99), at(down, 0.5), at(down, 0.99), s);
            assertTrue(at(down, 0.5) < 3 * at(up, 0.5) + 20_000,
                    "median with Redis down " + at(down, 0.5) + " ns, connected " + at(up, 0.5) + " ns");
            ClusterDecision local = cluster.enterExact(POINT);
            assertTrue(local.isAdmitted() && !local.isExact(), local.toString());
            SdsException e = assertThrows(SdsException.class, cluster::syncNow);
            assertSame(ErrorCode.UNAVAILABLE, e.code());
            assertTrue(e.getMessage().startsWith("SDS_UNAVAILABLE: redis: "), e.getMessage());

            redis.restart();
            long failures = cluster.status().failures();
            s = statusUntil(cluster, "reconnected",
                    x -> x.connected() && !x.lastError().isPresent() && x.lagMs() < 1_000);
            assertTrue(s.failures() >= failures, s.toString());
            ClusterDecision exact = cluster.enterExact(POINT);
            assertTrue(exact.isAdmitted() && exact.isExact(), exact.toString());
        }
    }

    /** Exact mode: two clients asking Redis admit exactly T. */
    @Test
    void exactModeAdmitsExactlyTheThreshold() throws Exception {
        int t = 5;
        try (Client a = clientLimitedTo(t); Client b = clientLimitedTo(t);
                ClusterSync ca = a.connectCluster(config().build());
                ClusterSync cb = b.connectCluster(config().build())) {
            long now = System.currentTimeMillis();
            int admitted = 0;
            for (int i = 0; i < 8; i++) {
                for (ClusterSync c : new ClusterSync[] {ca, cb}) {
                    ClusterDecision d = c.enterExact(POINT, now);
                    assertTrue(d.isExact(), d.toString());
                    if (d.isAdmitted()) {
                        admitted++;
                        assertEquals(null, d.reason());
                    } else {
                        assertSame(Reason.VISIT, d.reason());
                        assertTrue(d.isDowngraded());
                    }
                }
            }
            System.out.printf("exact mode, 2 clients x 8 tries: T=%d, admitted %d%n", t, admitted);
            assertEquals(t, admitted);
            SdsException notCluster = assertThrows(SdsException.class, () -> ca.enterExact("local", now));
            assertEquals("SDS_INVALID_ARGUMENT: cluster table: point \"local\" is not a cluster point of this"
                    + " cluster", notCluster.getMessage());
            assertSame(ErrorCode.INVALID_ARGUMENT,
                    assertThrows(SdsException.class, () -> ca.enterExact(POINT, -1)).code());
            assertSame(ErrorCode.NULL_ARGUMENT,
                    assertThrows(SdsException.class, () -> ca.enterExact(null, now)).code());
        }
    }

    private static void assertRefused(ClusterConfig config, String message) {
        try (Client client = new Client(4)) {
            SdsException e = assertThrows(SdsException.class, () -> client.connectCluster(config));
            assertSame(ErrorCode.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().startsWith("SDS_INVALID_ARGUMENT: " + message), e.getMessage());
        }
    }

    @Test
    void aBadConfigIsRefusedWithTheClusterCratesReason() throws Exception {
        String invalid = "invalid cluster configuration: ";
        assertRefused(ClusterConfig.builder().points(POINT).build(),
                invalid + "urls: at least one Redis URL is needed");
        assertRefused(config().url("http://127.0.0.1:6379").build(),
                invalid + "urls[0] is not a Redis URL: ");
        assertRefused(config().syncMs(0).build(), invalid + "sync_ms and timeout_ms must be at least 1");
        assertRefused(config().timeoutMs(-1).build(), invalid
                + "timeoutMs must be a whole number of milliseconds from 0 to 18446744073709551615, not -1");
        char[] longName = new char[257];
        Arrays.fill(longName, 'x');
        assertRefused(config().points(new String(longName)).build(),
                invalid + "point name \"" + new String(longName) + "\" must be 1 to 256 bytes");
        assertRefused(config().points("a", "b", "a").build(),
                invalid + "points[2] \"a\" is listed twice (also points[0])");
        assertRefused(config().keyPrefix("a{b").build(),
                invalid + "key_prefix \"a{b\" holds a brace, which would break the hash tag");
        assertRefused(config().points("ok", "\ud800").build(), invalid
                + "points[1] must be text, not a value of type java.lang.String with a lone surrogate");
        assertRefused(config().url(null).build(), invalid + "urls: at least one Redis URL is needed");
        try (Client client = new Client(4)) {
            assertSame(ErrorCode.NULL_ARGUMENT,
                    assertThrows(SdsException.class, () -> client.connectCluster(null)).code());
        }
        assertGone("sds-cluster");
    }

    @Test
    void closeJoinsTheThreadIsIdempotentAndKeepsTheLastStatus() throws Exception {
        Client client = clientLimitedTo(10);
        ClusterSync cluster = client.connectCluster(config().syncMs(20).build());
        statusUntil(cluster, "a sync", s -> s.syncs() >= 1);
        assertTrue(threadNames().contains("sds-cluster"), threadNames().toString());
        long start = System.nanoTime();
        cluster.close();
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs < 1_000, "joined after " + tookMs + " ms");
        assertGone("sds-cluster");
        assertTrue(cluster.isClosed());
        cluster.close();
        // The last state stays readable, as of the join.
        ClusterStatus last = cluster.status();
        assertTrue(last.connected() && last.syncs() >= 1 && last.points() == 1, last.toString());
        Thread.sleep(60);
        assertEquals(last, cluster.status());
        assertSame(ErrorCode.CLOSED, assertThrows(SdsException.class, () -> cluster.enterExact(POINT)).code());
        assertSame(ErrorCode.CLOSED, assertThrows(SdsException.class, cluster::syncNow).code());
        assertFalse(client.isClosed(), "the client stays open");
        assertEquals(1, admit(client, POINT, 1), "the point still works");
        client.close();
    }

    @Test
    void withRedisPausedSyncNowKeepsItsTimeoutAndCloseReturnsAtOnce() throws Exception {
        String[] points = new String[20];
        for (int i = 0; i < points.length; i++) {
            points[i] = "p" + i;
        }
        try (Client client = new Client(64)) {
            ClusterSync cluster = client.connectCluster(config().points(points).syncMs(50).timeoutMs(1_000).build());
            statusUntil(cluster, "a sync", s -> s.syncs() >= 1);
            redis.signal("STOP");
            try {
                long start = System.nanoTime();
                ClusterStatus s = statusUntil(cluster, "a timed-out sync", x -> !x.connected());
                long noticedMs = (System.nanoTime() - start) / 1_000_000;
                assertTrue(s.lastError().orElse("").contains("timed out"), s.toString());
                start = System.nanoTime();
                SdsException e = assertThrows(SdsException.class, cluster::syncNow);
                long syncNowMs = (System.nanoTime() - start) / 1_000_000;
                assertSame(ErrorCode.UNAVAILABLE, e.code());
                Thread.sleep(300); // the thread's round trip waits on the paused server
                start = System.nanoTime();
                cluster.close();
                long closeMs = (System.nanoTime() - start) / 1_000_000;
                System.out.printf("Redis paused: disconnected after %d ms, syncNow %d ms, close %d ms%n",
                        noticedMs, syncNowMs, closeMs);
                assertTrue(noticedMs < 1_500, "noticed after " + noticedMs + " ms");
                assertTrue(syncNowMs < 1_200, "syncNow took " + syncNowMs + " ms (timeoutMs 1000)");
                assertTrue(closeMs < 500, "close took " + closeMs + " ms");
                assertGone("sds-cluster");
            } finally {
                redis.signal("CONT");
            }
        }
    }

    @Test
    void closingTheClientClosesItsClusterSyncs() throws Exception {
        Client client = clientLimitedTo(10);
        ClusterSync first = client.connectCluster(config().syncMs(20).build());
        ClusterSync second = client.connectCluster(config().points("other").syncMs(20).build());
        statusUntil(second, "a sync", s -> s.syncs() >= 1);
        client.close();
        assertTrue(first.isClosed() && second.isClosed());
        assertGone("sds-cluster");
        assertSame(ErrorCode.CLOSED,
                assertThrows(SdsException.class, () -> client.connectCluster(config().build())).code());
    }

    @Test
    void aSharedTableClientSyncs(@TempDir Path dir) throws Exception {
        try (Client client = Client.openShared(dir.resolve("table.sds").toString(), 16);
                ClusterSync cluster = client.connectCluster(config().syncMs(20).build())) {
            ClusterStatus s = statusUntil(cluster, "a sync", x -> x.syncs() >= 1);
            assertTrue(s.syncing() && s.connected(), s.toString());
        }
    }

    /** A TLS config for {@code server} trusting {@code ca}; syncs by hand after the first. */
    private static ClusterConfig.Builder tlsConfig(RedisServer server, Path ca) {
        return ClusterConfig.builder().url(server.url()).points(POINT).syncMs(3_600_000).timeoutMs(2_000)
                .tlsCaFile(ca);
    }

    /** Now, floored to its second: the key of that second's counts in Redis is known. */
    private static long thisSecond() {
        return System.currentTimeMillis() / 1000 * 1000;
    }

    private static String countsKey(long secondMs) {
        return "{sds:" + POINT + "}:" + secondMs / 1000;
    }

    /** How many of {@code tries} enter + exit on the cluster point at {@code nowMs} are admitted. */
    private static int admitAt(Client client, int tries, long nowMs) {
        int admitted = 0;
        for (int i = 0; i < tries; i++) {
            try (Entry e = client.enter(POINT, nowMs)) {
                admitted += e.isDowngraded() ? 0 : 1;
            }
        }
        return admitted;
    }

    /** rediss:// with the test CA: the limit is shared, the status clean, exact mode decides in Redis. */
    @Test
    void twoClientsShareALimitOverTls(@TempDir Path dir) throws Exception {
        Tls tls = Tls.generate(dir);
        try (RedisServer server = RedisServer.startTls(tls);
                Client a = clientLimitedTo(10); Client b = clientLimitedTo(10);
                ClusterSync ca = a.connectCluster(tlsConfig(server, tls.ca).build());
                ClusterSync cb = b.connectCluster(tlsConfig(server, tls.ca).build())) {
            assertTrue(server.url().startsWith("rediss://"), server.url());
            long t = thisSecond();
            assertEquals(6, admitAt(a, 6, t + 100));
            ca.syncNow();
            cb.syncNow();
            assertEquals(4, admitAt(b, 10, t + 200), "10 cluster-wide");
            cb.syncNow();
            assertEquals(16, server.hget(countsKey(t), "v"));
            assertEquals(6, server.hget(countsKey(t), "d"));
            ClusterStatus s = cb.status();
            assertTrue(s.connected(), s.toString());
            assertEquals(Optional.empty(), s.lastError());

            ClusterDecision d = ca.enterExact(POINT, t + 300);
            assertTrue(d.isExact() && !d.isAdmitted(), d.toString());
            assertEquals(17, server.hget(countsKey(t), "v"), "the exact request counted in Redis");
        }
    }

    @Test
    void aServerOfAnotherCaIsRefusedAndTheLimitStaysLocal(@TempDir Path dir) throws Exception {
        Tls serverPki = Tls.generate(dir.resolve("server"));
        Tls otherPki = Tls.generate(dir.resolve("other"));
        try (RedisServer server = RedisServer.startTls(serverPki); Client a = clientLimitedTo(10);
                ClusterSync ca = a.connectCluster(tlsConfig(server, otherPki.ca).build())) {
            long t = thisSecond();
            SdsException e = assertThrows(SdsException.class, ca::syncNow);
            assertTrue(e.getMessage().startsWith("SDS_UNAVAILABLE: redis: "), e.getMessage());
            ClusterStatus s = ca.status();
            assertFalse(s.connected(), s.toString());
            assertEquals(0, s.syncs(), s.toString());
            assertTrue(s.lastError().orElse("").contains("UnknownIssuer"), s.toString());
            assertEquals(10, admitAt(a, 12, t + 100), "the local limit");
            ClusterDecision d = ca.enterExact(POINT, t + 200);
            assertTrue(!d.isExact() && !d.isAdmitted(), d.toString());
            assertEquals(0, server.hget(countsKey(t), "v"));
        }
    }

    @Test
    void mutualTlsTakesTheClientCertificateAndRefusesAClientWithoutOne(@TempDir Path dir) throws Exception {
        Tls tls = Tls.generate(dir).mutual();
        try (RedisServer server = RedisServer.startTls(tls);
                Client a = clientLimitedTo(10); Client b = clientLimitedTo(10);
                ClusterSync ca = a.connectCluster(tlsConfig(server, tls.ca)
                        .tlsCertFile(tls.clientCert).tlsKeyFile(tls.clientKey).build());
                ClusterSync cb = b.connectCluster(tlsConfig(server, tls.ca).build())) {
            long t = thisSecond();
            assertEquals(3, admitAt(a, 3, t + 100));
            ca.syncNow();
            assertEquals(3, server.hget(countsKey(t), "v"));
            assertTrue(ca.status().connected(), ca.status().toString());

            assertThrows(SdsException.class, cb::syncNow);
            ClusterStatus s = cb.status();
            assertFalse(s.connected(), s.toString());
            assertEquals(0, s.syncs(), s.toString());
            assertTrue(s.lastError().isPresent(), s.toString());
            assertEquals(10, admitAt(b, 10, t + 200), "its own local limit only");
        }
    }

    @Test
    void badTlsFilesAreRefusedWithTheClusterCratesReason(@TempDir Path dir) throws Exception {
        String invalid = "invalid cluster configuration: ";
        ClusterConfig.Builder tlsUrl = ClusterConfig.builder().url("rediss://127.0.0.1:1").points(POINT);
        assertRefused(tlsUrl.tlsCaFile(Paths.get("/nonexistent/sds-ca.pem")).build(),
                invalid + "tls_ca_file /nonexistent/sds-ca.pem: No such file");
        Tls tls = Tls.generate(dir);
        tlsUrl.tlsCaFile(tls.ca);
        assertRefused(ClusterConfig.builder().url("redis://127.0.0.1:1").points(POINT).tlsCaFile(tls.ca).build(),
                invalid + "urls[0]: TLS files are given, so every URL must be rediss://");
        String pair = invalid + "tls_cert_file and tls_key_file go together (mutual TLS)";
        assertRefused(tlsUrl.tlsCertFile(tls.clientCert).build(), pair);
        assertRefused(tlsUrl.tlsCertFile(null).tlsKeyFile(tls.clientKey).build(), pair);
        assertRefused(tlsUrl.tlsCertFile(tls.clientCert).tlsKeyFile(tls.ca).build(), invalid + "TLS files: ");

        URI zipUri = URI.create("jar:" + dir.resolve("files.zip").toUri());
        try (FileSystem zip = FileSystems.newFileSystem(zipUri, Collections.singletonMap("create", "true"))) {
            Path inZip = zip.getPath("/ca.pem");
            Files.copy(tls.ca, inZip);
            assertRefused(tlsUrl.tlsCaFile(inZip).build(), invalid
                    + "tlsCaFile must be a path (text) or null, not a value of type " + inZip.getClass().getTypeName());
        }

        try (Client client = new Client(4);
                ClusterSync started = client.connectCluster(
                        tlsUrl.tlsCaFile(tls.ca).tlsCertFile(tls.clientCert).tlsKeyFile(tls.clientKey).build())) {
            assertFalse(started.isClosed());
        }
        assertGone("sds-cluster");
    }

    /** A JVM whose main ends with a cluster sync running exits normally and promptly. */
    @Test
    void aJvmExitsNormallyWithASyncRunning() throws Exception {
        ChildJvm.exitsPromptlyAfterMain(ClusterChild.class, redis.url());
    }
}
