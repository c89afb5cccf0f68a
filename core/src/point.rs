//! `Point`: every counter of one point (SEMANTICS.md §2), its strategy and its
//! delay state, and the decision of §4. Plain fixed-size data: a `static`, a
//! table slot or any other memory can hold it.
//!
//! A point's transitions (a delay starting, a probe settling, a strategy
//! replaced) are held by an owner (owner.rs): [`Point`]'s own methods act as
//! [`crate::Owner::PRIVATE`]; a [`crate::PointTable`] passes its view's owner
//! and liveness, so use a shared table's points through the table. A table
//! with a ledger (ledger.rs) also counts each permit in its view's row.

use core::cell::Cell;

use crate::adaptive::{AdaptiveLimit, AdaptiveStats};
use crate::check::{first_failure, Reading};
use crate::counters::{Counter, Counters, Place, Sums};
use crate::delay::Delay;
use crate::entry::{Entry, Flags, Outcome, DOWNGRADED, PROBE};
use crate::error::Error;
use crate::in_flight::InFlight;
use crate::ledger::Held;
use crate::owner::Holder;
use crate::peak::Peak;
use crate::reason::Reason;
use crate::remote::{Remote, SecondCounts};
use crate::shaping::{Shape, Shaping};
use crate::strategy::{adaptive_params_of, Field, Strategy};
use crate::strategy_cell::{ForDecision, ForExit, StrategyCell};
use crate::sync::{const_fn, zeroed, AtomicU32, AtomicU64, Ordering};

/// The sums of the last whole 10 s cycle, as SDS uploads them.
// `repr(C)`: cbindgen makes C's `sds_cycle_stats` of it.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct CycleStats {
    /// Visits.
    pub visit_num: u64,
    /// Exceptions (counted at their requests' start).
    pub exception_num: u64,
    /// Timeouts (counted at their requests' start).
    pub timeout_num: u64,
    /// Downgrades.
    pub downgrade_num: u64,
    /// The most requests in flight at once.
    pub concurrent_num: u64,
}

/// A point's current sliding values (10 s window) and its last whole cycle.
// `repr(C)`: cbindgen makes C's `sds_stats` of it.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    /// Visits in the sliding window.
    pub visit: u64,
    /// Exceptions in the sliding window.
    pub exception: u64,
    /// Timeouts in the sliding window.
    pub timeout: u64,
    /// Downgrades in the sliding window.
    pub downgrade: u64,
    /// Requests holding a concurrency permit now.
    pub concurrent: u64,
    /// The adaptive in-flight limit now (`adaptiveConcurrency`); 0 without one.
    pub adaptive_limit: u64,
    /// The reference RTT the adaptive limit compares with (µs): Vegas's
    /// no-load RTT, Envoy's and Knee's min RTT (0 until measured),
    /// Gradient2's long RTT (its "no-load" RTT); 0 for AIMD.
    pub adaptive_min_rtt_us: u64,
    /// The recent RTT, µs: the last sample's (AIMD, Vegas, Gradient2), the
    /// last window's p50 (Envoy's gradient, Knee).
    pub adaptive_rtt_us: u64,
    /// Gradient2's long RTT (an average over 600 samples), µs; for Envoy's
    /// gradient its min RTT plus the 25 % buffer; for Knee its min RTT /
    /// (1 − h) (the latency it settles at); 0 for AIMD and Vegas.
    pub adaptive_long_rtt_us: u64,
    /// The last whole cycle before `now_ms`'s.
    pub last_cycle: CycleStats,
}

/// Every event a point counted since it was new (its table's life, for a
/// shared table): only ever grows, for metrics' counters.
// `repr(C)`: cbindgen makes C's `sds_totals` of it.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Totals {
    /// Visits (every decision).
    pub visits: u64,
    /// Downgrades, all reasons.
    pub downgrades: u64,
    /// Exceptions.
    pub exceptions: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Downgrades per reason, at `Reason::code() - 1`.
    pub by_reason: [u64; Reason::ALL.len()],
}

