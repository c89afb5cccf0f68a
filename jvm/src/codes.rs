//! The core's tables of names, handed to Java so its enums are checked
//! against them (the Java tests fail if a code or name drifts).

use jni::objects::JString;
use sds_core::{packed, ErrorCode, Field, Reason};

use crate::boundary::setup_native;

/// One line per row, tab-separated columns: one string crosses the boundary.
fn lines(rows: impl Iterator<Item = String>) -> String {
    rows.collect::<Vec<_>>().join("\n")
}

setup_native! {
    /// `"1\tSDS_INVALID_STRATEGY\tinvalid strategy\n2\t..."`: number, name and
    /// description of every error code.
    fn Java_io_sdsnative_Native_errorCodes(env) -> JString<'l> {
        let text = lines(
            ErrorCode::ALL
                .iter()
                .map(|c| format!("{}\t{}\t{}", c.as_u32(), c.as_str(), c.description())),
        );
        Ok(env.new_string(text)?)
    }

    /// `"1\tVISIT\n2\tTOKEN_BUCKET\n..."`: code and name of every reason.
    fn Java_io_sdsnative_Native_reasons(env) -> JString<'l> {
        let text = lines(
            Reason::ALL
                .iter()
                .map(|r| format!("{}\t{}", r.code(), r.as_str())),
        );
        Ok(env.new_string(text)?)
    }

    /// `"4\t3\t15\t1\t2"`: the downgraded bit, the reason shift, the reason
    /// mask, the permit bit and the probe bit of the core's packed entry, which
    /// Java decodes without crossing back.
    fn Java_io_sdsnative_Native_packedLayout(env) -> JString<'l> {
        let row = format!(
            "{}\t{}\t{}\t{}\t{}",
            packed::DOWNGRADED,
            packed::REASON_SHIFT,
            packed::REASON_MASK,
            packed::PERMIT,
            packed::PROBE
        );
        Ok(env.new_string(row)?)
    }

    /// The SDS JSON names of the strategy fields, comma-separated, in the order
    /// of the `long[]` a Java `Strategy` holds.
    fn Java_io_sdsnative_Native_fieldNames(env) -> JString<'l> {
        let names: Vec<&str> = Field::ALL.iter().map(|f| f.json_name()).collect();
        Ok(env.new_string(names.join(","))?)
    }

    /// The names of the stats values, comma-separated, in the order
    /// `Native.stats` writes them (`visit,...,lastCycle.visitNum,...`).
    fn Java_io_sdsnative_Native_statsNames(env) -> JString<'l> {
        Ok(env.new_string(crate::table::stats_names().join(","))?)
    }
}
