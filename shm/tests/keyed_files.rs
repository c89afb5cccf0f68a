//! Key table files: shared by processes (and fork children) under one rule;
//! another rule, capacity, cell layout or kind of file refused naming what
//! differs, the file left as it was; an `inFlight` rule's file gives back
//! the units of a process (or fork child) that died holding them.

mod common;

use std::fs;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{child_role, report, var, Kid, TempDir, NOW};
use sds_core::keyed::{KeyError, KeyRule, KeyRuleBuilder, KeyRuleKind};
use sds_core::{ErrorCode, LayoutField, Value};
use sds_shm::{Error, Options, SharedFile, SharedKeyTable};

const KEYS: usize = 100;

/// A rule of `kind` from `(field, value)` pairs and `(key, limit)`
/// exceptions.
fn rule(kind: KeyRuleKind, fields: &[(&str, i64)], exceptions: &[(&[u8], i64)]) -> KeyRule {
    let mut builder = KeyRuleBuilder::new(kind);
    for &(field, value) in fields {
        builder.set(field, Value::from(value)).unwrap();
    }
    for &(key, limit) in exceptions {
        builder.except(key, Value::from(limit)).unwrap();
    }
    builder.build().unwrap()
}

/// 10 per window of 1 s.
fn window() -> KeyRule {
    rule(
        KeyRuleKind::FixedWindow,
        &[("limit", 10), ("periodMs", 1000)],
        &[],
    )
}

/// 10 per s, bursts of 20, and the key `vip` 100 per s.
fn rate() -> KeyRule {
    rule(
        KeyRuleKind::Rate,
        &[("limit", 10), ("periodMs", 1000), ("burst", 20)],
        &[(b"vip", 100)],
    )
}

fn open(path: &Path, rule: KeyRule) -> Result<SharedKeyTable, Error> {
    SharedKeyTable::open(path, KEYS, rule, &Options::new())
}

/// A table of `rule` created in the file `keys` of a fresh directory
/// `name` (removed when the `TempDir` is dropped), and the file's path.
fn created(name: &str, rule: KeyRule) -> (TempDir, PathBuf, SharedKeyTable) {
    let dir = TempDir::new(name);
    let path = dir.join("keys");
    let table = open(&path, rule).unwrap();
    assert!(table.created());
    (dir, path, table)
}

/// How many of `tries` calls of cost 1 on `key` at `NOW` are admitted.
fn admitted(table: &SharedKeyTable, key: &[u8], tries: u32) -> u32 {
    let decide = |_| table.table().decide(key, NOW, 1).unwrap().admitted;
    (0..tries).map(decide).filter(|&a| a).count() as u32
}

/// Fails the test unless `$result` is an error that matches `$pattern`.
macro_rules! refused {
    ($result:expr, $pattern:pat) => {
        match $result {
            Err($pattern) => {}
            other => panic!("{other:?}"),
        }
    };
}

/// A child: opens the key file and tries 10 calls on key `k`; or
/// ("hold") opens the in-flight file, sweeps, takes a unit of key `a` and
/// holds it until killed.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    if role == "hold" {
        let table = open(Path::new(&var("KEYS")), in_flight()).unwrap();
        report("swept", table.reclaim_dead().unwrap());
        report("remaining", table.decide(b"a", NOW, 1).unwrap().remaining);
        std::thread::sleep(std::time::Duration::from_secs(60));
        return;
    }
    let table = open(Path::new(&var("KEYS")), window()).unwrap();
    report("created", table.created());
    report("admitted", admitted(&table, b"k", 10));
}

#[test]
fn processes_count_on_one_key_in_one_file() {
    let (_dir, path, table) = created("keys-share", window());
    assert_eq!(table.capacity(), KEYS);
    // Counted in the file from here on, by every process.
    table.table().count_decisions();
    assert_eq!(admitted(&table, b"k", 4), 4);
    let kid = Kid::spawn("try", &[("KEYS", path.display().to_string())]);
    assert_eq!(kid.value("created"), "false");
    assert_eq!(kid.value("admitted"), "6", "10 per window, 4 taken here");
    assert_eq!(admitted(&table, b"k", 1), 0);
    let stats = table.table().stats();
    assert_eq!((stats.resident, stats.capacity), (1, KEYS as u64));
    // Exact size: header, counters, 25 buckets.
    assert_eq!(fs::metadata(&path).unwrap().len(), 4096 + 576 + 25 * 64);
    // 4 admitted here, 6 in the child: counted in the file, whichever
    // process decided.
    assert_eq!(stats.admitted, 10);
}

