//! `Strategy`: the thresholds of one point (SEMANTICS.md §3), the one table of
//! their SDS JSON names, and `validate()`.

use crate::adaptive::{AdaptiveParams, Algorithm};
use crate::error::{Error, Rule};

/// The thresholds of one point, field for field the SDS strategy (snake_case
/// of its JSON names). Any negative value turns a rule off. Start from the
/// defaults (`sds_strategy_default()` in C) and change the fields you need.
// cbindgen makes C's `sds_strategy` of it (`repr(C)`: one `int64_t` per
// field in the order of `Field::ALL`). It reads no macro's output, so the
// fields are written out here; `fields!` checks them against its table.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Strategy {
    /// `visitThreshold`: max requests in the 10 s sliding window; 0 closes the point.
    pub visit_threshold: i64,
    /// `concurrentThreshold`: max requests in flight; 0 closes the point.
    pub concurrent_threshold: i64,
    /// `exceptionThreshold`: max exceptions in the sliding window.
    pub exception_threshold: i64,
    /// `exceptionRateThreshold`: max percent of exceptions among the admitted requests (0..=100).
    pub exception_rate_threshold: i64,
    /// `exceptionRateStart`: the rate is judged only once the window's visits exceed this.
    pub exception_rate_start: i64,
    /// `timeoutThreshold`: a request slower than this many ms is a timeout.
    pub timeout_threshold: i64,
    /// `timeoutCountThreshold`: max timeouts in the sliding window.
    pub timeout_count_threshold: i64,
    /// `tokenBucketGeneratedTokensInSecond`: tokens generated per second.
    pub token_bucket_generated_tokens_in_second: i64,
    /// `tokenBucketSize`: bucket capacity; negative means equal to the rate (no burst).
    pub token_bucket_size: i64,
    /// `delayTime`: ms a triggered downgrade keeps going; >= 10000 when set.
    pub delay_time: i64,
    /// `retryInterval`: ms between probes in a delay; >= 1000 and <= delay_time when > 0.
    pub retry_interval: i64,
    /// `downgradeRate`: percent of triggered requests really downgraded; <= 0 never.
    pub downgrade_rate: i64,
    /// `pressureTestDowngrade`: 1 downgrades load-test traffic (SDS_FLAG_PRESSURE_TEST).
    pub pressure_test_downgrade: i64,
    /// `slowCallRateThreshold`: max percent of admitted requests in the sliding
    /// window slower than `timeoutThreshold` (0..=100; needs `timeoutThreshold`).
    pub slow_call_rate_threshold: i64,
    /// `slowCallRateStart`: the slow-call rate is judged only once the window's visits exceed this.
    pub slow_call_rate_start: i64,
    /// `warmUpPeriodSec`: the token-bucket rate climbs from cold to full over this many seconds.
    pub warm_up_period_sec: i64,
    /// `coldFactor`: a cold point admits the rate divided by this (> 1).
    pub cold_factor: i64,
    /// `maxQueueingTimeMs`: paces the token-bucket rate; a request waits at most this long (0..=65535).
    pub max_queueing_time_ms: i64,
    /// `adaptiveConcurrency`: finds the in-flight limit from latency: 1 AIMD,
    /// 2 VEGAS, 3 GRADIENT2, 4 GRADIENT (Envoy's), 5 KNEE (ours); replaces
    /// `concurrentThreshold`.
    pub adaptive_concurrency: i64,
    /// `adaptiveMinLimit`: the lowest adaptive limit; negative: the algorithm's default.
    pub adaptive_min_limit: i64,
    /// `adaptiveMaxLimit`: the highest adaptive limit; negative: the algorithm's default.
    pub adaptive_max_limit: i64,
    /// `adaptiveInitialLimit`: the limit before any sample; negative: the algorithm's default.
    pub adaptive_initial_limit: i64,
}

