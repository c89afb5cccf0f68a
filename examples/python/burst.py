"""A guarded function under a burst of calls (standard library + sds only).

`fetch_price` may run at most 3 at a time and 8 times per 10 s window. A
burst of 10 concurrent calls, then 10 more one after the other: the demo
prints which calls ran, which got the fallback, and why.

    python examples/python/burst.py
"""

from __future__ import annotations

import asyncio
from collections import Counter

import sds

client = sds.Client()
client.set_strategy("prices.fetch", sds.Strategy(concurrent_threshold=3, visit_threshold=8))

reasons: Counter[str] = Counter()
last_reason = ""


@client.on_downgrade
def count(point: str, reason: str, time_ms: int) -> None:
    # Listeners run inside `enter`, so in this one-threaded demo the fallback
    # that follows is the one for this downgrade.
    global last_reason
    reasons[reason] += 1
    last_reason = reason


async def cached_price(item: str) -> str:
    return f"{item}: cached price (downgraded: {last_reason})"


@client.guard("prices.fetch", fallback=cached_price)
async def fetch_price(item: str) -> str:
    await asyncio.sleep(0.01)  # the slow backend call
    return f"{item}: live price"


async def main() -> None:
    print("burst of 10 concurrent calls (at most 3 in flight):")
    for line in await asyncio.gather(*(fetch_price(f"item-{i}") for i in range(10))):
        print("  ", line)
    print("10 more calls, one after the other (at most 8 per 10 s):")
    for i in range(10, 20):
        print("  ", await fetch_price(f"item-{i}"))

    stats = client.stats("prices.fetch")
    passed = stats["visit"] - stats["downgrade"]
    print(f"{passed} of {stats['visit']} calls ran; downgraded by reason: {dict(reasons)}")


if __name__ == "__main__":
    asyncio.run(main())
