//! `sds_keys`: per-key limits, the core's `KeyTable` (one rule, keys of any
//! bytes, a fixed number of cells) over a heap array of buckets, or in a
//! file every process of the host opens (`sds_shm::AnyKeys`). The rule
//! comes as JSON text through `sds_settings::key_rule_json`; decisions
//! and counters come back as plain C structs. An `sds_keys *` is
//! `Arc::into_raw` of the `AnyKeys`, listed (weakly) for every
//! `sds_metrics_text` of the process until `sds_keys_free`.

use std::ffi::{c_void, OsStr};
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::Arc;

use sds_core::keyed::{KeyCount, KeyDecision, KeyError, KeyRule, KeyTableStats, NEVER};
use sds_metrics::{keyed_label, register_keyed};
use sds_settings::key_rule_json;
use sds_shm::{AnyKeys, Options};

use crate::args::{bytes, out, write_if_given};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;
use crate::shared::{failure, SDS_SHARED_GROUP};

/// `retry_after_ms` of a refused cost that no wait can admit (above the
/// rule's limit or burst): `UINT64_MAX`.
pub const SDS_KEY_NEVER: u64 = u64::MAX;
const _: () = assert!(SDS_KEY_NEVER == NEVER);

/// Keys to per-key state under one rule, in a fixed number of cells.
/// Opaque: create it with `sds_keys_new` or `sds_keys_open_shared`, free it
/// with `sds_keys_free`. Every function taking a `const sds_keys *` may be
/// called from any number of threads at once.
// Never instantiated: an `sds_keys *` points to the `AnyKeys` inside an
// `Arc` (see the module's comment), reached through [`keys_input`].
pub struct sds_keys {
    _opaque: [u8; 0],
}

/// The key table behind a live `sds_keys *`.
///
/// # Safety
/// `keys` must be NULL or a live key table.
#[inline(always)]
unsafe fn keys_input<'a>(keys: *const sds_keys) -> Result<&'a AnyKeys, Failure> {
    (keys as *const AnyKeys)
        .as_ref()
        .ok_or_else(|| Failure::null("keys"))
}

/// The optional metrics name `(name, name_len)` of a key table: NULL for
/// none, else 1 to `SDS_MAX_NAME_LEN` bytes of UTF-8.
///
/// # Safety
/// `name` must be NULL or point to `name_len` readable bytes.
unsafe fn metrics_name<'a>(
    name: *const c_char,
    name_len: usize,
) -> Result<Option<&'a str>, Failure> {
    if name.is_null() {
        return Ok(None);
    }
    let bytes = crate::args::name(name, name_len)?;
    if bytes.is_empty() {
        return Err(sds_core::Error::EmptyName.into());
    }
    match core::str::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(_) => Err(Failure::invalid(&"`name` is not UTF-8")),
    }
}

/// Writes to `*out` (checked first) the key table `make` opens, listed for
/// `sds_metrics_text` under `name` (`sds_metrics::keyed_label`).
///
/// # Safety
/// `out` must be NULL or point to a writable `sds_keys *`.
unsafe fn keys_output(
    out_ptr: *mut *mut sds_keys,
    name: Option<&str>,
    make: impl FnOnce() -> Result<AnyKeys, Failure>,
) -> Result<(), Failure> {
    let out = out(out_ptr, "out")?;
    let keys = Arc::new(make()?);
    register_keyed(&keys, keyed_label(&keys, name));
    out.write(Arc::into_raw(keys) as *mut sds_keys);
    Ok(())
}

impl From<KeyError> for Failure {
    fn from(e: KeyError) -> Failure {
        Failure::new(e.code(), &e)
    }
}

/// The rule in the JSON text `text` (`sds_settings::key_rule_json`).
fn rule(text: &[u8]) -> Result<KeyRule, Failure> {
    key_rule_json(text).map_err(|e| Failure::new(e.code(), &e))
}

/// The checked `(keys, key, key_len)` arguments of the per-key calls: any
/// bytes, empty included.
///
/// # Safety
/// `keys` must be NULL or live, `key` NULL or point to `key_len` bytes.
unsafe fn keyed<'a>(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
) -> Result<(&'a AnyKeys, &'a [u8]), Failure> {
    let keys = keys_input(keys)?;
    Ok((keys, bytes(key.cast(), key_len, "key")?))
}

