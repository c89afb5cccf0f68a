//! A pulled strategy set applied to the table: each point's strategy
//! replaced on its own (one atomic store in the core), the points missing
//! from the set cleared, and a strategy the core refuses left out with its
//! reason while the point keeps its old strategy and return value.
//!
//! Each strategy object goes through the core's one strategy path
//! ([`Strategy::from_json`]) from its own JSON text, so a value gets the same
//! verdict as anywhere else and one bad strategy never costs its neighbours.
//! Where the reference client is lenient and the result is at least as
//! protective, so is this: a delay the core refuses (`delayTime` below
//! 10 000 ms, a bad `retryInterval`) is dropped with a warning and the rest
//! of the strategy applies.

use std::collections::{HashMap, HashSet};
use std::fmt;

use sds_core::{Error, Field, Points, Rule, Strategy, StrategyError, POINT_KEY};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The key of a point's fallback text in a console strategy.
pub const RETURN_VALUE_KEY: &str = "returnValueStr";

/// A console set may create points only while the table holds at most
/// `capacity / CONSOLE_SHARE_DIVISOR` of them, so the application always
/// keeps at least half the table for names it enters itself.
pub const CONSOLE_SHARE_DIVISOR: usize = 2;

/// One strategy of the set, read and accepted.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub strategy: Strategy,
    pub return_value: Option<String>,
}

/// A set as read: the entry that decides each point, and what was refused.
#[derive(Debug, Default)]
pub struct ReadSet {
    /// The deciding entry of each point, in the order points first appear.
    pub entries: Vec<Entry>,
    /// Every name the set gives, refused or not: none of them is cleared.
    pub named: HashSet<Vec<u8>>,
    /// Each refused entry (`refused: ...`) and each dropped delay (`of
    /// point ... applied without its delay: ...`), to follow "SDS strategy ".
    pub warnings: Vec<String>,
    /// Names with no valid entry: they keep their old strategy and return
    /// value.
    pub kept: Vec<String>,
}

/// What applying a set did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Strategies in force from this set.
    pub set: usize,
    /// Points whose strategy was removed (missing from the set).
    pub removed: usize,
    /// Why each entry was refused or changed, one line each.
    pub warnings: Vec<String>,
    /// Entries for points the table does not hold yet and has no room for
    /// within the console's share: tried again at each pull.
    pub waiting: Vec<Entry>,
    /// The return values now in force, by point.
    pub return_values: HashMap<String, String>,
}

/// A JSON object's members in order, duplicates kept, each value as its
/// slice of the object's text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'de>, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// Whether `e` is the core refusing only the strategy's delay.
fn delay_refused(e: &StrategyError) -> bool {
    matches!(
        e,
        StrategyError::Invalid(Error::InvalidStrategy {
            field: Field::DelayTime | Field::RetryInterval,
            rule: Rule::DelayTooShort | Rule::RetryTooShort | Rule::RetryBeyondDelay,
        })
    )
}

/// The strategy object as the core's reader takes it: the console's text
/// with every member that is neither `point` nor a strategy field
/// (`returnValueStr`, the console's own keys, skipped as the reference's
/// lenient reader skips them) overwritten by spaces, and the delay's too
/// when `without_delay`. Everything else keeps its bytes and offsets, so
/// the core's verdict and message are those of the console's text
/// (duplicates included, which the core refuses).
fn core_text(text: &str, members: &[(String, &RawValue)], without_delay: bool) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let open = text.find('{').map_or(0, |at| at + 1);
    // Where each member's value ends, as an offset into `text`.
    let ends: Vec<usize> = members
        .iter()
        .map(|(_, value)| {
            value.get().as_ptr() as usize - text.as_ptr() as usize + value.get().len()
        })
        .collect();
    for (i, (key, _)) in members.iter().enumerate() {
        let field = Field::from_json_name(key);
        let keep = (key == POINT_KEY || field.is_some())
            && !(without_delay && matches!(field, Some(Field::DelayTime | Field::RetryInterval)));
        if !keep {
            // A member after the first starts at its comma.
            let start = if i == 0 { open } else { ends[i - 1] };
            bytes[start..ends[i]].fill(b' ');
        }
    }
    // The first member kept may have lost every member before it: its
    // comma goes too.
    if let Some(at) = bytes[open..].iter().position(|b| !b.is_ascii_whitespace()) {
        if bytes[open + at] == b',' {
            bytes[open + at] = b' ';
        }
    }
    // Whole members were replaced by ASCII spaces: still UTF-8.
    String::from_utf8(bytes).expect("UTF-8 with whole members blanked")
}

