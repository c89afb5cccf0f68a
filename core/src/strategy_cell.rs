//! `StrategyCell`: a point's strategy, replaced atomically for readers.
//!
//! Two versioned copies and an index of the readable one. A writer fills the
//! copy nobody is told to read, then flips the index, so a reader never waits
//! for a writer; it retries only if two whole replacements happened while it
//! was reading (the version of its copy moved). Writers, which are rare
//! configuration pushes, take turns through a word holding the writer's
//! owner (owner.rs).
//!
//! A writer may die at any instruction (a process of a shared table):
//! readers still never wait, because a writer only ever writes the copy
//! readers are not told to read, and flips the index once that copy is
//! stable; a copy left odd is simply never chosen. The next writer takes the
//! dead writer's flag over and writes that same copy again, starting from a
//! new odd version whatever the version it finds.

use crate::owner::{Holder, Transition};
use crate::strategy::{Field, Strategy, SDS_FIELDS};
use crate::sync::{const_fn, spin, zeroed, AtomicU32, AtomicU64, Ordering};

/// Reads a reader tries before it gives up and reads "no strategy". Writers
/// only ever write the copy readers are not told to read, so a reader retries
/// only while two whole replacements race it; both copies being mid-write
/// for this long happens only in a corrupted or hostile shared file, where a
/// point without a strategy is the safe reading (it never blocks anyone).
const MAX_READ_ATTEMPTS: u32 = 1 << 16;

pub(crate) const FIELDS: usize = Field::COUNT;
const ABSENT: u32 = 0;
/// Bit of a copy's `present` word: the copy holds a strategy.
const PRESENT: u32 = 1;
/// Bit: the strategy has at least one newer row on
/// ([`Strategy::has_new_rows`]); without it a decision reads SDS's own
/// fields only.
const ROWS: u32 = 2;
/// Bit: the strategy has an adaptive concurrency limit (one of the newer
/// rows): exits feed it samples.
const ADAPTIVE: u32 = 4;

/// One copy (`repr(C)`, 152 bytes).
#[repr(C)]
pub(crate) struct Replica {
    /// Even: stable. Odd: being written.
    pub(crate) version: AtomicU32,
    /// ABSENT, or PRESENT with the ROWS and ADAPTIVE bits (a value with any
    /// other bit reads as absent).
    present: AtomicU32,
    values: [AtomicU64; FIELDS],
}

impl Replica {
    const_fn! {
        fn new() -> Replica {
            Replica {
                version: AtomicU32::new(0),
                present: AtomicU32::new(ABSENT),
                values: zeroed(),
            }
        }
    }
}

/// Plain data (`repr(C)`, integer atomics only, 312 bytes): all zero is an
/// absent strategy, and any bit pattern is a valid cell.
#[repr(C)]
pub(crate) struct StrategyCell {
    /// The owner writing a copy; 0: nobody.
    pub(crate) writing: AtomicU32,
    /// The copy readers read (its low bit).
    pub(crate) readable: AtomicU32,
    pub(crate) copies: [Replica; 2],
}

/// Whether a copy's `present` word holds a strategy: one test, as the
/// usual exit asks it.
const fn is_present(present: u32) -> bool {
    present & !(ROWS | ADAPTIVE) == PRESENT
}

/// The fields of [`Strategy::adaptive_fields`], in its order.
const ADAPTIVE_FIELDS: [Field; 4] = [
    Field::AdaptiveConcurrency,
    Field::AdaptiveMinLimit,
    Field::AdaptiveMaxLimit,
    Field::AdaptiveInitialLimit,
];

/// What an exit reads of the strategy.
pub(crate) enum ForExit {
    /// A strategy without the newer rows, and the field's value: the usual
    /// exit, told apart by one comparison.
    Sds(i64),
    /// Any other: the field's value (`None`: no strategy) and, when the
    /// strategy has an adaptive limit, its [`Strategy::adaptive_fields`].
    Other {
        value: Option<i64>,
        adaptive: Option<[i64; 4]>,
    },
}

/// What a decision reads of the strategy.
pub(crate) enum ForDecision {
    /// No strategy.
    Absent,
    /// A strategy without the newer rows: SDS's own fields were read, the
    /// others hold their defaults (constants to the compiler, so the usual
    /// decision keeps no register or stack slot for them).
    Sds(Strategy),
    /// A strategy with some of the newer rows on: read it whole with
    /// [`StrategyCell::load`].
    WithRows,
}

