//! The core's tables of names, handed to Java once so its enums are checked
//! against them (the Java tests fail if a code or name drifts), and the
//! services' status field names, which name the Java status fields.

use jni::objects::{JObject, JObjectArray};
use jni::{jni_str, Env};
use sds_core::keyed::KeyTableStats;
use sds_core::{packed, Algorithm, ErrorCode, Field, Reason};
use sds_settings::{camel_case, Fields};

use crate::boundary::{setup_native, Fail};

/// A Java `String[]` of `items` (`None`: null).
pub(crate) fn strings<'l>(
    env: &mut Env<'l>,
    items: impl ExactSizeIterator<Item = Option<String>>,
) -> Result<JObjectArray<'l>, Fail> {
    let array = env.new_object_array(
        items.len() as i32,
        jni_str!("java/lang/String"),
        JObject::null(),
    )?;
    for (i, item) in items.enumerate() {
        if let Some(item) = item {
            let text = env.new_string(item)?;
            array.set_element(env, i, &text)?;
        }
    }
    Ok(array)
}

/// A status type's field names, camelCased (what its Java class names its
/// fields), comma-separated.
fn status_names<F: Fields>() -> String {
    F::NAMES
        .iter()
        .map(|n| camel_case(n))
        .collect::<Vec<_>>()
        .join(",")
}

setup_native! {
    /// The tables, one text each, in this order (`CoreTables` reads them):
    /// - every error code's number, name and description
    ///   (`"1\tSDS_INVALID_STRATEGY\tinvalid strategy\n2\t..."`);
    /// - every reason's code and name (`"1\tVISIT\n2\tTOKEN_BUCKET\n..."`);
    /// - the downgraded bit, the reason shift, the reason mask, the permit
    ///   bit, the probe bit, the shift of the probe generation or wait and
    ///   the packed width of the core's packed entry
    ///   (`"4\t3\t15\t1\t2\t27\t43"`), which Java decodes without crossing
    ///   back;
    /// - the strategy fields' SDS JSON names, comma-separated, in the order of
    ///   the `long[]` a Java `Strategy` holds;
    /// - the names of the stats values, comma-separated, in the order
    ///   `Native.stats` writes them (`visit,...,lastCycle.visitNum,...`);
    /// - the agent's and then the cluster sync's status field names;
    /// - every adaptive concurrency algorithm's code and name
    ///   (`"1\tAIMD\n2\tVEGAS\n..."`);
    /// - the names of a key table's counters, comma-separated, in the order
    ///   `Native.keysStats` writes them (`capacity,resident,...,refused`).
    fn Java_io_sdsnative_Native_tables(env) -> JObjectArray<'l> {
        let codes = ErrorCode::ALL.iter().map(|c| format!("{}\t{}\t{}", c.as_u32(), c.as_str(), c.description()));
        let reasons = Reason::ALL.iter().map(|r| format!("{}\t{}", r.code(), r.as_str()));
        let shift = u64::from(packed::REASON_SHIFT);
        let high = u64::from(packed::GENERATION_SHIFT);
        let bits = u64::from(packed::BITS);
        let layout = [packed::DOWNGRADED, shift, packed::REASON_MASK, packed::PERMIT, packed::PROBE, high, bits];
        let algorithms = Algorithm::ALL.iter().map(|a| format!("{}\t{}", a.code(), a.as_str()));
        let fields: Vec<&str> = Field::ALL.iter().map(|f| f.json_name()).collect();
        let tables = [
            codes.collect::<Vec<_>>().join("\n"),
            reasons.collect::<Vec<_>>().join("\n"),
            layout.map(|n| n.to_string()).join("\t"),
            fields.join(","),
            crate::table::stats_names().join(","),
            status_names::<sds_agent::Status>(),
            status_names::<sds_cluster::Status>(),
            algorithms.collect::<Vec<_>>().join("\n"),
            KeyTableStats::NAMES.join(","),
        ];
        strings(env, tables.into_iter().map(Some))
    }
}