/// What the rules decided for one request.
enum Verdict {
    Pass,
    Probe(u16),
    Triggered(Reason),
}

/// One protected operation: counters, strategy and delay.
///
/// Plain data: `repr(C)`, integer atomics and arrays of them only, so any bit
/// pattern is a valid point and all zero is [`Point::new`]. 2 640 bytes,
/// aligned to 8.
///
/// A **cluster point** ([`Point::set_cluster`]) also decides on the other
/// instances' counts that a syncer stores in it ([`Point::store_remote`]):
/// its sliding sums and its token count are local + remote. Concurrency,
/// delays and stats stay local.
#[repr(C)]
pub struct Point {
    counters: Counters,
    max_concurrency: Peak,
    triggers: AtomicU64,
    pub(crate) strategy: StrategyCell,
    pub(crate) delay: Delay,
    in_flight: InFlight,
    /// Downgrades per reason (`code - 1`), since the point was new: only a
    /// downgraded request pays for this add.
    downgrades: [AtomicU64; Reason::ALL.len()],
    /// Non-zero: a cluster point. Next to `in_flight`, which every decision
    /// with a strategy touches, so reading it costs no other cache line.
    cluster: AtomicU32,
    remote: Remote,
    /// Warm-up and pacing of the token-bucket rate.
    shaping: Shaping,
    /// The adaptive in-flight limit (`adaptiveConcurrency`).
    adaptive: AdaptiveLimit,
}

impl Default for Point {
    fn default() -> Point {
        Point::new()
    }
}

impl Point {
    const_fn! {
        /// A point with no strategy and no counts.
        pub fn new() -> Point {
            Point {
                counters: Counters::new(),
                max_concurrency: Peak::new(),
                triggers: AtomicU64::new(0),
                strategy: StrategyCell::new(),
                delay: Delay::new(),
                in_flight: InFlight::new(),
                downgrades: zeroed(),
                cluster: AtomicU32::new(0),
                remote: Remote::new(),
                shaping: Shaping::new(),
                adaptive: AdaptiveLimit::new(),
            }
        }
    }

    /// Replaces the strategy (`None` removes it). An invalid strategy is
    /// rejected whole and the old one stays. Counters and permits in flight
    /// are kept; a delay ends if the new strategy has none.
    pub fn set_strategy(&self, strategy: Option<&Strategy>) -> Result<(), Error> {
        self.set_strategy_as(strategy, &Holder::PRIVATE)
    }

    pub(crate) fn set_strategy_as(
        &self,
        strategy: Option<&Strategy>,
        holder: &Holder<'_>,
    ) -> Result<(), Error> {
        if let Some(s) = strategy {
            s.validate()?;
        }
        let warm_up = |s: Option<Strategy>| {
            s.filter(Strategy::warms_up).map(|s| {
                let rate = s.token_bucket_generated_tokens_in_second;
                (rate, s.warm_up_period_sec, s.cold_factor)
            })
        };
        let old = self.strategy();
        let cools = warm_up(strategy.copied()).is_some_and(|w| Some(w) != warm_up(old));
        let pacing = |s: Option<Strategy>| {
            s.filter(Strategy::paces).map(|s| {
                (
                    s.token_bucket_generated_tokens_in_second,
                    s.max_queueing_time_ms,
                )
            })
        };
        let repaces = pacing(strategy.copied()).is_some_and(|p| Some(p) != pacing(old));
        let params = strategy.and_then(Strategy::adaptive_params);
        let adapts_anew = params.is_some() && params != old.and_then(|s| s.adaptive_params());
        self.delay
            .replace(strategy, || self.strategy.store(strategy, holder), holder);
        if cools {
            // Sentinel builds a cold controller for a new rule.
            self.shaping.cool();
        }
        if repaces {
            self.shaping.restart_pacing();
        }
        if adapts_anew {
            // Another algorithm's words mean nothing to this one.
            self.adaptive.reset();
        }
        Ok(())
    }

