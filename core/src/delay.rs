//! The delay state of one point (SEMANTICS.md §4, step 4): once a check fails
//! on a point with a `delayTime`, every request is triggered until the delay
//! expires, except one probe per `retryInterval`.
//!
//! Readers (every `enter`) only load and compare-and-swap. The transitions
//! (start, probe settled, strategy replaced) take turns through a word that
//! holds the turn's owner (owner.rs), and a start that finds the turn taken
//! simply leaves the start to its holder, so `enter` never waits. The probe
//! word packs the delay's generation, an arm counter and an "available" bit,
//! so a probe taken is always tied to the delay and the arming it came from,
//! whatever races around it.
//!
//! # A holder that dies
//!
//! A settle or replace that waits on a dead holder takes the turn over; a
//! start that is refused asks about the holder once every
//! `REFUSALS_BEFORE_ASKING` refusals (never on a plain `enter`), so a delay
//! can start again after its holder died. The transition then runs on the
//! values the dead holder left, each of them valid on its own. What a crash
//! inside a transition can cost:
//! - in a start, after the old probe is withdrawn and before the delay shows:
//!   nothing (the delay did not start; the next failing check starts it);
//! - in a start, after the delay shows and before its probe is made
//!   available, or in a failed probe's settle before the next probe is
//!   armed: the delay's probes (it lasts its whole `delayTime`);
//! - in a replace, after the strategy is stored and before the delay follows
//!   it: a delay the new strategy removed runs to its end.

use crate::owner::{Holder, Transition};
use crate::strategy::Strategy;
use crate::sync::{const_fn, AtomicU32, AtomicU64, Ordering};

const AVAILABLE: u64 = 1;
const STEP_SLACK_MS: u64 = 1000;
const ARM_ONE: u64 = 2;
const ARM_MASK: u64 = 0xFFFF_FFFE;
/// A start refused this many times asks whether the turn's holder lives.
#[cfg(not(loom))]
const REFUSALS_BEFORE_ASKING: u32 = 256;
#[cfg(loom)]
const REFUSALS_BEFORE_ASKING: u32 = 1;

#[inline]
fn generation(word: u64) -> u32 {
    (word >> 32) as u32
}

#[inline]
fn with(generation: u32, arm_of: u64, available: bool) -> u64 {
    ((generation as u64) << 32) | (arm_of & ARM_MASK) | if available { AVAILABLE } else { 0 }
}

/// Plain data (`repr(C)`, integer atomics only, 40 bytes): all zero is a
/// fresh delay, and any bit pattern is a valid one.
#[repr(C)]
pub(crate) struct Delay {
    /// The owner taking its turn at a transition; 0: nobody.
    pub(crate) turn: AtomicU32,
    /// Starts refused because the turn was taken (wrapping).
    refused: AtomicU32,
    /// First ms of the delay: a time before it means the clock stepped back.
    since: AtomicU64,
    /// Last ms of the delay; 0: no delay.
    until: AtomicU64,
    /// Earliest ms the next probe may start.
    probe_at: AtomicU64,
    /// generation (32) | arm counter (31) | available (1).
    probe: AtomicU64,
}

impl Delay {
    const_fn! {
        pub(crate) fn new() -> Delay {
            Delay {
                turn: AtomicU32::new(0),
                refused: AtomicU32::new(0),
                since: AtomicU64::new(0),
                until: AtomicU64::new(0),
                // No probe is available (the probe word's bit), so its time
                // is never read before a start sets it.
                probe_at: AtomicU64::new(0),
                probe: AtomicU64::new(0),
            }
        }
    }

    /// Whether a delay covers `now_ms`. A time more than one second before
    /// the delay began means the clock stepped back: the delay no longer
    /// applies (the rules run again and may start a new one), rather than
    /// lasting for the whole step. The second of slack keeps threads whose
    /// clock readings differ by a little inside the delay.
    #[inline]
    pub(crate) fn active(&self, now_ms: u64) -> bool {
        let until = self.until.load(Ordering::Acquire);
        until != 0
            && now_ms <= until
            && now_ms.saturating_add(STEP_SLACK_MS) >= self.since.load(Ordering::Relaxed)
    }

