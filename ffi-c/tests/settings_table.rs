//! conformance/settings.json through the C ABI: every case that C's config
//! structs can express starts the agent (`sds_agent_start`) or the cluster
//! (`sds_cluster_start`): an ok case starts and is stopped, an error case is
//! `SDS_RESULT_INVALID_ARGUMENT` with the case's message (names spelled
//! snake_case, as the struct's fields) after the code's name as the last
//! error. The cases C cannot express are listed in `NOT_IN_C` with the
//! reason, and the list is checked: a case listed that C can express, or a
//! new case it cannot, fails here.

use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr::{null, null_mut};

use sds::*;
use sds_conformance::{settings_cases, spelled, SettingsCase};
use sds_settings::{Kind, Setting, Value};

mod common;
use common::last_error;

/// A start's verdict: started (and stopped), or the code and message.
type Verdict = Result<(), (sds_result, String)>;

/// Seconds spellings (`timeout`, `pull_interval`, ...) are no field.
const SECONDS: &str = "C's structs have the milliseconds fields only, not the seconds spellings";
/// A key that names no setting.
const NO_FIELD: &str = "the struct has no field of that name";
/// A value C's compiler refuses for the field (a number for a string, a
/// negative or fractional number or a boolean for a uint64, text for the
/// array of points, a number for a flag).
const WRONG_TYPE: &str = "the field's C type cannot hold a value of that type";
/// `= {0}` takes the defaults: 0 in a uint64 field is the default there.
const ZERO: &str = "0 in a uint64 field is the default in the C ABI, not the value 0";

/// The cases of settings.json that C cannot express: (service, name, why).
const NOT_IN_C: &[(&str, &str, &str)] = &[
    (
        "agent",
        "intervals in seconds, rounded to the millisecond",
        SECONDS,
    ),
    (
        "agent",
        "an integral number is whole milliseconds",
        WRONG_TYPE,
    ),
    ("agent", "an unknown setting", NO_FIELD),
    (
        "agent",
        "one setting given twice, in ms and in seconds",
        SECONDS,
    ),
    ("agent", "servers of the wrong type", WRONG_TYPE),
    ("agent", "servers as a list", WRONG_TYPE),
    ("agent", "ip of the wrong type", WRONG_TYPE),
    ("agent", "negative milliseconds", WRONG_TYPE),
    ("agent", "a fraction of a millisecond", WRONG_TYPE),
    ("agent", "seconds as text", SECONDS),
    ("agent", "negative seconds", SECONDS),
    (
        "agent",
        "null gives nothing: another spelling of the setting may follow",
        SECONDS,
    ),
    ("agent", "a boolean is not a number", WRONG_TYPE),
    ("agent", "a path of the wrong type", WRONG_TYPE),
    ("agent", "a pull interval of 0", ZERO),
    ("agent", "a timeout of 0 seconds", SECONDS),
    ("cluster", "one URL as text, one point as text", WRONG_TYPE),
    ("cluster", "every setting", SECONDS),
    ("cluster", "an unknown setting", NO_FIELD),
    ("cluster", "points of the wrong type", WRONG_TYPE),
    ("cluster", "a point of the wrong type", WRONG_TYPE),
    ("cluster", "redis_cluster of the wrong type", WRONG_TYPE),
    (
        "cluster",
        "sync interval in fractional milliseconds",
        WRONG_TYPE,
    ),
    ("cluster", "a sync period of 0", ZERO),
];

/// The C value of one setting of a case.
enum CValue {
    /// A string field: NULL or a C string.
    Text(Option<CString>),
    /// A uint64 field.
    Millis(u64),
    /// A flag.
    Flag(bool),
    /// The array of point names.
    Names(Vec<String>),
}

