//! A strategy from a JavaScript object, and back. Each own enumerable
//! string key and its value go to the core's `StrategyBuilder` as they are
//! (the value sorted by [`arguments::value`]), so an object gets the verdict
//! and the message of the same JSON text.

use napi::bindgen_prelude::Object;
use napi::Env;
use sds_core::{Field, Strategy, StrategyBuilder};

use crate::arguments;
use crate::errors::{from_strategy, SdsError};

/// The strategy these keys describe, starting from the defaults; validated.
pub fn strategy_from_object(object: &Object) -> Result<Strategy, SdsError> {
    let mut builder = StrategyBuilder::new();
    for (key, value) in arguments::own_entries(object, "strategy")? {
        builder
            .set(&key, arguments::value(&value))
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
