package io.sdsnative.bench;

import io.sdsnative.Client;
import io.sdsnative.ClusterConfig;
import io.sdsnative.ClusterDecision;
import io.sdsnative.ClusterSync;
import io.sdsnative.RedisServer;
import io.sdsnative.Strategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A cluster point against a local point with the same strategy on one client,
 * while the client syncs the cluster point with a redis-server of its own
 * (the tests' {@link RedisServer}) every 100 ms; and one exact-mode decision.
 * Enter + exit read the clock, as users call them.
 */
@State(Scope.Benchmark)
public class ClusterBenchmarks {
    private static final String LOCAL = "orderService.local";
    private static final String CLUSTER = "orderService.cluster";

    private RedisServer redis;
    private Client client;
    private ClusterSync cluster;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        redis = RedisServer.start();
        client = new Client(64);
        // A visit limit and an exception rule, never reached; no concurrency limit.
        Strategy limits = Strategy.builder().visitThreshold(Integer.MAX_VALUE).exceptionThreshold(1_000_000).build();
        client.setStrategy(LOCAL, limits);
        client.setStrategy(CLUSTER, limits);
        cluster = client.connectCluster(ClusterConfig.builder().url(redis.url()).points(CLUSTER).build());
        cluster.syncNow();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        System.out.println();
        System.out.println("cluster sync: " + cluster.status());
        client.close();
        redis.close();
    }

    @Benchmark
    public boolean sdsNativeLocalPointEnterExit() {
        return Benchmarks.enterExit(client, LOCAL, Benchmarks.CLOCK);
    }

    @Benchmark
    public boolean sdsNativeClusterPointEnterExit() {
        return Benchmarks.enterExit(client, CLUSTER, Benchmarks.CLOCK);
    }

    /** Exact mode: one round trip to Redis and its Lua script per decision. */
    @Benchmark
    public boolean sdsNativeClusterEnterExact() {
        ClusterDecision d = cluster.enterExact(CLUSTER);
        return d.isAdmitted();
    }
}