#[test]
fn a_fork_child_decides_on_its_parents_table() {
    let dir = TempDir::new("keys-fork");
    let table = open(&dir.join("keys"), window()).unwrap();
    assert_eq!(admitted(&table, b"f", 3), 3);
    // SAFETY: the child only decides (atomics on the mapping, no lock, no
    // allocation) and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let n = admitted(&table, b"f", 10);
        // SAFETY: ends the child at once, running nothing of the parent's.
        unsafe { libc::_exit(n as i32) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status));
    assert_eq!(libc::WEXITSTATUS(status), 7, "the child took the 7 left");
    assert_eq!(table.table().peek(b"f", NOW).remaining, 0);
}

#[test]
fn another_rule_or_capacity_is_refused_naming_the_field() {
    let dir = TempDir::new("keys-rule");
    let path = dir.join("keys");
    let first = open(&path, rate()).unwrap();
    assert_eq!(admitted(&first, b"a", 5), 5);
    let fields = [("limit", 10), ("periodMs", 1000), ("burst", 20)];
    let with = |field: &str, value: i64| {
        let mut fields = fields;
        fields.iter_mut().find(|f| f.0 == field).unwrap().1 = value;
        fields
    };
    let vip: &[(&[u8], i64)] = &[(b"vip", 100)];
    let cases: [(KeyRule, &str, &str, &str); 6] = [
        (window(), "kind", "fixedWindow", "rate"),
        (
            rule(KeyRuleKind::Rate, &with("limit", 11), vip),
            "limit",
            "11",
            "10",
        ),
        (
            rule(KeyRuleKind::Rate, &with("periodMs", 2000), vip),
            "periodMs",
            "2000",
            "1000",
        ),
        (
            rule(KeyRuleKind::Rate, &with("burst", 21), vip),
            "burst",
            "21",
            "20",
        ),
        (
            rule(KeyRuleKind::Rate, &fields, &[(b"vip", 99)]),
            "exceptions",
            "",
            "",
        ),
        (rule(KeyRuleKind::Rate, &fields, &[]), "exceptions", "", ""),
    ];
    for (other, name, want_ours, want_theirs) in cases {
        let e = open(&path, other).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LayoutMismatch);
        let Error::KeyMismatch {
            what,
            field,
            ours,
            theirs,
            ..
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!((*what, *field), ("rule", name), "{e}");
        if name == "exceptions" {
            assert!(
                ours.starts_with("digest ") && theirs.starts_with("digest "),
                "{e}"
            );
            assert_ne!(ours, theirs);
        } else {
            assert_eq!((ours.as_str(), theirs.as_str()), (want_ours, want_theirs));
        }
    }
    let e = SharedKeyTable::open(&path, 200, rate(), &Options::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: key table layout differs in capacity: the file has 100, this process needs 200",
            path.display()
        )
    );
    // Nothing was written: the same rule attaches, with the keys' state.
    let again = open(&path, rate()).unwrap();
    assert!(!again.created());
    assert_eq!(again.table().peek(b"a", NOW).remaining, 15);
    assert_eq!(again.rule(), &rate());
}

/// 3 units at once per key, the key `pool` 10.
fn in_flight() -> KeyRule {
    rule(KeyRuleKind::InFlight, &[("limit", 3)], &[(b"pool", 10)])
}

