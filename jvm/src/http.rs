//! `io.sdsnative.web.HttpNative`'s natives: what the servlet filter asks of
//! Rust, from `sds-http`, so that a request gets the same answer from Java,
//! Python and Node. Java decides in no order of its own, formats no header
//! and parses no address.
//!
//! Two objects behind handles, each made once when a filter is built:
//! - the **route** of a filter's policies (`sds_http::RoutePolicies`: their
//!   names checked there, the style chosen there, a reference of each
//!   limit's table): per request, Java writes every policy's key and cost
//!   into a thread's scratch memory and one call decides them in the
//!   crate's order and writes the verdict, the units held and the header
//!   fields back; another gives the held units back when the response is
//!   over;
//! - the **client address** of a key function (prefix lengths, trusted
//!   proxies): per request, the peer's address and `X-Forwarded-For`
//!   values in, the key out.
//!
//! Both are immutable, so any thread may use them; Java frees each once its
//! owner is collected (`NativeReclaimer`), and passes the owner with every
//! call, which keeps it reachable meanwhile.
//!
//! The per-request calls read and write a thread's scratch memory (a direct
//! `ByteBuffer`) by address and make no JNI callback: a `String[]` built
//! through JNI costs microseconds (a class lookup, a callback per string),
//! more than the rest of the filter. `addressKey` (with `String`s) serves
//! what does not fit the scratch memory, and tests.

use std::sync::Arc;

use jni::objects::{JObject, JObjectArray, JString};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use jni::{jni_sig, jni_str, Env};
use sds_core::keyed::{units_from_i128, utf16_to_utf8, LoneSurrogate, UnitsError};
use sds_core::{time, ErrorCode};
use sds_http::{
    check_policy_name, ClientAddress, Decided, HeaderStyle, RoutePolicies, Verdict, MAX_POLICIES,
};
use sds_shm::AnyKeys;

use crate::boundary::{hot_native, setup_native, thrown, Fail, Refusal};
use crate::handle::{arc_of, borrow, free, into_handle};
use crate::keys::{key_fail, lone_surrogate};

/// The scratch memory of a route's call (native byte order), which Java's
/// `Route` writes and reads:
/// - at 0, the verdict ([`ADMITTED`], [`LIMITED`], [`TABLE_FULL`]), at 8
///   the policies holding units (bit `i`: policy `i`), written by `routeDecide`;
/// - at [`HEAD`] + [`SLOT`] `* i`, policy `i`'s key: its kind
///   ([`NO_KEY`], [`BYTES`], [`UTF16`]) as an `int`, its length (bytes or
///   UTF-16 units) as an `int`, then its cost as a `long`;
/// - the header fields at `out_at`, at most `capacity` bytes, then the
///   keys one after the other, from `out_at + capacity`.
const HEAD: usize = 16;
const SLOT: usize = 16;

const NO_KEY: i32 = 0;
const BYTES: i32 = 1;
const UTF16: i32 = 2;

const ADMITTED: i64 = 0;
const LIMITED: i64 = 1;
const TABLE_FULL: i64 = 2;

/// Why the scratch memory holds no request.
#[derive(Debug)]
enum Unreadable {
    /// Java's slip: a kind or length that does not fit.
    Layout,
    /// A `String` key with no UTF-8 form.
    Lone(LoneSurrogate),
    /// A cost outside 1..=2^32 - 1.
    Units(UnitsError),
}

/// Policy `i`'s slot in `slots`: its key's kind and length, and its cost.
fn slot(slots: &[u8], i: usize) -> Result<(i32, usize, i64), Unreadable> {
    let slot = slots
        .get(i * SLOT..(i + 1) * SLOT)
        .ok_or(Unreadable::Layout)?;
    let kind = i32::from_ne_bytes(slot[0..4].try_into().expect("4 bytes"));
    let len = i32::from_ne_bytes(slot[4..8].try_into().expect("4 bytes"));
    let cost = i64::from_ne_bytes(slot[8..16].try_into().expect("8 bytes"));
    let len = usize::try_from(len).map_err(|_| Unreadable::Layout)?;
    Ok((kind, len, cost))
}

