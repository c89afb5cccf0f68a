package sds.shaping;

import com.alibaba.csp.sentinel.node.Node;
import com.alibaba.csp.sentinel.node.StatisticNode;
import com.alibaba.csp.sentinel.slots.block.flow.TrafficShapingController;
import com.alibaba.csp.sentinel.slots.block.flow.controller.ThrottlingController;
import com.alibaba.csp.sentinel.slots.block.flow.controller.WarmUpController;
import com.alibaba.csp.sentinel.slots.block.flow.controller.WarmUpRateLimiterController;
import com.google.common.util.concurrent.GuavaPeer;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Drives the peers' own classes (sentinel-core's ThrottlingController, WarmUpController and
 * WarmUpRateLimiterController; Guava's RateLimiter) through request sequences on a controlled clock
 * and prints, as one JSON document on stdout, the conformance scenarios they yield and the
 * markdown tables of the Guava sequences compared with the Sentinel semantics SDS follows, into the
 * file named by its argument. run.sh formats, writes or checks them.
 */
public final class Peers {
    /** The largest maxQueueingTimeMs SDS accepts: stands for "wait as long as it takes". */
    static final int MAX_QUEUE = 65535;

    record Step(long at, int repeat) {}

    record Outcome(boolean pass, long waitNs) {}

    interface Peer {
        Outcome decide(long at);
    }

    /**
     * A Sentinel controller fed with SDS's counts: passQps is the number admitted in the calendar
     * second floor(at / 1000) so far, previousPassQps the number admitted in the second before.
     */
    static final class SentinelPeer implements Peer {
        private final TrafficShapingController controller;
        private final Map<Long, Long> admitted = new HashMap<>();

        SentinelPeer(TrafficShapingController controller) {
            this.controller = controller;
        }

        @Override
        public Outcome decide(long at) {
            long second = Math.floorDiv(at, 1000);
            long pass = admitted.getOrDefault(second, 0L);
            long previous = admitted.getOrDefault(second - 1, 0L);
            Hooks.at(at);
            boolean ok = controller.canPass(node(pass, previous), 1);
            if (ok) {
                admitted.merge(second, 1L, Long::sum);
            }
            return new Outcome(ok, ok ? Hooks.sleptNs() : 0);
        }
    }

