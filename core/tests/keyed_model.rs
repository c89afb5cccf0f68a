//! The key table against a plain model of each rule: random keys, costs
//! and times (never backwards), releases of in-flight units, the same
//! verdict and remaining units; and a fixed window from the first hit
//! against the stores of Python `limits` (`MemoryStorage`) and
//! express-rate-limit (`MemoryStore`), written as they are.

use std::collections::HashMap;

use proptest::prelude::*;
use sds_core::keyed::{KeyBucket, KeyCount, KeyRule, KeyRuleKind, KeyTable};
use sds_core::Value;

/// The plain model: per key, every unit admitted, by time (windows) or
/// the TAT (rate).
#[derive(Default)]
struct Model {
    tat_us: HashMap<u8, u64>,
    per_window: HashMap<(u8, u64), u64>,
    held: HashMap<u8, u64>,
}

impl Model {
    /// (admitted, remaining) of a call.
    fn decide(
        &mut self,
        kind: KeyRuleKind,
        p: (u64, u64, u64),
        key: u8,
        now: u64,
        cost: u64,
    ) -> (bool, u64) {
        let (limit, period, burst) = p;
        match kind {
            KeyRuleKind::Rate => {
                let t = period * 1000 / limit;
                let now_us = now * 1000;
                let tat = self.tat_us.get(&key).copied().unwrap_or(0).max(now_us);
                let admitted = tat + cost * t <= now_us + burst * t;
                let end = if admitted { tat + cost * t } else { tat };
                self.tat_us.insert(key, end);
                (admitted, (now_us + burst * t - end) / t)
            }
            KeyRuleKind::InFlight => {
                let held = self.held.entry(key).or_default();
                let admitted = *held + cost <= limit;
                if admitted {
                    *held += cost;
                }
                (admitted, limit - *held)
            }
            KeyRuleKind::FixedWindow | KeyRuleKind::SlidingWindow => {
                let (w, e) = (now / period, now % period);
                let cur = self.per_window.get(&(key, w)).copied().unwrap_or(0);
                let prev = match (kind, w) {
                    (KeyRuleKind::SlidingWindow, 1..) => {
                        self.per_window.get(&(key, w - 1)).copied().unwrap_or(0)
                    }
                    _ => 0,
                };
                let weighed = prev * (period - e) / period;
                let admitted = weighed + cur + cost <= limit;
                let cur = if admitted { cur + cost } else { cur };
                self.per_window.insert((key, w), cur);
                (admitted, limit.saturating_sub(weighed + cur))
            }
        }
    }
}

proptest! {
    #[test]
    fn the_table_decides_as_the_model(
        kind in prop::sample::select(KeyRuleKind::ALL.to_vec()),
        limit in 1u64..20,
        period in 100u64..3000,
        burst in 1u64..20,
        calls in prop::collection::vec((0u8..6, 0u64..700, 1u64..5), 1..120),
    ) {
        let burst = if kind == KeyRuleKind::Rate { burst } else { limit };
        let mut entries = vec![("limit", Value::from(limit))];
        if kind != KeyRuleKind::InFlight {
            entries.push(("periodMs", Value::from(period)));
        }
        if kind == KeyRuleKind::Rate {
            entries.push(("burst", Value::from(burst)));
        }
        let rule = KeyRule::from_entries(kind, entries).unwrap();
        let buckets: Vec<KeyBucket> = (0..64).map(|_| KeyBucket::new()).collect();
        let table = KeyTable::new(buckets, rule).unwrap();
        let mut model = Model::default();
        let mut now = 1_000_000;
        for (key, dt, cost) in calls {
            now += dt;
            if kind == KeyRuleKind::InFlight && dt % 3 == 0 {
                // Give units back: at most what the key holds.
                let held = model.held.entry(key).or_default();
                prop_assert_eq!(table.release(&[key], cost as u32), Ok(*held > 0));
                *held = held.saturating_sub(cost);
                continue;
            }
            let d = table.decide(&[key], now, cost as u32).unwrap();
            let expected = model.decide(kind, (limit, period, burst), key, now, cost);
            prop_assert_eq!((d.admitted, d.remaining as u64), expected, "key {} at {}", key, now);
        }
    }
}

/// A key of `limits`' `MemoryStorage` / express-rate-limit's `MemoryStore`:
/// a count and its expiry (ms), set by the hit that finds it expired.
#[derive(Clone, Copy, Default)]
struct Stored {
    count: u64,
    expiry: u64,
}

impl Stored {
    /// `incr(key, expiry, amount)` / `increment(key)`: an expired count
    /// (`expiry <= now`) restarts, with `expiry = now + W`.
    fn increment(&mut self, now: u64, w: u64, n: u64) -> KeyCount {
        if self.expiry <= now {
            *self = Stored {
                count: 0,
                expiry: now + w,
            };
        }
        self.count += n;
        self.get(now)
    }

    /// `get` and `get_expiry` (`now` when there is none).
    fn get(&self, now: u64) -> KeyCount {
        match self.expiry > now {
            true => KeyCount {
                count: self.count,
                previous: 0,
                reset_ms: self.expiry - now,
            },
            false => KeyCount::default(),
        }
    }
}

proptest! {
    #[test]
    fn a_window_from_the_first_hit_counts_as_limits_and_express_stores(
        limit in 1u64..20,
        period in 100u64..3000,
        calls in prop::collection::vec((0u8..4, 0u64..700, 0u8..5, 1u64..5), 1..150),
    ) {
        let rule = KeyRule::from_entries(
            KeyRuleKind::FixedWindow,
            [
                ("limit", Value::from(limit)),
                ("periodMs", Value::from(period)),
                ("windowFromFirstHit", Value::from(1i64)),
                ("countRefused", Value::from(1i64)),
            ],
        )
        .unwrap();
        let buckets: Vec<KeyBucket> = (0..64).map(|_| KeyBucket::new()).collect();
        let table = KeyTable::new(buckets, rule).unwrap();
        let mut stores: HashMap<u8, Stored> = HashMap::new();
        let mut now = 1_700_000_000_000;
        for (key, dt, op, n) in calls {
            now += dt;
            let stored = stores.entry(key).or_default();
            let k = [key];
            match op {
                // limits' FixedWindowRateLimiter.hit, express's verdict:
                // the count after the hit within the limit.
                0 => {
                    let d = table.decide(&k, now, n as u32).unwrap();
                    let c = stored.increment(now, period, n);
                    prop_assert_eq!(d.admitted, c.count <= limit);
                    prop_assert_eq!(d.remaining as u64, limit.saturating_sub(c.count));
                    prop_assert_eq!(d.reset_ms, c.reset_ms);
                }
                1 => {
                    let c = table.increment(&k, now, n as u32).unwrap();
                    prop_assert_eq!(c, stored.increment(now, period, n));
                }
                // express decrements a live window only (the middleware
                // skips it once the reset time has passed), by one.
                2 if stored.expiry > now => {
                    stored.count = stored.count.saturating_sub(1);
                    prop_assert_eq!(table.decrement(&k, now, 1).unwrap(), stored.get(now));
                }
                3 => {
                    table.reset(&k);
                    *stored = Stored::default();
                }
                _ => prop_assert_eq!(table.count(&k, now).unwrap(), stored.get(now)),
            }
        }
    }
}