/// The keys and costs of `keys.len()` policies from `slots` (their
/// [`SLOT`]s) and `input` (their bytes), into `keys` and `costs`; the UTF-8
/// of UTF-16 keys goes to `converted`. A policy without a key gets a cost
/// of 1, which nothing reads.
fn read<'a>(
    slots: &[u8],
    input: &'a [u8],
    converted: &'a mut Vec<u8>,
    keys: &mut [Option<&'a [u8]>],
    costs: &mut [u32],
) -> Result<(), Unreadable> {
    // First the layout, the costs and the UTF-8 of UTF-16 keys (rare: text
    // that is not ASCII), whose ends `ends` keeps; then the keys' slices.
    let mut ends = Vec::new();
    let mut at = 0;
    for (i, units) in costs[..keys.len()].iter_mut().enumerate() {
        let (kind, len, cost) = slot(slots, i)?;
        *units = 1;
        match kind {
            NO_KEY => continue,
            BYTES => at += len,
            UTF16 => {
                at += at & 1;
                let bytes = input.get(at..at + 2 * len).ok_or(Unreadable::Layout)?;
                let wide: Vec<u16> = bytes
                    .chunks_exact(2)
                    .map(|u| u16::from_ne_bytes([u[0], u[1]]))
                    .collect();
                let start = converted.len();
                converted.resize(start + 3 * len, 0);
                let written =
                    utf16_to_utf8(&wide, &mut converted[start..]).map_err(Unreadable::Lone)?;
                converted.truncate(start + written);
                ends.push(converted.len());
                at += 2 * len;
            }
            _ => return Err(Unreadable::Layout),
        }
        if at > input.len() {
            return Err(Unreadable::Layout);
        }
        *units = units_from_i128(cost.into(), "cost").map_err(Unreadable::Units)?;
    }
    let converted: &'a [u8] = converted;
    let (mut at, mut wide) = (0, 0);
    for (i, key) in keys.iter_mut().enumerate() {
        let (kind, len, _) = slot(slots, i)?;
        *key = match kind {
            BYTES => {
                at += len;
                Some(&input[at - len..at])
            }
            UTF16 => {
                at += (at & 1) + 2 * len;
                let start = if wide == 0 { 0 } else { ends[wide - 1] };
                wide += 1;
                Some(&converted[start..ends[wide - 1]])
            }
            _ => None,
        };
    }
    Ok(())
}

/// The header fields of `decided` written to `out` as `name\nvalue\n` lines
/// (ASCII: policy names are printable ASCII, values digits and Structured
/// Fields); the length written, `None` if it does not fit.
fn write_fields(route: &RoutePolicies, decided: &Decided, out: &mut [u8]) -> Option<usize> {
    let mut at = 0;
    for (name, value) in route.headers(decided) {
        for part in [name.as_bytes(), value.as_bytes()] {
            let end = at + part.len() + 1;
            out.get_mut(at..end - 1)?.copy_from_slice(part);
            *out.get_mut(end - 1)? = b'\n';
            at = end;
        }
    }
    Some(at)
}

fn invalid(message: impl ToString) -> Fail {
    Fail::Sds(ErrorCode::InvalidArgument, message.to_string())
}

fn null(what: &str) -> Fail {
    Fail::Sds(ErrorCode::NullArgument, format!("{what} is null"))
}

/// The texts of a `String[]`; a null array is none, a null element is refused.
fn texts(env: &mut Env, array: &JObjectArray, what: &str) -> Result<Vec<String>, Fail> {
    use jni::refs::Reference;
    let mut out = Vec::new();
    if array.is_null() {
        return Ok(out);
    }
    for i in 0..array.len(env)? {
        let text = env.with_local_frame(2, |env| -> Result<_, Fail> {
            let element = array.get_element(env, i)?;
            let element = env.cast_local::<JString>(element)?;
            if element.is_null() {
                return Err(null(what));
            }
            Ok(element.try_to_string(env)?)
        })?;
        out.push(text);
    }
    Ok(out)
}

