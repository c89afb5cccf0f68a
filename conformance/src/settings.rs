//! The cases of `settings.json` for the Rust runners (the agent's and the
//! cluster's tests, the C ABI's): each runner says how its surface starts a
//! service from pairs; the driver checks the verdict.

use std::fmt::Display;

use sds_settings::{json, Value};
use serde_json::Value as Json;

/// One case of `settings.json`.
pub struct SettingsCase {
    pub name: String,
    /// `"agent"` or `"cluster"`.
    pub service: String,
    /// The pairs, in order, snake_case keys.
    pub settings: Vec<(String, Value)>,
    /// For a case that starts: the config fields it must have.
    pub config: Option<serde_json::Map<String, Json>>,
    /// For a case that is refused: the message, `{name}` standing for a
    /// setting's name as the surface spells it.
    pub error: Option<String>,
}

/// The cases of one service.
pub fn settings_cases(service: &str) -> Vec<SettingsCase> {
    crate::read_json("settings.json")["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|case| case["service"] == service)
        .map(|case| SettingsCase {
            name: case["name"].as_str().expect("name").to_string(),
            service: service.to_string(),
            settings: case["settings"]
                .as_array()
                .expect("settings")
                .iter()
                .map(|pair| {
                    let key = pair[0].as_str().expect("a key").to_string();
                    (key, json::value(&pair[1]))
                })
                .collect(),
            config: case["config"].as_object().cloned(),
            error: case["error"].as_str().map(str::to_string),
        })
        .collect()
}

/// `template` with each `{name}` replaced by `spell(name)`.
pub fn spelled(template: &str, spell: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        out.push_str(&rest[..open]);
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            out.push_str(&spell(name));
        } else {
            out.push_str(&rest[open..=open + close]);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Runs every case of `service`: `start` gives the surface's verdict
/// (`Ok` with the config fields it can show as JSON, or the message).
/// Returns how many cases ran; panics naming every case that differs.
pub fn run_settings_cases(
    service: &str,
    spell: impl Fn(&str) -> String,
    start: impl Fn(&[(String, Value)]) -> Result<serde_json::Map<String, Json>, String>,
) -> usize {
    let cases = settings_cases(service);
    let mut failures = Vec::new();
    for case in &cases {
        let pairs: Vec<(String, Value)> = case
            .settings
            .iter()
            .map(|(k, v)| (spell(k), v.clone()))
            .collect();
        match (start(&pairs), &case.error) {
            (Ok(fields), None) => {
                for (key, want) in case.config.iter().flatten() {
                    if let Some(got) = fields.get(key) {
                        if got != want {
                            failures.push(format!("{}: {key} is {got}, not {want}", case.name));
                        }
                    }
                }
            }
            (Ok(_), Some(error)) => failures.push(format!("{}: started, not {error:?}", case.name)),
            (Err(got), None) => failures.push(format!("{}: refused: {got:?}", case.name)),
            (Err(got), Some(template)) => {
                let want = spelled(template, &spell);
                if got != want {
                    failures.push(format!("{}:\n  got  {got:?}\n  want {want:?}", case.name));
                }
            }
        }
    }
    crate::assert_none_failed(&failures, cases.len(), "cases");
    cases.len()
}

/// [`run_settings_cases`] for a Rust service, in snake_case: `config`
/// makes the service's config from the pairs (its `from_settings`),
/// `fields` shows the config as a JSON object, and `start` starts the
/// service on it and stops it again; an error is the verdict's message.
pub fn run_config_cases<C, E: Display, F: Display>(
    service: &str,
    config: impl Fn(Vec<(String, Value)>) -> Result<C, E>,
    fields: impl Fn(&C) -> Json,
    start: impl Fn(C) -> Result<(), F>,
) -> usize {
    run_settings_cases(service, str::to_string, |pairs| {
        let config = config(pairs.to_vec()).map_err(|e| e.to_string())?;
        let Json::Object(shown) = fields(&config) else {
            panic!("the config's fields are a JSON object");
        };
        start(config).map_err(|e| e.to_string())?;
        Ok(shown)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_replaces_only_setting_placeholders() {
        let camel = |n: &str| sds_settings::camel_case(n);
        assert_eq!(spelled("{timeout_ms} must be", camel), "timeoutMs must be");
        assert_eq!(spelled("x {} {A} {a_b}", camel), "x {} {A} aB");
    }
}