    /// The current strategy.
    pub fn strategy(&self) -> Option<Strategy> {
        self.strategy.load()
    }

    /// Counts a request at `now_ms` and decides whether it is downgraded.
    /// Every entry must be passed to [`Point::exit`] exactly once.
    pub fn enter(&self, now_ms: u64, flags: Flags) -> Entry {
        self.enter_as(now_ms, flags, &Holder::PRIVATE, None)
    }

    /// Enters as `holder`, counting a permit taken in `held` (the view's
    /// ledger counter of this point) when there is one.
    pub(crate) fn enter_as(
        &self,
        now_ms: u64,
        flags: Flags,
        holder: &Holder<'_>,
        held: Option<&Held>,
    ) -> Entry {
        // The visit's bucket is also the second's token count; sums are read
        // later, and only those the strategy's rules need.
        let at = self.counters.place(Counters::bucket_of(now_ms));
        let token = self.counters.add(Counter::Visit, at, 1);
        // A strategy without the newer rows is read and decided on by code
        // that has none of theirs (`ROWS` false), and none of their fields
        // is read: the usual decision is the code it was before those rows.
        match self.strategy.load_for_decision() {
            ForDecision::Sds(s) => self.decide::<false>(now_ms, flags, &s, at, token, holder, held),
            ForDecision::WithRows => self.enter_with_rows(now_ms, flags, at, token, holder, held),
            ForDecision::Absent => self.enter_without_strategy(now_ms, at, holder, held),
        }
    }

    /// [`Point::enter_as`] under a strategy with some of the newer rows: read
    /// whole, from the copy current now. Inlined: out of line, the call and
    /// a reading kept on the stack cost the rows 3 to 5 ns.
    #[inline(always)]
    fn enter_with_rows(
        &self,
        now_ms: u64,
        flags: Flags,
        at: Place<'_>,
        token: u64,
        holder: &Holder<'_>,
        held: Option<&Held>,
    ) -> Entry {
        match self.strategy.load() {
            Some(s) => self.decide::<true>(now_ms, flags, &s, at, token, holder, held),
            None => self.enter_without_strategy(now_ms, at, holder, held),
        }
    }

    /// [`Point::enter_as`] without a strategy: a permit, no limit.
    #[inline(never)]
    fn enter_without_strategy(
        &self,
        now_ms: u64,
        at: Place<'_>,
        holder: &Holder<'_>,
        held: Option<&Held>,
    ) -> Entry {
        Entry::started(now_ms, self.try_acquire(-1, at, held, holder))
    }

