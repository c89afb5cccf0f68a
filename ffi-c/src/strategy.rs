//! `sds_strategy`: the core's `Strategy` as a plain C struct, and the JSON
//! reader (the core's `Strategy::from_json`, so every binding accepts the
//! same texts).

use std::os::raw::c_char;

use sds_core::{ErrorCode, Strategy};

use crate::args::bytes;
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;

/// A point's thresholds, field for field the SDS strategy (snake_case of its
/// JSON names). Any negative value turns a rule off. Start from
/// `sds_strategy_default()` and change the fields you need.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct sds_strategy {
    /// `visitThreshold`: max requests in the 10 s sliding window; 0 closes the point.
    pub visit_threshold: i64,
    /// `concurrentThreshold`: max requests in flight; 0 closes the point.
    pub concurrent_threshold: i64,
    /// `exceptionThreshold`: max exceptions in the sliding window.
    pub exception_threshold: i64,
    /// `exceptionRateThreshold`: max percent of exceptions (0..=100).
    pub exception_rate_threshold: i64,
    /// `exceptionRateStart`: the rate is judged once visits exceed this.
    pub exception_rate_start: i64,
    /// `timeoutThreshold`: a request slower than this many ms is a timeout.
    pub timeout_threshold: i64,
    /// `timeoutCountThreshold`: max timeouts in the sliding window.
    pub timeout_count_threshold: i64,
    /// `tokenBucketGeneratedTokensInSecond`: tokens per second.
    pub token_bucket_generated_tokens_in_second: i64,
    /// `tokenBucketSize`: bucket capacity; negative means equal to the rate.
    pub token_bucket_size: i64,
    /// `delayTime`: ms a triggered downgrade keeps going; >= 10000 when set.
    pub delay_time: i64,
    /// `retryInterval`: ms between probes in a delay; >= 1000 and <= delay_time when > 0.
    pub retry_interval: i64,
    /// `downgradeRate`: percent of triggered requests really downgraded; <= 0 never.
    pub downgrade_rate: i64,
    /// `pressureTestDowngrade`: 1 downgrades load-test traffic (SDS_FLAG_PRESSURE_TEST).
    pub pressure_test_downgrade: i64,
}

// The conversions destructure every field of the core's `Strategy`, so a
// field added to the core does not build until it is here too.
impl From<&sds_strategy> for Strategy {
    fn from(s: &sds_strategy) -> Strategy {
        let sds_strategy {
            visit_threshold,
            concurrent_threshold,
            exception_threshold,
            exception_rate_threshold,
            exception_rate_start,
            timeout_threshold,
            timeout_count_threshold,
            token_bucket_generated_tokens_in_second,
            token_bucket_size,
            delay_time,
            retry_interval,
            downgrade_rate,
            pressure_test_downgrade,
        } = *s;
        Strategy {
            visit_threshold,
            concurrent_threshold,
            exception_threshold,
            exception_rate_threshold,
            exception_rate_start,
            timeout_threshold,
            timeout_count_threshold,
            token_bucket_generated_tokens_in_second,
            token_bucket_size,
            delay_time,
            retry_interval,
            downgrade_rate,
            pressure_test_downgrade,
        }
    }
}

impl From<&Strategy> for sds_strategy {
    fn from(s: &Strategy) -> sds_strategy {
        let Strategy {
            visit_threshold,
            concurrent_threshold,
            exception_threshold,
            exception_rate_threshold,
            exception_rate_start,
            timeout_threshold,
            timeout_count_threshold,
            token_bucket_generated_tokens_in_second,
            token_bucket_size,
            delay_time,
            retry_interval,
            downgrade_rate,
            pressure_test_downgrade,
        } = *s;
        sds_strategy {
            visit_threshold,
            concurrent_threshold,
            exception_threshold,
            exception_rate_threshold,
            exception_rate_start,
            timeout_threshold,
            timeout_count_threshold,
            token_bucket_generated_tokens_in_second,
            token_bucket_size,
            delay_time,
            retry_interval,
            downgrade_rate,
            pressure_test_downgrade,
        }
    }
}

/// The reference's defaults: every rule off, `downgrade_rate` 100. Infallible.
#[no_mangle]
pub extern "C" fn sds_strategy_default() -> sds_strategy {
    boundary_or((&Strategy::DEFAULT).into(), || (&Strategy::DEFAULT).into())
}

/// Parses `json_len` bytes of SDS strategy JSON (a flat object of SDS JSON
/// names with integer values, e.g. `{"visitThreshold": 10}`; a `"point"` key
/// is skipped), starting from the defaults, validates it and writes it to
/// `*out`.
///
/// Returns `SDS_RESULT_INVALID_JSON` for malformed or non-UTF-8 text,
/// `SDS_RESULT_UNKNOWN_FIELD` for another key, `SDS_RESULT_INVALID_STRATEGY`
/// for a value its rule rejects, `SDS_RESULT_NULL_ARGUMENT` for a NULL
/// pointer. `sds_last_error_message` then names the field or the offset.
///
/// # Safety
/// `json` must point to `json_len` readable bytes; `out` to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn sds_strategy_from_json(
    json: *const c_char,
    json_len: usize,
    out: *mut sds_strategy,
) -> sds_result {
    boundary(|| {
        let text = bytes(json, json_len, "json")?;
        let out = crate::args::out(out, "out")?;
        let strategy = parse(text)?;
        out.write((&strategy).into());
        Ok(())
    })
}

/// The strategy in `text`, through the core's parser.
pub(crate) fn parse(text: &[u8]) -> Result<Strategy, Failure> {
    let text = core::str::from_utf8(text).map_err(|e| {
        Failure::new(
            ErrorCode::InvalidJson,
            &format_args!("JSON text is not UTF-8 (byte {})", e.valid_up_to()),
        )
    })?;
    Strategy::from_json(text).map_err(|e| Failure::new(e.code(), &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::Field;

    #[test]
    fn every_core_field_survives_the_round_trip() {
        let mut core = Strategy::DEFAULT;
        for (i, field) in Field::ALL.iter().enumerate() {
            core.set(*field, 1000 + i as i64);
        }
        let c: sds_strategy = (&core).into();
        assert_eq!(Strategy::from(&c), core);
        assert_eq!(
            core::mem::size_of::<sds_strategy>(),
            8 * Field::ALL.len(),
            "sds_strategy has exactly one int64_t per core field"
        );
    }

    #[test]
    fn default_is_the_core_default() {
        assert_eq!(Strategy::from(&sds_strategy_default()), Strategy::DEFAULT);
    }
}
