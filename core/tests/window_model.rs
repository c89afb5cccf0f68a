//! Property tests: random sequences of operations against a plain exact model
//! (a map from bucket index to count, plus which bucket each slot last took).

use std::collections::HashMap;

use proptest::prelude::*;
use sds_core::{Bucket, SlidingWindow, Tally};

/// The exact model: a slot holds the bucket last written to it. A write at the
/// present takes its slot whatever it held (a newer bucket there means the
/// clock stepped back); a late write lands in its own bucket while the ring
/// ending at the present holds it and no newer bucket took its slot, else at
/// the present.
struct Model {
    bucket_ms: u64,
    w: u64,
    ring: u64,
    counts: HashMap<u64, u64>,
    newest: HashMap<u64, u64>,
}

impl Model {
    fn held(&self, b: u64) -> bool {
        self.newest.get(&(b % self.ring)) == Some(&b)
    }
    fn read(&self, b: u64) -> u64 {
        if self.held(b) {
            self.counts[&b]
        } else {
            0
        }
    }
    fn write(&mut self, t: u64, f: impl Fn(u64) -> u64) -> u64 {
        let b = t / self.bucket_ms;
        if self.newest.get(&(b % self.ring)) != Some(&b) {
            self.newest.insert(b % self.ring, b);
            self.counts.insert(b, 0);
        }
        let v = f(self.counts[&b]).min(u32::MAX as u64);
        self.counts.insert(b, v);
        v
    }
    /// The index of the bucket written and its value.
    fn write_late(&mut self, at: u64, now: u64) -> (u64, u64) {
        let (a, b) = (at / self.bucket_ms, now / self.bucket_ms);
        let newer_took_it = self.newest.get(&(a % self.ring)).is_some_and(|&n| n > a);
        if a <= b && b - a < self.ring && !newer_took_it {
            (a, self.write(at, |c| c + 1))
        } else {
            (b, self.write(now, |c| c + 1))
        }
    }
    fn sum_ending(&self, last: u64) -> u64 {
        (last.saturating_sub(self.w - 1)..=last)
            .map(|b| self.read(b))
            .sum()
    }
    fn sum(&self, t: u64) -> u64 {
        self.sum_ending(t / self.bucket_ms)
    }
    fn last_whole_cycle(&self, t: u64) -> u64 {
        let c = t / self.bucket_ms / self.w;
        if c == 0 {
            0
        } else {
            self.sum_ending(c * self.w - 1)
        }
    }
    fn clear_next_cycle(&mut self, t: u64) {
        let first = (t / self.bucket_ms / self.w + 1) * self.w;
        for b in first..first + self.w {
            if self.held(b) {
                self.counts.insert(b, 0);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add(u64),
    Set(u64),
    FetchMax(u64),
    /// A write at a time this many ms before the clock, given as the
    /// present (a clock step back or an outlier).
    PastAdd(u64),
    /// An event of a time this many ms before the clock, recorded now (a
    /// late exception): `add_at`.
    LateAdd(u64),
    /// The same, through `add_at_tally`: the window of the bucket written.
    LateAddTally(u64),
    Sum,
    Bucket,
    LastWholeCycle,
    ClearNextCycle,
}

#[derive(Clone, Debug)]
enum Move {
    Forward(u64),
    Back(u64),
    Gap(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..5).prop_map(Op::Add),
        1 => (0u64..=u32::MAX as u64 + 5).prop_map(Op::Add),
        1 => (u64::MAX - 5..=u64::MAX).prop_map(Op::Add),
        1 => (0u64..20).prop_map(Op::Set),
        1 => (0u64..20).prop_map(Op::FetchMax),
        1 => (0u64..45_000).prop_map(Op::PastAdd),
        2 => (0u64..45_000).prop_map(Op::LateAdd),
        2 => (0u64..45_000).prop_map(Op::LateAddTally),
        2 => Just(Op::Sum),
        1 => Just(Op::Bucket),
        1 => Just(Op::LastWholeCycle),
        1 => Just(Op::ClearNextCycle),
    ]
}

fn movement() -> impl Strategy<Value = Move> {
    prop_oneof![
        8 => (0u64..1_500).prop_map(Move::Forward),
        2 => (0u64..40_000).prop_map(Move::Back),
        1 => (30_000u64..3_200_000_000_000).prop_map(Move::Gap),
    ]
}

fn run(bucket_ms: u64, w: usize, ring: usize, steps: Vec<(Move, Op)>) -> Result<(), TestCaseError> {
    let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
    let window = SlidingWindow::with_storage(bucket_ms, w, storage).unwrap();
    let mut model = Model {
        bucket_ms,
        w: w as u64,
        ring: ring as u64,
        counts: HashMap::new(),
        newest: HashMap::new(),
    };
    let mut now: u64 = 1_000_000_000;
    // The packing is exact while no slot idles for 2^31 laps (window.rs);
    // keep the whole run inside that bound, whatever its gaps add up to.
    let max_gap = ((1u64 << 31) - 1) * ring as u64 * bucket_ms / 256;
    for (mv, op) in steps {
        now = match mv {
            Move::Forward(d) => now + d,
            Move::Back(d) => now.saturating_sub(d),
            Move::Gap(d) => now + d.min(max_gap),
        };
        match op {
            Op::Add(n) => {
                let want_bucket = model.write(now, |c| c.saturating_add(n));
                let want = Tally {
                    bucket: want_bucket,
                    total: model.sum(now),
                };
                prop_assert_eq!(window.add(now, n), want, "add at {}", now);
            }
            Op::Set(v) => {
                model.write(now, |_| v);
                window.set(now, v);
            }
            Op::FetchMax(v) => {
                let want = model.write(now, |c| c.max(v));
                prop_assert_eq!(window.fetch_max(now, v), want);
            }
            Op::PastAdd(back) => {
                let at = now.saturating_sub(back);
                let want = model.write(at, |c| c + 1);
                prop_assert_eq!(window.add(at, 1).bucket, want);
            }
            Op::LateAdd(back) => {
                let at = now.saturating_sub(back);
                let (_, want) = model.write_late(at, now);
                prop_assert_eq!(window.add_at(at, now, 1), want, "late {} at {}", at, now);
            }
            Op::LateAddTally(back) => {
                let at = now.saturating_sub(back);
                let (b, bucket) = model.write_late(at, now);
                let want = Tally {
                    bucket,
                    total: model.sum_ending(b),
                };
                prop_assert_eq!(
                    window.add_at_tally(at, now, 1),
                    want,
                    "late {} at {}",
                    at,
                    now
                );
            }
            Op::Sum => prop_assert_eq!(window.sum(now), model.sum(now), "sum at {}", now),
            Op::Bucket => prop_assert_eq!(window.bucket(now), model.read(now / bucket_ms)),
            Op::LastWholeCycle => {
                prop_assert_eq!(window.last_whole_cycle(now), model.last_whole_cycle(now))
            }
            Op::ClearNextCycle => {
                model.clear_next_cycle(now);
                window.clear_next_cycle(now);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sds_window_matches_the_model(steps in prop::collection::vec((movement(), op()), 1..200)) {
        run(1000, 10, 30, steps)?;
    }

    #[test]
    fn any_window_matches_the_model(
        bucket_ms in 1u64..2_000,
        w in 1usize..12,
        extra in 0usize..8,
        steps in prop::collection::vec((movement(), op()), 1..200),
    ) {
        run(bucket_ms, w, 2 * w + extra, steps)?;
    }
}