/// Creates a private key table for `capacity_keys` keys (rounded up to
/// buckets of 4; 16 bytes each, allocated up front) deciding by the rule
/// in the JSON text `(rule, rule_len)`, and writes it to `*out`:
/// `{"kind": "rate", "limit": 10, "periodMs": 1000, "burst": 20,
/// "exceptions": [["partner-42", 100]]}`. Kinds: `"rate"` (`limit` per
/// `periodMs`, up to `burst` at once, default `limit`), `"fixedWindow"`
/// and `"slidingWindow"` (`limit` per window of `periodMs`), `"inFlight"`
/// (`limit` units held at once, given back by `sds_keys_release`).
///
/// `sds_metrics_text` shows the table (its keys, evictions, decisions)
/// as `limit="private-N"` (N counting the process's unnamed private
/// tables from 1) until `sds_keys_free`; `sds_keys_new_named` names it.
///
/// Returns `SDS_RESULT_INVALID_JSON` for text that is not one JSON object,
/// `SDS_RESULT_UNKNOWN_FIELD` for another member, `SDS_RESULT_INVALID_STRATEGY`
/// for a value its rule rejects (the message names the field),
/// `SDS_RESULT_INVALID_CAPACITY` for 0, above 2^28 keys or memory that
/// cannot be allocated, `SDS_RESULT_NULL_ARGUMENT` for a NULL pointer.
///
/// # Safety
/// `rule` must point to `rule_len` readable bytes, `out` to a writable
/// `sds_keys *`.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_new(
    rule: *const c_char,
    rule_len: usize,
    capacity_keys: usize,
    out: *mut *mut sds_keys,
) -> sds_result {
    // NULL: the default name.
    sds_keys_new_named(rule, rule_len, capacity_keys, ptr::null(), 0, out)
}

/// `sds_keys_new`, the table shown by `sds_metrics_text` as
/// `limit="<name>"`: `(name, name_len)` is 1 to `SDS_MAX_NAME_LEN` bytes of
/// UTF-8 (NULL: the default name, as `sds_keys_new`). Two live tables of
/// one name show once (the first).
///
/// Returns as `sds_keys_new`; the name errors (`SDS_RESULT_EMPTY_NAME`,
/// `SDS_RESULT_NAME_TOO_LONG`) and `SDS_RESULT_INVALID_ARGUMENT` for a name
/// that is not UTF-8.
///
/// # Safety
/// As `sds_keys_new`; `name` NULL or pointing to `name_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_new_named(
    rule: *const c_char,
    rule_len: usize,
    capacity_keys: usize,
    name: *const c_char,
    name_len: usize,
    out: *mut *mut sds_keys,
) -> sds_result {
    boundary(|| {
        let name = metrics_name(name, name_len)?;
        keys_output(out, name, || {
            let rule = self::rule(bytes(rule, rule_len, "rule")?)?;
            Ok(AnyKeys::private(rule, capacity_keys)?)
        })
    })
}

