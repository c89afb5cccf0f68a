//! The key table against a plain model of each rule: random keys, costs
//! and times (never backwards), releases of in-flight units, the same
//! verdict and remaining units.

use std::collections::HashMap;

use proptest::prelude::*;
use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable};
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
