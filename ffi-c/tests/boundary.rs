//! Every export runs inside the panic boundary, is named `sds_*`, and is
//! declared in the committed header: checked by reading the sources, so a
//! new export that forgets any of it fails here. And the boundary itself:
//! a panic becomes `SDS_RESULT_PANIC` with its message.

use std::path::Path;

use sds::boundary::{boundary, boundary_or};
use sds::sds_result;
use sds_core::ErrorCode;

mod common;

#[test]
fn a_panic_becomes_the_panic_code_and_its_message() {
    assert_eq!(boundary(|| panic!("boom")), ErrorCode::Panic);
    let text = common::last_error();
    assert_eq!(text, "SDS_PANIC: internal error (panic caught): boom");
    assert_eq!(boundary_or(7u8, || panic!("boom")), 7);
}

#[test]
fn success_and_failure_pass_through() {
    assert_eq!(boundary(|| Ok(())), sds_result::Ok);
    let empty = boundary(|| Err(sds_core::Error::EmptyName.into()));
    assert_eq!(empty, ErrorCode::EmptyName);
    assert_eq!(common::last_error(), "SDS_EMPTY_NAME: point name is empty");
}

struct Export {
    file: String,
    name: String,
    body_start: String,
}

fn exports() -> Vec<Export> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("extern \"C\" fn ") {
            let after = &rest[at + "extern \"C\" fn ".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let open = after.find('{').expect("a body");
            // The body's first statement: comment lines passed over.
            let mut body = after[open + 1..].trim_start();
            while body.starts_with("//") {
                body = body
                    .split_once('\n')
                    .map_or("", |(_, rest)| rest)
                    .trim_start();
            }
            found.push(Export {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                name,
                body_start: body.chars().take(40).collect(),
            });
            rest = &after[open..];
        }
        let no_mangle = text.matches("#[no_mangle]").count();
        let externs = text.matches("extern \"C\" fn ").count();
        assert_eq!(
            no_mangle,
            externs,
            "{}: every extern \"C\" fn is #[no_mangle]",
            path.display()
        );
    }
    found
}

#[test]
fn every_export_is_inside_the_panic_boundary() {
    let exports = exports();
    assert!(exports.len() >= 25, "found only {} exports", exports.len());
    let wrapped = |e: &Export| {
        e.body_start.starts_with("boundary(") || e.body_start.starts_with("boundary_or(")
    };
    // An export may be another export called with a default (NULL) argument,
    // when that one is inside the boundary.
    let delegates = |e: &Export| {
        exports.iter().any(|other| {
            other.name != e.name
                && wrapped(other)
                && e.body_start.starts_with(&format!("{}(", other.name))
        })
    };
    let unwrapped: Vec<String> = exports
        .iter()
        .filter(|e| !wrapped(e) && !delegates(e))
        .map(|e| format!("{}: {} starts with {:?}", e.file, e.name, e.body_start))
        .collect();
    assert!(
        unwrapped.is_empty(),
        "exports outside the boundary:\n{}",
        unwrapped.join("\n")
    );
}

#[test]
fn every_export_is_named_sds_and_declared_in_the_header() {
    let header =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/sds.h"))
            .unwrap();
    for e in exports() {
        assert!(
            e.name.starts_with("sds_"),
            "{}: {} is not sds_*",
            e.file,
            e.name
        );
        assert!(
            header.contains(&format!(" {}(", e.name)) || header.contains(&format!("*{}(", e.name)),
            "{} is missing from include/sds.h: regenerate it",
            e.name
        );
    }
}
