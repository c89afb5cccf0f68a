//! `rediss://`: a redis-server speaking only TLS, with a certificate of a CA
//! made by the test (`tools/test-pki.sh`). Two instances trusting that CA
//! share a limit; one trusting another CA is refused and decides locally;
//! a server asking for client certificates takes ours and refuses a client
//! without one; a TLS-only Redis Cluster carries the counts of points on
//! every master; bad TLS files are refused at start.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::points::{admit, table_with, wait_first_sync};
use common::redis_cluster::{one_point_per_master, start_cluster};
use common::{Redis, TempDir, Tls};
use sds_cluster::{Cluster, Config, Error};
use sds_shm::AnyTable;

fn config(url: &str, ca: &Path) -> Config {
    let mut config = Config::new(url);
    config.points = vec!["pay".into()];
    config.sync_ms = 3_600_000; // syncs by hand after the first
    config.timeout_ms = 2_000;
    config.tls_ca_file = Some(ca.to_path_buf());
    config
}

struct Instance {
    table: Arc<AnyTable>,
    cluster: Cluster,
}

/// An instance on `config`'s points (each at 10 visits a second) whose
/// clock reads `now`; started without waiting for its first sync.
fn start(config: Config, now: &Arc<AtomicU64>) -> Instance {
    let table = table_with(&config.points, r#"{"visitThreshold": 10}"#);
    let read = now.clone();
    let clock: sds_cluster::Clock = Arc::new(move || read.load(Ordering::SeqCst));
    let cluster = Cluster::start_with(table.clone(), config, clock).unwrap();
    Instance { table, cluster }
}

/// [`start`], once the first sync was tried.
fn instance(config: Config, now: &Arc<AtomicU64>) -> Instance {
    let instance = start(config, now);
    wait_first_sync(&instance.cluster);
    instance
}

impl Instance {
    fn admit(&self, tries: u32, now_ms: u64) -> u32 {
        admit(&self.table, "pay", tries, now_ms)
    }
}

fn present() -> (Arc<AtomicU64>, u64) {
    let t = sds_clock::now_ms() / 1000 * 1000;
    (Arc::new(AtomicU64::new(t)), t)
}

#[test]
fn two_instances_share_a_limit_over_tls() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path());
    let ca = tls.ca.clone();
    let redis = Redis::start_tls(tls);
    assert!(redis.url().starts_with("rediss://"));
    let (now, t) = present();
    let a = instance(config(&redis.url(), &ca), &now);
    let b = instance(config(&redis.url(), &ca), &now);

    assert_eq!(a.admit(6, t + 100), 6);
    a.cluster.sync_now().unwrap();
    b.cluster.sync_now().unwrap();
    assert_eq!(b.admit(10, t + 200), 4, "10 cluster-wide");
    b.cluster.sync_now().unwrap();
    let key = format!("{{sds:pay}}:{}", t / 1000);
    assert_eq!(redis.hget(&key, "v"), 16);
    assert_eq!(redis.hget(&key, "d"), 6);
    let s = b.cluster.status();
    assert!(s.connected && s.last_error.is_none(), "{s:?}");

    // Exact mode over the same TLS configuration: Redis decides.
    let d = a.cluster.enter_exact("pay", t + 300).unwrap();
    assert!(d.exact && !d.admitted, "{d:?}");
}

#[test]
fn a_server_of_another_ca_is_refused_and_decisions_stay_local() {
    let dir = TempDir::new("tls");
    let server = Tls::generate(&dir.path().join("server"));
    let other = Tls::generate(&dir.path().join("other"));
    let redis = Redis::start_tls(server);
    let (now, t) = present();
    let a = instance(config(&redis.url(), &other.ca), &now);

    let refused = a.cluster.sync_now();
    assert!(matches!(refused, Err(Error::Redis(_))), "{refused:?}");
    assert_eq!(
        refused.unwrap_err().code(),
        sds_core::ErrorCode::Unavailable
    );
    let s = a.cluster.status();
    assert!(!s.connected && s.syncs == 0, "{s:?}");
    let error = s.last_error.unwrap();
    assert!(error.contains("UnknownIssuer"), "{error}");
    assert_eq!(a.admit(12, t + 100), 10, "the local limit");
    let d = a.cluster.enter_exact("pay", t + 200).unwrap();
    assert!(!d.exact && !d.admitted, "{d:?}");
    assert_eq!(redis.hget(&format!("{{sds:pay}}:{}", t / 1000), "v"), 0);
}

#[test]
fn mutual_tls_shows_the_client_certificate_and_a_client_without_one_is_refused() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path()).mutual();
    let redis = Redis::start_tls(tls.clone());
    let (now, t) = present();

    let mut with_cert = config(&redis.url(), &tls.ca);
    with_cert.tls_cert_file = Some(tls.client_cert.clone());
    with_cert.tls_key_file = Some(tls.client_key.clone());
    let a = instance(with_cert, &now);
    assert_eq!(a.admit(3, t + 100), 3);
    a.cluster.sync_now().unwrap();
    assert_eq!(redis.hget(&format!("{{sds:pay}}:{}", t / 1000), "v"), 3);
    assert!(a.cluster.status().connected);

    let b = instance(config(&redis.url(), &tls.ca), &now);
    assert!(matches!(b.cluster.sync_now(), Err(Error::Redis(_))));
    let s = b.cluster.status();
    assert!(
        !s.connected && s.syncs == 0 && s.last_error.is_some(),
        "{s:?}"
    );
    assert_eq!(b.admit(10, t + 200), 10, "its own local limit only");
}

