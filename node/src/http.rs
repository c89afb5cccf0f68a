//! What the web middleware (`lib/web/`) asks of Rust: the header fields of
//! a request's key decisions and the client key of a request, both from
//! `sds-http`, so that Express, Fastify and the other bindings' frameworks
//! answer one request alike. JavaScript formats no header and parses no
//! address.
//!
//! `NativeHeaders` is made once per guarded route (its policy names checked
//! there, its style chosen there); per request JavaScript writes the
//! decisions' numbers into a `Float64Array` it keeps and calls
//! `fields(io, count)`, which reads the array's memory in place.

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use sds_core::keyed::{KeyDecision, NEVER};
use sds_http::{check_policy_name, headers, ClientAddress, HeaderStyle, Limited};

use crate::errors::{invalid_argument, SdsError};

/// The numbers of one decision in `fields`' `io`: the policy's index, then
/// `admitted` (1 or 0), `limit`, `remaining`, `resetMs`, `retryAfterMs`
/// (`Infinity` for never), `windowMs`, as `KeyedLimit#decide` gives them.
pub const DECISION_LEN: usize = 7;

/// The header fields of one guarded route's policies, in one style.
#[napi(namespace = "native")]
pub struct NativeHeaders {
    style: HeaderStyle,
    policies: Vec<String>,
}

/// A number of a decision as the core holds it (JavaScript wrote it from
/// a decision, so only `Infinity` needs care: the core's `NEVER`).
fn whole(value: f64) -> u64 {
    if value == f64::INFINITY {
        NEVER
    } else if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

#[napi(namespace = "native")]
impl NativeHeaders {
    /// `style`: `"draft-10"`, `"draft-6"` or `"x-ratelimit"`; `policies`:
    /// the names, each 1 to 64 printable ASCII characters.
    #[napi(constructor)]
    pub fn new(style: String, policies: Vec<String>) -> Result<NativeHeaders, SdsError> {
        let style = HeaderStyle::from_name(&style).ok_or_else(|| {
            invalid_argument(format!(
                "headers must be \"draft-10\", \"draft-6\" or \"x-ratelimit\", got {style:?}"
            ))
        })?;
        for name in &policies {
            check_policy_name(name).map_err(invalid_argument)?;
        }
        Ok(NativeHeaders { style, policies })
    }

    /// The fields of the first `count` decisions in `io`
    /// ([`DECISION_LEN`] numbers each), flat: `[name, value, name, value,
    /// ...]` (`Retry-After` last, for a refusal that a wait can cure).
    #[napi]
    pub fn fields(&self, io: &[f64], count: u32) -> Result<Vec<String>, SdsError> {
        let count = count as usize;
        if count * DECISION_LEN > io.len() {
            return Err(invalid_argument(format!(
                "{count} decisions need {} numbers, io has {}",
                count * DECISION_LEN,
                io.len()
            )));
        }
        let mut limits = Vec::with_capacity(count);
        for numbers in io.chunks_exact(DECISION_LEN).take(count) {
            let policy = self
                .policies
                .get(numbers[0] as usize)
                .ok_or_else(|| invalid_argument("no policy at that index"))?;
            limits.push(Limited {
                policy,
                decision: KeyDecision {
                    admitted: numbers[1] == 1.0,
                    limit: whole(numbers[2]).min(u32::MAX as u64) as u32,
                    remaining: whole(numbers[3]).min(u32::MAX as u64) as u32,
                    reset_ms: whole(numbers[4]),
                    retry_after_ms: whole(numbers[5]),
                    window_ms: whole(numbers[6]),
                },
            });
        }
        let mut flat = Vec::with_capacity(8);
        for (name, value) in headers(&limits, self.style) {
            flat.push(name.to_string());
            flat.push(value);
        }
        Ok(flat)
    }
}

/// The client key of requests: the peer's address, or the client that
/// trusted proxies name in `X-Forwarded-For`, masked to a prefix.
#[napi(namespace = "native")]
pub struct NativeClientAddress {
    inner: ClientAddress,
}

#[napi(namespace = "native")]
impl NativeClientAddress {
    /// Prefix lengths (IPv4 0 to 32, IPv6 0 to 128) and the trusted
    /// proxies: addresses or CIDR networks.
    #[napi(constructor)]
    pub fn new(
        ipv4_prefix: u32,
        ipv6_prefix: u32,
        trusted: Vec<String>,
    ) -> Result<NativeClientAddress, SdsError> {
        let prefix = |bits: u32| u8::try_from(bits).unwrap_or(u8::MAX);
        let inner = ClientAddress::new(prefix(ipv4_prefix), prefix(ipv6_prefix), &trusted)
            .map_err(invalid_argument)?;
        Ok(NativeClientAddress { inner })
    }

    /// The key of a request from `peer` (the socket's remote address) with
    /// its `X-Forwarded-For` header: one value, several, or none.
    #[napi]
    pub fn key(
        &self,
        peer: String,
        forwarded_for: Option<Either<String, Vec<String>>>,
    ) -> Result<String, SdsError> {
        let key = match &forwarded_for {
            None => self.inner.key(&peer, &[]),
            Some(Either::A(one)) => self.inner.key(&peer, &[one.as_str()]),
            Some(Either::B(many)) => {
                let values: Vec<&str> = many.iter().map(String::as_str).collect();
                self.inner.key(&peer, &values)
            }
        };
        key.map_err(invalid_argument)
    }
}
