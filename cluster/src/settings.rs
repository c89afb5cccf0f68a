//! The cluster sync's config from (key, value) pairs: the one path every
//! binding takes (`sds_settings`), so one input gets one verdict everywhere.

use sds_settings::{Kind, Parsed, Setting, Value};

use crate::config::{Config, DEFAULT_MAX_BACKOFF_MS, DEFAULT_SYNC_MS, DEFAULT_TIMEOUT_MS};
use crate::Error;

/// Every setting of a cluster sync: its own, then the TLS files.
pub const SETTINGS: &[Setting] = &sds_settings::with_tls_files::<10>(&[
    Setting::new("urls", Kind::TextList),
    Setting::new("points", Kind::TextList),
    Setting::new("redis_cluster", Kind::Bool),
    Setting::millis("sync_ms", "sync_interval"),
    Setting::millis("timeout_ms", "timeout"),
    Setting::millis("max_backoff_ms", "max_backoff"),
    Setting::new("key_prefix", Kind::OptionalText),
]);

impl Config {
    /// A config from `pairs` (see [`SETTINGS`]); absent settings take the
    /// defaults of [`Config::new`]. A key or a value of the wrong type is
    /// [`Error::InvalidConfig`] here; the values themselves are judged by
    /// [`crate::Cluster::start`], as for a config built field by field.
    pub fn from_settings(
        pairs: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Config, Error> {
        let parsed = Parsed::new(SETTINGS, pairs).map_err(|e| Error::InvalidConfig(e.0))?;
        let mut config = Config::new("");
        config.urls = parsed.list("urls");
        config.points = parsed.list("points");
        config.redis_cluster = parsed.flag("redis_cluster", false);
        config.sync_ms = parsed.millis("sync_ms", DEFAULT_SYNC_MS);
        config.timeout_ms = parsed.millis("timeout_ms", DEFAULT_TIMEOUT_MS);
        config.max_backoff_ms = parsed.millis("max_backoff_ms", DEFAULT_MAX_BACKOFF_MS);
        if let Some(prefix) = parsed.optional_text("key_prefix") {
            config.key_prefix = prefix;
        }
        [
            config.tls_ca_file,
            config.tls_cert_file,
            config.tls_key_file,
        ] = parsed.tls_files();
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn every_setting_reaches_its_field() {
        let pairs = [
            ("urls", Value::text("redis://127.0.0.1:7000")),
            (
                "points",
                Value::List(vec![Value::text("a"), Value::text("b")]),
            ),
            ("redisCluster", Value::Bool(true)),
            ("sync_interval", Value::Float(0.05)),
            ("timeoutMs", Value::Int(300)),
            ("max_backoff_ms", Value::Int(2000)),
            ("keyPrefix", Value::text("svc")),
            ("tls_ca_file", Value::text("/ca.pem")),
            ("tls_cert_file", Value::text("/c.pem")),
            ("tlsKeyFile", Value::text("/k.pem")),
        ];
        let config = Config::from_settings(pairs.map(|(k, v)| (k.to_string(), v))).unwrap();
        assert_eq!(config.urls, ["redis://127.0.0.1:7000"]);
        assert_eq!(config.points, ["a", "b"]);
        assert!(config.redis_cluster);
        assert_eq!(
            (config.sync_ms, config.timeout_ms, config.max_backoff_ms),
            (50, 300, 2000)
        );
        assert_eq!(config.key_prefix, "svc");
        let tls = [
            config.tls_ca_file,
            config.tls_cert_file,
            config.tls_key_file,
        ];
        assert_eq!(
            tls,
            ["/ca.pem", "/c.pem", "/k.pem"].map(|p| Some(PathBuf::from(p)))
        );
    }

    #[test]
    fn absent_settings_are_the_defaults_of_new() {
        let mut expected = Config::new("");
        expected.urls.clear();
        assert_eq!(Config::from_settings([]).unwrap(), expected);
    }

    #[test]
    fn a_wrong_type_is_an_invalid_config() {
        let err = Config::from_settings([("points".to_string(), Value::Int(3))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid cluster configuration: points must be text or a list of text, not 3"
        );
    }
}
