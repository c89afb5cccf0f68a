//! A route's per-key policies deciding one request: the order every
//! binding's middleware follows, written once.
//!
//! The binding calls each policy's key function (and cost function) first,
//! then [`RoutePolicies::decide`] once:
//!
//! 1. The policies decide in order; a policy without a key for this request
//!    (`None`) is left out. Each takes its cost if it admits.
//! 2. After the first refusal the later policies only peek (their state
//!    goes into the headers, nothing is taken); the earlier ones keep what
//!    they took (the request was made), but in-flight units, which are given
//!    back at once. The answer is [`Verdict::Limited`]: 429 with the headers
//!    and `Retry-After` (the longest wait among the refusals).
//! 3. An in-flight policy whose table has no cell for a new key (every
//!    candidate holds units: `SDS_TABLE_FULL`, which the core never evicts)
//!    is [`Verdict::TableFull`]: the service is full, not the client over
//!    its limit nor the point downgraded, so a plain 503 (nginx's
//!    `limit_conn` answers 503 there too) without the route's fallback
//!    (which answers the point's downgrades) and without headers; nothing
//!    is held, the policies before it keep their hit.
//! 4. Else [`Verdict::Admitted`]: the binding enters the route's point (a
//!    downgrade gives the held units back: [`RoutePolicies::release`]) and,
//!    when the response is over, releases what [`Decided::held`] names.

use std::sync::Arc;

use sds_core::keyed::{KeyDecision, KeyError, KeyRuleKind};
use sds_core::ErrorCode;
use sds_shm::AnyKeys;

use crate::headers::{check_policy_name, headers_of, HeaderStyle, Limited, PolicyNameError};

/// The most policies a route has: [`Decided::held`] is one bit each.
pub const MAX_POLICIES: usize = 64;

/// What a request's keys met.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every policy with a key admitted: on to the route's point.
    Admitted,
    /// A policy refused: 429 with the headers (nothing held).
    Limited,
    /// An in-flight table had no cell for a new key: a plain 503, neither
    /// the route's fallback nor headers (nothing held).
    TableFull,
}

/// One request's decisions: the verdict, what the headers say, and which
/// policies hold units until the response is over.
#[derive(Clone, Debug)]
pub struct Decided {
    /// What the request met.
    pub verdict: Verdict,
    /// Bit `i`: policy `i` holds its cost for this request (an admitted
    /// in-flight policy of an admitted request); 0 otherwise.
    pub held: u64,
    /// (policy index, decision) of the policies that had a key, in order.
    decisions: Vec<(usize, KeyDecision)>,
}

impl Decided {
    /// The decisions of the policies that had a key: (policy index,
    /// decision), in order.
    pub fn decisions(&self) -> &[(usize, KeyDecision)] {
        &self.decisions
    }
}

/// A route's policies: each a name (its headers' list item) and a key
/// table, with the header style of the route's responses.
pub struct RoutePolicies {
    names: Vec<String>,
    limits: Vec<Arc<AnyKeys>>,
    in_flight: u64,
    style: HeaderStyle,
}

/// Why a route's policies cannot be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// A name a header cannot carry.
    Name(PolicyNameError),
    /// Two policies of one route with one name: their header items would
    /// be told apart by nobody.
    DuplicateName(String),
    /// More than [`MAX_POLICIES`].
    TooMany(usize),
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteError::Name(e) => e.fmt(f),
            RouteError::DuplicateName(name) => {
                write!(
                    f,
                    "policy names must differ within a route: {name:?} is twice"
                )
            }
            RouteError::TooMany(n) => {
                write!(f, "a route has at most {MAX_POLICIES} policies, not {n}")
            }
        }
    }
}

impl std::error::Error for RouteError {}

