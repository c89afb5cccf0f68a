//! One path from each language's values to a service's configuration.
//!
//! A binding turns what its caller gave (keyword arguments, an options
//! object, builder calls, a C struct) into `(key, Value)` pairs and hands
//! them to the service (`AgentConfig::from_settings`,
//! `Config::from_settings`), which checks them against its table of
//! [`Setting`]s here. So every language gets the same verdict and the same
//! message for one input, and a new setting is declared once.
//!
//! Statuses leave Rust the other way, as [`Fields`]: names in one table and
//! values in that order, which each binding turns into its idiom; a
//! running service is read and stopped through [`Service`], one trait for
//! both.

#![forbid(unsafe_code)]

/// A public error that is its message and nothing else: `Display` writes
/// the message. Declared before the modules that use it.
macro_rules! message_error {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(pub String);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::error::Error for $name {}
    };
}

mod fields;
pub mod json;
mod key_rule;
mod parse;
mod service;

pub use fields::{camel_case, FieldValue, Fields, ToField};
pub use key_rule::{key_rule, key_rule_json, KeyRuleTextError};
pub use parse::{Parsed, SettingsError};
pub use service::Service;

/// A setting's value as a binding's language gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// None, null, undefined, a null pointer: the setting's default.
    Null,
    /// A boolean (Python's `True` is a boolean here, not an integer).
    Bool(bool),
    /// An integer of any size the language has.
    Int(i128),
    /// A floating-point number (a JavaScript number that is not an integer).
    Float(f64),
    /// Text (a path too: the binding hands it over as text).
    Text(String),
    /// A list (a Python list or tuple, a JavaScript array, a Java list).
    List(Vec<Value>),
    /// A value of a type no setting takes, by the language's name for its
    /// type (`dict`, `object`, `java.util.Map`): for the message only.
    Other(String),
}

impl Value {
    /// [`Value::Text`] from anything that makes a `String`.
    pub fn text(text: impl Into<String>) -> Value {
        Value::Text(text.into())
    }
}

/// What a setting takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text; absent or null is the empty text (the service says whether
    /// it may be empty).
    Text,
    /// Text, or absent / null for the service's default.
    OptionalText,
    /// A file's path as text, or absent / null for none.
    Path,
    /// Whole milliseconds (0 to `u64::MAX`), or absent / null for the
    /// default; also given in seconds under [`Setting::seconds`].
    Millis,
    /// True or false, or absent / null for the default.
    Bool,
    /// A list of text, or one text as a list of one; absent / null: empty.
    TextList,
}

/// One setting of a service.
#[derive(Copy, Clone, Debug)]
pub struct Setting {
    /// Its name, snake_case (Python, C); its camelCase spelling
    /// ([`camel_case`]) is taken too (Node, Java).
    pub name: &'static str,
    /// What it takes.
    pub kind: Kind,
    /// For [`Kind::Millis`]: the name under which it is given in seconds
    /// (any finite number at least 0, rounded to the millisecond), as
    /// Python's APIs take time.
    pub seconds: Option<&'static str>,
}

/// The settings of the TLS files both services read (PEM), in this order:
/// the CA that verifies the servers, then the client certificate and key
/// shown to them (mutual TLS). [`Parsed::tls_files`] reads them.
pub const TLS_FILES: [Setting; 3] = [
    Setting::new("tls_ca_file", Kind::Path),
    Setting::new("tls_cert_file", Kind::Path),
    Setting::new("tls_key_file", Kind::Path),
];

/// A service's table: its own `settings`, then [`TLS_FILES`]. `N` is the
/// whole table's length, checked when the constant is built.
pub const fn with_tls_files<const N: usize>(settings: &[Setting]) -> [Setting; N] {
    assert!(
        settings.len() + TLS_FILES.len() == N,
        "N is the count of the settings plus 3"
    );
    let mut table = [TLS_FILES[0]; N];
    let mut i = 0;
    while i < N {
        table[i] = if i < settings.len() {
            settings[i]
        } else {
            TLS_FILES[i - settings.len()]
        };
        i += 1;
    }
    table
}

impl Setting {
    /// A setting without a seconds spelling.
    pub const fn new(name: &'static str, kind: Kind) -> Setting {
        Setting {
            name,
            kind,
            seconds: None,
        }
    }

    /// A [`Kind::Millis`] setting also given in seconds as `seconds`.
    pub const fn millis(name: &'static str, seconds: &'static str) -> Setting {
        Setting {
            name,
            kind: Kind::Millis,
            seconds: Some(seconds),
        }
    }
}
