//! An instance of a service for the Redis Cluster tests: a private table
//! in this process with its own `Cluster` (its own syncer thread), points
//! with a threshold never reached, and helpers to count and time visits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use sds_cluster::{Cluster, Config};
use sds_shm::AnyTable;

use super::points::{on_point, table_with, timed_visits};

pub struct Instance {
    pub table: Arc<AnyTable>,
    pub cluster: Cluster,
}

impl Instance {
    pub fn new(urls: &[String], names: &[String], sync_ms: u64) -> Instance {
        let table = table_with(names, r#"{"visitThreshold": 1000000000}"#);
        let mut config = Config::new("");
        config.urls = urls.to_vec();
        config.redis_cluster = true;
        config.points = names.to_vec();
        config.sync_ms = sync_ms;
        config.timeout_ms = 300;
        config.max_backoff_ms = 400;
        let cluster = Cluster::start(table.clone(), config).unwrap();
        Instance { table, cluster }
    }

    /// `n` enter + exit on `name` now, each timed (ns).
    pub fn visit(&self, name: &str, n: u32) -> Vec<u64> {
        timed_visits(&self.table, name, n)
    }

    /// (own visits, others' visits as of the last sync) of `second`.
    pub fn visits(&self, name: &str, second: u64) -> (u64, u64) {
        on_point(&self.table, name, |point| {
            (
                point.local_counts(second).visit,
                point.remote_counts(second).visit,
            )
        })
    }
}

/// Each instance sees the other's visits (3 by `a`, 5 by `b` per point,
/// since `first_second`) after two syncs of each.
pub fn visit_and_meet(a: &Instance, b: &Instance, names: &[String], first_second: u64) {
    for name in names {
        a.visit(name, 3);
        b.visit(name, 5);
    }
    sync_both_twice(a, b);
    let now_s = sds_clock::now_ms() / 1000;
    for name in names {
        let seen = |i: &Instance| {
            (first_second..=now_s)
                .map(|s| i.visits(name, s))
                .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
        };
        assert_eq!(seen(a), (3, 5), "{name} on instance a");
        assert_eq!(seen(b), (5, 3), "{name} on instance b");
    }
}

/// Two instances on `urls` syncing `names` every 50 ms, which have met
/// ([`visit_and_meet`]), under [`Traffic`]; and the run's first second.
pub fn met_under_traffic(urls: &[String], names: &[String]) -> (Traffic, u64) {
    let (a, b) = (
        Instance::new(urls, names, 50),
        Instance::new(urls, names, 50),
    );
    let first_second = sds_clock::now_ms() / 1000;
    visit_and_meet(&a, &b, names, first_second);
    (Traffic::start(a, b, names), first_second)
}

/// Two syncs of each instance, in turn: each has pushed all it counted and
/// read all the other pushed.
pub fn sync_both_twice(a: &Instance, b: &Instance) {
    for _ in 0..2 {
        a.cluster.sync_now().unwrap();
        b.cluster.sync_now().unwrap();
    }
}

/// Per point and second since `first_second`: Redis holds both instances'
/// visits once (`in_redis(name, second, [own of a, own of b])` reads the
/// total, and may check more of the key), and each instance's remote counts
/// of the last 10 seconds are the other's own. The run stayed inside the
/// ring and counted over 1000 visits per point.
pub fn assert_every_count_stored(
    (a, b): (&Instance, &Instance),
    names: &[String],
    first_second: u64,
    in_redis: impl Fn(&str, u64, [u64; 2]) -> u64,
) {
    let now_s = sds_clock::now_ms() / 1000;
    assert!(
        now_s - first_second < 25,
        "the run must stay inside the ring"
    );
    for name in names {
        let (mut local, mut stored) = (0, 0);
        for s in first_second..=now_s {
            let ((own_a, others_a), (own_b, others_b)) = (a.visits(name, s), b.visits(name, s));
            let total = in_redis(name, s, [own_a, own_b]);
            assert_eq!(total, own_a + own_b, "{name} second {s}");
            if s + 9 >= now_s {
                assert_eq!((others_a, others_b), (own_b, own_a), "{name} second {s}");
            }
            local += own_a + own_b;
            stored += total;
        }
        println!("{name}: visits counted {local}, in the cluster {stored}");
        assert!(local > 1_000, "{name}: {local}");
    }
}

/// Enter + exit on every point of both instances in a thread, each timed,
/// until [`Traffic::stop`]; paused between rounds by [`Traffic::pause`].
pub struct Traffic {
    instances: Arc<(Instance, Instance)>,
    times: Arc<Mutex<Vec<u64>>>,
    running: Arc<Mutex<bool>>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Traffic {
    pub fn start(a: Instance, b: Instance, names: &[String]) -> Traffic {
        let instances = Arc::new((a, b));
        let times = Arc::new(Mutex::new(Vec::new()));
        let running = Arc::new(Mutex::new(true));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (instances, times, running, stop, names) = (
                instances.clone(),
                times.clone(),
                running.clone(),
                stop.clone(),
                names.to_vec(),
            );
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    {
                        // A round in progress holds the lock: `pause` waits for it.
                        let running = running.lock().unwrap();
                        if *running {
                            for name in &names {
                                let mut t = instances.0.visit(name, 1);
                                t.extend(instances.1.visit(name, 1));
                                times.lock().unwrap().extend(t);
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_micros(500));
                }
            })
        };
        Traffic {
            instances,
            times,
            running,
            stop,
            thread: Mutex::new(Some(thread)),
        }
    }

    pub fn instances(&self) -> (&Instance, &Instance) {
        (&self.instances.0, &self.instances.1)
    }

    /// The times (ns) taken since the last call.
    pub fn take(&self) -> Vec<u64> {
        std::mem::take(&mut *self.times.lock().unwrap())
    }

    /// Pauses (`true`) or resumes the traffic; a pause returns once no
    /// round is in progress.
    pub fn pause(&self, paused: bool) {
        *self.running.lock().unwrap() = !paused;
    }

    /// Stops the thread; then both instances sync twice, so all the
    /// traffic counted is pushed and read.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.lock().unwrap().take();
        thread.unwrap().join().unwrap();
        let (a, b) = self.instances();
        sync_both_twice(a, b);
    }
}
