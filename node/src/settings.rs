//! The background services' options in and statuses out (`service.rs`),
//! through `sds-settings`: one conversion from any
//! JavaScript value to a setting's [`Value`], one from any status's fields
//! to a plain object. No setting is known here: which keys exist, what each
//! takes, the defaults and every message are the service crates'
//! (`AgentConfig::from_settings`, `Config::from_settings`).

use napi::bindgen_prelude::{Array, BigInt, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};
use sds_settings::{camel_case, FieldValue, Fields, Value};

use crate::arguments;
use crate::entry_bits::MAX_SAFE_INTEGER;
use crate::errors::{internal, SdsError};

/// The (key, value) pairs of `options`, in its key order: its own
/// enumerable string keys, or none when it is `undefined`.
pub fn pairs(options: Unknown, what: &str) -> Result<Vec<(String, Value)>, SdsError> {
    if arguments::is_undefined(&options) {
        return Ok(Vec::new());
    }
    let object = arguments::object(options, what)?;
    arguments::own_entries(&object, what)?
        .into_iter()
        .map(|(key, value)| {
            let value = setting_value(value, &key)?;
            Ok((key, value))
        })
        .collect()
}

/// `value` as a setting's value, whatever the setting: `undefined` and
/// `null` are Null (the default), a number an Int when it is a safe
/// integer, else a Float; a string must be well-formed UTF-16 (a lone
/// surrogate has no UTF-8 form, and replacing it would merge two point
/// names); an array a List; anything else Other, named for the message.
fn setting_value(value: Unknown, what: &str) -> Result<Value, SdsError> {
    // SAFETY (each cast): the value has the type matched.
    Ok(match value.get_type().map_err(internal)? {
        ValueType::Undefined | ValueType::Null => Value::Null,
        ValueType::Boolean => Value::Bool(unsafe { value.cast::<bool>() }.map_err(internal)?),
        ValueType::Number => number(unsafe { value.cast::<f64>() }.map_err(internal)?),
        ValueType::BigInt => big_int(&unsafe { value.cast::<BigInt>() }.map_err(internal)?),
        ValueType::String => Value::Text(arguments::text(value, what)?),
        ValueType::Object if matches!(value.is_array(), Ok(true)) => {
            let array = unsafe { value.cast::<Array>() }.map_err(internal)?;
            let items = (0..array.len()).map(|i| {
                // A hole reads as undefined.
                match array.get::<Unknown>(i).map_err(internal)? {
                    Some(item) => setting_value(item, &format!("{what}[{i}]")),
                    None => Ok(Value::Null),
                }
            });
            Value::List(items.collect::<Result<_, _>>()?)
        }
        ValueType::Object => Value::Other(constructor_name(value).unwrap_or("object".into())),
        ValueType::Function => Value::Other("function".into()),
        ValueType::Symbol => Value::Other("symbol".into()),
        _ => Value::Other("external".into()),
    })
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER {
        Value::Int(x as i128)
    } else {
        // NaN, the infinities, fractions and integers beyond 2^53 (which
        // the crates still take as whole milliseconds below 2^64).
        Value::Float(x)
    }
}

/// An Int; beyond `i128` the nearest Float, which the messages quote and
/// which, as seconds, saturates as it should.
fn big_int(big: &BigInt) -> Value {
    // Words, most significant first.
    let words = big.words.iter().rev();
    let whole = |n: i128, &w: &u64| n.checked_mul(1 << 64)?.checked_add(w.into());
    if let Some(n) = words.clone().try_fold(0, whole) {
        return Value::Int(if big.sign_bit { -n } else { n });
    }
    let x = words.fold(0.0, |x, &w| x * 2f64.powi(64) + w as f64);
    Value::Float(if big.sign_bit { -x } else { x })
}

/// `value.constructor.name` (`Buffer`, `URL`, `Map`, `Object`); `None`
/// for an object without one (`Object.create(null)`).
fn constructor_name(value: Unknown) -> Option<String> {
    let property = |of: Unknown, name: &str, kind: ValueType| {
        // SAFETY: `of` is an object (or a function, which is one).
        let found: Unknown = unsafe { of.cast::<Object>() }
            .ok()?
            .get_named_property(name)
            .ok()?;
        (found.get_type().ok()? == kind).then_some(found)
    };
    let constructor = property(value, "constructor", ValueType::Function)?;
    let name = property(constructor, "name", ValueType::String)?;
    // SAFETY: the value is a string.
    unsafe { name.cast::<String>() }
        .ok()
        .filter(|name| !name.is_empty())
}

/// `status` as a plain object: each field under its camelCase name, in the
/// crate's order; counts as numbers (exact up to 2^53, the nearest number
/// beyond), text as strings, no text as `null`.
pub fn status_object<'env, F: Fields>(
    env: &'env Env,
    status: &F,
) -> Result<Object<'env>, SdsError> {
    let mut object = Object::new(env).map_err(internal)?;
    for (name, value) in F::NAMES.iter().zip(status.values()) {
        let key = camel_case(name);
        match value {
            FieldValue::Bool(b) => object.set(key, b),
            FieldValue::U64(n) => object.set(key, n as f64),
            FieldValue::I64(n) => object.set(key, n as f64),
            FieldValue::Text(text) => object.set(key, text),
            FieldValue::OptionalText(text) => object.set(key, text),
        }
        .map_err(internal)?;
    }
    Ok(object)
}
