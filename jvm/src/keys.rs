//! `io.sdsnative.KeyedLimit`'s natives: an [`AnyKeys`] (a private key table
//! or this process's mapping of a shared one) behind a handle, an
//! `Arc::into_raw` so that the process's metrics can list it
//! (`sds_metrics::register_keyed`, which holds it weakly: a freed limit
//! leaves them by itself).
//!
//! The rule crosses once, as the tagged tokens of `KeyRule`'s entries
//! (`settings.rs`), to `sds_settings::key_rule`: every check and message is
//! the settings crate's and the core's.
//!
//! The per-key calls are hot-path natives returning 1 or 0 (admitted,
//! held) or throwing `SdsException`. `decide` first: `keysDecideScratch`
//! makes no JNI callback at all (each is a thread-state transition): Java
//! writes the key (up to [`SCRATCH_KEY_MAX`] bytes, or ASCII text) into
//! its thread's direct buffer, whose address it learnt once, and reads the
//! answer's numbers back from it. Other keys and the other calls cross as
//! a `byte[]` and its length, or a `String` (the other one null), read
//! without allocating up to [`STACK_KEY`] bytes or units (`byte[]`: one
//! `GetByteArrayRegion` into the stack; `String`: one `GetStringRegion` of
//! its UTF-16 units, encoded to UTF-8 on the stack), their numbers to a
//! `long[]` the caller reuses (one `SetLongArrayRegion`).

use std::mem::MaybeUninit;

use jni::objects::{JByteArray, JByteBuffer, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jbyteArray, jclass, jint, jlong, jlongArray, jsize, jstring, JNIEnv};
use sds_core::keyed::{
    units_from_i128, utf16_to_utf8, KeyCount, KeyDecision, KeyError, LoneSurrogate,
};
use sds_core::{time, ErrorCode};
use sds_shm::AnyKeys;

use crate::boundary::{clamp, hot_native, setup_native, thrown, Fail, Refusal};
use crate::handle::{arc_into_handle, arc_of, borrow, free_arc};
use crate::settings::pairs;
use crate::shared::file_name;
use crate::strategy::text_of;

/// Keys up to this many bytes (`byte[]`) or UTF-16 units (`String`, three
/// bytes of UTF-8 each at most) are read into the stack; longer ones into
/// the heap.
const STACK_KEY: usize = 256;

/// A thread's scratch memory (a direct `ByteBuffer` of `KeyedLimit`): a
/// decision's five numbers from offset 0, the key from [`SCRATCH_KEY`], at
/// most [`SCRATCH_KEY_MAX`] bytes of it.
const SCRATCH_KEY: usize = 64;
const SCRATCH_KEY_MAX: usize = 256;

/// A key error thrown with its code and the core's message.
pub(crate) fn key_fail(e: KeyError) -> Fail {
    Fail::Sds(e.code(), e.to_string())
}

/// The rule of `KeyRule`'s tokens, judged by `sds_settings::key_rule`.
fn rule(env: &mut jni::Env, tokens: &JObjectArray) -> Result<sds_core::keyed::KeyRule, Fail> {
    use jni::refs::Reference;
    if tokens.is_null() {
        return Err(Fail::Sds(
            ErrorCode::NullArgument,
            "key rule is null".into(),
        ));
    }
    sds_settings::key_rule(&pairs(env, tokens)?).map_err(|e| Fail::Sds(e.code(), e.to_string()))
}

/// A Java `long` capacity as the tables take it: a negative one reads as 0,
/// which they refuse with their own message.
fn capacity(capacity: jlong) -> usize {
    usize::try_from(capacity).unwrap_or(0)
}

