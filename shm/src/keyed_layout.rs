//! A key table's file: where its parts lie, and what its header holds (the
//! shape of its cells and buckets, and its rule).
//!
//! ```text
//! 0       header, 4096 bytes of native u64 words: magic "SDSKEYTB",
//!         version, the key descriptor (words 2..17, byte order at 16),
//!         ready (32), creator pid (33), the rule (words 40..46), its
//!         exceptions (words 48..63: fingerprint, limit)
//! 4096    the core's `KeyTableState`, 576 bytes
//! 4672    buckets: `capacity / 4` x 64 bytes (the core's `KeyBucket`)
//! ```
//!
//! A rate's or a window's file ends there: its decision is one
//! compare-and-swap of a cell, so a process dies owing nothing to the
//! others, and the file is all a process needs to decide. An in-flight
//! file goes on with what gives a dead process's units back (header words
//! 34 and 35: the slots and the row length):
//!
//! ```text
//! ...     process slots: KEY_PROCESSES records of 32 bytes (processes.rs),
//!         each locked by its own byte past the end of the file
//! ...     (from a 4096 boundary) ledger: KEY_PROCESSES rows of
//!         LEDGER_ROW entries of 32 bytes (the core's `KeyLedgerEntry`)
//! ```

use std::hash::{Hash, Hasher};
use std::mem::{align_of, size_of};
use std::path::Path;

use sds_core::keyed::{
    KeyBucket, KeyLedgerEntry, KeyRule, KeyRuleBuilder, KeyRuleKind, KeyTableState, BUCKET_CELLS,
    MAX_EXCEPTIONS, MAX_KEY_BUCKETS, MAX_LEDGER_ROW, MAX_LEDGER_SLOTS, MAX_PERIOD_MS,
};
use sds_core::Value;

use crate::error::Error;
use crate::layout::{
    byte_order_mark, HEADER_BYTE_ORDER, HEADER_DESCRIPTOR, HEADER_SIZE, PROCESS_RECORD_SIZE,
};
use crate::open::Format;

/// The key table file's magic.
pub const KEY_MAGIC: [u8; 8] = *b"SDSKEYTB";
/// The key file layout this build reads and writes: the header words, the
/// place of the state block and the buckets. 2: the rule's flags and its
/// exceptions in the header; 3: decision counts in the state block.
pub const KEY_LAYOUT_VERSION: u64 = 3;
/// Where the core's `KeyTableState` lies.
pub const KEY_STATE_OFFSET: usize = HEADER_SIZE;
/// Where the buckets start.
pub const BUCKETS_OFFSET: usize = KEY_STATE_OFFSET + size_of::<KeyTableState>();
/// Word 40: the rule, [`RULE_FIELDS`] one per word.
pub const HEADER_RULE: usize = 40;
/// Word 48: the rule's exceptions, two words each (fingerprint, limit; 0
/// after the last), up to `MAX_EXCEPTIONS`.
pub const HEADER_EXCEPTIONS: usize = 48;

/// Word 34 (in-flight files): process slots.
pub const HEADER_KEY_PROCESSES: usize = 34;
/// Word 35 (in-flight files): entries per ledger row.
pub const HEADER_LEDGER_ROW: usize = 35;
/// Process slots of an in-flight file: processes deciding on it at once.
pub const KEY_PROCESSES: usize = MAX_LEDGER_SLOTS;
/// Ledger entries per process: keys a process holds units on at once
/// (up to about this many: a key's entry is among 32 from its place).
pub const LEDGER_ROW: usize = MAX_LEDGER_ROW;

/// The key descriptor's fields, in the order they are stored from word
/// `HEADER_DESCRIPTOR`; the byte order is at `HEADER_BYTE_ORDER` as in
/// a point table's file, so it is checked first in both.
pub const KEY_FIELDS: [&str; 15] = [
    "key_layout_version",
    "capacity",
    "cell_size",
    "bucket_cells",
    "bucket_size",
    "bucket_align",
    "state_size",
    "state_align",
    "max_exceptions",
    "rule_kinds",
    "max_period_ms",
    "max_buckets",
    "pointer_width",
    "atomic_u64_size",
    "byte_order",
];

