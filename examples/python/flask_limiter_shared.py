"""flask-limiter with one option changed: storage_uri="sds://...", so a
limit holds for every worker process of the host, as under gunicorn.

Four worker processes each build the same Flask app (as gunicorn workers
import it) and serve 50 requests of one client through Flask's test client,
limited to "60 per minute" per client. Each prints what it admitted, then
the host total: 60, not 4 x 60 as with storage_uri="memory://".

In production: `gunicorn -w 4 app:app` with the app below and
storage_uri="sds://my-app-limits" (files under /dev/shm).
"""

import multiprocessing
import os
import tempfile

from flask import Flask, request
from flask_limiter import Limiter

import sds.limits  # noqa: F401  registers the storage scheme sds://

WORKERS = 4
REQUESTS = 50
LIMIT = "60 per minute"


def make_app(storage_uri: str) -> Flask:
    app = Flask(__name__)
    limiter = Limiter(lambda: request.headers.get("X-Client", "anonymous"), app=app, storage_uri=storage_uri)

    @app.route("/search")
    @limiter.limit(LIMIT)
    def search() -> str:
        return "results"

    return app


def worker(storage_uri: str, number: int, admitted: "multiprocessing.Queue[int]") -> None:
    app = make_app(storage_uri)
    with app.test_client() as client:
        statuses = [client.get("/search", headers={"X-Client": "alice"}).status_code for _ in range(REQUESTS)]
    print(f"worker {number} (pid {os.getpid()}): {statuses.count(200)} admitted, {statuses.count(429)} refused (429)")
    admitted.put(statuses.count(200))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # The tables are files beside this path: limits.fixed-60000 here.
        uri = f"sds://{tmp}/limits"
        spawn = multiprocessing.get_context("spawn")
        admitted: "multiprocessing.Queue[int]" = spawn.Queue()
        workers = [spawn.Process(target=worker, args=(uri, n, admitted)) for n in range(WORKERS)]
        for w in workers:
            w.start()
        total = sum(admitted.get() for _ in workers)
        for w in workers:
            w.join()
        print(f"host total: {total} of {WORKERS * REQUESTS} requests admitted ({LIMIT} for all workers); "
              f"tables: {sorted(os.listdir(tmp))}")


if __name__ == "__main__":
    main()