    /** A Node that answers only passQps and previousPassQps (what the controllers read). */
    static Node node(long passQps, long previousPassQps) {
        return (Node) Proxy.newProxyInstance(Node.class.getClassLoader(), new Class<?>[] {Node.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "passQps" -> (double) passQps;
                    case "previousPassQps" -> (double) previousPassQps;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    static long ceilMs(long ns) {
        return Math.floorDiv(ns + 999_999, 1_000_000);
    }

    static List<Step> steps(long... atRepeat) {
        List<Step> out = new ArrayList<>();
        for (int i = 0; i < atRepeat.length; i += 2) {
            out.add(new Step(atRepeat[i], (int) atRepeat[i + 1]));
        }
        return out;
    }

    /** One request a step at each time. */
    static List<Step> singles(long... ats) {
        List<Step> out = new ArrayList<>();
        for (long at : ats) {
            out.add(new Step(at, 1));
        }
        return out;
    }

    /** `repeat` requests at the start of each second from `fromMs` to `toMs` (inclusive). */
    static List<Step> everySecond(long fromMs, long toMs, int repeat) {
        List<Step> out = new ArrayList<>();
        for (long at = fromMs; at <= toMs; at += 1000) {
            out.add(new Step(at, repeat));
        }
        return out;
    }

    @SafeVarargs
    static List<Step> concat(List<Step>... parts) {
        List<Step> out = new ArrayList<>();
        for (List<Step> p : parts) {
            out.addAll(p);
        }
        return out;
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    // ---- Sentinel-derived scenarios ----

    /**
     * A shaping rule twice: as SDS's strategy and as the Sentinel controller that defines it, made from the
     * same numbers; and whether its scenarios state each request's wait (the pacing rules: waits are
     * their verdict).
     */
    record Shaping(Map<String, Object> strategy, Supplier<Peer> peer, boolean waits) {}

    static Shaping pacing(int rate, int maxQueueingTimeMs) {
        return new Shaping(map("tokenBucketGeneratedTokensInSecond", rate, "maxQueueingTimeMs", maxQueueingTimeMs),
                () -> new SentinelPeer(new ThrottlingController(maxQueueingTimeMs, rate)), true);
    }

    static Shaping warmUp(int rate, int periodSec, int coldFactor) {
        return new Shaping(map("tokenBucketGeneratedTokensInSecond", rate, "warmUpPeriodSec", periodSec,
                "coldFactor", coldFactor), () -> new SentinelPeer(new WarmUpController(rate, periodSec, coldFactor)),
                false);
    }

    static Shaping warmUpPace(int rate, int periodSec, int coldFactor, int maxQueueingTimeMs) {
        return new Shaping(map("tokenBucketGeneratedTokensInSecond", rate, "warmUpPeriodSec", periodSec,
                "coldFactor", coldFactor, "maxQueueingTimeMs", maxQueueingTimeMs),
                () -> new SentinelPeer(new WarmUpRateLimiterController(rate, periodSec, maxQueueingTimeMs, coldFactor)),
                true);
    }

    /** Runs the steps on a fresh peer and writes them in the conformance format. */
    static Map<String, Object> scenario(String name, String description, Shaping shaping, List<Step> steps) {
        Peer peer = shaping.peer().get();
        List<Object> out = new ArrayList<>();
        for (Step s : steps) {
            int passes = 0;
            List<Object> waits = new ArrayList<>();
            for (int i = 0; i < s.repeat(); i++) {
                Outcome o = peer.decide(s.at());
                if (o.pass()) {
                    passes++;
                }
                waits.add(ceilMs(o.waitNs()));
            }
            Map<String, Object> step = map("at", s.at(), "op", "enter");
            if (s.repeat() == 1) {
                step.put("expect", passes == 1 ? "pass" : "TOKEN_BUCKET");
                if (shaping.waits()) {
                    step.put("waitMs", waits.get(0));
                }
            } else {
                step.put("repeat", s.repeat());
                Map<String, Object> tally = new LinkedHashMap<>();
                if (passes > 0) {
                    tally.put("pass", passes);
                }
                if (passes < s.repeat()) {
                    tally.put("TOKEN_BUCKET", s.repeat() - passes);
                }
                step.put("expect", tally);
                if (shaping.waits()) {
                    step.put("waitMs", waits);
                }
            }
            out.add(step);
        }
        return map("name", name, "description", description, "strategy", shaping.strategy(), "steps", out);
    }

    static final String SENTINEL = "sentinel-core " + versionOf(ThrottlingController.class);
    static final String GUAVA = "guava " + versionOf(com.google.common.util.concurrent.RateLimiter.class);

    static String versionOf(Class<?> c) {
        String path = c.getProtectionDomain().getCodeSource().getLocation().getPath();
        String jar = path.substring(path.lastIndexOf('/') + 1);
        return jar.replaceFirst("^[a-z-]+-(?=\\d)", "").replaceFirst("\\.jar$", "");
    }

    static String from(String what) {
        return " Generated by tools/shaping-peers from " + SENTINEL + "'s " + what
                + " with SDS's counts (see conformance/shaping-peers.md).";
    }

    static void sentinelScenarios(Map<String, Object> files) {
        files.put("shaping-pace-10-burst.json", scenario(
                "pacing at 10/s: a burst of 10R, the queue limit, an idle gap",
                "Rate 10 (cost 100 ms), maxQueueingTimeMs 500: of 100 requests at once the first passes at once and"
                        + " the next five wait 100..500 ms; the 7th would wait 600 > 500 and is refused, as are the rest"
                        + " (a refusal does not move the schedule). At 1250 the last admitted is due at 1500: 350 and"
                        + " 450 ms pass, 550 is refused. After an idle gap the first request passes at once again."
                        + from("ThrottlingController (millisecond mode: 1000 % 10 == 0)"),
                pacing(10, 500),
                steps(1000, 100, 1250, 1, 1250, 1, 1250, 1, 1600, 1, 5000, 1, 5000, 3, 5100, 1, 5350, 1)));
        files.put("shaping-pace-3.json", scenario(
                "pacing at 3/s: a cost of 333 333 333 ns, waits rounded up",
                "Rate 3 does not divide 1000: the cost is round(1e9 / 3) ns, kept in ns. A burst of 6 at 1000 waits"
                        + " 0, 333.33.. (334), 666.67.. (667) and 999.999999 ms (1000: not above maxQueueingTimeMs 1000,"
                        + " admitted); the 5th would wait 1333 ms and is refused. The ns remainders carry: at 1400 the"
                        + " wait is 933.33.. ms (934)." + from("ThrottlingController (nanosecond mode)"),
                pacing(3, 1000),
                steps(1000, 6, 1400, 1, 3700, 1, 3700, 1, 4100, 2, 4300, 1)));
        files.put("shaping-pace-7.json", scenario(
                "pacing at 7/s: offered 10/s, then exactly on the schedule",
                "Rate 7 (cost 142 857 143 ns), maxQueueingTimeMs 300: a burst of 5, then one request every 100 ms"
                        + " (faster than the rate): the queue grows until a wait would pass 300 ms, and those are"
                        + " refused. After an idle gap, requests at 143 ms spacing find their slot free (wait 0);"
                        + " one early by 71.4 ms waits 72." + from("ThrottlingController (nanosecond mode)"),
                pacing(7, 300),
                concat(steps(1000, 5), singles(1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, 2000),
                        singles(4000, 4143, 4286, 4429, 4500, 4500))));
        files.put("shaping-pace-zero-queue.json", scenario(
                "pacing at 5/s with maxQueueingTimeMs 0: admitted only on the schedule",
                "maxQueueingTimeMs 0 never waits: a request passes only when its slot (last admitted + 200 ms) has"
                        + " come, otherwise it is refused at once. 1199 is 1 ms early; 1200 is on time."
                        + from("ThrottlingController"),
                pacing(5, 0),
                concat(singles(1000, 1000, 1100, 1199, 1200, 1399, 1400), steps(2000, 3))));
        files.put("shaping-pace-100-edges.json", scenario(
                "pacing at 100/s: waits at and past maxQueueingTimeMs 20",
                "Cost 10 ms: a burst of 5 waits 0, 10, 20 (at the limit: admitted), then 30 > 20 is refused; at"
                        + " 1005 the next slot is 1030 (25 > 20, refused); at 1010 it is 20 (admitted)."
                        + from("ThrottlingController (millisecond mode)"),
                pacing(100, 20),
                singlesAnd(steps(1000, 5), 1005, 1010, 1010, 1100)));
        files.put("shaping-pace-2000.json", scenario(
                "pacing at 2000/s: sub-millisecond costs, waits rounded up",
                "Rate 2000 (count / 1000 > 1: nanosecond mode, cost 500 000 ns), maxQueueingTimeMs 2: a burst of"
                        + " 10 waits 0, 0.5, 1, 1.5, 2 ms (reported 0, 1, 1, 2, 2) and the 6th (2.5 ms) is refused."
                        + from("ThrottlingController (nanosecond mode)"),
                pacing(2000, 2),
                steps(1000, 10, 1001, 3, 1010, 1)));

        files.put("shaping-pace-zero-rate.json", scenario(
                "pacing at rate 0 refuses everything",
                "ThrottlingControllerTest.testThrottlingControllerZeroThreshold: a count of 0 refuses every request"
                        + " at once (the peer returns before computing a cost, which would be infinite), whatever"
                        + " maxQueueingTimeMs and however long the point has been idle." + from("ThrottlingController"),
                pacing(0, 500), steps(1000, 1, 1000, 2, 60000, 1)));

        // Warm-up, rejecting (WarmUpController).
        files.put("shaping-warmup-10-10-3.json", scenario(
                "warm-up, reject: rate 10, 10 s, cold factor 3, under constant overload",
                "warningToken = (int)(10 * 10) / (3 - 1) = 50, maxToken = 50 + (int)(2 * 10 * 10 / (1 + 3)) = 100,"
                        + " slope = (3 - 1) / 10 / 50. Cold (stored 100): the allowed rate is"
                        + " nextUp(1 / (50 * slope + 1 / 10)) = 3.33.., so 3 pass a second. Each second the stored"
                        + " tokens lose the previous second's admitted count (no refill while stored > 50 and that"
                        + " count >= (int)10 / 3), so the rate climbs to 10. After 20 s of idleness the bucket refills"
                        + " (10 tokens a second) and the point is cold again." + from("WarmUpController"),
                warmUp(10, 10, 3),
                concat(everySecond(1000, 20000, 20), everySecond(41000, 44000, 20))));
        files.put("shaping-warmup-20-5-3.json", scenario(
                "warm-up, reject: rate 20, 5 s, cold factor 3, with mid-second requests",
                "warningToken = (int)(20 * 5) / 2 = 50, maxToken = 50 + (int)(200 / 4) = 100. Cold rate 6.67 (6 a"
                        + " second). Requests at the start and in the middle of each second: the limit is on the"
                        + " admitted count of the calendar second." + from("WarmUpController"),
                warmUp(20, 5, 3),
                interleave(everySecond(1000, 12000, 4), everySecond(1500, 12500, 30))));
        files.put("shaping-warmup-100-10-5.json", scenario(
                "warm-up, reject: rate 100, 10 s, cold factor 5",
                "warningToken = (int)(100 * 10) / 4 = 250, maxToken = 250 + (int)(2000 / 6) = 583, slope ="
                        + " 4 / 100 / 333. Cold rate nextUp(1 / (333 * slope + 0.01)) = 20.0.. (20 a second);"
                        + " 150 offered each second." + from("WarmUpController"),
                warmUp(100, 10, 5), everySecond(1000, 16000, 150)));
        files.put("shaping-warmup-stays-cold.json", scenario(
                "warm-up, reject: traffic below rate / coldFactor keeps the point cold",
                "Rate 10, 5 s, cold factor 5: warningToken 12, maxToken 12 + (int)(100 / 6) = 28. While the previous"
                        + " second admitted fewer than (int)10 / 5 = 2, the bucket refills and stays full: the cold"
                        + " rate nextUp(1 / (16 * slope + 0.1)) = 2.0.. lets 2 a second through. One request a second"
                        + " for 5 s keeps it cold; then bursts warm it." + from("WarmUpController"),
                warmUp(10, 5, 5),
                concat(everySecond(1000, 5000, 1), everySecond(6000, 16000, 15))));

        // Warm-up, pacing (WarmUpRateLimiterController).
        files.put("shaping-warmup-pace-10-10-3.json", scenario(
                "warm-up with pacing: rate 10, 10 s, cold factor 3, maxQueueingTimeMs 1000",
                "Cold, the cost is round(1000 / nextUp(1 / (50 * slope + 0.1))) = 300 ms; it falls towards 100 ms"
                        + " as the previous seconds' admitted counts drain the stored tokens (costs in whole ms, as"
                        + " the peer rounds them). 10 requests offered at the start of each second."
                        + from("WarmUpRateLimiterController"),
                warmUpPace(10, 10, 3, 1000), everySecond(1000, 18000, 10)));
        files.put("shaping-warmup-pace-20-5-5.json", scenario(
                "warm-up with pacing: rate 20, 5 s, cold factor 5, maxQueueingTimeMs 1000",
                "warningToken = (int)(20 * 5) / 4 = 25, maxToken = 25 + (int)(200 / 6) = 58, slope = 4 / 20 / 33."
                        + " Cold cost round(1000 / nextUp(1 / (33 * slope + 0.05))) = 250 ms, warm 50 ms; 25 offered at"
                        + " the start of each second. 5 a second pass while cold: not below (int)20 / 5 = 4, so the"
                        + " bucket drains and the point warms." + from("WarmUpRateLimiterController"),
                warmUpPace(20, 5, 5, 1000), everySecond(1000, 12000, 25)));
        files.put("shaping-warmup-pace-stays-cold.json", scenario(
                "warm-up with pacing: a queue limit that keeps the point cold",
                "Rate 20, 5 s, cold factor 5, maxQueueingTimeMs 500: cold, the cost is 250 ms, so at most 3 of a"
                        + " burst pass (waits 0, 250, 500). 3 is below (int)20 / 5 = 4, so each second's refill"
                        + " (20 tokens a second) tops the bucket up again: stored stays at 58 - 3 = 55 and the cost"
                        + " at round(1000 * (30 * slope + 0.05)) = 232 ms. The point never warms under this load,"
                        + " as in the peer." + from("WarmUpRateLimiterController"),
                warmUpPace(20, 5, 5, 500), everySecond(1000, 8000, 25)));
        files.put("shaping-warmup-at-warning-token.json", scenario(
                "warm-up, reject: stored tokens exactly at the warning token stop refilling",
                "Rate 10, 10 s, cold factor 3 (warningToken 50). Warmed by 20 s of overload the stored tokens settle"
                        + " at 40; then 1, 9 and 1 admitted in three seconds bring them to 40 + 10 - 1 = 49, then"
                        + " 49 + 10 - 9 = 50. The peer's refill has one branch below the warning token and one above"
                        + " it (the latter only while the previous second admitted fewer than rate / coldFactor), and"
                        + " none at it: stored stays at 50 through 25 s of idleness, where any other value would"
                        + " refill to maxToken (cold, 3 a second). At 50 the allowed rate is nextUp(1 / (0 * slope +"
                        + " 0.1)) = 10.000000000000002: the full 10 a second at once, then stored drops to 40."
                        + from("WarmUpController"),
                warmUp(10, 10, 3),
                concat(everySecond(1000, 15000, 20), steps(16000, 1, 17000, 9, 18000, 1, 20000, 1),
                        everySecond(45000, 47000, 20))));
    }

    static List<Step> singlesAnd(List<Step> first, long... ats) {
        return concat(first, singles(ats));
    }

    static List<Step> interleave(List<Step> a, List<Step> b) {
        List<Step> out = new ArrayList<>();
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            if (i < a.size()) {
                out.add(a.get(i));
            }
            if (i < b.size()) {
                out.add(b.get(i));
            }
        }
        return out;
    }

    // ---- Guava's published sequences ----

    /** An op of a Guava test: acquire(permits), tryAcquire(timeoutMs) or sleep(ms). */
    record Op(char kind, long arg) {}

    static Op a(int permits) {
        return new Op('A', permits);
    }

    static Op t(long timeoutMs) {
        return new Op('T', timeoutMs);
    }

    static Op s(long ms) {
        return new Op('S', ms);
    }

    static List<Op> ops(Object... parts) {
        List<Op> out = new ArrayList<>();
        for (Object p : parts) {
            if (p instanceof Op o) {
                out.add(o);
            } else {
                @SuppressWarnings("unchecked") List<Op> l = (List<Op>) p;
                out.addAll(l);
            }
        }
        return out;
    }

    static List<Op> times(int n, Op op) {
        List<Op> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(op);
        }
        return out;
    }

    /** Scenario time of Guava's time 0. */
    static final long GUAVA_ORIGIN_MS = 10_000;

    /** One op of a Guava sequence: Guava's time, verdict and wait; our time (scenario ms) and outcome. */
    record GuavaRow(String op, long guavaMicros, boolean guavaPass, long guavaWaitMicros, long ourAt, Outcome ours) {}

    /**
     * Runs Guava's sequence on Guava (its clock moves on by each wait and sleep, as in RateLimiterTest)
     * and, in a closed loop of its own, on the Sentinel controller SDS follows: each request arrives
     * when the previous one's wait is over (scenario ms; a wait rounded up to whole ms), each sleep
     * moves that clock on. A weighted acquire has no counterpart in SDS (ours null, clock unmoved).
     */
    static List<GuavaRow> runGuava(GuavaPeer guava, Peer ours, List<Op> ops) {
        List<GuavaRow> rows = new ArrayList<>();
        long ourAt = GUAVA_ORIGIN_MS;
        for (Op op : ops) {
            long now = guava.nowMicros();
            switch (op.kind()) {
                case 'S' -> {
                    guava.sleepMillis(op.arg());
                    rows.add(new GuavaRow("sleep " + op.arg() + " ms", now, true, op.arg() * 1000, ourAt, null));
                    ourAt += op.arg();
                }
                case 'A' -> {
                    long w = guava.acquire((int) op.arg());
                    Outcome o = op.arg() == 1 ? ours.decide(ourAt) : null;
                    rows.add(new GuavaRow(op.arg() == 1 ? "acquire()" : "acquire(" + op.arg() + ")", now, true, w,
                            ourAt, o));
                    if (o != null) {
                        ourAt += ceilMs(o.waitNs());
                    }
                }
                default -> {
                    long[] r = guava.tryAcquire(op.arg());
                    Outcome o = ours.decide(ourAt);
                    rows.add(new GuavaRow("tryAcquire(" + op.arg() + " ms)", now, r[0] == 1, r[1], ourAt, o));
                    ourAt += ceilMs(o.waitNs());
                }
            }
        }
        return rows;
    }

    static boolean differs(GuavaRow r) {
        return r.ours() == null || r.ours().pass() != r.guavaPass()
                || Math.abs(r.ours().waitNs() / 1000 - r.guavaWaitMicros()) > 1000
                || Math.abs((r.ourAt() - GUAVA_ORIGIN_MS) * 1000 - r.guavaMicros()) > 1000;
    }

    /** Whether every request comes at the same time (within 1 ms) with the same verdict and wait. */
    static boolean same(List<GuavaRow> rows) {
        for (GuavaRow r : rows) {
            if (!r.op().startsWith("sleep") && differs(r)) {
                return false;
            }
        }
        return true;
    }

    static String table(List<GuavaRow> rows) {
        StringBuilder b = new StringBuilder();
        b.append("| # | op | Guava: time (ms) | Guava: result | ours: `at` | ours: result |\n");
        b.append("| --- | --- | --- | --- | --- | --- |\n");
        int i = 0;
        for (GuavaRow r : rows) {
            i++;
            String time = String.format(Locale.ROOT, "%.3f", r.guavaMicros() / 1000.0);
            if (r.op().startsWith("sleep")) {
                b.append("| ").append(i).append(" | ").append(r.op()).append(" | ").append(time).append(" | | ")
                        .append(r.ourAt()).append(" | |\n");
                continue;
            }
            String guava = r.guavaPass()
                    ? String.format(Locale.ROOT, "wait %.3f", r.guavaWaitMicros() / 1000.0)
                    : "refused";
            String ours = r.ours() == null ? "n/a (no weights)"
                    : r.ours().pass() ? "wait " + ceilMs(r.ours().waitNs()) : "refused";
            b.append("| ").append(i).append(" | ").append(r.op()).append(" | ").append(time).append(" | ")
                    .append(guava).append(" | ").append(r.ourAt()).append(" | ")
                    .append(differs(r) ? "**" + ours + "**" : ours).append(" |\n");
        }
        return b.toString();
    }

    record GuavaCase(String test, String file, String why, Supplier<GuavaPeer> guava, Shaping ours, List<Op> ops) {}

    static void guavaCases(Map<String, Object> files, StringBuilder md) {
        List<GuavaCase> cases = List.of(
                new GuavaCase("testSimple", "shaping-guava-simple.json",
                        "create(5.0); three acquire(): R0.00, R0.20, R0.20",
                        () -> GuavaPeer.bursty(5), pacing(5, MAX_QUEUE),
                        ops(a(1), a(1), a(1))),
                new GuavaCase("testSimpleWithWait", "shaping-guava-simple-with-wait.json",
                        "create(5.0); acquire, sleep 200 ms, acquire, acquire: R0.00, U0.20, R0.00, R0.20",
                        () -> GuavaPeer.bursty(5), pacing(5, MAX_QUEUE),
                        ops(a(1), s(200), a(1), a(1))),
                new GuavaCase("testTryAcquire_noWaitAllowed", "shaping-guava-try-acquire-no-wait.json",
                        "create(5.0); tryAcquire(0 s) three times, sleep 100 ms, once more: true, false, false, false"
                                + " (maxQueueingTimeMs 0)",
                        () -> GuavaPeer.bursty(5), pacing(5, 0),
                        ops(t(0), t(0), t(0), s(100), t(0))),
                new GuavaCase("testSimpleAcquireEarliestAvailableIsInPast", null,
                        "create(5.0); acquire, sleep 400 ms, three acquire: 0, 0, 0, 0.2 s. Guava stores the idle"
                                + " 200 ms beyond the next slot as one permit (SmoothBursty keeps up to 1 s of them);"
                                + " Sentinel's pacing keeps none, so its third request waits 200 ms.",
                        () -> GuavaPeer.bursty(5), pacing(5, MAX_QUEUE),
                        ops(a(1), s(400), a(1), a(1), a(1))),
                new GuavaCase("testOneSecondBurst", null,
                        "create(5.0); sleep 2 s; acquire(1), acquire(1), acquire(3), acquire(1), acquire(): a burst of"
                                + " 5 permits from 1 s of stored permits, then R0.20. SDS has no stored permits and no"
                                + " weighted acquire.",
                        () -> GuavaPeer.bursty(5), pacing(5, MAX_QUEUE),
                        ops(s(1000), s(1000), a(1), a(1), a(3), a(1), a(1))),
                new GuavaCase("testWarmUp", null,
                        "create(2.0, 4000 ms, coldFactor 3.0) (SmoothWarmingUp): Guava's wait is the integral of its"
                                + " interval over the permits taken (a trapezoid from 1.5 s down to 0.5 s); Sentinel's"
                                + " stored tokens only change once a second, from the previous second's count, so its cost"
                                + " stays at the cold 1.5 s for a whole second and falls in steps. Ours is"
                                + " WarmUpRateLimiterController(2, 4 s, maxQueueingTimeMs 65535, 3).",
                        () -> GuavaPeer.warmingUp(2, 4000, 3.0), warmUpPace(2, 4, 3, MAX_QUEUE),
                        ops(times(8, a(1)), s(500), s(4000), times(8, a(1)), s(500), s(2000), times(8, a(1)))),
                new GuavaCase("testWarmUpWithColdFactor", null,
                        "create(5.0, 4000 ms, coldFactor 10.0): the same model, colder. Ours:"
                                + " WarmUpRateLimiterController(5, 4 s, 65535, 10).",
                        () -> GuavaPeer.warmingUp(5, 4000, 10.0), warmUpPace(5, 4, 10, MAX_QUEUE),
                        ops(times(8, a(1)), s(200), s(4000), times(8, a(1)), s(200), s(1000), times(8, a(1)))));
        md.append("Guava ").append(versionOf(com.google.common.util.concurrent.RateLimiter.class))
                .append(" and ").append(SENTINEL).append(", run by tools/shaping-peers (do not edit by hand: ")
                .append("`tools/shaping-peers/run.sh --write`). Guava's time 0 is the scenario's ")
                .append(GUAVA_ORIGIN_MS).append(" ms. Each side runs the sequence in its own closed loop, as")
                .append(" Guava's test does: a request comes when the previous one's wait is over, and a sleep moves")
                .append(" the clock on. A bold result differs from Guava's by more than 1 ms (time or wait) or in")
                .append(" its verdict.\n");
        for (GuavaCase c : cases) {
            List<GuavaRow> rows = runGuava(c.guava().get(), c.ours().peer().get(), c.ops());
            boolean same = same(rows);
            md.append("\n#### RateLimiterTest.").append(c.test()).append(": ")
                    .append(same ? "same within 1 ms" : "not followed").append("\n\n");
            md.append(c.why()).append(same && c.file() != null ? " Scenario: `" + c.file() + "`." : "").append("\n\n");
            md.append(table(rows));
            if (same && c.file() != null) {
                List<Step> steps = new ArrayList<>();
                for (GuavaRow r : rows) {
                    if (!r.op().startsWith("sleep")) {
                        steps.add(new Step(r.ourAt(), 1));
                    }
                }
                files.put(c.file(), scenario("Guava RateLimiterTest." + c.test(),
                        "Guava's published sequence " + c.why() + ", at the times Guava's clock reaches (its time 0"
                                + " is " + GUAVA_ORIGIN_MS + "). Guava " + versionOf(com.google.common.util.concurrent.RateLimiter.class)
                                + " and " + SENTINEL + "'s ThrottlingController agree within 1 ms."
                                + " Generated by tools/shaping-peers (see conformance/shaping-peers.md).",
                        c.ours(), steps));
            } else if (same) {
                throw new IllegalStateException(c.test() + " now agrees: give it a scenario file");
            } else if (c.file() != null) {
                throw new IllegalStateException(c.test() + " no longer agrees: " + table(rows));
            }
        }
    }

    // ---- SDS's counts against Sentinel's own StatisticNode ----

    /** The same controller fed by Sentinel's StatisticNode (a pass added when admitted). */
    static final class StatisticNodePeer implements Peer {
        private final TrafficShapingController controller;
        private final StatisticNode node = new StatisticNode();

        StatisticNodePeer(TrafficShapingController controller) {
            this.controller = controller;
        }

        @Override
        public Outcome decide(long at) {
            Hooks.at(at);
            boolean ok = controller.canPass(node, 1);
            if (ok) {
                node.addPassRequest(1);
            }
            return new Outcome(ok, 0);
        }
    }

    static void statisticNodeTable(StringBuilder md) {
        List<Step> steps = interleave(everySecond(1700, 10700, 30), everySecond(2200, 11200, 30));
        Peer sds = new SentinelPeer(new WarmUpController(20, 5, 3));
        Peer real = new StatisticNodePeer(new WarmUpController(20, 5, 3));
        md.append("\n#### Sentinel's StatisticNode: not followed\n\n");
        md.append("WarmUpController(20, 5, 3), 30 requests at .700 and 30 at .200 of each second: admitted per step")
                .append(" with SDS's counts (as the scenarios feed it) and with Sentinel's own StatisticNode on the same")
                .append(" clock (passQps over a sliding second of two 500 ms buckets). At .200 Sentinel still counts the")
                .append(" passes of the previous .700; SDS's calendar second has started afresh.\n\n");
        md.append("| `at` | offered | admitted, SDS counts | admitted, StatisticNode |\n| --- | --- | --- | --- |\n");
        for (Step st : steps) {
            int a = 0;
            int b = 0;
            for (int i = 0; i < st.repeat(); i++) {
                a += sds.decide(st.at()).pass() ? 1 : 0;
                b += real.decide(st.at()).pass() ? 1 : 0;
            }
            md.append("| ").append(st.at()).append(" | ").append(st.repeat()).append(" | ").append(a).append(" | ")
                    .append(a == b ? String.valueOf(b) : "**" + b + "**").append(" |\n");
        }
    }

    public static void main(String[] args) throws Exception {
        Hooks.install();
        Map<String, Object> files = new LinkedHashMap<>();
        sentinelScenarios(files);
        StringBuilder md = new StringBuilder();
        guavaCases(files, md);
        statisticNodeTable(md);
        // A file, not stdout: Sentinel's logging (started by StatisticNode) prints to stdout.
        java.nio.file.Files.writeString(java.nio.file.Path.of(args[0]), Json.write(map("sentinel", SENTINEL,
                "guava", GUAVA, "files", files, "markdown", md.toString())));
    }
}
