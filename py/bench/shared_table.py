"""sds on a table shared by the host's processes against what several
worker processes would otherwise share a limit through: `limits`' moving
window on a real redis-server over loopback, and (per process only)
`limits` in memory; and against sds on a private table.

Every case is one protected call's bookkeeping in this process, measured
like bench.py (best of interleaved rounds, ns per operation). The sds cases
take the pass path (a permit of a concurrency limit, no rule reached) and
the rule path (1000/s, so mostly downgrades, as the peers mostly refuse).

    python shared_table.py            # about 30 s
    python shared_table.py --quick    # a smoke run, figures are rough
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

import limits
import redis
import sds
from bench import NUMBER, QUICK, RATE_PER_SECOND, measure, print_table

# The tests and the benchmarks share one redis-server helper.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from redis_server import redis_server  # noqa: E402

MEMORY_NUMBER = 2_000 if QUICK else 10_000
REDIS_NUMBER = 200 if QUICK else 2_000

PASS = "sds shared enter + exit (pass)"
RULE = "sds shared enter + exit (1000/s rule)"
PRIVATE_PASS = "sds private enter + exit (pass)"
PRIVATE_RULE = "sds private enter + exit (1000/s rule)"
ON_REDIS = "limits moving window hit(), redis-server"
IN_MEMORY = "limits moving window hit(), in memory"


def sds_cases(client: sds.Client, names: Tuple[str, str]) -> List[Tuple[str, str, Dict[str, object], int]]:
    client.set_strategy("bench", sds.Strategy(visit_threshold=RATE_PER_SECOND * 10))
    client.set_strategy("open", sds.Strategy(visit_threshold=-1, concurrent_threshold=1_000_000))
    ns: Dict[str, object] = {"client": client}
    return [
        (names[0], "client.enter('open').exit()", ns, NUMBER),
        (names[1], "client.enter('bench').exit()", ns, NUMBER),
    ]


def limits_cases(redis_port: int) -> List[Tuple[str, str, Dict[str, object], int]]:
    rule = limits.parse(f"{RATE_PER_SECOND}/second")
    on_redis = limits.strategies.MovingWindowRateLimiter(
        limits.storage.RedisStorage(f"redis://127.0.0.1:{redis_port}")
    )
    in_memory = limits.strategies.MovingWindowRateLimiter(limits.storage.MemoryStorage())
    ns: Dict[str, object] = {"on_redis": on_redis, "in_memory": in_memory, "rule": rule}
    return [
        (ON_REDIS, "on_redis.hit(rule, 'k')", ns, REDIS_NUMBER),
        (IN_MEMORY, "in_memory.hit(rule, 'k')", ns, MEMORY_NUMBER),
    ]


def goals(results: Dict[str, float], what: str, cases: Tuple[str, str], over: str, bases: Tuple[str, str],
          most: float) -> None:
    """The ratios of `what`'s `cases` (pass, rule) over `over`'s `bases`,
    and its goals: at least 100x faster than limits on Redis, at most
    `most` times `over`."""
    ratios = [results[case] / results[base] for case, base in zip(cases, bases)]
    print(f"{what} / {over}: {ratios[0]:.2f}x (pass), {ratios[1]:.2f}x (1000/s rule)")
    faster = results[ON_REDIS] / max(results[case] for case in cases)
    print(f"goal: {what} enter + exit >= 100x faster than limits on redis: "
          f"{faster:.0f}x {'met' if faster >= 100 else 'NOT met'}")
    print(f"goal: {what} no slower than {most}x {over}: {max(ratios):.2f}x {'met' if max(ratios) <= most else 'NOT met'}")


def report(results: Dict[str, float]) -> None:
    print_table(results, f"sds {sds.__version__}, limits {limits.__version__}, redis-py {redis.__version__}",
                {"vs limits on redis": ON_REDIS, "vs limits in memory": IN_MEMORY})
    goals(results, "shared", (PASS, RULE), "private", (PRIVATE_PASS, PRIVATE_RULE), 1.2)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sds-bench-") as tmp, redis_server() as server:
        shared = sds.Client.shared(os.path.join(tmp, "bench.sds"), capacity=1024)
        cases = sds_cases(shared, (PASS, RULE))
        cases += sds_cases(sds.Client(1024), (PRIVATE_PASS, PRIVATE_RULE))
        cases += limits_cases(server.port)
        report(measure(cases))


if __name__ == "__main__":
    main()
