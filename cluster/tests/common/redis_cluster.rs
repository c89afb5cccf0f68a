//! A real Redis Cluster on loopback, made with `redis-cli --cluster
//! create`: 3 masters without replicas (plain or TLS-only), or masters with
//! one replica each (for failovers).

use std::collections::BTreeMap;
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
    create(3, 0, tls)
}

/// `masters` masters with one replica each (`--cluster-replicas 1`),
/// returned once every replica's link to its master is up. Which node is
/// which: [`master_ports`], [`replica_of`].
pub fn start_cluster_with_replicas(masters: usize) -> Vec<Redis> {
    let nodes = create(masters * 2, 1, None);
    for node in &nodes {
        if role(node).as_deref() == Some("slave") {
            wait_until(Duration::from_secs(15), "the replica's link up", || {
                node.cli(&["INFO", "replication"])
                    .is_some_and(|info| info.contains("master_link_status:up"))
            });
        }
    }
    assert_eq!(master_ports(&nodes).len(), masters);
    nodes
}

fn create(count: usize, replicas: usize, tls: Option<Tls>) -> Vec<Redis> {
    let mut args = CLUSTER_ARGS.to_vec();
    if tls.is_some() {
        args.extend(["--tls-cluster", "yes"]);
    }
    let nodes: Vec<Redis> = (0..count)
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
        .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
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

/// `args` asked of the first node that answers (a killed node does not).
fn ask(nodes: &[Redis], args: &[&str]) -> String {
    nodes
        .iter()
        .find_map(|n| n.cli(args))
        .unwrap_or_else(|| panic!("no node answers {args:?}"))
}

/// A line of `CLUSTER NODES`.
struct Node {
    port: u16,
    id: String,
    flags: String,
    /// Its master's id (`-` for a master).
    master: String,
    slots: Vec<(u32, u32)>,
}

impl Node {
    fn is_master(&self) -> bool {
        self.flags.contains("master")
    }
}

/// `CLUSTER NODES` as seen by the first node that answers.
fn cluster_nodes(nodes: &[Redis]) -> Vec<Node> {
    ask(nodes, &["CLUSTER", "NODES"])
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let slots = fields[8..]
                .iter()
                .filter(|range| !range.starts_with('['))
                .map(|range| {
                    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                    (lo.parse().unwrap(), hi.parse().unwrap())
                })
                .collect();
            Node {
                port: fields[1].split(['@', ':']).nth(1).unwrap().parse().unwrap(),
                id: fields[0].to_string(),
                flags: fields[2].to_string(),
                master: fields[3].to_string(),
                slots,
            }
        })
        .collect()
}

/// The ports of the masters that serve slots, ascending.
pub fn master_ports(nodes: &[Redis]) -> Vec<u16> {
    let mut ports: Vec<u16> = cluster_nodes(nodes)
        .into_iter()
        .filter(|n| n.is_master() && !n.slots.is_empty())
        .map(|n| n.port)
        .collect();
    ports.sort_unstable();
    ports
}

/// The port of the replica of the master on `master_port`.
pub fn replica_of(nodes: &[Redis], master_port: u16) -> u16 {
    let table = cluster_nodes(nodes);
    let master = table.iter().find(|n| n.port == master_port).unwrap();
    table
        .iter()
        .find(|n| n.flags.contains("slave") && n.master == master.id)
        .unwrap_or_else(|| panic!("no replica of {master_port}"))
        .port
}

/// `master` or `slave` (the first line of `ROLE`); `None` if it does not
/// answer.
pub fn role(node: &Redis) -> Option<String> {
    node.cli(&["ROLE"])
        .and_then(|r| r.lines().next().map(str::to_string))
}

/// The port of the master serving `key`'s slot.
pub fn owner(nodes: &[Redis], key: &str) -> u16 {
    let slot: u32 = ask(nodes, &["CLUSTER", "KEYSLOT", key]).parse().unwrap();
    cluster_nodes(nodes)
        .into_iter()
        .find(|n| n.is_master() && n.slots.iter().any(|&(lo, hi)| (lo..=hi).contains(&slot)))
        .unwrap_or_else(|| panic!("no master serves slot {slot}"))
        .port
}

/// One point name per master: for each master's port, the first name
/// `p0, p1, ...` whose hash tag (`{sds:name}`) lands on it.
pub fn one_point_per_master(nodes: &[Redis]) -> BTreeMap<u16, String> {
    points_per_master(nodes, 1)
        .into_iter()
        .map(|(port, mut names)| (port, names.remove(0)))
        .collect()
}

/// `n` point names per master: for each master's port, the first `n`
/// names `p0, p1, ...` whose hash tags (`{sds:name}`) land on it.
pub fn points_per_master(nodes: &[Redis], n: usize) -> BTreeMap<u16, Vec<String>> {
    let masters = master_ports(nodes).len();
    let mut by_port = BTreeMap::<u16, Vec<String>>::new();
    for i in 0.. {
        let name = format!("p{i}");
        let names = by_port
            .entry(owner(nodes, &format!("{{sds:{name}}}:0")))
            .or_default();
        if names.len() < n {
            names.push(name);
        }
        if by_port.len() == masters && by_port.values().all(|v| v.len() == n) {
            break;
        }
    }
    by_port
}

/// Waits until `replica` has applied everything `master` has written
/// (its `slave_repl_offset` reaches the master's `master_repl_offset`).
/// Then, if nothing writes to `master` meanwhile, killing it loses nothing.
pub fn wait_replicated(master: &Redis, replica: &Redis) {
    let offset = |node: &Redis, field: &str| -> Option<u64> {
        let info = node.cli(&["INFO", "replication"])?;
        let line = info.lines().find(|l| l.starts_with(field))?;
        line[field.len()..].trim().parse().ok()
    };
    wait_until(Duration::from_secs(5), "the replica in sync", || {
        let written = offset(master, "master_repl_offset:");
        written.is_some() && written == offset(replica, "slave_repl_offset:")
    });
}
