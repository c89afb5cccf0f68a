"""Per-key limits from Python: `limits`' `hit()` with its
FixedWindowRateLimiter on the storage `sds://` (private and shared tables)
against the same on `memory://` and on `redis://` (a redis-server on
loopback, started here), and sds's own `KeyedLimit.decide` against
`limits`' memory storage; and `hit()` on a storage doing nothing, the
part of every hit that is `limits`' own code. The same keys in every case
(1000 keys taken in turn, 1000 hits per minute each, so most hits are
admitted), measured like bench.py (best of interleaved rounds, ns per
call), four times bench.py's rounds.

    python keyed_limits.py            # about a minute
    python keyed_limits.py --quick    # a smoke run, figures are rough
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

import limits
import redis
import sds
import sds.limits
from bench import NUMBER, QUICK, measure, print_table
from limits.storage import Storage, StorageTypes, storage_from_string
from limits.strategies import FixedWindowRateLimiter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from redis_server import redis_server  # noqa: E402

KEYS = 1000
LIMIT = 1000
REDIS_NUMBER = 500 if QUICK else 5_000
LIMITS_NUMBER = NUMBER // 2
RUNS = 4

SDS_PRIVATE = "limits hit(), sds:// (private)"
SDS_SHARED = "limits hit(), sds://path (shared)"
MEMORY = "limits hit(), memory://"
REDIS = "limits hit(), redis://"
NOTHING = "limits hit(), a storage doing nothing"
KEYED = "sds.KeyedLimit.decide (shared)"
KEYED_PRIVATE = "sds.KeyedLimit.decide (private)"

Case = Tuple[str, str, Dict[str, object], int]


class Nothing(Storage):
    """A storage that stores nothing: what ``hit()`` costs in ``limits``'
    own code (the key it builds, its wrappers), whatever the storage."""

    @property
    def base_exceptions(self) -> type[Exception]:
        return ValueError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return 1

    def get(self, key: str) -> int:
        return 0

    def get_expiry(self, key: str) -> float:
        return 0.0

    def check(self) -> bool:
        return True

    def reset(self) -> int:
        return 0

    def clear(self, key: str) -> None:
        return None


def keys() -> "itertools.cycle[str]":
    return itertools.cycle([f"user-{i}" for i in range(KEYS)])


def hit_case(name: str, storage: StorageTypes, number: int) -> Case:
    limiter = FixedWindowRateLimiter(storage)
    ns: Dict[str, object] = {"hit": limiter.hit, "item": limits.parse(f"{LIMIT}/minute"), "keys": keys()}
    return name, "hit(item, next(keys))", ns, number


def keyed_case(name: str, table: sds.KeyedLimit) -> Case:
    return name, "decide(next(keys))", {"decide": table.decide, "keys": keys()}, NUMBER


def goal(text: str, ratio: float, met: bool) -> None:
    print(f"goal: {text}: {ratio:.2f}x {'met' if met else 'NOT met'}")


def report(results: Dict[str, float]) -> None:
    print_table(results, f"sds {sds.__version__}, limits {limits.__version__}, redis-py {redis.__version__}",
                {"vs redis://": REDIS, "vs memory://": MEMORY})
    for case in (SDS_PRIVATE, SDS_SHARED):
        ratio = results[case] / results[MEMORY]
        goal(f"{case} at most 1.2x memory://", ratio, ratio <= 1.2)
        faster = results[REDIS] / results[case]
        goal(f"{case} at least 50x faster than redis://", faster, faster >= 50)
    # No storage makes hit() faster than limits' own code: the most any
    # storage can be faster than redis://, and sds's part of a hit.
    print(f"limits' own code: {results[NOTHING]:.0f} ns of every hit(), so at most "
          f"{results[REDIS] / results[NOTHING]:.1f}x faster than redis:// for any storage; "
          f"sds:// adds {results[SDS_PRIVATE] - results[NOTHING]:.0f} ns (private), "
          f"{results[SDS_SHARED] - results[NOTHING]:.0f} ns (shared), memory:// "
          f"{results[MEMORY] - results[NOTHING]:.0f} ns")
    for case in (KEYED, KEYED_PRIVATE):
        faster = results[MEMORY] / results[case]
        goal(f"{case} at least 20x faster than limits hit() on memory://", faster, faster >= 20)


def main() -> None:
    rule = {"kind": "fixedWindow", "limit": LIMIT, "periodMs": 60_000, "windowFromFirstHit": True}
    with tempfile.TemporaryDirectory(prefix="sds-bench-") as tmp, redis_server() as server:
        cases: List[Case] = [
            hit_case(SDS_PRIVATE, storage_from_string("sds://"), LIMITS_NUMBER),
            hit_case(SDS_SHARED, storage_from_string(f"sds://{tmp}/limits"), LIMITS_NUMBER),
            hit_case(MEMORY, storage_from_string("memory://"), LIMITS_NUMBER),
            hit_case(REDIS, storage_from_string(server.url), REDIS_NUMBER),
            hit_case(NOTHING, Nothing(), LIMITS_NUMBER),
            keyed_case(KEYED, sds.KeyedLimit.shared(os.path.join(tmp, "keyed"), rule)),
            keyed_case(KEYED_PRIVATE, sds.KeyedLimit(rule)),
        ]
        # The machine is shared: more interleaved rounds than bench.py's,
        # each case's best of all.
        runs = [measure(cases) for _ in range(1 if QUICK else RUNS)]
        report({name: min(run[name] for run in runs) for name in runs[0]})


if __name__ == "__main__":
    main()