/// Reads one `SdsStrategy` object: the entry and a warning when its delay
/// was dropped, or why it is refused with the point's name when it has one.
fn read_entry(raw: &RawValue) -> Result<(Entry, Option<String>), (Option<String>, String)> {
    let members: Members = serde_json::from_str(raw.get())
        .map_err(|e| (None, format!("a strategy that is not a JSON object ({e})")))?;
    let members = members.0;
    let value_of = |key: &'static str| members.iter().filter(move |(k, _)| k == key);
    // The name as JSON gives it; a name JSON cannot carry as a string (a
    // lone surrogate) is no name, and the core's verdict below says why.
    let name = value_of(POINT_KEY)
        .next_back()
        .and_then(|(_, v)| serde_json::from_str::<Option<String>>(v.get()).ok())
        .flatten()
        .filter(|name| !name.is_empty());
    let verdict = Strategy::from_json(&core_text(raw.get(), &members, false));
    let (strategy, warning) = {
        let fail = |message: String| (name.clone(), message);
        match verdict {
            Ok(strategy) => (strategy, None),
            Err(e) if delay_refused(&e) => {
                match Strategy::from_json(&core_text(raw.get(), &members, true)) {
                    Ok(strategy) => (strategy, Some(e.to_string())),
                    Err(_) => return Err(fail(e.to_string())),
                }
            }
            Err(e) => return Err(fail(e.to_string())),
        }
    };
    let name = name.ok_or((None, "a strategy without a \"point\" name".to_string()))?;
    let fail = |message: String| (Some(name.clone()), message);
    let mut return_values = value_of(RETURN_VALUE_KEY);
    let return_value = match (return_values.next(), return_values.next()) {
        (_, Some(_)) => return Err(fail(format!("\"{RETURN_VALUE_KEY}\" is given twice"))),
        (None, None) => None,
        (Some((_, text)), None) => serde_json::from_str::<Option<String>>(text.get())
            .map_err(|_| fail(format!("\"{RETURN_VALUE_KEY}\" must be a string")))?,
    };
    let warning = warning.map(|w| format!("of point \"{name}\" applied without its delay: {w}"));
    Ok((
        Entry {
            name,
            strategy,
            return_value,
        },
        warning,
    ))
}

/// Reads a whole set. A point named more than once is decided by its last
/// valid entry, strategy and return value together; its refused entries
/// are reported; with no valid entry it keeps what it had.
pub fn read_set(raws: &[Box<RawValue>]) -> ReadSet {
    let mut set = ReadSet::default();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut refused_names: Vec<String> = Vec::new();
    for raw in raws {
        match read_entry(raw) {
            Ok((entry, warning)) => {
                set.warnings.extend(warning);
                set.named.insert(entry.name.as_bytes().to_vec());
                match at.get(&entry.name) {
                    Some(&i) => set.entries[i] = entry,
                    None => {
                        at.insert(entry.name.clone(), set.entries.len());
                        set.entries.push(entry);
                    }
                }
            }
            Err((name, reason)) => match name {
                Some(name) => {
                    set.named.insert(name.as_bytes().to_vec());
                    set.warnings
                        .push(format!("refused: point \"{name}\": {reason}"));
                    refused_names.push(name);
                }
                None => set.warnings.push(format!("refused: {reason}")),
            },
        }
    }
    for name in refused_names {
        if !at.contains_key(&name) && !set.kept.contains(&name) {
            set.kept.push(name);
        }
    }
    set
}

