//! `NativeKeys`: a per-key limit (`sds_shm::AnyKeys`, a private key table
//! or this process's mapping of a shared file) and its hot functions.
//!
//! The calls that take a key (`decide`, `peek`, `increment`, `decrement`,
//! `count`, `release`, `reset`) run on every request of a rate-limited
//! route, so they are raw N-API callbacks like the point hot path
//! (`hot_path.rs` says why): each gets its table from its own `data`
//! pointer, takes one argument, the key, and passes its numbers through
//! `io`, a `Float64Array` over [`Keys::io`]:
//!
//! - in: `io[0]` the cost or units, `io[1]` the time or [`NOW`];
//! - out, a decision: `admitted` (1 or 0), `limit`, `remaining`, `resetMs`,
//!   `retryAfterMs` (`Infinity` for the core's `NEVER`), `windowMs`; a count:
//!   `count`, `previous`, `resetMs`; `release` and `reset`: 1 or 0.
//!
//! JavaScript (`lib/keyed.js`) builds the plain objects from `io`: a literal
//! made there costs far less than six N-API property sets.
//!
//! A key is a string, taken as its UTF-8 bytes (copied once, onto the stack
//! up to 1 KiB), or a Buffer / Uint8Array, whose bytes are read in place.
//! A string with a lone surrogate is refused like a point name: its UTF-8
//! form would replace it with U+FFFD and so merge two keys.
//!
//! The rest (opening, `resetAll`, `stats`, `close`) are methods of the class.

use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::{Object, ObjectFinalize, Unknown};
use napi::{sys, Env, ValueType};
use napi_derive::napi;
use sds_core::keyed::{
    lone_surrogate, units_from_i128, units_from_value, KeyCount, KeyDecision, KeyError, NEVER,
};
use sds_core::{ErrorCode, Value};
use sds_shm::AnyKeys;

use crate::arguments::{self, is_undefined, time_number};
use crate::entry_bits::whole_up_to;
use crate::errors::{internal, invalid_argument, js_error, SdsError};
use crate::external_memory::adjust;
use crate::hot_path::NOW;
use crate::raw::{self, check, Callback, Shared};
use crate::table::from_shm;

const IO_LEN: usize = 6;

/// A key table's own bytes on the native heap (a shared file's are mapped,
/// not allocated).
const CELL_BYTES: usize = 16;

/// What the class and its hot functions share, each through one `Rc`
/// share (released by its finalizer). All on one JS thread.
pub struct Keys {
    /// `None` once closed. In an `Arc` because the process's metrics list
    /// it (`sds_metrics::register_keyed`, which holds it weakly: a closed
    /// or collected limit leaves the list by itself).
    table: RefCell<Option<Arc<AnyKeys>>>,
    io: [Cell<f64>; IO_LEN],
}

impl Keys {
    fn read<const N: usize>(&self) -> [f64; N] {
        core::array::from_fn(|i| self.io[i].get())
    }

    fn write(&self, values: &[f64]) {
        for (cell, &value) in self.io.iter().zip(values) {
            cell.set(value);
        }
    }

    /// The table, for a route's policies (`http.rs`); `SDS_CLOSED` once
    /// closed.
    pub(crate) fn table(&self) -> Result<Arc<AnyKeys>, SdsError> {
        self.table
            .borrow()
            .as_ref()
            .map(Arc::clone)
            .ok_or_else(closed)
    }

    /// `SDS_CLOSED` once closed: a route's policies keep deciding with
    /// their own share of the table, but a closed limit throws there as
    /// it does alone.
    pub(crate) fn check_open(&self) -> Result<(), SdsError> {
        match &*self.table.borrow() {
            Some(_) => Ok(()),
            None => Err(closed()),
        }
    }

    fn with<R>(&self, call: impl FnOnce(&AnyKeys) -> Result<R, SdsError>) -> Result<R, SdsError> {
        match &*self.table.borrow() {
            Some(table) => call(table),
            None => Err(closed()),
        }
    }

    /// Drops the table (unmapping a shared file), telling V8 what it freed.
    fn close(&self, env: sys::napi_env) {
        if let Some(table) = self.table.borrow_mut().take() {
            let bytes = heap_bytes(&table);
            drop(table);
            adjust(env, -bytes);
        }
    }
}

