//! `stop` joins the agent's thread promptly: at once while it sleeps,
//! within one timeout while a server never answers; from the agent's own
//! log callback it detaches instead of joining itself; the status stays
//! readable after it. One test in its own binary, so counting this
//! process's agent threads counts only its own.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{wait_until, FakeConsole};
use sds_agent::{Agent, AgentConfig};
use sds_shm::AnyTable;

/// The threads of this process named "sds-agent".
fn agent_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|task| {
            let comm = task.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|name| name.trim() == "sds-agent")
        })
        .count()
}

#[test]
fn stop_joins_promptly_and_leaves_no_thread() {
    let fake = FakeConsole::start();
    let table = Arc::new(AnyTable::private(4).unwrap());
    let mut config = AgentConfig::new(fake.url(), "g", "a");
    config.ip = Some("10.0.0.1".into());

    // Sleeping between pulls (5 s by default).
    let agent = Agent::start(table.clone(), config.clone()).unwrap();
    wait_until(Duration::from_secs(10), "a pull", || {
        agent.status().last_pull_ms > 0
    });
    assert_eq!(agent_threads(), 1);
    let before = agent.status();
    let start = Instant::now();
    agent.stop();
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(agent_threads(), 0);
    assert!(!agent.is_running());
    agent.stop(); // idempotent
                  // The last state stays readable.
    assert_eq!(agent.status(), before);
    assert!(
        before.last_pull_ms > 0 && before.pull_failures == 1,
        "{before:?}"
    );

    // Inside a request the server never answers (timeout 1000 ms).
    fake.mode("hang", "hang");
    fake.reset();
    let agent = Agent::start(table.clone(), config.clone()).unwrap();
    wait_until(Duration::from_secs(10), "a pull in flight", || {
        !fake.pulls().is_empty()
    });
    let start = Instant::now();
    agent.stop();
    let took = start.elapsed();
    assert!(took < Duration::from_millis(1_000 + 300), "{took:?}");
    assert_eq!(agent_threads(), 0);

    // Dropping the handle stops it too.
    drop(Agent::start(table.clone(), config.clone()).unwrap());
    assert_eq!(agent_threads(), 0);

    // Stopped, and the last handle dropped, from its own log callback (the
    // first line: the pull refused, the app is unknown).
    fake.mode("ok", "ok");
    let slot: Arc<Mutex<Option<Agent>>> = Arc::default();
    let returned = Arc::new(AtomicBool::new(false));
    let mut own = config.clone();
    let (in_callback, flag) = (slot.clone(), returned.clone());
    own.log = Some(Arc::new(move |_, _: &str| {
        let agent = in_callback.lock().unwrap().take();
        if let Some(agent) = agent {
            agent.stop();
            drop(agent);
            flag.store(true, Ordering::SeqCst);
        }
    }));
    *slot.lock().unwrap() = Some(Agent::start(table, own).unwrap());
    wait_until(Duration::from_secs(10), "stop from the callback", || {
        returned.load(Ordering::SeqCst)
    });
    wait_until(Duration::from_secs(10), "the thread ended", || {
        agent_threads() == 0
    });
    fake.assert_no_violation();
}