/// The rule's fields, in the order they are stored from word
/// `HEADER_RULE` (camelCase, as a rule's input names them; the flags 0
/// or 1). `exceptions` is a 64-bit digest of the whole rule (the named
/// keys themselves, by fingerprint, are at `HEADER_EXCEPTIONS`).
pub const RULE_FIELDS: [&str; 7] = [
    "kind",
    "limit",
    "periodMs",
    "burst",
    "windowFromFirstHit",
    "countRefused",
    "exceptions",
];

const _: () = assert!(HEADER_DESCRIPTOR + KEY_FIELDS.len() - 1 == HEADER_BYTE_ORDER);
const _: () = assert!(HEADER_RULE + RULE_FIELDS.len() <= HEADER_EXCEPTIONS);
const _: () = assert!(HEADER_EXCEPTIONS + 2 * MAX_EXCEPTIONS <= HEADER_SIZE / 8);
const _: () = assert!(size_of::<KeyBucket>() == 64 && align_of::<KeyBucket>() == 64);
const _: () = assert!(BUCKETS_OFFSET % 64 == 0);

/// A key table file of `buckets` buckets deciding by `rule`.
pub struct Keys {
    buckets: usize,
    rule: KeyRule,
}

impl Keys {
    /// The file of a table holding `capacity` keys (rounded up to whole
    /// buckets); `None` if no bucket count in range holds them.
    pub fn new(capacity: usize, rule: KeyRule) -> Option<Keys> {
        let buckets = capacity.div_ceil(BUCKET_CELLS);
        (1..=MAX_KEY_BUCKETS)
            .contains(&buckets)
            .then_some(Keys { buckets, rule })
    }

    /// Buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Whether the file keeps process slots and a ledger (in flight).
    pub fn ledgered(&self) -> bool {
        self.rule.kind() == KeyRuleKind::InFlight
    }

    /// Where the process slots lie (in-flight files).
    pub fn processes_offset(&self) -> usize {
        BUCKETS_OFFSET + self.buckets * size_of::<KeyBucket>()
    }

    /// Where the ledger lies (in-flight files).
    pub fn ledger_offset(&self) -> usize {
        (self.processes_offset() + KEY_PROCESSES * PROCESS_RECORD_SIZE).next_multiple_of(4096)
    }

    fn ledger_words(&self) -> [(usize, u64); 2] {
        [
            (HEADER_KEY_PROCESSES, KEY_PROCESSES as u64),
            (HEADER_LEDGER_ROW, LEDGER_ROW as u64),
        ]
    }

    fn descriptor(&self) -> [u64; KEY_FIELDS.len()] {
        [
            u64::from(sds_core::keyed::KEY_LAYOUT_VERSION),
            (self.buckets * BUCKET_CELLS) as u64,
            (size_of::<KeyBucket>() / BUCKET_CELLS) as u64,
            BUCKET_CELLS as u64,
            size_of::<KeyBucket>() as u64,
            align_of::<KeyBucket>() as u64,
            size_of::<KeyTableState>() as u64,
            align_of::<KeyTableState>() as u64,
            MAX_EXCEPTIONS as u64,
            KeyRuleKind::ALL.len() as u64,
            MAX_PERIOD_MS,
            MAX_KEY_BUCKETS as u64,
            u64::from(usize::BITS),
            size_of::<u64>() as u64,
            byte_order_mark(),
        ]
    }

    fn rule_words(&self) -> [u64; RULE_FIELDS.len()] {
        let r = &self.rule;
        [
            kind_word(r.kind()),
            u64::from(r.limit()),
            r.period_ms(),
            u64::from(r.burst()),
            u64::from(r.window_from_first_hit()),
            u64::from(r.count_refused()),
            digest(r),
        ]
    }

    fn exception_words(&self) -> [u64; 2 * MAX_EXCEPTIONS] {
        let mut words = [0; 2 * MAX_EXCEPTIONS];
        for (pair, e) in words.chunks_exact_mut(2).zip(self.rule.exceptions()) {
            pair.copy_from_slice(&[e.fingerprint, u64::from(e.limit)]);
        }
        words
    }
}

