import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.SdsException;
import io.sdsnative.Stats;
import io.sdsnative.Strategy;

/**
 * sds-native from Java: a point limited to 5 requests per 10 s window, then
 * a burst of 8 requests, with explicit times so the output is the same on
 * every run. Run with `make demo-java`, or:
 *   java -cp jvm/sds-native/target/sds-native-0.1.0.jar examples/java/Demo.java
 */
public class Demo {
    public static void main(String[] args) {
        long t0 = 1_700_000_000_000L;
        try (Client client = new Client(16)) {
            client.setStrategy("orderService.process",
                    Strategy.fromJson("{\"point\": \"orderService.process\", \"visitThreshold\": 5}"));

            for (int i = 0; i < 8; i++) {
                long now = t0 + i * 100;
                try (Entry entry = client.enter("orderService.process", now)) {
                    String result = entry.isDowngraded() ? "fallback (" + entry.reason() + ")" : processOrder(i);
                    System.out.println("request " + i + ": " + result);
                }
            }

            Stats stats = client.stats("orderService.process", t0 + 1000);
            System.out.println("sliding window: " + stats.visit() + " visits, " + stats.downgrade() + " downgraded");
            System.out.println("next cycle reports: " + client.stats("orderService.process", t0 + 10_000).lastCycleVisitNum()
                    + " visits in the last whole 10 s cycle");

            try {
                client.setStrategy("orderService.process", Strategy.builder().delayTime(500).build());
            } catch (SdsException e) {
                System.out.println("rejected: " + e.getMessage());
            }
        }
    }

    private static String processOrder(int i) {
        return "processed order " + i;
    }
}
