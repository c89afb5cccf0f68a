//! The Prometheus text format (0.0.4) and OpenMetrics 1.0 text of a
//! collection: written straight from the tables ([`exposition`]) or from
//! what [`Exporter::collect`] gathered ([`render`]).

use std::fmt::Write;

use crate::collect::{Collected, Exporter, Sink, Sources};
use crate::family::{Family, Id, Kind, FAMILIES};

/// Which text exposition format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`: ends in `# EOF`.
    OpenMetrics,
}

impl Format {
    /// The HTTP `Content-Type` of this format.
    pub const fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A client's exposition: the collection written as it is read, family by
/// family, with no sample kept on the way.
pub fn exposition(
    exporter: &Exporter,
    sources: &Sources<'_>,
    now_ms: u64,
    format: Format,
) -> String {
    let mut text = Text::new();
    exporter.visit(sources, now_ms, &mut text);
    text.finish(format)
}

/// `families` in `format`; a family without samples is left out.
pub fn render(families: &[Collected], format: Format) -> String {
    let mut text = Text::new();
    for collected in families {
        let id = FAMILIES
            .iter()
            .position(|f| f == collected.family)
            .expect("a family of FAMILIES");
        for sample in &collected.samples {
            let labels: Vec<&str> = sample.labels.iter().map(String::as_str).collect();
            text.line(id, &labels, sample.value);
        }
    }
    text.finish(format)
}

/// The sample lines of each family, in [`FAMILIES`]' order.
struct Text {
    bodies: Vec<String>,
    sample_names: Vec<String>,
}

impl Text {
    fn new() -> Text {
        Text {
            bodies: vec![String::new(); FAMILIES.len()],
            sample_names: FAMILIES.iter().map(Family::sample_name).collect(),
        }
    }

    fn line(&mut self, family: usize, labels: &[&str], value: f64) {
        let out = &mut self.bodies[family];
        out.push_str(&self.sample_names[family]);
        if !labels.is_empty() {
            out.push('{');
            for (i, (name, value)) in FAMILIES[family].labels.iter().zip(labels).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(name);
                out.push_str("=\"");
                escape_label(out, value);
                out.push('"');
            }
            out.push('}');
        }
        out.push(' ');
        number(out, value);
        out.push('\n');
    }

    fn finish(self, format: Format) -> String {
        let size = self.bodies.iter().map(|b| b.len() + 256).sum::<usize>() + 8;
        let mut out = String::with_capacity(size);
        for ((family, body), sample_name) in
            FAMILIES.iter().zip(&self.bodies).zip(&self.sample_names)
        {
            if body.is_empty() {
                continue;
            }
            // Prometheus 0.0.4 names a counter's family by its samples'
            // name (`_total`, as prometheus_client writes it); OpenMetrics
            // without.
            let named = match (format, family.kind) {
                (Format::Prometheus, Kind::Counter) => sample_name.as_str(),
                _ => family.name,
            };
            let _ = writeln!(out, "# HELP {named} {}", escape_help(family.help));
            let _ = writeln!(out, "# TYPE {named} {}", family.kind.as_str());
            out.push_str(body);
        }
        if format == Format::OpenMetrics {
            out.push_str("# EOF\n");
        }
        out
    }
}

impl Sink for Text {
    fn add(&mut self, id: Id, labels: &[&str], value: f64) {
        self.line(id as usize, labels, value);
    }
}

/// A value as both formats write it: integers without a fraction.
fn number(out: &mut String, v: f64) {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v}");
    }
}

fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(out: &mut String, value: &str) {
    if !value.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        out.push_str(value);
        return;
    }
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}
