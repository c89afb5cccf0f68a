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
 * HTTPS only ({@link #startTls}) with a certificate of a test PKI.
 */
final class FakeConsole implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final int port;
    /** How the control API connects over HTTPS (trusting the PKI's CA); null: plain HTTP. */
    private final SSLSocketFactory tlsSockets;

    private FakeConsole(Process process, int port, SSLSocketFactory tlsSockets) {
        this.process = process;
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
        List<String> command = new ArrayList<>(Arrays.asList("python3", script.getPath(), "--port", String.valueOf(port)));
        SSLSocketFactory tlsSockets = null;
        if (tls != null) {
            command.addAll(Arrays.asList("--tls-cert", tls.cert.toString(), "--tls-key", tls.key.toString()));
            tlsSockets = (SSLSocketFactory) tls.clientSockets();
        }
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null) {
            p.destroy();
            throw new IOException("fake-sds-admin.py printed no port");
        }
        return new FakeConsole(p, Integer.parseInt(line.trim()), tlsSockets);
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

    String url() {
        return (tlsSockets == null ? "http" : "https") + "://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    /** Replaces the app's strategies (a JSON array); the app's new version. */
    int setApp(String group, String app, String strategies) throws IOException {
        String body = "{\"appGroupName\":" + JSON.writeValueAsString(group) + ",\"appName\":"
                + JSON.writeValueAsString(app) + ",\"strategies\":" + strategies + "}";
        return call("POST", "/_fake/app", body).get("version").asInt();
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

    /** Ends the fake: its stdin closes, so it exits. */
    @Override
    public void close() throws Exception {
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
