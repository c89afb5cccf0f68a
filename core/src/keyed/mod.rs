//! Per-key limits with a hard memory bound (placeholder doc).

mod cell;
mod decision;
mod gcra;
mod hash;
mod rule;
mod table;
mod window;

pub use cell::{KeyBucket, KeyCell, BUCKET_CELLS};
pub use decision::{KeyDecision, NEVER};
pub use rule::{
    KeyField, KeyRule, KeyRuleBreak, KeyRuleBuilder, KeyRuleError, KeyRuleKind, MAX_EXCEPTIONS,
    MAX_PERIOD_MS,
};
pub use table::{
    KeyError, KeyStorage, KeyTable, KeyTableState, KeyTableStats, SharedKeys, MAX_KEY_BUCKETS,
};