/// Applies the whole set `read` to `table` of `capacity` points.
/// `old_return_values` are the return values in force before, kept for
/// points whose every entry was refused.
pub fn apply(
    table: &dyn Points,
    capacity: usize,
    read: ReadSet,
    old_return_values: &HashMap<String, String>,
) -> Applied {
    let mut applied = Applied {
        warnings: read.warnings,
        ..Applied::default()
    };
    for name in &read.kept {
        if let Some(text) = old_return_values.get(name) {
            applied.return_values.insert(name.clone(), text.clone());
        }
    }
    let mut room = Room::of(table, capacity);
    for entry in read.entries {
        match room.set(table, &entry) {
            Ok(true) => {
                applied.set += 1;
                if let Some(text) = &entry.return_value {
                    applied
                        .return_values
                        .insert(entry.name.clone(), text.clone());
                }
            }
            Ok(false) => applied.waiting.push(entry),
            Err(e) => {
                if let Some(text) = old_return_values.get(&entry.name) {
                    applied
                        .return_values
                        .insert(entry.name.clone(), text.clone());
                }
                applied
                    .warnings
                    .push(format!("refused: point \"{}\": {e}", entry.name));
            }
        }
    }
    let mut missing: Vec<Vec<u8>> = Vec::new();
    table.for_each_point(&mut |_, name, point| {
        if point.strategy().is_some() && !read.named.contains(name) {
            missing.push(name.to_vec());
        }
    });
    for name in missing {
        if table.remove_strategy(&name).is_ok() {
            applied.removed += 1;
        }
    }
    applied
}

/// Tries the entries that waited for room again; returns those applied
/// (their return values go into `return_values`) and keeps the rest.
pub fn retry_waiting(
    table: &dyn Points,
    capacity: usize,
    waiting: &mut Vec<Entry>,
    return_values: &mut HashMap<String, String>,
) -> usize {
    let mut room = Room::of(table, capacity);
    let mut applied = 0;
    waiting.retain(|entry| match room.set(table, entry) {
        Ok(true) => {
            applied += 1;
            if let Some(text) = &entry.return_value {
                return_values.insert(entry.name.clone(), text.clone());
            }
            false
        }
        Ok(false) => true,
        // Refused by the table now (not for room): dropped, as a refusal
        // at apply time would have been.
        Err(_) => false,
    });
    applied
}

/// The points the console may still create.
struct Room {
    used: usize,
    share: usize,
}

impl Room {
    fn of(table: &dyn Points, capacity: usize) -> Room {
        let mut used = 0;
        table.for_each_point(&mut |_, _, _| used += 1);
        Room {
            used,
            share: capacity / CONSOLE_SHARE_DIVISOR,
        }
    }

    /// Sets `entry` on its point: `Ok(false)` when the table does not hold
    /// the point and the console's share is used up.
    fn set(&mut self, table: &dyn Points, entry: &Entry) -> Result<bool, Error> {
        let name = entry.name.as_bytes();
        let exists = table.lookup(name)?.is_some();
        if !exists {
            if self.used >= self.share {
                return Ok(false);
            }
            self.used += 1;
        }
        table.set_strategy(name, &entry.strategy)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blanked(text: &str, without_delay: bool) -> String {
        let members: Members = serde_json::from_str(text).unwrap();
        core_text(text, &members.0, without_delay)
    }

    #[test]
    fn members_the_core_does_not_know_are_blanked_in_place() {
        let text = r#"{"returnValueStr": "x", "id": 7, "point": "p", "visitThreshold": 2, "sdsSchemeName": null}"#;
        let core = blanked(text, false);
        assert_eq!(core.len(), text.len());
        assert_eq!(
            core.split_whitespace().collect::<String>(),
            r#"{"point":"p","visitThreshold":2}"#
        );
        let text =
            r#"{ "point" : "p" , "delayTime": 5, "retryInterval": 1, "returnValueStr": null }"#;
        assert_eq!(
            blanked(text, true).split_whitespace().collect::<String>(),
            r#"{"point":"p"}"#
        );
        assert_eq!(blanked("{}", true), "{}");
        assert_eq!(
            blanked(r#"{"a": 1, "b": 2}"#, false)
                .split_whitespace()
                .collect::<String>(),
            "{}"
        );
        // Duplicates stay, for the core to refuse.
        let core = r#"{"returnValueStr": "x", "visitThreshold": 2, "visitThreshold": 3}"#;
        assert_eq!(
            Strategy::from_json(&blanked(core, false))
                .unwrap_err()
                .to_string(),
            r#"invalid strategy: "visitThreshold" is given twice"#
        );
    }
}
