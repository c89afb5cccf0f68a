package io.sdsnative.bench;

import com.alibaba.csp.sentinel.SphU;
import com.alibaba.csp.sentinel.slots.block.BlockException;
import com.alibaba.csp.sentinel.slots.block.RuleConstant;
import com.alibaba.csp.sentinel.slots.block.degrade.DegradeRule;
import com.alibaba.csp.sentinel.slots.block.degrade.DegradeRuleManager;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRule;
import com.alibaba.csp.sentinel.slots.block.flow.FlowRuleManager;
import com.alibaba.csp.sentinel.slots.statistic.metric.ArrayMetric;
import com.didiglobal.sds.client.bean.VisitWrapperValue;
import com.didiglobal.sds.client.counter.PowerfulCycleTimeCounter;
import com.didiglobal.sds.client.counter.SlidingWindowData;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.Strategy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One call of each library's hot path, single-threaded, as its users call
 * it (including its clock). Thresholds are set so that nothing is blocked:
 * this measures the bookkeeping of a passing request.
 */
@State(Scope.Benchmark)
public class Benchmarks {
    private static final String POINT = "orderService.process";
    /** A point without a concurrency limit: its entries hold no permit. */
    private static final String NO_PERMIT_POINT = "orderService.lookup";
    private static final long FIXED_MS = 1_700_000_000_000L;
    /** {@link #enterExit}'s time for "read the clock at enter and at exit". */
    static final long CLOCK = -1;

    private Client client;
    /** A client on a table file (in a fresh temporary folder), with POINT's strategy. */
    private Client shared;
    private Path sharedDir;
    private SlidingWindowData window;
    private PowerfulCycleTimeCounter counter;
    private ArrayMetric sentinelMetric;
    private RateLimiter r4jLimiter;
    private CircuitBreaker r4jBreaker;
    private com.google.common.util.concurrent.RateLimiter guavaLimiter;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        client = new Client(64);
        // A visit limit, a concurrency limit and an exception rule, none reached.
        Strategy limits = Strategy.builder()
                .visitThreshold(Integer.MAX_VALUE)
                .concurrentThreshold(1_000_000)
                .exceptionThreshold(1_000_000)
                .build();
        client.setStrategy(POINT, limits);
        sharedDir = Files.createTempDirectory("sds-bench");
        shared = Client.openShared(sharedDir.resolve("table.sds").toString(), 64);
        shared.setStrategy(POINT, limits);
        client.setStrategy(NO_PERMIT_POINT, Strategy.builder()
                .visitThreshold(Integer.MAX_VALUE)
                .exceptionThreshold(1_000_000)
                .build());
        window = new SlidingWindowData();
        counter = new PowerfulCycleTimeCounter();

        FlowRule flow = new FlowRule(POINT);
        flow.setGrade(RuleConstant.FLOW_GRADE_QPS);
        flow.setCount(1e12);
        FlowRuleManager.loadRules(Collections.singletonList(flow));
        DegradeRule degrade = new DegradeRule(POINT);
        degrade.setGrade(RuleConstant.DEGRADE_GRADE_EXCEPTION_RATIO);
        degrade.setCount(0.9);
        degrade.setTimeWindow(10);
        degrade.setMinRequestAmount(1_000_000);
        DegradeRuleManager.loadRules(Collections.singletonList(degrade));
        sentinelMetric = new ArrayMetric(2, 1000);

