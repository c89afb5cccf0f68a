package io.sdsnative;

import static io.sdsnative.BackgroundThreads.assertGone;
import static io.sdsnative.BackgroundThreads.limitedToOne;
import static io.sdsnative.BackgroundThreads.threadNames;
import static io.sdsnative.FakeConsole.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sdsnative.RedisServer.Tls;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Client#connectAdmin}: the SDS console agent against the repository's strict fake console. */
class AdminAgentTest {
    private static final String GROUP = "group";
    private static final String APP = "app";
    private static final long WAIT_MS = 10_000;

    @TempDir
    Path dir;

    private FakeConsole fake;
    /** Held here: java.util.logging keeps its loggers weakly. */
    private Logger logger;
    private final Lines lines = new Lines();

    /** Collects what sds-native logs (System.Logger goes to java.util.logging by default). */
    static final class Lines extends Handler {
        private final List<LogRecord> records = new ArrayList<>();
        /** The threads that logged: name, and whether each was a daemon. */
        private final List<String> threads = new ArrayList<>();

        @Override
        public synchronized void publish(LogRecord record) {
            records.add(record);
            Thread t = Thread.currentThread();
            threads.add(t.getName() + (t.isDaemon() ? " (daemon)" : ""));
            notifyAll();
        }

        /**
         * The lines at {@code level} once {@code done} holds of them, or as they
         * are after {@link #WAIT_MS}: the agent logs a change just after its
         * status shows it.
         */
        synchronized List<String> awaitAt(Level level, Predicate<List<String>> done)
                throws InterruptedException {
            long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
            List<String> lines = at(level);
            while (!done.test(lines) && System.nanoTime() < deadline) {
                wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000L));
                lines = at(level);
            }
            return lines;
        }

        synchronized List<String> threads() {
            return new ArrayList<>(threads);
        }

        synchronized List<String> at(Level level) {
            List<String> out = new ArrayList<>();
            for (LogRecord r : records) {
                if (r.getLevel() == level) {
                    out.add(r.getMessage());
                }
            }
            return out;
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    @BeforeEach
    void startFake() throws IOException {
        fake = FakeConsole.start();
        logger = Logger.getLogger(Log.NAME);
        logger.addHandler(lines);
        logger.setUseParentHandlers(false); // the lines are asserted, not printed
    }

    @AfterEach
    void stopFake() throws Exception {
        logger.removeHandler(lines);
        logger.setUseParentHandlers(true);
        fake.close();
    }

    /** An agent of {@code client} once it applied version 1, {@code strategies} (the console's JSON). */
    private AdminAgent startedWith(Client client, String strategies) throws Exception {
        fake.setApp(GROUP, APP, strategies);
        AdminAgent agent = client.connectAdmin(config().build());
        statusUntil(agent, "version 1", s -> s.version() == 1);
        return agent;
    }

    private AdminConfig.Builder config() {
        return fake.agentConfig(GROUP, APP);
    }

    private static AdminStatus statusUntil(AdminAgent agent, String what, Predicate<AdminStatus> check)
            throws InterruptedException {
        return statusUntil(agent, WAIT_MS, what, check);
    }

    private static AdminStatus statusUntil(AdminAgent agent, long timeoutMs, String what,
            Predicate<AdminStatus> check) throws InterruptedException {
        return BackgroundThreads.statusUntil(agent::status, timeoutMs, what, check);
    }

    @Test
    void aStrategyChangeIsInForceWithinOneIntervalAndARemovedPointLosesIt() throws Exception {
        String strategies = "[{\"point\":\"a\",\"visitThreshold\":1,\"returnValueStr\":\"{\\\"busy\\\":true}\"},"
                + "{\"point\":\"b\",\"visitThreshold\":1}]";
        try (Client client = new Client(16); AdminAgent agent = startedWith(client, strategies)) {
            AdminStatus status = agent.status();
            assertTrue(status.lastPullOk());
            assertTrue(status.isReporter());
            assertEquals(fake.url(), status.server());
            assertEquals("", status.lastError());
            assertTrue(limitedToOne(client, "a"));
            assertTrue(limitedToOne(client, "b"));
            assertEquals(Optional.of("{\"busy\":true}"), agent.returnValue("a"));
            assertEquals(Optional.empty(), agent.returnValue("b"));
            assertEquals(Optional.empty(), agent.returnValue("unknown"));

            fake.setApp(GROUP, APP, "[{\"point\":\"b\",\"visitThreshold\":1}]");
            long changed = System.nanoTime();
            statusUntil(agent, "version 2", s -> s.version() == 2);
            long tookMs = (System.nanoTime() - changed) / 1_000_000;
            assertTrue(tookMs < 100 + 300 + 300, "in force after " + tookMs + " ms");
            assertFalse(limitedToOne(client, "a"), "a lost its strategy");
            assertTrue(limitedToOne(client, "b"));
            assertEquals(Optional.empty(), agent.returnValue("a"));
            String applied = "sds-agent group/app: SDS strategies version 2: 1 in force, 1 removed, 0 waiting, 0 warnings";
            List<String> info = lines.awaitAt(Level.INFO, l -> l.contains(applied));
            assertTrue(info.contains(applied), info.toString());
        }
        JsonNode pull = fake.pulls().get(0);
        assertEquals("10.1.2.3", pull.get("ip").asText());
        assertEquals("test-host", pull.get("hostname").asText());
        fake.assertNoViolation();
    }

    @Test
    void anInvalidStrategyIsRefusedTheOldOneKeptAndTheReasonLogged() throws Exception {
        String strategies = "[{\"point\":\"a\",\"visitThreshold\":1,\"returnValueStr\":\"old\"}]";
        try (Client client = new Client(16); AdminAgent agent = startedWith(client, strategies)) {
            fake.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":\"50\",\"returnValueStr\":\"new\"}]");
            AdminStatus status = statusUntil(agent, "version 2", s -> s.version() == 2);
            assertTrue(limitedToOne(client, "a"), "the old strategy is kept");
            assertEquals(Optional.of("old"), agent.returnValue("a"));
            List<String> warnings = lines.awaitAt(Level.WARNING, l -> !l.isEmpty());
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).startsWith("sds-agent group/app: SDS strategy refused: point \"a\": "),
                    warnings.get(0));
            assertTrue(warnings.get(0).contains("visitThreshold"), warnings.get(0));
            assertEquals(warnings.get(0), "sds-agent group/app: " + status.lastError());
            // Logged on the agent's own thread, attached as a daemon for the line.
            for (String thread : lines.threads()) {
                assertEquals("sds-agent (daemon)", thread);
            }
        }
    }

    /** A failure mode of the pull: visible in the status, the strategies in force kept. */
    private void survives(String mode, String expectedError) throws Exception {
        String strategies = "[{\"point\":\"a\",\"visitThreshold\":1}]";
        try (Client client = new Client(16); AdminAgent agent = startedWith(client, strategies)) {
            fake.mode("pull", mode);
            fake.setApp(GROUP, APP, "[]");
            AdminStatus status = statusUntil(agent, "a failed pull", s -> s.pullFailures() >= 1);
            assertFalse(status.lastPullOk());
            assertEquals(1, status.version());
            String prefix = "SDS strategy pull failed: " + fake.url() + "/sds/heartbeat/pullstrategy: ";
            assertTrue(status.lastError().startsWith(prefix) && status.lastError().contains(expectedError),
                    mode + ": " + status.lastError());
            assertTrue(limitedToOne(client, "a"), "still deciding with version 1");
            fake.mode("pull", "ok");
            statusUntil(agent, "version 2", s -> s.version() == 2 && s.lastPullOk());
            assertFalse(limitedToOne(client, "a"));
        }
    }

    @Test
    void anUnknownAppIsInTheStatus() throws Exception {
        survives("unknown_app", "the console answered: app group/app does not exist");
    }

    @Test
    void anHttp500IsInTheStatus() throws Exception {
        survives("http_500", "HTTP status 500");
    }

    @Test
    void aServerThatNeverAnswersIsInTheStatus() throws Exception {
        survives("hang", "timeout");
    }

    @Test
    void aSecondServerThatWorksTakesOver() throws Exception {
        fake.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1}]");
        // A listener that never accepts: requests to it time out.
        try (ServerSocket silent = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                Client client = new Client(16)) {
            String silentUrl = "http://127.0.0.1:" + silent.getLocalPort();
            AdminConfig config = config().servers(silentUrl + "," + fake.url()).build();
            // The list is shuffled: start until the silent server comes first.
            AdminAgent agent = null;
            for (int i = 0; i < 100 && agent == null; i++) {
                AdminAgent started = client.connectAdmin(config);
                if (started.status().server().equals(silentUrl)) {
                    agent = started;
                } else {
                    started.close();
                }
            }
            assertTrue(agent != null, "the silent server comes first at least once in 100 shuffles");
            AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
            assertEquals(fake.url(), status.server());
            assertEquals(1, status.pullFailures());
            assertTrue(status.lastError().contains(silentUrl), status.toString());
            assertTrue(limitedToOne(client, "a"));
            agent.close();
        }
    }

    /**
     * The upload carries the client's own last whole cycle: waits for the real
     * clock's second 5 of the next cycle (at most about 15 s).
     */
    @Test
    void theUploadEqualsTheClientsLastCycle() throws Exception {
        String strategies = "[{\"point\":\"up\",\"visitThreshold\":4}]";
        try (Client client = new Client(16); AdminAgent agent = startedWith(client, strategies)) {
            long now = System.currentTimeMillis();
            long cycle = now - now % 10_000;
            List<Entry> held = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                held.add(client.enter("up", now));
            }
            held.get(0).error(new IllegalStateException("failed"));
            for (Entry e : held) {
                e.exit(now);
            }
            AdminStatus status = statusUntil(agent, 20_000, "the upload of the cycle", s -> s.uploads() >= 1
                    && s.lastUploadMs() >= cycle + 15_000);
            assertTrue(status.lastUploadOk());
            JsonNode upload = null;
            for (JsonNode u : fake.uploads()) {
                if (u.get("statisticsCycleTime").asLong() == cycle + 10_000) {
                    upload = u;
                }
            }
            assertTrue(upload != null, fake.uploads().toString());
            Stats stats = client.stats("up", cycle + 15_000);
            JsonNode info = upload.get("pointInfoMap").get("up");
            assertEquals(6, stats.lastCycleVisitNum());
            assertEquals(2, stats.lastCycleDowngradeNum());
            assertEquals(stats.lastCycleVisitNum(), info.get("visitNum").asLong());
            assertEquals(stats.lastCycleExceptionNum(), info.get("exceptionNum").asLong());
            assertEquals(stats.lastCycleTimeoutNum(), info.get("timeoutNum").asLong());
            assertEquals(stats.lastCycleDowngradeNum(), info.get("downgradeNum").asLong());
            assertEquals(stats.lastCycleConcurrentNum(), info.get("concurrentNum").asLong());
            assertEquals("10.1.2.3", upload.get("ip").asText());
        }
        fake.assertNoViolation();
    }

    @Test
    void closeJoinsTheThreadAndIsIdempotent() throws Exception {
        fake.setApp(GROUP, APP, "[]");
        fake.mode("pull", "hang");
        Client client = new Client(16);
        AdminAgent agent = client.connectAdmin(config().build());
        waitUntil(WAIT_MS, "a pull in flight", () -> {
            try {
                return !fake.pulls().isEmpty();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(threadNames().contains("sds-agent"), threadNames().toString());
        long start = System.nanoTime();
        agent.close();
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs < 300 + 500, "joined after " + tookMs + " ms");
        assertGone("sds-agent");
        assertTrue(agent.isClosed());
        agent.close();
        assertEquals(fake.url(), agent.status().server(), "the last state stays readable");
        SdsException closed = assertThrows(SdsException.class, () -> agent.returnValue("p"));
        assertSame(ErrorCode.CLOSED, closed.code());
        assertFalse(client.isClosed(), "the client stays open");
        client.close();
    }

    @Test
    void closingTheClientClosesItsAgents() throws Exception {
        fake.setApp(GROUP, APP, "[]");
        Client client = new Client(16);
        AdminAgent first = client.connectAdmin(config().build());
        AdminAgent second = client.connectAdmin(config().build());
        statusUntil(second, "a pull", s -> s.lastPullOk());
        client.close();
        assertTrue(first.isClosed() && second.isClosed());
        AdminStatus last = second.status();
        assertTrue(last.lastPullOk() && last.pullFailures() == 0, last.toString());
        Thread.sleep(250);
        assertEquals(last, second.status(), "the last state, as of the join");
        assertGone("sds-agent");
        assertSame(ErrorCode.CLOSED, assertThrows(SdsException.class, () -> client.connectAdmin(config().build())).code());
    }

    /** The message of the INVALID_ARGUMENT {@code connectAdmin(config)} throws. */
    private static String refusal(AdminConfig config) {
        try (Client client = new Client(4)) {
            SdsException e = assertThrows(SdsException.class, () -> client.connectAdmin(config));
            assertSame(ErrorCode.INVALID_ARGUMENT, e.code());
            return e.getMessage();
        }
    }

    private static void assertRefused(AdminConfig config, String message) {
        assertEquals("SDS_INVALID_ARGUMENT: cannot start the SDS agent: " + message, refusal(config));
    }

    @Test
    void aBadConfigIsRefusedWithTheAgentsReason() throws IOException, InterruptedException {
        assertRefused(config().servers("ftp://admin:8887").build(),
                "server \"ftp://admin:8887\" is not an http:// or https:// URL");
        assertRefused(config().servers(null).build(), "no server given");
        assertRefused(config().appGroup(null).build(), "the app group is blank");
        assertRefused(config().appName(" ").build(), "the app name is blank");
        assertRefused(config().ip("1234567890.1234567").build(),
                "ip \"1234567890.1234567\" is longer than 16 characters");
        assertRefused(config().pullIntervalMs(0).build(), "the pull interval must be above 0 ms");
        assertRefused(config().pullIntervalMs(-1).build(),
                "pullIntervalMs must be a whole number of milliseconds from 0 to 18446744073709551615, not -1");
        assertRefused(config().timeoutMs(0).build(), "the timeout must be above 0 ms");
        try (Client client = new Client(4)) {
            assertSame(ErrorCode.NULL_ARGUMENT, assertThrows(SdsException.class, () -> client.connectAdmin(null)).code());
        }
        assertGone("sds-agent");
    }

    @Test
    void overHttpsWithTheCaFileAStrategyChangeIsInForceWithinOneInterval() throws Exception {
        Tls tls = Tls.generate(dir.resolve("pki"));
        try (FakeConsole https = FakeConsole.startTls(tls)) {
            assertTrue(https.url().startsWith("https://127.0.0.1:"), https.url());
            https.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1}]");
            AdminConfig config = config().servers(https.url()).tlsCaFile(tls.ca).build();
            assertEquals(tls.ca, config.settings().get("tlsCaFile"));
            try (Client client = new Client(16); AdminAgent agent = client.connectAdmin(config)) {
                AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
                assertTrue(status.lastPullOk());
                assertEquals(https.url(), status.server());
                assertEquals("", status.lastError());
                assertTrue(limitedToOne(client, "a"));

                https.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":50}]");
                long changed = System.nanoTime();
                status = statusUntil(agent, "version 2", s -> s.version() == 2);
                long tookMs = (System.nanoTime() - changed) / 1_000_000;
                assertTrue(tookMs < 100 + 300 + 300, "in force after " + tookMs + " ms");
                assertTrue(status.lastPullOk());
                assertEquals(0, status.pullFailures());
                assertEquals("", status.lastError());
                assertFalse(limitedToOne(client, "a"));
            }
            assertEquals("10.1.2.3", https.pulls().get(0).get("ip").asText());
            https.assertNoViolation();
        }
    }

    @Test
    void anHttpsConsoleWithACertificateOfAnotherCaIsAFailureInTheStatus() throws Exception {
        Tls ours = Tls.generate(dir.resolve("ours"));
        Tls theirs = Tls.generate(dir.resolve("theirs"));
        try (Client client = new Client(16)) {
            AdminAgent agent;
            int port;
            try (FakeConsole trusted = FakeConsole.startTls(ours)) {
                trusted.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":1}]");
                agent = client.connectAdmin(config().servers(trusted.url()).tlsCaFile(ours.ca).build());
                statusUntil(agent, "version 1", s -> s.version() == 1);
                port = trusted.port();
            }
            // The same address now shows a certificate of another CA.
            try (AdminAgent running = agent; FakeConsole other = FakeConsole.startTls(theirs, port)) {
                other.setApp(GROUP, APP, "[{\"point\":\"a\",\"visitThreshold\":50}]");
                AdminStatus status = statusUntil(running, "a pull refused by the certificate check",
                        s -> s.lastError().contains("UnknownIssuer"));
                assertFalse(status.lastPullOk(), status.toString());
                assertTrue(status.lastError().startsWith(
                        "SDS strategy pull failed: " + other.url() + "/sds/heartbeat/pullstrategy: "), status.toString());
                assertEquals(1, status.version());
                assertTrue(limitedToOne(client, "a"), "still deciding with version 1");
                assertEquals(0, other.pulls().size(), "the refused console saw no request");
            }
        }
    }

    @Test
    void badTlsSettingsAreRefusedWithTheAgentsReason() throws Exception {
        AdminConfig.Builder https = config().servers("https://127.0.0.1:1");
        String missing = refusal(https.tlsCaFile(Paths.get("/nonexistent/sds-ca.pem")).build());
        assertTrue(missing.startsWith("SDS_INVALID_ARGUMENT: cannot start the SDS agent: "
                + "tls_ca_file /nonexistent/sds-ca.pem: No such file"), missing);
        Tls tls = Tls.generate(dir.resolve("pki"));
        assertRefused(https.tlsCaFile(tls.key).build(), "tls_ca_file " + tls.key + ": holds no PEM certificate");
        assertRefused(config().servers("http://127.0.0.1:1").tlsCaFile(tls.ca).build(),
                "tls_ca_file is given but no server is an https:// URL (the CA file only verifies HTTPS servers)");

        URI zipUri = URI.create("jar:" + dir.resolve("files.zip").toUri());
        try (FileSystem zip = FileSystems.newFileSystem(zipUri, Collections.singletonMap("create", "true"))) {
            Path inZip = zip.getPath("/ca.pem");
            Files.copy(tls.ca, inZip);
            assertRefused(https.tlsCaFile(inZip).build(),
                    "tlsCaFile must be a path (text) or null, not a value of type " + inZip.getClass().getTypeName());
        }

        // A mixed list with the CA file starts.
        try (Client client = new Client(4); AdminAgent agent = client.connectAdmin(
                config().servers("http://127.0.0.1:1,https://127.0.0.1:1").tlsCaFile(tls.ca).build())) {
            assertFalse(agent.isClosed());
        }
        assertGone("sds-agent");
    }

    @Test
    void aSharedTableClientIsTheReporterWhenAlone() throws Exception {
        fake.setApp(GROUP, APP, "[{\"point\":\"s\",\"visitThreshold\":1}]");
        try (Client client = Client.openShared(dir.resolve("table.sds").toString(), 16);
                AdminAgent agent = client.connectAdmin(config().build())) {
            AdminStatus status = statusUntil(agent, "version 1", s -> s.version() == 1);
            assertTrue(status.isReporter());
            assertTrue(limitedToOne(client, "s"));
            assertEquals(Optional.empty(), agent.returnValue("s"));
        }
    }

    /** A JVM whose main ends with an agent running (logging all along) exits normally and promptly. */
    @Test
    void aJvmExitsNormallyWithAnAgentRunning() throws Exception {
        String text = ChildJvm.exitsPromptlyAfterMain(AdminChild.class, fake.url());
        assertTrue(text.contains("sds-agent group/unknown: SDS strategy pull failed: "), text);
    }
}
