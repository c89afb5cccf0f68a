package io.sdsnative;

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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway {@code redis-server} for the tests and benchmarks: the
 * distribution's binary ({@code make servers} installs it) on a free loopback
 * port, with its own temporary directory and no persistence. It runs under a
 * {@code sh} that holds this JVM's pipe as its stdin and kills the server
 * when the pipe closes, so a server never outlives its JVM, even one killed
 * with {@code SIGKILL}. {@link #stop()} and {@link #restart()} keep the port
 * (a fault in the middle of a run); {@link #close()} stops it and deletes the
 * directory.
 */
public final class RedisServer implements AutoCloseable {
    private static final long START_TIMEOUT_MS = 10_000;
    /** Starts the server, waits for the pipe to close, then ends the server and waits for it. */
    private static final String GUARD = "redis-server \"$@\" & pid=$!; cat >/dev/null; kill $pid; wait $pid";

    private final int port;
    private final Path dir;
    private Process process;

    private RedisServer(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    /** Starts a server on a free loopback port. */
    public static RedisServer start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("sds-jvm-redis-");
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            RedisServer server = new RedisServer(freePort(), dir);
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

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://127.0.0.1:" + port;
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
                "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(),
                "--save", "", "--appendonly", "no", "--logfile", log().toString()));
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

    /** Sends one command (RESP) and returns the first line of the answer. */
    public String command(String... args) throws IOException {
        try (Socket s = new Socket()) {
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
            StringBuilder line = new StringBuilder();
            for (int c; (c = in.read()) != -1 && c != '\n'; ) {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }

    private boolean answersPing() {
        try {
            return command("PING").equals("+PONG");
        } catch (IOException e) {
            return false;
        }
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
