//! `io.sdsnative.web.HttpNative`'s natives: what the servlet filter asks of
//! Rust, from `sds-http`, so that a request gets the same answer from Java,
//! Python and Node. Java formats no header and parses no address.
//!
//! Two objects behind handles, each made once when a filter is built:
//! - the **header writer** of a filter's policies (their names checked
//!   there, the style chosen there): per request, Java writes the decisions'
//!   numbers into a `long[]` and gets the header fields back, flat;
//! - the **client address** of a key function (prefix lengths, trusted
//!   proxies): per request, the peer's address and `X-Forwarded-For`
//!   values in, the key out.
//!
//! Both are immutable, so any thread may use them; Java frees each once its
//! owner is collected (`NativeReclaimer`), and passes the owner with every
//! call, which keeps it reachable meanwhile.
//!
//! The per-request calls have two forms. The hot one (`headersWrite`,
//! `addressWrite`) reads and writes a thread's scratch memory (a direct
//! `ByteBuffer`) by address and makes no JNI callback: a `String[]` built
//! through JNI costs microseconds (a class lookup, a callback per string),
//! more than the rest of the filter. The `String` forms (`headersFields`,
//! `addressKey`) serve what does not fit the scratch memory, and tests.

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use jni::Env;
use sds_core::keyed::KeyDecision;
use sds_core::ErrorCode;
use sds_http::{check_policy_name, headers, ClientAddress, HeaderStyle, Limited};

use crate::boundary::{hot_native, setup_native, Fail, Refusal};
use crate::codes::strings;
use crate::handle::{borrow, free, into_handle};

/// The numbers of one decision in `headersFields`' `io`: the policy's
/// index, then `admitted` (1 or 0), `limit`, `remaining`, `resetMs`,
/// `retryAfterMs` (`Long.MAX_VALUE` for never), `windowMs`, as
/// `KeyDecision` gives them.
const DECISION_LEN: usize = 7;