impl RoutePolicies {
    /// The policies `(name, limit)` of a route, in the order they decide,
    /// answering in `style`.
    pub fn new(
        style: HeaderStyle,
        policies: Vec<(String, Arc<AnyKeys>)>,
    ) -> Result<RoutePolicies, RouteError> {
        if policies.len() > MAX_POLICIES {
            return Err(RouteError::TooMany(policies.len()));
        }
        let mut in_flight = 0;
        for (i, (name, limit)) in policies.iter().enumerate() {
            check_policy_name(name).map_err(RouteError::Name)?;
            if policies[..i].iter().any(|(other, _)| other == name) {
                return Err(RouteError::DuplicateName(name.clone()));
            }
            if limit.rule().kind() == KeyRuleKind::InFlight {
                in_flight |= 1 << i;
            }
        }
        let (names, limits) = policies.into_iter().unzip();
        Ok(RoutePolicies {
            names,
            limits,
            in_flight,
            style,
        })
    }

    /// How many policies.
    pub fn len(&self) -> usize {
        self.limits.len()
    }

    /// Whether the route has none.
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty()
    }

    /// The policies' names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The header style.
    pub fn style(&self) -> HeaderStyle {
        self.style
    }

    /// Decides a request whose key for policy `i` is `keys[i]` (`None`: the
    /// policy does not apply) at cost `costs[i]`, at `now_ms` (see the
    /// module's order). An error other than a full in-flight table (a cost
    /// of 0) gives back what the request took so far and is returned.
    ///
    /// # Panics
    /// When `keys` or `costs` is not one per policy: the binding's slip.
    pub fn decide(
        &self,
        keys: &[Option<&[u8]>],
        costs: &[u32],
        now_ms: u64,
    ) -> Result<Decided, KeyError> {
        assert!(
            keys.len() == self.len() && costs.len() == self.len(),
            "one key and one cost per policy"
        );
        let mut decided = Decided {
            verdict: Verdict::Admitted,
            held: 0,
            decisions: Vec::with_capacity(self.len()),
        };
        for (i, limit) in self.limits.iter().enumerate() {
            let Some(key) = keys[i] else { continue };
            if decided.verdict == Verdict::Limited {
                decided.decisions.push((i, limit.peek(key, now_ms)));
                continue;
            }
            match limit.decide(key, now_ms, costs[i]) {
                Ok(d) => {
                    if !d.admitted {
                        decided.verdict = Verdict::Limited;
                    } else if self.in_flight & (1 << i) != 0 {
                        decided.held |= 1 << i;
                    }
                    decided.decisions.push((i, d));
                }
                Err(e) => {
                    self.release(decided.held, keys, costs);
                    if e.code() != ErrorCode::TableFull {
                        return Err(e);
                    }
                    decided.verdict = Verdict::TableFull;
                    decided.held = 0;
                    decided.decisions.clear();
                    return Ok(decided);
                }
            }
        }
        if decided.verdict == Verdict::Limited {
            self.release(decided.held, keys, costs);
            decided.held = 0;
        }
        Ok(decided)
    }

    /// Gives back the units of the policies `held` names (from
    /// [`Decided::held`]), with the keys and costs the request was decided
    /// with: when the response is over, or when the route's point
    /// downgraded the request. A key whose units the table no longer holds
    /// (reset meanwhile) is passed over.
    pub fn release(&self, held: u64, keys: &[Option<&[u8]>], costs: &[u32]) {
        let mut rest = held;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let (Some(limit), Some(Some(key)), Some(&cost)) =
                (self.limits.get(i), keys.get(i), costs.get(i))
            {
                // Held means in flight: the only error is NotInFlight.
                let _ = limit.release(key, cost);
            }
        }
    }

    /// The header fields of `decided` (none for a full table or a request
    /// no policy applied to), in this route's style.
    pub fn headers(&self, decided: &Decided) -> Vec<(&'static str, String)> {
        let limits = decided.decisions.iter().map(|&(i, decision)| Limited {
            policy: &self.names[i],
            decision,
        });
        headers_of(limits, self.style)
    }
}
