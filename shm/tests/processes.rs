//! Real processes on one table file: concurrent creation, a creator killed
//! half-way, process slots across kill -9, fork children.

mod common;

use std::time::{Duration, Instant};

use common::{child_role, open, report, var, wait_until, Kid, TempDir, CAPACITY, NOW};
use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::{Flags, Outcome, Value};
use sds_shm::{Error, Options, SharedFile, SharedKeyTable};

const LONG: Duration = Duration::from_secs(20);

/// The children's side: does what `ROLE` says; nothing in the parent run.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    match role.as_str() {
        "create" => create_and_share(),
        "park" => {
            // Parks inside `open` (test hook); killed there.
            let _ = SharedFile::open(var("TABLE"), CAPACITY, &Options::new());
            report("error", "open returned");
        }
        "hold" => {
            let shared = open(var("TABLE"));
            let registration = shared.registration().unwrap();
            report("owner", registration.owner);
            report("slot", registration.slot);
            report("died", registration.previous_owner_died);
            std::thread::sleep(LONG);
        }
        "detach" => {
            let shared = open(var("TABLE"));
            report("owner", shared.owner().unwrap());
            report("slot", shared.registration().unwrap().slot);
        }
        "fork" => fork_child_registers(),
        "fork-while-scanning" => fork_while_a_thread_scans(),
        "fork-while-opening" => fork_while_a_thread_opens(),
        other => panic!("unknown role {other}"),
    }
}

/// Waits for the go file, opens, enters its own point, waits for all, then
/// finds every other child's point and its visit.
fn create_and_share() {
    let dir = std::path::PathBuf::from(var("DIR"));
    let index: usize = var("INDEX").parse().unwrap();
    let children: usize = var("CHILDREN").parse().unwrap();
    wait_until(LONG, "go", || dir.join("go").exists());
    let shared = open(var("TABLE"));
    report("created", shared.created());
    report("slot", shared.registration().unwrap().slot);
    let table = shared.table().unwrap();
    let name = format!("from-{index}");
    let entry = table.enter(name.as_bytes(), NOW, Flags::NONE).unwrap();
    table.exit(&entry, NOW, Outcome::Ok).unwrap();
    std::fs::write(dir.join(format!("done-{index}")), b"").unwrap();
    wait_until(LONG, "the others", || {
        (0..children).all(|i| dir.join(format!("done-{i}")).exists())
    });
    // `lookup` and `stats` walk as far as any process's inserts went (the
    // table's state is in the file).
    let seen = (0..children)
        .filter(|i| {
            table
                .stats(format!("from-{i}").as_bytes(), NOW)
                .unwrap()
                .visit
                == 1
        })
        .count();
    report("seen", seen);
    report("points", table.slots_in_use());
    report("len", table.len());
}

trait InUse {
    fn slots_in_use(&self) -> usize;
}

impl InUse for sds_shm::Table<'_> {
    /// Points a fresh table of this process finds by id.
    fn slots_in_use(&self) -> usize {
        (0..CAPACITY as u32)
            .filter(|&i| self.point(sds_core::PointId::from_index(i)).is_ok())
            .count()
    }
}

#[test]
fn many_processes_create_one_table_and_share_it() {
    const CHILDREN: usize = 8;
    let dir = TempDir::new("create");
    let table = dir.join("table");
    let kids: Vec<Kid> = (0..CHILDREN)
        .map(|i| {
            Kid::spawn(
                "create",
                &[
                    ("TABLE", table.display().to_string()),
                    ("DIR", dir.path().display().to_string()),
                    ("INDEX", i.to_string()),
                    ("CHILDREN", CHILDREN.to_string()),
                ],
            )
        })
        .collect();
    std::fs::write(dir.join("go"), b"").unwrap();
    let created: Vec<bool> = kids.iter().map(|k| k.value("created") == "true").collect();
    assert_eq!(created.iter().filter(|&&c| c).count(), 1, "{created:?}");
    let mut slots: Vec<usize> = kids
        .iter()
        .map(|k| k.value("slot").parse().unwrap())
        .collect();
    slots.sort_unstable();
    assert_eq!(slots, (0..CHILDREN).collect::<Vec<_>>());
    for kid in &kids {
        assert_eq!(kid.value("seen"), CHILDREN.to_string());
        assert_eq!(kid.value("points"), CHILDREN.to_string());
        assert_eq!(kid.value("len"), CHILDREN.to_string());
    }
}

