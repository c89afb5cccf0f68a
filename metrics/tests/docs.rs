//! The documentation and the dashboard against `FAMILIES`: README.md's
//! family table (names, types, labels, help), the label values it names,
//! and every PromQL query of README.md and grafana/sds-native.json (metric
//! and label names that exist, and syntax as `promtool check rules` reads
//! it).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sds_core::Reason;
use sds_metrics::{Kind, FAMILIES};

fn crate_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(crate_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The rows of the table under `## Families`, as cells without the
/// outer pipes.
fn family_rows(readme: &str) -> Vec<Vec<String>> {
    let section = readme
        .split("\n## Families\n")
        .nth(1)
        .expect("README.md has a `## Families` section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `sds_"))
        .map(|l| {
            l.trim()
                .trim_start_matches('|')
                .trim_end_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn unquote(cell: &str) -> &str {
    cell.trim_matches('`')
}

#[test]
fn the_readme_table_lists_every_family_as_families_defines_it() {
    let rows = family_rows(&read("README.md"));
    let listed: Vec<String> = rows.iter().map(|r| unquote(&r[0]).to_string()).collect();
    let defined: Vec<String> = FAMILIES.iter().map(|f| f.sample_name()).collect();
    assert_eq!(
        listed, defined,
        "README.md's family table and FAMILIES differ (names or order)"
    );
    for (row, family) in rows.iter().zip(FAMILIES) {
        assert_eq!(
            row.len(),
            4,
            "{}: 4 cells (samples, type, labels, help)",
            family.name
        );
        assert_eq!(row[1], family.kind.as_str(), "{}: type", family.name);
        let labels: Vec<&str> = row[2].split(", ").map(unquote).collect();
        assert_eq!(labels, family.labels, "{}: labels", family.name);
        assert_eq!(row[3], family.help, "{}: help", family.name);
    }
}

#[test]
fn the_readme_names_every_reason_label_value() {
    let readme = read("README.md");
    let labels = readme
        .split("\n## Labels\n")
        .nth(1)
        .expect("README.md has a `## Labels` section");
    for reason in Reason::ALL {
        assert!(
            labels.contains(&format!("`{}`", reason.as_str())),
            "the Labels section lacks reason {}",
            reason.as_str()
        );
    }
}

/// A JSON value, as far as the dashboard needs one.
#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Every string value under `key`, anywhere below.
    fn strings_under(&self, key: &str, out: &mut Vec<String>) {
        match self {
            Json::Object(fields) => {
                for (k, v) in fields {
                    if let (true, Json::Str(s)) = (k == key, v) {
                        out.push(s.clone());
                    }
                    v.strings_under(key, out);
                }
            }
            Json::Array(items) => items.iter().for_each(|v| v.strings_under(key, out)),
            _ => {}
        }
    }
}

/// A strict little JSON parser (RFC 8259 minus surrogate pairs).
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> Json {
        let mut p = Parser {
            text: text.as_bytes(),
            at: 0,
        };
        let value = p.value();
        p.space();
        assert_eq!(p.at, p.text.len(), "trailing text after the JSON value");
        value
    }

    fn fail(&self, what: &str) -> ! {
        let line = self.text[..self.at].iter().filter(|&&b| b == b'\n').count() + 1;
        panic!("dashboard JSON, line {line}: {what}");
    }

    fn space(&mut self) {
        while self.at < self.text.len() && b" \t\r\n".contains(&self.text[self.at]) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) {
        self.space();
        if self.text.get(self.at) != Some(&b) {
            self.fail(&format!("expected `{}`", b as char));
        }
        self.at += 1;
    }

    fn value(&mut self) -> Json {
        self.space();
        match self.text.get(self.at) {
            Some(b'{') => Json::Object(self.items(b'}', |p, fields| {
                p.space();
                let key = p.string();
                p.eat(b':');
                if fields.iter().any(|(k, _)| *k == key) {
                    p.fail(&format!("key {key:?} twice in one object"));
                }
                (key, p.value())
            })),
            Some(b'[') => Json::Array(self.items(b']', |p, _| p.value())),
            Some(b'"') => Json::Str(self.string()),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.at;
                while self.at < self.text.len() && b"+-.eE0123456789".contains(&self.text[self.at])
                {
                    self.at += 1;
                }
                let s = std::str::from_utf8(&self.text[start..self.at]).unwrap();
                Json::Number(s.parse().unwrap_or_else(|_| self.fail("bad number")))
            }
            _ => self.fail("expected a value"),
        }
    }

    /// The items of an object or an array, from its opening byte to
    /// `close`: `item` reads one (it sees those read before it).
    fn items<T>(&mut self, close: u8, mut item: impl FnMut(&mut Self, &[T]) -> T) -> Vec<T> {
        self.at += 1;
        let mut items = Vec::new();
        self.space();
        if self.text.get(self.at) == Some(&close) {
            self.at += 1;
            return items;
        }
        loop {
            let next = item(self, &items);
            items.push(next);
            self.space();
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(&b) if b == close => {
                    self.at += 1;
                    return items;
                }
                _ => self.fail(&format!("expected `,` or `{}`", close as char)),
            }
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Json {
        if !self.text[self.at..].starts_with(word.as_bytes()) {
            self.fail(&format!("expected {word}"));
        }
        self.at += word.len();
        value
    }

    fn string(&mut self) -> String {
        if self.text.get(self.at) != Some(&b'"') {
            self.fail("expected a string");
        }
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.text.get(self.at) {
                None => self.fail("unterminated string"),
                Some(b'"') => {
                    self.at += 1;
                    return String::from_utf8(out).unwrap_or_else(|_| self.fail("not UTF-8"));
                }
                Some(b'\\') => {
                    let c = match self.text.get(self.at + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'u') => {
                            let hex = std::str::from_utf8(&self.text[self.at + 2..self.at + 6])
                                .unwrap_or_else(|_| self.fail("bad \\u escape"));
                            let code = u32::from_str_radix(hex, 16)
                                .unwrap_or_else(|_| self.fail("bad \\u escape"));
                            self.at += 4;
                            char::from_u32(code).unwrap_or_else(|| self.fail("bad \\u escape"))
                        }
                        _ => self.fail("bad escape"),
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    self.at += 2;
                }
                Some(&b) if b < 0x20 => self.fail("control character in a string"),
                Some(&b) => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

/// The metric names (identifiers starting `sds_`) and the label names (in
/// matchers and in `by`, `without`, `on`, `ignoring` lists) of a query.
/// Quoted strings and Grafana's `$variables` are skipped.
fn names(query: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut metrics, mut labels) = (BTreeSet::new(), BTreeSet::new());
    let b = query.as_bytes();
    let mut i = 0;
    // Inside `{...}` (matchers) or a grouping `(...)`: label names expected.
    let mut in_matchers = false;
    let mut in_grouping = false;
    let mut last_ident = String::new();
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'$' => {
                i += 1;
                while i < b.len() && (is_ident_byte(b[i]) || b"{}".contains(&b[i])) {
                    i += 1;
                }
            }
            b'[' => {
                // A range: `[5m]`, `[$__rate_interval]`.
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
            }
            b'{' => {
                in_matchers = true;
                i += 1;
            }
            b'}' => {
                in_matchers = false;
                i += 1;
            }
            b'(' => {
                in_grouping = ["by", "without", "on", "ignoring"].contains(&last_ident.as_str());
                last_ident.clear();
                i += 1;
            }
            b')' => {
                in_grouping = false;
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && is_ident_byte(b[i]) {
                    i += 1;
                }
                let ident = &query[start..i];
                if in_matchers || in_grouping {
                    labels.insert(ident.to_string());
                } else if ident.starts_with("sds_") {
                    metrics.insert(ident.to_string());
                }
                last_ident = ident.to_string();
            }
            b' ' => i += 1,
            _ => {
                last_ident.clear();
                i += 1;
            }
        }
    }
    (metrics, labels)
}

/// Label names a query may use: the families' and those a scrape adds.
fn known_labels() -> BTreeSet<String> {
    let mut known: BTreeSet<String> = FAMILIES
        .iter()
        .flat_map(|f| f.labels.iter().map(|l| l.to_string()))
        .collect();
    for added in ["host", "instance", "job"] {
        known.insert(added.to_string());
    }
    known
}

fn check_names(queries: &[String], source: &str) -> BTreeSet<String> {
    let samples: BTreeSet<String> = FAMILIES.iter().map(|f| f.sample_name()).collect();
    let known = known_labels();
    let mut used = BTreeSet::new();
    for query in queries {
        let (metrics, labels) = names(query);
        for metric in metrics {
            assert!(
                samples.contains(&metric),
                "{source}: `{metric}` is not a family's sample name, in: {query}"
            );
            used.insert(metric);
        }
        for label in labels {
            assert!(
                known.contains(&label),
                "{source}: label `{label}` is no family's (nor host, instance, job), in: {query}"
            );
        }
    }
    used
}

/// `promtool check rules` on the queries as recording rules, Grafana's
/// variables replaced by what they expand to.
fn promtool_parses(queries: &[String], source: &str) {
    let mut rules = String::from("groups:\n  - name: docs\n    rules:\n");
    for (i, q) in queries.iter().enumerate() {
        let q = q
            .replace("$__rate_interval", "1m")
            .replace("$table", ".*")
            .replace("$point", ".*")
            .replace("$limit", ".*");
        let quoted = q
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', " ");
        rules.push_str(&format!(
            "      - record: docs_query_{i}\n        expr: \"{quoted}\"\n"
        ));
    }
    let dir =
        std::env::temp_dir().join(format!("sds-metrics-docs-{}-{source}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rules.yml");
    std::fs::File::create(&file)
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool must be installed (make servers)");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{source}: promtool says\n{said}\n{rules}"
    );
    assert!(
        said.contains(&format!("SUCCESS: {} rules found", queries.len())),
        "{said}"
    );
}

fn dashboard() -> Json {
    Parser::parse(&read("grafana/sds-native.json"))
}

#[test]
fn the_dashboard_queries_only_families_and_promtool_parses_them() {
    let dash = dashboard();
    let mut exprs = Vec::new();
    dash.get("panels")
        .expect("panels")
        .strings_under("expr", &mut exprs);
    assert!(exprs.len() >= 20, "{} queries", exprs.len());
    let used = check_names(&exprs, "grafana/sds-native.json");
    // The panels the dashboard promises are built on these.
    for must in [
        "sds_point_requests_total",
        "sds_point_downgrades_total",
        "sds_point_in_flight",
        "sds_point_in_flight_max",
        "sds_keyed_decisions_total",
        "sds_keyed_keys",
        "sds_keyed_keys_capacity",
        "sds_keyed_lossy_evictions_total",
        "sds_agent_last_pull_success",
        "sds_cluster_lag_seconds",
    ] {
        assert!(used.contains(must), "no panel shows {must}");
    }
    promtool_parses(&exprs, "dashboard");
}

#[test]
fn the_dashboard_has_its_variables_and_schema() {
    let dash = dashboard();
    match dash.get("schemaVersion") {
        Some(Json::Number(v)) => assert!((36.0..=41.0).contains(v), "schemaVersion {v}"),
        other => panic!("schemaVersion: {other:?}"),
    }
    assert!(matches!(dash.get("editable"), Some(Json::Bool(true))));
    let Some(Json::Array(vars)) = dash.get("templating").and_then(|t| t.get("list")) else {
        panic!("templating.list");
    };
    let var = |name: &str| {
        vars.iter()
            .find(|v| matches!(v.get("name"), Some(Json::Str(n)) if n == name))
            .unwrap_or_else(|| panic!("no `{name}` variable"))
    };
    assert!(matches!(var("datasource").get("query"), Some(Json::Str(q)) if q == "prometheus"));
    let mut queries = Vec::new();
    for name in ["table", "point", "limit"] {
        let Some(Json::Str(definition)) = var(name).get("definition") else {
            panic!("{name}: definition");
        };
        assert!(
            definition.starts_with("label_values(") && definition.ends_with(&format!(", {name})")),
            "{name}: {definition}"
        );
        queries.push(definition.clone());
    }
    // label_values(metric{...}, label): the metric is a family's, the label one of its labels.
    for q in &queries {
        let inner = &q["label_values(".len()..q.len() - 1];
        let (selector, label) = inner.rsplit_once(", ").unwrap();
        let metric = selector.split('{').next().unwrap();
        let family = FAMILIES
            .iter()
            .find(|f| f.sample_name() == metric)
            .unwrap_or_else(|| panic!("{q}: `{metric}` is not a family's sample name"));
        assert!(
            family.labels.contains(&label),
            "{q}: {metric} has no label {label}"
        );
    }
    // Every panel reads the chosen data source.
    let mut uids = Vec::new();
    dash.get("panels").unwrap().strings_under("uid", &mut uids);
    assert!(
        !uids.is_empty() && uids.iter().all(|u| u == "${datasource}"),
        "{uids:?}"
    );
}

#[test]
fn the_readme_queries_only_families_and_promtool_parses_them() {
    let readme = read("README.md");
    let mut queries = Vec::new();
    for block in readme.split("```promql\n").skip(1) {
        let block = block.split("```").next().unwrap();
        // Each query follows its `#` comment, up to the next comment or
        // blank line.
        let mut current = String::new();
        for line in block.lines().chain(std::iter::once("")) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                if !current.trim().is_empty() {
                    queries.push(std::mem::take(&mut current));
                }
                current.clear();
            } else {
                current.push_str(line);
                current.push(' ');
            }
        }
    }
    assert!(
        queries.len() >= 10,
        "{} queries: {queries:#?}",
        queries.len()
    );
    check_names(&queries, "README.md");
    promtool_parses(&queries, "readme");
}

