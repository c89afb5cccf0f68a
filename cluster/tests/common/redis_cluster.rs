//! A real 3-master Redis Cluster on loopback (no replicas), made with
//! `redis-cli --cluster create`, plain or TLS-only.

use std::time::Duration;

use sds_testkit::{free_port, wait_until, Redis, Tls};

const CLUSTER_ARGS: &[&str] = &[
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "1000",
    "--cluster-require-full-coverage",
    "no",
];

/// Three masters, slots spread by `redis-cli --cluster create`; with
/// `tls`, the nodes speak only TLS, to clients and to each other.
pub fn start_cluster(tls: Option<Tls>) -> Vec<Redis> {
    let mut args = CLUSTER_ARGS.to_vec();
    if tls.is_some() {
        args.extend(["--tls-cluster", "yes"]);
    }
    let nodes: Vec<Redis> = (0..3)
        .map(|_| Redis::start_full(free_port(), &args, tls.clone()))
        .collect();
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let mut command = std::process::Command::new("redis-cli");
    if let Some(tls) = &tls {
        command.arg("--tls").arg("--cacert").arg(&tls.ca);
    }
    let out = command
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "redis-cli --cluster create: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    for node in &nodes {
        wait_for_ok(node);
    }
    nodes
}

pub fn wait_for_ok(node: &Redis) {
    wait_until(Duration::from_secs(15), "cluster_state:ok", || {
        node.cli(&["CLUSTER", "INFO"])
            .is_some_and(|info| info.contains("cluster_state:ok"))
    });
}

/// The port of the master serving `key`'s slot.
pub fn owner(nodes: &[Redis], key: &str) -> u16 {
    let slot: u32 = nodes[0]
        .cli(&["CLUSTER", "KEYSLOT", key])
        .unwrap()
        .parse()
        .unwrap();
    let table = nodes[0].cli(&["CLUSTER", "NODES"]).unwrap();
    for line in table.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let port: u16 = fields[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
        for range in &fields[8..] {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            if (lo.parse::<u32>().unwrap()..=hi.parse().unwrap()).contains(&slot) {
                return port;
            }
        }
    }
    panic!("no master serves slot {slot}")
}

/// One point name per master: for each master's port, the first name
/// `p0, p1, ...` whose hash tag (`{sds:name}`) lands on it.
pub fn one_point_per_master(nodes: &[Redis]) -> std::collections::BTreeMap<u16, String> {
    points_per_master(nodes, 1)
        .into_iter()
        .map(|(port, mut names)| (port, names.remove(0)))
        .collect()
}

/// `n` point names per master: for each master's port, the first `n`
/// names `p0, p1, ...` whose hash tags (`{sds:name}`) land on it.
pub fn points_per_master(
    nodes: &[Redis],
    n: usize,
) -> std::collections::BTreeMap<u16, Vec<String>> {
    let mut by_port = std::collections::BTreeMap::<u16, Vec<String>>::new();
    for i in 0.. {
        let name = format!("p{i}");
        let names = by_port
            .entry(owner(nodes, &format!("{{sds:{name}}}:0")))
            .or_default();
        if names.len() < n {
            names.push(name);
        }
        if by_port.len() == nodes.len() && by_port.values().all(|v| v.len() == n) {
            break;
        }
    }
    by_port
}
