package io.sdsnative.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sdsnative.Client;
import io.sdsnative.ErrorCode;
import io.sdsnative.KeyDecision;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.SdsException;
import io.sdsnative.Strategy;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The filter in a real Jetty, called over HTTP on loopback. */
class SdsFilterTest {
    private static final Pattern STATE = Pattern.compile("\"([^\"]+)\";r=(\\d+);t=(\\d+)");

    private final TestServlet servlet = new TestServlet();
    private WebServer web;
    private KeyedLimit limit;
    private Client client;

    @AfterEach
    void stop() throws Exception {
        servlet.release.countDown();
        if (web != null) {
            web.close();
        }
        if (limit != null) {
            limit.close();
        }
        if (client != null) {
            client.close();
        }
    }

    /** The policy most tests guard with: {@code limit} per {@code X-Api-Key}. */
    private Policy perKey() {
        return Policy.of("per-key", limit, KeyFunctions.header("X-Api-Key"));
    }

    /**
     * A fixed window of {@code limit} a minute from each key's first hit: one
     * aligned to the minute would reset when a test crossed a minute's end
     * (the filter reads the real clock), so a count, a remaining or a 429
     * after {@code limit} requests would depend on when the test ran.
     */
    private static KeyRule window(long limit) {
        return KeyRule.fixedWindow(limit, 60_000).windowFromFirstHit(true);
    }

    /** The filter with {@link #perKey()} alone, on a fixed window of {@code perMinute} a minute. */
    private void startPerKey(int perMinute) throws Exception {
        limit = KeyedLimit.create(window(perMinute), 64);
        web = WebServer.start(SdsFilter.builder().policy(perKey()).build(), servlet);
    }

    /**
     * The filter over point {@code point} of a new client (5 permits) and a
     * policy of one request in flight per {@code X-User}.
     */
    private void startInFlightUnderPoint(String point) throws Exception {
        limit = KeyedLimit.create(KeyRule.inFlight(1), 64);
        client = new Client(64);
        client.setStrategy(point, Strategy.builder().concurrentThreshold(5).build());
        web = WebServer.start(SdsFilter.builder().client(client).point(point)
                .policy(Policy.of("conn", limit, KeyFunctions.header("X-User")))
                .build(), servlet);
    }

    private static long seconds(long ms) {
        return (ms + 999) / 1000;
    }

    @Test
    void aKeyOverItsLimitGets429WithRetryAfterAndHeadersOfItsDecision() throws Exception {
        startPerKey(3);
        for (int i = 0; i < 3; i++) {
            ContentResponse r = web.get("/ok", "X-Api-Key", "alice");
            assertEquals(200, r.getStatus());
            assertEquals("ok\n", r.getContentAsString());
            assertEquals("\"per-key\";q=3;w=60", r.getHeaders().get("RateLimit-Policy"));
            Matcher state = STATE.matcher(r.getHeaders().get("RateLimit"));
            assertTrue(state.matches(), r.getHeaders().get("RateLimit"));
            assertEquals("per-key", state.group(1));
            assertEquals(2 - i, Integer.parseInt(state.group(2)));
            // The decision was made a moment before this peek: the same reset, or a second more.
            long t = Long.parseLong(state.group(3));
            long now = seconds(limit.peek("alice").resetMs());
            assertTrue(t == now || t == now + 1, t + " vs " + now);
            assertNull(r.getHeaders().get("Retry-After"));
        }
        ContentResponse refused = web.get("/ok", "X-Api-Key", "alice");
        assertEquals(429, refused.getStatus());
        assertEquals("Too Many Requests\n", refused.getContentAsString());
        Matcher state = STATE.matcher(refused.getHeaders().get("RateLimit"));
        assertTrue(state.matches());
        assertEquals("0", state.group(2));
        KeyDecision now = limit.decide("alice");
        assertFalse(now.admitted());
        long retry = Long.parseLong(refused.getHeaders().get("Retry-After"));
        long expected = Math.max(1, seconds(now.retryAfterMs()));
        assertTrue(retry == expected || retry == expected + 1, retry + " vs " + expected);
        assertEquals(200, web.get("/ok", "X-Api-Key", "bob").getStatus(), "another key has its own quota");
    }

