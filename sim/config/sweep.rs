//! Sweep axes: which field each axis sets, its values, and the Cartesian
//! product of all axes, first axis outermost.

use super::source::{ConfigError, Source};
use crate::echo::echo;
use std::ops::Range;
use toml::Value;

/// Short names for the fields users sweep most.
const ALIASES: [(&str, &str); 5] = [
    ("cpus", "machine.topology.nr_cpus"),
    ("threads", "workload.threads"),
    ("futexes", "workload.futexes"),
    ("line", "machine.coherence.line"),
    ("numa_fake", "machine.topology.numa_fake"),
];

/// The sections an axis may reach into.
const SECTIONS: [&str; 4] = ["machine", "table", "workload", "run"];

pub struct Axis {
    /// As written in `[sweep]`.
    pub name: String,
    /// The field it sets, aliases expanded: `machine.topology.nr_cpus`.
    pub path: Vec<String>,
    pub values: Vec<Value>,
    pub value_spans: Vec<Option<Range<usize>>>,
    pub key_span: Option<Range<usize>>,
}

impl Axis {
    pub fn section(&self) -> &str {
        &self.path[0]
    }
}

/// Reads `[sweep]` in the order its axes are written.
pub fn axes(src: &Source, sweep: Option<&toml::Table>) -> Result<Vec<Axis>, ConfigError> {
    let Some(sweep) = sweep else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (name, key_span) in src.keys_in_order("sweep") {
        let shown = echo(&name);
        let full = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name.as_str(), |(_, path)| path);
        let path: Vec<String> = full.split('.').map(String::from).collect();
        if !SECTIONS.contains(&path[0].as_str()) || path.len() < 2 {
            let aliases: Vec<&str> = ALIASES.iter().map(|(a, _)| *a).collect();
            return Err(src.error_at(
                key_span,
                format!(
                    "sweep axis '{shown}' names no field: write a path such as \
                     'machine.coherence.line' or 'table.<design>.slots' (sections: {}), \
                     or one of {}",
                    SECTIONS.join(", "),
                    aliases.join(", ")
                ),
            ));
        }
        let values = match &sweep[&name] {
            Value::Array(values) if !values.is_empty() => values.clone(),
            Value::Array(_) => {
                return Err(src.error_at(key_span, format!("sweep axis '{shown}' has no values")))
            }
            _ => {
                return Err(src.error_at(
                    key_span,
                    format!(
                        "sweep axis '{shown}' must be an array of values, e.g. {shown} = [1, 2]"
                    ),
                ))
            }
        };
        if path[0] == "table" && path.last().is_some_and(|k| k == "name") {
            return Err(src.error_at(
                key_span,
                format!(
                    "sweep axis '{shown}' sets a design's name, which labels its runs: \
                     add a [[table]] per name instead"
                ),
            ));
        }
        if let Some(other) = out.iter().find(|a: &&Axis| overlap(&a.path, &path)) {
            return Err(src.error_at(
                key_span,
                format!(
                    "sweep axes '{}' and '{shown}' both set {}: keep one",
                    echo(&other.name),
                    echo(&other.path.join("."))
                ),
            ));
        }
        let value_spans = (0..values.len())
            .map(|i| src.span_of(&["sweep".into(), name.clone(), i.to_string()]))
            .collect();
        out.push(Axis {
            name,
            path,
            values,
            value_spans,
            key_span,
        });
    }
    Ok(out)
}

/// Whether two axes set the same field, or one a table holding the other's
/// field (`*` stands for every design).
fn overlap(a: &[String], b: &[String]) -> bool {
    a.iter().zip(b).all(|(x, y)| x == y || x == "*" || y == "*")
}

/// How many points the axes expand to (saturating: a huge sweep is refused, not wrapped).
pub fn count(axes: &[Axis]) -> u64 {
    axes.iter()
        .fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64))
}

/// The value index on each axis of point `index`, first axis outermost.
pub fn coordinates(axes: &[Axis], mut index: usize) -> Vec<usize> {
    let mut coords = vec![0; axes.len()];
    for (c, axis) in coords.iter_mut().zip(axes).rev() {
        *c = index % axis.values.len();
        index /= axis.values.len();
    }
    coords
}
