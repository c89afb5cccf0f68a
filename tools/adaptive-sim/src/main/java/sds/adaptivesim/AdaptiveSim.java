package sds.adaptivesim;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * The simulation of core/examples/adaptive_sim.rs (same model, same numbers, same
 * splitmix64 draws in the same order), with concurrency-limits' SimpleLimiter and its
 * AIMDLimit, VegasLimit and Gradient2Limit at their defaults, and a FixedLimit. The
 * limiter reads the simulated clock (nanoseconds); a refused request is no sample
 * (SimpleLimiter's rejection), a finished one calls the listener's onSuccess.
 * VegasLimit draws its probe jitter from ThreadLocalRandom, so its rows vary a little
 * between runs. Options as adaptive_sim.rs: --spread-us N, --queue N (a server overload
 * error is the listener's onDropped), --knee N, --seed N.
 */
public final class AdaptiveSim {
    static long seed = 0x5d52026L;
    static int knee = 50;
    static final long MEAN_SERVICE_US = 20_000;
    static final long SPREAD_US = 8_000;
    static final long DROP_AFTER_US = 1_000;
    static final long OVERLOAD_PCT = 150;
    static final long PHASE_US = 30_000_000L;
    static final long SAMPLE_EVERY_US = 10_000;
    static final double BAND_PCT = 10.0;
    static final double SETTLE_SHARE = 0.95;
    static final long SETTLE_BOUND_MS = 5_000;
    static final double GOODPUT_MIN_PCT = 90.0;
    static final long P99_BOUND_US = 2 * MEAN_SERVICE_US;

    static final class SplitMix64 {
        long state;

        SplitMix64(long seed) {
            state = seed;
        }

        long next() {
            state += 0x9e3779b97f4a7c15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            return z ^ (z >>> 31);
        }

        long below(long boundInclusive) {
            return Long.remainderUnsigned(next(), boundInclusive + 1);
        }
    }

    static final class Phase {
        long arrivals;
        long rejected;
        long dropped;
        long completed;
        final List<Long> latencies = new ArrayList<>();
        final List<Integer> limits = new ArrayList<>();
    }

    static final class Request {
        final long arrivalUs;
        final long serviceUs;
        final Limiter.Listener listener;
        boolean dropped;

        Request(long arrivalUs, long serviceUs, Limiter.Listener listener) {
            this.arrivalUs = arrivalUs;
            this.serviceUs = serviceUs;
            this.listener = listener;
        }
    }

    static long spreadUs = SPREAD_US;
    static long queueBound = -1; // unbounded

    static Phase[] run(Limit limit) {
        final long[] clockUs = {0};
        SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder()
                .limit(limit)
                .nanoClock(() -> clockUs[0] * 1000)
                .build();
        SplitMix64 rng = new SplitMix64(seed);
        long capacity0 = knee * 1_000_000L / MEAN_SERVICE_US;
        long rate = capacity0 * OVERLOAD_PCT / 100;
        long maxGap = 2 * 1_000_000L / rate;
        long end = 2 * PHASE_US;

        Phase[] phases = {new Phase(), new Phase()};
        int workers = knee;
        int busy = 0;
        ArrayDeque<Request> queue = new ArrayDeque<>();
        PriorityQueue<long[]> done = new PriorityQueue<>((a, b) ->
                a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        HashMap<Long, Request> running = new HashMap<>();
        long seq = 0;
        long nextArrival = rng.below(maxGap);
        long nextTick = 0;

        while (true) {
            long nextDone = done.isEmpty() ? Long.MAX_VALUE : done.peek()[0];
            long t = Math.min(nextArrival, nextDone);
            if (t >= end) {
                break;
            }
            while (nextTick <= t) {
                phases[(int) (nextTick / PHASE_US)].limits.add(limiter.getLimit());
                nextTick += SAMPLE_EVERY_US;
            }
            if (t >= PHASE_US && workers == knee) {
                workers = knee / 2;
            }
            clockUs[0] = t;
            Phase ph = phases[(int) (t / PHASE_US)];
            if (nextDone <= nextArrival) {
                long id = done.poll()[1];
                Request req = running.remove(id);
                long rtt = t - req.arrivalUs;
                if (req.dropped) {
                    ph.dropped++;
                    req.listener.onDropped();
                    continue;
                }
                busy--;
                ph.completed++;
                ph.latencies.add(rtt);
                req.listener.onSuccess();
                if (busy < workers && !queue.isEmpty()) {
                    Request next = queue.pollFirst();
                    busy++;
                    seq++;
                    done.add(new long[] {t + next.serviceUs, seq});
                    running.put(seq, next);
                }
            } else {
                long serviceUs = MEAN_SERVICE_US - spreadUs / 2 + rng.below(spreadUs);
                nextArrival = t + rng.below(maxGap);
                ph.arrivals++;
                Optional<Limiter.Listener> listener = limiter.acquire(null);
                if (listener.isEmpty()) {
                    ph.rejected++;
                    continue;
                }
                Request req = new Request(t, serviceUs, listener.get());
                if (busy < workers) {
                    busy++;
                    seq++;
                    done.add(new long[] {t + serviceUs, seq});
                    running.put(seq, req);
                } else if (queueBound < 0 || queue.size() < queueBound) {
                    queue.addLast(req);
                } else {
                    req.dropped = true;
                    seq++;
                    done.add(new long[] {t + DROP_AFTER_US, seq});
                    running.put(seq, req);
                }
            }
        }
        return phases;
    }

    static long percentile(long[] sorted, long pct) {
        if (sorted.length == 0) {
            return 0;
        }
        long rank = Math.max(1, (sorted.length * pct + 99) / 100);
        return sorted[(int) rank - 1];
    }

    /** As settle_tick in adaptive_sim.rs. */
    static int settleTick(List<Integer> limits, double lo, double hi) {
        int n = limits.size();
        boolean[] inside = new boolean[n];
        for (int i = 0; i < n; i++) {
            int l = limits.get(i);
            inside[i] = l >= lo && l <= hi;
        }
        int[] suffixIn = new int[n + 1];
        for (int i = n - 1; i >= 0; i--) {
            suffixIn[i] = suffixIn[i + 1] + (inside[i] ? 1 : 0);
        }
        for (int i = 0; i < n; i++) {
            if (inside[i] && suffixIn[i] >= SETTLE_SHARE * (n - i)) {
                return i;
            }
        }
        return -1;
    }

    static void report(String name, int phase, Phase p) {
        int phaseKnee = phase == 0 ? knee : knee / 2;
        double capacity = phaseKnee * (double) PHASE_US / MEAN_SERVICE_US;
        double lo = phaseKnee * (1 - BAND_PCT / 100);
        double hi = phaseKnee * (1 + BAND_PCT / 100);
        int n = p.limits.size();
        int settled = settleTick(p.limits, lo, hi);
        int from = settled >= 0 ? settled : n / 2;
        double sum = 0;
        for (int i = from; i < n; i++) {
            sum += p.limits.get(i);
        }
        double mean = sum / Math.max(1, n - from);
        int lastTicks = (int) (10_000_000L / SAMPLE_EVERY_US);
        double own = 0;
        for (int i = n - lastTicks; i < n; i++) {
            own += p.limits.get(i);
        }
        own /= lastTicks;
        int ownTick = settleTick(p.limits, own * (1 - BAND_PCT / 100), own * (1 + BAND_PCT / 100));
        String ownSettle = ownTick >= 0 ? Long.toString(ownTick * SAMPLE_EVERY_US / 1000) : "never";
        double goodput = 100.0 * p.completed / capacity;
        long[] lat = p.latencies.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(lat);
        long p50 = percentile(lat, 50);
        long p99 = percentile(lat, 99);
        double rejected = 100.0 * p.rejected / Math.max(1, p.arrivals);
        double dropped = 100.0 * p.dropped / Math.max(1, p.arrivals);
        Long settleMs = settled >= 0 ? settled * SAMPLE_EVERY_US / 1000 : null;
        boolean okSettle = settleMs != null && settleMs <= SETTLE_BOUND_MS;
        boolean okMean = mean >= lo && mean <= hi;
        boolean okGoodput = goodput >= GOODPUT_MIN_PCT;
        boolean okP99 = p99 <= P99_BOUND_US;
        StringBuilder why = new StringBuilder();
        String[] names = {"settle", "limit", "goodput", "p99"};
        boolean[] oks = {okSettle, okMean, okGoodput, okP99};
        for (int i = 0; i < 4; i++) {
            if (!oks[i]) {
                why.append(why.length() == 0 ? " " : ",").append(names[i]);
            }
        }
        boolean pass = okSettle && okMean && okGoodput && okP99;
        System.out.printf("%-20s %5d %4d %9s %7.1f %8s %7.1f %8.1f %7.1f %7.1f %6.1f %6.1f  %s%s%n",
                name, phase + 1, phaseKnee, settleMs == null ? "never" : settleMs.toString(), mean, ownSettle, own,
                goodput, p50 / 1000.0, p99 / 1000.0, rejected, dropped, pass ? "PASS" : "FAIL", why);
    }

    public static void main(String[] args) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            long v = Long.parseLong(args[i + 1]);
            switch (args[i]) {
                case "--spread-us" -> spreadUs = v;
                case "--queue" -> queueBound = v;
                case "--knee" -> knee = (int) v;
                case "--seed" -> seed = v;
                default -> throw new IllegalArgumentException("usage: [--spread-us N] [--queue N] [--knee N] [--seed N]");
            }
        }
        System.out.printf("concurrency-limits 0.5.4, the same simulation: knee %d then %d at %d s, service U[%d,%d] µs,"
                + " server queue %s, seed %#x%n", knee, knee / 2, PHASE_US / 1_000_000, MEAN_SERVICE_US - spreadUs / 2,
                MEAN_SERVICE_US - spreadUs / 2 + spreadUs, queueBound < 0 ? "unbounded" : "<= " + queueBound, seed);
        System.out.printf("%-20s %5s %4s %9s %7s %8s %7s %8s %7s %7s %6s %6s  verdict%n",
                "limiter", "phase", "knee", "settle_ms", "limit", "eq_ms", "eq", "goodput%", "p50_ms", "p99_ms",
                "rej%", "drop%");
        Object[][] rows = {
            {"peer AIMD", AIMDLimit.newBuilder().build()},
            {"peer VEGAS", VegasLimit.newDefault()},
            {"peer GRADIENT2", Gradient2Limit.newDefault()},
            {"peer fixed " + 4 * knee + " (4K)", FixedLimit.of(4 * knee)},
            {"peer fixed " + knee / 4 + " (K/4)", FixedLimit.of(knee / 4)},
        };
        for (Object[] row : rows) {
            Phase[] phases = run((Limit) row[1]);
            for (int i = 0; i < 2; i++) {
                report((String) row[0], i, phases[i]);
            }
        }
    }
}