    @Test
    void aRequestWithoutItsKeyIsExemptAndGetsNoHeaders() throws Exception {
        startPerKey(1);
        for (int i = 0; i < 3; i++) {
            ContentResponse r = web.get("/ok");
            assertEquals(200, r.getStatus());
            assertNull(r.getHeaders().get("RateLimit"));
            assertNull(r.getHeaders().get("RateLimit-Policy"));
        }
    }

    @Test
    void everyPolicyIsListedAndOnceOneRefusesTheOthersTakeNothing() throws Exception {
        limit = KeyedLimit.create(window(2), 64);
        try (KeyedLimit wide = KeyedLimit.create(KeyRule.fixedWindow(100, 3_600_000).windowFromFirstHit(true), 64)) {
            web = WebServer.start(SdsFilter.builder()
                    .policy(perKey())
                    .policy(Policy.of("per-ip", wide).cost(10))
                    .build(), servlet);
            web.get("/ok", "X-Api-Key", "k");
            ContentResponse r = web.get("/ok", "X-Api-Key", "k");
            assertEquals("\"per-key\";q=2;w=60, \"per-ip\";q=100;w=3600", r.getHeaders().get("RateLimit-Policy"));
            assertTrue(r.getHeaders().get("RateLimit").matches("\"per-key\";r=0;t=\\d+, \"per-ip\";r=80;t=\\d+"),
                    r.getHeaders().get("RateLimit"));
            ContentResponse refused = web.get("/ok", "X-Api-Key", "k");
            assertEquals(429, refused.getStatus());
            assertTrue(refused.getHeaders().get("RateLimit").matches("\"per-key\";r=0;t=\\d+, \"per-ip\";r=80;t=\\d+"),
                    "the refused request took nothing from per-ip: " + refused.getHeaders().get("RateLimit"));
            assertEquals(80, wide.peek("127.0.0.1").remaining());
        }
    }

    @Test
    void theOlderHeaderStylesOnRequest() throws Exception {
        limit = KeyedLimit.create(window(3), 64);
        web = WebServer.start(SdsFilter.builder()
                .policy(perKey())
                .headers("draft-6")
                .build(), servlet);
        ContentResponse r = web.get("/ok", "X-Api-Key", "a");
        assertEquals("3", r.getHeaders().get("RateLimit-Limit"));
        assertEquals("2", r.getHeaders().get("RateLimit-Remaining"));
        long reset = Long.parseLong(r.getHeaders().get("RateLimit-Reset"));
        assertTrue(reset >= 1 && reset <= 60, String.valueOf(reset));
        assertNull(r.getHeaders().get("RateLimit"));
        web.close();
        web = WebServer.start(SdsFilter.builder()
                .policy(perKey())
                .headers("x-ratelimit")
                .build(), servlet);
        r = web.get("/ok", "X-Api-Key", "a");
        assertEquals("3", r.getHeaders().get("X-RateLimit-Limit"));
        assertEquals("1", r.getHeaders().get("X-RateLimit-Remaining"));
        assertTrue(r.getHeaders().contains("X-RateLimit-Reset"));
        assertNull(r.getHeaders().get("RateLimit-Limit"));
    }

    @Test
    void aDowngradedPointAnswers503OrTheFallback() throws Exception {
        client = new Client(64);
        client.setStrategy("orders", Strategy.builder().concurrentThreshold(1).build());
        web = WebServer.start(SdsFilter.builder().client(client).point("orders").build(), servlet);
        whileOneRuns(servlet, "/block", () -> {
            ContentResponse busy = web.get("/ok");
            assertEquals(503, busy.getStatus());
            assertEquals("Service Unavailable\n", busy.getContentAsString());
        });
        eventually(() -> client.stats("orders").concurrent() == 0);
        assertEquals(200, web.get("/ok").getStatus(), "the permit came back when the response completed");
        web.close();

        TestServlet second = new TestServlet();
        web = WebServer.start(SdsFilter.builder().client(client).point(request -> "orders")
                .fallback((request, response, reason) -> {
                    response.setStatus(200);
                    response.getWriter().write("fallback " + reason + "\n");
                })
                .build(), second);
        whileOneRuns(second, "/block", () -> {
            ContentResponse fallback = web.get("/ok");
            assertEquals(200, fallback.getStatus());
            assertEquals("fallback CONCURRENT\n", fallback.getContentAsString());
        });
    }