/// The header fields of one filter's policies, in one style.
struct Writer {
    style: HeaderStyle,
    policies: Vec<String>,
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

/// A decision's number as the core holds it: Java wrote it from a
/// `KeyDecision`, whose `NEVER` is `Long.MAX_VALUE` (the core's `u64::MAX`).
fn whole(value: i64) -> u64 {
    if value == i64::MAX {
        u64::MAX
    } else {
        u64::try_from(value).unwrap_or(0)
    }
}

fn count32(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

setup_native! {
    /// Throws `INVALID_ARGUMENT` with sds-http's message if `name` cannot
    /// name a policy in a header (1 to 64 printable ASCII characters).
    fn Java_io_sdsnative_web_HttpNative_checkPolicyName(env, name: JString<'l>) {
        let name = text(env, &name, "policy name")?;
        check_policy_name(&name).map_err(invalid)
    }

    /// A header writer for `policies` in `style` (`"draft-10"`, `"draft-6"`
    /// or `"x-ratelimit"`).
    fn Java_io_sdsnative_web_HttpNative_headersNew(env, style: JString<'l>, policies: JObjectArray<'l>) -> jlong {
        use jni::refs::Reference;
        let name = text(env, &style, "header style")?;
        let style = HeaderStyle::from_name(&name).ok_or_else(|| {
            invalid(format!(
                "headers must be \"draft-10\", \"draft-6\" or \"x-ratelimit\", not {name:?}"
            ))
        })?;
        if policies.is_null() {
            return Err(null("policy names"));
        }
        let policies = texts(env, &policies, "policy name")?;
        for name in &policies {
            check_policy_name(name).map_err(invalid)?;
        }
        Ok(into_handle(Writer { style, policies }))
    }

    /// The header fields of the first `count` decisions of `io`
    /// ([`DECISION_LEN`] numbers each), flat: `{name, value, name, value,
    /// ...}` (`Retry-After` last, for a refusal that a wait can cure).
    fn Java_io_sdsnative_web_HttpNative_headersFields(
        env, handle: jlong, _owner: JObject<'l>, io: JLongArray<'l>, count: jint,
    ) -> JObjectArray<'l> {
        use jni::refs::Reference;
        // SAFETY: the Java owner passes its own handle and itself, which
        // keeps it reachable, so the writer is not freed meanwhile.
        let writer = unsafe { borrow::<Writer>(handle) }.map_err(Fail::code)?;
        if io.is_null() {
            return Err(null("decisions"));
        }
        let count = usize::try_from(count).unwrap_or(0);
        let mut numbers = vec![0i64; count * DECISION_LEN];
        if numbers.len() > io.len(env)? {
            return Err(invalid(format!("{count} decisions need {} numbers", numbers.len())));
        }
        io.get_region(env, 0, &mut numbers)?;
        let mut limits = Vec::with_capacity(count);
        for n in numbers.chunks_exact(DECISION_LEN) {
            limits.push(limited(writer, n).ok_or_else(|| invalid(format!("no policy at index {}", n[0])))?);
        }
        let fields = headers(&limits, writer.style);
        let flat = fields
            .into_iter()
            .flat_map(|(name, value)| [Some(name.to_string()), Some(value)]);
        strings(env, flat.collect::<Vec<_>>().into_iter())
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
        // SAFETY: as for `headersFields`.
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

/// The fields of `limits` written to `out` as `name\nvalue\n` lines (ASCII:
/// policy names are printable ASCII, values digits and Structured Fields);
/// the length written, `None` if it does not fit.
fn write_fields(limits: &[Limited<'_>], style: HeaderStyle, out: &mut [u8]) -> Option<usize> {
    let mut at = 0;
    for (name, value) in headers(limits, style) {
        for part in [name.as_bytes(), value.as_bytes()] {
            let end = at + part.len() + 1;
            out.get_mut(at..end - 1)?.copy_from_slice(part);
            *out.get_mut(end - 1)? = b'\n';
            at = end;
        }
    }
    Some(at)
}

/// The decision of the [`DECISION_LEN`] numbers `n` (policy index first).
fn limited<'a>(writer: &'a Writer, n: &[i64]) -> Option<Limited<'a>> {
    let policy = usize::try_from(n[0])
        .ok()
        .and_then(|i| writer.policies.get(i))?;
    Some(Limited {
        policy,
        decision: KeyDecision {
            admitted: n[1] == 1,
            limit: count32(n[2]),
            remaining: count32(n[3]),
            reset_ms: whole(n[4]),
            retry_after_ms: whole(n[5]),
            window_ms: whole(n[6]),
        },
    })
}

hot_native! {
    /// The header fields of the `count` decisions at offset 0 of the scratch
    /// memory at `scratch` ([`DECISION_LEN`] `long`s each, native byte
    /// order), written at `out_at` as `name\nvalue\n` lines, at most
    /// `capacity` bytes: their length.
    fn Java_io_sdsnative_web_HttpNative_headersWrite(
        scratch: jlong, count: jint, out_at: jint, capacity: jint,
    ) with |env, writer: Writer| {
        let _ = env;
        let (Ok(count), Ok(out_at), Ok(capacity)) =
            (usize::try_from(count), usize::try_from(out_at), usize::try_from(capacity))
        else {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        };
        if out_at < count * DECISION_LEN * 8 {
            return Err(Refusal::Code(ErrorCode::InvalidArgument));
        }
        let base = scratch as *mut u8;
        // SAFETY: `scratch` is the address `scratchAddress` gave for the
        // calling thread's buffer, which that thread's `HeaderWriter` holds
        // (and reads after this call); the decisions lie before `out_at`
        // and `out_at + capacity` is within the buffer (Java sizes it).
        let (numbers, out) = unsafe {
            (
                std::slice::from_raw_parts(base.cast::<i64>().cast_const(), count * DECISION_LEN),
                std::slice::from_raw_parts_mut(base.add(out_at), capacity),
            )
        };
        let mut limits = Vec::with_capacity(count);
        for n in numbers.chunks_exact(DECISION_LEN) {
            limits.push(limited(writer, n).ok_or(Refusal::Code(ErrorCode::InvalidArgument))?);
        }
        let written = write_fields(&limits, writer.style, out);
        written.map(|n| n as i64).ok_or(Refusal::Code(ErrorCode::InvalidArgument))
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
        // SAFETY: as for `headersWrite`: the input lies before `out_at`.
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

/// Frees a header writer (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_web_HttpNative_headersFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per writer, by its reclaimer once the owner is
    // collected, so no call uses it any more.
    let _ = std::panic::catch_unwind(|| unsafe { free::<Writer>(handle) });
}

/// Frees a client address (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_web_HttpNative_addressFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: as for `headersFree`.
    let _ = std::panic::catch_unwind(|| unsafe { free::<ClientAddress>(handle) });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_lines_and_what_does_not_fit_is_none() {
        let writer = Writer {
            style: HeaderStyle::Draft10,
            policies: vec!["p".into()],
        };
        let numbers = [0, 0, 10, 0, 2_500, 2_500, 60_000];
        let limits = [limited(&writer, &numbers).unwrap()];
        let mut out = [0u8; 128];
        let n = write_fields(&limits, writer.style, &mut out).unwrap();
        assert_eq!(
            std::str::from_utf8(&out[..n]).unwrap(),
            "RateLimit-Policy\n\"p\";q=10;w=60\nRateLimit\n\"p\";r=0;t=3\nRetry-After\n3\n"
        );
        assert_eq!(write_fields(&limits, writer.style, &mut out[..n - 1]), None);
        assert!(limited(&writer, &[1, 0, 0, 0, 0, 0, 0]).is_none());
    }

    #[test]
    fn numbers_read_back_as_the_core_holds_them() {
        assert_eq!(whole(i64::MAX), u64::MAX);
        assert_eq!(whole(-5), 0);
        assert_eq!(whole(1500), 1500);
        assert_eq!(count32(i64::MAX), u32::MAX);
        assert_eq!(count32(-1), 0);
        assert_eq!(count32(42), 42);
    }
}
