//! Exact mode: one decision of a cluster point taken by Redis, in one Lua
//! script that reads the point's window and increments it atomically, for
//! low-rate points where the sync's error bound is too loose. It costs the
//! caller one round trip; while Redis is unreachable the decision is the
//! core's local one (local counts plus the remote counts of the last sync),
//! counted in the table, so the syncer pushes it after recovery.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::{Cmd, Script};
use sds_core::{Flags, Outcome, Point, Reason, Strategy, SECOND_MS, WINDOW_SECONDS};

use crate::conn::{forget, Interrupt};
use crate::keys::{expires_at_ms, second_key};
use crate::link::Link;
use crate::resp::Reply;
use crate::Config;

/// KEYS: the point's keys of the window's seconds, oldest first, the
/// current second last. ARGV: visitThreshold, the token bucket's rate and
/// size (negative: off), the current key's expiry (Unix ms), the reason
/// codes of VISIT and TOKEN_BUCKET. Counts this request in the totals (`v`,
/// and `d` when refused) and returns 0 (admitted) or the reason's code.
/// The checks are SEMANTICS.md §4's VISIT and TOKEN_BUCKET on the cluster's
/// totals, this request included.
const DECIDE: &str = r"
local visits, downs, token = 1, 0, 1
for i = 1, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'v', 'd')
  local v = tonumber(f[1]) or 0
  visits = visits + v
  downs = downs + (tonumber(f[2]) or 0)
  if i == #KEYS then token = token + v end
end
local limit, rate, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local reason = 0
if limit >= 0 and visits - downs > limit then
  reason = tonumber(ARGV[5])
elseif rate >= 0 and token > rate then
  if size <= rate or token > size or 10 * rate - token + downs <= 0 then
    reason = tonumber(ARGV[6])
  end
end
local now = KEYS[#KEYS]
redis.call('HINCRBY', now, 'v', 1)
if reason ~= 0 then redis.call('HINCRBY', now, 'd', 1) end
redis.call('PEXPIREAT', now, ARGV[4])
return reason
";

/// An exact decision.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The request may go on.
    pub admitted: bool,
    /// Why it was refused: `Visit` or `TokenBucket` from Redis; any reason
    /// of the core from a local decision.
    pub reason: Option<Reason>,
    /// Redis decided (true), or Redis was unreachable and the core decided
    /// locally (false).
    pub exact: bool,
}

/// The connection of exact calls (callers queue on it) and its backoff.
pub(crate) struct Exact {
    state: Mutex<State>,
    script: Script,
    /// The socket a stop shuts down.
    interrupt: Interrupt,
}

struct State {
    link: Option<Link>,
    next_connect_ms: u64,
    backoff_ms: u64,
}

impl Exact {
    pub(crate) fn new(config: &Config, interrupt: Interrupt) -> Exact {
        Exact {
            state: Mutex::new(State {
                link: None,
                next_connect_ms: 0,
                backoff_ms: config.sync_ms,
            }),
            script: Script::new(DECIDE),
            interrupt,
        }
    }

    /// Decides one request on `point` named `name` at `now_ms`: in Redis,
    /// or locally when Redis cannot be reached (then not again before the
    /// backoff, which starts at `sync_ms` and doubles up to
    /// `max_backoff_ms`).
    pub(crate) fn decide(
        &self,
        config: &Config,
        name: &[u8],
        point: &Point,
        now_ms: u64,
    ) -> Decision {
        if let Ok(mut state) = self.state.lock() {
            if let Some(reason) = self.remote(&mut state, config, name, point, now_ms) {
                return Decision {
                    admitted: reason.is_none(),
                    reason,
                    exact: true,
                };
            }
        }
        let entry = point.enter(now_ms, Flags::NONE);
        point.exit(&entry, now_ms, Outcome::Ok);
        Decision {
            admitted: !entry.downgraded(),
            reason: entry.reason(),
            exact: false,
        }
    }

    /// The reason Redis gives (`Some(None)`: admitted); `None` when it
    /// could not be asked, or answered something else than the script's
    /// codes (0, VISIT's, TOKEN_BUCKET's: anything else is a protocol
    /// error, never an admission). Connecting, EVALSHA and (on a node that
    /// lacks the script) EVAL end within one `timeout_ms` together, to one
    /// server.
    fn remote(
        &self,
        state: &mut State,
        config: &Config,
        name: &[u8],
        point: &Point,
        now_ms: u64,
    ) -> Option<Option<Reason>> {
        let deadline = Instant::now() + Duration::from_millis(config.timeout_ms);
        if state.link.is_none() {
            if now_ms < state.next_connect_ms {
                return None;
            }
            match Link::connect(config, deadline, Some(&self.interrupt)) {
                Ok(link) => state.link = Some(link),
                Err(_) => {
                    forget(&self.interrupt);
                    return state.failed(config, now_ms);
                }
            }
        }
        let link = state.link.as_mut()?;
        let (sha, body) = self.commands(config, name, point.strategy(), now_ms);
        let answer = match link.query(&sha, deadline) {
            Ok(Reply::Error(e)) if e.starts_with("NOSCRIPT") => {
                // EVAL caches the script on that node: EVALSHA from now on.
                link.query(&body, deadline)
            }
            answer => answer,
        };
        let reason = match answer {
            Ok(Reply::Int(0)) => Some(None),
            Ok(Reply::Int(code)) if code == i64::from(Reason::Visit.code()) => {
                Some(Some(Reason::Visit))
            }
            Ok(Reply::Int(code)) if code == i64::from(Reason::TokenBucket.code()) => {
                Some(Some(Reason::TokenBucket))
            }
            // An error reply (the script failed, OOM) is Redis's answer on
            // a working link; anything else, a link not to trust.
            Ok(Reply::Error(_)) => return state.failed(config, now_ms),
            _ => None,
        };
        match reason {
            Some(reason) => {
                state.backoff_ms = config.sync_ms;
                Some(reason)
            }
            None => {
                state.link = None;
                forget(&self.interrupt);
                state.failed(config, now_ms)
            }
        }
    }

    /// EVALSHA and EVAL of the script for this request.
    fn commands(
        &self,
        config: &Config,
        name: &[u8],
        s: Option<Strategy>,
        now_ms: u64,
    ) -> (Cmd, Cmd) {
        let now_s = now_ms / SECOND_MS;
        let on = s.filter(|s| s.downgrade_rate > 0);
        let (limit, rate, size) = on.map_or((-1, -1, -1), |s| {
            (
                s.visit_threshold,
                s.token_bucket_generated_tokens_in_second,
                s.token_bucket_size,
            )
        });
        let keys: Vec<Vec<u8>> = (now_s.saturating_sub(WINDOW_SECONDS - 1)..=now_s)
            .map(|second| second_key(&config.key_prefix, name, second))
            .collect();
        let mut sha = Cmd::new();
        sha.arg("EVALSHA").arg(self.script.get_hash());
        let mut body = Cmd::new();
        body.arg("EVAL").arg(DECIDE);
        for cmd in [&mut sha, &mut body] {
            cmd.arg(keys.len())
                .arg(&keys)
                .arg(limit)
                .arg(rate)
                .arg(size)
                .arg(expires_at_ms(now_s))
                .arg(Reason::Visit.code())
                .arg(Reason::TokenBucket.code());
        }
        (sha, body)
    }
}

impl State {
    fn failed(&mut self, config: &Config, now_ms: u64) -> Option<Option<Reason>> {
        self.next_connect_ms = now_ms + self.backoff_ms;
        self.backoff_ms = (self.backoff_ms * 2).min(config.max_backoff_ms.max(1));
        None
    }
}