#[test]
fn an_in_flight_file_gives_back_the_units_of_a_process_killed_holding_them() {
    let (_dir, path, table) = created("keys-inflight", in_flight());
    // Header, counters, 25 buckets; 127 process slots, then from a page
    // boundary 127 ledger rows of 1 024 entries of 32 bytes.
    let slots_end: u64 = 4096 + 64 + 25 * 64 + 127 * 32;
    let len = slots_end.next_multiple_of(4096) + 127 * 1024 * 32;
    assert_eq!(fs::metadata(&path).unwrap().len(), len);
    assert!(table.decide(b"a", NOW, 2).unwrap().admitted);
    assert_eq!(table.held_here(), 2);
    // Read through the descriptor this process keeps: its slot stays
    // locked (a child's sweep below takes nothing of this process's).
    let read = SharedKeyTable::read_rule(&path, &Options::new()).unwrap();
    assert_eq!(read, in_flight());
    let mut kid = Kid::spawn("hold", &[("KEYS", path.display().to_string())]);
    assert_eq!(kid.value("swept"), "0", "this process is alive");
    assert_eq!(kid.value("remaining"), "0");
    assert!(!table.decide(b"a", NOW, 1).unwrap().admitted);
    kid.kill();
    // Refused while a dead process holds a unit: the call gives it back
    // and decides again (a refused call sweeps at most every 100 ms per
    // process, and the one above did).
    std::thread::sleep(std::time::Duration::from_millis(110));
    assert!(table.decide(b"a", NOW, 1).unwrap().admitted);
    assert_eq!(table.table().peek(b"a", NOW).remaining, 0);
    assert_eq!(table.reclaim_dead().unwrap(), 0, "given back once");
    // A process gives back only its own units, and no more than it holds.
    assert!(table.release(b"a", 5).unwrap());
    assert!(!table.release(b"a", 1).unwrap());
    assert_eq!(table.table().peek(b"a", NOW).remaining, 3);
    assert_eq!(table.held_here(), 0);
}

#[test]
fn a_fork_child_takes_a_slot_of_its_own_and_its_units_come_back() {
    let dir = TempDir::new("keys-inflight-fork");
    let table = open(&dir.join("keys"), in_flight()).unwrap();
    assert!(table.decide(b"pool", NOW, 4).unwrap().admitted);
    // SAFETY: the child decides on this table only (its own process
    // attachment, which no other thread uses) and leaves with `_exit`,
    // holding its units.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let d = table.decide(b"pool", NOW, 6);
        let code = match d {
            Ok(d) if d.admitted && table.held_here() == 6 => 0,
            _ => 1,
        };
        // SAFETY: ends the child at once, running nothing of the parent's.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status));
    assert_eq!(libc::WEXITSTATUS(status), 0, "the child held 6 in its row");
    assert_eq!(table.held_here(), 4, "the parent's row is its own");
    assert_eq!(table.reclaim_dead().unwrap(), 6);
    assert_eq!(table.table().peek(b"pool", NOW).remaining, 6);
}

#[test]
fn a_capacity_out_of_range_is_refused() {
    let dir = TempDir::new("keys-capacity");
    for capacity in [0, (1 << 28) + 1] {
        let e = SharedKeyTable::open(dir.join("keys"), capacity, window(), &Options::new());
        refused!(
            e,
            Error::Key {
                source: KeyError::InvalidCapacity,
                ..
            }
        );
    }
    assert!(!dir.join("keys").exists());
}

#[test]
fn a_point_table_is_not_a_key_table_nor_the_other_way_round() {
    let dir = TempDir::new("keys-kind");
    let points = dir.join("points");
    let attached = SharedFile::open(&points, 16, &Options::new()).unwrap();
    // Attached here: refused before a second descriptor is opened (closing
    // it would drop the attachment's locks).
    let kind = |r| {
        matches!(
            r,
            Err(Error::OtherKind {
                theirs: "point table",
                ours: "key table",
                ..
            })
        )
    };
    assert!(kind(open(&points, window())));
    assert!(attached.reclaim_dead().is_ok());
    drop(attached);
    // Not attached: refused by its magic.
    assert!(kind(open(&points, window())));
    let keys = dir.join("keys");
    drop(open(&keys, window()).unwrap());
    let e = SharedFile::open(&keys, 16, &Options::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: holds a key table, not a point table (refused)",
            keys.display()
        )
    );
}

/// A fresh key file, closed, in a directory named after `name`, with each
/// `(word, value)` of `words` written over it.
fn patched(name: &str, words: &[(u64, u64)]) -> (TempDir, PathBuf) {
    let dir = TempDir::new(name);
    let path = dir.join("keys");
    drop(open(&path, window()).unwrap());
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    let write = |&(word, value): &(u64, u64)| file.write_all_at(&value.to_ne_bytes(), word * 8);
    assert!(words.iter().map(write).all(|written| written.is_ok()));
    (dir, path)
}

