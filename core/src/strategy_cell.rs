//! `StrategyCell`: a point's strategy, replaced atomically for readers.
//!
//! Two versioned copies and an index of the readable one. A writer fills the
//! copy nobody is told to read, then flips the index, so a reader never waits
//! for a writer; it retries only if two whole replacements happened while it
//! was reading (the version of its copy moved). Writers, which are rare
//! configuration pushes, take turns through a flag.

use crate::strategy::{Field, Strategy};
use crate::sync::{const_fn, spin, zeroed, AtomicBool, AtomicU32, AtomicU64, Ordering};

const FIELDS: usize = 13;
const ABSENT: u64 = 0;
const PRESENT: u64 = 1;

struct Replica {
    /// Even: stable. Odd: being written.
    version: AtomicU32,
    present: AtomicU64,
    values: [AtomicU64; FIELDS],
}

impl Replica {
    const_fn! {
        fn new() -> Replica {
            Replica {
                version: AtomicU32::new(0),
                present: AtomicU64::new(ABSENT),
                values: zeroed(),
            }
        }
    }
}

pub(crate) struct StrategyCell {
    writing: AtomicBool,
    readable: AtomicU32,
    copies: [Replica; 2],
}

impl StrategyCell {
    const_fn! {
        pub(crate) fn new() -> StrategyCell {
            StrategyCell {
                writing: AtomicBool::new(false),
                readable: AtomicU32::new(0),
                copies: [Replica::new(), Replica::new()],
            }
        }
    }

    /// The current strategy, whole: never half of one and half of another.
    #[inline]
    pub(crate) fn load(&self) -> Option<Strategy> {
        loop {
            let copy = &self.copies[(self.readable.load(Ordering::Acquire) & 1) as usize];
            let before = copy.version.load(Ordering::Acquire);
            if before & 1 == 0 {
                let present = copy.present.load(Ordering::Relaxed);
                let mut s = Strategy::DEFAULT;
                for (field, value) in Field::ALL.iter().zip(copy.values.iter()) {
                    s.set(*field, value.load(Ordering::Relaxed) as i64);
                }
                crate::sync::fence(Ordering::Acquire);
                if copy.version.load(Ordering::Relaxed) == before {
                    return (present == PRESENT).then_some(s);
                }
            }
            spin();
        }
    }

    /// One field of the current strategy (`None`: no strategy): what an exit
    /// reads, without copying the other twelve.
    #[inline]
    pub(crate) fn field(&self, field: Field) -> Option<i64> {
        loop {
            let copy = &self.copies[(self.readable.load(Ordering::Acquire) & 1) as usize];
            let before = copy.version.load(Ordering::Acquire);
            if before & 1 == 0 {
                let present = copy.present.load(Ordering::Relaxed);
                // `Field` discriminants follow `Field::ALL`, the order of `values`.
                let value = copy.values[field as usize].load(Ordering::Relaxed) as i64;
                crate::sync::fence(Ordering::Acquire);
                if copy.version.load(Ordering::Relaxed) == before {
                    return (present == PRESENT).then_some(value);
                }
            }
            spin();
        }
    }

    /// Replaces the strategy (`None`: no strategy) and returns the old one.
    pub(crate) fn store(&self, strategy: Option<&Strategy>) -> Option<Strategy> {
        while self
            .writing
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spin();
        }
        let old = self.load();
        let next = (self.readable.load(Ordering::Relaxed) & 1) ^ 1;
        let copy = &self.copies[next as usize];
        let version = copy.version.load(Ordering::Relaxed);
        copy.version
            .store(version.wrapping_add(1), Ordering::Relaxed);
        crate::sync::fence(Ordering::Release);
        let s = strategy.copied().unwrap_or(Strategy::DEFAULT);
        copy.present.store(
            if strategy.is_some() { PRESENT } else { ABSENT },
            Ordering::Relaxed,
        );
        for (field, value) in Field::ALL.iter().zip(copy.values.iter()) {
            value.store(s.get(*field) as u64, Ordering::Relaxed);
        }
        copy.version
            .store(version.wrapping_add(2), Ordering::Release);
        self.readable.store(next, Ordering::Release);
        self.writing.store(false, Ordering::Release);
        old
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn starts_absent_and_round_trips() {
        let cell = StrategyCell::new();
        assert_eq!(cell.load(), None);
        let mut s = Strategy::DEFAULT;
        s.visit_threshold = 7;
        s.delay_time = 20_000;
        assert_eq!(cell.store(Some(&s)), None);
        assert_eq!(cell.load(), Some(s));
        assert_eq!(cell.store(None), Some(s));
        assert_eq!(cell.load(), None);
    }

    #[test]
    fn field_count_matches_the_table() {
        assert_eq!(Field::ALL.len(), FIELDS);
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "Field discriminants index the values");
        }
    }

    #[test]
    fn one_field_reads_like_the_whole() {
        let cell = StrategyCell::new();
        assert_eq!(cell.field(Field::TimeoutThreshold), None);
        let mut s = Strategy::DEFAULT;
        s.timeout_threshold = 250;
        s.retry_interval = 2_000;
        cell.store(Some(&s));
        for f in Field::ALL {
            assert_eq!(cell.field(*f), Some(s.get(*f)), "{f:?}");
        }
    }
}
