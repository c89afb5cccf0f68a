import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.Strategy;

/**
 * Warm-up, pacing and the slow-call rate from Java. Pacing runs on the real
 * clock (Client.call sleeps each entry's wait); warm-up and slow calls use
 * explicit times, so their lines are the same on every run. Run with
 * `make demo-java`, or:
 *   java -cp jvm/sds-native/target/sds-native-0.1.0.jar examples/java/Shaping.java
 */
public class Shaping {
    public static void main(String[] args) throws Exception {
        long t0 = 1_700_000_000_000L;
        try (Client client = new Client(16)) {
            // Pacing: 10 a second, a queue of at most 500 ms. A burst at one instant is told its waits.
            client.setStrategy("pace", Strategy.builder().tokenBucketGeneratedTokensInSecond(10)
                    .maxQueueingTimeMs(500).build());
            StringBuilder waits = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                Entry e = client.enter("pace", t0);
                waits.append(e.isDowngraded() ? e.reason().toString() : e.waitMs() + " ms").append(i < 7 ? ", " : "");
                e.exit(t0);
            }
            System.out.println("pacing 10/s, queue 500 ms, 8 requests at once: " + waits);

            // The same on the real clock: call() sleeps the wait before the work.
            client.setStrategy("pace-now", Strategy.builder().tokenBucketGeneratedTokensInSecond(20)
                    .maxQueueingTimeMs(1_000).build());
            long start = System.nanoTime();
            List<Long> ran = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ran.add(client.call("pace-now", () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
            }
            System.out.println("call() at 20/s, the work ran at (ms): " + ran + " (about 0, 50, 100, 150, 200)");

            // Without blocking: callAsync starts the work on a scheduler once the wait has passed.
            ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
            try {
                long asyncStart = System.nanoTime();
                List<CompletableFuture<Long>> later = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    later.add(client.callAsync("pace-now", scheduler, () -> CompletableFuture.completedFuture(
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asyncStart))));
                }
                long returned = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asyncStart);
                List<Long> asyncRan = new ArrayList<>();
                for (CompletableFuture<Long> f : later) {
                    asyncRan.add(f.get());
                }
                System.out.println("callAsync returned after " + (returned < 10 ? "< 10" : returned)
                        + " ms; the work ran at (ms): " + asyncRan + " (50 ms apart)");
            } finally {
                scheduler.shutdown();
            }

            // Warm-up: 10 a second reached over 10 s from a third of it (cold factor 3).
            client.setStrategy("warm", Strategy.builder().tokenBucketGeneratedTokensInSecond(10)
                    .warmUpPeriodSec(10).coldFactor(3).build());
            List<Integer> perSecond = new ArrayList<>();
            for (int s = 0; s < 16; s++) {
                int admitted = 0;
                for (int i = 0; i < 20; i++) {
                    long at = t0 + s * 1_000L + i * 50L;
                    Entry e = client.enter("warm", at);
                    admitted += e.isDowngraded() ? 0 : 1;
                    e.exit(at);
                }
                perSecond.add(admitted);
            }
            System.out.println("warm-up 10/s over 10 s, 20 requests a second, admitted each second: " + perSecond);

            // Slow calls: half of the calls slower than 100 ms, over 3 visits, starts a 10 s delay.
            client.setStrategy("slow", Strategy.builder().timeoutThreshold(100).slowCallRateThreshold(50)
                    .slowCallRateStart(3).delayTime(10_000).build());
            long[][] calls = {{0, 10}, {200, 150}, {400, 150}, {600, 10}, {700, 10}};
            for (long[] c : calls) {
                long at = t0 + c[0];
                Entry e = client.enter("slow", at);
                System.out.println("slow-call rate, request at +" + c[0] + " ms: "
                        + (e.isDowngraded() ? "downgraded (" + e.reason() + ")" : "ran " + c[1] + " ms"));
                e.exit(at + c[1]);
            }
        }
    }
}
