package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLSocketFactory;

/**
 * The repository's strict fake SDS console, {@code tools/fake-sds-admin.py},
 * run with python3 as a child process (its stdin a pipe: it exits when that
 * closes, so it dies with the test JVM), and its control API. Plain HTTP, or
 * HTTPS only ({@link #startTls}) with a certificate of a test PKI, asking for
 * a client certificate of that PKI when it is {@link RedisServer.Tls#mutual()}.
 */
final class FakeConsole implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Starts the command after it, printing its pid first: {@code exec} keeps
     * the pid and the stdin pipe, and Java 8 has no {@code Process.pid()}.
     */
    private static final String WITH_PID = "echo $$; exec \"$@\"";

    private final Process process;
    /** The python process's own pid, for SIGSTOP / SIGCONT. */
    private final String pid;
    private final int port;
    private boolean frozen;
    /** How the control API connects over HTTPS (trusting the PKI's CA); null: plain HTTP. */
    private final SSLSocketFactory tlsSockets;

    private FakeConsole(Process process, String pid, int port, SSLSocketFactory tlsSockets) {
        this.process = process;
        this.pid = pid;
        this.port = port;
        this.tlsSockets = tlsSockets;
    }

    static FakeConsole start() throws IOException {
        return start(null, 0);
    }

    /** A fake speaking HTTPS only, with {@code tls}'s server certificate, on a free port. */
    static FakeConsole startTls(RedisServer.Tls tls) throws IOException {
        return start(tls, 0);
    }

    /** The same on {@code port} (e.g. the port of a fake just closed). */
    static FakeConsole startTls(RedisServer.Tls tls, int port) throws IOException {
        return start(tls, port);
    }

    private static FakeConsole start(RedisServer.Tls tls, int port) throws IOException {
        File script = new File(repoRoot(), "tools/fake-sds-admin.py");
        List<String> command = new ArrayList<>(Arrays.asList("sh", "-c", WITH_PID, "sh",
                "python3", script.getPath(), "--port", String.valueOf(port)));
        SSLSocketFactory tlsSockets = null;
        if (tls != null) {
            command.addAll(Arrays.asList("--tls-cert", tls.cert.toString(), "--tls-key", tls.key.toString()));
            if (tls.requireClientCert) {
                command.addAll(Arrays.asList("--tls-client-ca", tls.ca.toString()));
            }
            tlsSockets = (SSLSocketFactory) tls.clientSockets();
        }
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String pid = out.readLine();
        String line = out.readLine();
        if (pid == null || line == null) {
            p.destroy();
            throw new IOException("fake-sds-admin.py printed no port");
        }
        return new FakeConsole(p, pid.trim(), Integer.parseInt(line.trim()), tlsSockets);
    }

    /** The repository root: the first folder up from the working directory holding the fake. */
    static File repoRoot() {
        for (File dir = new File("").getAbsoluteFile(); dir != null; dir = dir.getParentFile()) {
            if (new File(dir, "tools/fake-sds-admin.py").isFile()) {
                return dir;
            }
        }
        throw new IllegalStateException("no tools/fake-sds-admin.py above " + new File("").getAbsolutePath());
    }

    /**
     * A config of an agent of {@code group}/{@code app} on this console, as
     * 10.1.2.3 on test-host, pulling every 100 ms with a 300 ms timeout.
     */
    AdminConfig.Builder agentConfig(String group, String app) {
        return AdminConfig.builder()
                .servers(url())
                .appGroup(group)
                .appName(app)
                .ip("10.1.2.3")
                .hostname("test-host")
                .pullIntervalMs(100)
                .timeoutMs(300);
    }

    String url() {
        return (tlsSockets == null ? "http" : "https") + "://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    /** Replaces the app's strategies (a JSON array); the app's new version. */
    int setApp(String group, String app, String strategies) throws IOException {
        return setApp(group, app, strategies, false).asInt();
    }

    /** The same, the app's version null from now on, as on the shipped console with H2. */
    void setAppNullVersion(String group, String app, String strategies) throws IOException {
        JsonNode version = setApp(group, app, strategies, true);
        assertTrue(version.isNull(), version.toString());
    }

    private JsonNode setApp(String group, String app, String strategies, boolean nullVersion) throws IOException {
        String body = "{\"appGroupName\":" + JSON.writeValueAsString(group) + ",\"appName\":"
                + JSON.writeValueAsString(app) + ",\"strategies\":" + strategies
                + (nullVersion ? ",\"nullVersion\":true" : "") + "}";
        return call("POST", "/_fake/app", body).get("version");
    }

    /** How the endpoint ({@code pull} or {@code add}) answers from now on. */
    void mode(String endpoint, String mode) throws IOException {
        call("POST", "/_fake/mode", "{\"" + endpoint + "\":\"" + mode + "\"}");
    }

    List<JsonNode> pulls() throws IOException {
        return requests("pulls");
    }

    List<JsonNode> uploads() throws IOException {
        return requests("uploads");
    }

    /** The console's stored heartbeat rows, in insertion order. */
    List<JsonNode> stored() throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        call("GET", "/_fake/requests", null).get("stored").forEach(rows::add);
        return rows;
    }

    /** The app's point list (its monitor page), sorted. */
    List<String> pointList(String group, String app) throws IOException {
        List<String> names = new ArrayList<>();
        JsonNode list = call("GET", "/_fake/requests", null).get("points").get(group + "/" + app);
        if (list != null) {
            list.forEach(name -> names.add(name.asText()));
        }
        return names;
    }

    /** Freezes the fake (SIGSTOP): the kernel still accepts connections, nothing is answered. */
    synchronized void freeze() throws IOException, InterruptedException {
        signal("STOP");
        frozen = true;
    }

    /** Thaws it (SIGCONT): it processes every request queued meanwhile. */
    synchronized void thaw() throws IOException, InterruptedException {
        signal("CONT");
        frozen = false;
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, pid).start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + pid + " failed");
        }
    }

    void assertNoViolation() throws IOException {
        JsonNode violations = call("GET", "/_fake/requests", null).get("violations");
        assertEquals(0, violations.size(), violations.toString());
    }

    private List<JsonNode> requests(String kind) throws IOException {
        List<JsonNode> list = new ArrayList<>();
        for (JsonNode r : call("GET", "/_fake/requests", null).get(kind)) {
            list.add(r.get("request"));
        }
        return list;
    }

    private JsonNode call(String method, String path, String body) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url() + path).openConnection();
        if (tlsSockets != null) {
            ((HttpsURLConnection) c).setSSLSocketFactory(tlsSockets);
        }
        c.setRequestMethod(method);
        c.setConnectTimeout(5000);
        c.setReadTimeout(5000);
        if (body != null) {
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "application/json");
            try (OutputStream out = c.getOutputStream()) {
                out.write(body.getBytes(StandardCharsets.UTF_8));
            }
        }
        assertEquals(200, c.getResponseCode(), method + " " + path);
        try (InputStream in = c.getInputStream()) {
            return JSON.readTree(in);
        }
    }

    /** Ends the fake (thawed first if frozen): its stdin closes, so it exits. */
    @Override
    public synchronized void close() throws Exception {
        if (frozen) {
            thaw();
        }
        process.getOutputStream().close();
        if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    /** Polls {@code condition} every 10 ms until it holds or {@code timeoutMs} pass. */
    static void waitUntil(long timeoutMs, String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + timeoutMs * 1_000_000;
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "timed out waiting for " + what);
            Thread.sleep(10);
        }
    }
}
