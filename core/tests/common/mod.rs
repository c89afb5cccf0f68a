//! What several test files share (each uses a part of it).
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use sds_core::{Error, Field, Point, Rule, Strategy};

/// The thresholds a uniform strategy sets to one value: a reader that sees
/// two different values among them saw a half-replaced strategy.
const UNIFORM: [Field; 7] = [
    Field::VisitThreshold,
    Field::ConcurrentThreshold,
    Field::ExceptionThreshold,
    Field::TimeoutThreshold,
    Field::TimeoutCountThreshold,
    Field::TokenBucketGeneratedTokensInSecond,
    Field::TokenBucketSize,
];

/// A strategy whose [`UNIFORM`] thresholds are all `v`.
pub fn uniform(v: i64) -> Strategy {
    let mut s = Strategy::DEFAULT;
    for field in UNIFORM {
        s.set(field, v);
    }
    s
}

/// Whether all of `s`'s [`UNIFORM`] thresholds are one value.
pub fn is_uniform(s: &Strategy) -> bool {
    UNIFORM
        .iter()
        .all(|&field| s.get(field) == s.visit_threshold)
}

/// Threads that hold a concurrency permit, counted around the time they
/// hold it: the most at once (a high-water mark the point's threshold must
/// bound) and how many were admitted.
#[derive(Default)]
pub struct Holders {
    holding: AtomicUsize,
    most: AtomicUsize,
    admitted: AtomicUsize,
}

impl Holders {
    /// Runs `check` counted as one more holder.
    pub fn hold(&self, check: impl FnOnce()) {
        let now = self.holding.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        check();
        self.admitted.fetch_add(1, Ordering::Relaxed);
        self.holding.fetch_sub(1, Ordering::SeqCst);
    }

    /// The most holders at once.
    pub fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }

    /// Holders in all.
    pub fn admitted(&self) -> usize {
        self.admitted.load(Ordering::Relaxed)
    }
}

/// The default strategy as `f` changes it.
pub fn with(f: impl FnOnce(&mut Strategy)) -> Strategy {
    let mut s = Strategy::DEFAULT;
    f(&mut s);
    s
}

/// A point under the strategy [`with`] makes of `f`.
pub fn point(f: impl FnOnce(&mut Strategy)) -> Point {
    let p = Point::new();
    p.set_strategy(Some(&with(f))).unwrap();
    p
}

/// The default strategy with `fields` set.
pub fn with_fields(fields: &[(Field, i64)]) -> Strategy {
    let mut s = Strategy::DEFAULT;
    for &(field, value) in fields {
        s.set(field, value);
    }
    s
}

/// A strategy's fields and the field and rule its refusal names.
pub type Refusal<'a> = (&'a [(Field, i64)], Field, Rule);

/// Asserts that each case's strategy (`with_fields`) is refused naming that
/// field and rule.
pub fn assert_refused(cases: &[Refusal<'_>]) {
    for &(fields, field, rule) in cases {
        assert_eq!(
            with_fields(fields).validate(),
            Err(Error::InvalidStrategy { field, rule }),
            "{fields:?}"
        );
    }
}
