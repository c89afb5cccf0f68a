"""Pacing a burst (standard library + sds only).

The point `sms.send` may call its provider 10 times a second, evenly:
`tokenBucketGeneratedTokensInSecond` 10 with `maxQueueingTimeMs` 500. A
burst of 8 concurrent sends: each entry says how long it must wait
(`wait_ms`: 0, 100, ... 500 ms), the guarded `async def` waits that long with
`asyncio.sleep` before it runs, and the 2 that would wait past 500 ms get
the fallback at once (reason TOKEN_BUCKET). Then a warm-up point's first
second: 3 of 20 calls admitted, a third of the rate, while it is cold.

    python examples/python/pacing.py
"""

from __future__ import annotations

import asyncio
import time

import sds

client = sds.Client()
client.set_strategy("sms.send", {"tokenBucketGeneratedTokensInSecond": 10, "maxQueueingTimeMs": 500})
sms = client.point("sms.send")

start = time.monotonic()


def elapsed() -> str:
    return f"{(time.monotonic() - start) * 1000:4.0f} ms"


async def queued_later(number: int) -> str:
    return f"sms {number}: refused at {elapsed()}, would wait past 500 ms: try later"


@sms.guard(fallback=queued_later)
async def send(number: int) -> str:
    return f"sms {number}: sent at {elapsed()}"


async def main() -> None:
    # What each entry of a burst is told (times given: no real waiting).
    now = sds.now_ms()
    told = [client.enter("sms.send", now_ms=now) for _ in range(8)]
    print("waits told to a burst of 8:", [e.reason or e.wait_ms for e in told])
    for e in told:
        e.exit(now_ms=now)

    # The same burst through the async guard, a second later (the queue
    # has drained): the sends run 100 ms apart.
    await asyncio.sleep(1)
    global start
    start = time.monotonic()
    for line in await asyncio.gather(*(send(n) for n in range(8))):
        print(line)

    # Warm-up: rate 10, 10 s from cold, cold factor 3.
    client.set_strategy("reports", {"tokenBucketGeneratedTokensInSecond": 10, "warmUpPeriodSec": 10,
                                    "coldFactor": 3})
    # Calls every 50 ms through one whole second (times given).
    second = sds.now_ms() // 1000 * 1000 + 1000
    admitted = 0
    for i in range(20):
        with client.enter("reports", now_ms=second + i * 50) as e:
            admitted += not e.downgraded
    print(f"warm-up, first second: {admitted} of 20 calls admitted (cold: 10 / 3 a second)")


asyncio.run(main())
