//! The agent against a console scripted by the test, one generated answer
//! per pull: well-formed answers apply exactly what they say, an answer
//! that is garbled, of the wrong shape, cut short or refused at the HTTP
//! level applies nothing (the table's strategies, the return values and
//! the version held stay as they were) and is logged; the agent never
//! panics or stops pulling.
//!
//! The console is a listener of this test answering each request itself,
//! in lock step with the agent: the agent's next pull comes only after it
//! has applied (or refused) the previous answer, so the state is checked
//! when the next pull arrives. Uploads are answered `{"errorMsg": null}`.
//!
//! Within a well-formed answer each strategy is read on its own
//! (README, "Pull"): a refused entry keeps its point's old strategy and
//! return value while the others apply. The generated entries are refused
//! for reasons the core documents (a threshold that is a string, a
//! fraction or a boolean, a field given twice, a return value that is not
//! a string or given twice, no point name, not an object).
//!
//! Each property runs `PROPTEST_CASES` cases (a few hundred by default);
//! run them long with e.g. `PROPTEST_CASES=100000`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use sds_agent::{Agent, AgentConfig, Level};
use sds_core::Strategy as Rules;
use sds_shm::AnyTable;
use sds_testkit::proptest_config as config;
use serde_json::Value;

/// How long the test waits for the agent's next request.
const PATIENCE: Duration = Duration::from_secs(20);

/// The point names the generated sets use.
const NAMES: [&str; 6] = ["a", "b", "c", "d", "пункт", "x y"];

/// A request the agent sent, read whole.
struct Request {
    path: String,
    /// The `client` form field, as JSON.
    client: Value,
}

fn read_request(stream: &mut TcpStream) -> Request {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).expect("the request's head");
        assert!(n > 0, "the agent closed mid-request");
        data.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(data[..head_end].to_vec()).unwrap();
    let path = head.split(' ').nth(1).unwrap().to_string();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .expect("a Content-Length");
    while data.len() < head_end + length {
        let n = stream.read(&mut chunk).expect("the request's body");
        assert!(n > 0, "the agent closed mid-body");
        data.extend_from_slice(&chunk[..n]);
    }
    let body = std::str::from_utf8(&data[head_end..head_end + length]).unwrap();
    let client = body
        .split('&')
        .find_map(|pair| pair.strip_prefix("client="))
        .expect("the client field");
    Request {
        path,
        client: serde_json::from_str(&form_decoded(client)).unwrap(),
    }
}

