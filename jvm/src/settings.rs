//! The settings a Java config carries (`String[] keys`, `Object[] values`,
//! as its builder collected them) as the `(key, Value)` pairs a service's
//! `from_settings` takes. One conversion for every setting, by the value's
//! Java type: what each setting takes, and the message for a value that
//! does not fit, are the service's (`sds-settings`).

use jni::objects::{JCharArray, JObject, JObjectArray, JString};
use jni::refs::Reference;
use jni::strings::JNIStr;
use jni::{jni_sig, jni_str, Env};
use sds_settings::Value;

use crate::boundary::Fail;

/// The pairs `keys[i]`, `values[i]` (arrays of one length), in their order.
pub(crate) fn pairs(
    env: &mut Env,
    keys: &JObjectArray,
    values: &JObjectArray,
) -> Result<Vec<(String, Value)>, Fail> {
    let mut pairs = Vec::new();
    for i in 0..keys.len(env)? {
        let pair = env.with_local_frame(4, |env| -> Result<_, Fail> {
            let key = keys.get_element(env, i)?;
            let key = env.cast_local::<JString>(key)?;
            let value = values.get_element(env, i)?;
            Ok((key.try_to_string(env)?, value_of(env, &value)?))
        })?;
        pairs.push(pair);
    }
    Ok(pairs)
}

/// The boxed integers Java has besides `BigInteger`.
const INTEGERS: [&JNIStr; 4] = [
    jni_str!("java/lang/Long"),
    jni_str!("java/lang/Integer"),
    jni_str!("java/lang/Short"),
    jni_str!("java/lang/Byte"),
];

/// One Java value as a setting's value: null; a `Boolean`; a `Long`,
/// `Integer`, `Short`, `Byte` or `BigInteger` (an integer), a `Double` or
/// `Float`; a `CharSequence` (a `String`) or a `Path` as text; a `List` or
/// an `Object[]` as a list; anything else by its type's name.
fn value_of(env: &mut Env, object: &JObject) -> Result<Value, Fail> {
    if object.is_null() {
        return Ok(Value::Null);
    }
    env.with_local_frame(8, |env| -> Result<Value, Fail> {
        if is(env, object, jni_str!("java/lang/Boolean"))? {
            let flag = env.call_method(object, jni_str!("booleanValue"), jni_sig!("()Z"), &[])?;
            return Ok(Value::Bool(flag.z()?));
        }
        for class in INTEGERS {
            if is(env, object, class)? {
                let n = env.call_method(object, jni_str!("longValue"), jni_sig!("()J"), &[])?;
                return Ok(Value::Int(n.j()?.into()));
            }
        }
        if is(env, object, jni_str!("java/math/BigInteger"))? {
            let digits = text_of(env, object)?.unwrap_or_default();
            // Beyond i128: as a float, refused (or as seconds, "never") and quoted as any other.
            return Ok(match digits.parse::<i128>() {
                Ok(n) => Value::Int(n),
                Err(_) => Value::Float(digits.parse().unwrap_or(f64::NAN)),
            });
        }
        if is(env, object, jni_str!("java/lang/Double"))?
            || is(env, object, jni_str!("java/lang/Float"))?
        {
            let x = env.call_method(object, jni_str!("doubleValue"), jni_sig!("()D"), &[])?;
            return Ok(Value::Float(x.d()?));
        }
        let path = is(env, object, jni_str!("java/nio/file/Path"))?;
        // A path of another file system (a zip) names no file the native side can open.
        if (path && on_default_file_system(env, object)?)
            || is(env, object, jni_str!("java/lang/CharSequence"))?
        {
            if let Some(text) = text_of(env, object)? {
                return Ok(Value::Text(text));
            }
            // A lone surrogate: the text has no UTF-8 form.
            return Ok(Value::Other(
                type_name(env, object)? + " with a lone surrogate",
            ));
        }
        if is(env, object, jni_str!("java/util/List"))? {
            let array = env.call_method(
                object,
                jni_str!("toArray"),
                jni_sig!("()[Ljava/lang/Object;"),
                &[],
            )?;
            return list_of(env, &env.cast_local::<JObjectArray>(array.l()?)?);
        }
        if is(env, object, jni_str!("[Ljava/lang/Object;"))? {
            let array = env.new_cast_local_ref::<JObjectArray>(object)?;
            return list_of(env, &array);
        }
        Ok(Value::Other(type_name(env, object)?))
    })
}

fn list_of(env: &mut Env, array: &JObjectArray) -> Result<Value, Fail> {
    let mut items = Vec::new();
    for i in 0..array.len(env)? {
        let item = env.with_local_frame(2, |env| -> Result<_, Fail> {
            let element = array.get_element(env, i)?;
            value_of(env, &element)
        })?;
        items.push(item);
    }
    Ok(Value::List(items))
}

fn is(env: &mut Env, object: &JObject, class: &JNIStr) -> Result<bool, Fail> {
    Ok(env.is_instance_of(object, class)?)
}

/// `object.toString()` from its UTF-16 units; `None` when they are not
/// valid UTF-16 (JNI's own conversion would replace a lone surrogate).
fn text_of(env: &mut Env, object: &JObject) -> Result<Option<String>, Fail> {
    let text = env.call_method(
        object,
        jni_str!("toString"),
        jni_sig!("()Ljava/lang/String;"),
        &[],
    )?;
    let text = text.l()?;
    let chars = env.call_method(&text, jni_str!("toCharArray"), jni_sig!("()[C"), &[])?;
    let chars = env.cast_local::<JCharArray>(chars.l()?)?;
    let mut units = vec![0u16; chars.len(env)?];
    chars.get_region(env, 0, &mut units)?;
    Ok(String::from_utf16(&units).ok())
}

fn on_default_file_system(env: &mut Env, path: &JObject) -> Result<bool, Fail> {
    let sig = jni_sig!("()Ljava/nio/file/FileSystem;");
    let own = env
        .call_method(path, jni_str!("getFileSystem"), &sig, &[])?
        .l()?;
    let class = jni_str!("java/nio/file/FileSystems");
    let default = env
        .call_static_method(class, jni_str!("getDefault"), &sig, &[])?
        .l()?;
    Ok(env.is_same_object(&own, &default)?)
}

/// Java's name for the object's type (`java.util.HashMap`, `long[]`).
fn type_name(env: &mut Env, object: &JObject) -> Result<String, Fail> {
    let class = env.get_object_class(object)?;
    let sig = jni_sig!("()Ljava/lang/String;");
    let name = env
        .call_method(&class, jni_str!("getTypeName"), sig, &[])?
        .l()?;
    Ok(env.cast_local::<JString>(name)?.try_to_string(env)?)
}