setup_native! {
    /// A private table of `capacity` keys under the rule of `rule`'s tokens.
    fn Java_io_sdsnative_Native_keysNew(env, rule_tokens: JObjectArray<'l>, capacity_keys: jlong) -> jlong {
        let rule = rule(env, &rule_tokens)?;
        let keys = AnyKeys::private(rule, capacity(capacity_keys)).map_err(key_fail)?;
        Ok(arc_into_handle(keys))
    }

    /// Opens (creating if needed) the key table file of `name_or_path`
    /// (UTF-8; a bare name is a file under /dev/shm), created with `mode`.
    fn Java_io_sdsnative_Native_keysOpenShared(
        env, name_or_path: JByteArray<'l>, rule_tokens: JObjectArray<'l>, capacity_keys: jlong, mode: jint,
    ) -> jlong {
        let name = file_name(env, &name_or_path)?;
        let rule = rule(env, &rule_tokens)?;
        // A negative mode keeps its bits, and is refused like any other.
        Ok(arc_into_handle(AnyKeys::open_named(&name, capacity(capacity_keys), rule, mode as u32)?))
    }

    /// Lists the table in the process's metrics under `name` (null: the
    /// shared file's name, else `private-N`): the label it shows under.
    fn Java_io_sdsnative_Native_keysRegister(
        env, handle: jlong, _owner: JObject<'l>, name: JString<'l>,
    ) -> JString<'l> {
        use jni::refs::Reference;
        let name = if name.is_null() { None } else { Some(text_of(env, &name)?) };
        // SAFETY: as for `keysPath`.
        let keys = unsafe { arc_of::<AnyKeys>(handle) }.map_err(Fail::code)?;
        let label = sds_metrics::keyed_label(&keys, name.as_deref());
        sds_metrics::register_keyed(&keys, label.clone());
        Ok(env.new_string(label)?)
    }

    /// The shared table's file; `null` for a private table.
    fn Java_io_sdsnative_Native_keysPath(env, handle: jlong, _owner: JObject<'l>) -> JString<'l> {
        // SAFETY: the Java `KeyedLimit` passes its own handle and itself as
        // owner, which keeps it reachable, so the table is not freed meanwhile.
        let keys = unsafe { borrow::<AnyKeys>(handle) }.map_err(Fail::code)?;
        Ok(match keys.path() {
            None => JString::null(),
            Some(path) => env.new_string(path.to_string_lossy())?,
        })
    }

    /// The rule's kind as the core names it: `rate`, `fixedWindow`,
    /// `slidingWindow` or `inFlight`.
    fn Java_io_sdsnative_Native_keysKind(env, handle: jlong, _owner: JObject<'l>) -> JString<'l> {
        // SAFETY: as for `keysPath`.
        let keys = unsafe { borrow::<AnyKeys>(handle) }.map_err(Fail::code)?;
        Ok(env.new_string(keys.rule().kind().as_str())?)
    }

    /// The address of a thread's scratch buffer (a direct `ByteBuffer` of
    /// at least `SCRATCH_KEY + SCRATCH_KEY_MAX` bytes), read once per thread.
    fn Java_io_sdsnative_Native_keysScratchAddress(env, buffer: JByteBuffer<'l>) -> jlong {
        let size = env.get_direct_buffer_capacity(&buffer)?;
        if size < SCRATCH_KEY + SCRATCH_KEY_MAX {
            return Err(Fail::code(ErrorCode::InvalidArgument));
        }
        Ok(env.get_direct_buffer_address(&buffer)? as jlong)
    }

    /// Writes the table's counters to `out`, a `long[6]`, in the order of
    /// the core's table (`KeyTableStats::NAMES`, which `Native.tables`
    /// hands to Java): capacity, resident, evictions, lossy evictions,
    /// admitted, refused.
    fn Java_io_sdsnative_Native_keysStats(env, handle: jlong, _owner: JObject<'l>, out: JLongArray<'l>) {
        // SAFETY: as for `keysPath`.
        let keys = unsafe { borrow::<AnyKeys>(handle) }.map_err(Fail::code)?;
        let values = keys.stats().fields().map(|(_, v)| clamp(v));
        out.set_region(env, 0, &values)?;
        Ok(())
    }
}

/// Frees a table (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_keysFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per table, by its `NativeHandle` once no call is
    // using it.
    unsafe { free_arc::<AnyKeys>(handle) }
}