    /// Takes the permit and decides under strategy `s`; `ROWS`: whether its
    /// newer rows are read at all.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn decide<const ROWS: bool>(
        &self,
        now_ms: u64,
        flags: Flags,
        s: &Strategy,
        at: Place<'_>,
        token: u64,
        holder: &Holder<'_>,
        held: Option<&Held>,
    ) -> Entry {
        let limit = match ROWS && s.adaptive_concurrency >= 0 {
            true => self.adaptive_limit(s.adaptive_fields()),
            false => s.concurrent_threshold,
        };
        let mut entry = Entry::started(now_ms, self.try_acquire(limit, at, held, holder));
        if s.downgrade_rate <= 0 {
            return entry;
        }
        let acquired = entry.holds_permit();
        // One branch: a local point's decision is the code it was before
        // cluster points (`Live<false, _>` never looks at remote counts).
        let (verdict, wait_ms) = match self.is_cluster() {
            false => self.judge_with::<false, ROWS>(now_ms, flags, s, at, token, acquired, holder),
            true => self.judge_cluster::<ROWS>(now_ms, flags, *s, at, token, acquired, holder),
        };
        // A probe returns before the rules: only an entry that is no probe waits.
        entry.probe_generation = wait_ms;
        match verdict {
            Verdict::Pass => {}
            Verdict::Probe(generation) => {
                entry.state |= PROBE;
                entry.probe_generation = generation;
            }
            Verdict::Triggered(reason) => {
                if self.spread(s.downgrade_rate) {
                    self.counters.add(Counter::Downgrade, at, 1);
                    self.downgrades[reason.code() as usize - 1].fetch_add(1, Ordering::Relaxed);
                    entry.state |= DOWNGRADED;
                    entry.reason = Some(reason);
                    entry.probe_generation = 0; // no wait for a fallback
                }
            }
        }
        entry
    }

    /// The verdict and a paced request's wait, read as `Live<CLUSTER, ROWS>`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn judge_with<const CLUSTER: bool, const ROWS: bool>(
        &self,
        now_ms: u64,
        flags: Flags,
        s: &Strategy,
        at: Place<'_>,
        token: u64,
        acquired: bool,
        holder: &Holder<'_>,
    ) -> (Verdict, u16) {
        let reading = Live::<CLUSTER, ROWS>::new(self, now_ms, at, token, acquired);
        let verdict = self.judge(now_ms, flags, s, &reading, holder);
        (verdict, reading.wait_ms.get())
    }

    /// [`Point::judge_with`] for a cluster point, out of line: the private
    /// point's decision is inlined alone and keeps its registers. The
    /// strategy by value: a reference would make the caller keep the whole
    /// strategy on the stack for every decision.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn judge_cluster<const ROWS: bool>(
        &self,
        now_ms: u64,
        flags: Flags,
        s: Strategy,
        at: Place<'_>,
        token: u64,
        acquired: bool,
        holder: &Holder<'_>,
    ) -> (Verdict, u16) {
        self.judge_with::<true, ROWS>(now_ms, flags, &s, at, token, acquired, holder)
    }

    fn judge<R: Reading>(
        &self,
        now_ms: u64,
        flags: Flags,
        s: &Strategy,
        reading: &R,
        holder: &Holder<'_>,
    ) -> Verdict {
        if flags.pressure_test() && s.pressure_test_downgrade == 1 {
            return Verdict::Triggered(Reason::PressureTest);
        }
        if self.delay.active(now_ms) {
            return match s
                .has_probes()
                .then(|| self.delay.take_probe(now_ms))
                .flatten()
            {
                Some(generation) => Verdict::Probe(generation),
                None => Verdict::Triggered(Reason::Delay),
            };
        }
        match first_failure(s, reading) {
            Some(reason) => {
                if s.has_delay() {
                    self.delay.start(now_ms, s, holder);
                }
                Verdict::Triggered(reason)
            }
            None => Verdict::Pass,
        }
    }

    /// Whether this trigger is really downgraded: exactly `rate` of every 100
    /// consecutive triggers, evenly spread (trigger `n` is downgraded iff
    /// `(n * rate) mod 100 < rate`, so the first trigger always is).
    fn spread(&self, rate: i64) -> bool {
        if rate >= 100 {
            return true;
        }
        let n = self.triggers.fetch_add(1, Ordering::Relaxed) % 100;
        (n * rate as u64) % 100 < rate as u64
    }

    /// Settles an entry at `now_ms`: returns its permit, counts its exception
    /// and its timeout at its start second, and settles a probe.
    pub fn exit(&self, entry: &Entry, now_ms: u64, outcome: Outcome) {
        self.exit_with(entry, outcome, || now_ms);
    }

    /// [`Point::exit`] with the exit time asked of `clock` only when it is
    /// used: an ok exit of an entry that is no probe, on a point without
    /// `timeoutThreshold`, only returns its permit. Bindings pass their wall
    /// clock here and skip its cost on most exits.
    pub fn exit_with(&self, entry: &Entry, outcome: Outcome, clock: impl FnOnce() -> u64) {
        self.exit_as(entry, outcome, clock, &Holder::PRIVATE, None);
    }

    /// Exits as `holder`, uncounting the permit from `held` when there is one.
    #[inline]
    pub(crate) fn exit_as(
        &self,
        entry: &Entry,
        outcome: Outcome,
        clock: impl FnOnce() -> u64,
        holder: &Holder<'_>,
        held: Option<&Held>,
    ) {
        if entry.holds_permit() {
            if held.is_some_and(|row| row.get() == 0) {
                // This process holds no permit on the point: the entry was
                // entered by another process (a fork child's inherited
                // copy). Its own process exits it; nothing is counted here.
                return;
            }
            self.release(held, holder);
        }
        // The timeout and whether exits feed an adaptive limit, from one
        // copy; only admitted requests are samples of an adaptive limit.
        let failed = outcome != Outcome::Ok; // abandoned: `settle` tells
        let timeout = match self.strategy.field_for_exit(Field::TimeoutThreshold) {
            ForExit::Sds(timeout) => Some(timeout),
            ForExit::Other { value, adaptive } => match adaptive {
                Some(fields) if entry.holds_permit() => {
                    return self.exit_sampled(entry, clock(), outcome, value, fields, holder);
                }
                _ => value,
            },
        };
        let timeout = timeout.filter(|&t| t > 0);
        if !(failed || timeout.is_some() || entry.is_probe()) {
            return;
        }
        let now_ms = clock();
        let timed_out = timed_out(entry, now_ms, timeout);
        if failed || timed_out || entry.is_probe() {
            self.settle(entry, now_ms, outcome, timed_out, holder);
        }
    }

    /// The rest of an exit at `now_ms` that feeds an adaptive limit: the
    /// exit's counts, then the sample.
    #[inline(never)]
    fn exit_sampled(
        &self,
        entry: &Entry,
        now_ms: u64,
        outcome: Outcome,
        timeout: Option<i64>,
        adaptive_fields: [i64; 4],
        holder: &Holder<'_>,
    ) {
        let timed_out = timed_out(entry, now_ms, timeout.filter(|&t| t > 0));
        let failed = outcome != Outcome::Ok;
        if failed || timed_out || entry.is_probe() {
            self.settle(entry, now_ms, outcome, timed_out, holder);
        }
        // An exit before the request's slot is a wait cut short, and an
        // abandoned request ended when nobody knows: neither time says
        // anything about the load.
        if outcome != Outcome::Abandoned && now_ms >= entry.run_at_ms() {
            self.sample(entry, now_ms, failed || timed_out, adaptive_fields);
        }
    }

    /// The in-flight limit of a strategy with `adaptiveConcurrency`, given
    /// its [`Strategy::adaptive_fields`] (by value, so the decision's
    /// strategy stays in registers).
    #[cold]
    #[inline(never)]
    fn adaptive_limit(&self, fields: [i64; 4]) -> i64 {
        adaptive_params_of(fields).map_or(-1, |p| self.adaptive.limit(&p) as i64)
    }

    /// Feeds an admitted request that ended at `now_ms` to the adaptive
    /// limit: its time from when it could run, the requests in flight while
    /// it ran (itself included), and whether it failed (an exception or a
    /// timeout: the limit's sign of overload).
    #[cold]
    #[inline(never)]
    fn sample(&self, entry: &Entry, now_ms: u64, failed: bool, adaptive_fields: [i64; 4]) {
        let Some(p) = adaptive_params_of(adaptive_fields) else {
            return;
        };
        let rtt_us = now_ms
            .saturating_sub(entry.run_at_ms())
            .saturating_mul(1000);
        let in_flight = self.in_flight.count().saturating_add(1);
        self.adaptive
            .on_sample(&p, now_ms, rtt_us, in_flight, failed);
    }

    /// The adaptive limit and what it was found from; `None` when the
    /// strategy has no `adaptiveConcurrency`.
    pub fn adaptive_stats(&self) -> Option<AdaptiveStats> {
        let p = self.strategy()?.adaptive_params()?;
        Some(self.adaptive.stats(&p))
    }

    /// What an exit at `now_ms` counts besides its permit: its exception,
    /// its timeout, a probe's outcome. Out of line: the usual exit (ok, in
    /// time, no probe) runs none of it.
    #[cold]
    #[inline(never)]
    fn settle(
        &self,
        entry: &Entry,
        now_ms: u64,
        outcome: Outcome,
        timed_out: bool,
        holder: &Holder<'_>,
    ) {
        // An abandoned request never said it succeeded; a downgraded one ran
        // nothing that could fail. When it ended is unknown: no timeout.
        let failed = match outcome {
            Outcome::Ok => false,
            Outcome::Error => true,
            Outcome::Abandoned => !entry.downgraded(),
        };
        let timed_out = timed_out && outcome != Outcome::Abandoned;
        if failed {
            self.record(Counter::Exception, entry.start_ms, now_ms);
        }
        if timed_out {
            self.record(Counter::Timeout, entry.start_ms, now_ms);
        }
        if entry.is_probe() {
            let strategy = self.strategy.load();
            self.delay.settle(
                entry.probe_generation,
                now_ms,
                outcome != Outcome::Ok,
                strategy.as_ref(),
                holder,
            );
        }
    }

    /// The sliding values at `now_ms` and the last whole cycle before it.
    pub fn stats(&self, now_ms: u64) -> Stats {
        let bucket = Counters::bucket_of(now_ms);
        let now = self.counters.sums(bucket);
        let last = self.counters.last_whole_cycle(bucket);
        let of = |sums: &Sums, c: Counter| sums[c as usize];
        let adaptive = self.adaptive_stats();
        Stats {
            visit: of(&now, Counter::Visit),
            exception: of(&now, Counter::Exception),
            timeout: of(&now, Counter::Timeout),
            downgrade: of(&now, Counter::Downgrade),
            concurrent: self.in_flight() as u64,
            adaptive_limit: adaptive.map_or(0, |a| a.limit as u64),
            adaptive_min_rtt_us: adaptive.map_or(0, |a| a.min_rtt_us),
            adaptive_rtt_us: adaptive.map_or(0, |a| a.short_rtt_us),
            adaptive_long_rtt_us: adaptive.map_or(0, |a| a.long_rtt_us),
            last_cycle: CycleStats {
                visit_num: of(&last, Counter::Visit),
                exception_num: of(&last, Counter::Exception),
                timeout_num: of(&last, Counter::Timeout),
                downgrade_num: of(&last, Counter::Downgrade),
                concurrent_num: self.max_concurrency.last_whole_cycle(now_ms),
            },
        }
    }

    /// Every event counted since the point was new: only ever grows (see
    /// counters.rs on the two gaps a reader absorbs).
    pub fn totals(&self) -> Totals {
        self.totals_of(self.counters.totals())
    }

    /// [`Point::totals`] read only while no count is between the ring and
    /// the retired totals, within `tries` looks (loom's models check that
    /// such a read never goes back).
    #[cfg(loom)]
    pub fn settled_totals(&self, tries: u32) -> Option<Totals> {
        self.counters
            .settled_totals(tries)
            .map(|sums| self.totals_of(sums))
    }

    fn totals_of(&self, sums: Sums) -> Totals {
        Totals {
            visits: sums[Counter::Visit as usize],
            downgrades: sums[Counter::Downgrade as usize],
            exceptions: sums[Counter::Exception as usize],
            timeouts: sums[Counter::Timeout as usize],
            by_reason: core::array::from_fn(|i| self.downgrades[i].load(Ordering::Relaxed)),
        }
    }

    /// Counts one event of a request that started at `start_ms`, recorded at
    /// `now_ms`: in the start bucket while the ring holds it, else at
    /// `now_ms`, so a request slower than the whole ring is still counted.
    fn record(&self, counter: Counter, start_ms: u64, now_ms: u64) {
        let (start, now) = (Counters::bucket_of(start_ms), Counters::bucket_of(now_ms));
        self.counters.add_late(counter, start, now);
    }

    /// Makes this point a cluster point (`true`) or a local one: a cluster
    /// point's decisions add the remote counts a syncer stores. Counts and
    /// the strategy are kept.
    pub fn set_cluster(&self, on: bool) {
        self.cluster.store(u32::from(on), Ordering::Relaxed);
    }

    /// Whether this is a cluster point.
    #[inline]
    pub fn is_cluster(&self) -> bool {
        self.cluster.load(Ordering::Relaxed) != 0
    }

    /// This point's own counts in second `second` (`now_ms / 1000`): all
    /// zero once the ring of [`crate::RING_SECONDS`] no longer holds it. A
    /// syncer pushes their growth.
    pub fn local_counts(&self, second: u64) -> SecondCounts {
        SecondCounts::from_sums(self.counters.second(second))
    }

    /// Stores the other instances' counts of second `second`, replacing the
    /// previous ones. A syncer stores each second of the window it read,
    /// then calls [`Point::publish_remote`]. Seconds outside
    /// `now - 9 ..= now + 2` would take a slot of the window: not stored.
    pub fn store_remote(&self, now_second: u64, second: u64, counts: &SecondCounts) {
        let oldest = now_second.saturating_sub(crate::WINDOW_SECONDS - 1);
        if (oldest..=now_second + 2).contains(&second) {
            self.remote.store(second, counts.sums());
        }
    }

    /// Publishes the stored remote counts for the decisions of second
    /// `now_second` and the next, so that a decision reads four words.
    /// A syncer calls it every period, even when the store is unreachable.
    pub fn publish_remote(&self, now_second: u64) {
        self.remote.publish(now_second);
    }

    /// The other instances' counts of second `second`, as stored.
    pub fn remote_counts(&self, second: u64) -> SecondCounts {
        SecondCounts::from_sums(self.remote.second(second))
    }

    /// The other instances' sums over the sliding window of `now_ms`, as a
    /// decision of a cluster point adds them.
    pub fn remote_sums(&self, now_ms: u64) -> SecondCounts {
        SecondCounts::from_sums(self.remote.sums(Counters::bucket_of(now_ms)))
    }

    /// The most requests in flight at once during the last whole 10 s
    /// cycle before `now_ms`'s ([`CycleStats::concurrent_num`]).
    pub fn max_in_flight_last_cycle(&self, now_ms: u64) -> u64 {
        self.max_concurrency.last_whole_cycle(now_ms)
    }

    /// Requests holding a permit now.
    pub fn in_flight(&self) -> u32 {
        self.in_flight.count()
    }

    /// Whether a delay is running at `now_ms`.
    pub fn delayed(&self, now_ms: u64) -> bool {
        self.delay.active(now_ms)
    }

    /// Takes a permit at second `second` unless `limit` (negative: none) is
    /// reached. Every attempt, taken or refused, raises the cycle's maximum in flight to the
    /// number it saw, as the reference's `concurrentAcquire` does. `ledger`
    /// counts the permit too (ledger.rs, in_flight.rs).
    #[inline(always)]
    fn try_acquire(
        &self,
        limit: i64,
        second: Place<'_>,
        ledger: Option<&Held>,
        holder: &Holder<'_>,
    ) -> bool {
        let (taken, seen) = match self.in_flight.acquire(limit, ledger, holder) {
            Ok(count) => (true, count),
            Err(count) => (false, count),
        };
        self.max_concurrency
            .raise(second.slot, second.lap, seen as u64);
        taken
    }

    /// Returns a permit; never below zero, even for a forged entry. `ledger`
    /// uncounts it after `in_flight` does.
    #[inline]
    fn release(&self, ledger: Option<&Held>, holder: &Holder<'_>) {
        self.in_flight.release(ledger, holder);
    }

    /// Makes the point's count of permits in flight the sum of its counters
    /// in `rows` (in_flight.rs); `holder` holds the table's recount word.
    pub(crate) fn recount(&self, index: usize, rows: &[&[Held]], holder: &Holder<'_>) -> u32 {
        self.in_flight.recount(index, rows, holder)
    }
}