fn text(env: &mut Env, string: &JString, what: &str) -> Result<String, Fail> {
    use jni::refs::Reference;
    if string.is_null() {
        return Err(null(what));
    }
    Ok(string.try_to_string(env)?)
}

/// Another reference of the table of the `io.sdsnative.KeyedLimit`
/// `limit`: its handle read as its own calls read it (`NativeHandle`'s
/// `acquire`, which throws `CLOSED` once it is closed, and `release`), so
/// the filter needs nothing of `KeyedLimit`'s public API.
fn table_of(env: &mut Env, limit: &JObject) -> Result<Arc<AnyKeys>, Fail> {
    let handle = env
        .get_field(
            limit,
            jni_str!("keys"),
            jni_sig!("Lio/sdsnative/NativeHandle;"),
        )?
        .l()?;
    let address = env
        .call_method(&handle, jni_str!("acquire"), jni_sig!("()J"), &[])?
        .j()?;
    // SAFETY: between `acquire` and `release` the handle is live: the
    // `Arc` of `KeyedLimit`'s table, which `arc_of` takes another reference of.
    let table = unsafe { arc_of::<AnyKeys>(address) };
    env.call_method(&handle, jni_str!("release"), jni_sig!("()V"), &[])?;
    table.map_err(Fail::code)
}

setup_native! {
    /// Throws `INVALID_ARGUMENT` with sds-http's message if `name` cannot
    /// name a policy in a header (1 to 64 printable ASCII characters).
    fn Java_io_sdsnative_web_HttpNative_checkPolicyName(env, name: JString<'l>) {
        let name = text(env, &name, "policy name")?;
        check_policy_name(&name).map_err(invalid)
    }

    /// The route of the policies named `names` deciding with the
    /// `KeyedLimit`s `limits`, in that order, answering in `style`
    /// (`"draft-10"`, `"draft-6"` or `"x-ratelimit"`).
    fn Java_io_sdsnative_web_HttpNative_routeNew(
        env, style: JString<'l>, names: JObjectArray<'l>, limits: JObjectArray<'l>,
    ) -> jlong {
        use jni::refs::Reference;
        let name = text(env, &style, "header style")?;
        let style = HeaderStyle::from_name(&name).ok_or_else(|| {
            invalid(format!(
                "headers must be \"draft-10\", \"draft-6\" or \"x-ratelimit\", not {name:?}"
            ))
        })?;
        if names.is_null() || limits.is_null() {
            return Err(null("policies"));
        }
        let names = texts(env, &names, "policy name")?;
        if limits.len(env)? != names.len() {
            return Err(invalid("one limit per policy name"));
        }
        let mut policies = Vec::with_capacity(names.len());
        for (i, name) in names.into_iter().enumerate() {
            let table = env.with_local_frame(4, |env| -> Result<_, Fail> {
                let limit = limits.get_element(env, i)?;
                if limit.is_null() {
                    return Err(null("limit"));
                }
                table_of(env, &limit)
            })?;
            policies.push((name, table));
        }
        Ok(into_handle(RoutePolicies::new(style, policies).map_err(invalid)?))
    }

    /// A client-address key function's native side: prefix lengths (IPv4
    /// 0 to 32, IPv6 0 to 128) and trusted proxies (addresses or CIDR
    /// networks).
    fn Java_io_sdsnative_web_HttpNative_addressNew(
        env, ipv4_prefix: jint, ipv6_prefix: jint, trusted: JObjectArray<'l>,
    ) -> jlong {
        let prefix = |bits: jint| u8::try_from(bits).unwrap_or(u8::MAX);
        let trusted = texts(env, &trusted, "trusted proxy")?;
        let address = ClientAddress::new(prefix(ipv4_prefix), prefix(ipv6_prefix), &trusted)
            .map_err(invalid)?;
        Ok(into_handle(address))
    }

    /// The address of a thread's scratch memory (a direct `ByteBuffer` of
    /// at least `size` bytes), read once per thread.
    fn Java_io_sdsnative_web_HttpNative_scratchAddress(env, buffer: jni::objects::JByteBuffer<'l>, size: jint) -> jlong {
        let capacity = env.get_direct_buffer_capacity(&buffer)?;
        if usize::try_from(size).map_or(true, |size| capacity < size) {
            return Err(invalid("scratch buffer too small"));
        }
        Ok(env.get_direct_buffer_address(&buffer)? as jlong)
    }

    /// The client key of a request from `peer` with the `X-Forwarded-For`
    /// values `forwarded_for` (null: none). `INVALID_ARGUMENT` for a peer
    /// that is no IP address.
    fn Java_io_sdsnative_web_HttpNative_addressKey(
        env, handle: jlong, _owner: JObject<'l>, peer: JString<'l>, forwarded_for: JObjectArray<'l>,
    ) -> JString<'l> {
        // SAFETY: the Java owner passes its own handle and itself, which
        // keeps it reachable, so the address is not freed meanwhile.
        let address = unsafe { borrow::<ClientAddress>(handle) }.map_err(Fail::code)?;
        let peer = text(env, &peer, "peer address")?;
        let hops = texts(env, &forwarded_for, "X-Forwarded-For value")?;
        let hops: Vec<&str> = hops.iter().map(String::as_str).collect();
        let key = address.key(&peer, &hops).map_err(invalid)?;
        Ok(env.new_string(key)?)
    }
}

