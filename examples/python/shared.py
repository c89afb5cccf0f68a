"""Several worker processes sharing one limit through a shared table.

Four forked workers each try 50 requests on the point "checkout", limited to
60 visits per 10 s for the whole host: each prints what it admitted, and the
parent prints the host total (about 60, not 4 x 60).
"""

import multiprocessing
import os
import tempfile

import sds

WORKERS = 4
TRIES = 50
LIMIT = 60


def worker(client: sds.Client, number: int) -> None:
    admitted = 0
    for _ in range(TRIES):
        with client.enter("checkout") as entry:
            admitted += not entry.downgraded
    print(f"worker {number} (pid {os.getpid()}): admitted {admitted} of {TRIES}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # In production a bare name such as "checkout.sds" puts it in /dev/shm.
        client = sds.Client.shared(os.path.join(tmp, "checkout.sds"), capacity=64)
        client.set_strategy("checkout", sds.Strategy(visit_threshold=LIMIT))
        fork = multiprocessing.get_context("fork")
        workers = [fork.Process(target=worker, args=(client, n)) for n in range(WORKERS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        stats = client.stats("checkout")
        passed = stats["visit"] - stats["downgrade"]
        print(f"host total: {stats['visit']} tries, {passed} admitted (limit {LIMIT} for all workers)")


if __name__ == "__main__":
    main()
