"""``Client.shared``: processes on one table file (fork and spawn), names,
modes and refused files."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

import sds

CAPACITY = 64
T0 = 1_000_000


def _add_visits(path: str, n: int) -> None:
    """A spawned child: opens the file itself and adds ``n`` visits."""
    client = sds.Client.shared(path, CAPACITY)
    for _ in range(n):
        client.enter("p", now_ms=T0).exit()


def test_fork_children_and_a_spawned_child_see_the_same_counts(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = sds.Client.shared(path, CAPACITY)
    client.enter("p", now_ms=T0).exit()

    def forked(n: int) -> None:
        # Uses the parent's client: the child registers itself on its first call.
        for _ in range(n):
            client.enter("p", now_ms=T0).exit()

    fork = multiprocessing.get_context("fork")
    children = [fork.Process(target=forked, args=(100 + i,)) for i in range(3)]
    children.append(multiprocessing.get_context("spawn").Process(target=_add_visits, args=(path, 50)))
    for child in children:
        child.start()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    stats = client.stats("p", now_ms=T0)
    assert stats["visit"] == 1 + 100 + 101 + 102 + 50
    assert stats["concurrent"] == 0
    # A new attachment reads the same table.
    assert sds.Client.shared(path, CAPACITY).stats("p", now_ms=T0)["visit"] == 354


def test_a_strategy_set_in_one_process_limits_the_others(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = sds.Client.shared(path, CAPACITY)
    client.set_strategy("p", sds.Strategy(concurrent_threshold=1))
    held = client.enter("p", now_ms=T0)
    fork = multiprocessing.get_context("fork")
    queue = fork.Queue()

    def child() -> None:
        entry = client.enter("p", now_ms=T0)
        queue.put((entry.downgraded, entry.reason))
        entry.exit()

    process = fork.Process(target=child)
    process.start()
    process.join(60)
    assert process.exitcode == 0
    assert queue.get(timeout=5) == (True, "CONCURRENT")
    held.exit()
    assert client.stats("p", now_ms=T0)["concurrent"] == 0


def test_a_killed_holder_permit_comes_back_on_a_refused_request(tmp_path: Path) -> None:
    path = str(tmp_path / "table.sds")
    client = sds.Client.shared(path, CAPACITY)
    client.set_strategy("p", sds.Strategy(concurrent_threshold=1))

    def child() -> None:
        held = client.enter("p", now_ms=T0)  # kept: a dropped entry exits
        assert not held.downgraded
        os.kill(os.getpid(), signal.SIGKILL)

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(60)
    assert process.exitcode == -signal.SIGKILL
    assert client.stats("p", now_ms=T0)["concurrent"] == 1
    # No process attaches: the refusal is what lets the file scan for the dead.
    refused = client.enter("p", now_ms=T0)
    assert refused.reason == "CONCURRENT"
    refused.exit()
    assert client.stats("p", now_ms=T0)["concurrent"] == 0
    entry = client.enter("p", now_ms=T0)
    assert not entry.downgraded
    entry.exit()


def test_a_bare_name_is_a_file_under_dev_shm() -> None:
    name = f"sds-py-test-{os.getpid()}"
    try:
        client = sds.Client.shared(name, 8)
        assert str(client.shared_path) == f"/dev/shm/{name}"
        assert client.capacity == 8
        assert stat.S_IMODE(os.stat(f"/dev/shm/{name}").st_mode) == 0o600
    finally:
        os.unlink(f"/dev/shm/{name}")


def test_group_mode_and_path_like(tmp_path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    client = sds.Client.shared(tmp_path / "group.sds", 8, mode=0o660)
    assert isinstance(client, sds.Client)
    # Created as open(2) creates: the mode less the process's umask.
    assert stat.S_IMODE(os.stat(tmp_path / "group.sds").st_mode) == 0o660 & ~umask


def _as_user(uid: int, gid: int, groups: list[int], work: Callable[[], str]) -> str:
    """Runs ``work`` in a fork child dropped from root to ``uid``, ``gid``
    and exactly ``groups`` (umask 002, as the docs ask for group files);
    returns what it returned, or the error it raised."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0o002)
            try:
                out = work()
            except sds.SdsError as e:
                out = f"{type(e).__name__}: {e}"
            os.write(write, out.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        out = pipe.read()
    assert os.waitpid(pid, 0)[1] == 0
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="running children as other users needs root")
def test_mode_660_lets_two_users_of_one_group_count_in_one_file() -> None:
    # pytest's tmp_path sits under a directory only root may enter, so the
    # other users get a sticky world-writable one of their own, as /dev/shm is.
    with tempfile.TemporaryDirectory(prefix="sds-group-") as shared_dir:
        os.chmod(shared_dir, 0o1777)
        _count_as_two_users_of_one_group(Path(shared_dir) / "group.sds")


def _count_as_two_users_of_one_group(path: Path) -> None:
    group, a, b = 4321, 65534, 65533

    def visits(n: int) -> Callable[[], str]:
        def work() -> str:
            client = sds.Client.shared(path, CAPACITY, mode=0o660)
            for _ in range(n):
                client.enter("p", now_ms=T0).exit()
            return str(client.stats("p", now_ms=T0)["visit"])

        return work

    assert _as_user(a, group, [], visits(3)) == "3"  # creates it, group 4321
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (a, group, 0o660)
    assert _as_user(b, b, [group], visits(4)) == "7"
    # Another user's file without the group mode, or of a group it is not in.
    assert _as_user(b, b, [group], lambda: str(sds.Client.shared(path, CAPACITY))) == (
        f"InvalidArgument: {path}: owned by uid {a}, not by this process's uid {b} (refused)"
    )
    with pytest.raises(sds.InvalidArgument, match=f"owned by uid {a} and group {group}: neither"):
        sds.Client.shared(path, CAPACITY, mode=0o660)  # root, not in the group


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_names_that_are_no_file_are_refused(name: str) -> None:
    with pytest.raises(sds.InvalidArgument, match="shared table name"):
        sds.Client.shared(name)


