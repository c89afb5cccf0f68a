//! The Prometheus text format (0.0.4) and OpenMetrics 1.0 text of what
//! [`crate::Exporter::collect`] gathered.

use std::fmt::Write;

use crate::collect::Collected;
use crate::family::Kind;

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

/// `families` in `format`; a family without samples is left out.
pub fn render(families: &[Collected], format: Format) -> String {
    let mut out = String::with_capacity(families.iter().map(|f| f.samples.len() * 64 + 128).sum());
    for collected in families.iter().filter(|c| !c.samples.is_empty()) {
        let family = collected.family;
        let sample_name = family.sample_name();
        // Prometheus 0.0.4 names a counter's family by its samples' name
        // (`_total`, as prometheus_client writes it); OpenMetrics without.
        let named = match (format, family.kind) {
            (Format::Prometheus, Kind::Counter) => sample_name.as_str(),
            _ => family.name,
        };
        let _ = writeln!(out, "# HELP {named} {}", escape_help(family.help));
        let _ = writeln!(out, "# TYPE {named} {}", family.kind.as_str());
        for sample in &collected.samples {
            out.push_str(&sample_name);
            if !sample.labels.is_empty() {
                out.push('{');
                for (i, (name, value)) in family.labels.iter().zip(&sample.labels).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(name);
                    out.push_str("=\"");
                    escape_label(&mut out, value);
                    out.push('"');
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(sample.value));
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// A value as both formats write it: integers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn escape_help(help: &str) -> String {
    help.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}
