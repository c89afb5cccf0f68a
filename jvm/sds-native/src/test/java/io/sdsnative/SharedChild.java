package io.sdsnative;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The child JVM of {@link SharedClientTest}: opens the shared table
 * {@code args[0]} of {@code args[1]} points and, by {@code args[2]}:
 * <ul>
 * <li>{@code add POINT N NOW_MS}: enters and exits {@code POINT} N times at
 * {@code NOW_MS}, prints {@code admitted A visit V downgrade D} (the point's
 * stats after its own calls);</li>
 * <li>{@code hold POINT N NOW_MS}: enters {@code POINT} N times without
 * exiting, prints {@code held H} (how many passed), then waits for a line on
 * its input (the test kills it before sending one).</li>
 * </ul>
 */
public final class SharedChild {
    private SharedChild() {}

    public static void main(String[] args) throws Exception {
        String point = args[3];
        int n = Integer.parseInt(args[4]);
        long nowMs = Long.parseLong(args[5]);
        try (Client client = Client.openShared(args[0], Integer.parseInt(args[1]))) {
            int admitted = 0;
            List<Entry> held = new ArrayList<>(); // reachable until killed
            for (int i = 0; i < n; i++) {
                Entry e = client.enter(point, nowMs);
                held.add(e);
                admitted += e.isDowngraded() ? 0 : 1;
                if (args[2].equals("add")) {
                    e.exit(nowMs);
                }
            }
            if (args[2].equals("add")) {
                Stats s = client.stats(point, nowMs);
                System.out.println("admitted " + admitted + " visit " + s.visit() + " downgrade " + s.downgrade());
            } else {
                System.out.println("held " + admitted);
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
        }
    }
}