        r4jLimiter = RateLimiter.of("bench", RateLimiterConfig.custom()
                .limitForPeriod(Integer.MAX_VALUE)
                .limitRefreshPeriod(Duration.ofSeconds(1))
                .timeoutDuration(Duration.ZERO)
                .build());
        r4jBreaker = CircuitBreaker.ofDefaults("bench");
        guavaLimiter = com.google.common.util.concurrent.RateLimiter.create(1e12);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        client.close();
        shared.close();
        Files.delete(sharedDir.resolve("table.sds"));
        Files.delete(sharedDir);
    }

    /**
     * Enters {@code point} and exits the entry: both at {@code nowMs}, or
     * each reading the clock when it is {@link #CLOCK}. Whether it was
     * downgraded, for JMH to consume.
     */
    static boolean enterExit(Client client, String point, long nowMs) {
        Entry e = nowMs == CLOCK ? client.enter(point) : client.enter(point, nowMs);
        boolean downgraded = e.isDowngraded();
        if (nowMs == CLOCK) {
            e.close();
        } else {
            e.exit(nowMs);
        }
        return downgraded;
    }

    /**
     * The floor: one native call doing the least real work (reading a
     * bucket); the library ships no empty native method.
     */
    @Benchmark
    public long jniBucketRead() {
        return window.getBucketValue(FIXED_MS);
    }

    /** The clock every SDS-style call pays. */
    @Benchmark
    public long clockCurrentTimeMillis() {
        return System.currentTimeMillis();
    }

    /** io.sdsnative: enter + exit, each reading the clock. */
    @Benchmark
    public boolean sdsNativeEnterExit() {
        return enterExit(client, POINT, CLOCK);
    }

    /** io.sdsnative: enter + exit at one time the caller read once. */
    @Benchmark
    public boolean sdsNativeEnterExitOneClock() {
        return enterExit(client, POINT, System.currentTimeMillis());
    }

    /** io.sdsnative: enter + exit at a fixed time: JNI and core only. */
    @Benchmark
    public boolean sdsNativeEnterExitNoClock() {
        return enterExit(client, POINT, FIXED_MS);
    }

    /** As sdsNativeEnterExitNoClock, on a table shared through a file. */
    @Benchmark
    public boolean sdsNativeSharedEnterExitNoClock() {
        return enterExit(shared, POINT, FIXED_MS);
    }

    /**
     * io.sdsnative: enter + exit at a fixed time on a point without a
     * concurrency limit: its entry is not watched for a lost permit.
     */
    @Benchmark
    public boolean sdsNativeEnterExitNoPermitNoClock() {
        return enterExit(client, NO_PERMIT_POINT, FIXED_MS);
    }

    /** The drop-in at a fixed time: JNI and window only. */
    @Benchmark
    public VisitWrapperValue compatIncrementAndGetNoClock() {
        return window.incrementAndGet(FIXED_MS);
    }

    /** The drop-in: SlidingWindowData.incrementAndGet with SDS's clock. */
    @Benchmark
    public VisitWrapperValue compatIncrementAndGet() {
        return window.incrementAndGet(System.currentTimeMillis());
    }

    /** The drop-in: PowerfulCycleTimeCounter.visitAddAndGet with SDS's clock. */
    @Benchmark
    public VisitWrapperValue compatVisitAddAndGet() {
        return counter.visitAddAndGet(System.currentTimeMillis());
    }

    /** Sentinel: SphU.entry + exit with a QPS flow rule and a degrade rule loaded. */
    @Benchmark
    public boolean sentinelEntryExit() {
        try {
            com.alibaba.csp.sentinel.Entry e = SphU.entry(POINT);
            e.exit();
            return true;
        } catch (BlockException blocked) {
            return false;
        }
    }

    /** Sentinel's LeapArray: ArrayMetric addPass + pass (its own cached clock). */
    @Benchmark
    public long sentinelArrayMetricAddPassPass() {
        sentinelMetric.addPass(1);
        return sentinelMetric.pass();
    }

    /** resilience4j RateLimiter.acquirePermission. */
    @Benchmark
    public boolean resilience4jRateLimiter() {
        return r4jLimiter.acquirePermission();
    }

    /** resilience4j CircuitBreaker: tryAcquirePermission + onSuccess. */
    @Benchmark
    public boolean resilience4jCircuitBreaker() {
        boolean permitted = r4jBreaker.tryAcquirePermission();
        if (permitted) {
            r4jBreaker.onSuccess(0, TimeUnit.NANOSECONDS);
        }
        return permitted;
    }

    /** Guava RateLimiter.tryAcquire. */
    @Benchmark
    public boolean guavaRateLimiterTryAcquire() {
        return guavaLimiter.tryAcquire();
    }
}