/// Runs `f` on the key: the `len` bytes of `bytes`, or when `bytes` is null
/// the UTF-8 of `text` (a lone surrogate, which has none, is refused as
/// `Client` refuses it in a point name). Java passes a non-null one and the
/// array's own length.
///
/// # Safety
/// `env` is this call's environment; `bytes` is null or a `byte[]` of at
/// least `len` bytes; `text` is a `String` when `bytes` is null.
#[inline]
unsafe fn with_key<T>(
    env: *mut JNIEnv,
    bytes: jbyteArray,
    len: jint,
    text: jstring,
    f: impl FnOnce(&[u8]) -> T,
) -> Result<T, Refusal> {
    let len = usize::try_from(len).unwrap_or(0);
    // SAFETY (every JNI call below): `env` is valid for this call, the
    // region asked for lies inside the array or string, and each buffer
    // holds what is written to it.
    let functions = unsafe { &(**env).v1_2 };
    if !bytes.is_null() {
        return Ok(if len <= STACK_KEY {
            let mut buf = MaybeUninit::<[u8; STACK_KEY]>::uninit();
            let p = buf.as_mut_ptr().cast::<u8>();
            unsafe { (functions.GetByteArrayRegion)(env, bytes, 0, len as jsize, p.cast()) };
            // SAFETY: the region call wrote the first `len` bytes.
            f(unsafe { std::slice::from_raw_parts(p, len) })
        } else {
            let mut buf = vec![0u8; len];
            unsafe {
                (functions.GetByteArrayRegion)(env, bytes, 0, len as jsize, buf.as_mut_ptr().cast())
            };
            f(&buf)
        });
    }
    let units = usize::try_from(unsafe { (functions.GetStringLength)(env, text) }).unwrap_or(0);
    if units <= STACK_KEY {
        let mut wide = MaybeUninit::<[u16; STACK_KEY]>::uninit();
        let w = wide.as_mut_ptr().cast::<u16>();
        unsafe { (functions.GetStringRegion)(env, text, 0, units as jsize, w) };
        // SAFETY: the region call wrote the first `units` units.
        let wide = unsafe { std::slice::from_raw_parts(w, units) };
        let mut utf8 = [0u8; 3 * STACK_KEY];
        let n = utf16_to_utf8(wide, &mut utf8).map_err(|e| lone_surrogate(env, e))?;
        Ok(f(&utf8[..n]))
    } else {
        let mut wide = vec![0u16; units];
        unsafe { (functions.GetStringRegion)(env, text, 0, units as jsize, wide.as_mut_ptr()) };
        let mut utf8 = vec![0u8; 3 * units];
        let n = utf16_to_utf8(&wide, &mut utf8).map_err(|e| lone_surrogate(env, e))?;
        Ok(f(&utf8[..n]))
    }
}

/// Throws `INVALID_ARGUMENT` for a key's lone surrogate, with the core's
/// message (`Client`'s for one in a point name).
#[cold]
pub(crate) fn lone_surrogate(env: *mut JNIEnv, lone: LoneSurrogate) -> Refusal {
    thrown(env, Fail::Sds(lone.code(), lone.about("key").to_string()))
}

/// A count of units from Java (`cost`, `units`): the core's verdict on
/// its range (`keyed::units_from_i128`), the message of every binding.
#[inline]
fn units(env: *mut JNIEnv, n: jlong, what: &'static str) -> Result<u32, Refusal> {
    units_from_i128(n.into(), what).map_err(|e| thrown(env, Fail::Sds(e.code(), e.to_string())))
}

/// A core result, its error thrown.
#[inline]
fn core<T>(env: *mut JNIEnv, result: Result<T, KeyError>) -> Result<T, Refusal> {
    result.map_err(|e| thrown(env, key_fail(e)))
}

/// Writes `values` to the `long[]` `out`.
///
/// # Safety
/// `env` is this call's environment and `out` a `long[]` of at least
/// `values.len()` elements.
#[inline]
unsafe fn write(env: *mut JNIEnv, out: jlongArray, values: &[jlong]) {
    // SAFETY: see the function's contract.
    unsafe {
        ((**env).v1_1.SetLongArrayRegion)(env, out, 0, values.len() as jsize, values.as_ptr())
    };
}

/// A decision's numbers (`KeyDecision`'s order) to `out`; 1 if admitted.
///
/// # Safety
/// As for [`write`], five elements.
#[inline]
unsafe fn decision(env: *mut JNIEnv, out: jlongArray, d: &KeyDecision) -> i64 {
    // SAFETY: see the function's contract.
    unsafe { write(env, out, &numbers(d)) };
    i64::from(d.admitted)
}

/// A decision's numbers as Java reads them: limit, remaining, resetMs,
/// retryAfterMs, windowMs (`u64::MAX`, never, is `Long.MAX_VALUE`).
#[inline]
fn numbers(d: &KeyDecision) -> [jlong; 5] {
    [
        jlong::from(d.limit),
        jlong::from(d.remaining),
        clamp(d.reset_ms),
        clamp(d.retry_after_ms),
        clamp(d.window_ms),
    ]
}

