"""Pacing and adaptive concurrency on a shared table are the host's
(issue 27: "On a shared table the limit is the host's"), with real
processes (fork children that open the table file themselves): processes
entering one paced point at the same instant get distinct slots, a limit
grown by one process's samples caps another, and a process killed with
SIGKILL in the middle of a burst leaves a state the survivors go on
using (DESIGN, "Processes die": single words changed by compare-and-swap,
permits of the dead given back)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import struct
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import sds

CAPACITY = 16
T = 1_700_000_000_000
FORK = multiprocessing.get_context("fork")
AIMD, GRADIENT, KNEE = 1, 4, 5


def open_table(path: str) -> sds.Client:
    return sds.Client.shared(path, CAPACITY)


def join_all(children: List[Any], within: float = 30) -> None:
    for child in children:
        child.join(within)
        assert child.exitcode == 0, f"child exited with {child.exitcode}"


# (a) Pacing: one queue for the host -----------------------------------------


def _burst_at(path: str, barrier: Any, out: Connection, n: int, now_ms: int) -> None:
    """Waits for the others, then takes ``n`` paced entries at ``now_ms``
    (explicit) and sends their waits."""
    point = open_table(path).point("paced")
    barrier.wait(10)
    waits = []
    for _ in range(n):
        entry = point.enter(now_ms=now_ms)
        waits.append(None if entry.downgraded else entry.wait_ms)
        entry.exit(now_ms=now_ms)
    out.send(waits)


def test_processes_at_the_same_instant_get_distinct_slots(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = open_table(path)
    client.set_strategy("paced", sds.Strategy(token_bucket_generated_tokens_in_second=10,
                                              max_queueing_time_ms=1_900))
    procs, n = 4, 6
    barrier = FORK.Barrier(procs)
    pipes = [FORK.Pipe(duplex=False) for _ in range(procs)]
    children = [FORK.Process(target=_burst_at, args=(path, barrier, w, n, T)) for _, w in pipes]
    for child in children:
        child.start()
    got = [r.recv() for r, _ in pipes]
    join_all(children)
    # Each process's own waits grow; together they are every slot of the
    # queue exactly once (0 to 1900 ms, 100 ms apart), the rest refused.
    for waits in got:
        admitted = [w for w in waits if w is not None]
        assert admitted == sorted(admitted) and len(set(admitted)) == len(admitted), got
    every = sorted(w for waits in got for w in waits if w is not None)
    assert every == list(range(0, 2_000, 100)), got
    assert sum(w is None for waits in got for w in waits) == procs * n - 20
    # The parent is one more process on that queue: full at T.
    refused = client.point("paced").enter(now_ms=T)
    assert refused.reason == "TOKEN_BUCKET"
    refused.exit(now_ms=T)


def _run_paced(path: str, barrier: Any, out: Connection, n: int) -> None:
    """Waits for the others, then runs ``n`` requests through ``with`` on
    the wall clock (which sleeps each entry's wait); sends (slot, ran) in ms."""
    point = open_table(path).point("paced")
    barrier.wait(10)
    runs = []
    for _ in range(n):
        with point.enter() as entry:
            ran = time.time() * 1000
            assert not entry.downgraded
        runs.append((entry.start_ms + entry.wait_ms, ran))
    out.send(runs)


def test_processes_on_the_wall_clock_run_one_slot_apart(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = open_table(path)
    step = 50
    client.set_strategy("paced", sds.Strategy(token_bucket_generated_tokens_in_second=1000 // step,
                                              max_queueing_time_ms=5_000))
    procs, n = 3, 4
    barrier = FORK.Barrier(procs)
    pipes = [FORK.Pipe(duplex=False) for _ in range(procs)]
    children = [FORK.Process(target=_run_paced, args=(path, barrier, w, n)) for _, w in pipes]
    for child in children:
        child.start()
    got = [r.recv() for r, _ in pipes]
    join_all(children)
    runs = sorted(run for process in got for run in process)
    slots = [slot for slot, _ in runs]
    # The core's slots: one every 50 ms across the three processes (a
    # process entering after the queue drained would restart the chain: the
    # barrier makes them enter within ms of each other; a later entry of a
    # process enters when its previous one ran, while the queue is long).
    assert [b - a for a, b in zip(slots, slots[1:])] == [step] * (procs * n - 1), slots
    # Each process slept to its slot: never before it (the enter time is
    # the ms clock rounded down), and late only by the timer and the
    # scheduler of a loaded 2-core machine (allowance stated, not tuned).
    print(f"ran after the slot: {min(r - s for s, r in runs):.1f} to {max(r - s for s, r in runs):.1f} ms")
    for slot, ran in runs:
        assert slot - 1 <= ran <= slot + 40, (slot, ran)


# (b) Adaptive: one limit for the host ----------------------------------------


def _holder(path: str, conn: Connection) -> None:
    """A process that runs commands on point "a" and keeps its entries:
    ("enter", n, at) -> reasons; ("exit", n, at, failed) -> None;
    ("stats", at) -> stats; ("quit",)."""
    client = open_table(path)
    held: List[sds.Entry] = []
    while True:
        cmd = conn.recv()
        if cmd[0] == "enter":
            entries = [client.enter("a", now_ms=cmd[2]) for _ in range(cmd[1])]
            held += [e for e in entries if not e.downgraded]
            for e in entries:
                if e.downgraded:
                    e.exit(now_ms=cmd[2])
            conn.send([e.reason for e in entries])
        elif cmd[0] == "exit":
            for _ in range(cmd[1]):
                entry = held.pop(0)
                if cmd[3]:
                    entry.error(RuntimeError("overloaded"))
                entry.exit(now_ms=cmd[2])
            conn.send(None)
        elif cmd[0] == "stats":
            conn.send(client.stats("a", now_ms=cmd[1]))
        else:
            conn.send(None)
            return


class Holder:
    def __init__(self, path: str) -> None:
        self.conn, theirs = FORK.Pipe()
        self.process = FORK.Process(target=_holder, args=(path, theirs))
        self.process.start()

    def __call__(self, *cmd: Any) -> Any:
        self.conn.send(cmd)
        return self.conn.recv()

    def quit(self) -> None:
        self("quit")
        join_all([self.process])


def test_a_limit_grown_in_one_process_caps_another(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = open_table(path)
    client.set_strategy("a", sds.Strategy(adaptive_concurrency=AIMD, adaptive_min_limit=1, adaptive_initial_limit=4,
                                          adaptive_max_limit=100))
    a, b = Holder(path), Holder(path)
    try:
        # A alone fills the limit and exits busy (in flight at each exit: 4,
        # 3, 2, 1; +1 while 2 x in flight >= the limit): 4 -> 5 -> 6; then
        # 6, 5, 4, 3, ...: 6 -> 7 -> 8 -> 9.
        assert a("enter", 5, T) == [None] * 4 + ["CONCURRENT"]
        a("exit", 4, T + 20, False)
        assert a("enter", 7, T + 100) == [None] * 6 + ["CONCURRENT"]
        a("exit", 6, T + 120, False)
        assert a("stats", T + 200)["adaptiveLimit"] == 9
        # B (another process) and the parent read the same limit, from A's samples.
        assert b("stats", T + 200)["adaptiveLimit"] == 9
        assert client.stats("a", now_ms=T + 200)["adaptiveRttUs"] == 20_000
        # ... and are capped by it: 9 in flight for the host.
        assert b("enter", 10, T + 300) == [None] * 9 + ["CONCURRENT"]
        b("exit", 9, T + 310, False)  # 9, 8, 7, 6 in flight: 9 -> 10 -> 11 -> 12 -> 13
        assert a("stats", T + 310)["adaptiveLimit"] == 13
        # In flight counts host-wide: A holds 6 of the 13.
        assert a("enter", 6, T + 400) == [None] * 6
        assert b("enter", 8, T + 400) == [None] * 7 + ["CONCURRENT"]
        assert client.stats("a", now_ms=T + 400)["concurrent"] == 13
        # B's exits count A's 6 as in flight: 13, 12, 11, 10, 9: 13 -> 18.
        b("exit", 7, T + 430, False)
        assert a("stats", T + 500)["adaptiveLimit"] == 18
        # A failure in A backs off the host's limit: floor(18 x 0.9).
        a("exit", 1, T + 510, True)
        assert b("stats", T + 600)["adaptiveLimit"] == 16
        assert client.stats("a", now_ms=T + 600)["exception"] == 1
        a("exit", 5, T + 600, False)
    finally:
        a.quit()
        b.quit()
    assert client.stats("a", now_ms=T + 700)["concurrent"] == 0


# (c) A process killed mid-burst ------------------------------------------------

RECORD = struct.Struct("<q")
PACE_STEP_MS = 1  # rate 1000: slot k is k ms after T
LIMITS = {"aimd": (AIMD, 5, 40, 10), "gradient": (GRADIENT, 3, 50, 10), "knee": (KNEE, 3, 50, 10)}


def _hammer(path: str, log: str, ready: Any, stop: Any) -> None:
    """A burst until ``stop``: paced entries at the one instant T (each
    wait appended to ``log`` right after its enter), and adaptive entries
    held three at a time, one exit in 13 a failure (under the 10 % of
    drops that cuts KNEE's limit each window, so it grows too); the limits
    read are checked against their bounds as they go."""
    client = open_table(path)
    paced = client.point("paced")
    points = {name: client.point(name) for name in LIMITS}
    held: Dict[str, List[sds.Entry]] = {name: [] for name in LIMITS}
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    ready.set()
    i = 0
    while not stop.is_set():
        i += 1
        entry = paced.enter(now_ms=T)
        if not entry.downgraded:
            os.write(fd, RECORD.pack(entry.wait_ms))
        entry.exit(now_ms=T)
        now = T + i
        for name, point in points.items():
            got = point.enter(now_ms=now)
            if got.downgraded:
                got.exit(now_ms=now)
            else:
                held[name].append(got)
            if len(held[name]) > 3 or (held[name] and i % 2):
                done = held[name].pop(0)
                if i % 13 == 0:
                    done.error(RuntimeError("overloaded"))
                done.exit(now_ms=now + 1 + i % 5)
            if i % 50 == 0:
                _, low, high, _ = LIMITS[name]
                limit = point.stats(now_ms=now)["adaptiveLimit"]
                if not low <= limit <= high:
                    os._exit(3)
        if i % 20 == 0:
            time.sleep(0.001)
    for name in LIMITS:
        for entry in held[name]:
            entry.exit(now_ms=T + i + 1)
    os.close(fd)


def read_waits(log: Path) -> List[int]:
    data = log.read_bytes() if log.exists() else b""
    return [w for (w,) in RECORD.iter_unpack(data[: len(data) - len(data) % RECORD.size])]


def test_a_process_killed_mid_burst_leaves_a_state_the_survivors_use(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = open_table(path)
    client.set_strategy("paced", sds.Strategy(token_bucket_generated_tokens_in_second=1000 // PACE_STEP_MS,
                                              max_queueing_time_ms=65_535))
    for name, (code, low, high, initial) in LIMITS.items():
        client.set_strategy(name, sds.Strategy(adaptive_concurrency=code, adaptive_min_limit=low,
                                               adaptive_max_limit=high, adaptive_initial_limit=initial))
    stop = FORK.Event()
    logs = [tmp_path / f"waits{k}" for k in range(3)]
    readies = [FORK.Event() for _ in logs]
    children = [FORK.Process(target=_hammer, args=(path, str(log), ready, stop)) for log, ready in zip(logs, readies)]
    for child in children:
        child.start()
    for ready in readies:
        assert ready.wait(10)
    time.sleep(0.3)
    victim = children[0]
    os.kill(victim.pid or 0, signal.SIGKILL)
    victim.join(10)
    assert victim.exitcode == -signal.SIGKILL
    before_kill = read_waits(logs[0])
    at_kill = max(read_waits(logs[1]) + read_waits(logs[2]))
    # The survivors go on for a while on the state the dead left.
    time.sleep(0.3)
    stop.set()
    join_all(children[1:])
    dead = read_waits(logs[0])
    assert dead == before_kill and len(dead) > 50, "the victim was not mid-burst"
    survivors = read_waits(logs[1]) + read_waits(logs[2])
    assert max(survivors) > at_kill + 50, "the survivors took no slots after the kill"
    # Every slot taken once: the waits of all three are distinct, and with
    # the victim's, every slot from 0 up is there, but for at most one the
    # victim took and was killed before logging.
    every = sorted(dead + survivors)
    assert len(set(every)) == len(every)
    assert all(w % PACE_STEP_MS == 0 for w in every)
    missing = set(range(0, every[-1] + 1, PACE_STEP_MS)) - set(every)
    assert len(missing) <= 1, sorted(missing)[:10]
    assert every[-1] < 65_535, "the queue filled up: the burst ran too fast to judge"
    print(f"slots: victim {len(dead)} (last {dead[-1]}), survivors {len(survivors)} (last {every[-1]}),"
          f" at the kill {at_kill}, unlogged {sorted(missing)}")
    # The parent's next slot follows the last one taken.
    nxt = client.point("paced").enter(now_ms=T)
    assert nxt.wait_ms == every[-1] + PACE_STEP_MS, (nxt.wait_ms, every[-1])
    nxt.exit(now_ms=T)
    # The adaptive limits stayed within their bounds in the survivors (each
    # checked every 50 rounds: exit code 3 otherwise) and here.
    now = T + 1_000_000
    for name, (_, low, high, _) in LIMITS.items():
        limit = client.stats(name, now_ms=now)["adaptiveLimit"]
        assert low <= limit <= high, (name, limit)
    # The victim died holding up to 3 entries per point; a process that
    # attaches gives them back, and the host's limit is again the cap.
    left = {name: client.stats(name, now_ms=now)["concurrent"] for name in LIMITS}
    print(f"held by the dead before an attach: {left}")
    assert all(0 <= n <= 4 for n in left.values()), left
    attach = FORK.Process(target=open_table, args=(path,))
    attach.start()
    join_all([attach])
    for name, (_, low, high, _) in LIMITS.items():
        assert client.stats(name, now_ms=now)["concurrent"] == 0, name
        limit = client.stats(name, now_ms=now)["adaptiveLimit"]
        entries = [client.enter(name, now_ms=now) for _ in range(limit + 1)]
        assert [e.reason for e in entries] == [None] * limit + ["CONCURRENT"], name
        for e in entries:
            e.exit(now_ms=now)