/// Opens the key table file at `path` (`path_len` bytes, no NUL), creating
/// it if it does not exist for `capacity_keys` keys and the rule in the
/// JSON text `(rule, rule_len)` (as `sds_keys_new`), and writes it to
/// `*out`. Every process that opens the file decides on the same keys. A
/// rate's or a window's file keeps no descriptor and no lock open, so a
/// fork child uses its parent's table as it is. An `"inFlight"` file also
/// keeps, per process, a slot (its descriptor open and a lock held) and a
/// ledger of the units it holds, so that the units of a process killed
/// while holding them are given back exactly once (by the next process
/// to open the file, or a call refused at most every 100 ms); a fork
/// child takes a slot of its own on its first call, and a process gives
/// back only units it took. Files, modes, ownership and `flags`
/// (`SDS_SHARED_GROUP`) follow `sds_table_open_shared`; the layout is
/// `shm/README.md`'s "Key tables". `sds_keys_free` unmaps (the file stays).
/// `sds_metrics_text` shows it as `limit="<the file's name>"` (the file's
/// counters: every process's); `sds_keys_open_shared_named` names it.
///
/// Returns the rule's errors as `sds_keys_new`; `SDS_RESULT_LAYOUT_MISMATCH`
/// for a file made for another capacity or rule (the message names the
/// first field that differs; exceptions must be given in the same order)
/// or holding a point table; `SDS_RESULT_INVALID_CAPACITY`;
/// `SDS_RESULT_INVALID_ARGUMENT` for unknown `flags` bits, an in-flight
/// file whose 127 process slots are all held by live processes, and every
/// other file refused (the message names the path and the cause);
/// `SDS_RESULT_NULL_ARGUMENT` for a NULL pointer.
///
/// # Safety
/// `path` must point to `path_len` readable bytes, `rule` to `rule_len`,
/// `out` to a writable `sds_keys *`.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_open_shared(
    path: *const c_char,
    path_len: usize,
    rule: *const c_char,
    rule_len: usize,
    capacity_keys: usize,
    flags: u32,
    out: *mut *mut sds_keys,
) -> sds_result {
    // NULL: the default name.
    sds_keys_open_shared_named(
        path,
        path_len,
        rule,
        rule_len,
        capacity_keys,
        flags,
        ptr::null(),
        0,
        out,
    )
}

/// `sds_keys_open_shared`, the table shown by `sds_metrics_text` as
/// `limit="<name>"`, `(name, name_len)` as `sds_keys_new_named` takes it.
///
/// Returns as `sds_keys_open_shared` and, for the name, as
/// `sds_keys_new_named`.
///
/// # Safety
/// As `sds_keys_open_shared`; `name` NULL or pointing to `name_len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_open_shared_named(
    path: *const c_char,
    path_len: usize,
    rule: *const c_char,
    rule_len: usize,
    capacity_keys: usize,
    flags: u32,
    name: *const c_char,
    name_len: usize,
    out: *mut *mut sds_keys,
) -> sds_result {
    boundary(|| {
        let name = metrics_name(name, name_len)?;
        keys_output(out, name, || {
            let path = Path::new(OsStr::from_bytes(bytes(path, path_len, "path")?));
            let rule = self::rule(bytes(rule, rule_len, "rule")?)?;
            if flags & !SDS_SHARED_GROUP != 0 {
                let unknown = flags & !SDS_SHARED_GROUP;
                return Err(Failure::invalid(&format_args!(
                    "unknown flag bits {unknown:#x} (only SDS_SHARED_GROUP is known)"
                )));
            }
            let options = Options::new().group_access(flags & SDS_SHARED_GROUP != 0);
            AnyKeys::shared(path, capacity_keys, rule, &options).map_err(|e| failure(path, &e))
        })
    })
}

/// Frees a key table (a shared one is unmapped; the file stays); NULL is a
/// no-op. Infallible.
///
/// # Safety
/// `keys` must be NULL or come from `sds_keys_new` or
/// `sds_keys_open_shared` and not be freed yet, with no other thread using
/// it.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_free(keys: *mut sds_keys) {
    boundary_or((), || {
        if !keys.is_null() {
            drop(Arc::from_raw(keys as *const AnyKeys));
        }
    })
}

/// Decides a call of `cost` units (at least 1) for the key `(key, key_len)`
/// (any bytes) at `now_ms`, takes them if admitted, and writes the decision
/// to `*out`. A key not in the table takes a cell: a free one, else the one
/// closest to fresh among its 8 candidates (see `sds_key_stats`).
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a cost of 0 or a `key_len`
/// above `PTRDIFF_MAX`; `SDS_RESULT_TABLE_FULL` when an in-flight table's
/// new key finds every candidate cell holding units (nginx answers 503
/// there), or when this process holds units on as many keys of a shared
/// in-flight table as its ledger row keeps (about 1 024);
/// `SDS_RESULT_NULL_ARGUMENT` for a NULL pointer.
///
/// # Safety
/// `keys` must be a live table, `key` point to `key_len` bytes and `out`
/// to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_decide(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    now_ms: u64,
    cost: u32,
    out: *mut KeyDecision,
) -> sds_result {
    boundary(|| answer(keys, key, key_len, now_ms, Some(cost), out))
}

