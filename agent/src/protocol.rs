//! The two requests and the pull response of SDS-ADMIN.md, as JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The path of the strategy pull, after the server's base URL.
pub const PULL_PATH: &str = "/sds/heartbeat/pullstrategy";
/// The path of the statistics upload.
pub const UPLOAD_PATH: &str = "/sds/heartbeat/add";
/// The one form field both requests carry.
pub const FORM_FIELD: &str = "client";
/// SDS's cycle: 10 s, uploaded at its second 5.
pub const CYCLE_MS: u64 = 10_000;
/// Where in the cycle the last whole cycle is uploaded.
pub const UPLOAD_OFFSET_MS: u64 = 5_000;

/// Who is asking: the first four fields of both requests.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub app_group_name: String,
    pub app_name: String,
    pub ip: String,
    pub hostname: String,
}

/// `HeartbeatRequest`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequest<'a> {
    #[serde(flatten)]
    pub identity: &'a Identity,
    pub version: i64,
    pub point_list: Vec<String>,
}

/// `HeartBeatResponse`. Every field is optional on the wire; the agent
/// decides which it needs. A field of the wrong type, or given twice, fails
/// the response. serde's derive also reads a JSON array as the fields in
/// order: `worker::pull_answer` refuses anything but an object first.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct PullResponse {
    #[serde(default)]
    pub changed: Option<bool>,
    #[serde(default)]
    pub version: Option<i64>,
    /// The set's JSON text as sent; each strategy is read on its own.
    #[serde(default)]
    pub strategies: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    pub error_msg: Option<String>,
}

/// The upload's request.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadRequest<'a> {
    #[serde(flatten)]
    pub identity: &'a Identity,
    pub statistics_cycle_time: u64,
    pub point_info_map: BTreeMap<String, CycleInfo>,
}

/// `SdsCycleInfo`: one point's last whole cycle.
#[derive(Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CycleInfo {
    pub point: String,
    pub visit_num: u64,
    pub exception_num: u64,
    pub timeout_num: u64,
    pub downgrade_num: u64,
    pub concurrent_num: u64,
}

/// The start of the cycle that contains `now_ms`: `statisticsCycleTime`
/// of an upload at `now_ms` (which reports the cycle before it).
pub fn cycle_start(now_ms: u64) -> u64 {
    now_ms - now_ms % CYCLE_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_response_reads_its_members() {
        let text = r#"{"changed": true, "version": 5, "strategies": [{"point": "a"}], "x": 1}"#;
        let response: PullResponse = serde_json::from_str(text).unwrap();
        assert_eq!(response.changed, Some(true));
        assert_eq!(response.version, Some(5));
        assert_eq!(response.strategies.unwrap().get(), r#"[{"point": "a"}]"#);
        assert_eq!(response.error_msg, None);
        let e = serde_json::from_str::<PullResponse>(r#"{"version": 1, "version": 2}"#);
        assert!(e
            .unwrap_err()
            .to_string()
            .starts_with("duplicate field `version`"));
    }
}