    @Test
    void anExceptionOrA5xxExitsThePointAsAnError() throws Exception {
        client = new Client(64);
        web = WebServer.start(SdsFilter.builder().client(client)
                .point(request -> request.getRequestURI().equals("/none") ? null : "api")
                .build(), servlet);
        assertEquals(500, web.get("/boom").getStatus());
        assertEquals(500, web.get("/fail").getStatus());
        assertEquals(200, web.get("/ok").getStatus());
        assertEquals(200, web.get("/none").getStatus());
        assertEquals(3, client.stats("api").visit());
        assertEquals(2, client.stats("api").exception());
        assertEquals(0, client.stats("api").concurrent());
    }

    @Test
    void inFlightUnitsComeBackWhenTheResponseCompletesOrTheApplicationThrows() throws Exception {
        limit = KeyedLimit.create(KeyRule.inFlight(1), 64);
        Policy policy = Policy.of("conn", limit, KeyFunctions.header("X-User"));
        assertTrue(policy.isInFlight());
        web = WebServer.start(SdsFilter.builder().policy(policy).build(), servlet);
        assertEquals(500, web.get("/boom", "X-User", "u").getStatus());
        assertEquals(1, limit.peek("u").remaining(), "released after the exception");
        whileOneRuns(servlet, "/block", () -> {
            ContentResponse refused = web.get("/ok", "X-User", "u");
            assertEquals(429, refused.getStatus());
            assertNull(refused.getHeaders().get("Retry-After"), "an in-flight refusal waits on a release, not a time");
            assertEquals(200, web.get("/ok", "X-User", "other").getStatus());
        }, "X-User", "u");
        eventually(() -> limit.peek("u").remaining() == 1);
        assertEquals(200, web.get("/ok", "X-User", "u").getStatus());
    }

    @Test
    void aKeyFunctionThatThrowsLeavesEveryPolicyUntouched() throws Exception {
        limit = KeyedLimit.create(KeyRule.inFlight(1), 64);
        try (KeyedLimit perKey = KeyedLimit.create(window(5), 64)) {
            web = WebServer.start(SdsFilter.builder()
                    .policy(Policy.of("per-key", perKey, KeyFunctions.header("X-User")))
                    .policy(Policy.of("conn", limit, KeyFunctions.header("X-User")))
                    .policy(Policy.of("broken", limit, request -> {
                        throw new IllegalStateException("no session");
                    }))
                    .build(), servlet);
            assertEquals(500, web.get("/ok", "X-User", "u").getStatus());
            // Every key function runs before any policy decides: the earlier ones took nothing either.
            assertEquals(5, perKey.peek("u").remaining());
            assertEquals(1, limit.peek("u").remaining());
        }
    }

    @Test
    void everyCostFunctionRunsBeforeThePoliciesDecideAlsoAfterARefusal() throws Exception {
        limit = KeyedLimit.create(window(1), 64);
        AtomicInteger costed = new AtomicInteger();
        try (KeyedLimit wide = KeyedLimit.create(window(100), 64)) {
            web = WebServer.start(SdsFilter.builder()
                    .policy(perKey())
                    .policy(Policy.of("per-ip", wide).cost(request -> {
                        costed.incrementAndGet();
                        return 10;
                    }))
                    .build(), servlet);
            assertEquals(200, web.get("/ok", "X-Api-Key", "k").getStatus());
            ContentResponse refused = web.get("/ok", "X-Api-Key", "k");
            assertEquals(429, refused.getStatus());
            assertEquals(2, costed.get(), "the cost function ran for the refused request too");
            assertEquals(90, wide.peek("127.0.0.1").remaining(), "and the later policy only peeked");
        }
    }

