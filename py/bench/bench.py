"""sds against the in-memory limiters a Python service would otherwise use.

Every case is one protected call's bookkeeping: sds's enter + exit (as an
explicit pair, a context manager, a decorator and a point handle), `limits`'
moving and fixed window `hit()` and pyrate-limiter's `try_acquire()`. All run
in this one process, one after the other, so the ratios compare like with
like. Each figure is the best of several repeats (ns per operation).

    python bench.py            # about 20 s
    python bench.py --quick    # a smoke run, figures are rough
"""

from __future__ import annotations

import sys
import timeit
from typing import Callable, Dict, List, Tuple

import limits
import pyrate_limiter
import sds

QUICK = "--quick" in sys.argv
NUMBER = 20_000 if QUICK else 100_000
PEER_NUMBER = 2_000 if QUICK else 10_000
REPEAT = 3 if QUICK else 9

# One rule for every limiter: 1000 requests per second (sds counts visits in
# its 10 s window, so 10 000 per window). The loops run faster than that, so
# each limiter spends most calls on its "over the limit" path, and sds on its
# downgrade path, the same for all.
RATE_PER_SECOND = 1000


def measure(cases: List[Tuple[str, str, Dict[str, object], int]]) -> Dict[str, float]:
    """Best ns/op of each case over REPEAT rounds. The rounds interleave the
    cases, so a burst of load from other processes hits them all alike."""
    timers = [(name, timeit.Timer(stmt, globals=ns), number) for name, stmt, ns, number in cases]
    best = {name: float("inf") for name, _, _ in timers}
    for _ in range(REPEAT):
        for name, timer, number in timers:
            best[name] = min(best[name], timer.timeit(number) / number * 1e9)
    return best


def print_table(results: Dict[str, float], versions: str, baselines: Dict[str, str]) -> None:
    """`versions` (with Python's), then the results as a Markdown table:
    ns/op and, in a column per `baselines` entry (title: case), how many
    times faster than that case."""
    print(f"{versions}, Python {sys.version.split()[0]}{' (quick run)' if QUICK else ''}")
    width = max(map(len, results))
    print("| " + " | ".join([f"{'case':<{width}}", f"{'ns/op':>9}", *baselines]) + " |")
    print("|" + "|".join(["-" * (width + 2), "-" * 10 + ":", *("-" * (len(t) + 1) + ":" for t in baselines)]) + "|")
    for name, ns_op in results.items():
        ratios = [f"{results[case] / ns_op:>{len(title) - 1}.1f}x" for title, case in baselines.items()]
        print("| " + " | ".join([f"{name:<{width}}", f"{ns_op:>9.0f}", *ratios]) + " |")


def sds_cases() -> List[Tuple[str, str, Dict[str, object]]]:
    client = sds.Client()
    client.set_strategy("bench", sds.Strategy(visit_threshold=RATE_PER_SECOND * 10))
    # A second point with no limit reached: the pass path.
    client.set_strategy("open", sds.Strategy(visit_threshold=-1, concurrent_threshold=1_000_000))
    handle = client.point("open")

    @client.guard("open", fallback=lambda: None)
    def guarded() -> None:
        return None

    def plain() -> None:
        return None

    ns: Dict[str, object] = {"client": client, "handle": handle, "guarded": guarded, "plain": plain}
    return [
        ("sds enter + exit (pass)", "client.enter('open').exit()", ns),
        ("sds enter + exit (1000/s rule)", "client.enter('bench').exit()", ns),
        ("sds context manager", "with client.enter('open'):\n    pass", ns),
        ("sds decorator (call minus plain call)", "guarded()", ns),
        ("sds point handle enter + exit", "handle.enter().exit()", ns),
        ("plain Python call (baseline)", "plain()", ns),
    ]


def peer_cases() -> List[Tuple[str, str, Dict[str, object]]]:
    rule = limits.parse(f"{RATE_PER_SECOND}/second")
    moving = limits.strategies.MovingWindowRateLimiter(limits.storage.MemoryStorage())
    fixed = limits.strategies.FixedWindowRateLimiter(limits.storage.MemoryStorage())
    pyrate = pyrate_limiter.Limiter(
        pyrate_limiter.Rate(RATE_PER_SECOND, pyrate_limiter.Duration.SECOND)
    )
    ns: Dict[str, object] = {"moving": moving, "fixed": fixed, "rule": rule, "pyrate": pyrate}
    return [
        ("limits moving window hit()", "moving.hit(rule, 'k')", ns),
        ("limits fixed window hit()", "fixed.hit(rule, 'k')", ns),
        ("pyrate-limiter try_acquire()", "pyrate.try_acquire('k', blocking=False)", ns),
    ]


def main() -> None:
    cases = [(name, stmt, ns, NUMBER) for name, stmt, ns in sds_cases()]
    cases += [(name, stmt, ns, PEER_NUMBER) for name, stmt, ns in peer_cases()]
    results = measure(cases)
    baseline = results["plain Python call (baseline)"]
    results["sds decorator (call minus plain call)"] -= baseline

    moving = results["limits moving window hit()"]
    print_table(results, f"sds {sds.__version__}, limits {limits.__version__}, "
                f"pyrate-limiter {getattr(pyrate_limiter, '__version__', '?')}, clock {sds._native.CLOCK}",
                {"vs limits moving": "limits moving window hit()", "vs limits fixed": "limits fixed window hit()"})

    goals: List[Tuple[str, Callable[[], bool]]] = [
        ("enter + exit >= 20x faster than limits' moving window",
         lambda: moving / results["sds enter + exit (pass)"] >= 20),
        ("point handle >= 50x faster than limits' moving window",
         lambda: moving / results["sds point handle enter + exit"] >= 50),
    ]
    for text, met in goals:
        print(f"goal: {text}: {'met' if met() else 'NOT met'}")


if __name__ == "__main__":
    main()