/// The reading of one decision: the sliding sums are read on first use, all
/// four at once. `CLUSTER`: a cluster point's, which adds the remote counts.
struct Live<'a, const CLUSTER: bool, const ROWS: bool> {
    point: &'a Point,
    now_ms: u64,
    /// The 1 s bucket of the decision.
    at: Place<'a>,
    token: u64,
    acquired: bool,
    sums: Cell<Option<Sums>>,
    /// A paced request's wait, set by the token-bucket rule.
    wait_ms: Cell<u16>,
}

impl<'a, const CLUSTER: bool, const ROWS: bool> Live<'a, CLUSTER, ROWS> {
    #[inline]
    fn new(point: &'a Point, now_ms: u64, at: Place<'a>, token: u64, acquired: bool) -> Self {
        Live {
            point,
            now_ms,
            at,
            token,
            acquired,
            sums: Cell::new(None),
            wait_ms: Cell::new(0),
        }
    }

    #[inline(always)]
    fn sum(&self, counter: Counter) -> u64 {
        let sums = match self.sums.get() {
            Some(sums) => sums,
            None => self.read_sums(),
        };
        sums[counter as usize]
    }

    /// The four sliding sums, read once per decision. A method, not a
    /// closure: a closure given to `unwrap_or_else` is not always inlined,
    /// and then `Live` leaves registers for the stack on every decision.
    #[inline(always)]
    fn read_sums(&self) -> Sums {
        let local = self.point.counters.sums_at(self.at);
        let sums = match CLUSTER {
            true => with_remote(local, &self.point.remote, self.at.b),
            false => local,
        };
        self.sums.set(Some(sums));
        sums
    }
}

