package io.sdsnative;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.SocketFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway {@code redis-server} for the tests and benchmarks: the
 * distribution's binary ({@code make servers} installs it) on a free loopback
 * port, with its own temporary directory and no persistence. It runs under a
 * {@code sh} that holds this JVM's pipe as its stdin and kills the server
 * when the pipe closes, so a server never outlives its JVM, even one killed
 * with {@code SIGKILL}. {@link #stop()} and {@link #restart()} keep the port
 * (a fault in the middle of a run); {@link #close()} stops it and deletes the
 * directory. {@link #startTls} starts one that speaks only TLS.
 */
public final class RedisServer implements AutoCloseable {
    private static final long START_TIMEOUT_MS = 10_000;
    /** Starts the server, waits for the pipe to close, then ends the server and waits for it. */
    private static final String GUARD = "redis-server \"$@\" & pid=$!; cat >/dev/null; kill $pid; wait $pid";

    private final int port;
    private final Path dir;
    /** Null: plain TCP. */
    private final Tls tls;
    /** How {@link #command} connects: plain, or TLS trusting the CA and showing the client certificate. */
    private final SocketFactory sockets;
    private Process process;

    private RedisServer(int port, Path dir, Tls tls) throws IOException {
        this.port = port;
        this.dir = dir;
        this.tls = tls;
        this.sockets = tls == null ? SocketFactory.getDefault() : tls.clientSockets();
    }

    /** Starts a server on a free loopback port. */
    public static RedisServer start() throws IOException, InterruptedException {
        return start(null);
    }

    /** Starts a server on a free loopback port that speaks only TLS with {@code tls}'s certificates. */
    public static RedisServer startTls(Tls tls) throws IOException, InterruptedException {
        return start(tls);
    }

    private static RedisServer start(Tls tls) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("sds-jvm-redis-");
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            RedisServer server = new RedisServer(freePort(), dir, tls);
            try {
                server.restart();
                return server;
            } catch (IOException e) {
                last = e; // another process took the port meanwhile
            }
        }
        deleteTree(dir);
        throw last;
    }

    /** {@code redis://127.0.0.1:<port>}, {@code rediss://} with TLS. */
    public String url() {
        return (tls == null ? "redis" : "rediss") + "://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Starts the server again on its port (after {@link #stop()}), empty. */
    public synchronized void restart() throws IOException, InterruptedException {
        if (process != null) {
            throw new IllegalStateException("redis-server is running");
        }
        List<String> command = new ArrayList<>(Arrays.asList("sh", "-c", GUARD, "sh",
                "--bind", "127.0.0.1", "--dir", dir.toString(),
                "--save", "", "--appendonly", "no", "--logfile", log().toString(),
                "--pidfile", pidFile().toString()));
        if (tls == null) {
            command.addAll(Arrays.asList("--port", Integer.toString(port)));
        } else {
            command.addAll(Arrays.asList("--port", "0", "--tls-port", Integer.toString(port),
                    "--tls-cert-file", tls.cert.toString(), "--tls-key-file", tls.key.toString(),
                    "--tls-ca-cert-file", tls.ca.toString(),
                    "--tls-auth-clients", tls.requireClientCert ? "yes" : "no"));
        }
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("guard.out").toFile()).start();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        while (!answersPing()) {
            if (!process.isAlive() || System.nanoTime() > end) {
                stop();
                throw new IOException("redis-server did not start on port " + port
                        + " (is it installed? run `make servers`):\n" + read(log()) + read(dir.resolve("guard.out")));
            }
            Thread.sleep(20);
        }
    }

    /** Sends {@code signal} ("STOP", "CONT") to the server: paused, it accepts connections and never answers. */
    public synchronized void signal(String signal) throws IOException, InterruptedException {
        // The server's own pid (from its pid file): the process this JVM started is the guarding sh.
        String pid = new String(Files.readAllBytes(pidFile()), StandardCharsets.US_ASCII).trim();
        Process kill = new ProcessBuilder("kill", "-" + signal, pid).start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " failed");
        }
    }

    /** Stops the server and waits until it has ended; its port is free again. */
    public synchronized void stop() throws IOException, InterruptedException {
        if (process == null) {
            return;
        }
        process.getOutputStream().close();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
        process = null;
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() throws IOException, InterruptedException {
        stop();
        deleteTree(dir);
    }

    /**
     * Sends one command (RESP) and returns the first line of the answer; of
     * a bulk string its text (null for none).
     */
    public String command(String... args) throws IOException {
        try (Socket s = sockets.createSocket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            s.setSoTimeout(1000);
            StringBuilder request = new StringBuilder("*" + args.length + "\r\n");
            for (String a : args) {
                request.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n")
                        .append(a).append("\r\n");
            }
            OutputStream out = s.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            String first = line(in);
            if (first.startsWith("$")) {
                return first.equals("$-1") ? null : line(in);
            }
            return first;
        }
    }

    /** A hash field as a number (0 when absent). */
    public long hget(String key, String field) throws IOException {
        String value = command("HGET", key, field);
        return value == null ? 0 : Long.parseLong(value);
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c; (c = in.read()) != -1 && c != '\n'; ) {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    private boolean answersPing() {
        try {
            return command("PING").equals("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private Path pidFile() {
        return dir.resolve("redis.pid");
    }

    private Path log() {
        return dir.resolve("redis.log");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String read(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * PEM files of a throwaway PKI made by {@code tools/test-pki.sh}: a CA, a
     * server certificate for 127.0.0.1 and a client certificate, both signed
     * by that CA (a new CA name each time: two PKIs never trust each other).
     */
    public static final class Tls {
        public final Path ca;
        public final Path cert;
        public final Path key;
        public final Path clientCert;
        public final Path clientKey;
        /** The server asks for a client certificate signed by {@link #ca} (mutual TLS). */
        public final boolean requireClientCert;

        private Tls(Path dir, boolean requireClientCert) {
            ca = dir.resolve("ca.pem");
            cert = dir.resolve("server-cert.pem");
            key = dir.resolve("server-key.pem");
            clientCert = dir.resolve("client-cert.pem");
            clientKey = dir.resolve("client-key.pem");
            this.requireClientCert = requireClientCert;
        }

        /**
         * A fresh PKI in {@code dir}, by the script the system property
         * {@code sds.test.pki} names (the pom sets it; else the path from
         * {@code jvm/sds-native}).
         */
        public static Tls generate(Path dir) throws IOException, InterruptedException {
            String script = System.getProperty("sds.test.pki", "../../tools/test-pki.sh");
            Process p = new ProcessBuilder("bash", script, dir.toString()).redirectErrorStream(true).start();
            String out = readAll(p.getInputStream());
            if (p.waitFor() != 0) {
                throw new IOException("test-pki.sh failed (openssl comes with `make servers`):\n" + out);
            }
            return new Tls(dir, false);
        }

        /** The same PKI with the server asking for client certificates. */
        public Tls mutual() {
            return new Tls(ca.getParent(), true);
        }

        /** TLS sockets that trust {@link #ca} and show the client certificate. */
        SocketFactory clientSockets() throws IOException {
            try {
                CertificateFactory x509 = CertificateFactory.getInstance("X.509");
                KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
                trusted.load(null, null);
                trusted.setCertificateEntry("ca", certificate(x509, ca));
                PrivateKey privateKey = KeyFactory.getInstance("EC")
                        .generatePrivate(new PKCS8EncodedKeySpec(pemBody(clientKey)));
                KeyStore mine = KeyStore.getInstance(KeyStore.getDefaultType());
                mine.load(null, null);
                char[] noPassword = new char[0];
                mine.setKeyEntry("client", privateKey, noPassword,
                        new Certificate[] {certificate(x509, clientCert)});
                TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trust.init(trusted);
                KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                keys.init(mine, noPassword);
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
                return context.getSocketFactory();
            } catch (GeneralSecurityException e) {
                throw new IOException("the test PKI's files: " + e, e);
            }
        }

        private static Certificate certificate(CertificateFactory x509, Path pem)
                throws IOException, GeneralSecurityException {
            try (InputStream in = Files.newInputStream(pem)) {
                return x509.generateCertificate(in);
            }
        }

        /** The DER bytes of a PEM file's one block. */
        private static byte[] pemBody(Path pem) throws IOException {
            String text = new String(Files.readAllBytes(pem), StandardCharsets.US_ASCII);
            return Base64.getMimeDecoder().decode(text.replaceAll("-----[A-Z ]+-----", ""));
        }
    }

    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        for (int n; (n = in.read(buffer)) != -1; ) {
            out.write(buffer, 0, n);
        }
        return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
