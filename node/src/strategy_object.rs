//! A strategy from a JavaScript object, and back. Each own enumerable
//! string key and its value go to the core's `StrategyBuilder` as they are
//! (the value sorted by [`arguments::value`]), so an object gets the verdict
//! and the message of the same JSON text.

use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, Object, Unknown};
use napi::{sys, Env, JsValue};
use sds_core::{Field, Strategy, StrategyBuilder};

use crate::arguments;
use crate::errors::{from_strategy, invalid_argument, SdsError};

fn check(status: sys::napi_status, what: &str) -> Result<(), SdsError> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(invalid_argument(format!("strategy: {what} failed")))
    }
}

/// The strategy these keys describe, starting from the defaults; validated.
pub fn strategy_from_object(object: &Object) -> Result<Strategy, SdsError> {
    let env = object.value().env;
    let object = object.value().value;
    let mut keys = ptr::null_mut();
    let mut len = 0;
    // SAFETY: `object` is a live object of `env`; every value made here
    // lives in the caller's handle scope.
    unsafe {
        check(
            sys::napi_get_all_property_names(
                env,
                object,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut keys,
            ),
            "listing its keys",
        )?;
        check(
            sys::napi_get_array_length(env, keys, &mut len),
            "listing its keys",
        )?;
    }
    let mut builder = StrategyBuilder::new();
    for i in 0..len {
        let mut key = ptr::null_mut();
        let mut value = ptr::null_mut();
        // SAFETY: as above; `i` is below the array's length.
        let (key_text, value) = unsafe {
            check(
                sys::napi_get_element(env, keys, i, &mut key),
                "reading a key",
            )?;
            check(
                sys::napi_get_property(env, object, key, &mut value),
                "reading a value",
            )?;
            (
                String::from_napi_value(env, key).map_err(|e| invalid_argument(e.reason))?,
                Unknown::from_raw_unchecked(env, value),
            )
        };
        builder
            .set(&key_text, arguments::value(&value))
            .map_err(from_strategy)?;
    }
    builder.build().map_err(from_strategy)
}

/// `strategy` as an object of SDS JSON names. A value beyond 2^53 comes back
/// as the nearest JavaScript number.
pub fn strategy_to_object<'env>(env: &'env Env, strategy: &Strategy) -> napi::Result<Object<'env>> {
    let mut object = Object::new(env)?;
    for &field in Field::ALL {
        object.set(field.json_name(), strategy.get(field) as f64)?;
    }
    Ok(object)
}
