//! The core's tables of names, handed to Java so its enums are checked
//! against them (the Java tests fail if a code or name drifts).

use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use sds_core::{packed, ErrorCode, Field, Reason};

use crate::boundary::setup;

/// One line per row, tab-separated columns: one string crosses the boundary.
fn lines(rows: impl Iterator<Item = String>) -> String {
    rows.collect::<Vec<_>>().join("\n")
}

/// `"1\tSDS_INVALID_STRATEGY\tinvalid strategy\n2\t..."`: number, name and
/// description of every error code.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_errorCodes<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    setup(&mut env, |env| {
        let text = lines(
            ErrorCode::ALL
                .iter()
                .map(|c| format!("{}\t{}\t{}", c.as_u32(), c.as_str(), c.description())),
        );
        Ok(env.new_string(text)?)
    })
}

/// `"1\tVISIT\n2\tTOKEN_BUCKET\n..."`: code and name of every reason.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_reasons<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    setup(&mut env, |env| {
        let text = lines(
            Reason::ALL
                .iter()
                .map(|r| format!("{}\t{}", r.code(), r.as_str())),
        );
        Ok(env.new_string(text)?)
    })
}

/// `"4\t3\t15\t1\t2"`: the downgraded bit, the reason shift, the reason
/// mask, the permit bit and the probe bit of the core's packed entry, which
/// Java decodes without crossing back.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_packedLayout<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    setup(&mut env, |env| {
        let row = format!(
            "{}\t{}\t{}\t{}\t{}",
            packed::DOWNGRADED,
            packed::REASON_SHIFT,
            packed::REASON_MASK,
            packed::PERMIT,
            packed::PROBE
        );
        Ok(env.new_string(row)?)
    })
}

/// The SDS JSON names of the strategy fields, comma-separated, in the order
/// of the `long[]` a Java `Strategy` holds.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_fieldNames<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    setup(&mut env, |env| {
        let names: Vec<&str> = Field::ALL.iter().map(|f| f.json_name()).collect();
        Ok(env.new_string(names.join(","))?)
    })
}

/// The names of the stats values, comma-separated, in the order
/// `Native.stats` writes them (`visit,...,lastCycle.visitNum,...`).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_statsNames<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    setup(&mut env, |env| {
        Ok(env.new_string(crate::table::stats_names().join(","))?)
    })
}