/// What `addressWrite` answers for a peer that is no IP address (a Unix
/// socket): Java then keys the request by the peer as given. Never an
/// error code: a call that throws returns nothing Java reads.
const NOT_AN_ADDRESS: i64 = -1;

/// The scratch memory at `scratch`: the [`SLOT`]s of `n` policies, and
/// the `keys_len` bytes of keys at `keys_at`.
///
/// # Safety
/// `scratch` is the address `scratchAddress` gave for the calling thread's
/// buffer, which that thread's `Route` holds (and reads after the call),
/// and Java sized it for the slots and the keys.
unsafe fn input<'a>(
    scratch: jlong,
    n: usize,
    keys_at: jint,
    keys_len: jint,
) -> Result<(&'a [u8], &'a [u8]), Refusal> {
    let (Ok(keys_at), Ok(keys_len)) = (usize::try_from(keys_at), usize::try_from(keys_len)) else {
        return Err(Refusal::Code(ErrorCode::InvalidArgument));
    };
    if keys_at < HEAD + n * SLOT {
        return Err(Refusal::Code(ErrorCode::InvalidArgument));
    }
    let base = scratch as *const u8;
    // SAFETY: see the function's contract.
    Ok(unsafe {
        (
            std::slice::from_raw_parts(base.add(HEAD), n * SLOT),
            std::slice::from_raw_parts(base.add(keys_at), keys_len),
        )
    })
}

/// A scratch memory that holds no request, thrown.
#[cold]
fn unreadable(env: *mut JNIEnv, why: Unreadable) -> Refusal {
    match why {
        Unreadable::Layout => thrown(env, Fail::code(ErrorCode::InvalidArgument)),
        Unreadable::Lone(lone) => lone_surrogate(env, lone),
        Unreadable::Units(e) => thrown(env, Fail::Sds(e.code(), e.to_string())),
    }
}

