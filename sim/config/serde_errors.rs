//! Where in a config's source a value serde refused is written: serde
//! names a path, which cannot follow into a tagged enum (a workload, its
//! steps), and quotes what it refused whole; a config's errors point at the
//! value to blame, at the sweep axis that set it, with what was refused cut
//! short and a suggestion for a misspelt key or variant.

use super::source::{ConfigError, Source};
use super::sweep::Axis;
use super::tree;
use crate::echo::echo;
use crate::expr::closest;
use serde::de::DeserializeOwned;
use toml::{Table, Value};

/// Where a point sits in the sweep, to place its errors.
pub(super) struct Here<'a> {
    pub(super) axes: &'a [Axis],
    pub(super) coords: &'a [usize],
    /// Design names by `[[table]]` index.
    pub(super) designs: Vec<&'a str>,
}

impl Here<'_> {
    /// The base config, before any axis is applied.
    pub(super) fn nowhere() -> Here<'static> {
        Here {
            axes: &[],
            coords: &[],
            designs: Vec::new(),
        }
    }

    /// An error at `path` (`table.<index>...` for a design): at the value of
    /// an axis that set something there or under it when one did, else where
    /// the path is written. The message names the sweep point.
    pub(super) fn locate(
        &self,
        src: &Source,
        path: &[String],
        message: impl Into<String>,
    ) -> ConfigError {
        let message = message.into();
        match self
            .axes
            .iter()
            .zip(self.coords)
            .find(|(a, _)| self.reaches(a, path))
        {
            Some((a, &c)) => {
                let point: Vec<String> = self
                    .axes
                    .iter()
                    .zip(self.coords)
                    .map(|(a, &c)| {
                        format!("{} = {}", echo(&a.name), echo(&tree::display(&a.values[c])))
                    })
                    .collect();
                src.error_at(
                    a.value_spans[c].clone(),
                    format!("at sweep point {}: {message}", point.join(", ")),
                )
            }
            None => src.error_at_path(path, message),
        }
    }

    /// Whether one of the paths lies within the other.
    fn reaches(&self, axis: &Axis, path: &[String]) -> bool {
        axis.path.iter().zip(path).enumerate().all(|(i, (a, p))| {
            let is_design = i == 1 && path[0] == "table";
            a == p
                || (is_design
                    && (a == "*"
                        || p.parse::<usize>()
                            .ok()
                            .and_then(|d| self.designs.get(d))
                            .is_some_and(|name| name == a)))
        })
    }
}

/// Reads section `key` of `doc` as its type.
pub(super) fn typed<T: DeserializeOwned>(
    src: &Source,
    doc: &Table,
    key: &str,
    here: &Here,
) -> Result<T, ConfigError> {
    let value = doc.get(key).cloned().unwrap_or(Value::Table(Table::new()));
    typed_value(src, &value, &[key.to_string()], here)
}

pub(super) fn typed_value<T: DeserializeOwned>(
    src: &Source,
    value: &Value,
    path: &[String],
    here: &Here,
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let mut at: Vec<String> = path.to_vec();
        at.extend(e.path().iter().filter_map(|seg| match seg {
            serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
            serde_path_to_error::Segment::Unknown => None,
        }));
        let inner = e.inner().message();
        // An unknown key is best shown where it is written; so is a bad value
        // inside a tagged enum (a workload), whose path serde cannot follow.
        let culprit = match unknown_field(inner) {
            Some(key) => vec![key.to_string()],
            None => culprit_path::<T>(&value_at(value, &at[path.len()..]), inner),
        };
        let repeats_last = culprit.len() == 1 && at.last() == culprit.first();
        if !repeats_last {
            at.extend(culprit);
        }
        let message = with_suggestion(&format!("{}: {inner}", at.join(".")));
        here.locate(src, &at, message)
    })
}

