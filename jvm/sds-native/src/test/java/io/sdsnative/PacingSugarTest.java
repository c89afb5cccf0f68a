package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Client#call}, {@link Client#run} and {@link Client#callAsync} on a
 * paced point, on the real clock: the work starts after the entry's wait,
 * measured with {@link System#nanoTime()}.
 */
class PacingSugarTest {
    /** Below: the ms clock truncates. Above: a loaded machine oversleeps. */
    private static final long EARLY_MS = 2;
    private static final long LATE_MS = 40;

    private final Client client = new Client(8);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void close() {
        scheduler.shutdownNow();
        client.close();
    }

    private void pace(long rate, long maxQueueMs) {
        client.setStrategy("p", Strategy.builder().tokenBucketGeneratedTokensInSecond(rate)
                .maxQueueingTimeMs(maxQueueMs).build());
    }

    private static long msSince(long startNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
    }

    /** The k-th start (sorted) is k * {@code spacingMs} after the first, within the bounds. */
    private static void assertSpaced(List<Long> startsNs, long spacingMs) {
        List<Long> starts = new ArrayList<>(startsNs);
        Collections.sort(starts);
        for (int k = 1; k < starts.size(); k++) {
            long after = TimeUnit.NANOSECONDS.toMillis(starts.get(k) - starts.get(0));
            long want = k * spacingMs;
            assertTrue(after >= want - EARLY_MS && after <= want + LATE_MS,
                    "start " + k + " came " + after + " ms after the first, not " + want + ": " + starts);
        }
    }

    @Test
    void callSleepsTheWaitBeforeTheWork() {
        pace(10, 1_000);
        List<Long> starts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            assertEquals(n, (int) client.call("p", () -> {
                starts.add(System.nanoTime());
                return n;
            }));
        }
        assertSpaced(starts, 100);
        Stats s = client.stats("p");
        assertEquals(5, s.visit());
        assertEquals(0, s.concurrent(), "every entry exited");
    }

    @Test
    void aBurstFromManyThreadsRunsOneSlotApart() throws Exception {
        pace(20, 1_000);
        int threads = 6;
        List<Long> starts = Collections.synchronizedList(new ArrayList<>());
        Together.run(threads, () -> client.run("p", () -> starts.add(System.nanoTime())));
        assertEquals(threads, starts.size());
        assertSpaced(starts, 50);
    }

    @Test
    void aRefusedOrDowngradedCallNeverWaitsNorRuns() {
        pace(1, 0);
        client.call("p", () -> 1);
        AtomicInteger ran = new AtomicInteger();
        long start = System.nanoTime();
        assertEquals(Reason.TOKEN_BUCKET, client.call("p", () -> {
            ran.incrementAndGet();
            return null;
        }, reason -> reason));
        SdsException e = assertThrows(SdsException.class, () -> client.call("p", ran::incrementAndGet));
        assertEquals(ErrorCode.DOWNGRADED, e.code());
        assertEquals("SDS_DOWNGRADED: point \"p\" is downgraded (TOKEN_BUCKET)", e.getMessage());
        AtomicReference<Reason> fallback = new AtomicReference<>();
        client.run("p", ran::incrementAndGet, fallback::set);
        assertEquals(Reason.TOKEN_BUCKET, fallback.get());
        assertEquals(ErrorCode.DOWNGRADED,
                assertThrows(SdsException.class, () -> client.run("p", ran::incrementAndGet)).code());
        assertEquals(0, ran.get());
        assertTrue(msSince(start) < 500, "no wait: " + msSince(start) + " ms");
        assertEquals(0, client.stats("p").concurrent());
    }

    @Test
    void theWorksExceptionIsCountedAndRethrown() {
        pace(100, 1_000);
        IllegalStateException boom = new IllegalStateException("boom");
        assertEquals(boom, assertThrows(IllegalStateException.class, () -> client.call("p", () -> {
            throw boom;
        })));
        Stats s = client.stats("p");
        assertEquals(1, s.exception());
        assertEquals(0, s.concurrent());
    }

    @Test
    void anInterruptDuringTheWaitCancelsTheWorkAndKeepsTheFlag() throws Exception {
        pace(1, 10_000);
        client.call("p", () -> 0); // the next slot is 1 s away
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                client.call("p", ran::incrementAndGet);
            } catch (Throwable t) {
                thrown.set(t);
            }
            flag.set(Thread.currentThread().isInterrupted());
        });
        long start = System.nanoTime();
        caller.start();
        Thread.sleep(100);
        caller.interrupt();
        caller.join(5_000);
        assertTrue(msSince(start) < 900, "the wait ended at the interrupt: " + msSince(start) + " ms");
        assertInstanceOf(CancellationException.class, thrown.get());
        assertInstanceOf(InterruptedException.class, thrown.get().getCause());
        assertTrue(thrown.get().getMessage().contains("paced wait of point \"p\""), thrown.get().getMessage());
        assertEquals(Boolean.TRUE, flag.get(), "the interrupt flag is set again");
        assertEquals(0, ran.get());
        Stats s = client.stats("p");
        assertEquals(2, s.visit(), "the cancelled request was a visit");
        assertEquals(0, s.exception());
        assertEquals(0, s.concurrent(), "its entry exited");
        // Already interrupted: the wait ends at once, the same way.
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, () -> client.call("p", ran::incrementAndGet));
        assertTrue(Thread.interrupted());
        assertEquals(0, ran.get());
    }

    @Test
    void callAsyncStartsTheWorkAfterTheWaitWithoutBlocking() throws Exception {
        pace(10, 1_000);
        List<Long> starts = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Integer>> results = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 5; i++) {
            int n = i;
            results.add(client.callAsync("p", scheduler, () -> {
                starts.add(System.nanoTime());
                return CompletableFuture.completedFuture(n);
            }));
        }
        assertTrue(msSince(start) < 90, "callAsync returned at once: " + msSince(start) + " ms");
        for (int i = 0; i < 5; i++) {
            assertEquals(i, results.get(i).get(5, TimeUnit.SECONDS));
        }
        assertSpaced(starts, 100);
        assertEquals(0, client.stats("p").concurrent());
    }

    @Test
    void callAsyncSettlesEveryOutcome() throws Exception {
        pace(10, 300);
        // A stage that fails counts an exception.
        CompletableFuture<Object> failed = new CompletableFuture<>();
        failed.completeExceptionally(new IllegalStateException("async boom"));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> client.callAsync("p", scheduler, () -> failed).get(5, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(1, client.stats("p").exception());
        // Cancelled during its wait: the work never starts, the entry exits.
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> waiting = client.callAsync("p", scheduler,
                () -> CompletableFuture.completedFuture(ran.incrementAndGet()));
        assertTrue(waiting.cancel(false));
        // The queue is full (slots at 100, 200, 300 ms taken or passed): refused, fallback.
        client.callAsync("p", scheduler, () -> CompletableFuture.completedFuture(0));
        client.callAsync("p", scheduler, () -> CompletableFuture.completedFuture(0));
        assertEquals(Reason.TOKEN_BUCKET, client.callAsync("p", scheduler,
                () -> CompletableFuture.completedFuture((Reason) null), reason -> reason).get(1, TimeUnit.SECONDS));
        ExecutionException refused = assertThrows(ExecutionException.class, () -> client.callAsync("p", scheduler,
                () -> CompletableFuture.completedFuture(0)).get(1, TimeUnit.SECONDS));
        assertEquals(ErrorCode.DOWNGRADED, ((SdsException) refused.getCause()).code());
        Thread.sleep(500);
        assertEquals(0, ran.get(), "the cancelled work never ran");
        assertEquals(0, client.stats("p").concurrent(), "every entry exited");
        assertEquals(1, client.stats("p").exception(), "a cancel is no exception");
        // A scheduler that refuses the task: the future fails, the entry exits.
        scheduler.shutdown();
        client.call("p", () -> 0);
        ExecutionException rejected = assertThrows(ExecutionException.class, () -> client.callAsync("p", scheduler,
                () -> CompletableFuture.completedFuture(0)).get(1, TimeUnit.SECONDS));
        assertInstanceOf(RejectedExecutionException.class, rejected.getCause());
        assertEquals(0, client.stats("p").concurrent());
        assertFalse(client.isClosed());
    }
}
