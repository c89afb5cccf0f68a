//! conformance/settings.json through the C ABI: every case starts the agent
//! (`sds_agent_start`) or the cluster (`sds_cluster_start`) with its pairs
//! as the members of a JSON object, in order: an ok case starts and is
//! stopped, an error case is `SDS_RESULT_INVALID_ARGUMENT` with the case's
//! message after the code's name as the last error. Then what C adds: the
//! JSON text itself, NULL arguments.

use std::ptr::{null, null_mut};

use sds::*;
use sds_conformance::run_settings_cases;
use sds_core::ErrorCode;
use sds_settings::Value;
use serde_json::{json, Value as Json};

mod common;
use common::{last_error, start_agent, start_cluster, table, Refusal};

/// A setting's value as JSON (an `Other` is the object it was read from).
fn json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(flag) => (*flag).into(),
        Value::Int(n) => i64::try_from(*n).map_or_else(|_| (*n as u64).into(), Json::from),
        Value::Float(x) => (*x).into(),
        Value::Text(text) => text.as_str().into(),
        Value::List(items) => items.iter().map(json).collect(),
        Value::Other(_) => json!({}),
    }
}

/// The pairs as one JSON object's text, repeated keys included.
fn object(pairs: &[(String, Value)]) -> String {
    let members: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{}: {}", Json::from(key.as_str()), json(value)))
        .collect();
    format!("{{{}}}", members.join(", "))
}

/// Runs `start` on a new table; stops what started (`stop`): the verdict
/// as `run_settings_cases` takes it (no config fields to show).
fn verdict<T>(
    started: impl FnOnce(*const sds_table) -> Result<*mut T, Refusal>,
    stop: unsafe extern "C" fn(*mut T),
) -> Result<serde_json::Map<String, Json>, String> {
    let t = table(16);
    let result = started(t);
    unsafe { sds_table_free(t) };
    match result {
        Ok(service) => {
            unsafe { stop(service) };
            Ok(serde_json::Map::new())
        }
        // Another code keeps its name, so the message differs from the case's.
        Err((_, message)) => Err(message
            .strip_prefix("SDS_INVALID_ARGUMENT: ")
            .unwrap_or(&message)
            .to_string()),
    }
}

#[test]
fn every_agent_case_gets_its_verdict() {
    let ran = run_settings_cases("agent", str::to_string, |pairs| {
        verdict(|t| start_agent(t, &object(pairs)), sds_agent_stop)
    });
    assert!(ran >= 27, "{ran} agent cases");
}

#[test]
fn every_cluster_case_gets_its_verdict() {
    let ran = run_settings_cases("cluster", str::to_string, |pairs| {
        verdict(|t| start_cluster(t, &object(pairs)), sds_cluster_stop)
    });
    assert!(ran >= 15, "{ran} cluster cases");
}

/// How the last error message starts when the agent refuses its settings.
const REFUSED: &str = "SDS_INVALID_ARGUMENT: cannot start the SDS agent: ";

fn invalid_json(message: &str) -> Refusal {
    (
        ErrorCode::InvalidJson,
        format!("SDS_INVALID_JSON: {message}"),
    )
}

