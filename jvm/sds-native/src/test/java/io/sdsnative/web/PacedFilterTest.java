package io.sdsnative.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sdsnative.Client;
import io.sdsnative.Strategy;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The filter on a paced point, in a real Jetty: the application sees a burst
 * spaced at the rate; and, called directly, a wait cut short by an interrupt.
 */
@SuppressWarnings("unchecked")
class PacedFilterTest {
    private WebServer web;
    private Client client;

    /** When each request reached the application, by {@link System#nanoTime()}. */
    private final List<Long> starts = Collections.synchronizedList(new ArrayList<>());

    private final HttpServlet app = new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            starts.add(System.nanoTime());
            response.getWriter().write("ok\n");
        }
    };

    @AfterEach
    void stop() throws Exception {
        if (web != null) {
            web.close();
        }
        if (client != null) {
            client.close();
        }
    }

    private CompletableFuture<Result> send(String path) {
        CompletableFuture<Result> done = new CompletableFuture<>();
        web.request(path, new LinkedHashMap<>()).send(new Response.CompleteListener() {
            @Override
            public void onComplete(Result result) {
                done.complete(result);
            }
        });
        return done;
    }

    /** A request or response of the servlet API whose methods do nothing, but for those handled. */
    private static <T> T fake(Class<T> type, java.util.Map<String, Object> handled) {
        return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> {
                    if (handled.containsKey(method.getName())) {
                        Object h = handled.get(method.getName());
                        return h instanceof java.util.function.Function
                                ? ((java.util.function.Function<Object[], Object>) h).apply(args) : h;
                    }
                    Class<?> r = method.getReturnType();
                    if (r == boolean.class) {
                        return Boolean.FALSE;
                    }
                    if (r == int.class) {
                        return Integer.valueOf(0);
                    }
                    return r == long.class ? (Object) Long.valueOf(0) : null;
                }));
    }

    @Test
    void anInterruptDuringTheWaitAnswers503WithoutRunningTheApplication() throws Exception {
        client = new Client(8);
        client.setStrategy("paced", Strategy.builder().tokenBucketGeneratedTokensInSecond(1)
                .maxQueueingTimeMs(5_000).build());
        SdsFilter filter = SdsFilter.builder().client(client).point("paced").build();
        java.util.Map<String, Object> attributes = new java.util.HashMap<>();
        java.util.Map<String, Object> onRequest = new java.util.HashMap<>();
        onRequest.put("getAttribute", (java.util.function.Function<Object[], Object>) a -> attributes.get(a[0]));
        onRequest.put("setAttribute", (java.util.function.Function<Object[], Object>) a -> attributes.put(
                (String) a[0], a[1]));
        int[] status = {0};
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        jakarta.servlet.ServletOutputStream out = new jakarta.servlet.ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(jakarta.servlet.WriteListener listener) {}

            @Override
            public void write(int b) {
                body.write(b);
            }
        };
        java.util.Map<String, Object> onResponse = new java.util.HashMap<>();
        onResponse.put("setStatus", (java.util.function.Function<Object[], Object>) a -> status[0] = (int) a[0]);
        onResponse.put("getOutputStream", out);
        int[] ran = {0};
        jakarta.servlet.FilterChain app = (req, res) -> ran[0]++;
        // The first request takes the free slot and runs; the second would wait 1 s.
        filter.doFilter(fake(HttpServletRequest.class, onRequest), fake(HttpServletResponse.class, onResponse), app);
        assertEquals(1, ran[0]);
        attributes.clear();
        long start = System.nanoTime();
        Thread.currentThread().interrupt();
        filter.doFilter(fake(HttpServletRequest.class, onRequest), fake(HttpServletResponse.class, onResponse), app);
        assertTrue(Thread.interrupted(), "the interrupt flag is set again");
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 500, "no 1 s wait");
        assertEquals(1, ran[0], "the application did not run");
        assertEquals(503, status[0]);
        assertEquals("Service Unavailable\n", body.toString("UTF-8"));
        assertEquals(2, client.stats("paced").visit());
        assertEquals(0, client.stats("paced").exception(), "no exception counted");
        assertEquals(0, client.stats("paced").concurrent(), "its entry exited");
    }

    @Test
    void aBurstReachesTheApplicationOneSlotApartAndPastTheQueueGets503() throws Exception {
        client = new Client(8);
        client.setStrategy("paced", Strategy.builder().tokenBucketGeneratedTokensInSecond(10)
                .maxQueueingTimeMs(1_000).build());
        web = WebServer.start(SdsFilter.builder().client(client).point("paced").build(), app);
        // One request first, so the connections and the servlet are warm.
        assertEquals(200, web.get("/ok").getStatus());
        starts.clear();
        Thread.sleep(200);
        List<CompletableFuture<Result>> burst = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            burst.add(send("/ok"));
        }
        for (CompletableFuture<Result> r : burst) {
            assertEquals(200, r.get(10, TimeUnit.SECONDS).getResponse().getStatus());
        }
        List<Long> sorted = new ArrayList<>(starts);
        Collections.sort(sorted);
        assertEquals(5, sorted.size());
        for (int k = 1; k < sorted.size(); k++) {
            long after = TimeUnit.NANOSECONDS.toMillis(sorted.get(k) - sorted.get(0));
            assertTrue(after >= k * 100 - 2 && after <= k * 100 + 15,
                    "request " + k + " ran " + after + " ms after the first, not " + k * 100);
        }
        // The slots now reach about 400 ms ahead; a queue of 1 s takes 6 more, then refuses.
        int refused = 0;
        List<CompletableFuture<Result>> more = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            more.add(send("/ok"));
        }
        for (CompletableFuture<Result> r : more) {
            int status = r.get(10, TimeUnit.SECONDS).getResponse().getStatus();
            assertTrue(status == 200 || status == 503, "status " + status);
            refused += status == 503 ? 1 : 0;
        }
        assertTrue(refused >= 1, "the queue is 1 s: at most 11 slots, " + refused + " of 12 refused");
        assertEquals(0, client.stats("paced").concurrent(), "every entry exited");
    }
}