hot_native! {
    /// Decides `cost` units for the key at `now_ms`: 1 (admitted) or 0, the
    /// decision's numbers in `out`.
    fn Java_io_sdsnative_Native_keysDecide(
        bytes: jbyteArray, len: jint, text: jstring, cost: jlong, now_ms: jlong, out: jlongArray,
    ) with |env, keys: AnyKeys| {
        let now_ms = time::from_i64(now_ms)?;
        let cost = units(env, cost, "cost")?;
        // SAFETY: `KeyedLimit` passes a key as `with_key` takes it and a
        // `long[5]`.
        let d = unsafe { with_key(env, bytes, len, text, |key| keys.decide(key, now_ms, cost)) }?;
        Ok(unsafe { decision(env, out, &core(env, d)?) })
    }

    /// As `keysDecide` for the `len` bytes of key at `SCRATCH_KEY` in the
    /// scratch memory at `scratch`, the numbers written there from offset 0
    /// (native byte order): no JNI call at all.
    fn Java_io_sdsnative_Native_keysDecideScratch(
        scratch: jlong, len: jint, cost: jlong, now_ms: jlong,
    ) with |env, keys: AnyKeys| {
        let now_ms = time::from_i64(now_ms)?;
        let cost = units(env, cost, "cost")?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > SCRATCH_KEY_MAX {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        }
        let base = scratch as *mut u8;
        // SAFETY: `scratch` is the address `keysScratchAddress` gave for
        // the calling thread's buffer, which that thread's `KeyedLimit`
        // call holds (and reads after this call), and `len` fits in it.
        let key = unsafe { std::slice::from_raw_parts(base.add(SCRATCH_KEY), len) };
        let d = core(env, keys.decide(key, now_ms, cost))?;
        for (i, v) in numbers(&d).into_iter().enumerate() {
            // SAFETY: as above; the five numbers lie before the key.
            unsafe { base.cast::<jlong>().add(i).write_unaligned(v) };
        }
        Ok(i64::from(d.admitted))
    }

    /// What a cost of 0 would get: as `keysDecide`, nothing taken.
    fn Java_io_sdsnative_Native_keysPeek(
        bytes: jbyteArray, len: jint, text: jstring, now_ms: jlong, out: jlongArray,
    ) with |env, keys: AnyKeys| {
        let now_ms = time::from_i64(now_ms)?;
        // SAFETY: as for `keysDecide`.
        let d = unsafe { with_key(env, bytes, len, text, |key| keys.peek(key, now_ms)) }?;
        Ok(unsafe { decision(env, out, &d) })
    }

    /// Gives back `units` of the key (in flight): 1 if it held some.
    fn Java_io_sdsnative_Native_keysRelease(
        bytes: jbyteArray, len: jint, text: jstring, n: jlong,
    ) with |env, keys: AnyKeys| {
        let n = units(env, n, "units")?;
        // SAFETY: as for `keysDecide`.
        let held = unsafe { with_key(env, bytes, len, text, |key| keys.release(key, n)) }?;
        Ok(i64::from(core(env, held)?))
    }

    /// Forgets the key: 1 if the table held it.
    fn Java_io_sdsnative_Native_keysReset(
        bytes: jbyteArray, len: jint, text: jstring,
    ) with |env, keys: AnyKeys| {
        // SAFETY: as for `keysDecide`.
        Ok(i64::from(unsafe { with_key(env, bytes, len, text, |key| keys.reset(key)) }?))
    }

    /// Forgets every key: how many were held.
    fn Java_io_sdsnative_Native_keysResetAll() with |_env, keys: AnyKeys| {
        Ok(clamp(keys.reset_all()))
    }

    /// A window rule's count after `sign` (1 increment, -1 decrement, 0
    /// read) times `n` units at `now_ms`: count, previous, resetMs in `out`.
    fn Java_io_sdsnative_Native_keysCount(
        bytes: jbyteArray, len: jint, text: jstring, sign: jint, n: jlong, now_ms: jlong, out: jlongArray,
    ) with |env, keys: AnyKeys| {
        let now_ms = time::from_i64(now_ms)?;
        // A read (sign 0) takes no units.
        let delta = match sign.signum() {
            0 => 0,
            sign => i64::from(sign) * i64::from(units(env, n, "units")?),
        };
        // SAFETY: as for `keysDecide`, and `out` a `long[3]`.
        let c: KeyCount = core(env, unsafe { with_key(env, bytes, len, text, |key| keys.count_add(key, now_ms, delta)) }?)?;
        unsafe { write(env, out, &[clamp(c.count), clamp(c.previous), clamp(c.reset_ms)]) };
        Ok(0)
    }

    /// How many keys fit.
    fn Java_io_sdsnative_Native_keysCapacity() with |_env, keys: AnyKeys| {
        Ok(clamp(keys.capacity() as u64))
    }
}