hot_native! {
    /// Decides the request whose keys and costs Java wrote to the scratch
    /// memory at `scratch` (see [`HEAD`]; the keys from `out_at +
    /// capacity`, `keys_len` bytes) at `now_ms`, in sds-http's order: the
    /// verdict and the units held at 0 and 8, the header fields at `out_at`
    /// as `name\nvalue\n` lines, at most `capacity` bytes: their length.
    fn Java_io_sdsnative_web_HttpNative_routeDecide(
        scratch: jlong, out_at: jint, capacity: jint, keys_len: jint, now_ms: jlong,
    ) with |env, route: RoutePolicies| {
        let now_ms = time::from_i64(now_ms)?;
        let n = route.len();
        let (Ok(out_at), Ok(capacity)) = (usize::try_from(out_at), usize::try_from(capacity)) else {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        };
        if out_at < HEAD + n * SLOT {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        }
        let keys_at = jint::try_from(out_at + capacity).map_err(|_| Refusal::Code(ErrorCode::InvalidArgument))?;
        // SAFETY: as `input` and `routeDecide`'s contract with `Route` say:
        // the slots, the fields and the keys lie apart in the buffer.
        let (slots, bytes) = unsafe { input(scratch, n, keys_at, keys_len) }?;
        let mut converted = Vec::new();
        let mut keys = [None; MAX_POLICIES];
        let mut costs = [0u32; MAX_POLICIES];
        read(slots, bytes, &mut converted, &mut keys[..n], &mut costs[..n]).map_err(|why| unreadable(env, why))?;
        let decided = route
            .decide(&keys[..n], &costs[..n], now_ms)
            .map_err(|e| thrown(env, key_fail(e)))?;
        let verdict = match decided.verdict {
            Verdict::Admitted => ADMITTED,
            Verdict::Limited => LIMITED,
            Verdict::TableFull => TABLE_FULL,
        };
        let base = scratch as *mut u8;
        // SAFETY: as above; `out_at + capacity` is within the buffer.
        let out = unsafe { std::slice::from_raw_parts_mut(base.add(out_at), capacity) };
        let Some(written) = write_fields(route, &decided, out) else {
            // Not on a response: give back what the request holds.
            route.release(decided.held, &keys[..n], &costs[..n]);
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        };
        // SAFETY: as above; the verdict and the units held lie before the slots.
        unsafe {
            base.cast::<i64>().write_unaligned(verdict);
            base.cast::<i64>().add(1).write_unaligned(decided.held as i64);
        }
        Ok(written as i64)
    }

    /// Gives back the units of the policies `held` names (from
    /// `routeDecide`), whose keys and costs Java wrote again to the scratch
    /// memory at `scratch`, the keys at `keys_at` (`keys_len` bytes).
    fn Java_io_sdsnative_web_HttpNative_routeRelease(
        scratch: jlong, keys_at: jint, keys_len: jint, held: jlong,
    ) with |env, route: RoutePolicies| {
        let n = route.len();
        // SAFETY: as for `routeDecide`.
        let (slots, bytes) = unsafe { input(scratch, n, keys_at, keys_len) }?;
        let mut converted = Vec::new();
        let mut keys = [None; MAX_POLICIES];
        let mut costs = [0u32; MAX_POLICIES];
        read(slots, bytes, &mut converted, &mut keys[..n], &mut costs[..n]).map_err(|why| unreadable(env, why))?;
        route.release(held as u64, &keys[..n], &costs[..n]);
        Ok(0)
    }

    /// The client key of a request from the peer whose address is the
    /// `peer_len` bytes at offset 0 of the scratch memory at `scratch`, with
    /// the `forwarded_len` bytes after them as its `X-Forwarded-For` (every
    /// value joined by `,`, which is one list), written at `out_at` (at most
    /// `capacity` bytes): its length, or [`NOT_AN_ADDRESS`].
    fn Java_io_sdsnative_web_HttpNative_addressWrite(
        scratch: jlong, peer_len: jint, forwarded_len: jint, out_at: jint, capacity: jint,
    ) with |env, address: ClientAddress| {
        let _ = env;
        let lengths = [peer_len, forwarded_len, out_at, capacity].map(usize::try_from);
        let [Ok(peer_len), Ok(forwarded_len), Ok(out_at), Ok(capacity)] = lengths else {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        };
        if out_at < peer_len + forwarded_len {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        }
        let base = scratch as *mut u8;
        // SAFETY: `scratch` is the address `scratchAddress` gave for the
        // calling thread's buffer, which that thread's `ClientAddressKey`
        // holds (and reads after this call); the input lies before `out_at`
        // and `out_at + capacity` is within the buffer (Java sizes it).
        let (input, out) = unsafe {
            (
                std::slice::from_raw_parts(base.cast_const(), peer_len + forwarded_len),
                std::slice::from_raw_parts_mut(base.add(out_at), capacity),
            )
        };
        let text = |bytes| std::str::from_utf8(bytes).map_err(|_| ErrorCode::InvalidArgument);
        let peer = text(&input[..peer_len]).map_err(Refusal::Code)?;
        let forwarded = text(&input[peer_len..]).map_err(Refusal::Code)?;
        let Ok(key) = address.key(peer, &[forwarded]) else {
            return Ok(NOT_AN_ADDRESS);
        };
        let out = out.get_mut(..key.len()).ok_or(Refusal::Code(ErrorCode::InvalidArgument))?;
        out.copy_from_slice(key.as_bytes());
        Ok(key.len() as i64)
    }
}