@pytest.mark.parametrize("mode", [0o644, 0o666, 0o700, 0, -1])
def test_only_modes_600_and_660(tmp_path: Path, mode: int) -> None:
    with pytest.raises(sds.InvalidArgument, match=r"mode must be 0600 or 0660 \(octal\)"):
        sds.Client.shared(tmp_path / "t.sds", 8, mode=mode)
    assert not (tmp_path / "t.sds").exists()


def test_a_mode_without_a_shared_table_is_refused() -> None:
    with pytest.raises(sds.InvalidArgument, match="only for a shared table"):
        sds.Client(8, mode=0o600)


def test_another_capacity_is_a_layout_mismatch(tmp_path: Path) -> None:
    sds.Client.shared(tmp_path / "t.sds", 8)
    with pytest.raises(sds.LayoutMismatch, match="capacity: the file has 8, this process needs 9") as err:
        sds.Client.shared(tmp_path / "t.sds", 9)
    assert err.value.code == "SDS_LAYOUT_MISMATCH"


def test_refused_files_raise_with_shm_message(tmp_path: Path) -> None:
    (tmp_path / "wide.sds").write_bytes(b"")
    os.chmod(tmp_path / "wide.sds", 0o644)
    with pytest.raises(sds.InvalidArgument, match="mode 0644 grants more than the 0600"):
        sds.Client.shared(tmp_path / "wide.sds", 8)
    (tmp_path / "junk.sds").write_bytes(os.urandom(20000))
    os.chmod(tmp_path / "junk.sds", 0o600)
    with pytest.raises(sds.SdsError, match="junk.sds"):
        sds.Client.shared(tmp_path / "junk.sds", 8)
    os.symlink(tmp_path / "junk.sds", tmp_path / "link.sds")
    with pytest.raises(sds.InvalidArgument, match="link.sds"):
        sds.Client.shared(tmp_path / "link.sds", 8)
    with pytest.raises(sds.InvalidCapacity):
        sds.Client.shared(tmp_path / "zero.sds", 0)
    with pytest.raises(sds.InvalidArgument, match="shared must be a str"):
        sds.Client(8, shared=b"/tmp/x")  # type: ignore[arg-type]


def test_listeners_stay_per_process(tmp_path: Path) -> None:
    path = tmp_path / "t.sds"
    client = sds.Client.shared(path, CAPACITY)
    client.set_strategy("p", sds.Strategy(visit_threshold=0))
    heard: list = []
    client.on_downgrade(lambda point, reason, at: heard.append((point, reason)))
    other = sds.Client.shared(path, CAPACITY)
    other.enter("p", now_ms=T0).exit()
    assert heard == []
    client.enter("p", now_ms=T0).exit()
    assert heard == [("p", "VISIT")]


_FORK_CHILD_JUST_EXITS = """
import json, os, sys
import sds
client = sds.Client.shared(sys.argv[1], 64)
client.set_strategy("p", sds.Strategy(concurrent_threshold=1))
held = client.enter("p")
pid = os.fork()
if pid == 0:
    sys.exit(0)  # the interpreter's shutdown finalises the inherited entry
_, status = os.waitpid(pid, 0)
second = client.enter("p")
print(json.dumps({"status": status, "stats": client.stats("p"), "second": second.reason}))
second.exit()
held.exit()
print(json.dumps(client.stats("p")))
"""


def test_a_fork_child_that_just_exits_leaves_its_parents_entry_alone(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", _FORK_CHILD_JUST_EXITS, str(tmp_path / "t.sds")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # no ResourceWarning from the child
    during, after = (json.loads(line) for line in run.stdout.splitlines())
    assert during["status"] == 0
    assert during["stats"]["concurrent"] == 1
    assert during["stats"]["exception"] == 0
    assert during["second"] == "CONCURRENT"
    assert after["concurrent"] == 0
    assert after["exception"] == 0


@pytest.mark.parametrize("how", ["exit", "with", "error"])
def test_a_fork_childs_exit_of_an_inherited_entry_counts_nothing(tmp_path: Path, how: str) -> None:
    client = sds.Client.shared(str(tmp_path / "t.sds"), CAPACITY)
    client.set_strategy("p", sds.Strategy(concurrent_threshold=1))
    held = client.enter("p", now_ms=T0)
    pid = os.fork()
    if pid == 0:  # the child: any exception must still end it
        code = 1
        try:
            if how == "exit":
                held.exit(now_ms=T0 + 10)
            elif how == "with":
                with held:
                    pass
            else:
                held.error(ValueError("in the child"))
                held.exit(now_ms=T0 + 10)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    stats = client.stats("p", now_ms=T0 + 10)
    assert (stats["concurrent"], stats["exception"]) == (1, 0)
    assert not held.exited
    refused = client.enter("p", now_ms=T0 + 10)
    assert refused.reason == "CONCURRENT"
    refused.exit()
    held.exit(now_ms=T0 + 10)
    assert client.stats("p", now_ms=T0 + 10)["concurrent"] == 0
