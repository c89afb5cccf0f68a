//! `Client.metrics()` and `Client.prometheusText()`'s natives: the client's
//! [`Exporter`] behind a handle, and its collections (`sds_metrics`) of the
//! client's table, its console agent and cluster sync, and the process's
//! keyed limits (`keys.rs` lists them).
//!
//! A collection crosses as three arrays ([`flat`]): the distinct texts
//! once each (a point's name is in many samples), an `int[]` that lays
//! out the families by index into those texts, and the samples' values as
//! a `double[]`. Nothing is named here: every family's name, type, help
//! and label names come from `sds_metrics::FAMILIES` through the
//! collection.
//!
//! A service's state is read from its live handle; once it is closed (its
//! handle freed) from what the client kept at its close
//! (`metricsKeepStopped`), so a stopped agent still shows `_up` 0.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use jni::objects::{JObject, JObjectArray, JString};
use jni::sys::{jboolean, jclass, jlong, JNIEnv};
use jni::{jni_str, Env};
use sds_core::{time, ErrorCode};
use sds_metrics::{Collected, Exporter, Format, ServiceState, Sources};
use sds_shm::AnyTable;

use crate::boundary::{setup_native, Fail};
use crate::handle::{borrow, free, into_handle};
use crate::service::{service, Running};

/// A client's exporter and the last state of its services stopped.
#[derive(Default)]
pub(crate) struct Metrics {
    exporter: Exporter,
    stopped_agent: Mutex<Option<ServiceState<sds_agent::Status>>>,
    stopped_cluster: Mutex<Option<ServiceState<sds_cluster::Status>>>,
}

/// A service's state now, whichever it is.
enum State {
    Agent(ServiceState<sds_agent::Status>),
    Cluster(ServiceState<sds_cluster::Status>),
}

fn state(running: &Running) -> State {
    match running {
        Running::Agent(agent) => State::Agent(ServiceState {
            status: agent.status(),
            running: agent.is_running(),
        }),
        Running::Cluster(cluster) => State::Cluster(ServiceState {
            status: cluster.status(),
            running: cluster.is_running(),
        }),
    }
}

/// The state of the service of `handle` (0: the one kept at its stop).
///
/// # Safety
/// `handle` is 0 or a live service handle its Java owner keeps alive.
unsafe fn service_state<S: Clone>(
    handle: jlong,
    kept: &Mutex<Option<ServiceState<S>>>,
    of: impl FnOnce(State) -> Option<ServiceState<S>>,
) -> Result<Option<ServiceState<S>>, Fail> {
    if handle == 0 {
        return Ok(kept.lock().unwrap_or_else(PoisonError::into_inner).clone());
    }
    // SAFETY: see the function's contract.
    let running = unsafe { service(handle) }?;
    of(state(running))
        .map(Some)
        .ok_or(Fail::code(ErrorCode::InvalidArgument))
}

/// The client's metrics and table, and the services of the live handles
/// `agent` and `cluster` (0: none, or the one kept).
///
/// # Safety
/// The Java `Client` passes its own handles with itself as owner, and the
/// service handles (0 or live) with their objects as owners: none is freed
/// during the call.
unsafe fn with_sources<T>(
    metrics: jlong,
    table: jlong,
    agent: jlong,
    cluster: jlong,
    f: impl FnOnce(&Metrics, &Sources<'_>) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY (each): see the function's contract.
    let metrics = unsafe { borrow::<Metrics>(metrics) }.map_err(Fail::code)?;
    let table = unsafe { borrow::<AnyTable>(table) }.map_err(Fail::code)?;
    let agent = unsafe {
        service_state(agent, &metrics.stopped_agent, |s| match s {
            State::Agent(a) => Some(a),
            State::Cluster(_) => None,
        })
    }?;
    let cluster = unsafe {
        service_state(cluster, &metrics.stopped_cluster, |s| match s {
            State::Cluster(c) => Some(c),
            State::Agent(_) => None,
        })
    }?;
    let sources = Sources {
        table: Some(table),
        agent,
        cluster,
    };
    f(metrics, &sources)
}

/// A collection as three arrays: the distinct texts, the layout (for each
/// family with samples: its name, type and help as indexes into the texts,
/// its label count `k`, its sample count `n`, its `k` label names, then each
/// sample's `k` label values) and the `n` values of each family in turn.
struct Flat<'a> {
    texts: Vec<&'a str>,
    index: HashMap<&'a str, i32>,
    layout: Vec<i32>,
    values: Vec<f64>,
}

impl<'a> Flat<'a> {
    fn text(&mut self, text: &'a str) {
        let next = self.texts.len() as i32;
        let i = *self.index.entry(text).or_insert(next);
        if i == next {
            self.texts.push(text);
        }
        self.layout.push(i);
    }
}

fn flat(collected: &[Collected]) -> Flat<'_> {
    let mut out = Flat {
        texts: Vec::new(),
        index: HashMap::new(),
        layout: Vec::new(),
        values: Vec::new(),
    };
    for c in collected.iter().filter(|c| !c.samples.is_empty()) {
        let family = c.family;
        out.text(family.name);
        out.text(family.kind.as_str());
        out.text(family.help);
        out.layout.push(family.labels.len() as i32);
        out.layout.push(c.samples.len() as i32);
        for label in family.labels {
            out.text(label);
        }
        for sample in &c.samples {
            for value in &sample.labels {
                out.text(value);
            }
            out.values.push(sample.value);
        }
    }
    out
}