macro_rules! fields {
    ($($variant:ident, $field:ident, $json:literal, $default:literal;)*) => {
        /// A strategy field. The SDS JSON name, the snake_case name and the
        /// default all come from this one table, which every binding reads.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Field {
            $(#[doc = concat!("`", $json, "`: [`Strategy::", stringify!($field), "`].")] $variant,)*
        }

        impl Field {
            /// Every field, in the order of SEMANTICS.md §3; a field's
            /// position here is its [`Field::index`].
            pub const ALL: &'static [Field] = &[$(Field::$variant,)*];

            /// How many fields there are.
            pub const COUNT: usize = Field::ALL.len();

            /// The name SDS's admin API and `SdsStrategy` use.
            pub const fn json_name(self) -> &'static str {
                match self { $(Field::$variant => $json,)* }
            }

            /// The snake_case name (Python keywords, Rust fields).
            pub const fn snake_name(self) -> &'static str {
                match self { $(Field::$variant => stringify!($field),)* }
            }

            /// The reference's default.
            pub const fn default_value(self) -> i64 {
                match self { $(Field::$variant => $default,)* }
            }
        }

        // `DEFAULT` names every field of the struct, so the table and the
        // struct hold the same fields; this keeps them in the same order.
        const _: () = {
            $(assert!(core::mem::offset_of!(Strategy, $field) == 8 * Field::$variant.index());)*
            assert!(core::mem::size_of::<Strategy>() == 8 * Field::COUNT);
        };

impl Strategy {
            /// The reference's defaults: every rule off, `downgradeRate` 100.
            pub const DEFAULT: Strategy = Strategy { $($field: $default,)* };

            /// The value of `field`.
            pub const fn get(&self, field: Field) -> i64 {
                match field { $(Field::$variant => self.$field,)* }
            }

            /// A strategy of the values `value(i)` gives for each field
            /// index: written out field by field, so that a reader copying a
            /// strategy out of atomics makes straight-line loads, not a loop
            /// over a `match`.
            #[inline(always)]
            pub(crate) fn from_fn(value: impl Fn(usize) -> i64) -> Strategy {
                Strategy { $($field: value(Field::$variant as usize),)* }
            }

            /// Sets `field` (checked as a whole by [`Strategy::validate`]).
            pub fn set(&mut self, field: Field, value: i64) {
                match field { $(Field::$variant => self.$field = value,)* }
            }
        }
    };
}

fields! {
    VisitThreshold, visit_threshold, "visitThreshold", -1;
    ConcurrentThreshold, concurrent_threshold, "concurrentThreshold", -1;
    ExceptionThreshold, exception_threshold, "exceptionThreshold", -1;
    ExceptionRateThreshold, exception_rate_threshold, "exceptionRateThreshold", -1;
    ExceptionRateStart, exception_rate_start, "exceptionRateStart", 0;
    TimeoutThreshold, timeout_threshold, "timeoutThreshold", -1;
    TimeoutCountThreshold, timeout_count_threshold, "timeoutCountThreshold", -1;
    TokenBucketGeneratedTokensInSecond, token_bucket_generated_tokens_in_second,
        "tokenBucketGeneratedTokensInSecond", -1;
    TokenBucketSize, token_bucket_size, "tokenBucketSize", -1;
    DelayTime, delay_time, "delayTime", -1;
    RetryInterval, retry_interval, "retryInterval", -1;
    DowngradeRate, downgrade_rate, "downgradeRate", 100;
    PressureTestDowngrade, pressure_test_downgrade, "pressureTestDowngrade", 0;
    SlowCallRateThreshold, slow_call_rate_threshold, "slowCallRateThreshold", -1;
    SlowCallRateStart, slow_call_rate_start, "slowCallRateStart", 0;
    WarmUpPeriodSec, warm_up_period_sec, "warmUpPeriodSec", -1;
    ColdFactor, cold_factor, "coldFactor", 3;
    MaxQueueingTimeMs, max_queueing_time_ms, "maxQueueingTimeMs", -1;
    AdaptiveConcurrency, adaptive_concurrency, "adaptiveConcurrency", -1;
    AdaptiveMinLimit, adaptive_min_limit, "adaptiveMinLimit", -1;
    AdaptiveMaxLimit, adaptive_max_limit, "adaptiveMaxLimit", -1;
    AdaptiveInitialLimit, adaptive_initial_limit, "adaptiveInitialLimit", -1;
}

/// The JSON key naming the point in SDS's strategy objects. It is not a
/// threshold: bindings that read whole SDS strategies skip it.
pub const POINT_KEY: &str = "point";

