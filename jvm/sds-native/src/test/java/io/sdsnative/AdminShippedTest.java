package io.sdsnative;

import static io.sdsnative.BackgroundThreads.assertGone;
import static io.sdsnative.BackgroundThreads.limitedToOne;
import static io.sdsnative.FakeConsole.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sdsnative.RedisServer.Tls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent against the SDS console as it ships (SDS-ADMIN.md, "What the
 * shipped console does (measured)"), through the public API and the strict
 * fake console: a null version, null strategies, a delay the core refuses,
 * strategies waiting for room, uploads a frozen console would store twice,
 * zero-visit points, names the console cannot store, mutual TLS.
 */
class AdminShippedTest {
    private static final String GROUP = "group";
    private static final String APP = "app";
    private static final String PREFIX = "sds-agent " + GROUP + "/" + APP + ": ";
    private static final long WAIT_MS = 10_000;
    private static final long PULL_MS = 100;
    private static final long TIMEOUT_MS = 300;
    /** The console's statistics cycle; uploads happen at second 5 of each. */
    private static final long CYCLE_MS = 10_000;
    private static final String NOT_SENT_AGAIN = "(the console may have received it: not sent again)";

    @TempDir
    Path dir;

    /** Held here: java.util.logging keeps its loggers weakly. */
    private Logger logger;
    private final AdminAgentTest.Lines lines = new AdminAgentTest.Lines();

    @BeforeEach
    void collectLines() {
        logger = Logger.getLogger(Log.NAME);
        logger.addHandler(lines);
        logger.setUseParentHandlers(false); // the lines are asserted, not printed
    }

    @AfterEach
    void restoreLogging() {
        logger.removeHandler(lines);
        logger.setUseParentHandlers(true);
    }

    private static AdminConfig.Builder config(FakeConsole fake) {
        return fake.agentConfig(GROUP, APP).pullIntervalMs(PULL_MS).timeoutMs(TIMEOUT_MS);
    }

    private static AdminStatus statusUntil(AdminAgent agent, String what, Predicate<AdminStatus> check)
            throws InterruptedException {
        return BackgroundThreads.statusUntil(agent::status, WAIT_MS, what, check);
    }

    /** One visit of {@code point} at {@code atMs}, entered and exited then. */
    private static void visit(Client client, String point, long atMs) {
        client.enter(point, atMs).exit(atMs);
    }

    private List<String> linesWith(Level level, String text) {
        return lines.at(level).stream().filter(line -> line.contains(text)).collect(Collectors.toList());
    }

    @Test
    void aNullVersionAppliesTheSetAndAnEditWithinOnePullInterval() throws Exception {
        try (FakeConsole fake = FakeConsole.start(); Client client = new Client(16)) {
            fake.setAppNullVersion(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1}]");
            try (AdminAgent agent = client.connectAdmin(config(fake).build())) {
                AdminStatus status = statusUntil(agent, "the null version", s -> s.version() == -1);
                assertTrue(status.lastPullOk(), status.toString());
                assertEquals("", status.lastError());
                assertTrue(limitedToOne(client, "a"));

                // An edit while the console's version stays null.
                fake.setAppNullVersion(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1000}]");
                long edited = System.nanoTime();
                waitUntil(WAIT_MS, "the edit in force", () -> !limitedToOne(client, "a"));
                long tookMs = (System.nanoTime() - edited) / 1_000_000;
                assertTrue(tookMs < PULL_MS + TIMEOUT_MS + 300, "in force after " + tookMs + " ms");

                // Pulls go on with -1 (any number differs from null); the same
                // set is not applied again: one line per set.
                Thread.sleep(500);
                List<JsonNode> pulls = fake.pulls();
                assertTrue(pulls.size() >= 6, pulls.size() + " pulls");
                JsonNode sent = pulls.get(pulls.size() - 1).get("version");
                assertTrue(sent.isIntegralNumber() && sent.asLong() == -1, sent.toString());
                assertEquals(2, linesWith(Level.INFO, "SDS strategies version null").size(),
                        lines.at(Level.INFO).toString());
                assertEquals(-1, agent.status().version());
            }
            fake.assertNoViolation();
        }
    }

    @Test
    void nullStrategiesAreTheEmptySet() throws Exception {
        try (FakeConsole fake = FakeConsole.start(); Client client = new Client(16)) {
            fake.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1,\"returnValueStr\":\"x\"}]");
            try (AdminAgent agent = client.connectAdmin(config(fake).build())) {
                statusUntil(agent, "version 1", s -> s.version() == 1);
                assertTrue(limitedToOne(client, "a"));
                assertEquals(Optional.of("x"), agent.returnValue("a"));

                // The last strategy deleted: the console answers "strategies": null.
                fake.setApp(GROUP, APP, "[]");
                AdminStatus status = statusUntil(agent, "version 2", s -> s.version() == 2);
                assertTrue(status.lastPullOk(), status.toString());
                assertEquals("", status.lastError());
                assertFalse(limitedToOne(client, "a"), "a lost its strategy");
                assertEquals(Optional.empty(), agent.returnValue("a"));
            }
            fake.assertNoViolation();
        }
    }

    /** The reasons of three calls to {@code point} at one instant (null: admitted). */
    private static List<Reason> threeCallsAtOnce(Client client, String point) {
        long now = System.currentTimeMillis();
        List<Reason> reasons = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Entry e = client.enter(point, now);
            reasons.add(e.isDowngraded() ? e.reason() : null);
            e.exit(now);
        }
        return reasons;
    }

    @Test
    void aDelayTheCoreRefusesIsDroppedAndTheRestOfTheStrategyApplies() throws Exception {
        SdsException refused = assertThrows(SdsException.class,
                () -> Strategy.fromJson("{\"visitThreshold\":1,\"delayTime\":5000}"));
        String verdict = refused.getMessage().substring(refused.code().codeName().length() + 2);
        try (FakeConsole fake = FakeConsole.start(); Client client = new Client(16)) {
            fake.setApp(GROUP, APP, "[{\"point\":\"d\",\"visitThreshold\":1,\"delayTime\":5000},"
                    + "{\"point\":\"kept\",\"visitThreshold\":1,\"delayTime\":20000}]");
            try (AdminAgent agent = client.connectAdmin(config(fake).build())) {
                AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
                assertTrue(status.lastPullOk(), status.toString());
                String warning = "SDS strategy of point \"d\" applied without its delay: " + verdict;
                assertEquals(warning, status.lastError());
                assertEquals(Collections.singletonList(PREFIX + warning), lines.at(Level.WARNING));
                // The threshold holds; a downgrade starts no delay on d, as it
                // does on the point whose delay is valid.
                assertEquals(Arrays.asList(null, Reason.VISIT, Reason.VISIT), threeCallsAtOnce(client, "d"));
                assertEquals(Arrays.asList(null, Reason.VISIT, Reason.DELAY), threeCallsAtOnce(client, "kept"));
            }
            fake.assertNoViolation();
        }
    }

    @Test
    void strategiesBeyondTheConsolesShareWaitAndApplyOnceTheApplicationEntersThePoint() throws Exception {
        StringBuilder set = new StringBuilder("[");
        for (int i = 0; i < 6; i++) {
            set.append(i == 0 ? "" : ",").append("{\"point\":\"c").append(i).append("\",\"visitThreshold\":1}");
        }
        try (FakeConsole fake = FakeConsole.start(); Client client = new Client(8)) {
            fake.setApp(GROUP, APP, set.append("]").toString());
            try (AdminAgent agent = client.connectAdmin(config(fake).build())) {
                // 8 slots: the console creates points while the table holds 4.
                AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
                assertEquals(2, status.strategiesWaiting(), status.toString());
                assertEquals(1, linesWith(Level.WARNING, "SDS strategies: 2 wait for room").size(),
                        lines.at(Level.WARNING).toString());
                assertTrue(limitedToOne(client, "c3"));
                visit(client, "c5", System.currentTimeMillis()); // the application creates the point
                status = statusUntil(agent, "c5 applied", s -> s.strategiesWaiting() == 1);
                assertTrue(limitedToOne(client, "c5"));
                assertEquals(0, status.pointsLeftOut());
            }
            fake.assertNoViolation();
        }
    }

    /** The first upload time (second 5 of a cycle) at or after {@code ms}. */
    private static long uploadTimeFrom(long ms) {
        long upload = ms - ms % CYCLE_MS + 5_000;
        return upload >= ms ? upload : upload + CYCLE_MS;
    }

    private static void sleepUntil(long ms) throws InterruptedException {
        long left = ms - System.currentTimeMillis();
        if (left > 0) {
            Thread.sleep(left);
        }
    }

    /** The uploads {@code fake} received for cycle {@code cycleTime} (their statisticsCycleTime). */
    private static List<JsonNode> uploadsOf(FakeConsole fake, long cycleTime) throws IOException {
        return fake.uploads().stream().filter(u -> u.get("statisticsCycleTime").asLong() == cycleTime)
                .collect(Collectors.toList());
    }

    /** The stored rows of cycle {@code cycleTime}, as "point:visitNum", sorted. */
    private static List<String> storedRows(FakeConsole fake, long cycleTime) throws IOException {
        return fake.stored().stream().filter(row -> row.get("statisticsCycleTime").asLong() == cycleTime)
                .map(row -> row.get("point").asText() + ":" + row.get("visitNum").asLong())
                .sorted().collect(Collectors.toList());
    }

    private static boolean hasUpload(FakeConsole fake, long cycleTime) {
        try {
            return !uploadsOf(fake, cycleTime).isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String repeat(char c, int n) {
        char[] chars = new char[n];
        Arrays.fill(chars, c);
        return new String(chars);
    }

    /**
     * The cases that need real upload cycles, run side by side on two fakes so
     * that the test waits for two uploads only (11 to 21 s): on one, a console
     * frozen across an upload stores that cycle once; on the other, a
     * zero-visit point is uploaded with zeros and stays listed, and a name
     * over 164 characters is left out while its cycle's other points are
     * stored.
     */
    @Test
    void uploadsAsTheShippedConsoleStoresThem() throws Exception {
        String longest = repeat('m', 164);
        String tooLong = repeat('x', 165);
        try (FakeConsole frozen = FakeConsole.start(); FakeConsole listing = FakeConsole.start();
                Client frozenClient = new Client(16); Client listingClient = new Client(16)) {
            frozen.setApp(GROUP, APP, "[]");
            listing.setApp(GROUP, APP, "[]");
            // Only the first pull: a pull to the frozen console would replace the upload's error.
            AdminConfig frozenConfig = config(frozen).pullIntervalMs(600_000).build();
            // A generous timeout: the listing console must answer whatever the machine's load.
            AdminConfig listingConfig = config(listing).timeoutMs(3_000).build();
            try (AdminAgent frozenAgent = frozenClient.connectAdmin(frozenConfig);
                    AdminAgent listingAgent = listingClient.connectAdmin(listingConfig)) {
                long upload = uploadTimeFrom(System.currentTimeMillis() + 1_500);
                long cycleTime = upload - 5_000; // the upload's statisticsCycleTime
                // A visit in the whole cycle that upload carries, [cycleTime - 10 s, cycleTime):
                // now, or a moment before its end when it is over already.
                long visitAt = Math.min(System.currentTimeMillis(), cycleTime - 1_000);
                visit(frozenClient, "api", visitAt);
                for (String name : Arrays.asList("a", "b", longest, tooLong)) {
                    visit(listingClient, name, visitAt);
                }

                sleepUntil(upload - 500);
                // An upload of an earlier cycle (all zeros) may have been delivered since the start.
                long deliveredBefore = frozenAgent.status().uploads();
                frozen.freeze();

                // The listing console: every point of the cycle stored but the long one.
                waitUntil(WAIT_MS, "the listing upload", () -> hasUpload(listing, cycleTime));
                AdminStatus listed = statusUntil(listingAgent, "upload 1",
                        s -> s.lastUploadMs() >= upload && s.lastUploadOk());
                assertEquals(1, listed.pointsLeftOut(), listed.toString());
                String leftOut = "SDS statistics leave out point \"" + tooLong + "\": the console stores names of at "
                        + "most 164 characters (its forms manage letters, digits and '-')";
                assertEquals(leftOut, listed.lastError());
                assertEquals(Arrays.asList("a:1", "b:1", longest + ":1"), storedRows(listing, cycleTime));
                JsonNode first = uploadsOf(listing, cycleTime).get(0).get("pointInfoMap");
                assertEquals(3, first.size(), first.toString());
                assertNull(first.get(tooLong));
                assertEquals(Arrays.asList("a", "b", longest), listing.pointList(GROUP, APP));
                // The next cycle visits only a (and the long name again).
                long now = System.currentTimeMillis();
                assertTrue(now < upload + 5_000, "still in the next cycle");
                visit(listingClient, "a", now);
                visit(listingClient, tooLong, now);

                // The frozen console: the upload times out, once.
                AdminStatus failed = statusUntil(frozenAgent, "the timed-out upload", s -> s.uploadFailures() == 1);
                assertFalse(failed.lastUploadOk());
                assertTrue(failed.lastError().endsWith(NOT_SENT_AGAIN), failed.toString());
                sleepUntil(upload + 1_500); // frozen past the timeout and a retry's second
                frozen.thaw();
                waitUntil(WAIT_MS, "the queued upload processed", () -> hasUpload(frozen, cycleTime));
                Thread.sleep(300);
                assertEquals(Collections.singletonList("api:1"), storedRows(frozen, cycleTime));
                assertEquals(1, uploadsOf(frozen, cycleTime).size());
                // Not sent again while its cycle lasts (a retry would come within it).
                sleepUntil(upload + 5_500);
                AdminStatus after = frozenAgent.status();
                assertEquals(1, after.uploadFailures(), after.toString());
                assertEquals(deliveredBefore, after.uploads(), after.toString());
                assertTrue(after.lastError().endsWith(NOT_SENT_AGAIN), after.toString());
                assertEquals(1, uploadsOf(frozen, cycleTime).size());
                assertEquals(Collections.singletonList("api:1"), storedRows(frozen, cycleTime));

                // The second cycle: b goes with zeros and stays in the point list.
                long nextCycleTime = cycleTime + CYCLE_MS;
                waitUntil(WAIT_MS + CYCLE_MS, "the second listing upload", () -> hasUpload(listing, nextCycleTime));
                JsonNode second = uploadsOf(listing, nextCycleTime).get(0).get("pointInfoMap");
                assertEquals(FakeConsole.JSON.readTree("{\"point\":\"b\",\"visitNum\":0,\"exceptionNum\":0,"
                        + "\"timeoutNum\":0,\"downgradeNum\":0,\"concurrentNum\":0}"), second.get("b"));
                assertNull(second.get(tooLong));
                assertEquals(Collections.singletonList("a:1"), storedRows(listing, nextCycleTime));
                assertEquals(Arrays.asList("a", "b", longest), listing.pointList(GROUP, APP));
                assertEquals(Collections.singletonList(PREFIX + leftOut),
                        linesWith(Level.WARNING, "leave out point"), "named once");
                assertEquals(1, listingAgent.status().pointsLeftOut());
            }
            frozen.assertNoViolation();
            listing.assertNoViolation();
        }
    }

    @Test
    void withItsClientCertificateTheAgentPullsFromAConsoleThatRequiresOne() throws Exception {
        Tls tls = Tls.generate(dir.resolve("pki")).mutual();
        try (FakeConsole https = FakeConsole.startTls(tls)) {
            https.setApp(GROUP, APP, "[{\"point\":\"m\",\"visitThreshold\":1}]");
            AdminConfig mutual = config(https).tlsCaFile(tls.ca).tlsCertFile(tls.clientCert)
                    .tlsKeyFile(tls.clientKey).build();
            assertEquals(tls.clientCert, mutual.settings().get("tlsCertFile"));
            assertEquals(tls.clientKey, mutual.settings().get("tlsKeyFile"));
            AdminConfig anonymous = config(https).tlsCaFile(tls.ca).hostname("no-certificate").build();
            assertNull(anonymous.settings().get("tlsCertFile"));
            try (Client withCertificate = new Client(16); Client without = new Client(16);
                    AdminAgent agent = withCertificate.connectAdmin(mutual);
                    AdminAgent refused = without.connectAdmin(anonymous)) {
                AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
                assertTrue(status.lastPullOk(), status.toString());
                assertEquals("", status.lastError());
                assertTrue(limitedToOne(withCertificate, "m"));

                AdminStatus failed = statusUntil(refused, "a refused pull", s -> s.pullFailures() >= 1);
                assertFalse(failed.lastPullOk(), failed.toString());
                assertEquals(0, failed.version());
                String pullFailed = "SDS strategy pull failed: " + https.url() + "/sds/heartbeat/pullstrategy: ";
                assertTrue(failed.lastError().startsWith(pullFailed), failed.toString());
                assertFalse(limitedToOne(without, "m"), "no strategy without the certificate");
            }
            for (JsonNode pull : https.pulls()) {
                assertEquals("test-host", pull.get("hostname").asText(), "only the agent with the certificate got in");
            }
            https.assertNoViolation();
        }
    }

    /** The message of the INVALID_ARGUMENT {@code connectAdmin(config)} throws. */
    private static String refusal(AdminConfig config) {
        try (Client client = new Client(4)) {
            SdsException e = assertThrows(SdsException.class, () -> client.connectAdmin(config));
            assertSame(ErrorCode.INVALID_ARGUMENT, e.code());
            return e.getMessage();
        }
    }

    private static final String REFUSED = "SDS_INVALID_ARGUMENT: cannot start the SDS agent: ";

    /** A config for an https:// server nobody listens on, trusting {@code tls}'s CA. */
    private static AdminConfig.Builder unreachableHttps(Tls tls) {
        return AdminConfig.builder().servers("https://127.0.0.1:1").appGroup(GROUP).appName(APP)
                .ip("10.1.2.3").hostname("test-host").tlsCaFile(tls.ca);
    }

    @Test
    void aClientCertificateWithoutItsKeyOrTheReverseIsRefusedWithTheAgentsReason() throws Exception {
        Tls tls = Tls.generate(dir.resolve("pki"));
        String together = REFUSED + "tls_cert_file and tls_key_file go together (mutual TLS)";
        assertEquals(together, refusal(unreachableHttps(tls).tlsCertFile(tls.clientCert).build()));
        assertEquals(together, refusal(unreachableHttps(tls).tlsKeyFile(tls.clientKey).build()));

        String notItsKey = refusal(unreachableHttps(tls).tlsCertFile(tls.clientCert).tlsKeyFile(tls.key).build());
        assertTrue(notItsKey.startsWith(
                REFUSED + "tls_cert_file " + tls.clientCert + " and tls_key_file " + tls.key + ": "), notItsKey);
        assertEquals(REFUSED + "tls_cert_file is given but no server is an https:// URL (the client certificate "
                + "is only shown to HTTPS servers)", refusal(unreachableHttps(tls).servers("http://127.0.0.1:1")
                        .tlsCaFile(null).tlsCertFile(tls.clientCert).tlsKeyFile(tls.clientKey).build()));

        URI zipUri = URI.create("jar:" + dir.resolve("files.zip").toUri());
        try (FileSystem zip = FileSystems.newFileSystem(zipUri, Collections.singletonMap("create", "true"))) {
            Path inZip = zip.getPath("/client-key.pem");
            Files.copy(tls.clientKey, inZip);
            assertEquals(REFUSED + "tlsKeyFile must be a path (text) or null, not a value of type "
                    + inZip.getClass().getTypeName(),
                    refusal(unreachableHttps(tls).tlsCertFile(tls.clientCert).tlsKeyFile(inZip).build()));
        }
        // The pair that goes together starts (the server is never reached).
        try (Client client = new Client(4); AdminAgent agent = client.connectAdmin(
                unreachableHttps(tls).tlsCertFile(tls.clientCert).tlsKeyFile(tls.clientKey).build())) {
            assertFalse(agent.isClosed());
        }
        assertGone("sds-agent");
    }
}