    /// Takes the probe if one is due: the generation it belongs to.
    #[inline]
    pub(crate) fn take_probe(&self, now_ms: u64) -> Option<u16> {
        let word = self.probe.load(Ordering::Acquire);
        if word & AVAILABLE == 0 || self.probe_at.load(Ordering::Acquire) > now_ms {
            return None;
        }
        self.probe
            .compare_exchange(word, word & !AVAILABLE, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|w| generation(w) as u16)
    }

    /// Starts a delay at `now_ms` unless one is active or being changed.
    pub(crate) fn start(&self, now_ms: u64, strategy: &Strategy, holder: &Holder<'_>) {
        if !holder.try_take(&self.turn) {
            let refused = self.refused.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            if refused % REFUSALS_BEFORE_ASKING != 0 || !holder.take_from_dead(&self.turn) {
                return;
            }
        }
        holder.reached(Transition::DelayStart, 0);
        if !self.active(now_ms) {
            let word = self.probe.load(Ordering::Relaxed);
            let next = generation(word).wrapping_add(1);
            // Withdraw any probe of an older delay before the new one shows.
            self.probe.store(with(next, word, false), Ordering::Release);
            holder.reached(Transition::DelayStart, 1);
            let probes = strategy.has_probes();
            if probes {
                let at = now_ms.saturating_add(strategy.retry_interval as u64);
                self.probe_at.store(at, Ordering::Release);
            }
            let until = now_ms.saturating_add(strategy.delay_time as u64);
            self.since.store(now_ms, Ordering::Relaxed);
            self.until.store(until, Ordering::Release);
            holder.reached(Transition::DelayStart, 2);
            if probes {
                self.probe.store(with(next, word, true), Ordering::Release);
            }
        }
        holder.reached(Transition::DelayStart, 3);
        holder.give_back(&self.turn);
    }

    /// Settles a probe of generation `gen` that exited at `now_ms`: success
    /// ends the delay, failure arms the next probe one `retryInterval` later.
    /// An entry keeps the low 16 bits of the generation: a probe would have to
    /// outlive 65 536 delays of >= 10 s each (7.5 days) to be mistaken.
    pub(crate) fn settle(
        &self,
        gen: u16,
        now_ms: u64,
        failed: bool,
        strategy: Option<&Strategy>,
        holder: &Holder<'_>,
    ) {
        holder.take(&self.turn);
        holder.reached(Transition::DelaySettle, 0);
        let word = self.probe.load(Ordering::Relaxed);
        if generation(word) as u16 == gen {
            if !failed {
                self.until.store(0, Ordering::Release);
                holder.reached(Transition::DelaySettle, 1);
                self.probe
                    .store(with(generation(word), word, false), Ordering::Release);
            } else if let Some(s) = strategy.filter(|s| s.has_probes() && self.active(now_ms)) {
                let at = now_ms.saturating_add(s.retry_interval as u64);
                self.probe_at.store(at, Ordering::Release);
                holder.reached(Transition::DelaySettle, 1);
                self.probe.store(
                    with(generation(word), word.wrapping_add(ARM_ONE), true),
                    Ordering::Release,
                );
            }
        }
        holder.reached(Transition::DelaySettle, 2);
        holder.give_back(&self.turn);
    }

    /// Replaces the strategy through `store` (which returns the old one)
    /// while no other transition runs, then applies the reference's rules: no
    /// delay in the new strategy ends the delay; probes newly enabled allow
    /// one at once.
    pub(crate) fn replace(
        &self,
        new: Option<&Strategy>,
        store: impl FnOnce() -> Option<Strategy>,
        holder: &Holder<'_>,
    ) {
        holder.take(&self.turn);
        holder.reached(Transition::DelayReplace, 0);
        let old = store();
        holder.reached(Transition::DelayReplace, 1);
        let word = self.probe.load(Ordering::Relaxed);
        match new {
            Some(s) if s.has_delay() => {
                let newly = s.has_probes() && !old.as_ref().is_some_and(Strategy::has_probes);
                if newly && self.until.load(Ordering::Acquire) != 0 {
                    self.probe_at.store(0, Ordering::Release);
                    let arm = word.wrapping_add(ARM_ONE);
                    self.probe
                        .store(with(generation(word), arm, true), Ordering::Release);
                }
            }
            _ => {
                self.probe
                    .store(with(generation(word), word, false), Ordering::Release);
                self.until.store(0, Ordering::Release);
            }
        }
        holder.reached(Transition::DelayReplace, 2);
        holder.give_back(&self.turn);
    }
}
