"""Python, Node and C processes on one shared table file at once.

Starts one worker per language (worker.py, worker.js, the compiled
worker.c) on a new table file; all three attach at once. Each adds known
counts to the same points with explicit times, then every one of them reads
the same totals. A visit limit set from Python is held across the three:
taken in turns, exactly its threshold is admitted, in the order of the
turns; taken by all three at once, never fewer than the threshold and at
most one more per other racing process. A concurrency limit set from Node holds
permits of all three. Then a Java worker joins: the four decide on one shared
keyed limit, and the four Prometheus expositions of the table (and of that
keyed limit) are the same text, with the counts the test drove. Exits non-zero
on the first difference.

    python crosslang/run.py C_WORKER_BINARY SDS_NATIVE_JAR
        (with sds importable, node and java on PATH)
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
CAPACITY = 64
T0 = 1_700_000_000_000  # every time is explicit, a whole second after T0
REPLY_TIMEOUT_S = 30

COUNTS = "crosslang.counts"
LIMIT = "crosslang.limit"
RACE = "crosslang.race"
HELD = "crosslang.held"
LIMIT_T = 10
RACE_T = 75_000
RACE_TRIES = 50_000
HELD_T = 4


class Worker:
    """One worker process and its line protocol."""

    def __init__(self, name: str, command: List[str]) -> None:
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.buffer = b""

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def reply(self) -> str:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise SystemExit(f"{self.name}: no reply in {REPLY_TIMEOUT_S} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise SystemExit(f"{self.name}: exited ({self.process.wait()}) without a reply")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def ask(self, line: str) -> str:
        self.send(line)
        return self.reply()

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def all_at_once(workers: List[Worker], lines: List[str]) -> List[str]:
    """Sends each worker its line, then collects the replies: the commands
    run in the three processes at the same time."""
    for worker, line in zip(workers, lines):
        worker.send(line)
    return [worker.reply() for worker in workers]


def expect(what: str, got: object, want: object) -> None:
    if got != want:
        raise SystemExit(f"FAIL {what}: got {got}, want {want}")
    print(f"ok   {what}: {got}")


def expect_stats(workers: List[Worker], point: str, now_ms: int, want: List[int]) -> None:
    """Every worker reads [visit, exception, timeout, downgrade, concurrent]."""
    for worker in workers:
        got = json.loads(worker.ask(f"stats {point} {now_ms}"))
        expect(f"{worker.name} reads {point}", got, want)


def scenario(workers: List[Worker]) -> None:
    py, node, c = workers
    for worker in workers:
        expect(f"{worker.name} attached", worker.reply(), "ready")
    # Each limit is set by one language and enforced on all three.
    expect("python sets the visit limit", py.ask(f'strategy {LIMIT} {{"visitThreshold":{LIMIT_T}}}'), "ok")
    expect("node sets the concurrency limit", node.ask(f'strategy {HELD} {{"concurrentThreshold":{HELD_T}}}'), "ok")
    expect("c sets the racing limit", c.ask(f'strategy {RACE} {{"visitThreshold":{RACE_T}}}'), "ok")

    # Known counts, added by the three processes at once.
    added = {"python": (300, 7, T0), "node": (200, 11, T0 + 250), "c": (100, 13, T0 + 500)}
    lines = [f"add {COUNTS} {' '.join(map(str, added[w.name]))}" for w in workers]
    expect("counts added at once", all_at_once(workers, lines), ["ok"] * 3)
    expect_stats(workers, COUNTS, T0 + 2000, [600, 31, 0, 0, 0])

    # The visit limit in turns: 4 tries each, round after round.
    admitted = [int(w.ask(f"try {LIMIT} 4 {T0 + 1000}")) for _ in range(2) for w in workers]
    expect("admitted per turn (python, node, c, python, node, c)", admitted, [4, 4, 2, 0, 0, 0])
    expect_stats(workers, LIMIT, T0 + 2000, [24, 0, 0, 14, 0])

    # The same kind of limit taken by all three at once: they start their
    # tries at one CLOCK_MONOTONIC instant.
    start_ns = time.monotonic_ns() + 200_000_000
    race = f"try {RACE} {RACE_TRIES} {T0 + 1000} {start_ns}"
    racing = [int(r) for r in all_at_once(workers, [race] * 3)]
    total = sum(racing)
    print(f"     admitted at once (python, node, c): {racing}")
    if not RACE_T <= total <= RACE_T + len(workers) - 1:
        raise SystemExit(f"FAIL admitted at once: {total}, want {RACE_T} to {RACE_T + len(workers) - 1}")
    visits = RACE_TRIES * len(workers)
    expect_stats(workers, RACE, T0 + 2000, [visits, 0, 0, visits - total, 0])

    # Permits: held by python and node, refused to c, given back by python.
    expect("python holds", py.ask(f"hold {HELD} 2 {T0 + 1000}"), "2")
    expect("node holds", node.ask(f"hold {HELD} 2 {T0 + 1000}"), "2")
    expect("c is refused", c.ask(f"hold {HELD} 2 {T0 + 1000}"), "0")
    expect_stats(workers, HELD, T0 + 1500, [6, 0, 0, 2, 4])
    expect("python releases", py.ask(f"release {T0 + 1500}"), "2")
    expect("c holds what python gave back", c.ask(f"hold {HELD} 3 {T0 + 1500}"), "2")
    expect_stats(workers, HELD, T0 + 1500, [9, 0, 0, 3, 4])
    expect("node and c release", [node.ask(f"release {T0 + 1600}"), c.ask(f"release {T0 + 1600}")], ["2", "2"])
    expect_stats(workers, HELD, T0 + 2000, [9, 0, 0, 3, 0])


def sample(text: str, line_start: str) -> float:
    """The value of the one sample line of `text` starting with `line_start`."""
    found = [line for line in text.splitlines() if line.startswith(line_start + " ")]
    if len(found) != 1:
        raise SystemExit(f"FAIL {len(found)} samples {line_start} in:\n{text}")
    return float(found[0].rsplit(" ", 1)[1])


def metrics(workers: List[Worker]) -> None:
    """A shared keyed limit decided on by all four, then every worker's
    exposition of the table: one text, the driven counts."""
    turns = zip(workers, ["alice", "alice", "bob", "bob"], [3, 3, 2, 4])
    decided = [w.ask(f"decide {key} {n} {T0 + 1000}") for w, key, n in turns]
    expect("keyed admitted (python, node, c, java): 5 per key", decided, ["3", "2", "2", "3"])
    texts = [json.loads(w.ask(f"metrics {T0 + 2000}")) for w in workers]
    for worker, text in zip(workers[1:], texts[1:]):
        if text != texts[0]:
            raise SystemExit(f"FAIL {worker.name}'s exposition differs from python's:\n{text}\n---\n{texts[0]}")
    print(f"ok   the four expositions are one text ({len(texts[0])} bytes)")
    text, table = texts[0], 'table="crosslang.sds"'
    expect("requests", sample(text, f'sds_point_requests_total{{{table},point="{COUNTS}"}}'), 600)
    expect("exceptions", sample(text, f'sds_point_exceptions_total{{{table},point="{COUNTS}"}}'), 31)
    limit = f'sds_point_downgrades_total{{{table},point="{LIMIT}",reason="VISIT"}}'
    expect("visit downgrades", sample(text, limit), 14)
    held = f'sds_point_downgrades_total{{{table},point="{HELD}",reason="CONCURRENT"}}'
    expect("concurrency downgrades", sample(text, held), 3)
    keyed = 'sds_keyed_decisions_total{limit="crosslang.sds.keys",outcome='
    expect("keyed decisions", [sample(text, keyed + '"admitted"}'), sample(text, keyed + '"refused"}')], [10, 2])


def main() -> None:
    c_worker, jar = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="sds-crosslang-") as tmp:
        table = os.path.join(tmp, "crosslang.sds")
        commands: Dict[str, List[str]] = {
            "python": [sys.executable, os.path.join(HERE, "worker.py")],
            "node": ["node", os.path.join(HERE, "worker.js")],
            "c": [c_worker],
        }
        workers = [Worker(name, command + [table, str(CAPACITY)]) for name, command in commands.items()]
        try:
            scenario(workers)
            java = ["java", "-cp", jar, os.path.join(HERE, "Worker.java"), table, str(CAPACITY)]
            workers.append(Worker("java", java))
            expect("java attached", workers[-1].reply(), "ready")
            metrics(workers)
        finally:
            for worker in workers:
                worker.stop()
        codes = {w.name: w.process.returncode for w in workers}
        expect("workers' exit codes", codes, {"python": 0, "node": 0, "c": 0, "java": 0})
    print("crosslang: python, node, c and java read the same totals and metrics")


if __name__ == "__main__":
    main()
