//! The C names and texts come from the core's one table of codes and
//! reasons: every core code and reason is reachable through the ABI with the
//! core's own text, and nothing beyond them is accepted. `sds_result` and
//! `sds_reason`, the two enums C keeps itself, hold exactly the core's codes
//! under the core's names in the header.

use std::os::raw::c_char;
use std::path::Path;

use sds::*;
use sds_core::{ErrorCode, Reason};

mod common;
use common::last_error;

type Writer = unsafe extern "C" fn(u32, *mut c_char, usize, *mut usize) -> sds_result;

fn text(write: Writer, code: u32) -> Result<String, sds_result> {
    let mut buf = [0 as c_char; SDS_MESSAGE_MAX + 1];
    let mut len = 0usize;
    match unsafe { write(code, buf.as_mut_ptr(), buf.len(), &mut len) } {
        sds_result::Ok => {
            assert_eq!(buf[len], 0, "NUL-terminated");
            Ok(String::from_utf8(buf[..len].iter().map(|&c| c as u8).collect()).unwrap())
        }
        err => Err(err),
    }
}

#[test]
fn every_core_code_has_its_message() {
    for code in ErrorCode::ALL {
        let expected = format!("{}: {}", code.as_str(), code.description());
        assert_eq!(text(sds_result_message, code.as_u32()), Ok(expected));
    }
    assert_eq!(text(sds_result_message, 0), Ok("SDS_OK: success".into()));
    let past_the_end = ErrorCode::ALL.len() as u32 + 1;
    for code in [past_the_end, 255, u32::MAX] {
        assert_eq!(
            text(sds_result_message, code),
            Err(sds_result::InvalidArgument)
        );
    }
}

#[test]
fn every_core_reason_has_its_name_and_c_value() {
    for reason in Reason::ALL {
        assert_eq!(
            text(sds_reason_name, reason.code() as u32),
            Ok(reason.as_str().into())
        );
        assert_eq!(sds_reason::of(Some(reason)) as u8, reason.code());
    }
    assert_eq!(text(sds_reason_name, 0), Ok("NONE".into()));
    assert_eq!(
        text(sds_reason_name, Reason::ALL.len() as u32 + 1),
        Err(sds_result::InvalidArgument)
    );
}

#[test]
fn last_error_names_the_unknown_field() {
    let json = r#"{"visitThreshold": 1, "visitThresold": 2}"#;
    let mut s = sds_strategy_default();
    let r = unsafe { sds_strategy_from_json(json.as_ptr().cast(), json.len(), &mut s) };
    assert_eq!(r, sds_result::UnknownField);
    assert_eq!(s, sds_strategy_default(), "output untouched");
    assert_eq!(
        last_error(),
        "SDS_UNKNOWN_FIELD: unknown strategy field \"visitThresold\""
    );
}

/// The `(NAME, value)` constants of enum `name` in the committed header.
fn header_enum(name: &str) -> Vec<(String, u32)> {
    let header =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/sds.h"))
            .unwrap();
    let start = header.find(&format!("enum {name}\n")).expect("the enum");
    let body = &header[start..];
    let body = &body[body.find('{').unwrap()..body.find("};").unwrap()];
    body.lines()
        .filter_map(|line| line.trim().strip_suffix(','))
        .map(|item| {
            let (name, value) = item.split_once(" = ").expect("an explicit value");
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_header_holds_every_core_code_under_its_name() {
    let mut want = vec![("SDS_RESULT_OK".to_string(), 0)];
    want.extend(ErrorCode::ALL.iter().map(|c| {
        let name = c.as_str().strip_prefix("SDS_").unwrap();
        (format!("SDS_RESULT_{name}"), c.as_u32())
    }));
    assert_eq!(header_enum("sds_result"), want);
}

#[test]
fn the_header_holds_every_core_reason_under_its_name() {
    let mut want = vec![("SDS_REASON_NONE".to_string(), 0)];
    want.extend(
        Reason::ALL
            .iter()
            .map(|r| (format!("SDS_REASON_{}", r.as_str()), u32::from(r.code()))),
    );
    assert_eq!(header_enum("sds_reason"), want);
}
