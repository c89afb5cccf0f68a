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

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use jni::Env;
use sds_core::keyed::KeyDecision;
use sds_core::ErrorCode;
use sds_http::{check_policy_name, headers, ClientAddress, HeaderStyle, Limited};

use crate::boundary::{setup_native, Fail};
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
            let policy = usize::try_from(n[0]).ok().and_then(|i| writer.policies.get(i));
            let policy = policy.ok_or_else(|| invalid(format!("no policy at index {}", n[0])))?;
            limits.push(Limited {
                policy,
                decision: KeyDecision {
                    admitted: n[1] == 1,
                    limit: count32(n[2]),
                    remaining: count32(n[3]),
                    reset_ms: whole(n[4]),
                    retry_after_ms: whole(n[5]),
                    window_ms: whole(n[6]),
                },
            });
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
    fn numbers_read_back_as_the_core_holds_them() {
        assert_eq!(whole(i64::MAX), u64::MAX);
        assert_eq!(whole(-5), 0);
        assert_eq!(whole(1500), 1500);
        assert_eq!(count32(i64::MAX), u32::MAX);
        assert_eq!(count32(-1), 0);
        assert_eq!(count32(42), 42);
    }
}