#[test]
fn another_cell_layout_byte_order_or_version_is_refused_untouched() {
    // Word 2 + 2: the cell size.
    let (_d, path) = patched("keys-cell", &[(4, 32)]);
    let before = fs::read(&path).unwrap();
    let e = open(&path, window()).unwrap_err();
    assert!(
        matches!(&e, Error::KeyMismatch { what: "layout", field: "cell_size", ours, theirs, .. }
            if ours == "16" && theirs == "32"),
        "{e:?}"
    );
    assert_eq!(fs::read(&path).unwrap(), before);
    let (_d, path) = patched("keys-order", &[(1, 99), (16, 0x0403_0201)]);
    refused!(
        open(&path, window()),
        Error::LayoutMismatch {
            field: LayoutField::ByteOrder,
            ..
        }
    );
    let (_d, path) = patched("keys-version", &[(1, 99)]);
    refused!(
        open(&path, window()),
        Error::WrongVersion {
            ours: 3,
            theirs: 99,
            ..
        }
    );
    let (_d, path) = patched("keys-random", &[(0, 0x1234_5678)]);
    refused!(open(&path, window()), Error::NotATable { .. });
    // Word 2: the core's key cell encoding. Files made before it had one
    // hold the point table's layout version (3) there.
    let (_d, path) = patched("keys-cells", &[(2, 3)]);
    let e = open(&path, window()).unwrap_err();
    assert!(
        matches!(&e, Error::KeyMismatch { what: "layout", field: "key_layout_version", ours, theirs, .. }
            if ours == "2" && theirs == "3"),
        "{e:?}"
    );
    refused!(
        SharedKeyTable::read_rule(&path, &Options::new()),
        Error::KeyMismatch {
            field: "key_layout_version",
            ..
        }
    );
}

#[test]
fn a_process_that_does_not_know_the_rule_reads_it_from_the_file() {
    let dir = TempDir::new("keys-read-rule");
    let stores = rule(
        KeyRuleKind::FixedWindow,
        &[
            ("limit", 100),
            ("periodMs", 60_000),
            ("windowFromFirstHit", 1),
            ("countRefused", 1),
        ],
        &[(b"vip", 1000), (b"bot", 1)],
    );
    for (i, made_with) in [rate(), stores, window()].into_iter().enumerate() {
        let path = dir.join(&format!("keys-{i}"));
        let maker = open(&path, made_with).unwrap();
        assert!(maker.table().decide(b"vip", NOW, 1).unwrap().admitted);
        let read = SharedKeyTable::read_rule(&path, &Options::new()).unwrap();
        assert_eq!(read, made_with);
        let listed: Vec<_> = read.exceptions().map(|e| e.limit).collect();
        let made: Vec<_> = made_with.exceptions().map(|e| e.limit).collect();
        assert_eq!(listed, made);
        // Opened with the rule read back: the same table, the same keys.
        let reader = open(&path, read).unwrap();
        assert!(!reader.created());
        assert_eq!(
            reader.table().peek(b"vip", NOW),
            maker.table().peek(b"vip", NOW)
        );
    }
    let points = dir.join("points");
    drop(SharedFile::open(&points, 16, &Options::new()).unwrap());
    refused!(
        SharedKeyTable::read_rule(&points, &Options::new()),
        Error::NotATable { .. }
    );
    refused!(
        SharedKeyTable::read_rule(dir.join("none"), &Options::new()),
        Error::Io { .. }
    );
    // A limit changed under the same digest: the header does not add up.
    let (_d, path) = patched("keys-rule-words", &[(41, 11)]);
    refused!(
        SharedKeyTable::read_rule(&path, &Options::new()),
        Error::Corrupt { .. }
    );
}

#[test]
fn truncated_oversized_and_half_written_files() {
    let (_d, path) = patched("keys-size", &[]);
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len - 64).unwrap();
    refused!(open(&path, window()), Error::Truncated { .. });
    file.set_len(len + 64).unwrap();
    refused!(open(&path, window()), Error::Oversized { .. });
    // Not ready (its creator died before the end): made again.
    file.set_len(len).unwrap();
    file.write_all_at(&0u64.to_ne_bytes(), 32 * 8).unwrap();
    let table = open(&path, window()).unwrap();
    assert!(table.created());
    assert_eq!(admitted(&table, b"k", 11), 10);
}

#[test]
fn the_file_machinery_of_points_guards_key_files_too() {
    let (dir, path) = patched("keys-mode", &[]);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    refused!(
        open(&path, window()),
        Error::ModeTooWide { mode: 0o644, .. }
    );
    let link = dir.join("link");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    refused!(open(&link, window()), Error::Symlink { .. });
    let group = dir.join("group");
    let options = Options::new().group_access(true);
    let table = SharedKeyTable::open(&group, KEYS, window(), &options).unwrap();
    let mode = fs::metadata(table.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & !0o660, 0, "{mode:o}");
}