#[test]
fn a_creator_killed_half_way_is_replaced_within_the_wait() {
    let dir = TempDir::new("park");
    let table = dir.join("table");
    let path = table.display().to_string();
    let mut creator = Kid::spawn(
        "park",
        &[
            ("TABLE", path.clone()),
            (sds_shm::hooks::PARK_AFTER_TRUNCATE, "1".into()),
        ],
    );
    assert_eq!(
        creator.report(LONG),
        sds_shm::hooks::PARKED.trim_start_matches("@@")
    );
    // While it lives, its init lock holds the others off, for a bounded wait.
    let short = Options::new().init_timeout(Duration::from_millis(200));
    let started = Instant::now();
    match SharedFile::open(&table, CAPACITY, &short) {
        Err(Error::InitTimeout { path: p, .. }) => assert_eq!(p, table),
        other => panic!("expected InitTimeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    creator.kill();
    let started = Instant::now();
    let shared = open(&path);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        shared.created(),
        "the half-written file is initialised again"
    );
    let t = shared.table().unwrap();
    let entry = t.enter(b"after", NOW, Flags::NONE).unwrap();
    t.exit(&entry, NOW, Outcome::Ok).unwrap();
    assert_eq!(t.stats(b"after", NOW).unwrap().visit, 1);
}

#[test]
fn slots_of_dead_processes_are_reused_and_live_ones_kept() {
    let dir = TempDir::new("slots");
    let table = dir.join("table");
    let path = table.display().to_string();
    let env = [("TABLE", path.clone())];
    let shared = open(&path);
    let me = shared.owner().unwrap();
    // Slot 0, first generation.
    assert_eq!(me, 1 + 256);
    assert_eq!(shared.registration().unwrap().slot, 0);
    assert!(shared.is_alive(me));

    let mut first = Kid::spawn("hold", &env);
    let a: u32 = first.value("owner").parse().unwrap();
    assert_eq!(first.value("slot"), "1");
    assert_eq!(a, 2 + 256);
    assert_eq!(first.value("died"), "false");
    assert!(shared.is_alive(a));
    assert!(!shared.is_alive(3 + 256), "a slot nobody took");
    assert!(!shared.is_alive(2), "slot 1 at a generation it is not at");
    assert!(!shared.is_alive(0) && !shared.is_alive(u32::MAX));

    first.kill();
    assert!(!shared.is_alive(a), "kill -9 drops the slot's lock");
    let second = Kid::spawn("hold", &env);
    let b: u32 = second.value("owner").parse().unwrap();
    assert_eq!(second.value("slot"), "1", "the dead slot is reused");
    assert_eq!(
        second.value("died"),
        "true",
        "and its previous holder seen dead"
    );
    assert_eq!(b, 2 + 2 * 256, "at the next generation");
    assert!(shared.is_alive(b));
    assert!(
        !shared.is_alive(a),
        "the dead holder's id stays dead while its slot has a new holder"
    );

    // A clean detach frees its slot without a death to take over.
    let mut detached = Kid::spawn("detach", &env);
    let c: u32 = detached.value("owner").parse().unwrap();
    assert_eq!(detached.value("slot"), "2");
    assert!(detached.wait_success(LONG));
    assert!(!shared.is_alive(c));
    let third = Kid::spawn("hold", &env);
    assert_eq!(third.value("owner"), (3 + 2 * 256).to_string());
    assert_eq!(third.value("slot"), "2");
    assert_eq!(third.value("died"), "false");
    assert!(!shared.is_alive(c));
    // Live holders keep theirs: a newcomer goes past them.
    let fourth = Kid::spawn("hold", &env);
    let _ = fourth.value("owner");
    assert_eq!(fourth.value("slot"), "3");
    assert_eq!(shared.owner().unwrap(), me);
}

/// Opens, forks; the fork child must register its own slot before use.
fn fork_child_registers() {
    let shared = open(var("TABLE"));
    let parent = shared.owner().unwrap();
    // SAFETY: the child only uses this table and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = fork_child_checks(&shared, parent);
        // SAFETY: leaves the fork child without running the parent's
        // destructors or libtest's exit path twice.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked; `status` is a live int.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    report("fork", libc::WEXITSTATUS(status));
    report("parent_slot", shared.registration().unwrap().slot);
    // The child's slot went with it (slot 1, first generation).
    report("child_alive", shared.is_alive(2 + 256));
}

fn fork_child_checks(shared: &SharedFile, parent: u32) -> i32 {
    let Ok(table) = shared.table() else { return 10 };
    let Ok(registration) = shared.registration() else {
        return 11;
    };
    if registration.owner == parent {
        return 12;
    }
    if registration.slot != 1 || registration.owner != 2 + 256 || registration.previous_owner_died {
        return 13;
    }
    if !shared.is_alive(parent) || !shared.is_alive(registration.owner) {
        return 14;
    }
    match table.enter(b"forked", NOW, Flags::NONE) {
        Ok(entry) if table.exit(&entry, NOW, Outcome::Ok).is_ok() => 0,
        _ => 15,
    }
}

/// A thread scans for dead holders without pause (each scan holds the
/// attachment's registration lock) while the main thread forks; each child
/// makes its view (registering under that lock) and leaves.
fn fork_while_a_thread_scans() {
    let shared = open(var("TABLE"));
    let (hung, failed) = fork_beside(
        || {
            shared.reclaim_dead().unwrap();
        },
        |_| shared.table().is_ok(),
    );
    report("hung", hung);
    report("failed", failed);
}

/// A thread opens and closes a point table file and an in-flight key file
/// without pause (each holds this process's list of attachments) while the
/// main thread forks; each child opens files of its own (both lists again)
/// and takes a unit in its key file.
fn fork_while_a_thread_opens() {
    let dir = std::path::PathBuf::from(var("DIR"));
    let in_flight = || {
        let mut builder = KeyRuleBuilder::new(KeyRuleKind::InFlight);
        builder.set("limit", Value::from(4_i64)).unwrap();
        builder.build().unwrap()
    };
    let keys = |name: &str| SharedKeyTable::open(dir.join(name), 16, in_flight(), &Options::new());
    let (hung, failed) = fork_beside(
        || {
            drop(open(dir.join("busy-table")));
            drop(keys("busy-keys").unwrap());
        },
        |child| {
            let opened = SharedFile::open(
                dir.join(format!("table-{child}")),
                CAPACITY,
                &Options::new(),
            );
            let taken = keys(&format!("keys-{child}")).map(|k| k.decide(b"k", NOW, 1));
            let admitted = matches!(taken, Ok(Ok(d)) if d.admitted);
            opened.is_ok_and(|shared| shared.table().is_ok()) && admitted
        },
    );
    report("hung", hung);
    report("failed", failed);
}

/// Forks `FORKS` children while a thread runs `busy` without pause; child
/// `i` runs `child(i)` and leaves, failed unless it returns true. A child
/// still there after 5 s hangs: it is killed and counted. (hung, failed).
fn fork_beside(busy: impl Fn() + Sync, child: impl Fn(usize) -> bool) -> (i32, i32) {
    let forks: usize = var("FORKS").parse().unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut hung, mut failed) = (0, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                busy();
            }
        });
        for i in 0..forks {
            // SAFETY: the child runs `child` and leaves with `_exit`.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                // SAFETY: plain libc calls. A hung child ends itself, even
                // if this process is killed before it can.
                unsafe { libc::alarm(10) };
                let code = i32::from(!child(i));
                // SAFETY: leaves without the parent's destructors.
                unsafe { libc::_exit(code) };
            }
            let start = Instant::now();
            let mut status = 0;
            loop {
                // SAFETY: polls the child just forked; `status` is a live int.
                if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                    failed += i32::from(libc::WEXITSTATUS(status) != 0);
                    break;
                }
                if start.elapsed() > Duration::from_secs(5) {
                    hung += 1;
                    // SAFETY: kills and reaps the child just forked.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, &mut status, 0);
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    (hung, failed)
}