/// Writes to `*out` what `sds_keys_decide` would answer for a cost of 0:
/// the key's remaining units and reset at `now_ms`, nothing taken (a key
/// not in the table takes no cell and reads as fresh).
///
/// # Safety
/// As `sds_keys_decide`.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_peek(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    now_ms: u64,
    out: *mut KeyDecision,
) -> sds_result {
    boundary(|| answer(keys, key, key_len, now_ms, None, out))
}

/// The body of `sds_keys_decide` (a cost) and `sds_keys_peek` (none).
///
/// # Safety
/// As `sds_keys_decide`.
#[inline(always)]
unsafe fn answer(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    now_ms: u64,
    cost: Option<u32>,
    out: *mut KeyDecision,
) -> Result<(), Failure> {
    let (keys, key) = keyed(keys, key, key_len)?;
    let out = self::out(out, "out")?;
    let decision = match cost {
        Some(cost) => keys.decide(key, now_ms, cost)?,
        None => keys.peek(key, now_ms),
    };
    out.write(decision);
    Ok(())
}

/// Gives back `units` (at least 1; at most what the key holds) that
/// admitted calls of an `"inFlight"` rule took for the key, and writes to
/// `*held` (NULL to skip) whether it held any (on a shared file, units
/// this process took).
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a table of another kind or
/// `units` 0, and as `sds_keys_decide` for the arguments.
///
/// # Safety
/// `keys` must be a live table, `key` point to `key_len` bytes, `held` be
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_release(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    units: u32,
    held: *mut bool,
) -> sds_result {
    boundary(|| {
        let (keys, key) = keyed(keys, key, key_len)?;
        write_if_given(held, keys.release(key, units)?);
        Ok(())
    })
}

/// Forgets the key (its next call starts fresh, in-flight units included)
/// and writes to `*held` (NULL to skip) whether the table held it.
///
/// # Safety
/// As `sds_keys_release`.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_reset(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    held: *mut bool,
) -> sds_result {
    boundary(|| {
        let (keys, key) = keyed(keys, key, key_len)?;
        write_if_given(held, keys.reset(key));
        Ok(())
    })
}

/// Forgets every key, as `sds_keys_reset` forgets one (a store's
/// `resetAll`), and writes to `*held` (NULL to skip) how many keys the
/// table held. A key decided during the sweep may stay.
///
/// # Safety
/// `keys` must be NULL or a live table, `held` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_reset_all(keys: *const sds_keys, held: *mut u64) -> sds_result {
    boundary(|| {
        let keys = keys_input(keys)?;
        write_if_given(held, keys.reset_all());
        Ok(())
    })
}

/// Window rules: adds `delta` to the key's count at `now_ms` and writes the
/// counts after it to `*out`, as a store of Python `limits` or
/// express-rate-limit keeps them. `delta > 0` counts that many units
/// whatever the limit, starting a window if the key has none (`incr`,
/// `increment`; a key not in the table takes a cell); `delta < 0` takes up
/// to `-delta` off a live window's count, keeping the window (never below
/// 0; no window, nothing is taken: `decrement`); 0 only reads (`get`).
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a rule that is no window, and
/// as `sds_keys_decide` for the arguments.
///
/// # Safety
/// As `sds_keys_decide`.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_count_add(
    keys: *const sds_keys,
    key: *const c_void,
    key_len: usize,
    now_ms: u64,
    delta: i32,
    out: *mut KeyCount,
) -> sds_result {
    boundary(|| {
        let (keys, key) = keyed(keys, key, key_len)?;
        let out = self::out(out, "out")?;
        let count = keys.count_add(key, now_ms, delta.into())?;
        out.write(count);
        Ok(())
    })
}

/// Writes the table's counters to `*out` (a shared table's are the
/// file's: every process's keys).
///
/// # Safety
/// `keys` must be NULL or a live table, `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_keys_stats_get(
    keys: *const sds_keys,
    out: *mut KeyTableStats,
) -> sds_result {
    boundary(|| {
        let keys = keys_input(keys)?;
        let out = self::out(out, "out")?;
        out.write(keys.stats());
        Ok(())
    })
}
