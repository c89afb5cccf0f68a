//! Mode 0660: workers of one group under different users share one file.
//! Needs root, to run children as other users (skipped otherwise): each
//! child starts as root and drops to its uid, gid and groups before it
//! touches the file.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{child_role, report, var, Kid, TempDir};
use sds_core::Flags;
use sds_shm::{Error, Options, SharedTable};

const CAPACITY: usize = 64;
const T: u64 = 1_000_000;
/// The workers' group; neither root nor the users below are in it otherwise.
const GROUP: u32 = 4321;
const WORKER_A: u32 = 65534;
const WORKER_B: u32 = 65533;

fn group() -> Options {
    Options::new().group_access(true)
}

#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    become_user(
        var("UID").parse().unwrap(),
        var("GID").parse().unwrap(),
        &var("GROUPS")
            .split(',')
            .filter(|g| !g.is_empty())
            .map(|g| g.parse().unwrap())
            .collect::<Vec<u32>>(),
    );
    let path = var("TABLE");
    match role.as_str() {
        "visit" => match SharedTable::open(&path, CAPACITY, &group()) {
            Ok(table) => {
                let view = table.view().unwrap();
                for _ in 0..var("VISITS").parse().unwrap() {
                    let entry = view.enter(b"p", T, Flags::NONE).unwrap();
                    view.exit(&entry, T, sds_core::Outcome::Ok).unwrap();
                }
                report("visits", view.stats(b"p", T).unwrap().visit);
            }
            Err(e) => report("visits", format!("error: {e}")),
        },
        "private" => match SharedTable::open(&path, CAPACITY, &Options::new()) {
            Ok(_) => report("opened", "yes"),
            Err(e) => report("opened", e),
        },
        other => panic!("unknown role {other}"),
    }
}

/// Drops this (root) process to `uid`, primary group `gid` and exactly the
/// supplementary `groups`, with umask 002 as the docs ask for group files.
fn become_user(uid: u32, gid: u32, groups: &[u32]) {
    // SAFETY: plain system calls on this process's credentials; glibc
    // applies them to every thread of the process.
    unsafe {
        assert_eq!(libc::setgroups(groups.len(), groups.as_ptr()), 0);
        assert_eq!(libc::setgid(gid), 0);
        assert_eq!(libc::setuid(uid), 0);
        libc::umask(0o002);
    }
}

fn run(role: &str, table: &Path, uid: u32, gid: u32, groups: &[u32], visits: u32) -> String {
    let groups = groups
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut kid = Kid::spawn(
        role,
        &[
            ("TABLE", table.display().to_string()),
            ("UID", uid.to_string()),
            ("GID", gid.to_string()),
            ("GROUPS", groups),
            ("VISITS", visits.to_string()),
        ],
    );
    let key = if role == "visit" { "visits" } else { "opened" };
    let value = kid.value(key);
    assert!(kid.wait_success(Duration::from_secs(20)));
    value
}

/// A table file that worker A created (its primary group is the workers')
/// and visited `visits` times, in a directory every user may create files
/// in (as /dev/shm is); `None` (the test skipped) without root.
fn group_file(visits: u32) -> Option<(TempDir, PathBuf)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: running children as other users needs root");
        return None;
    }
    let dir = TempDir::new("group");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    let table = dir.join("table.sds");
    let seen = run("visit", &table, WORKER_A, GROUP, &[], visits);
    assert_eq!(seen, visits.to_string());
    Some((dir, table))
}

#[test]
fn two_users_of_one_group_count_in_one_file() {
    // A creates the file, B attaches.
    let Some((_dir, table)) = group_file(3) else {
        return;
    };
    let meta = fs::metadata(&table).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o777),
        (WORKER_A, GROUP, 0o660)
    );
    assert_eq!(run("visit", &table, WORKER_B, WORKER_B, &[GROUP], 4), "7");
    // Without the group mode, the file of another user is still refused.
    assert_eq!(
        run("private", &table, WORKER_B, WORKER_B, &[GROUP], 0),
        format!(
            "{}: owned by uid {WORKER_A}, not by this process's uid {WORKER_B} (refused)",
            table.display()
        )
    );
}

#[test]
fn a_group_file_of_a_group_this_process_is_not_in_is_refused() {
    let Some((_dir, table)) = group_file(1) else {
        return;
    };
    // Root may open any file, so the check is what refuses it here.
    match SharedTable::open(&table, CAPACITY, &group()) {
        Err(Error::WrongOwner {
            owner: WORKER_A,
            euid: 0,
            group: Some(GROUP),
            ..
        }) => {}
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened a group file of a group root is not in"),
    }
}