impl Shared for Keys {
    fn io(&self) -> &[Cell<f64>] {
        &self.io
    }

    fn last_release(self, env: sys::napi_env) {
        self.close(env);
    }
}

fn heap_bytes(table: &AnyKeys) -> i64 {
    match table {
        AnyKeys::Private(_) => (table.capacity() * CELL_BYTES) as i64,
        AnyKeys::Shared(_) => 0,
    }
}

#[cold]
fn closed() -> SdsError {
    js_error(ErrorCode::Closed, "this KeyedLimit is closed")
}

#[cold]
pub(crate) fn from_key(error: KeyError) -> SdsError {
    js_error(error.code(), error)
}

/// A time from `io`: [`NOW`] reads the addon's clock.
#[inline]
fn time(now_ms: f64) -> Result<u64, SdsError> {
    if now_ms == NOW {
        Ok(sds_clock::now_ms())
    } else {
        time_number(now_ms, "nowMs")
    }
}

/// A cost or a count of units from `io`, judged by the core
/// (`keyed::units_from_i128`: 0 is `cost must be >= 1`, the rest outside
/// `1..2^32` one message in every binding); a number that is no integer is
/// sorted as every number argument is ([`Value::from_f64`]).
#[inline]
pub(crate) fn units(value: f64, what: &'static str) -> Result<u32, SdsError> {
    let result = match whole_up_to(value, u32::MAX as f64) {
        Some(n) => units_from_i128(n.into(), what),
        None => units_from_value(Value::from_f64(value), what),
    };
    result.map_err(|e| js_error(e.code(), e))
}

fn decision_numbers(d: KeyDecision) -> [f64; IO_LEN] {
    let retry = if d.retry_after_ms == NEVER {
        f64::INFINITY
    } else {
        d.retry_after_ms as f64
    };
    [
        d.admitted as u8 as f64,
        d.limit as f64,
        d.remaining as f64,
        d.reset_ms as f64,
        retry,
        d.window_ms as f64,
    ]
}

fn count_numbers(c: KeyCount) -> [f64; 3] {
    [c.count as f64, c.previous as f64, c.reset_ms as f64]
}

/// What a hot function does with the key.
#[derive(Clone, Copy)]
enum Op {
    Decide,
    Peek,
    Increment,
    Decrement,
    Count,
    Release,
    Reset,
}

/// A call's numbers, judged before its key.
#[derive(Clone, Copy)]
enum Call {
    Decide(u64, u32),
    Peek(u64),
    Count(u64, i64),
    Release(u32),
    Reset,
}

/// The numbers of `op` in `keys.io`, judged in every binding's order: the
/// time, then the cost or units (the key comes after them: Python and Java
/// check their arguments so, and one input gets one message).
fn numbers(keys: &Keys, op: Op) -> Result<Call, SdsError> {
    let [amount, now] = keys.read::<2>();
    Ok(match op {
        Op::Decide => {
            let now = time(now)?;
            Call::Decide(now, units(amount, "cost")?)
        }
        Op::Peek => Call::Peek(time(now)?),
        Op::Increment | Op::Decrement | Op::Count => {
            let now = time(now)?;
            // `units` refuses 0, where `count_add` would read.
            let delta = match op {
                Op::Count => 0,
                Op::Decrement => -i64::from(units(amount, "units")?),
                _ => i64::from(units(amount, "units")?),
            };
            Call::Count(now, delta)
        }
        Op::Release => Call::Release(units(amount, "units")?),
        Op::Reset => Call::Reset,
    })
}

/// Runs the call for `key`, leaving its answer in `keys.io`.
fn apply(keys: &Keys, call: Call, key: &[u8]) -> Result<(), SdsError> {
    keys.with(|table| {
        match call {
            Call::Decide(now, cost) => {
                let decision = table.decide(key, now, cost).map_err(from_key)?;
                keys.write(&decision_numbers(decision));
            }
            Call::Peek(now) => keys.write(&decision_numbers(table.peek(key, now))),
            Call::Count(now, delta) => {
                let count = table.count_add(key, now, delta).map_err(from_key)?;
                keys.write(&count_numbers(count));
            }
            Call::Release(units) => {
                let held = table.release(key, units).map_err(from_key)?;
                keys.write(&[held as u8 as f64]);
            }
            Call::Reset => keys.write(&[table.reset(key) as u8 as f64]),
        }
        Ok(())
    })
}