#[test]
fn settings_that_are_no_json_object_are_invalid_json() {
    let t = table(8);
    let agent = |settings: &str| start_agent(t, settings).map(|_| ());
    assert_eq!(
        agent(r#"{"servers": "http://a", "app_name" "a"}"#),
        Err(invalid_json("expected `:` at line 1 column 36"))
    );
    assert_eq!(
        agent(r#"["servers", "http://a"]"#),
        Err(invalid_json("settings must be a JSON object"))
    );
    let latin1 = b"{\"urls\": \"redis://h\xe9\"}";
    let mut cluster = null_mut();
    let r = unsafe { sds_cluster_start(t, latin1.as_ptr().cast(), latin1.len(), &mut cluster) };
    assert_eq!(
        common::made(r, ()),
        Err(invalid_json("settings: not UTF-8 (byte 19)"))
    );
    unsafe { sds_table_free(t) };
}

#[test]
fn members_are_read_with_their_json_types_in_any_order() {
    let t = table(8);
    let refused = |settings: &str| match start_agent(t, settings) {
        Err((ErrorCode::InvalidArgument, message)) => message.replace(REFUSED, ""),
        other => panic!("{settings}: {other:?}"),
    };
    assert_eq!(
        refused(r#"{"servers": "http://a", "servers": "http://b"}"#),
        "\"servers\" is given twice"
    );
    // Two bad values: the first in the agent's table (ip before
    // timeout_ms), whatever the members' order, as from every language.
    for text in [
        r#"{"ip": 5, "timeout_ms": -1}"#,
        r#"{"timeout_ms": -1, "ip": 5}"#,
    ] {
        assert_eq!(refused(text), "ip must be text or null, not 5");
    }
    assert_eq!(
        refused(r#"{"app_name": {"a": 1}}"#),
        "app_name must be text, not a value of type object"
    );
    assert_eq!(
        refused(r#"{"ip": ["a"], "hostname": false}"#),
        "ip must be text or null, not a list"
    );
    assert_eq!(
        refused(r#"{"hostname": true}"#),
        "hostname must be text or null, not true"
    );
    // An integer beyond 64 bits is quoted whole, as Python and Java quote it.
    assert_eq!(
        refused(r#"{"timeout_ms": 18446744073709551616}"#),
        "timeout_ms must be a whole number of milliseconds from 0 to 18446744073709551615, \
         not 18446744073709551616"
    );
    let most = r#"{"servers": "http://127.0.0.1:1", "app_group": "g", "app_name": "a",
        "timeout_ms": 18446744073709551615, "ip": null}"#;
    unsafe { sds_agent_stop(start_agent(t, most).unwrap()) };
    unsafe { sds_table_free(t) };
}

#[test]
fn names_are_snake_or_camel_case_and_urls_a_list() {
    let t = table(8);
    let settings = json!({"servers": "http://127.0.0.1:1", "appGroup": "g", "app_name": "a",
        "pullIntervalMs": 100, "timeout": 0.5});
    unsafe { sds_agent_stop(start_agent(t, &settings.to_string()).unwrap()) };
    let urls = json!({"urls": ["redis://127.0.0.1:1", "redis://127.0.0.1:2"], "points": ["a"],
        "redisCluster": true, "sync_ms": 50, "timeout_ms": 200, "max_backoff_ms": 400});
    unsafe { sds_cluster_stop(start_cluster(t, &urls.to_string()).unwrap()) };
    let bad = json!({"urls": ["redis://127.0.0.1:1", "http://x"], "points": ["a", null]});
    assert_eq!(
        start_cluster(t, &bad.to_string()),
        Err((
            ErrorCode::InvalidArgument,
            "SDS_INVALID_ARGUMENT: invalid cluster configuration: points[1] must be text, not \
             null"
                .into()
        ))
    );
    unsafe { sds_table_free(t) };
}

#[test]
fn null_arguments_are_named() {
    let t = table(8);
    let (mut agent, mut cluster) = (null_mut(), null_mut());
    let json = "{}";
    let r = unsafe { sds_agent_start(t, null(), 2, None, null_mut(), &mut agent) };
    assert_eq!(r, ErrorCode::NullArgument);
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `settings` is NULL");
    let r = unsafe {
        sds_agent_start(
            null(),
            json.as_ptr().cast(),
            2,
            None,
            null_mut(),
            &mut agent,
        )
    };
    assert_eq!(r, ErrorCode::NullArgument);
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `table` is NULL");
    let r = unsafe { sds_cluster_start(t, json.as_ptr().cast(), 2, null_mut()) };
    assert_eq!(r, ErrorCode::NullArgument);
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `out` is NULL");
    let r = unsafe { sds_cluster_start(t, null(), 0, &mut cluster) };
    assert_eq!(r, ErrorCode::NullArgument);
    assert!(agent.is_null() && cluster.is_null());
    let mut status = std::mem::MaybeUninit::<sds_agent_status>::uninit();
    let r = unsafe { sds_agent_status_get(null(), status.as_mut_ptr()) };
    assert_eq!(r, ErrorCode::NullArgument);
    assert_eq!(last_error(), "SDS_NULL_ARGUMENT: `agent` is NULL");
    unsafe { sds_table_free(t) };
}
