//! The agent's log lines into Java's logging (`AdminAgent.log`, which hands
//! them to `io.sdsnative.Log`).
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

use jni::objects::{JClass, JValue};
use jni::refs::Global;
use jni::strings::JNIStr;
use jni::sys::{JavaVMAttachArgs, JNI_OK, JNI_VERSION_1_4};
use jni::{jni_sig, jni_str, Env, JavaVM};
use sds_agent::{AgentConfig, Level, LogFn};

use crate::boundary::Fail;

/// The JVM name of the agent's thread while it logs.
const THREAD_NAME: &CStr = c"sds-agent";

/// Where an agent's lines go: a static `log(int level, String line)` of a
/// class found by the Java call that started the agent (so with its class
/// loader, which the agent's thread has none of).
pub(crate) struct JvmLog {
    vm: JavaVM,
    class: Global<JClass<'static>>,
    /// `sds-agent <group>/<app>: `, telling one agent's lines from another's.
    prefix: String,
}

impl JvmLog {
    pub(crate) fn new(env: &mut Env, class: &JNIStr, config: &AgentConfig) -> Result<JvmLog, Fail> {
        let local = env.find_class(class)?;
        Ok(JvmLog {
            vm: env.get_java_vm()?,
            class: env.new_global_ref(&local)?,
            prefix: format!("sds-agent {}/{}: ", config.app_group, config.app_name),
        })
    }

    pub(crate) fn into_log_fn(self) -> LogFn {
        Arc::new(move |level, line: &str| self.line(level, line))
    }

    fn line(&self, level: Level, line: &str) {
        let text = format!("{}{line}", self.prefix);
        // A line that cannot be logged is dropped: the status keeps the error.
        let _ = catch_unwind(AssertUnwindSafe(|| self.send(level, &text)));
    }

    fn send(&self, level: Level, text: &str) {
        // SAFETY: the VM pointer comes from a live JVM (the library is loaded
        // into it and never unloaded).
        let Some(attached_here) = (unsafe { attach_as_daemon(&self.vm) }) else {
            return;
        };
        let _ = self
            .vm
            .with_local_frame(4, |env| -> jni::errors::Result<()> {
                let line = env.new_string(text)?;
                let called = env.call_static_method(
                    &self.class,
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
            unsafe { ((*(*self.vm.get_raw())).v1_2.DetachCurrentThread)(self.vm.get_raw()) };
        }
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
