"""The WSGI app the gunicorn tests serve (``test_shared_gunicorn.py``).

Its one view is guarded by the point ``view`` on the shared table named in
``SDS_TEST_TABLE``: 200 when admitted, 429 when downgraded. While inside the
view it keeps a count of the requests in the view across all workers, and
its high-water mark, in ``SDS_TEST_DIR/inflight`` (under an ``flock``).
``?sleep=S`` makes the view take S seconds; the worker writes its pid to
``SDS_TEST_DIR/holder`` when it enters a sleeping view. ``?at=MS`` decides
at that time instead of the wall clock's, so a test's window cannot slide
however slowly a loaded machine serves it.
"""

from __future__ import annotations

import fcntl
import os
import time
from typing import Any, Callable, Iterable, Optional, Tuple
from urllib.parse import parse_qs

import sds

client = sds.Client.shared(os.environ["SDS_TEST_TABLE"], int(os.environ["SDS_TEST_CAPACITY"]))
counts = os.path.join(os.environ["SDS_TEST_DIR"], "inflight")
holder = os.path.join(os.environ["SDS_TEST_DIR"], "holder")


def _inflight(step: int) -> None:
    """Adds ``step`` to the requests in the view, raising the mark."""
    with open(counts, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        now, high = (int(x) for x in (f.read().split() or ["0", "0"]))
        now += step
        f.seek(0)
        f.truncate()
        f.write(f"{now} {max(now, high)}")


@client.guard("view", fallback=lambda seconds: None)
def view(seconds: float) -> Tuple[str, bytes]:
    _inflight(1)
    try:
        if seconds:
            with open(holder, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(seconds)
    finally:
        _inflight(-1)
    return "200 OK", b"ok"


def view_at(at_ms: int) -> Optional[Tuple[str, bytes]]:
    """The view, decided and exited at ``at_ms``."""
    with client.enter("view", now_ms=at_ms) as entry:
        return None if entry.downgraded else ("200 OK", b"ok")


def app(environ: Any, start_response: Callable[..., Any]) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    if "at" in query:
        result = view_at(int(query["at"][0]))
    else:
        result = view(float(query.get("sleep", ["0"])[0]))
    status, body = result if result else ("429 Too Many Requests", b"busy")
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
