//! Host-wide roles: one holder per file across processes and within one,
//! handed over when the holder drops it or is killed with SIGKILL, never
//! inherited by a fork child.

mod common;

use std::time::Duration;

use common::{child_role, open, report, var, wait_until, Kid, TempDir};
use sds_shm::Role;

const LONG: Duration = Duration::from_secs(20);

/// The children's side: does what `ROLE` says; nothing in the parent run.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    let shared = open(var("TABLE"));
    match role.as_str() {
        "reporter" => {
            let guard = shared.try_take_role(Role::Reporter).unwrap();
            report("took", guard.is_some());
            std::thread::sleep(LONG);
        }
        "fork" => {
            let guard = shared.try_take_role(Role::Syncer).unwrap();
            assert!(guard.is_some());
            let dropped = std::path::PathBuf::from(var("DIR")).join("dropped");
            // SAFETY: the child only calls the role functions and exits.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // Held by the living parent: not ours, and not free.
                let while_held = shared.try_take_role(Role::Syncer).unwrap().is_some();
                // Dropping the inherited guard must not touch the parent's.
                drop(guard);
                wait_until(LONG, "the parent's drop", || dropped.exists());
                // Released by the parent: the child takes it, though its
                // memory still says the parent's guard holds it.
                let after = shared.try_take_role(Role::Syncer).unwrap().is_some();
                unsafe { libc::_exit(i32::from(while_held) * 2 + i32::from(after)) };
            }
            std::thread::sleep(Duration::from_millis(50));
            // The child's drop of its copy left the parent holding the role.
            let here_again = shared.try_take_role(Role::Syncer).unwrap().is_some();
            report("parent_still_holds", !here_again);
            drop(guard);
            std::fs::write(&dropped, b"").unwrap();
            let mut status = 0;
            // SAFETY: waits for the child forked above.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            report("child", libc::WEXITSTATUS(status));
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn one_holder_per_process_and_per_role() {
    let dir = TempDir::new("roles-local");
    let path = dir.join("table");
    let a = open(path.to_str().unwrap());
    let b = open(path.to_str().unwrap());
    let reporter = a
        .try_take_role(Role::Reporter)
        .unwrap()
        .expect("free at first");
    assert_eq!(reporter.role(), Role::Reporter);
    // The same process, through another handle of the same file: refused.
    assert!(b.try_take_role(Role::Reporter).unwrap().is_none());
    // Another role is independent.
    let syncer = b
        .try_take_role(Role::Syncer)
        .unwrap()
        .expect("syncer is free");
    drop(reporter);
    assert!(b.try_take_role(Role::Reporter).unwrap().is_some());
    drop(syncer);
}

#[test]
fn a_killed_holder_hands_the_role_over() {
    let dir = TempDir::new("roles-kill");
    let path = dir.join("table");
    let env = [("TABLE", path.display().to_string())];
    let mut first = Kid::spawn("reporter", &env);
    assert_eq!(first.value("took"), "true");
    let here = open(path.to_str().unwrap());
    assert!(here.try_take_role(Role::Reporter).unwrap().is_none());
    let second = Kid::spawn("reporter", &env);
    assert_eq!(second.value("took"), "false");
    first.kill();
    // The kernel dropped the dead holder's lock: the next try takes it.
    let mut guard = None;
    wait_until(LONG, "the role freed by the kill", || {
        guard = here.try_take_role(Role::Reporter).unwrap();
        guard.is_some()
    });
    drop(second);
}

#[test]
fn a_fork_child_does_not_inherit_a_role() {
    let dir = TempDir::new("roles-fork");
    let path = dir.join("table");
    let mut kid = Kid::spawn(
        "fork",
        &[
            ("TABLE", path.display().to_string()),
            ("DIR", dir.path().display().to_string()),
        ],
    );
    assert_eq!(kid.value("parent_still_holds"), "true");
    // 1: not taken while the parent held it, taken once the parent let go.
    assert_eq!(kid.value("child"), "1");
    assert!(kid.wait_success(LONG));
}