/// The shortest `delayTime` that may be configured.
pub const MIN_DELAY_MS: i64 = 10_000;
/// The shortest positive `retryInterval` that may be configured.
pub const MIN_RETRY_MS: i64 = 1_000;
/// The longest `maxQueueingTimeMs`: a wait fits the 16 bits a packed entry
/// keeps for it (a request queued for over a minute is a timeout anyway).
pub const MAX_QUEUEING_MS: i64 = 65_535;
/// How many fields are SDS's own (`visitThreshold` to
/// `pressureTestDowngrade`); the rest are the newer rows, off by default.
pub(crate) const SDS_FIELDS: usize = 13;
const _: () = assert!(Field::SlowCallRateThreshold.index() == SDS_FIELDS);

/// The highest adaptive limit that may be configured.
pub const MAX_ADAPTIVE_LIMIT: i64 = 1_000_000;

impl Field {
    /// The field's position in [`Field::ALL`] (and in a binding's array of
    /// values, such as Java's `long[]`).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The field at this position of [`Field::ALL`].
    pub const fn from_index(index: usize) -> Option<Field> {
        if index < Field::COUNT {
            Some(Field::ALL[index])
        } else {
            None
        }
    }

    /// The field with this SDS JSON name.
    pub fn from_json_name(name: &str) -> Option<Field> {
        Field::ALL.iter().copied().find(|f| f.json_name() == name)
    }

    /// The field with this snake_case name.
    pub fn from_snake_name(name: &str) -> Option<Field> {
        Field::ALL.iter().copied().find(|f| f.snake_name() == name)
    }
}

/// [`Strategy::adaptive_params`] of its [`Strategy::adaptive_fields`].
pub(crate) fn adaptive_params_of([code, min, max, initial]: [i64; 4]) -> Option<AdaptiveParams> {
    let algorithm = Algorithm::from_code(code)?;
    let mut p = AdaptiveParams::defaults(algorithm);
    let given = |v: i64, default: u32| match v {
        v if v < 0 => default,
        v => v.min(MAX_ADAPTIVE_LIMIT) as u32,
    };
    p.min_limit = given(min, p.min_limit);
    p.max_limit = given(max, p.max_limit);
    // A default initial limit outside bounds the user narrowed starts at their edge.
    p.initial_limit = match initial {
        v if v < 0 => p
            .initial_limit
            .clamp(p.min_limit, p.max_limit.max(p.min_limit)),
        v => given(v, p.initial_limit),
    };
    Some(p)
}

impl Default for Strategy {
    fn default() -> Strategy {
        Strategy::DEFAULT
    }
}

impl Strategy {
    /// Checks the rules that tie values together; the first broken one is
    /// returned, naming its field.
    pub fn validate(&self) -> Result<(), Error> {
        let fail = |field, rule| Err(Error::InvalidStrategy { field, rule });
        let percent = [
            (Field::ExceptionRateThreshold, self.exception_rate_threshold),
            (Field::DowngradeRate, self.downgrade_rate),
            (Field::SlowCallRateThreshold, self.slow_call_rate_threshold),
        ];
        for (field, value) in percent {
            if value > 100 {
                return fail(field, Rule::PercentOutOfRange);
            }
        }
        if !(0..=1).contains(&self.pressure_test_downgrade) {
            return fail(Field::PressureTestDowngrade, Rule::NotAFlag);
        }
        if (0..MIN_DELAY_MS).contains(&self.delay_time) {
            return fail(Field::DelayTime, Rule::DelayTooShort);
        }
        if self.retry_interval > 0 {
            if self.retry_interval < MIN_RETRY_MS {
                return fail(Field::RetryInterval, Rule::RetryTooShort);
            }
            if self.retry_interval > self.delay_time {
                return fail(Field::RetryInterval, Rule::RetryBeyondDelay);
            }
        }
        self.validate_shaping()
    }