    @Test
    void aFullInFlightTableAnswersAPlain503WithoutTheFallback() throws Exception {
        limit = KeyedLimit.create(KeyRule.inFlight(1), 8);
        int filled = 0;
        try {
            for (; filled < 10_000; filled++) {
                limit.decide("held-" + filled);
            }
        } catch (SdsException e) {
            assertEquals(ErrorCode.TABLE_FULL, e.code());
        }
        assertTrue(filled < 10_000, "the table filled up");
        client = new Client(64);
        AtomicInteger fallbacks = new AtomicInteger();
        try (KeyedLimit perKey = KeyedLimit.create(window(5), 64)) {
            web = WebServer.start(SdsFilter.builder().client(client).point("api")
                    .policy(Policy.of("per-key", perKey, KeyFunctions.header("X-User")))
                    .policy(Policy.of("conn", limit, KeyFunctions.header("X-User")))
                    .fallback((request, response, reason) -> {
                        fallbacks.incrementAndGet();
                        response.setStatus(200);
                    })
                    .build(), servlet);
            ContentResponse r = web.get("/ok", "X-User", "new");
            assertEquals(503, r.getStatus());
            assertEquals("Service Unavailable\n", r.getContentAsString());
            assertNull(r.getHeaders().get("RateLimit"), "no headers, though per-key decided");
            assertNull(r.getHeaders().get("RateLimit-Policy"));
            assertEquals(0, fallbacks.get(), "a full table is no downgraded point");
            assertEquals(0, client.stats("api").visit(), "nor was the point entered");
            assertEquals(4, perKey.peek("new").remaining(), "what an earlier policy took stays taken");
        }
    }

    @Test
    void anAsyncRequestHoldsItsUnitsAndPermitUntilItCompletes() throws Exception {
        startInFlightUnderPoint("async");
        whileOneRuns(servlet, "/async", () -> {
            assertEquals(429, web.get("/ok", "X-User", "u").getStatus());
            assertEquals(1, client.stats("async").concurrent(), "the filter returned, the request still runs");
        }, "X-User", "u");
        eventually(() -> limit.peek("u").remaining() == 1 && client.stats("async").concurrent() == 0);
        assertEquals(0, client.stats("async").exception());
    }

    @Test
    void anAsyncTimeoutGivesBackTheUnitsAndCountsAnError() throws Exception {
        startInFlightUnderPoint("stall");
        ContentResponse r = web.get("/stall", "X-User", "u");
        assertTrue(r.getStatus() >= 500, String.valueOf(r.getStatus()));
        eventually(() -> limit.peek("u").remaining() == 1 && client.stats("stall").concurrent() == 0);
        assertEquals(1, client.stats("stall").exception());
    }

    @Test
    void anIpv6ClientIsItsSlash64() throws Exception {
        limit = KeyedLimit.create(window(5), 64);
        web = WebServer.start("::1", SdsFilter.builder().policy(Policy.of("per-ip", limit)).build(), servlet);
        ContentResponse r = web.get("/ok");
        assertEquals(200, r.getStatus());
        assertTrue(r.getHeaders().get("RateLimit").startsWith("\"per-ip\";r=4;"));
        assertEquals(4, limit.peek("::/64").remaining());
        assertEquals(5, limit.peek("::1").remaining());
    }