/// Frees a route (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_web_HttpNative_routeFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per route, by its reclaimer once the owner is
    // collected, so no call uses it any more.
    let _ = std::panic::catch_unwind(|| unsafe { free::<RoutePolicies>(handle) });
}

/// Frees a client address (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_web_HttpNative_addressFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: as for `routeFree`.
    let _ = std::panic::catch_unwind(|| unsafe { free::<ClientAddress>(handle) });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot of `kind` and `len` at `cost`.
    fn slot_of(kind: i32, len: i32, cost: i64) -> Vec<u8> {
        [
            kind.to_ne_bytes().to_vec(),
            len.to_ne_bytes().to_vec(),
            cost.to_ne_bytes().to_vec(),
        ]
        .concat()
    }

    #[test]
    fn keys_read_as_bytes_utf16_or_none_with_their_costs() {
        let wide: Vec<u8> = "é€".encode_utf16().flat_map(u16::to_ne_bytes).collect();
        let slots = [
            slot_of(BYTES, 3, 3),
            slot_of(NO_KEY, 0, 0),
            slot_of(UTF16, 2, 1),
            slot_of(BYTES, 0, 7),
        ]
        .concat();
        // "k\xffz", a byte to align the UTF-16 on two, then the UTF-16.
        let input = [vec![b'k', 0xff, b'z', 0], wide].concat();
        let mut converted = Vec::new();
        let mut keys = [None; 4];
        let mut costs = [0; 4];
        read(&slots, &input, &mut converted, &mut keys, &mut costs).unwrap();
        assert_eq!(
            keys,
            [
                Some(&b"k\xffz"[..]),
                None,
                Some("é€".as_bytes()),
                Some(&b""[..])
            ]
        );
        assert_eq!(costs, [3, 1, 1, 7]);
    }

    #[test]
    fn what_is_no_request_is_refused() {
        fn read_one(slot: Vec<u8>, input: &[u8]) -> Result<Option<Vec<u8>>, Unreadable> {
            let mut converted = Vec::new();
            let mut keys = [None; 1];
            let mut costs = [0; 1];
            read(&slot, input, &mut converted, &mut keys, &mut costs)?;
            Ok(keys[0].map(<[u8]>::to_vec))
        }
        assert!(matches!(
            read_one(slot_of(BYTES, 3, 1), b"ab"),
            Err(Unreadable::Layout)
        ));
        assert!(matches!(
            read_one(slot_of(9, 0, 1), b""),
            Err(Unreadable::Layout)
        ));
        assert!(matches!(
            read_one(slot_of(BYTES, -1, 1), b""),
            Err(Unreadable::Layout)
        ));
        assert!(matches!(
            read_one(slot_of(BYTES, 1, 0), b"a"),
            Err(Unreadable::Units(_))
        ));
        assert!(matches!(
            read_one(slot_of(BYTES, 1, 1 << 32), b"a"),
            Err(Unreadable::Units(_))
        ));
        let lone = 0xd800u16.to_ne_bytes();
        match read_one(slot_of(UTF16, 1, 1), &lone) {
            Err(Unreadable::Lone(l)) => assert_eq!((l.unit, l.index), (0xd800, 0)),
            other => panic!("{other:?}"),
        }
        assert_eq!(read_one(slot_of(NO_KEY, 0, 0), b"").unwrap(), None);
    }
}