impl StrategyCell {
    const_fn! {
        pub(crate) fn new() -> StrategyCell {
            StrategyCell {
                writing: AtomicU32::new(0),
                readable: AtomicU32::new(0),
                copies: [Replica::new(), Replica::new()],
            }
        }
    }

    /// The current strategy, whole: never half of one and half of another.
    #[inline]
    pub(crate) fn load(&self) -> Option<Strategy> {
        for _ in 0..MAX_READ_ATTEMPTS {
            let copy = &self.copies[(self.readable.load(Ordering::Acquire) & 1) as usize];
            let before = copy.version.load(Ordering::Acquire);
            if before & 1 == 0 {
                let present = copy.present.load(Ordering::Relaxed);
                let s = Strategy::from_fn(|i| copy.values[i].load(Ordering::Relaxed) as i64);
                crate::sync::fence(Ordering::Acquire);
                if copy.version.load(Ordering::Relaxed) == before {
                    return is_present(present).then_some(s);
                }
            }
            spin();
        }
        None
    }

    /// The current strategy for a decision, if it has none of the newer
    /// rows; only SDS's own fields are loaded, so the usual decision loads
    /// what it loaded before those rows existed.
    #[inline(always)]
    pub(crate) fn load_for_decision(&self) -> ForDecision {
        for _ in 0..MAX_READ_ATTEMPTS {
            let copy = &self.copies[(self.readable.load(Ordering::Acquire) & 1) as usize];
            let before = copy.version.load(Ordering::Acquire);
            if before & 1 == 0 {
                let present = copy.present.load(Ordering::Relaxed);
                let read = match present {
                    PRESENT => ForDecision::Sds(Strategy::from_fn(|i| match i < SDS_FIELDS {
                        true => copy.values[i].load(Ordering::Relaxed) as i64,
                        false => Strategy::DEFAULT.get(Field::ALL[i]),
                    })),
                    _ if is_present(present) => ForDecision::WithRows,
                    _ => ForDecision::Absent,
                };
                crate::sync::fence(Ordering::Acquire);
                if copy.version.load(Ordering::Relaxed) == before {
                    return read;
                }
            }
            spin();
        }
        ForDecision::Absent
    }

    /// What an exit reads: one field of the current strategy, whether the
    /// strategy has the newer rows, and its adaptive limit's fields, from
    /// one copy.
    #[inline]
    pub(crate) fn field_for_exit(&self, field: Field) -> ForExit {
        for _ in 0..MAX_READ_ATTEMPTS {
            let copy = &self.copies[(self.readable.load(Ordering::Acquire) & 1) as usize];
            let before = copy.version.load(Ordering::Acquire);
            if before & 1 == 0 {
                let present = copy.present.load(Ordering::Relaxed);
                // `Field` discriminants follow `Field::ALL`, the order of `values`.
                let value = copy.values[field as usize].load(Ordering::Relaxed) as i64;
                // Only `store` writes the mark, always whole.
                let adaptive = (present == PRESENT | ROWS | ADAPTIVE).then(|| {
                    ADAPTIVE_FIELDS.map(|f| copy.values[f as usize].load(Ordering::Relaxed) as i64)
                });
                crate::sync::fence(Ordering::Acquire);
                if copy.version.load(Ordering::Relaxed) == before {
                    return match present {
                        PRESENT => ForExit::Sds(value),
                        _ => ForExit::Other {
                            value: is_present(present).then_some(value),
                            adaptive,
                        },
                    };
                }
            }
            spin();
        }
        ForExit::Other {
            value: None,
            adaptive: None,
        }
    }

