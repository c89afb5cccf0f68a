//! What the web middleware (`lib/web/`) asks of Rust: a route's per-key
//! policies deciding a request with its header fields (`sds_http::
//! RoutePolicies`) and the client key of a request, both from `sds-http`,
//! so that Express, Fastify and the other bindings' frameworks answer one
//! request alike. JavaScript runs the key and cost functions and answers;
//! it decides in no order of its own, formats no header and parses no
//! address.
//!
//! `NativeRoutePolicies` is made once per guarded route (its policy names
//! checked there, its style chosen there). Per request JavaScript calls
//! its hot `decide(key0, key1, ...)`, a raw N-API callback as the key
//! tables' are (`hot_path.rs` says why), with the costs in `io`, a
//! `Float64Array` over the route's memory:
//!
//! - in: `io[i]` the cost of policy `i` (read only when its key is not
//!   `null` or `undefined`);
//! - out, after the `n` costs: the verdict (0 admitted, 1 limited, 2 a
//!   full in-flight table), then the policies holding units as bits, the
//!   low 32 and the high 32 (a route has up to 64 policies; a number holds
//!   53 bits);
//! - returned: the header fields, flat: `[name, value, name, value, ...]`
//!   (`Retry-After` last).
//!
//! Releasing, once per request that holds in-flight units, is the class's
//! `release`.

use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

use napi::bindgen_prelude::{ClassInstance, Either, Object, ObjectFinalize, Unknown};
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use sds_core::ErrorCode;
use sds_http::{ClientAddress, HeaderStyle, RoutePolicies, Verdict, MAX_POLICIES};

use crate::errors::{invalid_argument, js_error, SdsError};
use crate::keys::{from_key, units, with_key, Keys, NativeKeys};
use crate::raw::{self, check, Shared};

/// What `decide` writes in `io` after the costs: the verdict and the held
/// bits (low, high).
pub const OUT_LEN: usize = 3;

/// What the class and its hot `decide` share (one `Rc` share each).
struct Route {
    inner: RoutePolicies,
    /// The limits' shares, to tell a closed `KeyedLimit` (whose table the
    /// route still holds) as the limit alone would.
    limits: Vec<Rc<Keys>>,
    /// The costs, then [`OUT_LEN`] numbers out.
    io: Box<[Cell<f64>]>,
    /// The keys' bytes of the request being decided, kept between calls.
    bytes: RefCell<Vec<u8>>,
}

impl Shared for Route {
    fn io(&self) -> &[Cell<f64>] {
        &self.io
    }

    fn last_release(self, env: sys::napi_env) {
        for keys in self.limits {
            raw::release_share(env, keys);
        }
    }
}

/// A route's policies, in the order they decide, answering in one style.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeRoutePolicies {
    route: Rc<Route>,
}

impl ObjectFinalize for NativeRoutePolicies {
    fn finalize(self, env: Env) -> napi::Result<()> {
        raw::release_share(env.raw(), self.route);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeRoutePolicies {
    /// `style`: `"draft-10"`, `"draft-6"` or `"x-ratelimit"`; `names`: the
    /// policies' names (1 to 64 printable ASCII characters, distinct);
    /// `limits`: their tables, one per name.
    #[napi(constructor)]
    pub fn new(
        style: String,
        names: Vec<String>,
        limits: Vec<ClassInstance<NativeKeys>>,
    ) -> Result<NativeRoutePolicies, SdsError> {
        let style = HeaderStyle::from_name(&style).ok_or_else(|| {
            invalid_argument(format!(
                "headers must be \"draft-10\", \"draft-6\" or \"x-ratelimit\", got {style:?}"
            ))
        })?;
        if names.len() != limits.len() {
            return Err(invalid_argument(format!(
                "{} names for {} limits",
                names.len(),
                limits.len()
            )));
        }
        let shares: Vec<Rc<Keys>> = limits.iter().map(|limit| limit.share()).collect();
        let mut policies = Vec::with_capacity(names.len());
        for (name, keys) in names.into_iter().zip(&shares) {
            policies.push((name, keys.table()?));
        }
        // Dropping `shares` on an error is no last release: each limit's
        // own share is alive while it is an argument here.
        let inner = RoutePolicies::new(style, policies).map_err(invalid_argument)?;
        let io = (0..inner.len() + OUT_LEN).map(|_| Cell::new(0.0)).collect();
        let route = Route {
            inner,
            limits: shares,
            io,
            bytes: RefCell::new(Vec::new()),
        };
        Ok(NativeRoutePolicies {
            route: Rc::new(route),
        })
    }

    /// The hot `decide(key0, key1, ...)` (one key per policy: a string, a
    /// Buffer or a Uint8Array; `null` or `undefined`: the policy does not
    /// apply) and its `io` (see node/src/http.rs). A closed limit, a bad
    /// key or cost throws before any policy decides.
    #[napi(
        ts_return_type = "{ decide(...keys: Array<string | Uint8Array | null | undefined>): Array<string>; io: Float64Array }"
    )]
    pub fn hot_path<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        let env = env.raw();
        unsafe {
            let object = raw::new_object(env)?;
            raw::add_function(env, object, c"decide", decide_callback, &self.route)?;
            raw::set(env, object, c"io", raw::io_array(env, &self.route)?)?;
            Ok(Object::from_raw(env, object))
        }
    }

    /// Gives back the units of the policies `heldLow` and `heldHigh` name
    /// (from `decide`), with the keys and costs `decide` was given: when
    /// the response is over, or when the route's point downgraded the
    /// request. A limit closed meanwhile takes its units back all the same
    /// (the route holds its table).
    #[napi(
        ts_args_type = "keys: Array<string | Uint8Array | null | undefined>, costs: Float64Array, heldLow: number, heldHigh: number"
    )]
    pub fn release(
        &self,
        env: &Env,
        keys: Unknown,
        costs: &[f64],
        held_low: u32,
        held_high: u32,
    ) -> Result<(), SdsError> {
        let route = &*self.route;
        let n = route.inner.len();
        let held = u64::from(held_low) | u64::from(held_high) << 32;
        let (env, array) = (env.raw(), keys.raw());
        let mut length = 0;
        if unsafe { sys::napi_get_array_length(env, array, &mut length) } != sys::Status::napi_ok
            || length as usize != n
        {
            return Err(invalid_argument(format!(
                "keys must be an array of {n} keys"
            )));
        }
        let mut bytes = Vec::new();
        let mut spans = [None; MAX_POLICIES];
        let mut units = [1u32; MAX_POLICIES];
        for i in 0..n {
            if held & (1 << i) == 0 {
                continue;
            }
            let mut value = ptr::null_mut();
            check(
                unsafe { sys::napi_get_element(env, array, i as u32, &mut value) },
                "napi_get_element",
            )?;
            spans[i] = unsafe { key_span(env, value, &mut bytes) }?;
            // The held policies' costs were judged by `decide`.
            units[i] = costs.get(i).map_or(1, |&c| c as u32);
        }
        let keys = key_slices(&bytes, &spans[..n]);
        route.inner.release(held, &keys[..n], &units[..n]);
        Ok(())
    }
}