    @Test
    void forwardedForIsBelievedFromTrustedProxiesOnly() throws Exception {
        limit = KeyedLimit.create(window(2), 64);
        web = WebServer.start(SdsFilter.builder()
                .policy(Policy.of("per-ip", limit,
                        KeyFunctions.clientAddress(64, Collections.singletonList("127.0.0.0/8"))))
                .build(), servlet);
        // Two hosts of one /64, behind the trusted proxy: one key.
        assertEquals(200, web.get("/ok", "X-Forwarded-For", "2001:db8:1:2::aa").getStatus());
        assertEquals(200, web.get("/ok", "X-Forwarded-For", "198.51.100.1, 2001:db8:1:2:ffff::bb").getStatus());
        assertEquals(429, web.get("/ok", "X-Forwarded-For", "2001:db8:1:2:1::1").getStatus());
        assertEquals(200, web.get("/ok", "X-Forwarded-For", "2001:db8:1:3::1").getStatus());
        assertEquals(0, limit.peek("2001:db8:1:2::/64").remaining());
        assertEquals(2, limit.peek("127.0.0.1").remaining(), "the proxy itself is not the client");
        web.close();

        limit.resetAll();
        web = WebServer.start(SdsFilter.builder().policy(Policy.of("per-ip", limit)).build(), servlet);
        assertEquals(200, web.get("/ok", "X-Forwarded-For", "2001:db8:1:2::aa").getStatus());
        assertEquals(200, web.get("/ok", "X-Forwarded-For", "2001:db8:1:9::aa").getStatus());
        assertEquals(429, web.get("/ok", "X-Forwarded-For", "198.51.100.1").getStatus(),
                "an untrusted peer's header is ignored: every request is 127.0.0.1's");
        assertEquals(0, limit.peek("127.0.0.1").remaining());
        assertEquals(2, limit.peek("2001:db8:1:2::/64").remaining());
    }

    /** Writes the bytes of {@code hex} ({@code "6bff"}: {@code 'k'} and 0xff) to {@code into}. */
    private static byte[] unhex(String hex, byte[] into) {
        for (int i = 0; i < into.length; i++) {
            into[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return into;
    }

    /** The bytes header {@code X-Key} spells in hex; none: exempt. */
    private static byte[] hexKey(jakarta.servlet.http.HttpServletRequest request) {
        String hex = request.getHeader("X-Key");
        return hex == null ? null : unhex(hex, new byte[hex.length() / 2]);
    }

    @Test
    void byteKeysThatDifferOnlyInBytesThatAreNoUtf8AreLimitedApart() throws Exception {
        limit = KeyedLimit.create(window(2), 64);
        Policy policy = Policy.ofBytes("per-key", limit, SdsFilterTest::hexKey);
        assertNull(policy.keyFunction());
        web = WebServer.start(SdsFilter.builder().policy(policy).build(), servlet);
        byte[] ff = {'k', (byte) 0xff};
        byte[] fe = {'k', (byte) 0xfe};
        // Decoded as UTF-8 both are "k\uFFFD": as text they would be one key.
        assertEquals(new String(ff, StandardCharsets.UTF_8), new String(fe, StandardCharsets.UTF_8));
        assertEquals(200, web.get("/ok", "X-Key", "6bff").getStatus());
        ContentResponse second = web.get("/ok", "X-Key", "6bff");
        assertEquals(200, second.getStatus());
        assertTrue(second.getHeaders().get("RateLimit").startsWith("\"per-key\";r=0;"), second.getHeaders().get("RateLimit"));
        assertEquals(429, web.get("/ok", "X-Key", "6bff").getStatus(), "the same bytes share one limit");
        ContentResponse other = web.get("/ok", "X-Key", "6bfe");
        assertEquals(200, other.getStatus(), "other bytes have their own limit");
        assertTrue(other.getHeaders().get("RateLimit").startsWith("\"per-key\";r=1;"), other.getHeaders().get("RateLimit"));
        assertEquals(200, web.get("/ok", "X-Key", "6bfe").getStatus());
        assertEquals(429, web.get("/ok", "X-Key", "6bfe").getStatus());
        assertEquals(0, limit.peek(ff).remaining());
        assertEquals(0, limit.peek(fe).remaining());
        assertEquals(2, limit.peek("k\uFFFD").remaining(), "no byte was replaced on the way");
        ContentResponse exempt = web.get("/ok");
        assertEquals(200, exempt.getStatus(), "a null byte[] exempts the request");
        assertNull(exempt.getHeaders().get("RateLimit"));
    }

    @Test
    void anInFlightByteKeyHoldsACopyOfItsBytesUntilTheResponseCompletes() throws Exception {
        limit = KeyedLimit.create(KeyRule.inFlight(1), 64);
        // One array reused by every request (they reach the filter one at a time here).
        byte[] reused = new byte[2];
        Policy policy = Policy.ofBytes("conn", limit, request -> unhex(request.getHeader("X-Key"), reused));
        assertTrue(policy.isInFlight());
        assertNull(policy.keyFunction());
        web = WebServer.start(SdsFilter.builder().policy(policy).build(), servlet);
        byte[] ff = {'k', (byte) 0xff};
        whileOneRuns(servlet, "/block", () -> {
            assertEquals(429, web.get("/ok", "X-Key", "6bff").getStatus(), "the same bytes: the unit is held");
            assertEquals(200, web.get("/ok", "X-Key", "6bfe").getStatus(), "other bytes: their own unit");
            assertEquals(0, limit.peek(ff).remaining());
        }, "X-Key", "6bff");
        // The array now holds 6b fe: the unit goes back to the bytes that took it.
        eventually(() -> limit.peek(ff).remaining() == 1);
        assertEquals(1, limit.peek(new byte[] {'k', (byte) 0xfe}).remaining());
    }

    @Test
    void aBadSetupIsRefusedWhenBuilt() {
        limit = KeyedLimit.create(window(2), 64);
        SdsException e = assertThrows(SdsException.class, () -> SdsFilter.builder().headers("draft-7").build());
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().endsWith("headers must be \"draft-10\", \"draft-6\" or \"x-ratelimit\", not \"draft-7\""), e.getMessage());
        e = assertThrows(SdsException.class, () -> Policy.of("caf\u00e9", limit));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("printable ASCII"), e.getMessage());
        e = assertThrows(SdsException.class,
                () -> KeyFunctions.clientAddress(64, Arrays.asList("10.0.0.0/8", "proxy.local")));
        assertTrue(e.getMessage().endsWith("trusted proxy \"proxy.local\" is not an address or CIDR network"), e.getMessage());
        e = assertThrows(SdsException.class, () -> KeyFunctions.clientAddress(33, 64, Collections.<String>emptyList()));
        assertTrue(e.getMessage().contains("not 33 and 64"), e.getMessage());
        e = assertThrows(SdsException.class, () -> SdsFilter.builder()
                .policy(Policy.of("p", limit)).policy(Policy.of("p", limit, KeyFunctions.header("X"))).build());
        assertTrue(e.getMessage().contains("two policies are named p"), e.getMessage());
        e = assertThrows(SdsException.class, () -> SdsFilter.builder().point("orders").build());
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertFalse(Policy.of("p", limit).isInFlight());
        e = assertThrows(SdsException.class, () -> Policy.ofBytes("p", limit, null));
        assertEquals(ErrorCode.NULL_ARGUMENT, e.code());
        e = assertThrows(SdsException.class, () -> Policy.ofBytes("caf\u00e9", limit, SdsFilterTest::hexKey));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    }