#[test]
fn a_fork_child_never_waits_for_a_lock_its_parent_held_at_the_fork() {
    // With a `Mutex` for the lock, children hung here: 30 forks did not
    // end within the 20 s the parent waits.
    let dir = TempDir::new("fork-scan");
    let table = dir.join("table").display().to_string();
    no_fork_hangs_or_fails("fork-while-scanning", ("TABLE", table));
}

#[test]
fn a_fork_child_opens_tables_while_its_parent_was_opening_others() {
    let dir = TempDir::new("fork-open");
    no_fork_hangs_or_fails(
        "fork-while-opening",
        ("DIR", dir.path().display().to_string()),
    );
}

/// Runs the forking child `role` (with `var` and `SDS_FORK_TEST_FORKS`
/// forks, 200 by default): none of its children hung or failed.
fn no_fork_hangs_or_fails(role: &str, var: (&str, String)) {
    let forks = common::knob("SDS_FORK_TEST_FORKS", 200).to_string();
    let mut kid = Kid::spawn(role, &[var, ("FORKS", forks)]);
    assert_eq!(kid.value("hung"), "0");
    assert_eq!(kid.value("failed"), "0");
    assert!(kid.wait_success(LONG));
}

#[test]
fn a_fork_child_registers_its_own_slot() {
    let dir = TempDir::new("fork");
    let table = dir.join("table");
    let mut kid = Kid::spawn("fork", &[("TABLE", table.display().to_string())]);
    assert_eq!(kid.value("fork"), "0");
    assert_eq!(kid.value("parent_slot"), "0");
    assert_eq!(kid.value("child_alive"), "false");
    assert!(kid.wait_success(LONG));
}
