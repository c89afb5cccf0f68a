// The Java side of the cross-language test: one JVM on the shared table,
// driven line by line by run.py (protocol in crosslang/README.md). It joins
// for the metrics: `decide`, `stats` and `metrics`.
import io.sdsnative.Client;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.Stats;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public final class Worker {
    // The keyed limit every worker opens beside the table (README's `decide`).
    private static final KeyRule KEY_RULE = KeyRule.fixedWindow(5, 60_000);
    private static final long KEY_CAPACITY = 64;

    public static void main(String[] args) throws Exception {
        String path = args[0];
        try (Client client = Client.openShared(path, Integer.parseInt(args[1]));
             KeyedLimit keys = KeyedLimit.shared(path + ".keys", KEY_RULE, KEY_CAPACITY)) {
            System.out.println("ready");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] words = line.split(" ");
                System.out.println(switch (words[0]) {
                    case "decide" -> {
                        long tries = Long.parseLong(words[2]), nowMs = Long.parseLong(words[3]);
                        int admitted = 0;
                        for (long i = 0; i < tries; i++) {
                            if (keys.decide(words[1], 1, nowMs).admitted()) admitted++;
                        }
                        yield Integer.toString(admitted);
                    }
                    case "stats" -> {
                        Stats s = client.stats(words[1], Long.parseLong(words[2]));
                        yield "[" + s.visit() + ", " + s.exception() + ", " + s.timeout() + ", "
                            + s.downgrade() + ", " + s.concurrent() + "]";
                    }
                    case "metrics" -> json(client.prometheusText(false, Long.parseLong(words[1])));
                    default -> throw new IllegalArgumentException("unknown command " + line);
                });
                System.out.flush();
            }
        }
    }

    /** `text` as a JSON string: the exposition's only escapes are \\, " and newlines. */
    private static String json(String text) {
        return '"' + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + '"';
    }
}
