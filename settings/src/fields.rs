//! Statuses and results as one table of (name, value) fields: a binding
//! builds its idiom (a named tuple, a plain object, a Java record, a C
//! struct) from the names and the values in order, with no code per field.

/// One field's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    /// True or false.
    Bool(bool),
    /// A count, a time in ms or µs.
    U64(u64),
    /// A signed number (a version that may be -1).
    I64(i64),
    /// Text (empty when there is none, unless the field is optional).
    Text(String),
    /// Text or none.
    OptionalText(Option<String>),
}

/// A status or result that leaves Rust as fields.
pub trait Fields {
    /// The fields' names, snake_case, in the order of [`Fields::values`].
    const NAMES: &'static [&'static str];
    /// The values, one per name.
    fn values(&self) -> Vec<FieldValue>;
}

/// `name` in camelCase: `last_pull_ms` -> `lastPullMs` (Node, Java).
pub fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A value that is one field: what [`fields_struct!`](crate::fields_struct) calls per field.
pub trait ToField {
    /// The field's value.
    fn to_field(&self) -> FieldValue;
}

impl ToField for bool {
    fn to_field(&self) -> FieldValue {
        FieldValue::Bool(*self)
    }
}

impl ToField for u64 {
    fn to_field(&self) -> FieldValue {
        FieldValue::U64(*self)
    }
}

impl ToField for usize {
    fn to_field(&self) -> FieldValue {
        FieldValue::U64(*self as u64)
    }
}

impl ToField for i64 {
    fn to_field(&self) -> FieldValue {
        FieldValue::I64(*self)
    }
}

impl ToField for String {
    fn to_field(&self) -> FieldValue {
        FieldValue::Text(self.clone())
    }
}

impl ToField for Option<String> {
    fn to_field(&self) -> FieldValue {
        FieldValue::OptionalText(self.clone())
    }
}

/// Declares a struct and its [`Fields`] from one list of fields, so the
/// names bindings see can never drift from the struct: attributes and doc
/// comments are kept as written.
#[macro_export]
macro_rules! fields_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$field_meta])* $field_vis $field: $ty ),*
        }

        impl $crate::Fields for $name {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            fn values(&self) -> ::std::vec::Vec<$crate::FieldValue> {
                ::std::vec![$($crate::ToField::to_field(&self.$field)),*]
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_joins_the_words() {
        assert_eq!(camel_case("last_pull_ms"), "lastPullMs");
        assert_eq!(camel_case("ip"), "ip");
        assert_eq!(camel_case("tls_ca_file"), "tlsCaFile");
    }

    crate::fields_struct! {
        /// A sample status.
        #[derive(Debug, Default)]
        struct Sample {
            /// A flag.
            on: bool,
            count: u64,
            version: i64,
            text: String,
            error: Option<String>,
            points: usize,
        }
    }

    #[test]
    fn a_fields_struct_names_its_fields_in_order_with_their_values() {
        let sample = Sample {
            on: true,
            count: 3,
            version: -1,
            text: "t".into(),
            error: None,
            points: 2,
        };
        assert_eq!(
            Sample::NAMES,
            ["on", "count", "version", "text", "error", "points"]
        );
        assert_eq!(
            sample.values(),
            [
                FieldValue::Bool(true),
                FieldValue::U64(3),
                FieldValue::I64(-1),
                FieldValue::Text("t".into()),
                FieldValue::OptionalText(None),
                FieldValue::U64(2),
            ]
        );
    }
}
