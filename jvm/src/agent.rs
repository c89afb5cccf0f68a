//! `io.sdsnative.AdminAgent`'s native side: the SDS console agent
//! (`sds-agent`) for a client's table. The translation only: what the agent
//! takes, does and refuses is the agent crate's. The start, status, stop and
//! free are the services' (`service.rs`).
//!
//! Its log lines go into Java's logging (`AdminAgent.log`, which hands them
//! to `io.sdsnative.Log`).
//!
//! The agent calls its log on its own native thread. For each line that
//! thread is attached to the JVM as a **daemon** thread named `sds-agent` and
//! detached again: the JVM never waits for it at exit and never sees it
//! between lines. At JVM shutdown an attach fails (the line is dropped) or a
//! call into Java blocks until the process ends, as the JVM does with every
//! daemon thread in native code; nothing here can abort the process (panics
//! are caught, exceptions cleared).

use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::sync::Arc;

use jni::objects::{JClass, JObject, JString, JValue};
use jni::refs::Global;
use jni::sys::{jlong, JavaVMAttachArgs, JNI_OK, JNI_VERSION_1_4};
use jni::{jni_sig, jni_str, Env, JavaVM};
use sds_agent::{AgentConfig, Level, LogFn, StartError};
use sds_core::ErrorCode;

use crate::boundary::{setup_native, Fail};
use crate::service::{with_running, Running};
use crate::strategy::text_of;

impl From<StartError> for Fail {
    fn from(e: StartError) -> Fail {
        Fail::Sds(ErrorCode::InvalidArgument, e.to_string())
    }
}

setup_native! {
    /// The console's `returnValueStr` for `point`; `null` when it has none.
    fn Java_io_sdsnative_Native_agentReturnValue(
        env, handle: jlong, _owner: JObject<'l>, point: JString<'l>,
    ) -> JString<'l> {
        let point = text_of(env, &point)?;
        // SAFETY: the Java `AdminAgent` passes its own handle and itself as
        // owner (see `with_running`).
        let value = unsafe {
            with_running(handle, |running| match running {
                Running::Agent(agent) => Ok(agent.return_value(&point)),
                Running::Cluster(_) => Err(Fail::code(ErrorCode::InvalidArgument)),
            })
        }?;
        Ok(match value {
            Some(value) => env.new_string(value)?,
            None => JString::null(),
        })
    }
}

/// The JVM name of the agent's thread while it logs.
const THREAD_NAME: &CStr = c"sds-agent";

/// The agent's log: each line, prefixed `sds-agent <group>/<app>: ` (telling
/// one agent's lines from another's), to the static `log(int level, String
/// line)` of `AdminAgent`, found here by the Java call that starts the agent
/// (so with its class loader, which the agent's thread has none of).
pub(crate) fn log_fn(env: &mut Env, config: &AgentConfig) -> Result<LogFn, Fail> {
    let local = env.find_class(jni_str!("io/sdsnative/AdminAgent"))?;
    let class = env.new_global_ref(&local)?;
    let vm = env.get_java_vm()?;
    let prefix = format!("sds-agent {}/{}: ", config.app_group, config.app_name);
    Ok(Arc::new(move |level, line: &str| {
        let text = format!("{prefix}{line}");
        // A line that cannot be logged is dropped: the status keeps the error.
        let _ = catch_unwind(AssertUnwindSafe(|| send(&vm, &class, level, &text)));
    }))
}

fn send(vm: &JavaVM, class: &Global<JClass<'static>>, level: Level, text: &str) {
    // SAFETY: the VM pointer comes from a live JVM (the library is loaded
    // into it and never unloaded).
    let Some(attached_here) = (unsafe { attach_as_daemon(vm) }) else {
        return;
    };
    let _ = vm.with_local_frame(4, |env| -> jni::errors::Result<()> {
        let line = env.new_string(text)?;
        let called = env.call_static_method(
            class,
            jni_str!("log"),
            jni_sig!("(ILjava/lang/String;)V"),
            &[JValue::Int(level as i32), JValue::Object(&line)],
        );
        if env.exception_check() {
            env.exception_clear();
        }
        called.map(drop)
    });
    if attached_here {
        // SAFETY: this thread attached itself above and holds no JNI
        // reference any more (the local frame is popped).
        unsafe { ((*(*vm.get_raw())).v1_2.DetachCurrentThread)(vm.get_raw()) };
    }
}

/// Attaches this thread as a daemon unless it is attached already: whether
/// it attached it, or `None` if it cannot be attached (the JVM is ending).
///
/// # Safety
/// `vm` is the JVM this library runs in.
unsafe fn attach_as_daemon(vm: &JavaVM) -> Option<bool> {
    let raw = vm.get_raw();
    let mut env: *mut c_void = null_mut();
    // SAFETY: the invocation interface of a live JVM (JNI >= 1.4).
    unsafe {
        if ((*(*raw)).v1_2.GetEnv)(raw, &mut env, JNI_VERSION_1_4) == JNI_OK {
            return Some(false);
        }
        let mut args = JavaVMAttachArgs {
            version: JNI_VERSION_1_4,
            name: THREAD_NAME.as_ptr().cast_mut(),
            group: null_mut(),
        };
        let attached = ((*(*raw)).v1_4.AttachCurrentThreadAsDaemon)(
            raw,
            &mut env,
            (&mut args as *mut JavaVMAttachArgs).cast(),
        );
        (attached == JNI_OK).then_some(true)
    }
}
