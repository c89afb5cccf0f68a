//! The agent's config from (key, value) pairs: the one path every binding
//! takes (`sds_settings`), so one input gets one verdict everywhere.

use sds_settings::{Kind, Parsed, Setting, Value};

use crate::config::{AgentConfig, StartError, DEFAULT_PULL_INTERVAL_MS, DEFAULT_TIMEOUT_MS};

/// Every setting of the agent: its own, then the TLS files. The clock and
/// the log are not settings: a binding supplies its own log callback.
pub const SETTINGS: &[Setting] = &sds_settings::with_tls_files::<10>(&[
    Setting::new("servers", Kind::Text),
    Setting::new("app_group", Kind::Text),
    Setting::new("app_name", Kind::Text),
    Setting::new("ip", Kind::OptionalText),
    Setting::new("hostname", Kind::OptionalText),
    Setting::millis("pull_interval_ms", "pull_interval"),
    Setting::millis("timeout_ms", "timeout"),
]);

impl AgentConfig {
    /// A config from `pairs` (see [`SETTINGS`]); absent settings take the
    /// defaults of [`AgentConfig::new`]. A key or a value of the wrong type
    /// is refused here; the values themselves are judged by
    /// [`crate::Agent::start`], as for a config built field by field.
    pub fn from_settings(
        pairs: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<AgentConfig, StartError> {
        let parsed = Parsed::new(SETTINGS, pairs).map_err(|e| StartError(e.0))?;
        let [tls_ca_file, tls_cert_file, tls_key_file] = parsed.tls_files();
        Ok(AgentConfig {
            ip: parsed.optional_text("ip"),
            hostname: parsed.optional_text("hostname"),
            pull_interval_ms: parsed.millis("pull_interval_ms", DEFAULT_PULL_INTERVAL_MS),
            timeout_ms: parsed.millis("timeout_ms", DEFAULT_TIMEOUT_MS),
            tls_ca_file,
            tls_cert_file,
            tls_key_file,
            ..AgentConfig::new(
                parsed.text("servers"),
                parsed.text("app_group"),
                parsed.text("app_name"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn absent_settings_are_the_defaults_and_a_wrong_type_is_a_start_error() {
        let config = AgentConfig::from_settings([]).unwrap();
        assert_eq!(config.pull_interval_ms, DEFAULT_PULL_INTERVAL_MS);
        assert_eq!(config.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert_eq!(config.servers, "");
        let err =
            AgentConfig::from_settings([("timeout".to_string(), Value::text("1"))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot start the SDS agent: timeout must be a finite number of seconds, at least 0, \
             not the text \"1\""
        );
    }

    #[test]
    fn every_setting_reaches_its_field() {
        let pairs = [
            ("servers", Value::text("http://a:8887")),
            ("appGroup", Value::text("g")),
            ("app_name", Value::text("a")),
            ("ip", Value::text("10.0.0.1")),
            ("hostname", Value::text("h")),
            ("pull_interval", Value::Float(0.1)),
            ("timeoutMs", Value::Int(250)),
            ("tls_ca_file", Value::text("/ca.pem")),
            ("tlsCertFile", Value::text("/c.pem")),
            ("tls_key_file", Value::text("/k.pem")),
        ];
        let config = AgentConfig::from_settings(pairs.map(|(k, v)| (k.to_string(), v))).unwrap();
        assert_eq!(
            (
                config.servers.as_str(),
                config.app_group.as_str(),
                config.app_name.as_str()
            ),
            ("http://a:8887", "g", "a")
        );
        assert_eq!(config.ip.as_deref(), Some("10.0.0.1"));
        assert_eq!(config.hostname.as_deref(), Some("h"));
        assert_eq!((config.pull_interval_ms, config.timeout_ms), (100, 250));
        let pem = |name: &str| Some(PathBuf::from(name));
        assert_eq!(
            (
                config.tls_ca_file,
                config.tls_cert_file,
                config.tls_key_file
            ),
            (pem("/ca.pem"), pem("/c.pem"), pem("/k.pem"))
        );
    }
}