    /**
     * Waits up to 5 s for {@code condition}: a client may read a response
     * before the server has run what follows its completion.
     */
    private static void eventually(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "not within 5 s");
            Thread.sleep(5);
        }
    }

    /** Sends a GET without waiting for its response. */
    /** Checks made while a request runs. */
    private interface Check {
        void run() throws Exception;
    }

    /**
     * Sends {@code path} with {@code headers} and makes {@code during} once
     * the request runs in {@code s}, then lets it finish: answered 200.
     */
    private void whileOneRuns(TestServlet s, String path, Check during, String... headers) throws Exception {
        CompletableFuture<Result> first = send(path, headers);
        assertTrue(s.entered.await(10, TimeUnit.SECONDS));
        during.run();
        s.release.countDown();
        assertEquals(200, first.get(10, TimeUnit.SECONDS).getResponse().getStatus());
    }

    private CompletableFuture<Result> send(String path, String... headers) {
        java.util.Map<String, String> fields = new java.util.LinkedHashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            fields.put(headers[i], headers[i + 1]);
        }
        CompletableFuture<Result> done = new CompletableFuture<>();
        web.request(path, fields).send(new Response.CompleteListener() {
            @Override
            public void onComplete(Result result) {
                done.complete(result);
            }
        });
        return done;
    }
}