/// Whether `entry`, ending at `now_ms`, took longer than `timeout` ms,
/// measured from when it could run. Its start comes first, so the time
/// since the start decides the usual exit alone.
#[inline(always)]
fn timed_out(entry: &Entry, now_ms: u64, timeout: Option<i64>) -> bool {
    let slower = |from: u64, t: i64| now_ms.saturating_sub(from) > t as u64;
    timeout.is_some_and(|t| slower(entry.start_ms, t) && slower(entry.run_at_ms(), t))
}

/// `local` plus the remote sums of second `b`.
fn with_remote(mut local: Sums, remote: &Remote, b: u64) -> Sums {
    for (sum, other) in local.iter_mut().zip(remote.sums(b)) {
        *sum += other;
    }
    local
}

impl<const CLUSTER: bool, const ROWS: bool> Reading for Live<'_, CLUSTER, ROWS> {
    const NEW_ROWS: bool = ROWS;

    #[inline(always)]
    fn visit(&self) -> u64 {
        self.sum(Counter::Visit)
    }
    #[inline(always)]
    fn token(&self) -> u64 {
        match CLUSTER {
            true => self.token + self.point.remote.visits(self.at.b),
            false => self.token,
        }
    }
    #[inline(always)]
    fn acquired(&self) -> bool {
        self.acquired
    }
    #[inline(always)]
    fn downgrade(&self) -> u64 {
        self.sum(Counter::Downgrade)
    }
    #[inline(always)]
    fn exception(&self) -> u64 {
        self.sum(Counter::Exception)
    }
    #[inline(always)]
    fn timeout(&self) -> u64 {
        self.sum(Counter::Timeout)
    }
    #[cold]
    #[inline(never)]
    fn shaping_fails(&self, shape: Shape) -> bool {
        // The last second's admitted requests, this process's own (Sentinel's
        // previousPassQps).
        let passed = match self.at.b.checked_sub(1) {
            Some(b) => {
                let last = self.point.counters.second(b);
                last[Counter::Visit as usize].saturating_sub(last[Counter::Downgrade as usize])
            }
            None => 0,
        };
        let mut wait_ms = 0;
        let fails =
            self.point
                .shaping
                .fails(shape, self.now_ms, self.token(), passed, &mut wait_ms);
        self.wait_ms.set(wait_ms);
        fails
    }
}