/// A case's pairs as C values by field name, or why C cannot give them.
fn c_values(
    table: &[Setting],
    pairs: &[(String, Value)],
) -> Result<Vec<(&'static str, CValue)>, &'static str> {
    let mut values = Vec::new();
    for (key, value) in pairs {
        if table.iter().any(|s| s.seconds == Some(key.as_str())) {
            return Err(SECONDS);
        }
        let setting = table.iter().find(|s| s.name == key).ok_or(NO_FIELD)?;
        values.push((setting.name, c_value(setting, value)?));
    }
    Ok(values)
}

fn c_value(setting: &Setting, value: &Value) -> Result<CValue, &'static str> {
    let c_string = |text: &str| CString::new(text).map_err(|_| WRONG_TYPE);
    Ok(match (setting.kind, value) {
        (Kind::Text | Kind::OptionalText | Kind::Path, Value::Null) => CValue::Text(None),
        (Kind::Text | Kind::OptionalText | Kind::Path, Value::Text(t)) => {
            CValue::Text(Some(c_string(t)?))
        }
        (Kind::Millis, Value::Null) => CValue::Millis(0),
        (Kind::Millis, Value::Int(0)) => return Err(ZERO),
        (Kind::Millis, Value::Int(n)) => CValue::Millis(u64::try_from(*n).map_err(|_| WRONG_TYPE)?),
        (Kind::Bool, Value::Null) => CValue::Flag(false),
        (Kind::Bool, Value::Bool(b)) => CValue::Flag(*b),
        // The URLs are one text in C, commas between several.
        (Kind::TextList, Value::Text(t)) if setting.name == "urls" => {
            CValue::Text(Some(c_string(t)?))
        }
        (Kind::TextList, Value::List(urls)) if setting.name == "urls" => {
            let urls: Vec<&str> = urls
                .iter()
                .map(|url| match url {
                    Value::Text(t) => Ok(t.as_str()),
                    _ => Err(WRONG_TYPE),
                })
                .collect::<Result<_, _>>()?;
            CValue::Text(Some(c_string(&urls.join(","))?))
        }
        (Kind::TextList, Value::Null) => CValue::Names(Vec::new()),
        (Kind::TextList, Value::List(items)) => CValue::Names(
            items
                .iter()
                .map(|item| match item {
                    Value::Text(t) => Ok(t.clone()),
                    _ => Err(WRONG_TYPE),
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(WRONG_TYPE),
    })
}

fn text_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(null(), |t| t.as_ptr())
}

/// Starts the agent from `values` and stops it: the verdict.
fn start_agent(values: &[(&str, CValue)]) -> Verdict {
    let mut c = sds_agent_config {
        servers: null(),
        app_group: null(),
        app_name: null(),
        ip: null(),
        hostname: null(),
        pull_interval_ms: 0,
        timeout_ms: 0,
        log: None,
        log_context: null_mut(),
        tls_ca_file: null(),
        tls_cert_file: null(),
        tls_key_file: null(),
    };
    for (name, value) in values {
        match (*name, value) {
            ("servers", CValue::Text(t)) => c.servers = text_ptr(t),
            ("app_group", CValue::Text(t)) => c.app_group = text_ptr(t),
            ("app_name", CValue::Text(t)) => c.app_name = text_ptr(t),
            ("ip", CValue::Text(t)) => c.ip = text_ptr(t),
            ("hostname", CValue::Text(t)) => c.hostname = text_ptr(t),
            ("pull_interval_ms", CValue::Millis(ms)) => c.pull_interval_ms = *ms,
            ("timeout_ms", CValue::Millis(ms)) => c.timeout_ms = *ms,
            ("tls_ca_file", CValue::Text(t)) => c.tls_ca_file = text_ptr(t),
            ("tls_cert_file", CValue::Text(t)) => c.tls_cert_file = text_ptr(t),
            ("tls_key_file", CValue::Text(t)) => c.tls_key_file = text_ptr(t),
            _ => panic!("agent setting {name} has no field here"),
        }
    }
    with_table(|t| {
        let mut agent = null_mut();
        verdict(unsafe { sds_agent_start(t, &c, &mut agent) })?;
        unsafe { sds_agent_stop(agent) };
        Ok(())
    })
}

/// Starts a cluster from `values` and stops it: the verdict.
fn start_cluster(values: &[(&str, CValue)]) -> Verdict {
    let mut c = sds_cluster_config {
        urls: null(),
        urls_len: 0,
        points: null(),
        point_lens: null(),
        points_len: 0,
        sync_ms: 0,
        timeout_ms: 0,
        key_prefix: null(),
        key_prefix_len: 0,
        flags: 0,
        tls_ca_file: null(),
        tls_cert_file: null(),
        tls_key_file: null(),
        max_backoff_ms: 0,
    };
    let (mut names, mut lens) = (Vec::new(), Vec::new());
    let len = |t: &Option<CString>| t.as_ref().map_or(0, |t| t.as_bytes().len());
    for (name, value) in values {
        match (*name, value) {
            ("urls", CValue::Text(t)) => (c.urls, c.urls_len) = (text_ptr(t), len(t)),
            ("points", CValue::Names(points)) => {
                names = points.iter().map(|p| p.as_ptr().cast::<c_char>()).collect();
                lens = points.iter().map(String::len).collect();
            }
            ("redis_cluster", CValue::Flag(on)) => c.flags = u32::from(*on),
            ("sync_ms", CValue::Millis(ms)) => c.sync_ms = *ms,
            ("timeout_ms", CValue::Millis(ms)) => c.timeout_ms = *ms,
            ("max_backoff_ms", CValue::Millis(ms)) => c.max_backoff_ms = *ms,
            ("key_prefix", CValue::Text(t)) => {
                (c.key_prefix, c.key_prefix_len) = (text_ptr(t), len(t))
            }
            ("tls_ca_file", CValue::Text(t)) => c.tls_ca_file = text_ptr(t),
            ("tls_cert_file", CValue::Text(t)) => c.tls_cert_file = text_ptr(t),
            ("tls_key_file", CValue::Text(t)) => c.tls_key_file = text_ptr(t),
            _ => panic!("cluster setting {name} has no field here"),
        }
    }
    (c.points, c.point_lens, c.points_len) = (names.as_ptr(), lens.as_ptr(), names.len());
    with_table(|t| {
        let mut cluster = null_mut();
        verdict(unsafe { sds_cluster_start(t, &c, &mut cluster) })?;
        unsafe { sds_cluster_stop(cluster) };
        Ok(())
    })
}

fn with_table<T>(body: impl FnOnce(*const sds_table) -> T) -> T {
    let mut t = null_mut();
    assert_eq!(unsafe { sds_table_new(16, &mut t) }, sds_result::Ok);
    let result = body(t);
    unsafe { sds_table_free(t) };
    result
}

fn verdict(r: sds_result) -> Verdict {
    match r {
        sds_result::Ok => Ok(()),
        code => Err((code, last_error())),
    }
}

/// Runs every case of `service` C can express; returns how many ran.
fn run(service: &str, table: &[Setting], start: fn(&[(&str, CValue)]) -> Verdict) -> usize {
    let cases = settings_cases(service);
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        let listed = NOT_IN_C
            .iter()
            .find(|(s, name, _)| *s == service && *name == case.name)
            .map(|(_, _, why)| *why);
        match (c_values(table, &case.settings), listed) {
            (Err(why), Some(listed)) if why == listed => continue,
            (Err(why), _) => failures.push(format!("{}: C cannot express it ({why})", case.name)),
            (Ok(_), Some(listed)) => failures.push(format!(
                "{}: listed ({listed}) but C can express it",
                case.name
            )),
            (Ok(values), None) => {
                ran += 1;
                if let Some(failure) = judge(case, start(&values)) {
                    failures.push(failure);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{service}:\n{}", failures.join("\n"));
    ran
}

/// What differs between `case` and the C ABI's verdict, if anything.
fn judge(case: &SettingsCase, got: Verdict) -> Option<String> {
    match (got, &case.error) {
        (Ok(()), None) => None,
        (Ok(()), Some(error)) => Some(format!("{}: started, not {error:?}", case.name)),
        (Err((_, message)), None) => Some(format!("{}: refused: {message:?}", case.name)),
        (Err((code, message)), Some(template)) => {
            let want = format!(
                "SDS_INVALID_ARGUMENT: {}",
                spelled(template, str::to_string)
            );
            (code != sds_result::InvalidArgument || message != want).then(|| {
                format!(
                    "{}:\n  got  {code:?} {message:?}\n  want {want:?}",
                    case.name
                )
            })
        }
    }
}

#[test]
fn every_agent_case_c_can_express_gets_its_verdict() {
    let ran = run("agent", ::sds_agent::SETTINGS, start_agent);
    assert!(ran >= 11, "{ran} agent cases ran through the C ABI");
}

#[test]
fn every_cluster_case_c_can_express_gets_its_verdict() {
    let ran = run("cluster", ::sds_cluster::SETTINGS, start_cluster);
    assert!(ran >= 7, "{ran} cluster cases ran through the C ABI");
}

#[test]
fn every_case_listed_as_not_in_c_is_a_case() {
    for (service, name, _) in NOT_IN_C {
        assert!(
            settings_cases(service).iter().any(|c| c.name == *name),
            "{service}: no case {name:?} in settings.json"
        );
    }
}