#[test]
fn the_name_scanner_finds_metrics_and_labels() {
    let (metrics, labels) = names(
        r#"sum by (table, point) (max by (host, table, point) (rate(sds_point_requests_total{table!="private", point=~"$point"}[$__rate_interval]))) / on (instance) sds_x"#,
    );
    assert_eq!(
        metrics.into_iter().collect::<Vec<_>>(),
        ["sds_point_requests_total", "sds_x"]
    );
    assert_eq!(
        labels.into_iter().collect::<Vec<_>>(),
        ["host", "instance", "point", "table"]
    );
    assert_eq!(Kind::Counter.as_str(), "counter");
}

// ---------------------------------------------------------------------------
// The dashboard's host-wide queries on a real Prometheus server.

mod prometheus_server {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use sds_metrics::{exposition, Exporter, Format, Sources};
    use sds_shm::AnyTable;
    use sds_testkit::{free_port, wait_until, TempDir};

    use super::{Json, Parser};

    /// A worker process as Prometheus sees it: `/metrics` on a loopback
    /// port, from its own exporter over its own handle of a table.
    pub struct Worker {
        pub port: u16,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Worker {
        pub fn serve(table: Arc<AnyTable>) -> Worker {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let port = listener.local_addr().unwrap().port();
            let stop = Arc::new(AtomicBool::new(false));
            let stopping = stop.clone();
            let thread = std::thread::spawn(move || {
                let exporter = Exporter::new();
                while !stopping.load(Ordering::Relaxed) {
                    let Ok((mut conn, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    conn.set_nonblocking(false).unwrap();
                    let mut request = Vec::new();
                    let mut buf = [0; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let sources = Sources {
                        table: Some(&table),
                        ..Sources::default()
                    };
                    let body = exposition(&exporter, &sources, super::now_ms(), Format::Prometheus);
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        Format::Prometheus.content_type(),
                        body.len()
                    );
                }
            });
            Worker {
                port,
                stop,
                thread: Some(thread),
            }
        }
    }

    impl Drop for Worker {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    /// Debian's `prometheus` on a free loopback port with a temporary
    /// directory, scraping every second; killed on drop.
    pub struct Prometheus {
        port: u16,
        child: Child,
        dir: TempDir,
    }

    impl Prometheus {
        /// `hosts`: each host's label and its workers' ports.
        pub fn start(hosts: &[(&str, Vec<u16>)]) -> Prometheus {
            let dir = TempDir::new("metrics-docs-prometheus");
            let mut config = String::from(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: app\n    static_configs:\n",
            );
            for (host, ports) in hosts {
                let targets: Vec<String> =
                    ports.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
                config.push_str(&format!(
                    "      - targets: [{}]\n        labels: {{ host: \"{host}\" }}\n",
                    targets.join(", ")
                ));
            }
            std::fs::write(dir.join("prometheus.yml"), config).unwrap();
            let port = free_port();
            let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
            let child = Command::new("prometheus")
                .arg(format!(
                    "--config.file={}",
                    dir.join("prometheus.yml").display()
                ))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("prometheus must be installed (make servers)");
            Prometheus { port, child, dir }
        }

        fn get(&self, path_and_query: &str) -> Option<String> {
            let mut conn = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
            conn.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            write!(
                conn,
                "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
            .ok()?;
            let mut response = String::new();
            conn.read_to_string(&mut response).ok()?;
            let (head, body) = response.split_once("\r\n\r\n")?;
            head.starts_with("HTTP/1.1 200").then(|| body.to_string())
        }

        /// An instant query: each result's labels and value.
        pub fn query(&self, promql: &str) -> Vec<(Vec<(String, String)>, f64)> {
            let mut encoded = String::new();
            for b in promql.bytes() {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    encoded.push(b as char);
                } else {
                    encoded.push_str(&format!("%{b:02X}"));
                }
            }
            let body = self
                .get(&format!("/api/v1/query?query={encoded}"))
                .unwrap_or_else(|| panic!("query failed: {promql}\n{}", self.log()));
            let json = Parser::parse(&body);
            let Some(Json::Array(results)) = json.get("data").and_then(|d| d.get("result")) else {
                panic!("{body}");
            };
            results
                .iter()
                .map(|r| {
                    let Some(Json::Object(metric)) = r.get("metric") else {
                        panic!("{body}")
                    };
                    let labels = metric
                        .iter()
                        .map(|(k, v)| match v {
                            Json::Str(s) => (k.clone(), s.clone()),
                            _ => panic!("{body}"),
                        })
                        .collect();
                    let Some(Json::Array(value)) = r.get("value") else {
                        panic!("{body}")
                    };
                    let Json::Str(v) = &value[1] else {
                        panic!("{body}")
                    };
                    (labels, v.parse().unwrap())
                })
                .collect()
        }

        pub fn wait_ready(&self, targets: usize) {
            wait_until(
                Duration::from_secs(60),
                "Prometheus to scrape every target",
                || {
                    self.get("/-/ready").is_some()
                        && self
                            .query("count(up == 1)")
                            .first()
                            .is_some_and(|(_, v)| *v as usize == targets)
                },
            );
        }

        fn log(&self) -> String {
            std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
        }
    }

    impl Drop for Prometheus {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The dashboard's queries of the panel titled `title`, variables set to All
/// and `$__rate_interval` to 4 s (4 scrapes, as Grafana sets it at least).
fn panel_queries(dash: &Json, title: &str) -> Vec<String> {
    let Some(Json::Array(panels)) = dash.get("panels") else {
        panic!("panels")
    };
    let panel = panels
        .iter()
        .find(|p| matches!(p.get("title"), Some(Json::Str(t)) if t == title))
        .unwrap_or_else(|| panic!("no panel {title:?}"));
    let mut exprs = Vec::new();
    panel.strings_under("expr", &mut exprs);
    exprs
        .into_iter()
        .map(|e| {
            e.replace("$__rate_interval", "4s")
                .replace("$table", ".*")
                .replace("$point", ".*")
                .replace("$limit", ".*")
        })
        .collect()
}

/// Two hosts, each with two workers on its own shared table file (both
/// files named `sds`) and one process with a private table: Prometheus
/// scrapes all six with a `host` label, and the dashboard's queries give
/// each shared table's numbers once per host, summed over hosts, and the
/// private tables' summed over processes.
#[test]
fn the_dashboard_counts_a_shared_table_once_per_host_on_a_real_prometheus() {
    use prometheus_server::{Prometheus, Worker};
    use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
    use sds_core::{Flags, Outcome, Value};
    use sds_metrics::{keyed_label, register_keyed};
    use sds_shm::{AnyKeys, AnyTable, Options};
    use sds_testkit::TempDir;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let dir = TempDir::new("metrics-docs-hosts");
    // (host, points in its shared table, in flight at `api`; points in its private table)
    let hosts = [("h1", 3, 2, 2), ("h2", 5, 1, 4)];
    let mut tables = Vec::new();
    let mut held = Vec::new();
    let mut workers = Vec::new();
    let mut config = Vec::new();
    for (host, shared_points, in_flight, private_points) in hosts {
        std::fs::create_dir_all(dir.join(host)).unwrap();
        let file = dir.join(host).join("sds");
        let one = Arc::new(AnyTable::shared(&file, 16, &Options::new()).unwrap());
        let two = Arc::new(AnyTable::shared(&file, 16, &Options::new()).unwrap());
        let private = Arc::new(AnyTable::private(8).unwrap());
        one.with_points(|points| {
            for p in 0..shared_points {
                points
                    .insert(
                        if p == 0 {
                            b"api".to_vec()
                        } else {
                            format!("s{p}").into_bytes()
                        }
                        .as_slice(),
                    )
                    .unwrap();
            }
            let api = points.point(points.insert(b"api").unwrap()).unwrap();
            for _ in 0..in_flight {
                held.push((one.clone(), api.enter(now_ms(), Flags::NONE)));
            }
        })
        .unwrap();
        private
            .with_points(|points| {
                for p in 0..private_points {
                    points.insert(format!("p{p}").as_bytes()).unwrap();
                }
                let p0 = points.point(points.insert(b"p0").unwrap()).unwrap();
                held.push((private.clone(), p0.enter(now_ms(), Flags::NONE)));
            })
            .unwrap();
        let ws: Vec<Worker> = [&one, &two, &private]
            .into_iter()
            .map(|t| Worker::serve(t.clone()))
            .collect();
        config.push((host, ws.iter().map(|w| w.port).collect::<Vec<_>>()));
        workers.extend(ws);
        tables.push((one, two, private));
    }
    // Traffic at h1's `api` through one worker's handle: about 1 000 a second.
    let stop = Arc::new(AtomicBool::new(false));
    let traffic = {
        let table = tables[0].0.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            table
                .with_points(|points| {
                    let api = points.point(points.insert(b"api").unwrap()).unwrap();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..100 {
                            let entry = api.enter(now_ms(), Flags::NONE);
                            api.exit(&entry, now_ms(), Outcome::Ok);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                })
                .unwrap();
        })
    };

    // Keyed limits are listed per process, and this one process plays all
    // six workers, so each worker shows both: the shared file's once per
    // host (2 × 3 keys), the unnamed private one once per process (6 × 2).
    let rule = {
        let mut builder = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
        builder.set("limit", Value::Integer(5)).unwrap();
        builder.set("periodMs", Value::Integer(60_000)).unwrap();
        builder.build().unwrap()
    };
    let shared_keys =
        Arc::new(AnyKeys::shared(dir.join("logins"), 64, rule, &Options::new()).unwrap());
    let private_keys = Arc::new(AnyKeys::private(rule, 64).unwrap());
    let private_label = keyed_label(&private_keys, None);
    assert!(private_label.starts_with("private-"), "{private_label}");
    register_keyed(&shared_keys, keyed_label(&shared_keys, None));
    register_keyed(&private_keys, private_label.clone());
    for key in [&b"a"[..], b"b", b"c"] {
        shared_keys.decide(key, now_ms(), 1).unwrap();
    }
    for key in [&b"x"[..], b"y"] {
        private_keys.decide(key, now_ms(), 1).unwrap();
    }

    let prometheus = Prometheus::start(&config);
    prometheus.wait_ready(6);
    // A few more scrapes, so that rate() has samples.
    std::thread::sleep(std::time::Duration::from_secs(5));

    let dash = dashboard();
    let by = |results: Vec<(Vec<(String, String)>, f64)>, label: &str| -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = results
            .into_iter()
            .map(|(labels, v)| {
                let l = labels
                    .iter()
                    .find(|(k, _)| k == label)
                    .map(|(_, v)| v.clone());
                (l.unwrap_or_default(), v)
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let sizes = panel_queries(&dash, "Points in the table and its capacity");
    // 3 + 5 points in the two hosts' `sds` files (each scraped twice), 2 + 4 in private tables.
    assert_eq!(
        by(prometheus.query(&sizes[0]), "table"),
        [("private".to_string(), 6.0), ("sds".to_string(), 8.0)]
    );
    assert_eq!(
        by(prometheus.query(&sizes[1]), "table"),
        [("private".to_string(), 16.0), ("sds".to_string(), 32.0)]
    );
    let in_flight = panel_queries(&dash, "In flight");
    let got = by(prometheus.query(&in_flight[0]), "point");
    assert!(got.contains(&("api".to_string(), 3.0)), "{got:?}");
    assert!(got.contains(&("p0".to_string(), 2.0)), "{got:?}");
    let requests = panel_queries(&dash, "Requests per second");
    let got = by(prometheus.query(&requests[0]), "point");
    let api = got.iter().find(|(p, _)| p == "api").map(|(_, v)| *v);
    // Counted once (about 1 000/s), not once per scraped worker (2 000/s).
    assert!(
        api.is_some_and(|v| (600.0..1_400.0).contains(&v)),
        "api: {api:?} requests a second; {got:?}"
    );
    let keys = panel_queries(&dash, "Resident keys and capacity");
    assert_eq!(
        by(prometheus.query(&keys[0]), "limit"),
        [("logins".to_string(), 6.0), (private_label, 12.0)]
    );
    stop.store(true, Ordering::Relaxed);
    traffic.join().unwrap();
    drop(prometheus);
    drop(workers);
    drop(held);
}