/// Where in `root` (a value read as a `T`) the value `error` is about is
/// written, as a path under it: serde cannot follow the path into a tagged
/// enum (a workload, its steps). From `root` down, the part to blame is the
/// first whose removal leaves nothing wrong or another mistake; else a
/// required one whose removal leaves only its own absence: the one whose
/// value the error quotes, or at the top the first. Never the tag naming a
/// workload, whose absence hides every other error.
fn culprit_path<T: DeserializeOwned>(root: &Value, error: &str) -> Vec<String> {
    // What is wrong with `root` changed so, if anything.
    let error_of = |changed: Value| {
        serde_path_to_error::deserialize::<_, T>(changed)
            .err()
            .map(|e| e.inner().message().to_string())
    };
    let without = |path: &[String]| {
        let mut rest = root.clone();
        remove_at(&mut rest, path);
        let Some(now) = error_of(rest) else {
            return Removal::Fixes;
        };
        let key = path.last().map(String::as_str).unwrap_or_default();
        if now == error {
            Removal::KeepsIt
        } else if now.contains(&format!("missing field `{key}`")) {
            Removal::LeavesItsAbsence
        } else {
            Removal::LeavesAnother
        }
    };
    // The first element of the array at `path` whose presence the error
    // needs: serde reads an array in order and stops at its first mistake,
    // so the array cut short keeps the error from that element's length on
    // (a search, not a removal of each: a program may have thousands).
    let first_needed = |path: &[String], len: usize| {
        let keeps = |kept: usize| {
            let mut cut = root.clone();
            if let Some(Value::Array(a)) = value_at_mut(&mut cut, path) {
                a.truncate(kept);
            }
            error_of(cut).is_some_and(|now| now == error)
        };
        let (mut lo, mut hi) = (1, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if keeps(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        hi.saturating_sub(1)
    };
    let mut at: Vec<String> = Vec::new();
    loop {
        let node = value_at(root, &at);
        let candidates = match &node {
            Value::Array(a) if !a.is_empty() => vec![first_needed(&at, a.len()).to_string()],
            _ => keys_of(&node),
        };
        let outcomes: Vec<(String, Removal)> = candidates
            .into_iter()
            .filter(|c| !(at.is_empty() && c == "name"))
            .map(|c| {
                let mut path = at.clone();
                path.push(c.clone());
                let outcome = without(&path);
                (c, outcome)
            })
            .collect();
        let quoted =
            |c: &String| quotes_a_value_of(error, &value_at(&node, std::slice::from_ref(c)));
        let absent = || {
            outcomes
                .iter()
                .filter(|(_, o)| *o == Removal::LeavesItsAbsence)
        };
        let next = outcomes
            .iter()
            .find(|(_, o)| matches!(o, Removal::Fixes | Removal::LeavesAnother))
            .or_else(|| absent().find(|(c, _)| quoted(c)))
            .or_else(|| absent().next().filter(|_| at.is_empty()));
        match next {
            Some((c, _)) => at.push(c.clone()),
            None => break,
        }
    }
    at
}

/// What removing one part of a value does to the error it has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Removal {
    /// Nothing is wrong any more.
    Fixes,
    /// Another mistake shows: this one was in the part.
    LeavesAnother,
    /// What is wrong is only that the part is missing.
    LeavesItsAbsence,
    /// The same error: the mistake is elsewhere.
    KeepsIt,
}

/// Whether `error` quotes a scalar written in `value` or anywhere under
/// it, as serde quotes the value it refused (`name` or "text").
fn quotes_a_value_of(error: &str, value: &Value) -> bool {
    let quoted =
        |t: String| error.contains(&format!("`{t}`")) || error.contains(&format!("\"{t}\""));
    match value {
        Value::String(s) => quoted(s.clone()),
        Value::Integer(i) => quoted(i.to_string()),
        Value::Float(f) => quoted(f.to_string()),
        Value::Boolean(b) => quoted(b.to_string()),
        Value::Datetime(_) => false,
        Value::Array(a) => a.iter().any(|v| quotes_a_value_of(error, v)),
        Value::Table(t) => t.values().any(|v| quotes_a_value_of(error, v)),
    }
}

/// A table's keys, in order; nothing for any other value.
fn keys_of(value: &Value) -> Vec<String> {
    match value {
        Value::Table(t) => t.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The value at `path` under `value`, to change.
fn value_at_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, seg| match v {
        Value::Table(t) => t.get_mut(seg),
        Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
        _ => None,
    })
}

/// Removes the key or element at `path` from `value`.
fn remove_at(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    match value_at_mut(value, parents) {
        Some(Value::Table(t)) => {
            t.remove(last);
        }
        Some(Value::Array(a)) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|&i| i < a.len()) {
                a.remove(i);
            }
        }
        _ => {}
    }
}

fn value_at(value: &Value, path: &[String]) -> Value {
    path.iter()
        .try_fold(value, |v, seg| match v {
            Value::Table(t) => t.get(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        })
        .cloned()
        .unwrap_or(Value::Boolean(false))
}

/// serde says "unknown field `machin`, expected one of `run`, `machine`";
/// users also want "did you mean `machine`?". Likewise for unknown variants
/// (a workload or lock kind).
pub(crate) fn with_suggestion(message: &str) -> String {
    // serde's data model says map and sequence; a TOML user writes tables and arrays.
    let message = echo_quoted(message.trim_end())
        .replace("expected a map", "expected a table")
        .replace("expected a sequence", "expected an array");
    let message = message.as_str();
    let Some(name) = unknown_field(message).or_else(|| unknown_variant(message)) else {
        return message.to_string();
    };
    let expected = message.split_once("expected").map_or("", |(_, e)| e);
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match closest(name, &candidates) {
        Some(best) => format!("{message}; did you mean `{best}`?"),
        None => message.to_string(),
    }
}

/// The key serde's "unknown field `key`, expected ..." names.
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.split("unknown field `").nth(1)?;
    rest.split_once('`').map(|(name, _)| name)
}

/// The name serde's "unknown variant `name`, expected ..." names.
fn unknown_variant(message: &str) -> Option<&str> {
    let rest = message.split("unknown variant `").nth(1)?;
    rest.split_once('`').map(|(name, _)| name)
}

/// `message` with every value it quotes between backticks or double quotes,
/// as serde and toml quote what they refuse, cut short by [`echo`].
pub(super) fn echo_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                out.push_str(&echo(&after[..close]));
                out.push(quote);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&echo(after));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