/// A Java `Object[]` of the [`Flat`] arrays: `String[]`, `int[]`, `double[]`.
fn to_java<'l>(env: &mut Env<'l>, flat: &Flat<'_>) -> Result<JObjectArray<'l>, Fail> {
    let texts = env.new_object_array(
        flat.texts.len() as i32,
        jni_str!("java/lang/String"),
        JObject::null(),
    )?;
    for (i, text) in flat.texts.iter().enumerate() {
        let s = env.new_string(text)?;
        texts.set_element(env, i, &s)?;
        // Thousands of texts: each local reference is let go at once.
        env.delete_local_ref(s);
    }
    let layout = env.new_int_array(flat.layout.len())?;
    layout.set_region(env, 0, &flat.layout)?;
    let values = env.new_double_array(flat.values.len())?;
    values.set_region(env, 0, &flat.values)?;
    let out = env.new_object_array(3, jni_str!("java/lang/Object"), JObject::null())?;
    out.set_element(env, 0, &texts)?;
    out.set_element(env, 1, &layout)?;
    out.set_element(env, 2, &values)?;
    Ok(out)
}

setup_native! {
    /// A client's metrics: a new exporter.
    fn Java_io_sdsnative_Native_metricsNew(_env) -> jlong {
        Ok(into_handle(Metrics::default()))
    }

    /// Keeps the last state of the stopped service `service`: the client's
    /// collections show it (not running) until it gives another.
    fn Java_io_sdsnative_Native_metricsKeepStopped(
        _env, metrics: jlong, _owner: JObject<'l>, service_handle: jlong, _service: JObject<'l>,
    ) {
        // SAFETY: the Java `Client` passes its own handle and itself as
        // owner, and the service's live handle with the service as owner.
        let metrics = unsafe { borrow::<Metrics>(metrics) }.map_err(Fail::code)?;
        let running = unsafe { service(service_handle) }?;
        match state(running) {
            State::Agent(a) => *metrics.stopped_agent.lock().unwrap_or_else(PoisonError::into_inner) = Some(a),
            State::Cluster(c) => *metrics.stopped_cluster.lock().unwrap_or_else(PoisonError::into_inner) = Some(c),
        }
        Ok(())
    }

    /// Every family with samples at `now_ms`, as [`to_java`] gives them.
    fn Java_io_sdsnative_Native_metricsCollect(
        env, metrics: jlong, _owner: JObject<'l>, table: jlong,
        agent: jlong, _agent_owner: JObject<'l>, cluster: jlong, _cluster_owner: JObject<'l>,
        now_ms: jlong,
    ) -> JObjectArray<'l> {
        let now_ms = time::from_i64(now_ms)?;
        // SAFETY: see `with_sources`; the Java `Client` keeps its contract.
        unsafe {
            with_sources(metrics, table, agent, cluster, |m, sources| {
                to_java(env, &flat(&m.exporter.collect(sources, now_ms)))
            })
        }
    }

    /// The Prometheus text (0.0.4), or OpenMetrics 1.0 text, of a collection.
    fn Java_io_sdsnative_Native_metricsText(
        env, metrics: jlong, _owner: JObject<'l>, table: jlong,
        agent: jlong, _agent_owner: JObject<'l>, cluster: jlong, _cluster_owner: JObject<'l>,
        now_ms: jlong, open_metrics: jboolean,
    ) -> JString<'l> {
        let now_ms = time::from_i64(now_ms)?;
        let format = format(open_metrics);
        // SAFETY: as in `metricsCollect`.
        let text = unsafe {
            with_sources(metrics, table, agent, cluster, |m, sources| {
                Ok(sds_metrics::exposition(&m.exporter, sources, now_ms, format))
            })
        }?;
        Ok(env.new_string(text)?)
    }

    /// The HTTP `Content-Type` of `metricsText`'s format.
    fn Java_io_sdsnative_Native_metricsContentType(env, open_metrics: jboolean) -> JString<'l> {
        Ok(env.new_string(format(open_metrics).content_type())?)
    }
}

fn format(open_metrics: jboolean) -> Format {
    if open_metrics {
        Format::OpenMetrics
    } else {
        Format::Prometheus
    }
}

/// Frees a client's metrics (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_metricsFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per handle, by its `NativeHandle` once no call is
    // using it.
    let _ = std::panic::catch_unwind(|| unsafe { free::<Metrics>(handle) });
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_metrics::{Sample, FAMILIES};

    #[test]
    fn a_collection_lays_out_each_text_once() {
        let sample = |labels: &[&str], value| Sample {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            value,
        };
        let requests = &FAMILIES[0];
        let collected = [
            Collected {
                family: requests,
                samples: vec![sample(&["t", "a"], 3.0), sample(&["t", "b"], 4.5)],
            },
            Collected {
                family: &FAMILIES[1],
                samples: vec![],
            },
        ];
        let f = flat(&collected);
        let [name, kind, help, table, point] = [0, 1, 2, 3, 4];
        // Label names of `requests` are `table` and `point`, the texts 3 and
        // 4; the sample values "t" (5), "a" (6) and "b" (7).
        assert_eq!(
            f.texts,
            [
                requests.name,
                "counter",
                requests.help,
                "table",
                "point",
                "t",
                "a",
                "b"
            ]
        );
        assert_eq!(f.layout, [name, kind, help, 2, 2, table, point, 5, 6, 5, 7]);
        assert_eq!(f.values, [3.0, 4.5]);
    }
}
