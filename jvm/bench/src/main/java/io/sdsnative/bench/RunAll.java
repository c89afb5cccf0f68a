package io.sdsnative.bench;

import java.io.File;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every benchmark in one short JMH run (average time in ns, 1 fork,
 * 3 x 1 s warm-up, 5 x 1 s measured, -prof gc) and prints ns/op, bytes/op
 * and the ratios the README quotes. An optional argument is a regex of
 * benchmarks to run.
 */
public final class RunAll {
    private RunAll() {}

    public static void main(String[] args) throws Exception {
        String include = args.length > 0 ? args[0] : "io\\.sdsnative\\.bench\\..*Benchmarks\\..*";
        File logs = new File("build/sentinel-logs");
        Options options = new OptionsBuilder()
                .include(include)
                .mode(Mode.AverageTime)
                .timeUnit(TimeUnit.NANOSECONDS)
                .forks(1)
                .warmupIterations(3)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(5)
                .measurementTime(TimeValue.seconds(1))
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend("-Dcsp.sentinel.log.dir=" + logs.getAbsolutePath(), "-Xms1g", "-Xmx1g")
                .build();
        Collection<RunResult> results = new Runner(options).run();

        Map<String, double[]> table = new LinkedHashMap<>();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            name = name.substring(name.lastIndexOf('.') + 1);
            Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            table.put(name, new double[] {r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreError(),
                alloc == null ? Double.NaN : alloc.getScore()});
        }
        System.out.println();
        System.out.println("| benchmark | ns/op | bytes/op |");
        System.out.println("| --- | ---: | ---: |");
        for (Map.Entry<String, double[]> e : table.entrySet()) {
            double[] v = e.getValue();
            System.out.println(String.format(Locale.ROOT, "| %s | %.1f ± %.1f | %.1f |", e.getKey(), v[0], v[1], v[2]));
        }
        System.out.println();
        ratio(table, "sentinelEntryExit", "sdsNativeEnterExit");
        ratio(table, "sentinelEntryExit", "sdsNativeEnterExitOneClock");
        ratio(table, "resilience4jCircuitBreaker", "sdsNativeEnterExit");
        ratio(table, "resilience4jRateLimiter", "sdsNativeEnterExit");
        ratio(table, "guavaRateLimiterTryAcquire", "sdsNativeEnterExit");
        ratio(table, "sentinelArrayMetricAddPassPass", "compatIncrementAndGet");
        ratio(table, "sentinelArrayMetricAddPassPass", "compatVisitAddAndGet");
        ratio(table, "compatIncrementAndGet", "jniBucketRead");
        ratio(table, "sdsNativeSharedEnterExitNoClock", "sdsNativeEnterExitNoClock");
        ratio(table, "sdsNativeClusterPointEnterExit", "sdsNativeLocalPointEnterExit");
        ratio(table, "sdsNativeClusterEnterExact", "sdsNativeClusterPointEnterExit");
    }

    private static void ratio(Map<String, double[]> table, String peer, String ours) {
        if (table.containsKey(peer) && table.containsKey(ours)) {
            System.out.println(String.format(Locale.ROOT, "%s / %s = %.2f", peer, ours,
                    table.get(peer)[0] / table.get(ours)[0]));
        }
    }
}