/// Runs `op` for `key` with its numbers in `keys.io`, leaving its answer
/// there. Safe: the N-API parts are the caller's.
#[cfg(test)]
fn run(keys: &Keys, op: Op, key: &[u8]) -> Result<(), SdsError> {
    apply(keys, numbers(keys, op)?, key)
}

// --- The raw N-API half -------------------------------------------------

/// Keys up to this many UTF-8 bytes are read onto the stack.
const STACK_KEY: usize = 1024;

/// Calls `f` with the bytes of the key `value`: a string's UTF-8, or a
/// Uint8Array's (a Buffer's) bytes where they are.
///
/// # Safety
/// `value` is a live value of `env`, on its thread.
pub(crate) unsafe fn with_key<R>(
    env: sys::napi_env,
    value: sys::napi_value,
    f: impl FnOnce(&[u8]) -> Result<R, SdsError>,
) -> Result<R, SdsError> {
    // A string, the common key, is tried first with no type check: N-API
    // answers `napi_string_expected` for anything else. The stack buffer
    // is left uninitialised (N-API writes what is read).
    let mut stack = MaybeUninit::<[u8; STACK_KEY]>::uninit();
    let mut len = 0;
    let status = unsafe {
        sys::napi_get_value_string_utf8(env, value, stack.as_mut_ptr().cast(), STACK_KEY, &mut len)
    };
    if status == sys::Status::napi_ok {
        // N-API writes whole characters (at most 4 bytes) and a NUL: with
        // 4 bytes or more to spare, nothing was cut off.
        if len + 4 < STACK_KEY {
            // SAFETY: N-API wrote these `len` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), len) };
            unsafe { well_formed(env, value, bytes) }?;
            return f(bytes);
        }
        let bytes = unsafe { long_string(env, value) }?;
        unsafe { well_formed(env, value, &bytes) }?;
        return f(&bytes);
    }
    if status != sys::Status::napi_string_expected {
        check(status, "napi_get_value_string_utf8")?;
    }
    // A Uint8Array (a Buffer is one): its bytes where they are. N-API
    // answers `napi_invalid_arg` for what is no typed array.
    let (mut array_type, mut len, mut data) = (0, 0, ptr::null_mut());
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut array_type,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status == sys::Status::napi_ok && array_type == sys::TypedarrayType::uint8_array {
        let bytes = if len == 0 || data.is_null() {
            &[][..]
        } else {
            // SAFETY: the array's bytes, alive while `value` is (the whole
            // call); nothing runs JavaScript meanwhile.
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
        };
        return f(bytes);
    }
    Err(not_a_key(env, value))
}

#[cold]
unsafe fn long_string(env: sys::napi_env, value: sys::napi_value) -> Result<Vec<u8>, SdsError> {
    let units = string_units("napi_get_value_string_utf8", |buf, size, len| unsafe {
        sys::napi_get_value_string_utf8(env, value, buf, size, len)
    })?;
    // A c_char is a byte (i8 or u8 by target): the same bytes, in place.
    Ok(units.into_iter().map(|unit| unit as u8).collect())
}

/// A string's code units through `get`, N-API's `napi_get_value_string_utf8`
/// or `_utf16` called on it (`what`) as `get(buffer, size, &mut len)`: the
/// length first (a null buffer), then the units, N-API writing a NUL after
/// them.
#[cold]
fn string_units<T: Copy + Default>(
    what: &str,
    get: impl Fn(*mut T, usize, &mut usize) -> sys::napi_status,
) -> Result<Vec<T>, SdsError> {
    let mut len = 0;
    check(get(ptr::null_mut(), 0, &mut len), what)?;
    let mut units = vec![T::default(); len + 1];
    check(get(units.as_mut_ptr(), len + 1, &mut len), what)?;
    units.truncate(len);
    Ok(units)
}

