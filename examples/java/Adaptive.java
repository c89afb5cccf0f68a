import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;

import io.sdsnative.Algorithm;
import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.Stats;
import io.sdsnative.Strategy;

/**
 * Adaptive concurrency from Java, on a simulated server and explicit times
 * (the same lines on every run): a server of 20 workers, 20 ms per request
 * behind a FIFO queue (capacity 1000/s), gets 2000 requests a second; at
 * 10 s it loses half its workers. The point's limit is GRADIENT (Envoy's
 * gradient controller), AIMD (told that a request over 40 ms failed), then
 * fixed concurrentThresholds too high and too low, in the same run. Run with:
 *   java -cp jvm/sds-native/target/sds-native-0.1.0.jar examples/java/Adaptive.java
 */
public class Adaptive {
    static final long T0 = 1_700_000_000_000L;
    static final int SERVICE_MS = 20;
    static final int SECONDS = 20;

    public static void main(String[] args) {
        System.out.println("limiter               phase  workers  limit(mean of last 5 s)  goodput%  p50_ms  p99_ms  refused%");
        run("GRADIENT", Strategy.builder().adaptiveConcurrency(Algorithm.GRADIENT).build());
        // AIMD sees no latency, only drops: a timeoutThreshold makes slow requests drops.
        run("AIMD, timeout 40 ms", Strategy.builder().adaptiveConcurrency(Algorithm.AIMD).adaptiveMinLimit(1)
                .timeoutThreshold(40).build());
        run("fixed 200 (too high)", Strategy.builder().concurrentThreshold(200).build());
        run("fixed 5 (too low)", Strategy.builder().concurrentThreshold(5).build());
    }

    /** One request in the server: its entry and when it arrived. */
    static final class Job {
        final Entry entry;
        final long arrived;
        long done;

        Job(Entry entry, long arrived) {
            this.entry = entry;
            this.arrived = arrived;
        }
    }

    static void run(String name, Strategy strategy) {
        try (Client client = new Client(4)) {
            client.setStrategy("search", strategy);
            ArrayDeque<Job> queue = new ArrayDeque<>();
            PriorityQueue<Job> running = new PriorityQueue<>((a, b) -> Long.compare(a.done, b.done));
            List<Long> latencies = new ArrayList<>();
            long completed = 0;
            long refused = 0;
            long limitSum = 0;
            long limitSamples = 0;
            for (long ms = 0; ms < SECONDS * 1000L; ms++) {
                long now = T0 + ms;
                int workers = ms < SECONDS * 500L ? 20 : 10;
                // Requests that end now leave, and the queue moves up.
                while (!running.isEmpty() && running.peek().done <= now) {
                    Job j = running.poll();
                    j.entry.exit(now);
                    latencies.add(now - j.arrived);
                    completed++;
                }
                while (running.size() < workers && !queue.isEmpty()) {
                    Job j = queue.poll();
                    j.done = now + SERVICE_MS;
                    running.add(j);
                }
                // Two arrivals a millisecond.
                for (int i = 0; i < 2; i++) {
                    Entry e = client.enter("search", now);
                    if (e.isDowngraded()) {
                        refused++;
                        e.exit(now);
                    } else {
                        Job j = new Job(e, now);
                        if (running.size() < workers) {
                            j.done = now + SERVICE_MS;
                            running.add(j);
                        } else {
                            queue.add(j);
                        }
                    }
                }
                long inPhase = ms % (SECONDS * 500L);
                if (inPhase >= SECONDS * 500L - 5000 && ms % 10 == 0) {
                    Stats s = client.stats("search", now);
                    limitSum += s.adaptiveLimit() > 0 ? s.adaptiveLimit() : strategy.get("concurrentThreshold");
                    limitSamples++;
                }
                if (inPhase == SECONDS * 500L - 1) {
                    long capacity = workers * (SECONDS * 500L) / SERVICE_MS;
                    Collections.sort(latencies);
                    System.out.printf("%-20s  %5d  %7d  %23.1f  %8.1f  %6d  %6d  %8.1f%n", name,
                            ms < SECONDS * 500L ? 1 : 2, workers, (double) limitSum / limitSamples,
                            100.0 * completed / capacity, latencies.get(latencies.size() / 2),
                            latencies.get(latencies.size() * 99 / 100), 100.0 * refused / (2 * SECONDS * 500L));
                    latencies.clear();
                    completed = 0;
                    refused = 0;
                    limitSum = 0;
                    limitSamples = 0;
                }
            }
            // Whatever is still in the server ends now.
            long end = T0 + SECONDS * 1000L;
            running.forEach(j -> j.entry.exit(end));
            queue.forEach(j -> j.entry.exit(end));
        }
    }
}
