//! The keyed limits of this process that metrics show: each binding lists
//! a limit when it opens one, and a limit dropped leaves the list by itself.

use std::sync::{Arc, Mutex, Weak};

use sds_core::keyed::KeyTableStats;
use sds_shm::AnyKeys;

struct Listed {
    label: String,
    keys: Weak<AnyKeys>,
}

static KEYED: Mutex<Vec<Listed>> = Mutex::new(Vec::new());

/// The label of a keyed limit: `name` when given, else a shared table's
/// file name, else `private-N` (N counting this process's unnamed private
/// limits from 1).
pub fn keyed_label(keys: &AnyKeys, name: Option<&str>) -> String {
    if let Some(name) = name {
        return name.to_string();
    }
    match keys.path().and_then(|p| p.file_name()) {
        Some(file) => file.to_string_lossy().into_owned(),
        None => {
            static UNNAMED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = UNNAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            format!("private-{n}")
        }
    }
}

/// Lists `keys` under `label` ([`keyed_label`]) for every exporter of this
/// process, until it is dropped, and counts its decisions from now on. One label shows once: a second limit
/// under a label already listed (the same shared file opened twice, say)
/// is not shown while the first lives.
pub fn register_keyed(keys: &Arc<AnyKeys>, label: String) {
    // Its decisions are counted from now on (`KeyTable::count_decisions`):
    // a table nothing lists pays no count.
    keys.count_decisions();
    let mut list = KEYED.lock().unwrap_or_else(|e| e.into_inner());
    list.retain(|l| l.keys.strong_count() > 0);
    list.push(Listed {
        label,
        keys: Arc::downgrade(keys),
    });
}

/// The stats of every listed limit that is alive, by label, each label once.
pub(crate) fn keyed_stats() -> Vec<(String, KeyTableStats)> {
    let live: Vec<(String, Arc<AnyKeys>)> = {
        let mut list = KEYED.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|l| l.keys.strong_count() > 0);
        list.iter()
            .filter_map(|l| Some((l.label.clone(), l.keys.upgrade()?)))
            .collect()
    };
    let mut out: Vec<(String, KeyTableStats)> = Vec::with_capacity(live.len());
    for (label, keys) in live {
        if !out.iter().any(|(l, _)| *l == label) {
            out.push((label, keys.stats()));
        }
    }
    out
}