    /// The rules of the rows added after SDS's own: slow calls, warm-up, pacing.
    fn validate_shaping(&self) -> Result<(), Error> {
        let fail = |field, rule| Err(Error::InvalidStrategy { field, rule });
        if self.slow_call_rate_threshold >= 0 && self.timeout_threshold <= 0 {
            return fail(Field::SlowCallRateThreshold, Rule::SlowCallWithoutTimeout);
        }
        if self.cold_factor <= 1 {
            return fail(Field::ColdFactor, Rule::ColdFactorTooSmall);
        }
        if self.warm_up_period_sec == 0 {
            return fail(Field::WarmUpPeriodSec, Rule::ZeroWarmUp);
        }
        if self.max_queueing_time_ms > MAX_QUEUEING_MS {
            return fail(Field::MaxQueueingTimeMs, Rule::QueueTooLong);
        }
        let rate = self.token_bucket_generated_tokens_in_second;
        let shaping = [
            (Field::WarmUpPeriodSec, self.warms_up(), 1),
            (Field::MaxQueueingTimeMs, self.paces(), 0),
        ];
        for (field, on, least_rate) in shaping {
            if on && rate < least_rate {
                return fail(field, Rule::ShapingWithoutRate);
            }
        }
        if (self.warms_up() || self.paces()) && self.token_bucket_size > rate {
            return fail(Field::TokenBucketSize, Rule::BurstWithShaping);
        }
        self.validate_adaptive()
    }

    /// The adaptive concurrency row: a known algorithm, and limits that
    /// make sense together (`1 <= min <= initial <= max`).
    fn validate_adaptive(&self) -> Result<(), Error> {
        let fail = |field, rule| Err(Error::InvalidStrategy { field, rule });
        let limits = [
            (Field::AdaptiveMinLimit, self.adaptive_min_limit),
            (Field::AdaptiveMaxLimit, self.adaptive_max_limit),
            (Field::AdaptiveInitialLimit, self.adaptive_initial_limit),
        ];
        if self.adaptive_concurrency < 0 {
            return match limits.iter().find(|(_, v)| *v >= 0) {
                Some(&(field, _)) => fail(field, Rule::NeedsAdaptive),
                None => Ok(()),
            };
        }
        if Algorithm::from_code(self.adaptive_concurrency).is_none() {
            return fail(Field::AdaptiveConcurrency, Rule::UnknownAlgorithm);
        }
        if self.concurrent_threshold >= 0 {
            return fail(Field::ConcurrentThreshold, Rule::ThresholdWithAdaptive);
        }
        for (field, value) in limits {
            if value == 0 {
                return fail(field, Rule::LimitBelowOne);
            }
            if value > MAX_ADAPTIVE_LIMIT {
                return fail(field, Rule::LimitTooLarge);
            }
        }
        let Some(p) = self.adaptive_params() else {
            return Ok(());
        };
        if p.max_limit < p.min_limit {
            return fail(Field::AdaptiveMaxLimit, Rule::MaxBelowMin);
        }
        if !(p.min_limit..=p.max_limit).contains(&p.initial_limit) {
            return fail(Field::AdaptiveInitialLimit, Rule::InitialOutsideLimits);
        }
        Ok(())
    }

    /// The adaptive limit's algorithm and bounds (each negative field takes
    /// the algorithm's default); `None` when the row is off.
    pub fn adaptive_params(&self) -> Option<AdaptiveParams> {
        adaptive_params_of(self.adaptive_fields())
    }

    /// `adaptiveConcurrency` and its three limits, by value: what a decision
    /// passes out of line instead of a reference to the whole strategy.
    #[inline(always)]
    pub(crate) const fn adaptive_fields(&self) -> [i64; 4] {
        [
            self.adaptive_concurrency,
            self.adaptive_min_limit,
            self.adaptive_max_limit,
            self.adaptive_initial_limit,
        ]
    }

    /// Whether any row beyond SDS's own is on: slow-call rate, warm-up,
    /// pacing, adaptive concurrency.
    pub const fn has_new_rows(&self) -> bool {
        self.slow_call_rate_threshold >= 0
            || self.warms_up()
            || self.paces()
            || self.adaptive_concurrency >= 0
    }

    /// Whether the token-bucket rate warms up (`warmUpPeriodSec` > 0).
    pub const fn warms_up(&self) -> bool {
        self.warm_up_period_sec > 0
    }

    /// Whether the token-bucket rate is paced (`maxQueueingTimeMs` >= 0).
    pub const fn paces(&self) -> bool {
        self.max_queueing_time_ms >= 0
    }

    /// Whether a triggered downgrade starts a delay.
    pub const fn has_delay(&self) -> bool {
        self.delay_time >= MIN_DELAY_MS
    }

    /// Whether a delay lets probes through.
    pub const fn has_probes(&self) -> bool {
        self.retry_interval > 0
    }
}
