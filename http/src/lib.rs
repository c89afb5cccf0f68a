//! What every binding's web middleware shares, written once so that a
//! request gets the same answer from Python, Node and Java:
//!
//! - [`headers`]: the header fields of one or more key decisions, in the
//!   style of draft-ietf-httpapi-ratelimit-headers-10 (`RateLimit`,
//!   `RateLimit-Policy`) or the older ones (`RateLimit-Limit/Remaining/
//!   Reset`, `X-RateLimit-*`), and `Retry-After` for a refusal;
//! - [`ClientAddress`]: the key of a request's client from the peer's
//!   address and `X-Forwarded-For`, with trusted proxies and the prefix
//!   lengths that make one IPv6 network one client;
//! - [`RoutePolicies`]: a route's per-key policies deciding one request,
//!   in the one order every middleware follows (peek after a refusal, a
//!   plain 503 for a full in-flight table, in-flight units held until the
//!   response ends).

#![forbid(unsafe_code)]

mod address;
mod headers;
mod route;

pub use address::{AddressError, ClientAddress};
pub use headers::{check_policy_name, headers, HeaderStyle, Limited, PolicyNameError};
pub use route::{Decided, RouteError, RoutePolicies, Verdict, MAX_POLICIES};
