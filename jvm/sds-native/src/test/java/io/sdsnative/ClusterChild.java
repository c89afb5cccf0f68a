package io.sdsnative;

/**
 * The child JVM of {@link ClusterSyncTest}: starts a cluster sync with Redis
 * at {@code args[0]} every 10 ms, waits for a few syncs, and ends its main
 * without closing anything.
 */
public final class ClusterChild {
    private ClusterChild() {}

    public static void main(String[] args) throws Exception {
        Client client = new Client(16);
        ClusterSync cluster = client.connectCluster(ClusterConfig.builder()
                .url(args[0]).points("pay").syncMs(10).build());
        while (cluster.status().syncs() < 5) {
            Thread.sleep(10);
        }
        client.enter("pay").close();
        System.out.println("main ends");
        System.out.flush();
    }
}