#[test]
fn a_tls_redis_cluster_carries_the_counts_of_every_master() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path());
    let nodes = start_cluster(Some(tls.clone()));
    let names: Vec<String> = one_point_per_master(&nodes).into_values().collect();
    let (now, t) = present();
    let instance = || {
        let mut config = config(&nodes[0].url(), &tls.ca);
        config.urls = nodes.iter().map(Redis::url).collect();
        config.redis_cluster = true;
        config.points = names.clone();
        start(config, &now)
    };
    let (a, b) = (instance(), instance());
    for point in &names {
        assert_eq!(admit(&a.table, point, 6, t + 100), 6);
    }
    a.cluster.sync_now().unwrap();
    b.cluster.sync_now().unwrap();
    for point in &names {
        assert_eq!(
            admit(&b.table, point, 10, t + 200),
            4,
            "{point}: 10 cluster-wide"
        );
    }
    b.cluster.sync_now().unwrap();
    for point in &names {
        let key = format!("{{sds:{point}}}:{}", t / 1000);
        let stored: u64 = nodes.iter().map(|n| n.hget(&key, "v")).sum();
        assert_eq!(stored, 16, "{key}");
    }
    let s = b.cluster.status();
    assert!(
        s.connected && s.points == 3 && s.points_failing == 0,
        "{s:?}"
    );
}

fn refusal(config: Config) -> String {
    let table = Arc::new(AnyTable::private(8).unwrap());
    match Cluster::start(table, config) {
        Err(Error::InvalidConfig(message)) => message,
        other => panic!("not refused: {:?}", other.map(|_| ())),
    }
}

#[test]
fn unreadable_or_misplaced_tls_files_are_refused_at_start() {
    let missing = PathBuf::from("/nonexistent/sds-ca.pem");
    let message = refusal(config("rediss://127.0.0.1:1", &missing));
    assert!(
        message.starts_with("tls_ca_file /nonexistent/sds-ca.pem: No such file"),
        "{message}"
    );

    let dir = TempDir::new("tls");
    let tls = Tls::generate(dir.path());
    let message = refusal(config("redis://127.0.0.1:1", &tls.ca));
    assert!(
        message.contains("urls[0]") && message.contains("rediss://"),
        "{message}"
    );

    // A CA file that holds no certificate (here: a key) is named as such.
    let message = refusal(config("rediss://127.0.0.1:1", &tls.key));
    assert_eq!(
        message,
        format!(
            "tls_ca_file {}: holds no PEM certificate",
            tls.key.display()
        )
    );

    let mut half = config("rediss://127.0.0.1:1", &tls.ca);
    half.tls_cert_file = Some(tls.client_cert.clone());
    assert!(refusal(half).contains("tls_key_file"));

    let mut not_a_key = config("rediss://127.0.0.1:1", &tls.ca);
    not_a_key.tls_cert_file = Some(tls.client_cert.clone());
    not_a_key.tls_key_file = Some(tls.ca.clone());
    let message = refusal(not_a_key);
    assert!(message.starts_with("TLS files: "), "{message}");

    let mut mutual = config("rediss://127.0.0.1:1", &tls.ca);
    mutual.tls_cert_file = Some(tls.client_cert);
    mutual.tls_key_file = Some(tls.client_key);
    let table = Arc::new(AnyTable::private(8).unwrap());
    assert!(Cluster::start(table, mutual).is_ok());
}

#[test]
fn a_tls_file_that_is_no_regular_file_is_refused_and_never_blocks_a_reconnect() {
    let dir = TempDir::new("tls");
    let tls = Tls::generate(&dir.path().join("pki"));
    let fifo = dir.path().join("ca.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    assert_eq!(
        refusal(config("rediss://127.0.0.1:1", &fifo)),
        format!(
            "tls_ca_file {}: not a regular file (a FIFO)",
            fifo.display()
        )
    );
    let mut zero = config("rediss://127.0.0.1:1", &tls.ca);
    zero.tls_cert_file = Some(PathBuf::from("/dev/zero"));
    zero.tls_key_file = Some(tls.client_key.clone());
    assert_eq!(
        refusal(zero),
        "tls_cert_file /dev/zero: not a regular file (a character device)"
    );

    // A CA file swapped for a FIFO after start: the reconnect refuses it.
    let ca = dir.path().join("ca.pem");
    std::fs::copy(&tls.ca, &ca).unwrap();
    let redis = Redis::start_tls(tls);
    let (now, _) = present();
    let a = instance(config(&redis.url(), &ca), &now);
    a.cluster.sync_now().unwrap();
    std::fs::remove_file(&ca).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&ca).status();
    assert!(made.unwrap().success());
    let _ = redis.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
    let started = std::time::Instant::now();
    let mut last = String::new();
    for _ in 0..3 {
        if let Err(e) = a.cluster.sync_now() {
            last = e.to_string();
        }
    }
    let took = started.elapsed();
    println!("3 syncs with the CA file a FIFO: {took:?}, {last}");
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    assert_eq!(
        last,
        format!(
            "redis: connect: tls_ca_file {}: not a regular file (a FIFO)",
            ca.display()
        )
    );
    assert!(!a.cluster.status().connected);
    a.cluster.stop();
}
