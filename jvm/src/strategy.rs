//! `io.sdsnative.Strategy`'s natives. A Java `Strategy` is a `long[]` of the
//! field values in the order of [`Field::ALL`]; every name, default, parse
//! and rule comes from the core.

use jni::objects::{JClass, JLongArray, JString};
use jni::refs::Reference;
use jni::sys::jlong;
use jni::{Env, EnvUnowned};
use sds_core::{ErrorCode, Field, Strategy};

use crate::boundary::{setup, Fail};

fn values_of(strategy: &Strategy) -> Vec<i64> {
    Field::ALL.iter().map(|&f| strategy.get(f)).collect()
}

fn to_java<'l>(env: &mut Env<'l>, strategy: &Strategy) -> Result<JLongArray<'l>, Fail> {
    let values = values_of(strategy);
    let array = env.new_long_array(values.len())?;
    array.set_region(env, 0, &values)?;
    Ok(array)
}

/// The strategy a Java `long[]` holds (not validated here).
pub(crate) fn strategy_from_values(env: &Env, values: &JLongArray) -> Result<Strategy, Fail> {
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
    let mut strategy = Strategy::DEFAULT;
    for (&field, value) in Field::ALL.iter().zip(buf) {
        strategy.set(field, value);
    }
    Ok(strategy)
}

fn text_of(env: &Env, text: &JString) -> Result<String, Fail> {
    if text.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    Ok(text.try_to_string(env)?)
}

/// The reference's defaults.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_strategyDefaults<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JLongArray<'l> {
    setup(&mut env, |env| to_java(env, &Strategy::DEFAULT))
}

/// Parses and validates SDS strategy JSON with the core's parser.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_strategyFromJson<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    json: JString<'l>,
) -> JLongArray<'l> {
    setup(&mut env, |env| {
        let text = text_of(env, &json)?;
        let strategy =
            Strategy::from_json(&text).map_err(|e| Fail::Sds(e.code(), e.to_string()))?;
        to_java(env, &strategy)
    })
}

/// Sets the field with SDS JSON name `name` in `values`, in place.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_strategySet<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    values: JLongArray<'l>,
    name: JString<'l>,
    value: jlong,
) {
    setup(&mut env, |env| {
        let mut strategy = strategy_from_values(env, &values)?;
        let name = text_of(env, &name)?;
        strategy
            .set_json(&name, value)
            .map_err(|e| Fail::Sds(e.code(), format!("{}: \"{name}\"", e.code().description())))?;
        values.set_region(env, 0, &values_of(&strategy))?;
        Ok(())
    })
}

/// Checks the strategy's rules; throws naming the first broken one.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_strategyValidate<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    values: JLongArray<'l>,
) {
    setup(&mut env, |env| {
        Ok(strategy_from_values(env, &values)?.validate()?)
    })
}
