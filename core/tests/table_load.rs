//! How full a table gets with random names before `TABLE_FULL`: the figures
//! the README quotes. Names come in five families of the shapes services
//! use (a counter inside a fixed text); the first `TABLE_FULL` is one
//! unlucky name, so it is judged on the families' mean. The 2^20 run is `#[ignore]`d (1.7 GB, seconds in
//! release): `cargo test -p sds-core --release --test table_load -- --ignored
//! --nocapture`.

use sds_core::{Error, PointTable, Slot};

/// Loads (points / capacity) after inserting names `n0`, `n1`, ...: at the
/// first `TABLE_FULL`, once one name in 100 fails (over the last 1 000), and
/// after as many attempts as twice the capacity.
struct Loads {
    first_full: f64,
    one_in_100_fail: f64,
    after_twice_capacity: f64,
}

const FAMILIES: [&str; 5] = [
    "n{}",
    "svc.{}",
    "orderService.process-{}",
    "{}.payments.internal.example",
    "user:{}:quota",
];

fn loads(capacity: usize, family: &str) -> Loads {
    let t = PointTable::new((0..capacity).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let load = |t: &PointTable<Vec<Slot>>| t.len() as f64 / capacity as f64;
    let (mut first_full, mut one_in_100) = (None, None);
    let mut recent = std::collections::VecDeque::new();
    for n in 0..2 * capacity {
        let failed = match t.insert(family.replace("{}", &n.to_string()).as_bytes()) {
            Ok(_) => false,
            Err(Error::TableFull { .. }) => true,
            Err(e) => panic!("{e}"),
        };
        recent.push_back(failed);
        if recent.len() > 1000 {
            recent.pop_front();
        }
        if failed && first_full.is_none() {
            first_full = Some(load(&t));
        }
        if one_in_100.is_none() && recent.iter().filter(|&&f| f).count() >= 10 {
            one_in_100 = Some(load(&t));
        }
    }
    Loads {
        first_full: first_full.unwrap_or(1.0),
        one_in_100_fail: one_in_100.unwrap_or(1.0),
        after_twice_capacity: load(&t),
    }
}

/// The loads of every family: the mean of the first `TABLE_FULL`, and the
/// lowest of the others.
fn report(capacity: usize) -> Loads {
    let all: Vec<Loads> = FAMILIES.iter().map(|f| loads(capacity, f)).collect();
    let lowest = |of: fn(&Loads) -> f64| all.iter().map(of).fold(1.0, f64::min);
    let first: Vec<String> = all
        .iter()
        .map(|l| format!("{:.1}", l.first_full * 100.0))
        .collect();
    let l = Loads {
        first_full: all.iter().map(|l| l.first_full).sum::<f64>() / all.len() as f64,
        one_in_100_fail: lowest(|l| l.one_in_100_fail),
        after_twice_capacity: lowest(|l| l.after_twice_capacity),
    };
    println!(
        "capacity {capacity}: first TABLE_FULL at {:.1} % on average ({} %), 1 in 100 failing at {:.1} % or more, {:.2} % or more after {} names",
        l.first_full * 100.0,
        first.join(", "),
        l.one_in_100_fail * 100.0,
        l.after_twice_capacity * 100.0,
        2 * capacity
    );
    l
}

#[test]
fn a_table_of_1024_takes_random_names_to_past_85_percent() {
    let l = report(1 << 10);
    assert!(l.first_full > 0.85, "{}", l.first_full);
    assert!(l.after_twice_capacity > 0.99, "{}", l.after_twice_capacity);
}

#[test]
fn a_table_of_65536_takes_random_names_to_past_85_percent() {
    let l = report(1 << 16);
    assert!(l.first_full > 0.85, "{}", l.first_full);
    assert!(l.one_in_100_fail > 0.92, "{}", l.one_in_100_fail);
    assert!(l.after_twice_capacity > 0.99, "{}", l.after_twice_capacity);
}

#[test]
#[ignore = "1.7 GB and a few seconds in release"]
fn a_table_of_2_pow_20_takes_random_names_to_past_85_percent() {
    let l = report(1 << 20);
    assert!(l.first_full > 0.85, "{}", l.first_full);
    assert!(l.one_in_100_fail > 0.92, "{}", l.one_in_100_fail);
    assert!(l.after_twice_capacity > 0.99, "{}", l.after_twice_capacity);
}
