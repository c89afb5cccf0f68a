//! 8 processes enter and exit one point of a shared table at once: visit
//! sums exact, permits back to 0, `concurrentThreshold` never exceeded
//! host-wide (a high-water mark in a second shared mapping, kept by the
//! test), and `visitThreshold` admitting between T and T + processes.
//!
//! `SDS_SHM_TEST_ITERATIONS` sets the enter/exit pairs per process
//! (default 100 000 in a release build, 20 000 in a debug one).

mod common;

use std::sync::atomic::Ordering;

use common::{
    child_role, concurrent_limit, knob, open, report, var, wait_until, Kid, SharedWords, TempDir,
    NOW,
};
use sds_core::{Flags, Outcome, Strategy};

const PROCESSES: usize = 8;
const CONCURRENT: i64 = 3;
const VISITS: i64 = 1_000;
const VISIT_TRIES: usize = 400;
const LONG: std::time::Duration = std::time::Duration::from_secs(300);

fn iterations() -> u64 {
    let default = if cfg!(debug_assertions) {
        20_000
    } else {
        100_000
    };
    knob("SDS_SHM_TEST_ITERATIONS", default)
}

// The words of the gauge (a `SharedWords`): requests inside their permit
// now, and the most ever seen.
const INSIDE: usize = 0;
const MOST: usize = 1;

#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    assert_eq!(role, "load");
    let dir = std::path::PathBuf::from(var("DIR"));
    let shared = open(var("TABLE"));
    let t = shared.table().unwrap();
    let gauge = SharedWords::open(&var("GAUGE"));
    let id = t.insert(b"load").unwrap();
    report("ready", 1);
    wait_until(LONG, "go", || dir.join("go").exists());
    let mut admitted = 0u64;
    for _ in 0..iterations() {
        let entry = t.enter_point(id, NOW, Flags::NONE).unwrap();
        if entry.holds_permit() {
            admitted += 1;
            let inside = gauge.word(INSIDE).fetch_add(1, Ordering::SeqCst) + 1;
            gauge.word(MOST).fetch_max(inside, Ordering::SeqCst);
            gauge.word(INSIDE).fetch_sub(1, Ordering::SeqCst);
        }
        t.exit(&entry, NOW, Outcome::Ok).unwrap();
    }
    report("admitted", admitted);
    let visits = (0..VISIT_TRIES)
        .filter(|_| {
            let entry = t.enter(b"visits", NOW, Flags::NONE).unwrap();
            t.exit(&entry, NOW, Outcome::Ok).unwrap();
            !entry.downgraded()
        })
        .count();
    report("visits", visits);
}

#[test]
fn processes_share_one_point_exactly() {
    let dir = TempDir::new("load");
    let table = dir.join("table").display().to_string();
    let gauge_path = dir.join("gauge").display().to_string();
    let shared = open(&table);
    let t = shared.table().unwrap();
    t.set_strategy(b"load", &concurrent_limit(CONCURRENT))
        .unwrap();
    let visits = Strategy {
        visit_threshold: VISITS,
        ..Strategy::DEFAULT
    };
    t.set_strategy(b"visits", &visits).unwrap();
    let gauge = SharedWords::open(&gauge_path);

    let env = [
        ("TABLE", table.clone()),
        ("GAUGE", gauge_path.clone()),
        ("DIR", dir.path().display().to_string()),
    ];
    let kids: Vec<Kid> = (0..PROCESSES).map(|_| Kid::spawn("load", &env)).collect();
    for kid in &kids {
        assert_eq!(kid.report(LONG), "ready=1");
    }
    std::fs::write(dir.join("go"), b"").unwrap();
    let wait = |kid: &Kid, key: &str| -> u64 {
        match kid.report(LONG).split_once('=') {
            Some((k, v)) if k == key => v.parse().unwrap(),
            other => panic!("expected {key}, got {other:?}"),
        }
    };
    let admitted: u64 = kids.iter().map(|k| wait(k, "admitted")).sum();
    let allowed: u64 = kids.iter().map(|k| wait(k, "visits")).sum();

    let n = iterations() * PROCESSES as u64;
    let stats = t.stats(b"load", NOW).unwrap();
    assert_eq!(stats.visit, n, "every enter counted once");
    assert_eq!(stats.concurrent, 0, "every permit given back");
    assert_eq!(
        stats.downgrade,
        n - admitted,
        "refused permits are the downgrades"
    );
    let most = gauge.word(MOST).load(Ordering::SeqCst);
    eprintln!("{n} pairs: admitted {admitted}, most inside {most}, allowed {allowed}");
    assert!(
        (1..=CONCURRENT as u64).contains(&most),
        "at most {CONCURRENT} inside at once host-wide, saw {most}"
    );
    assert!(admitted > 0);
    let t_visits = VISITS as u64;
    assert!(
        (t_visits..=t_visits + PROCESSES as u64).contains(&allowed),
        "admitted {allowed} under visitThreshold {VISITS}"
    );
    assert_eq!(
        t.stats(b"visits", NOW).unwrap().visit,
        (VISIT_TRIES * PROCESSES) as u64
    );
}