/// A form value: `+` is a space, `%XX` a byte.
fn form_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// An HTTP/1.1 response of `status` with `body`, its length given.
fn http(status: u16, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// `body` in chunks of `size` bytes.
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                    Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        .to_vec();
    for piece in body.chunks(size.max(1)) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// What the agent's table and handle show: strategies and return values
/// by point.
#[derive(Clone, Debug, PartialEq)]
struct State {
    strategies: BTreeMap<String, Rules>,
    return_values: BTreeMap<String, String>,
}

/// The agent on a table, the console's listener and the pull the agent is
/// waiting on.
struct Harness {
    listener: TcpListener,
    table: Arc<AnyTable>,
    agent: Agent,
    lines: Arc<Mutex<Vec<(Level, String)>>>,
    pending: Option<(TcpStream, Request)>,
    cases: u64,
}

impl Harness {
    fn start() -> Harness {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut config = AgentConfig::new(url, "group", "app");
        config.ip = Some("10.1.2.3".into());
        config.hostname = Some("test-host".into());
        config.pull_interval_ms = 1;
        config.timeout_ms = 10_000;
        let lines: Arc<Mutex<Vec<(Level, String)>>> = Arc::default();
        let sink = lines.clone();
        config.log = Some(Arc::new(move |level, line: &str| {
            sink.lock().unwrap().push((level, line.to_string()))
        }));
        let table = Arc::new(AnyTable::private(1024).unwrap());
        let agent = Agent::start(table.clone(), config).unwrap();
        Harness {
            listener,
            table,
            agent,
            lines,
            pending: None,
            cases: 0,
        }
    }

    /// The agent's next pull; uploads on the way are answered as stored.
    fn next_pull(&mut self) -> (TcpStream, Request) {
        if let Some(pending) = self.pending.take() {
            return pending;
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    let request = read_request(&mut stream);
                    if request.path == "/sds/heartbeat/pullstrategy" {
                        return (stream, request);
                    }
                    assert_eq!(request.path, "/sds/heartbeat/add");
                    let _ = stream.write_all(&http(200, br#"{"errorMsg":null}"#));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(
                        Instant::now() < deadline && self.agent.is_running(),
                        "no pull within {PATIENCE:?}: {:?}",
                        self.agent.status()
                    );
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(e) => panic!("accept: {e}"),
            }
        }
    }

    fn state(&self) -> State {
        let mut strategies = BTreeMap::new();
        self.table
            .with_points(|t| {
                t.for_each_point(&mut |_, name, point| {
                    if let Some(strategy) = point.strategy() {
                        strategies.insert(String::from_utf8(name.to_vec()).unwrap(), strategy);
                    }
                })
            })
            .unwrap();
        let return_values = NAMES
            .iter()
            .filter_map(|name| Some((name.to_string(), self.agent.return_value(name)?)))
            .collect();
        State {
            strategies,
            return_values,
        }
    }

    /// Stops the agent, first closing the pull it waits on (else the stop
    /// waits for its timeout).
    fn stop(mut self) {
        self.pending = None;
        self.agent.stop();
    }

    fn drain_lines(&self) -> Vec<(Level, String)> {
        std::mem::take(&mut *self.lines.lock().unwrap())
    }

    /// Answers the agent's pull with `answer`; returns the state before,
    /// the version held before, and, once the agent pulls again, the state
    /// and version after and what it logged meanwhile.
    fn exchange(&mut self, answer: &[u8]) -> Exchange {
        let (mut stream, request) = self.next_pull();
        let before = self.state();
        let held_before = request.client["version"].as_i64().unwrap();
        self.drain_lines();
        // The agent may have closed already on a cut answer: not an error.
        let _ = stream.write_all(answer);
        let _ = stream.flush();
        drop(stream);
        let (stream, request) = self.next_pull();
        let held_after = request.client["version"].as_i64().unwrap();
        self.pending = Some((stream, request));
        self.cases += 1;
        Exchange {
            before,
            held_before,
            after: self.state(),
            held_after,
            lines: self.drain_lines(),
            pull_ok: self.agent.status().last_pull_ok,
        }
    }
}

struct Exchange {
    before: State,
    held_before: i64,
    after: State,
    held_after: i64,
    lines: Vec<(Level, String)>,
    pull_ok: bool,
}

impl Exchange {
    /// The answer was refused whole: nothing changed, and a warning says
    /// the pull failed.
    fn refused_whole(&self) -> Result<(), TestCaseError> {
        prop_assert_eq!(&self.after, &self.before);
        prop_assert_eq!(self.held_after, self.held_before);
        prop_assert!(!self.pull_ok);
        prop_assert!(
            self.lines.iter().any(|(level, line)| *level == Level::Warn
                && line.starts_with("SDS strategy pull failed: ")),
            "{:?}",
            self.lines
        );
        Ok(())
    }
}

/// The fields a generated strategy sets, with values the core accepts.
const FIELDS: [(&str, i64, i64); 5] = [
    ("visitThreshold", 0, 1_000_000_000),
    ("concurrentThreshold", 0, 100_000),
    ("exceptionThreshold", 0, 100_000),
    ("timeoutThreshold", 1, 600_000),
    ("downgradeRate", 0, 100),
];

/// A JSON member: its key and its value's text.
type Member = (String, String);

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// One entry of a set.
#[derive(Clone, Debug)]
enum Entry {
    /// Accepted: the point's strategy and return value.
    Valid {
        name: String,
        rules: Rules,
        return_value: Option<String>,
        members: Vec<Member>,
    },
    /// Refused, for the point `name` when it has one.
    Refused { name: Option<String>, text: String },
}

impl Entry {
    fn text(&self) -> String {
        match self {
            Entry::Valid { members, .. } => object(members),
            Entry::Refused { text, .. } => text.clone(),
        }
    }
}

fn object(members: &[Member]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(key, value)| format!("{}: {value}", json_string(key)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// A valid strategy's members (in any order, with the console's own keys
/// and nulls for defaults) and the strategy they give.
fn valid_members() -> impl Strategy<Value = (Rules, Vec<Member>)> {
    let field = |(key, low, high): (&'static str, i64, i64)| {
        prop_oneof![
            2 => Just(None),
            1 => Just(Some((key, None))),
            3 => (low..=high).prop_map(move |v| Some((key, Some(v)))),
        ]
    };
    (
        FIELDS.map(field),
        prop::option::of(0i64..1_000_000),
        any::<bool>(),
    )
        .prop_map(|(fields, id, scheme)| {
            let mut rules = Rules::DEFAULT;
            let mut members = Vec::new();
            for (key, value) in fields.into_iter().flatten() {
                if let Some(v) = value {
                    rules.set(sds_core::Field::from_json_name(key).unwrap(), v);
                }
                members.push((
                    key.to_string(),
                    value.map_or("null".to_string(), |v| v.to_string()),
                ));
            }
            if let Some(id) = id {
                members.push(("id".into(), id.to_string()));
            }
            if scheme {
                members.push(("sdsSchemeName".into(), "\"default\"".into()));
            }
            (rules, members)
        })
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES.to_vec()).prop_map(str::to_string)
}

fn return_value() -> impl Strategy<Value = Option<Option<String>>> {
    prop_oneof![
        Just(None),
        Just(Some(None)),
        "\\PC{0,12}".prop_map(|s| Some(Some(s))),
        "[\"\\\\\\n\u{0}\u{7f}\u{2028}]{0,4}".prop_map(|s| Some(Some(s))),
    ]
}

fn valid_entry() -> impl Strategy<Value = Entry> {
    (name(), valid_members(), return_value()).prop_flat_map(
        |(name, (rules, mut members), value)| {
            members.push(("point".into(), json_string(&name)));
            if let Some(value) = &value {
                members.push((
                    "returnValueStr".into(),
                    value.as_deref().map_or("null".into(), json_string),
                ));
            }
            let return_value = value.flatten();
            Just(members)
                .prop_shuffle()
                .prop_map(move |members| Entry::Valid {
                    name: name.clone(),
                    rules,
                    return_value: return_value.clone(),
                    members,
                })
        },
    )
}

/// Entries the agent refuses, each for a documented reason.
fn refused_entry() -> impl Strategy<Value = Entry> {
    let named = (name(), valid_members(), 0usize..6).prop_map(|(name, (_, mut members), how)| {
        members.push(("point".into(), json_string(&name)));
        match how {
            0 => members.push(("visitThreshold".into(), "\"5\"".into())),
            1 => members.push(("concurrentThreshold".into(), "1.5".into())),
            2 => members.push(("exceptionThreshold".into(), "true".into())),
            3 => {
                members.push(("visitThreshold".into(), "1".into()));
                members.push(("visitThreshold".into(), "2".into()));
            }
            4 => members.push(("returnValueStr".into(), "7".into())),
            _ => {
                members.push(("returnValueStr".into(), "\"x\"".into()));
                members.push(("returnValueStr".into(), "\"y\"".into()));
            }
        }
        Entry::Refused {
            name: Some(name),
            text: object(&members),
        }
    });
    let nameless = prop_oneof![
        Just("{\"visitThreshold\": 3}".to_string()),
        Just("{\"point\": \"\", \"visitThreshold\": 3}".to_string()),
        Just("{\"point\": null}".to_string()),
        Just("[]".to_string()),
        Just("\"a\"".to_string()),
        Just("7".to_string()),
        Just("null".to_string()),
    ]
    .prop_map(|text| Entry::Refused { name: None, text });
    prop_oneof![3 => named, 1 => nameless]
}

fn entries() -> impl Strategy<Value = Vec<Entry>> {
    proptest::collection::vec(prop_oneof![4 => valid_entry(), 1 => refused_entry()], 0..7)
}

/// The state after applying `entries` to `before`.
fn expected(before: &State, entries: &[Entry]) -> State {
    let mut deciding: BTreeMap<&str, (&Rules, &Option<String>)> = BTreeMap::new();
    let mut named: BTreeSet<&str> = BTreeSet::new();
    for entry in entries {
        match entry {
            Entry::Valid {
                name,
                rules,
                return_value,
                ..
            } => {
                deciding.insert(name, (rules, return_value));
                named.insert(name);
            }
            Entry::Refused {
                name: Some(name), ..
            } => {
                named.insert(name);
            }
            Entry::Refused { name: None, .. } => {}
        }
    }
    let mut after = State {
        strategies: BTreeMap::new(),
        return_values: BTreeMap::new(),
    };
    for name in &named {
        match deciding.get(name) {
            Some((rules, value)) => {
                after.strategies.insert(name.to_string(), **rules);
                if let Some(value) = value {
                    after.return_values.insert(name.to_string(), value.clone());
                }
            }
            // Every entry of the point refused: it keeps what it had.
            None => {
                if let Some(rules) = before.strategies.get(*name) {
                    after.strategies.insert(name.to_string(), *rules);
                }
                if let Some(value) = before.return_values.get(*name) {
                    after.return_values.insert(name.to_string(), value.clone());
                }
            }
        }
    }
    after
}

/// A well-formed answer.
#[derive(Clone, Debug)]
struct Answer {
    changed: Option<bool>,
    version: Option<i64>,
    /// `None`: `"strategies": null`, the empty set.
    entries: Option<Vec<Entry>>,
    error_msg: Option<Option<&'static str>>,
    /// How the body goes: whole, or in chunks of this size.
    chunks: Option<usize>,
}

impl Answer {
    fn body(&self) -> String {
        let mut members: Vec<Member> = vec![("sdsSchemeName".into(), "\"default\"".into())];
        if let Some(changed) = self.changed {
            members.push(("changed".into(), changed.to_string()));
        }
        members.push((
            "version".into(),
            self.version.map_or("null".into(), |v| v.to_string()),
        ));
        let list = match &self.entries {
            None => "null".to_string(),
            Some(entries) => {
                let texts: Vec<String> = entries.iter().map(Entry::text).collect();
                format!("[{}]", texts.join(","))
            }
        };
        members.push(("strategies".into(), list));
        if let Some(message) = self.error_msg {
            members.push((
                "errorMsg".into(),
                message.map_or("null".into(), json_string),
            ));
        }
        object(&members)
    }

    fn response(&self) -> Vec<u8> {
        match self.chunks {
            None => http(200, self.body().as_bytes()),
            Some(size) => chunked(self.body().as_bytes(), size),
        }
    }
}

fn answer() -> impl Strategy<Value = Answer> {
    (
        prop_oneof![8 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
        prop_oneof![
            4 => (0i64..1000).prop_map(Some),
            1 => any::<i64>().prop_map(Some),
            1 => Just(None),
        ],
        prop_oneof![8 => entries().prop_map(Some), 1 => Just(None)],
        prop_oneof![Just(None), Just(Some(None)), Just(Some(Some("")))],
        prop_oneof![4 => Just(None), 1 => (1usize..40).prop_map(Some)],
    )
        .prop_map(|(changed, version, entries, error_msg, chunks)| Answer {
            changed,
            version,
            entries,
            error_msg,
            chunks,
        })
}

/// A well-formed answer's body spoiled so that the whole answer must be
/// refused, with why.
fn spoiled(answer: &Answer, how: usize, at: usize, byte: u8) -> (Vec<u8>, String) {
    let body = answer.body();
    let with = |key: &str, value: &str| {
        // The answer's own member removed, the spoiled one put first.
        let value_of: Value = serde_json::from_str(&body).unwrap();
        let mut members: Vec<Member> = vec![(key.to_string(), value.to_string())];
        for (k, v) in value_of.as_object().unwrap() {
            if k != key {
                members.push((k.clone(), v.to_string()));
            }
        }
        http(200, object(&members).as_bytes())
    };
    let wrong_changed = ["\"true\"", "1", "[]", "{}"];
    let wrong_version = ["\"3\"", "1.5", "1e30", "true", "9223372036854775808", "[1]"];
    let wrong_strategies = ["{}", "\"[]\"", "3", "true"];
    let wrong_error = [
        "42",
        "true",
        "{}",
        "[\"x\"]",
        "\"boom\"",
        "\"console down\"",
    ];
    match how {
        0 => {
            let cut = at % body.len();
            (
                http(200, &body.as_bytes()[..cut]),
                format!("body cut at {cut}"),
            )
        }
        1 => {
            let full = answer.response();
            // A chunked body lacking only its last, empty chunk is read as
            // whole (see the test below): cut before that chunk.
            let ends = match answer.chunks {
                Some(_) => full.len() - b"0\r\n\r\n".len(),
                None => full.len(),
            };
            let cut = at % ends;
            (full[..cut].to_vec(), format!("response cut at {cut}"))
        }
        2 => {
            let value = wrong_changed[at % wrong_changed.len()];
            (with("changed", value), format!("changed {value}"))
        }
        3 => {
            let value = wrong_version[at % wrong_version.len()];
            (with("version", value), format!("version {value}"))
        }
        4 => {
            let value = wrong_strategies[at % wrong_strategies.len()];
            let mut spoiled = answer.clone();
            spoiled.changed = Some(true);
            let body = spoiled.body();
            let value_of: Value = serde_json::from_str(&body).unwrap();
            let mut members: Vec<Member> = vec![("strategies".into(), value.into())];
            for (k, v) in value_of.as_object().unwrap() {
                if k != "strategies" {
                    members.push((k.clone(), v.to_string()));
                }
            }
            (
                http(200, object(&members).as_bytes()),
                format!("strategies {value}"),
            )
        }
        5 => {
            let value = wrong_error[at % wrong_error.len()];
            (with("errorMsg", value), format!("errorMsg {value}"))
        }
        6 => {
            // A member given twice.
            let key = ["changed", "version", "strategies", "errorMsg"][at % 4];
            let value_of: Value = serde_json::from_str(&body).unwrap();
            let twice = match value_of.get(key) {
                Some(value) => format!("{{{}: {value}, {}", json_string(key), &body[1..]),
                None => format!("{{{0}: null, {0}: null, {1}", json_string(key), &body[1..]),
            };
            (http(200, twice.as_bytes()), format!("{key} twice"))
        }
        7 => {
            // Arrays were read as the fields in order (protocol.rs).
            let top = [
                "[]",
                "[true, 1, []]",
                "[null]",
                "null",
                "\"ok\"",
                "7",
                "true",
                "[{}]",
                "",
            ];
            let top = top[at % top.len()];
            (http(200, top.as_bytes()), format!("top level {top:?}"))
        }
        8 => {
            // Not UTF-8: bytes that are in no UTF-8 text (a continuation
            // byte put for another inside a character would be).
            let mut bytes = body.into_bytes();
            let i = at % bytes.len();
            bytes[i] = [0xc0, 0xc1, 0xf5, 0xf8, 0xfe, 0xff][byte as usize % 6];
            (http(200, &bytes), format!("byte {i} not UTF-8"))
        }
        9 => {
            let status = [201, 204, 301, 302, 400, 404, 500, 503][at % 8];
            let response = if status == 204 {
                b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_vec()
            } else {
                http(status, body.as_bytes())
            };
            (response, format!("HTTP status {status}"))
        }
        10 => {
            // A length announced past what comes.
            let mut response = http(200, body.as_bytes());
            let head = format!("Content-Length: {}\r\n", body.len());
            let more = format!("Content-Length: {}\r\n", body.len() + 1 + at % 100);
            let text = String::from_utf8(response.clone()).unwrap();
            response = text.replacen(&head, &more, 1).into_bytes();
            (response, "Content-Length past the body".into())
        }
        _ => {
            // Chunked, cut before the end of its last data chunk (cut
            // after it, the body is whole: see the test below).
            let full = chunked(body.as_bytes(), 1 + at % 16);
            let cut = full.len() - 6 - at % (full.len() - 6).min(40);
            (full[..cut].to_vec(), format!("chunked cut at {cut}"))
        }
    }
}

fn check_applied(answer: &Answer, exchange: &Exchange) -> Result<(), TestCaseError> {
    prop_assert!(exchange.pull_ok, "{:?}", exchange.lines);
    let failed: Vec<_> = exchange
        .lines
        .iter()
        .filter(|(_, line)| line.starts_with("SDS strategy pull failed"))
        .collect();
    prop_assert!(failed.is_empty(), "{:?}", failed);
    if answer.changed != Some(true) {
        prop_assert_eq!(&exchange.after, &exchange.before);
        prop_assert_eq!(exchange.held_after, exchange.held_before);
        return Ok(());
    }
    let no_entries = Vec::new();
    let entries = answer.entries.as_ref().unwrap_or(&no_entries);
    prop_assert_eq!(&exchange.after, &expected(&exchange.before, entries));
    prop_assert_eq!(exchange.held_after, answer.version.unwrap_or(-1));
    // One warning per refused entry (unless the set equals the one in
    // force on a console whose version is null: not applied again).
    let refused = entries
        .iter()
        .filter(|e| matches!(e, Entry::Refused { .. }))
        .count();
    let warned = exchange
        .lines
        .iter()
        .filter(|(level, line)| *level == Level::Warn && line.starts_with("SDS strategy refused"))
        .count();
    let skipped = answer.version.is_none() && exchange.held_before == -1;
    prop_assert!(
        warned == refused || (skipped && warned == 0),
        "{} refused, {} warned: {:?}",
        refused,
        warned,
        exchange.lines
    );
    Ok(())
}

/// Runs `cases` of `strategy` against one agent, each case one pull.
fn run<S: Strategy>(
    default_cases: u32,
    strategy: S,
    case: impl Fn(&mut Harness, S::Value) -> Result<(), TestCaseError>,
) {
    let harness = RefCell::new(Harness::start());
    let mut runner = TestRunner::new(config(default_cases));
    let result = runner.run(&strategy, |value| case(&mut harness.borrow_mut(), value));
    let harness = harness.into_inner();
    let pulls = harness.cases;
    harness.stop();
    if let Err(e) = result {
        panic!("{e} (after {pulls} pulls)");
    }
}

#[test]
fn well_formed_answers_apply_exactly_their_strategies() {
    run(150, answer(), |harness, answer| {
        let exchange = harness.exchange(&answer.response());
        check_applied(&answer, &exchange)
    });
}

#[test]
fn spoiled_answers_apply_nothing() {
    // A set first, so that there is something to keep; then spoiled
    // answers, each also after a good one that changes the set.
    let strategy = (answer(), answer(), 0usize..12, any::<usize>(), any::<u8>());
    run(100, strategy, |harness, (first, second, how, at, byte)| {
        let exchange = harness.exchange(&first.response());
        check_applied(&first, &exchange)?;
        let (response, what) = spoiled(&second, how, at, byte);
        let exchange = harness.exchange(&response);
        exchange.refused_whole().map_err(|e| {
            TestCaseError::fail(format!(
                "{what}: {e}\n{:?}",
                String::from_utf8_lossy(&response)
            ))
        })
    });
}

#[test]
fn an_answer_cut_at_any_byte_applies_nothing() {
    let mut harness = Harness::start();
    let set = Answer {
        changed: Some(true),
        version: Some(7),
        entries: None,
        error_msg: None,
        chunks: None,
    };
    let first = harness.exchange(&set.response());
    check_applied(&set, &first).unwrap();
    let body = r#"{"changed": true, "version": 8, "strategies": [{"point": "a", "visitThreshold": 1, "returnValueStr": "r"}], "errorMsg": null}"#;
    let chunks = chunked(body.as_bytes(), 7);
    // ureq ends a chunked body at the connection's end after a whole
    // chunk, without the last (empty) chunk: cut within that last chunk,
    // the body read is the whole body, which may apply. Cut anywhere
    // before, the JSON is unclosed and refused.
    let body_ends = chunks.len() - b"0\r\n\r\n".len();
    for (response, whole_from) in [
        (http(200, body.as_bytes()), usize::MAX),
        (chunks.clone(), body_ends),
    ] {
        for cut in 0..response.len() {
            let exchange = harness.exchange(&response[..cut]);
            let refused = exchange.refused_whole();
            if cut >= whole_from && refused.is_err() {
                let entries = [Entry::Valid {
                    name: "a".into(),
                    rules: Rules {
                        visit_threshold: 1,
                        ..Rules::DEFAULT
                    },
                    return_value: Some("r".into()),
                    members: Vec::new(),
                }];
                assert_eq!(exchange.after, expected(&exchange.before, &entries));
                assert_eq!(exchange.held_after, 8);
                harness.exchange(&set.response());
                continue;
            }
            if let Err(e) = refused {
                panic!(
                    "cut at {cut} of {:?}: {e}",
                    String::from_utf8_lossy(&response)
                );
            }
        }
        let exchange = harness.exchange(&response);
        assert_eq!(exchange.held_after, 8);
        assert_eq!(exchange.after.return_values["a"], "r");
        let reset = harness.exchange(&set.response());
        assert_eq!(reset.held_after, 7);
    }
    harness.stop();
}
