//! Files that are not this build's table: each refused with its own error,
//! never reinterpreted or overwritten; and the files the protocol takes over.

mod common;

use std::fs;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::TempDir;
use sds_core::LayoutField;
use sds_shm::{Error, Options, SharedFile};

const CAPACITY: usize = 64;

fn open(path: &Path) -> Result<SharedFile, Error> {
    SharedFile::open(path, CAPACITY, &Options::new())
}

/// A fresh table file, detached, in a directory named after `name`.
fn table_file(name: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new(name);
    let path = dir.join("table");
    let shared = open(&path).unwrap();
    assert!(shared.created());
    (dir, path)
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

/// [`table_file`] with each `(word, value)` of `words` written over it.
fn patched(name: &str, words: &[(u64, u64)]) -> (TempDir, PathBuf) {
    let (dir, path) = table_file(name);
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    for (word, value) in words {
        file.write_all_at(&value.to_ne_bytes(), word * 8).unwrap();
    }
    (dir, path)
}

#[test]
fn another_capacity_is_named() {
    let (_dir, path) = table_file("capacity");
    refused!(
        SharedFile::open(&path, 128, &Options::new()),
        Error::LayoutMismatch {
            field: LayoutField::Capacity,
            ours: 128,
            theirs: 64,
            ..
        }
    );
}

#[test]
fn another_slot_size_is_named() {
    // Word 4: the descriptor's slot size (its third field, from word 2).
    let (_dir, path) = patched("slot", &[(4, 8)]);
    refused!(
        open(&path),
        Error::LayoutMismatch {
            field: LayoutField::SlotSize,
            theirs: 8,
            ..
        }
    );
    let message = open(&path).unwrap_err().to_string();
    assert!(message.contains("slot_size: the file has 8"), "{message}");
}

#[test]
fn another_byte_order_is_named_before_the_version() {
    // Word 16: the descriptor's byte order mark, as a machine of the other
    // byte order stores it; and the version (word 1) in that order too.
    let other_order = [(16, 0x0102_0304u64.swap_bytes()), (1, 2u64.swap_bytes())];
    let (_dir, path) = patched("order", &other_order);
    refused!(
        open(&path),
        Error::LayoutMismatch {
            field: LayoutField::ByteOrder,
            ..
        }
    );
}

#[test]
fn another_version_is_refused() {
    let (_dir, path) = patched("version", &[(1, 99)]);
    refused!(
        open(&path),
        Error::WrongVersion {
            ours: 3,
            theirs: 99,
            ..
        }
    );
}

#[test]
fn truncated_and_oversized_files_are_refused() {
    let (_dir, path) = table_file("size");
    let len = fs::metadata(&path).unwrap().len();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 100).unwrap();
    match open(&path) {
        Err(Error::Truncated {
            expected, found, ..
        }) => assert_eq!((expected, found), (len, len - 100)),
        other => panic!("{other:?}"),
    }
    file.set_len(len + 4096).unwrap();
    match open(&path) {
        Err(Error::Oversized {
            expected, found, ..
        }) => assert_eq!((expected, found), (len, len + 4096)),
        other => panic!("{other:?}"),
    }
    // Shorter than a header: not something a creator leaves.
    file.set_len(100).unwrap();
    refused!(open(&path), Error::Truncated { found: 100, .. });
}

#[test]
fn random_bytes_are_not_a_table_and_stay_untouched() {
    let dir = TempDir::new("random");
    let path = dir.join("random");
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    fs::write(&path, &bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    refused!(open(&path), Error::NotATable { .. });
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_half_written_file_is_initialised_again() {
    let dir = TempDir::new("half");
    // A creator died after sizing (all zeros) or after the magic.
    for magic in [[0u8; 8], *b"SDSTABLE"] {
        let path = dir.join("half");
        let mut bytes = vec![0u8; 50_000];
        bytes[..8].copy_from_slice(&magic);
        fs::write(&path, &bytes).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let shared = open(&path).unwrap();
        assert!(shared.created());
        assert_eq!(shared.slots().len(), CAPACITY);
        let table = shared.table().unwrap();
        table.insert(b"p").unwrap();
        assert_eq!(table.len(), 1);
        drop(shared);
        // Ready now: attached, not initialised again.
        assert!(!open(&path).unwrap().created());
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_symlink_is_refused() {
    let (dir, target) = table_file("symlink");
    let link = dir.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    refused!(open(&link), Error::Symlink { .. });
    let dangling = dir.join("dangling");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    refused!(open(&dangling), Error::Symlink { .. });
    assert!(!dir.join("nowhere").exists());
}

#[test]
fn a_directory_is_refused() {
    let dir = TempDir::new("dir");
    refused!(
        open(dir.path()),
        Error::NotRegularFile {
            kind: "directory",
            ..
        }
    );
}

#[test]
fn a_mode_wider_than_asked_is_refused() {
    let (_dir, path) = table_file("mode");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    refused!(
        open(&path),
        Error::ModeTooWide {
            mode: 0o644,
            allowed: 0o600,
            ..
        }
    );
    fs::set_permissions(&path, fs::Permissions::from_mode(0o660)).unwrap();
    refused!(open(&path), Error::ModeTooWide { .. });
    let group = Options::new().group_access(true);
    assert!(SharedFile::open(&path, CAPACITY, &group).is_ok());
}

#[test]
fn another_users_file_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: chown to another uid needs root");
        return;
    }
    let (_dir, path) = table_file("owner");
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    refused!(
        open(&path),
        Error::WrongOwner {
            owner: 65534,
            euid: 0,
            ..
        }
    );
}

#[test]
fn a_capacity_out_of_range_is_refused() {
    let dir = TempDir::new("zero");
    for capacity in [0, sds_core::MAX_CAPACITY + 1] {
        let opened = SharedFile::open(dir.join("t"), capacity, &Options::new());
        refused!(opened, Error::InvalidCapacity { .. });
    }
    assert!(!dir.join("t").exists());
}

#[test]
fn one_attachment_per_file_per_process() {
    let dir = TempDir::new("twice");
    let path = dir.join("table");
    let first = open(&path).unwrap();
    let second = open(&path).unwrap();
    let owner = first.owner().unwrap();
    assert_eq!(second.owner().unwrap(), owner);
    assert_eq!(first.slots().as_ptr(), second.slots().as_ptr());
    let wider = SharedFile::open(&path, 128, &Options::new());
    refused!(
        wider,
        Error::LayoutMismatch {
            field: LayoutField::Capacity,
            ..
        }
    );
    // Dropping one keeps the other's registration (its lock) alive.
    drop(first);
    assert!(second.is_alive(owner));
    let t = second.table().unwrap();
    t.insert(b"still").unwrap();

    drop(second);
    // Detached: a new attachment takes a slot again, the first one free,
    // at its next generation.
    let again = open(&path).unwrap();
    assert_eq!(again.registration().unwrap().slot, 0);
    assert_eq!(again.owner().unwrap(), 1 + 2 * 256);
}
