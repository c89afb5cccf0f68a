"""A host's metrics from any one of its workers (standard library + sds only).

Three worker processes decide on one shared table: a point `checkout` that
admits 30 visits per 10 s, and a keyed limit of 5 calls per user and
minute. Then the parent, a fourth process on the same files, prints its
Prometheus text: every worker's requests, downgrades by reason and keyed
decisions, each counted once, as a scrape of any gunicorn worker would
show them. Times are explicit, so every count is known.

    python examples/python/metrics.py
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile

import sds

T0 = 1_700_000_000_000
WORKERS = 3
REQUESTS = 60
RULE = {"kind": "fixedWindow", "limit": 5, "periodMs": 60_000}


def work(table: str, downgraded: "multiprocessing.Queue[int]") -> None:
    client = sds.Client.shared(table, capacity=64)
    per_user = sds.KeyedLimit.shared(table + ".keys", RULE, capacity=1024, name="per-user")
    fallbacks = 0
    for i in range(REQUESTS):
        now = T0 + i
        if not per_user.decide(f"user-{i % 10}", 1, now).admitted:
            continue  # a 429 for this user
        entry = client.enter("checkout", now_ms=now)
        fallbacks += entry.downgraded
        entry.exit(now)
    downgraded.put(fallbacks)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sds-metrics-") as tmp:
        table = os.path.join(tmp, "host.sds")
        client = sds.Client.shared(table, capacity=64)
        client.set_strategy("checkout", sds.Strategy(visit_threshold=30))
        # Opened here too, so that this process's scrape shows it.
        per_user = sds.KeyedLimit.shared(table + ".keys", RULE, capacity=1024, name="per-user")
        spawn = multiprocessing.get_context("spawn")
        downgraded: "multiprocessing.Queue[int]" = spawn.Queue()
        workers = [spawn.Process(target=work, args=(table, downgraded)) for _ in range(WORKERS)]
        for p in workers:
            p.start()
        fallbacks = sum(downgraded.get(timeout=60) for _ in workers)
        for p in workers:
            p.join()
            assert p.exitcode == 0, p.exitcode
        text = client.prometheus_text(now_ms=T0 + 1_000)
        shown = [line for line in text.splitlines()
                 if line.startswith(("sds_point_requests_total", "sds_keyed_decisions_total"))
                 or ('reason="VISIT"' in line)]
        print("\n".join(shown))
        # 10 users x 5 admitted = 50 requests reach the point.
        assert 'sds_point_requests_total{table="host.sds",point="checkout"} 50' in shown, text
        visit = 'sds_point_downgrades_total{table="host.sds",point="checkout",reason="VISIT"}'
        assert f"{visit} {fallbacks}" in shown and fallbacks > 0, (fallbacks, text)
        assert 'sds_keyed_decisions_total{limit="per-user",outcome="admitted"} 50' in shown, text
        assert 'sds_keyed_decisions_total{limit="per-user",outcome="refused"} 130' in shown, text
        print(f"{WORKERS} workers, {WORKERS * REQUESTS} calls: one process's scrape shows them all, once")
        del per_user


if __name__ == "__main__":
    main()
