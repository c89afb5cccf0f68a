//! `io.sdsnative.Strategy`'s natives. A Java `Strategy` is a `long[]` of the
//! field values in the order of [`Field::ALL`]; every name, default, parse
//! and rule comes from the core.

use jni::objects::{JLongArray, JString};
use jni::refs::Reference;
use jni::sys::{jboolean, jlong};
use jni::Env;
use sds_core::{ErrorCode, Field, Strategy, StrategyBuilder, Value};

use crate::boundary::{setup_native, Fail};

/// A strategy as its Java `long[]`.
fn to_java<'l>(env: &mut Env<'l>, strategy: &Strategy) -> Result<JLongArray<'l>, Fail> {
    let values: Vec<i64> = Field::ALL.iter().map(|&f| strategy.get(f)).collect();
    let array = env.new_long_array(values.len())?;
    array.set_region(env, 0, &values)?;
    Ok(array)
}

/// The values of a Java `long[]` of one value per field.
fn field_values(env: &Env, values: &JLongArray) -> Result<Vec<i64>, Fail> {
    if values.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    let len = values.len(env)?;
    if len != Field::ALL.len() {
        return Err(Fail::Sds(
            ErrorCode::InvalidArgument,
            format!("a strategy holds {} values, got {len}", Field::ALL.len()),
        ));
    }
    let mut buf = vec![0i64; len];
    values.get_region(env, 0, &mut buf)?;
    Ok(buf)
}

/// The strategy a Java `long[]` holds (not validated here: a Java
/// `Strategy` holds only values the core built).
pub(crate) fn strategy_from_values(env: &Env, values: &JLongArray) -> Result<Strategy, Fail> {
    let mut strategy = Strategy::DEFAULT;
    for (&field, value) in Field::ALL.iter().zip(field_values(env, values)?) {
        strategy.set(field, value);
    }
    Ok(strategy)
}

/// A Java string's text; `NULL_ARGUMENT` for null.
pub(crate) fn text_of(env: &Env, text: &JString) -> Result<String, Fail> {
    if text.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    Ok(text.try_to_string(env)?)
}

setup_native! {
    /// The reference's defaults.
    fn Java_io_sdsnative_Native_strategyDefaults(env) -> JLongArray<'l> {
        to_java(env, &Strategy::DEFAULT)
    }

    /// Parses and validates SDS strategy JSON with the core's parser.
    fn Java_io_sdsnative_Native_strategyFromJson(env, json: JString<'l>) -> JLongArray<'l> {
        let text = text_of(env, &json)?;
        to_java(env, &Strategy::from_json(&text)?)
    }

    /// The strategy of a Java builder's values (one per field, in the order of
    /// [`Field::ALL`]): each goes through the core's [`StrategyBuilder`], which
    /// gives every value its verdict and validates the whole.
    fn Java_io_sdsnative_Native_strategyBuild(env, values: JLongArray<'l>) -> JLongArray<'l> {
        let mut builder = StrategyBuilder::new();
        for (&field, value) in Field::ALL.iter().zip(field_values(env, &values)?) {
            builder.set_field(field, Value::from(value))?;
        }
        to_java(env, &builder.build()?)
    }

    /// The core's verdict on `key` = `value` (or on `key` alone, as a lookup,
    /// when `given` is false) where `key` is no field name Java knows: throws
    /// the core's error for it (an unknown field, a `"point"` that is not a
    /// string). Only called on that error path.
    fn Java_io_sdsnative_Native_strategyKeyVerdict(
        env, key: JString<'l>, value: jlong, given: jboolean,
    ) {
        let key = text_of(env, &key)?;
        let value = if given {
            Value::from(value)
        } else {
            Value::Null
        };
        Ok(StrategyBuilder::new().set(&key, value)?)
    }
}