/// The rule a key file's header holds (`word(i)`: header word `i`), built
/// again through the core's builder; `None` unless it is a valid rule
/// whose digest is the stored one.
pub fn rule_in_header(word: &dyn Fn(usize) -> u64) -> Option<KeyRule> {
    let field = |name| {
        let at = RULE_FIELDS.iter().position(|&f| f == name)?;
        Some(word(HEADER_RULE + at))
    };
    let kind = *KeyRuleKind::ALL.get((field("kind")? as usize).checked_sub(1)?)?;
    let mut builder = KeyRuleBuilder::new(kind);
    for name in [
        "limit",
        "periodMs",
        "burst",
        "windowFromFirstHit",
        "countRefused",
    ] {
        let value = field(name)?;
        let unset = match name {
            "periodMs" => kind == KeyRuleKind::InFlight,
            "burst" => kind != KeyRuleKind::Rate,
            "windowFromFirstHit" | "countRefused" => kind != KeyRuleKind::FixedWindow,
            _ => false,
        };
        if !unset {
            builder.set(name, Value::from(value)).ok()?;
        }
    }
    for i in 0..MAX_EXCEPTIONS {
        let fingerprint = word(HEADER_EXCEPTIONS + 2 * i);
        if fingerprint == 0 {
            break;
        }
        let limit = Value::from(word(HEADER_EXCEPTIONS + 2 * i + 1));
        builder.except_fingerprint(fingerprint, limit).ok()?;
    }
    let rule = builder.build().ok()?;
    (digest(&rule) == field("exceptions")?).then_some(rule)
}

/// A kind as stored: 1 + its place in `KeyRuleKind::ALL` (0: none).
fn kind_word(kind: KeyRuleKind) -> u64 {
    let at = KeyRuleKind::ALL.iter().position(|&k| k == kind);
    at.map_or(0, |i| i as u64 + 1)
}

/// A stored rule word as text: the kind by name, the digest in hex.
fn show(field: usize, word: u64) -> String {
    match field {
        0 => match (word as usize)
            .checked_sub(1)
            .and_then(|i| KeyRuleKind::ALL.get(i))
        {
            Some(kind) => kind.as_str().to_string(),
            None => format!("kind #{word}"),
        },
        6 => format!("digest {word:016x}"),
        _ => word.to_string(),
    }
}

/// FNV-1a over the bytes `Hash` feeds it: the same in every process of a
/// build (no random keys), so two rules that are equal digest alike.
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A digest of the whole rule, its named keys' fingerprints and limits
/// included (in the order they were given, as the rule's `==` compares).
fn digest(rule: &KeyRule) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    rule.hash(&mut h);
    h.finish()
}

/// The index of the first word of `ours` that `theirs(i)` does not match.
fn first_difference(ours: &[u64], theirs: impl Fn(usize) -> u64) -> Option<usize> {
    (0..ours.len()).find(|&i| ours[i] != theirs(i))
}

impl Format for Keys {
    const MAGIC: [u8; 8] = KEY_MAGIC;
    const VERSION: u64 = KEY_LAYOUT_VERSION;
    const KIND: &'static str = "key table";

    fn file_len(&self) -> usize {
        match self.ledgered() {
            true => {
                let entries = KEY_PROCESSES * LEDGER_ROW;
                self.ledger_offset() + entries * size_of::<KeyLedgerEntry>()
            }
            false => self.processes_offset(),
        }
    }

    fn words(&self) -> Vec<(usize, u64)> {
        let descriptor = self.descriptor().into_iter().enumerate();
        let rule = self.rule_words().into_iter().enumerate();
        let exceptions = self.exception_words().into_iter().enumerate();
        descriptor
            .map(|(i, w)| (HEADER_DESCRIPTOR + i, w))
            .chain(rule.map(|(i, w)| (HEADER_RULE + i, w)))
            .chain(exceptions.map(|(i, w)| (HEADER_EXCEPTIONS + i, w)))
            .chain(self.ledger_words().into_iter().filter(|_| self.ledgered()))
            .collect()
    }

