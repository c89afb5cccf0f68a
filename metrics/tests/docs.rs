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
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                self.space();
                if self.text.get(self.at) == Some(&b'}') {
                    self.at += 1;
                    return Json::Object(fields);
                }
                loop {
                    self.space();
                    let key = self.string();
                    self.eat(b':');
                    if fields.iter().any(|(k, _)| *k == key) {
                        self.fail(&format!("key {key:?} twice in one object"));
                    }
                    fields.push((key, self.value()));
                    self.space();
                    match self.text.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Json::Object(fields);
                        }
                        _ => self.fail("expected `,` or `}`"),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.text.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Json::Array(items);
                }
                loop {
                    items.push(self.value());
                    self.space();
                    match self.text.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Json::Array(items);
                        }
                        _ => self.fail("expected `,` or `]`"),
                    }
                }
            }
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
