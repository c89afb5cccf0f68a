//! A strategy from a JavaScript object: each own key goes through the core's
//! `Strategy::set_key`, so the field names (and the message naming an
//! unknown one) live only in the core.

use napi::bindgen_prelude::Object;
use sds_core::{Error, ErrorCode, Field, KeyText, Rule, Strategy, StrategyError, POINT_KEY};

use crate::errors::{from_core, from_json, js_error, SdsError};
use crate::time::MAX_SAFE_INTEGER;

fn not_an_integer(key: &str) -> napi::Error<&'static str> {
    match Field::from_json_name(key) {
        Some(field) => from_core(Error::InvalidStrategy {
            field,
            rule: Rule::NotAnInteger,
        }),
        None => from_json(StrategyError::UnknownField(KeyText::new(key))),
    }
}

/// The strategy these keys describe, starting from the defaults; validated.
/// The `point` key of SDS's strategy objects is skipped, as in JSON.
pub fn strategy_from_object(object: &Object) -> Result<Strategy, SdsError> {
    let mut strategy = Strategy::DEFAULT;
    let keys = Object::keys(object).map_err(|e| js_error(ErrorCode::InvalidArgument, e.reason))?;
    for key in keys {
        if key == POINT_KEY {
            continue;
        }
        let value = match object.get::<f64>(&key) {
            Ok(Some(v)) if v.fract() == 0.0 && v.abs() <= MAX_SAFE_INTEGER => v as i64,
            _ => return Err(not_an_integer(&key)),
        };
        strategy.set_key(&key, value).map_err(from_json)?;
    }
    strategy.validate().map_err(from_core)?;
    Ok(strategy)
}
