//! The workspace's process-test support (`testkit/`), and what the shm
//! tests share: a table file of [`CAPACITY`] points, and words in a shared
//! mapping of their own for counts the test's processes keep together.

// Not every test file uses every helper.
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use sds_core::Strategy;
use sds_shm::{Options, SharedFile};
pub use sds_testkit::*;

/// A time (ms) for tests whose clock stands still.
pub const NOW: u64 = 1_000_000;
/// The points of a test's table file.
pub const CAPACITY: usize = 64;

/// A number from the environment variable `name`, else `default`.
pub fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The role this run of the test binary has (a child's, [`ROLE`]); `None`
/// in the parent run, where `child_main` does nothing.
pub fn child_role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// Opens (or creates) the table file at `path`, [`CAPACITY`] points.
pub fn open(path: impl AsRef<Path>) -> SharedFile {
    SharedFile::open(path, CAPACITY, &Options::new()).unwrap()
}

/// A strategy that admits `limit` requests at once.
pub fn concurrent_limit(limit: i64) -> Strategy {
    Strategy {
        concurrent_threshold: limit,
        ..Strategy::DEFAULT
    }
}

/// The permits the ledger rows of `slots` hold, summed.
pub fn ledger_sum(shared: &SharedFile, slots: impl IntoIterator<Item = usize>) -> u32 {
    slots
        .into_iter()
        .map(|slot| shared.ledger_row(slot).iter().map(|h| h.get()).sum::<u32>())
        .sum()
}

/// xorshift64: a kill schedule, from a seed the test prints or the clock.
pub struct Dice(pub u64);

impl Dice {
    /// Seeded from the wall clock's nanoseconds.
    pub fn from_clock() -> Dice {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        Dice(u64::from(nanos.subsec_nanos()) | 1)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What a storm's worker `worker` is told: the test's directory, its
/// board's file and its number.
pub fn worker_env(dir: &Path, board: &str, worker: usize) -> Vec<(&'static str, String)> {
    vec![
        ("DIR", dir.display().to_string()),
        ("BOARD", board.to_string()),
        ("WORKER", worker.to_string()),
    ]
}

/// A storm's end: the board the workers were told (at `dir`/board), the
/// workers alive at the end, and the kills.
pub struct Storm {
    pub board_path: String,
    pub board: SharedWords,
    pub workers: Vec<Kid>,
    pub kills: u64,
}

/// Runs `workers` children of role `work` (told [`worker_env`], with a
/// board at `dir`/board) for `storm_ms`, killing a random one every
/// `pause_ms.0` + up to `pause_ms.1` ms and starting it again; then writes
/// `stop.1` into the board's word `stop.0` to tell the survivors.
pub fn kill_storm(
    workers: usize,
    dir: &Path,
    storm_ms: u64,
    pause_ms: (u64, u64),
    stop: (usize, u64),
) -> Storm {
    let board_path = dir.join("board").display().to_string();
    let board = SharedWords::open(&board_path);
    let spawn = |w: usize| Kid::spawn("work", &worker_env(dir, &board_path, w));
    let mut kids: Vec<Kid> = (0..workers).map(spawn).collect();
    let mut dice = Dice::from_clock();
    let mut kills = 0u64;
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_millis(storm_ms) {
        let pause = pause_ms.0 + dice.below(pause_ms.1 + 1);
        std::thread::sleep(std::time::Duration::from_millis(pause));
        let w = dice.below(workers as u64) as usize;
        kids[w].kill();
        kills += 1;
        kids[w] = spawn(w);
    }
    board.word(stop.0).store(stop.1, Ordering::SeqCst);
    Storm {
        board_path,
        board,
        workers: kids,
        kills,
    }
}

/// 512 words in a shared mapping of a 4096-byte file, for counts that
/// processes keep together (each one atomic word).
pub struct SharedWords {
    at: *mut AtomicU64,
}

impl SharedWords {
    /// Maps the file at `path`, creating it (zeros) if needed.
    pub fn open(path: &str) -> SharedWords {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        file.set_len(4096).unwrap();
        // SAFETY: a shared mapping of a 4096-byte file, never unmapped (the
        // process ends first); only atomics are read or written in it.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED);
        SharedWords { at: at.cast() }
    }

    pub fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < 512, "word {i} of 512");
        // SAFETY: one of the 512 words of the live, page-aligned mapping.
        unsafe { &*self.at.add(i) }
    }

    pub fn get(&self, i: usize) -> u64 {
        self.word(i).load(Ordering::SeqCst)
    }
}