/// Refuses a string whose UTF-8 holds a U+FFFD that N-API put for a lone
/// surrogate, with the core's message (`keyed::lone_surrogate`). Only keys
/// holding the byte 0xEF (U+F000..U+FFFF) pay for the second look, at the
/// string's UTF-16.
unsafe fn well_formed(
    env: sys::napi_env,
    value: sys::napi_value,
    bytes: &[u8],
) -> Result<(), SdsError> {
    if !bytes.contains(&0xEF) {
        return Ok(());
    }
    let wide = unsafe { utf16(env, value) }?;
    match lone_surrogate(&wide) {
        None => Ok(()),
        Some(lone) => Err(js_error(lone.code(), lone.about("key"))),
    }
}

/// The UTF-16 units of the string `value`.
#[cold]
unsafe fn utf16(env: sys::napi_env, value: sys::napi_value) -> Result<Vec<u16>, SdsError> {
    string_units("napi_get_value_string_utf16", |buf, size, len| unsafe {
        sys::napi_get_value_string_utf16(env, value, buf, size, len)
    })
}

#[cold]
fn not_a_key(env: sys::napi_env, value: sys::napi_value) -> SdsError {
    // SAFETY: a live value of `env`.
    let value = unsafe { Unknown::from_raw_unchecked(env, value) };
    let kind = match value.get_type() {
        Ok(ValueType::Object) => "another object",
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Function) => "a function",
        _ => "a value of another type",
    };
    invalid_argument(format!(
        "key must be a string, a Buffer or a Uint8Array, got {kind}"
    ))
}

/// The body of every hot function: its `Keys` and first argument, then
/// [`numbers`] and [`apply`] for the key; an error, or a panic, is thrown.
/// Returns `undefined`.
unsafe extern "C" fn key_callback<const OP: u8>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let op = [
        Op::Decide,
        Op::Peek,
        Op::Increment,
        Op::Decrement,
        Op::Count,
        Op::Release,
        Op::Reset,
    ][OP as usize];
    let step = || {
        // SAFETY: these functions are made with a `Keys` share;
        // `argv[0]` is `undefined` when no argument was given.
        let (argv, keys) =
            unsafe { raw::callback::<Keys, 1>(env, info, "a hot function of a KeyedLimit")? };
        let call = numbers(keys, op)?;
        unsafe { with_key(env, argv[0], |key| apply(keys, call, key)) }
    };
    unsafe { raw::run_or_throw(env, step) }
}

// --- The class ----------------------------------------------------------

/// One per-key limit: a key table and its rule.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeKeys {
    keys: Rc<Keys>,
    label: String,
}

impl NativeKeys {
    /// A share of the table, for a route's policies (`http.rs`), given
    /// back with `raw::release_share` as the class's own.
    pub(crate) fn share(&self) -> Rc<Keys> {
        Rc::clone(&self.keys)
    }
}

impl ObjectFinalize for NativeKeys {
    fn finalize(self, env: Env) -> napi::Result<()> {
        raw::release_share(env.raw(), self.keys);
        Ok(())
    }
}

/// The rule: an object of (name, value) pairs or a JSON text.
fn rule(rule: Unknown) -> Result<sds_core::keyed::KeyRule, SdsError> {
    if matches!(rule.get_type(), Ok(ValueType::String)) {
        let json = arguments::text(rule, "rule")?;
        return sds_settings::key_rule_json(json.as_bytes()).map_err(|e| js_error(e.code(), e));
    }
    arguments::object(rule, "rule")?;
    let pairs = crate::settings::pairs(rule, "rule")?;
    sds_settings::key_rule(&pairs).map_err(|e| js_error(e.code(), e))
}

/// A key table's capacity: any whole number goes to the core, which judges
/// its range (a negative or huge one is `SDS_INVALID_CAPACITY` as 0 is).
fn key_capacity(n: Unknown) -> Result<usize, SdsError> {
    match arguments::value(&n) {
        Value::Integer(v) => Ok(usize::try_from(v.max(0)).unwrap_or(usize::MAX)),
        Value::OutOfRange => Ok(usize::MAX),
        _ => Err(invalid_argument("capacity must be an integer")),
    }
}

