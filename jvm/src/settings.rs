//! The settings a Java config carries, as the `(key, Value)` pairs a
//! service's `from_settings` takes. `ServiceConfig.encoded()` writes them as
//! one `String[]`: each key, then its value in tagged tokens, typed by its
//! Java type there. What each setting takes, and the message for a value
//! that does not fit, are the service's (`sds-settings`).

use jni::objects::{JObjectArray, JString};
use jni::Env;
use sds_settings::Value;

use crate::boundary::Fail;

/// The pairs of `tokens`, in their order.
pub(crate) fn pairs(env: &mut Env, tokens: &JObjectArray) -> Result<Vec<(String, Value)>, Fail> {
    let mut texts = Vec::new();
    for i in 0..tokens.len(env)? {
        let text = env.with_local_frame(2, |env| -> Result<_, Fail> {
            let token = tokens.get_element(env, i)?;
            Ok(env.cast_local::<JString>(token)?.try_to_string(env)?)
        })?;
        texts.push(text);
    }
    let mut texts = texts.into_iter();
    let mut pairs = Vec::new();
    while let Some(key) = texts.next() {
        pairs.push((key, value(&mut texts)));
    }
    Ok(pairs)
}

/// One value from its tokens: `n` null, `b` and `true` or `false`, `i` and
/// an integer's digits, `f` and a `double` as Java writes it, `t` and text,
/// `o` and the name of a type no setting takes, `l` and a count, then that
/// many values (a list).
fn value(tokens: &mut impl Iterator<Item = String>) -> Value {
    let token = tokens.next().unwrap_or_default();
    let (tag, rest) = (token.get(..1).unwrap_or(""), token.get(1..).unwrap_or(""));
    let float = |digits: &str| Value::Float(digits.parse().unwrap_or(f64::NAN));
    match tag {
        "b" => Value::Bool(rest == "true"),
        // Beyond i128 (a BigInteger): as a float, refused (or as seconds,
        // "never") and quoted as any other.
        "i" => rest.parse().map_or_else(|_| float(rest), Value::Int),
        "f" => float(rest),
        "t" => Value::Text(rest.to_string()),
        "o" => Value::Other(rest.to_string()),
        "l" => Value::List(
            (0..rest.parse().unwrap_or(0))
                .map(|_| value(tokens))
                .collect(),
        ),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(tokens: &[&str]) -> Vec<Value> {
        let mut tokens = tokens.iter().map(|t| t.to_string()).peekable();
        let mut values = Vec::new();
        while tokens.peek().is_some() {
            values.push(value(&mut tokens));
        }
        values
    }

    #[test]
    fn tokens_read_as_the_values_java_wrote() {
        let read = values(&[
            "n",
            "btrue",
            "i-3",
            "f1.0E10",
            "fInfinity",
            "fNaN",
            "ta,b",
            "ojava.util.HashMap",
        ]);
        assert_eq!(
            read[..5],
            [
                Value::Null,
                Value::Bool(true),
                Value::Int(-3),
                Value::Float(1e10),
                Value::Float(f64::INFINITY)
            ]
        );
        assert!(matches!(read[5], Value::Float(x) if x.is_nan()));
        assert_eq!(
            read[6..],
            [
                Value::Text("a,b".into()),
                Value::Other("java.util.HashMap".into())
            ]
        );
        let big = "1".repeat(40);
        assert_eq!(
            values(&[&format!("i{big}")]),
            [Value::Float(big.parse().unwrap())]
        );
        let nested = values(&["l2", "t", "l1", "i7"]);
        let inner = Value::List(vec![Value::Int(7)]);
        assert_eq!(
            nested,
            [Value::List(vec![Value::Text(String::new()), inner])]
        );
    }
}