    /// Replaces the strategy (`None`: no strategy) and returns the old one.
    pub(crate) fn store(
        &self,
        strategy: Option<&Strategy>,
        holder: &Holder<'_>,
    ) -> Option<Strategy> {
        holder.take(&self.writing);
        holder.reached(Transition::StrategyStore, 0);
        let old = self.load();
        let next = (self.readable.load(Ordering::Relaxed) & 1) ^ 1;
        let copy = &self.copies[next as usize];
        // Odd whatever a dead writer left: even + 1, or odd + 2.
        let version = copy.version.load(Ordering::Relaxed).wrapping_add(1) | 1;
        copy.version.store(version, Ordering::Relaxed);
        crate::sync::fence(Ordering::Release);
        holder.reached(Transition::StrategyStore, 1);
        let s = strategy.copied().unwrap_or(Strategy::DEFAULT);
        let present = match strategy {
            None => ABSENT,
            Some(s) if s.adaptive_concurrency >= 0 => PRESENT | ROWS | ADAPTIVE,
            Some(s) if s.has_new_rows() => PRESENT | ROWS,
            Some(_) => PRESENT,
        };
        copy.present.store(present, Ordering::Relaxed);
        for (field, value) in Field::ALL.iter().zip(copy.values.iter()) {
            value.store(s.get(*field) as u64, Ordering::Relaxed);
        }
        holder.reached(Transition::StrategyStore, 2);
        copy.version
            .store(version.wrapping_add(1), Ordering::Release);
        holder.reached(Transition::StrategyStore, 3);
        self.readable.store(next, Ordering::Release);
        holder.reached(Transition::StrategyStore, 4);
        holder.give_back(&self.writing);
        old
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A cell holding a strategy of visit threshold 7, and that strategy.
    fn holding_visit_7() -> (StrategyCell, Strategy) {
        let cell = StrategyCell::new();
        let mut s = Strategy::DEFAULT;
        s.visit_threshold = 7;
        cell.store(Some(&s), &Holder::PRIVATE);
        (cell, s)
    }

    #[test]
    fn starts_absent_and_round_trips() {
        let cell = StrategyCell::new();
        assert_eq!(cell.load(), None);
        let mut s = Strategy::DEFAULT;
        s.visit_threshold = 7;
        s.delay_time = 20_000;
        assert_eq!(cell.store(Some(&s), &Holder::PRIVATE), None);
        assert_eq!(cell.load(), Some(s));
        assert_eq!(cell.store(None, &Holder::PRIVATE), Some(s));
        assert_eq!(cell.load(), None);
    }

    #[test]
    fn a_cell_with_both_copies_mid_write_reads_as_no_strategy() {
        // Only a corrupted or hostile shared file can hold this: readers
        // give up after a bounded number of tries instead of spinning.
        let (cell, _) = holding_visit_7();
        for copy in &cell.copies {
            copy.version.store(1, Ordering::Relaxed);
        }
        assert_eq!(cell.load(), None);
        assert!(matches!(
            cell.field_for_exit(Field::VisitThreshold),
            ForExit::Other { value: None, .. }
        ));
    }

    #[test]
    fn the_present_word_is_read_as_marked_and_anything_else_as_absent() {
        let (cell, s) = holding_visit_7();
        let copy = &cell.copies[(cell.readable.load(Ordering::Relaxed) & 1) as usize];
        let read = |present: u32| {
            copy.present.store(present, Ordering::Relaxed);
            let decision = match cell.load_for_decision() {
                ForDecision::Absent => "absent",
                ForDecision::Sds(d) if d == s => "sds",
                ForDecision::Sds(_) => "sds, other values",
                ForDecision::WithRows => "rows",
            };
            let exit = match cell.field_for_exit(Field::VisitThreshold) {
                ForExit::Sds(value) => (Some(value), false),
                ForExit::Other { value, adaptive } => (value, adaptive.is_some()),
            };
            (decision, cell.load().is_some(), exit)
        };
        assert_eq!(read(PRESENT), ("sds", true, (Some(7), false)));
        assert_eq!(read(PRESENT | ROWS), ("rows", true, (Some(7), false)));
        assert_eq!(
            read(PRESENT | ROWS | ADAPTIVE),
            ("rows", true, (Some(7), true))
        );
        // Never written, but harmless: rows read whole, no samples.
        assert_eq!(read(PRESENT | ADAPTIVE), ("rows", true, (Some(7), false)));
        for hostile in [ABSENT, ROWS, ADAPTIVE, 8, 9, u32::MAX] {
            assert_eq!(read(hostile), ("absent", false, (None, false)), "{hostile}");
        }
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
        assert!(matches!(
            cell.field_for_exit(Field::TimeoutThreshold),
            ForExit::Other { value: None, .. }
        ));
        let mut s = Strategy::DEFAULT;
        s.timeout_threshold = 250;
        s.retry_interval = 2_000;
        cell.store(Some(&s), &Holder::PRIVATE);
        for f in Field::ALL {
            assert!(
                matches!(cell.field_for_exit(*f), ForExit::Sds(v) if v == s.get(*f)),
                "{f:?}"
            );
        }
    }
}
