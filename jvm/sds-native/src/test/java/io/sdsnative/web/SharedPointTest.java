package io.sdsnative.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sdsnative.Client;
import io.sdsnative.Strategy;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two JVMs, each a Jetty with the filter, on one shared table: a point's concurrency limit is the host's. */
class SharedPointTest {
    /** A child JVM's server: the filter on the shared table {@code args[0]}; prints its port, stops at EOF. */
    public static void main(String[] args) throws Exception {
        try (Client client = Client.openShared(args[0], 64);
                WebServer web = WebServer.start(SdsFilter.builder().client(client).point("orders").build(),
                        new TestServlet())) {
            System.out.println("port " + web.port());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the parent closes our input
            }
        }
    }

    @Test
    void aPermitHeldInOneJvmIsRefusedInTheOther(@TempDir Path dir) throws Exception {
        String table = dir.resolve("web.sds").toString();
        TestServlet servlet = new TestServlet();
        Process child = null;
        HttpClient http = new HttpClient();
        try (Client client = Client.openShared(table, 64);
                WebServer web = WebServer.start(SdsFilter.builder().client(client).point("orders").build(), servlet)) {
            client.setStrategy("orders", Strategy.builder().concurrentThreshold(1).build());
            child = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(), "-cp",
                    System.getProperty("java.class.path"), SharedPointTest.class.getName(), table)
                    .redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("port ")) {
                // Jetty's and SLF4J's lines
            }
            assertTrue(line != null, "the child JVM started no server");
            String other = "http://127.0.0.1:" + line.substring(5);
            http.start();
            assertEquals(200, http.GET(other + "/ok").getStatus());

            CompletableFuture<Result> held = new CompletableFuture<>();
            web.request("/block", java.util.Collections.<String, String>emptyMap()).send(held::complete);
            assertTrue(servlet.entered.await(10, TimeUnit.SECONDS));
            ContentResponse refused = http.GET(other + "/ok");
            assertEquals(503, refused.getStatus(), "the other JVM's request holds the host's only permit");
            servlet.release.countDown();
            assertEquals(200, held.get(10, TimeUnit.SECONDS).getResponse().getStatus());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            int status;
            while ((status = http.GET(other + "/ok").getStatus()) != 200 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            assertEquals(200, status, "the permit came back to the host");
        } finally {
            servlet.release.countDown();
            http.stop();
            if (child != null) {
                OutputStream in = child.getOutputStream();
                in.close();
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
            Files.deleteIfExists(dir.resolve("web.sds"));
        }
    }
}
