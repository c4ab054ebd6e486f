//! Sweep axes: which field each axis sets, its values (each with the label
//! the config may give it), and the Cartesian product of all axes, first
//! axis outermost.

use super::source::{ConfigError, Source};
use super::{check_printed_name, tree, NameError};
use crate::echo::echo;
use std::fmt;
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

/// A short name for a value, shown in its place wherever a point is named
/// (tables, charts, the "Fastest" line, `--point`): a sweep value written
/// `{ value = "clamp(roundup_pow_of_two(32 * threads), 16, 4096)", label = "K=32" }`.
/// It is held to the rule a design's name is (printable, none of the
/// characters that break the report's Markdown, short enough for a file name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label(String);

impl Label {
    pub fn new(text: &str) -> Result<Label, NameError> {
        check_printed_name("a label", text)?;
        Ok(Label(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct Axis {
    /// As written in `[sweep]`.
    pub name: String,
    /// The field it sets, aliases expanded: `machine.topology.nr_cpus`.
    pub path: Vec<String>,
    /// The values it sets the field to, labels taken off.
    pub values: Vec<Value>,
    /// Each value's label, when the config gives one.
    pub labels: Vec<Option<Label>>,
    pub value_spans: Vec<Option<Range<usize>>>,
    pub key_span: Option<Range<usize>>,
}

impl Axis {
    pub fn section(&self) -> &str {
        &self.path[0]
    }

    /// Value `i` as a point's name shows it: its label, or the value itself.
    pub fn shown(&self, i: usize) -> String {
        self.labels[i]
            .as_ref()
            .map_or_else(|| tree::display(&self.values[i]), |l| l.to_string())
    }

    /// The values as a config writes them, labelled ones as `{ value, label }`.
    pub fn written(&self) -> Vec<Value> {
        self.values
            .iter()
            .zip(&self.labels)
            .map(|(value, label)| match label {
                Some(label) => Value::Table(toml::Table::from_iter([
                    ("value".to_string(), value.clone()),
                    ("label".to_string(), Value::String(label.to_string())),
                ])),
                None => value.clone(),
            })
            .collect()
    }
}

/// Why a written sweep value is refused, and the key inside it the error is
/// at (the label, a stray key), when it is inside.
struct ValueError {
    key: Option<String>,
    message: String,
}

/// A written sweep value: a plain value, or `{ value = V, label = "L" }`.
fn labelled(written: &Value) -> Result<(Value, Option<Label>), ValueError> {
    let Value::Table(t) = written else {
        return Ok((written.clone(), None));
    };
    if !t.contains_key("label") {
        return Ok((written.clone(), None));
    }
    let refuse = |key: Option<&str>, message: String| ValueError {
        key: key.map(String::from),
        message,
    };
    if let Some(stray) = t.keys().find(|k| *k != "value" && *k != "label") {
        return Err(refuse(
            Some(stray),
            format!(
                "a labelled sweep value holds 'value' and 'label' only, not '{}': \
                 {{ value = 32, label = \"K=32\" }}",
                echo(stray)
            ),
        ));
    }
    let Some(value) = t.get("value") else {
        return Err(refuse(
            None,
            "a labelled sweep value needs its value: { value = 32, label = \"K=32\" }".into(),
        ));
    };
    let Value::String(text) = &t["label"] else {
        return Err(refuse(
            Some("label"),
            "a sweep value's label is a string: label = \"K=32\"".into(),
        ));
    };
    let label = Label::new(text).map_err(|e| refuse(Some("label"), e.message))?;
    Ok((value.clone(), Some(label)))
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
        let written = match &sweep[&name] {
            Value::Array(values) if !values.is_empty() => values,
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
        let key = name.clone();
        let value_path = move |i: usize| vec!["sweep".to_string(), key.clone(), i.to_string()];
        let mut values = Vec::with_capacity(written.len());
        let mut labels: Vec<Option<Label>> = Vec::with_capacity(written.len());
        for (i, value) in written.iter().enumerate() {
            let (value, label) = labelled(value).map_err(|e| {
                let mut at = value_path(i);
                at.extend(e.key);
                src.error_at_path(&at, format!("sweep axis '{shown}': {}", e.message))
            })?;
            values.push(value);
            labels.push(label);
        }
        let value_spans = (0..values.len())
            .map(|i| src.span_of(&value_path(i)))
            .collect();
        let axis = Axis {
            name,
            path,
            values,
            labels,
            value_spans,
            key_span,
        };
        // Two points named alike could not be told apart in a table or by `--point`.
        for (i, label) in axis.labels.iter().enumerate() {
            let Some(label) = label else { continue };
            if let Some(j) =
                (0..axis.values.len()).find(|&j| j != i && axis.shown(j) == axis.shown(i))
            {
                let mut at = value_path(i);
                at.push("label".into());
                return Err(src.error_at_path(
                    &at,
                    format!(
                        "sweep axis '{shown}': the label '{}' names value {} too: give each \
                         value of an axis a name of its own",
                        echo(label.as_str()),
                        j + 1
                    ),
                ));
            }
        }
        out.push(axis);
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
