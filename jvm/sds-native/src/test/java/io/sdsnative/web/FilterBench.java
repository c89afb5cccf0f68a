package io.sdsnative.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.sdsnative.Client;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.Strategy;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * What the filter costs per request: Jetty with an empty servlet, without
 * and with {@link SdsFilter} (a per-address policy, a per-header policy and
 * a point with a concurrency limit, draft-10 headers), called over loopback
 * keep-alive connections by a minimal HTTP/1.1 client in this JVM (so the
 * client's own cost hides as little of the server's as possible). Rounds
 * alternate between the two servers; the median round of each is printed as
 * wall time per request (throughput: with several connections, what the
 * server's threads can do on this machine's cores) and as this process's
 * CPU time per request (server and client; less disturbed by other load on
 * the machine), and the overhead of each in %. Run by hand (see
 * jvm/README.md, "Servlet filter"):
 *
 * <pre>
 * mvn -B -ntp -q -f jvm/pom.xml -pl sds-native test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -cp jvm/sds-native/target/classes:jvm/sds-native/target/test-classes:$(cat /tmp/cp.txt) \
 *     io.sdsnative.web.FilterBench [requests per round] [rounds] [connections]
 * </pre>
 */
public final class FilterBench {
    private FilterBench() {}

    /** Answers 200 with no body. */
    static final class Empty extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) {}
    }

    public static void main(String[] args) throws Exception {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int connections = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        String guard = args.length > 3 ? args[3] : "all";
        try (Client client = new Client(64);
                KeyedLimit perIp = KeyedLimit.create(KeyRule.fixedWindow(16_000_000L, 60_000), 1024);
                KeyedLimit perKey = KeyedLimit.create(KeyRule.rate(1_000_000L, 1_000), 1024)) {
            client.setStrategy("bench", Strategy.builder().concurrentThreshold(1_000).build());
            SdsFilter.Builder builder = SdsFilter.builder().client(client);
            if (guard.equals("all") || guard.equals("point")) {
                builder.point("bench");
            }
            if (guard.equals("all") || guard.equals("policies")) {
                builder.policy(Policy.of("per-ip", perIp))
                        .policy(Policy.of("per-key", perKey, KeyFunctions.header("X-Api-Key")));
            }
            SdsFilter filter = builder.build();
            try (WebServer plain = WebServer.start(null, new Empty());
                    WebServer guarded = WebServer.start(filter, new Empty())) {
                if (!guard.equals("point") && !guard.equals("none")) {
                    check(guarded.port());
                }
                long[][] wall = new long[2][rounds];
                long[][] cpu = new long[2][rounds];
                int[] ports = {plain.port(), guarded.port()};
                for (int r = -3; r < rounds; r++) { // three rounds of warm-up each
                    for (int s = 0; s < 2; s++) {
                        long[] ns = round(ports[s], requests, connections);
                        if (r >= 0) {
                            wall[s][r] = ns[0];
                            cpu[s][r] = ns[1];
                        }
                    }
                }
                System.out.printf("Jetty %s, empty servlet, %d keep-alive connections, %d requests x %d rounds,"
                        + " %d cores%n", org.eclipse.jetty.util.Jetty.VERSION, connections, requests, rounds,
                        Runtime.getRuntime().availableProcessors());
                print("wall", median(wall[0]), median(wall[1]));
                print("CPU ", median(cpu[0]), median(cpu[1]));
                System.out.println("(with: " + guard + "; all = 2 policies, 1 point with a concurrency limit, draft-10"
                        + " headers; also: policies, point, none)");
            }
        }
    }

    private static void print(String what, double withoutNs, double withNs) {
        System.out.printf("%s us/request: without the filter %.2f, with SdsFilter %.2f, overhead %.2f = %.1f %%%n",
                what, withoutNs / 1000, withNs / 1000, (withNs - withoutNs) / 1000,
                100 * (withNs - withoutNs) / withoutNs);
    }

    private static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static final byte[] REQUEST = ("GET /x HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: bench\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);

    /** Asserts the guarded server answers with the headers (so the bench measures what it says). */
    private static void check(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port));
            s.getOutputStream().write(REQUEST);
            String head = readResponse(s.getInputStream(), new byte[8192], true);
            if (!head.contains("RateLimit: \"per-ip\";r=") || !head.startsWith("HTTP/1.1 200")) {
                throw new IllegalStateException("unexpected response:\n" + head);
            }
        }
    }

    /**
     * Wall and process CPU nanoseconds per request of {@code requests}
     * requests over {@code connections} connections.
     */
    private static long[] round(int port, int requests, int connections) throws Exception {
        Thread[] threads = new Thread[connections];
        final int each = requests / connections;
        final Exception[] failed = new Exception[1];
        long cpu = processCpuNs();
        long start = System.nanoTime();
        for (int c = 0; c < connections; c++) {
            threads[c] = new Thread(() -> {
                try (Socket s = new Socket()) {
                    s.setTcpNoDelay(true);
                    s.connect(new InetSocketAddress("127.0.0.1", port));
                    OutputStream out = s.getOutputStream();
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[8192];
                    for (int i = 0; i < each; i++) {
                        out.write(REQUEST);
                        readResponse(in, buf, false);
                    }
                } catch (Exception e) {
                    failed[0] = e;
                }
            });
            threads[c].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failed[0] != null) {
            throw failed[0];
        }
        long done = each * (long) connections;
        return new long[] {(System.nanoTime() - start) / done, (processCpuNs() - cpu) / done};
    }

    /**
     * Reads one response with an empty body (Content-Length: 0): up to the
     * blank line. Its head as text when {@code keep}, else null.
     */
    private static String readResponse(InputStream in, byte[] buf, boolean keep) throws IOException {
        int n = 0;
        while (true) {
            int r = in.read(buf, n, buf.length - n);
            if (r < 0) {
                throw new IOException("connection closed");
            }
            n += r;
            if (n >= 4 && buf[n - 4] == '\r' && buf[n - 3] == '\n' && buf[n - 2] == '\r' && buf[n - 1] == '\n') {
                return keep ? new String(buf, 0, n, StandardCharsets.US_ASCII) : null;
            }
        }
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
