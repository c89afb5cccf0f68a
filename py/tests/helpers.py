"""What the tests share: counting this process's threads by the name the
Rust side gives them, waiting for a condition, and stopping a server the
test started."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import time
from typing import IO, Any, Callable


def named_threads(name: str) -> int:
    """This process's threads named ``name``. A thread that ends during the
    count (its task gone from /proc) is not counted. A thread just joined
    may still be listed for a moment: wait for a count to drop, do not
    assert it at once."""
    count = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == name
        except (FileNotFoundError, ProcessLookupError):
            pass
    return count


def wait_for(what: str, check: Callable[[], bool], within: float = 5.0) -> float:
    """Polls `check` (every 5 ms) until it holds; returns how long that
    took."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > within:
            raise AssertionError(f"not within {within} s: {what}")
        time.sleep(0.005)
    return time.monotonic() - start


def stop_server(process: "subprocess.Popen[Any]", log: IO[str], grace: float = 10) -> None:
    """Stops a server the test started (SIGTERM, then SIGKILL after `grace`
    seconds) and closes its log."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    log.close()