/// The span in `bytes` where the key `value` was appended; `None` for
/// `null` or `undefined`.
///
/// # Safety
/// `env` is the calling callback's; `value` one of its values.
unsafe fn key_span(
    env: sys::napi_env,
    value: sys::napi_value,
    bytes: &mut Vec<u8>,
) -> Result<Option<(usize, usize)>, SdsError> {
    let mut kind = 0;
    check(
        unsafe { sys::napi_typeof(env, value, &mut kind) },
        "napi_typeof",
    )?;
    if kind == sys::ValueType::napi_null || kind == sys::ValueType::napi_undefined {
        return Ok(None);
    }
    unsafe {
        with_key(env, value, |key| {
            let start = bytes.len();
            bytes.extend_from_slice(key);
            Ok(Some((start, bytes.len())))
        })
    }
}

/// The keys of `spans` in `bytes`.
fn key_slices<'a>(
    bytes: &'a [u8],
    spans: &[Option<(usize, usize)>],
) -> [Option<&'a [u8]>; MAX_POLICIES] {
    let mut keys = [None; MAX_POLICIES];
    for (key, span) in keys.iter_mut().zip(spans) {
        *key = span.map(|(start, end)| &bytes[start..end]);
    }
    keys
}

/// The hot `decide`: its error, or a panic, is thrown.
unsafe extern "C" fn decide_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let result = catch_unwind(AssertUnwindSafe(|| unsafe { decide(env, info) }))
        .unwrap_or_else(|_| Err(js_error(ErrorCode::Panic, ErrorCode::Panic.description())));
    match result {
        Ok(fields) => fields,
        Err(error) => unsafe { raw::throw(env, error) },
    }
}

/// Decides a request: the keys are the arguments, the costs and the
/// answer in the route's `io` (see the module's doc).
///
/// # Safety
/// `env` and `info` are the calling callback's.
unsafe fn decide(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<sys::napi_value, SdsError> {
    // SAFETY: this function is made with a `Route` share; N-API fills the
    // arguments not given with `undefined`.
    let (argv, route) = unsafe {
        raw::callback::<Route, MAX_POLICIES>(env, info, "the hot decide of a route's policies")?
    };
    let n = route.inner.len();
    let mut bytes = route.bytes.borrow_mut();
    bytes.clear();
    let mut spans = [None; MAX_POLICIES];
    let mut costs = [1u32; MAX_POLICIES];
    for i in 0..n {
        spans[i] = unsafe { key_span(env, argv[i], &mut bytes) }?;
        if spans[i].is_some() {
            route.limits[i].check_open()?;
            costs[i] = units(route.io[i].get(), "cost")?;
        }
    }
    let keys = key_slices(&bytes, &spans[..n]);
    let decided = route
        .inner
        .decide(&keys[..n], &costs[..n], sds_clock::now_ms())
        .map_err(from_key)?;
    let verdict = match decided.verdict {
        Verdict::Admitted => 0.0,
        Verdict::Limited => 1.0,
        Verdict::TableFull => 2.0,
    };
    route.io[n].set(verdict);
    route.io[n + 1].set((decided.held & 0xffff_ffff) as f64);
    route.io[n + 2].set((decided.held >> 32) as f64);
    let fields = route.inner.headers(&decided);
    let mut array = ptr::null_mut();
    check(
        unsafe { sys::napi_create_array_with_length(env, fields.len() * 2, &mut array) },
        "napi_create_array_with_length",
    )?;
    for (i, (name, value)) in fields.iter().enumerate() {
        for (j, text) in [*name, value.as_str()].into_iter().enumerate() {
            // Header names and values are ASCII: Latin-1 is their bytes.
            let mut string = ptr::null_mut();
            check(
                unsafe {
                    sys::napi_create_string_latin1(
                        env,
                        text.as_ptr().cast::<c_char>(),
                        text.len() as isize,
                        &mut string,
                    )
                },
                "napi_create_string_latin1",
            )?;
            check(
                unsafe { sys::napi_set_element(env, array, (2 * i + j) as u32, string) },
                "napi_set_element",
            )?;
        }
    }
    Ok(array)
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
