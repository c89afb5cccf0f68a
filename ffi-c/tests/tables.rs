//! The C names and texts come from the core's one table of codes and
//! reasons: every core code and reason is reachable through the ABI with the
//! core's own text, and nothing beyond them is accepted. The header's
//! `sds_result` and `sds_reason` are the core's enums under C's names, with
//! the 0 of each defined beside them.

use std::os::raw::c_char;
use std::path::Path;

use sds::*;
use sds_core::{ErrorCode, Reason};

mod common;
use common::last_error;

type Writer = unsafe extern "C" fn(u32, *mut c_char, usize, *mut usize) -> sds_result;

fn text(write: Writer, code: u32) -> Result<String, ErrorCode> {
    let mut buf = [0 as c_char; SDS_MESSAGE_MAX + 1];
    let mut len = 0usize;
    match unsafe { write(code, buf.as_mut_ptr(), buf.len(), &mut len) }.code() {
        None => {
            assert_eq!(buf[len], 0, "NUL-terminated");
            Ok(String::from_utf8(buf[..len].iter().map(|&c| c as u8).collect()).unwrap())
        }
        Some(err) => Err(err),
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
            Err(ErrorCode::InvalidArgument)
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
        assert_eq!(sds_reason::of(Some(reason)).0, reason.code());
    }
    assert_eq!(text(sds_reason_name, 0), Ok("NONE".into()));
    assert_eq!(
        text(sds_reason_name, Reason::ALL.len() as u32 + 1),
        Err(ErrorCode::InvalidArgument)
    );
}

#[test]
fn last_error_names_the_unknown_field() {
    let json = r#"{"visitThreshold": 1, "visitThresold": 2}"#;
    let mut s = sds_strategy_default();
    let r = unsafe { sds_strategy_from_json(json.as_ptr().cast(), json.len(), &mut s) };
    assert_eq!(r, ErrorCode::UnknownField);
    assert_eq!(s, sds_strategy_default(), "output untouched");
    assert_eq!(
        last_error(),
        "SDS_UNKNOWN_FIELD: unknown strategy field \"visitThresold\""
    );
}

/// The committed header.
fn header_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/sds.h")).unwrap()
}

/// The `(NAME, value)` constants of enum `name` in the committed header.
fn header_enum(name: &str) -> Vec<(String, u32)> {
    let header = header_text();
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

/// The header defines `zero` as the 0 of `ty`.
fn assert_header_zero(zero: &str, ty: &str) {
    let header = header_text();
    let define = format!("#define {zero} (({ty})0)");
    assert!(header.contains(&define), "{define}");
}

#[test]
fn the_header_holds_every_core_code_under_its_name() {
    let want: Vec<_> = ErrorCode::ALL
        .iter()
        .map(|c| {
            let name = c.as_str().strip_prefix("SDS_").unwrap();
            (format!("SDS_RESULT_{name}"), c.as_u32())
        })
        .collect();
    assert_eq!(header_enum("sds_result"), want);
    assert_header_zero("SDS_RESULT_OK", "sds_result");
}

#[test]
fn the_header_holds_every_core_reason_under_its_name() {
    let want: Vec<_> = Reason::ALL
        .iter()
        .map(|r| (format!("SDS_REASON_{}", r.as_str()), u32::from(r.code())))
        .collect();
    assert_eq!(header_enum("sds_reason"), want);
    assert_header_zero("SDS_REASON_NONE", "sds_reason");
}
