package io.sdsnative;

/**
 * The child JVM of {@link AdminAgentTest}: starts an agent on the fake console
 * {@code args[0]} for an app it does not know (so the agent logs a warning on
 * every pull, every 10 ms), waits for a few, and ends its main without closing.
 */
public final class AdminChild {
    private AdminChild() {}

    public static void main(String[] args) throws Exception {
        Client client = new Client(16);
        AdminAgent agent = client.connectAdmin(AdminConfig.builder()
                .servers(args[0]).appGroup("group").appName("unknown").ip("10.1.2.3")
                .pullIntervalMs(10).build());
        while (agent.status().pullFailures() < 5) {
            Thread.sleep(10);
        }
        System.out.println("main ends");
        System.out.flush();
    }
}
