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

/// One second of a point: what was counted as pushed before this syncer
/// took the role (`base`: a dead syncer of the host pushed it under its own
/// name), and what this syncer pushed (`mine`, under its instance fields).
#[derive(Copy, Clone)]
struct Second {
    second: u64,
    base: Counts,
    mine: Counts,
}

/// What was pushed per second, `RING` seconds deep, tagged with the second.
pub(crate) struct Pushed {
    seconds: [Second; RING],
}

fn add(a: Counts, b: Counts) -> Counts {
    let mut sum = a;
    for (s, n) in sum.iter_mut().zip(b) {
        *s += n;
    }
    sum
}

impl Pushed {
    pub(crate) fn new() -> Pushed {
        Pushed {
            seconds: [Second {
                second: u64::MAX,
                base: [0; KINDS],
                mine: [0; KINDS],
            }; RING],
        }
    }

    fn at(&self, second: u64) -> Second {
        match self.seconds[second as usize % RING] {
            s if s.second == second => s,
            _ => Second {
                second,
                base: [0; KINDS],
                mine: [0; KINDS],
            },
        }
    }

    fn set(&mut self, s: Second) {
        self.seconds[s.second as usize % RING] = s;
    }

    /// Counts everything the point holds now as pushed: a syncer that takes
    /// over a shared table from a dead one must not push the dead one's
    /// counts a second time.
    pub(crate) fn baseline(&mut self, point: &Point, now_s: u64) {
        for s in ring(now_s) {
            self.set(Second {
                second: s,
                base: counts(&point.local_counts(s)),
                mine: [0; KINDS],
            });
        }
    }

    /// What `second` has had pushed, by this syncer or before it.
    #[cfg(test)]
    pub(crate) fn own(&self, second: u64) -> Counts {
        let s = self.at(second);
        add(s.base, s.mine)
    }

    /// What was pushed of `second` before this syncer took the role.
    pub(crate) fn base(&self, second: u64) -> Counts {
        self.at(second).base
    }

    /// The seconds of the ring whose local counts grew since their last
    /// push. A count that went down (a clock step restarted its second) is
    /// taken as pushed at its new value: a push cannot be taken back.
    pub(crate) fn deltas(&mut self, point: &Point, now_s: u64) -> Vec<Delta> {
        let mut out = Vec::new();
        for s in ring(now_s) {
            let local = counts(&point.local_counts(s));
            let mut at = self.at(s);
            let mut delta = [0; KINDS];
            for k in 0..KINDS {
                delta[k] = local[k].saturating_sub(at.base[k] + at.mine[k]);
                at.base[k] = at.base[k].min(local[k]);
                at.mine[k] = at.mine[k].min(local[k] - at.base[k]);
            }
            self.set(at);
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
            let mut at = self.at(d.second);
            at.mine = add(at.mine, d.counts);
            self.set(at);
        }
    }

    /// Redis holds `in_redis` under this syncer's fields for `second`
    /// (read after this sync's own increments): that is what this syncer
    /// has pushed. Less than it pushed: Redis lost writes (a restart
    /// without persistence, a failover), and the next sync pushes the rest
    /// of the local count again. More: a round trip whose answer was lost
    /// was applied, and nothing is pushed twice from now on.
    pub(crate) fn settle(&mut self, second: u64, in_redis: [Option<u64>; KINDS]) {
        let mut at = self.at(second);
        for (mine, read) in at.mine.iter_mut().zip(in_redis) {
            // A field that holds no count (overwritten by someone) says
            // nothing: what was confirmed stays.
            if let Some(read) = read {
                *mine = read;
            }
        }
        self.set(at);
    }

    /// What this syncer pushed of `second` (and Redis last confirmed).
    pub(crate) fn mine(&self, second: u64) -> Counts {
        self.at(second).mine
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
        pushed.settle(S, [Some(0); KINDS]);
        let again = vec![Delta {
            second: S,
            counts: [2, 0, 1, 0],
        }];
        assert_eq!(pushed.deltas(&p, S + 1), again);
        // Redis lost what came before the one visit this sync pushed.
        pushed.confirm(&again);
        pushed.settle(S, [Some(1), Some(0), None, Some(0)]);
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
        assert_eq!(pushed.base(S), [1, 0, 0, 0]);
        assert_eq!(
            pushed.deltas(&p, S),
            vec![Delta {
                second: S,
                counts: [1, 0, 0, 0]
            }]
        );
        // 30 s later the ring no longer holds S: nothing to push.
        assert_eq!(pushed.deltas(&p, S + 30), vec![]);
        assert_eq!(pushed.own(S), [0; KINDS]);
    }
}