    fn check(&self, path: &Path, word: &dyn Fn(usize) -> u64) -> Result<(), Error> {
        let mismatch = |what, field: &'static str, ours: String, theirs: String| {
            Err(Error::KeyMismatch {
                path: path.into(),
                what,
                field,
                ours,
                theirs,
            })
        };
        let ours = self.descriptor();
        if let Some(i) = first_difference(&ours, |i| word(HEADER_DESCRIPTOR + i)) {
            let theirs = word(HEADER_DESCRIPTOR + i).to_string();
            return mismatch("layout", KEY_FIELDS[i], ours[i].to_string(), theirs);
        }
        let ours = self.rule_words();
        if let Some(i) = first_difference(&ours, |i| word(HEADER_RULE + i)) {
            let theirs = show(i, word(HEADER_RULE + i));
            return mismatch("rule", RULE_FIELDS[i], show(i, ours[i]), theirs);
        }
        let ledger = self.ledger_words().into_iter().filter(|_| self.ledgered());
        for ((at, ours), field) in ledger.zip(["key_processes", "ledger_row"]) {
            if word(at) != ours {
                return mismatch("layout", field, ours.to_string(), word(at).to_string());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::keyed::KeyRuleBuilder;
    use sds_core::Value;

    fn rule(limit: i64, except: Option<(&[u8], i64)>) -> KeyRule {
        let mut b = KeyRuleBuilder::new(KeyRuleKind::Rate);
        b.set("limit", Value::from(limit)).unwrap();
        b.set("periodMs", Value::from(1000i64)).unwrap();
        if let Some((key, own)) = except {
            b.except(key, Value::from(own)).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn equal_rules_digest_alike_and_any_exception_changes_the_digest() {
        assert_eq!(digest(&rule(10, None)), digest(&rule(10, None)));
        let a = digest(&rule(10, Some((b"vip", 100))));
        assert_eq!(a, digest(&rule(10, Some((b"vip", 100)))));
        assert_ne!(a, digest(&rule(10, Some((b"vip", 99)))));
        assert_ne!(a, digest(&rule(10, Some((b"vip2", 100)))));
        assert_ne!(a, digest(&rule(10, None)));
    }

    #[test]
    fn capacity_rounds_up_to_buckets_and_the_file_ends_after_the_last() {
        let keys = Keys::new(10, rule(10, None)).unwrap();
        assert_eq!(keys.buckets(), 3);
        assert_eq!(keys.file_len(), 4096 + 576 + 3 * 64);
        assert_eq!(keys.descriptor()[1], 12);
        assert!(Keys::new(0, rule(1, None)).is_none());
        assert!(Keys::new(MAX_KEY_BUCKETS * BUCKET_CELLS + 1, rule(1, None)).is_none());
        assert!(Keys::new(MAX_KEY_BUCKETS * BUCKET_CELLS, rule(1, None)).is_some());
    }

    #[test]
    fn stored_rule_words_read_back_as_text() {
        assert_eq!(
            show(0, kind_word(KeyRuleKind::SlidingWindow)),
            "slidingWindow"
        );
        assert_eq!(show(0, 9), "kind #9");
        assert_eq!(show(1, 10), "10");
        assert_eq!(show(6, 255), "digest 00000000000000ff");
    }

    #[test]
    fn the_rule_reads_back_from_the_header_words() {
        let mut b = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
        b.set("limit", Value::from(100i64)).unwrap();
        b.set("periodMs", Value::from(60_000i64)).unwrap();
        b.set("windowFromFirstHit", Value::from(1i64)).unwrap();
        b.except(b"vip", Value::from(1000i64)).unwrap();
        b.except(b"bot", Value::from(1i64)).unwrap();
        for rule in [
            b.build().unwrap(),
            rule(10, Some((b"vip", 100))),
            rule(7, None),
        ] {
            let keys = Keys::new(16, rule).unwrap();
            let mut header = vec![0u64; HEADER_SIZE / 8];
            for (at, w) in keys.words() {
                header[at] = w;
            }
            assert_eq!(rule_in_header(&|i| header[i]), Some(rule));
            // Another limit under the same digest: refused.
            header[HEADER_RULE + 1] += 1;
            assert_eq!(rule_in_header(&|i| header[i]), None);
        }
        assert_eq!(rule_in_header(&|_| 0), None);
    }
}
