"""sds cluster points (counts shared through Redis by a syncer thread)
against a local point, and against the peer that shares a limit through the
SAME redis-server: `limits`' moving window, one Lua script per `hit()`.

The cases are one protected call's bookkeeping in this process, measured
like bench.py (best of interleaved rounds, ns per operation), on one private
client: a local point and a cluster point with the same strategy, each on
the pass path (a permit of a concurrency limit, no rule reached) and the
rule path (1000/s, so mostly downgrades). The cluster sync runs at its
default period (0.1 s) through the whole run. Exact mode (a round trip per
decision) is measured beside `limits`, the other per-call round trip.

    python cluster_points.py            # about 30 s
    python cluster_points.py --quick    # a smoke run, figures are rough
"""

from __future__ import annotations

import time
from typing import Dict, List, Tuple

import limits
import redis
import sds
from bench import NUMBER, RATE_PER_SECOND, measure, print_table
# Exact mode makes a round trip per call, as limits on Redis does: as many.
from shared_table import ON_REDIS, REDIS_NUMBER as EXACT_NUMBER, goals, limits_cases, redis_server

LOCAL_PASS = "sds local point enter + exit (pass)"
LOCAL_RULE = "sds local point enter + exit (1000/s rule)"
CLUSTER_PASS = "sds cluster point enter + exit (pass)"
CLUSTER_RULE = "sds cluster point enter + exit (1000/s rule)"
EXACT = "sds cluster point enter_exact (1000/s rule)"


def sds_cases(client: sds.Client) -> List[Tuple[str, str, Dict[str, object], int]]:
    rule = sds.Strategy(visit_threshold=RATE_PER_SECOND * 10)
    open_ = sds.Strategy(visit_threshold=-1, concurrent_threshold=1_000_000)
    for prefix in ("local", "cluster"):
        client.set_strategy(f"{prefix}_rule", rule)
        client.set_strategy(f"{prefix}_open", open_)
    ns: Dict[str, object] = {"client": client}
    return [
        (LOCAL_PASS, "client.enter('local_open').exit()", ns, NUMBER),
        (CLUSTER_PASS, "client.enter('cluster_open').exit()", ns, NUMBER),
        (LOCAL_RULE, "client.enter('local_rule').exit()", ns, NUMBER),
        (CLUSTER_RULE, "client.enter('cluster_rule').exit()", ns, NUMBER),
    ]


def report(results: Dict[str, float], status: sds.ClusterStatus, seconds: float) -> None:
    on_redis = results[ON_REDIS]
    print_table(results, f"sds {sds.__version__}, limits {limits.__version__}, redis-py {redis.__version__}",
                {"vs limits on redis": ON_REDIS})
    goals(results, "cluster point", (CLUSTER_PASS, CLUSTER_RULE), "local point", (LOCAL_PASS, LOCAL_RULE), 1.5)
    print(f"exact mode vs limits on redis: {on_redis / results[EXACT]:.2f}x")
    print(f"Redis traffic of the sync (2 cluster points, sync_interval 0.1 s): "
          f"{status.syncs / seconds:.1f} syncs/s, {status.round_trips / seconds:.1f} round trips/s, "
          f"{status.commands / seconds:.0f} commands/s over {seconds:.1f} s, "
          f"last RTT {status.rtt_us} us, failures {status.failures}")


def main() -> None:
    with redis_server() as server:
        client = sds.Client(1024)
        cases = sds_cases(client)
        with client.connect_cluster(server.url, ["cluster_open", "cluster_rule"]) as sync:
            started = time.monotonic()
            before = sync.status()
            ns: Dict[str, object] = {"sync": sync}
            cases.append((EXACT, "sync.enter_exact('cluster_rule')", ns, EXACT_NUMBER))
            cases += limits_cases(server.port)[:1]
            results = measure(cases)
            status = sync.status()
            seconds = time.monotonic() - started
            status = status._replace(syncs=status.syncs - before.syncs,
                                     round_trips=status.round_trips - before.round_trips,
                                     commands=status.commands - before.commands)
            report(results, status, seconds)


if __name__ == "__main__":
    main()