#[napi(namespace = "native")]
impl NativeKeys {
    /// A key table of `capacity` keys deciding by `rule` (an object of the
    /// rule's names, or its JSON text): this process's own, or with
    /// `shared` (a file name under /dev/shm, or a path) the table file every
    /// process of the host may open, created with `mode` (0o600, the
    /// default, or 0o660). Metrics show it under `name`
    /// (`sds_metrics::keyed_label`).
    #[napi(
        constructor,
        ts_args_type = "rule: Record<string, unknown> | string, capacity: number, shared?: string, mode?: number, name?: string"
    )]
    pub fn new(
        env: &Env,
        rule_value: Unknown,
        capacity: Unknown,
        shared: Unknown,
        mode: Unknown,
        name: Unknown,
    ) -> Result<NativeKeys, SdsError> {
        let rule = rule(rule_value)?;
        let capacity = key_capacity(capacity)?;
        let name = if is_undefined(&name) {
            None
        } else {
            Some(arguments::text(name, "name")?)
        };
        let table = match arguments::shared_file(shared, mode)? {
            None => AnyKeys::private(rule, capacity).map_err(from_key)?,
            Some((name, mode)) => {
                AnyKeys::open_named(name, capacity, rule, mode).map_err(|e| from_shm(&e))?
            }
        };
        adjust(env.raw(), heap_bytes(&table));
        let label = sds_metrics::keyed_label(&table, name.as_deref());
        let table = Arc::new(table);
        sds_metrics::register_keyed(&table, label.clone());
        let keys = Keys {
            table: RefCell::new(Some(table)),
            io: Default::default(),
        };
        Ok(NativeKeys {
            keys: Rc::new(keys),
            label,
        })
    }

    /// The limit's label in metrics: its `name`, else a shared file's
    /// name, else `private-N`.
    #[napi(getter)]
    pub fn label(&self) -> String {
        self.label.clone()
    }

    /// The hot functions, each taking the key (a string, a Buffer or a
    /// Uint8Array) and its numbers in `io` (see node/src/keys.rs): in
    /// `io[0]` the cost or units, `io[1]` the time (`-1`: now); out a
    /// decision's six numbers, a count's three, or `release` / `reset`'s 1
    /// or 0 in `io[0]`.
    #[napi(
        ts_return_type = "{ decide(key: string | Uint8Array): void; peek(key: string | Uint8Array): void; increment(key: string | Uint8Array): void; decrement(key: string | Uint8Array): void; count(key: string | Uint8Array): void; release(key: string | Uint8Array): void; reset(key: string | Uint8Array): void; io: Float64Array }"
    )]
    pub fn hot_path<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        let env = env.raw();
        let functions: [(&CStr, Callback); 7] = [
            (c"decide", key_callback::<0>),
            (c"peek", key_callback::<1>),
            (c"increment", key_callback::<2>),
            (c"decrement", key_callback::<3>),
            (c"count", key_callback::<4>),
            (c"release", key_callback::<5>),
            (c"reset", key_callback::<6>),
        ];
        unsafe {
            let object = raw::new_object(env)?;
            for (name, callback) in functions {
                raw::add_function(env, object, name, callback, &self.keys)?;
            }
            raw::set(env, object, c"io", raw::io_array(env, &self.keys)?)?;
            Ok(Object::from_raw(env, object))
        }
    }

    /// Forgets every key; how many were held.
    #[napi]
    pub fn reset_all(&self) -> Result<f64, SdsError> {
        self.keys.with(|t| Ok(t.reset_all() as f64))
    }

    /// The table's counters, named and ordered by the core
    /// (`KeyTableStats::NAMES`; a shared table's are the file's: every
    /// process's keys and decisions).
    #[napi(ts_return_type = "Record<string, number>")]
    pub fn stats<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        let stats = self.keys.with(|t| Ok(t.stats()))?;
        let mut object = Object::new(env).map_err(internal)?;
        for (name, value) in stats.fields() {
            object.set(name, value as f64).map_err(internal)?;
        }
        Ok(object)
    }

    /// How many keys fit (the capacity asked for, rounded up to 4).
    #[napi(getter)]
    pub fn capacity(&self) -> Result<f64, SdsError> {
        self.keys.with(|t| Ok(t.capacity() as f64))
    }

    /// The rule's kind, named by the core.
    #[napi(
        getter,
        ts_return_type = "'rate' | 'fixedWindow' | 'slidingWindow' | 'inFlight'"
    )]
    pub fn kind(&self) -> Result<&'static str, SdsError> {
        self.keys.with(|t| Ok(t.rule().kind().as_str()))
    }

    /// The file of a shared table, `null` for a private one.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn path(&self) -> Result<Option<String>, SdsError> {
        self.keys
            .with(|t| Ok(t.path().map(|p| p.display().to_string())))
    }

    /// Frees the table (a shared one: this process's mapping); every later
    /// call throws `SDS_CLOSED`. Closing twice does nothing.
    #[napi]
    pub fn close(&self, env: &Env) {
        self.keys.close(env.raw());
    }

    /// The `limit` of a `fixedWindow` with `windowFromFirstHit` of
    /// `periodMs` that only counts for a store (the express-rate-limit and
    /// @fastify/rate-limit stores): as wide as the window allows; `null`
    /// for a window that is no whole number of ms from 1 or too long to
    /// count in.
    #[napi(ts_return_type = "number | null")]
    pub fn counting_limit(period_ms: f64) -> Option<u32> {
        let whole = period_ms.fract() == 0.0 && (1.0..=u64::MAX as f64).contains(&period_ms);
        whole
            .then(|| sds_core::keyed::KeyRule::counting_limit(period_ms as u64))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::keyed::KeyRule;

    fn rate() -> KeyRule {
        let pairs = [
            ("kind".to_string(), sds_settings::Value::text("rate")),
            ("limit".to_string(), sds_settings::Value::Int(2)),
            ("periodMs".to_string(), sds_settings::Value::Int(1000)),
        ];
        sds_settings::key_rule(&pairs).unwrap()
    }

    fn keys(rule: KeyRule) -> Keys {
        Keys {
            table: RefCell::new(Some(Arc::new(AnyKeys::private(rule, 8).unwrap()))),
            io: Default::default(),
        }
    }

    #[test]
    fn a_decision_fills_io_and_never_is_infinity() {
        let keys = keys(rate());
        keys.write(&[1.0, 1000.0]);
        run(&keys, Op::Decide, b"a").unwrap();
        assert_eq!(keys.read::<6>(), [1.0, 2.0, 1.0, 500.0, 0.0, 1000.0]);
        keys.write(&[3.0, 1000.0]);
        run(&keys, Op::Decide, b"a").unwrap();
        assert_eq!(keys.read::<6>()[..2], [0.0, 2.0]);
        assert_eq!(keys.read::<6>()[4], f64::INFINITY);
    }

    #[test]
    fn bad_numbers_are_refused_with_their_codes() {
        let keys = keys(rate());
        keys.write(&[0.0, 1000.0]);
        let e = run(&keys, Op::Decide, b"a").unwrap_err();
        assert_eq!(
            (e.status, e.reason.as_str()),
            ("SDS_INVALID_ARGUMENT", "cost must be >= 1")
        );
        keys.write(&[1.5, 1000.0]);
        assert!(run(&keys, Op::Decide, b"a").is_err());
        keys.write(&[1.0, f64::NAN]);
        assert!(run(&keys, Op::Decide, b"a").is_err());
        keys.write(&[1.0, 0.0]);
        let e = run(&keys, Op::Increment, b"a").unwrap_err();
        assert_eq!(e.reason, "only a window rule counts hits");
        // Two bad numbers: the time is named, as Python and Java name it.
        keys.write(&[0.5, -5.0]);
        let e = run(&keys, Op::Decide, b"a").unwrap_err();
        assert_eq!(
            e.reason,
            "nowMs: time must be a whole number of ms within 0..2^64"
        );
    }

    #[test]
    fn a_closed_table_says_so() {
        let keys = keys(rate());
        *keys.table.borrow_mut() = None;
        keys.write(&[1.0, 1000.0]);
        assert_eq!(run(&keys, Op::Peek, b"a").unwrap_err().status, "SDS_CLOSED");
    }
}
