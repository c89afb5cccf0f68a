//! [`Pushed`]: per cluster point, what this table's syncer has pushed to
//! Redis for each second of the local ring. The local ring itself is the
//! buffer of what is still to push: a delta is the local count minus what
//! was pushed, so counts made while Redis is down go out with the first
//! sync after it is back, as long as the ring still holds their second.

use sds_core::{Point, SecondCounts, RING_SECONDS};

const RING: usize = RING_SECONDS as usize;
pub(crate) const KINDS: usize = 4;

/// One second's counts, in the order visit, downgrade, exception, timeout.
pub(crate) type Counts = [u64; KINDS];

pub(crate) fn counts(c: &SecondCounts) -> Counts {
    [c.visit, c.downgrade, c.exception, c.timeout]
}

/// The growth of one second's counts since the last successful push.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Delta {
    pub(crate) second: u64,
    pub(crate) counts: Counts,
}

/// What was pushed per second, `RING` seconds deep, tagged with the second.
pub(crate) struct Pushed {
    seconds: [(u64, Counts); RING],
}

impl Pushed {
    pub(crate) fn new() -> Pushed {
        Pushed {
            seconds: [(u64::MAX, [0; KINDS]); RING],
        }
    }

    /// Counts everything the point holds now as pushed: a syncer that takes
    /// over a shared table from a dead one must not push the dead one's
    /// counts a second time.
    pub(crate) fn baseline(&mut self, point: &Point, now_s: u64) {
        for s in ring(now_s) {
            self.seconds[s as usize % RING] = (s, counts(&point.local_counts(s)));
        }
    }

    /// What `second` has had pushed.
    pub(crate) fn own(&self, second: u64) -> Counts {
        match self.seconds[second as usize % RING] {
            (s, c) if s == second => c,
            _ => [0; KINDS],
        }
    }

    /// The seconds of the ring whose local counts grew since their last
    /// push. A count that went down (a clock step restarted its second) is
    /// taken as pushed at its new value: a push cannot be taken back.
    pub(crate) fn deltas(&mut self, point: &Point, now_s: u64) -> Vec<Delta> {
        let mut out = Vec::new();
        for s in ring(now_s) {
            let local = counts(&point.local_counts(s));
            let own = self.own(s);
            let mut delta = [0; KINDS];
            let mut lowered = own;
            for k in 0..KINDS {
                delta[k] = local[k].saturating_sub(own[k]);
                lowered[k] = own[k].min(local[k]);
            }
            self.seconds[s as usize % RING] = (s, lowered);
            if delta != [0; KINDS] {
                out.push(Delta {
                    second: s,
                    counts: delta,
                });
            }
        }
        out
    }

    /// Records `deltas` as pushed (their round trip succeeded).
    pub(crate) fn confirm(&mut self, deltas: &[Delta]) {
        for d in deltas {
            let mut own = self.own(d.second);
            for (o, n) in own.iter_mut().zip(d.counts) {
                *o += n;
            }
            self.seconds[d.second as usize % RING] = (d.second, own);
        }
    }

    /// Redis holds less of counter `k` of `second` than this table pushed
    /// (it restarted, or a failover lost writes): only `kept`, what this
    /// very sync pushed, is taken as pushed, so the next sync pushes the
    /// rest of the local count again.
    pub(crate) fn forget(&mut self, second: u64, k: usize, kept: u64) {
        let slot = &mut self.seconds[second as usize % RING];
        if slot.0 == second {
            slot.1[k] = slot.1[k].min(kept);
        }
    }
}

/// The seconds the local ring holds at `now_s`, oldest first.
fn ring(now_s: u64) -> std::ops::RangeInclusive<u64> {
    now_s.saturating_sub(RING_SECONDS - 1)..=now_s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::{Flags, Outcome};

    const T: u64 = 1_700_000_000_000;
    const S: u64 = T / 1000;

    fn visit(p: &Point, now_ms: u64, failed: bool) {
        let e = p.enter(now_ms, Flags::NONE);
        let outcome = if failed { Outcome::Error } else { Outcome::Ok };
        p.exit(&e, now_ms, outcome);
    }

    #[test]
    fn deltas_are_the_growth_since_the_last_confirmed_push() {
        let p = Point::new();
        let mut pushed = Pushed::new();
        pushed.baseline(&p, S);
        visit(&p, T, false);
        visit(&p, T, true);
        let d = pushed.deltas(&p, S);
        assert_eq!(
            d,
            vec![Delta {
                second: S,
                counts: [2, 0, 1, 0]
            }]
        );
        // Not confirmed (Redis down): the same deltas and more next time.
        visit(&p, T + 1000, false);
        let d = pushed.deltas(&p, S + 1);
        assert_eq!(
            d,
            vec![
                Delta {
                    second: S,
                    counts: [2, 0, 1, 0]
                },
                Delta {
                    second: S + 1,
                    counts: [1, 0, 0, 0]
                }
            ]
        );
        pushed.confirm(&d);
        assert_eq!(pushed.deltas(&p, S + 1), vec![]);
        assert_eq!(pushed.own(S), [2, 0, 1, 0]);
        // Redis lost it all: everything is pushed again.
        pushed.forget(S, 0, 0);
        let again = vec![Delta {
            second: S,
            counts: [2, 0, 0, 0],
        }];
        assert_eq!(pushed.deltas(&p, S + 1), again);
        // Redis lost what came before the one visit this sync pushed.
        pushed.confirm(&again);
        pushed.forget(S, 0, 1);
        assert_eq!(
            pushed.deltas(&p, S + 1),
            vec![Delta {
                second: S,
                counts: [1, 0, 0, 0]
            }]
        );
    }

    #[test]
    fn a_baseline_pushes_nothing_already_counted_and_old_seconds_fall_off() {
        let p = Point::new();
        visit(&p, T, false);
        let mut pushed = Pushed::new();
        pushed.baseline(&p, S);
        assert_eq!(pushed.deltas(&p, S), vec![]);
        visit(&p, T, false);
        // 30 s later the ring no longer holds S: nothing to push.
        assert_eq!(pushed.deltas(&p, S + 30), vec![]);
        assert_eq!(pushed.own(S), [0; KINDS]);
    }
}
