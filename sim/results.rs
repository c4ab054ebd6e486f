//! A campaign's result set: every run of a config's sweep, in the config's
//! order, with the provenance a reader needs to trust and reproduce it. This
//! is what results.json holds and what every report is rendered from.
//!
//! A result set depends only on (config, version): it is byte-identical
//! whatever the number of jobs, the sharding, or how often the campaign was
//! interrupted. Host-dependent figures (simulator speed, run date) live in a
//! [`SpeedLog`] beside it.

use crate::echo::{echo_in, EchoStyle};
use crate::record::{RecordError, RunRecord, Speed};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultSet {
    pub provenance: Provenance,
    /// The sweep's axes, in the config's order (empty without a sweep).
    pub axes: Vec<String>,
    /// Design names in the config's order; candidate `--rule` designs last.
    pub designs: Vec<String>,
    /// The design every other is compared against.
    pub baseline: String,
    /// One per (sweep point, design, repetition), points in expansion order,
    /// then designs, then repetitions.
    pub runs: Vec<RunResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub futexsim_version: String,
    /// `git describe`-style commit of the build, "-dirty" when it had local changes.
    pub git_commit: String,
    /// The config's name (its file stem, or "default").
    pub config_name: String,
    /// The config as resolved: every default filled in, every preset expanded, as TOML.
    pub resolved_config: String,
    pub base_seed: u64,
    pub repetitions: u32,
    /// Every machine profile the sweep used, with where its numbers come from.
    pub machines: Vec<MachineSource>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineSource {
    pub name: String,
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Index of the sweep point in expansion order.
    pub point: usize,
    /// The point's value on each axis, as written in TOML (`cpus = 64` gives "64").
    pub axis_values: Vec<String>,
    pub design: String,
    pub repetition: u32,
    /// Stable identity of the run: a hash of its canonical scenario. Shards and
    /// campaign files are keyed by it.
    pub id: String,
    pub record: RunRecord,
}

impl ResultSet {
    /// The runs of one design at one point, in repetition order.
    pub fn runs_of<'a>(
        &'a self,
        point: usize,
        design: &'a str,
    ) -> impl Iterator<Item = &'a RunResult> + 'a {
        self.runs
            .iter()
            .filter(move |r| r.point == point && r.design == design)
    }

    /// How many sweep points the set covers.
    pub fn points(&self) -> usize {
        self.runs
            .iter()
            .map(|r| r.point.saturating_add(1))
            .max()
            .unwrap_or(0)
    }

    /// Why the set is not one futexsim writes, naming the field: every
    /// (point, design, repetition) once, points numbered from 0 with one
    /// label each, designs and the baseline among those named, and each
    /// record whole (see [`RunRecord::check`]). What every reader of a set
    /// indexes by is checked here, so a set that passes renders.
    pub fn check(&self) -> Result<(), SetError> {
        if self.runs.is_empty() {
            return Err(SetError::NoRuns);
        }
        let mut names = std::collections::BTreeMap::new();
        for (index, design) in self.designs.iter().enumerate() {
            // Each design's charts are files named after it.
            if let Some(other) = names.insert(chart_name(design), index) {
                return Err(SetError::SameDesignFiles {
                    index,
                    design: design.clone(),
                    other,
                });
            }
        }
        if !self.designs.contains(&self.baseline) {
            return Err(SetError::BaselineNotADesign {
                baseline: self.baseline.clone(),
            });
        }
        // A point runs at least once: n runs hold at most n points. Checked
        // before anything is sized by the points.
        let most = self.runs.len();
        for (run, r) in self.runs.iter().enumerate() {
            if r.point >= most {
                return Err(SetError::PointOutOfRange {
                    run,
                    point: r.point,
                    most,
                });
            }
            if !self.designs.contains(&r.design) {
                return Err(SetError::RunDesignUnknown {
                    run,
                    design: r.design.clone(),
                });
            }
            if r.axis_values.len() != self.axes.len() {
                return Err(SetError::AxisValueCount {
                    run,
                    values: r.axis_values.len(),
                    axes: self.axes.len(),
                });
            }
            r.record
                .check()
                .map_err(|error| SetError::Record { run, error })?;
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut labels: Vec<Option<&Vec<String>>> = vec![None; self.points()];
        for (run, r) in self.runs.iter().enumerate() {
            if !seen.insert((r.point, r.design.as_str(), r.repetition)) {
                return Err(SetError::RepeatedRun {
                    run,
                    id: r.id.clone(),
                });
            }
            match labels[r.point] {
                Some(l) if l != &r.axis_values => {
                    return Err(SetError::TwoLabels {
                        run,
                        point: r.point,
                    })
                }
                _ => labels[r.point] = Some(&r.axis_values),
            }
        }
        if let Some(point) = labels.iter().position(Option::is_none) {
            return Err(SetError::PointWithoutRuns { point });
        }
        let mut per_point = vec![0usize; labels.len()];
        for r in &self.runs {
            per_point[r.point] += 1;
        }
        // Each point runs every design, repetitions 0 to n - 1 (n may be swept).
        for (point, &runs) in per_point.iter().enumerate() {
            let reps = |design: &str| {
                (0..)
                    .take_while(|&r| seen.contains(&(point, design, r)))
                    .count()
            };
            let n = reps(&self.baseline);
            if n == 0 || self.designs.iter().any(|d| reps(d) != n) || runs != n * self.designs.len()
            {
                return Err(SetError::PointLacksRuns { point });
            }
        }
        Ok(())
    }
}

/// Why a result set is not one futexsim writes, naming the field (`run`
/// is an index into `runs`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    #[error("runs: it holds no runs")]
    NoRuns,
    #[error(
        "designs[{index}]: '{}' is designs[{other}] again, or names the same files",
        stored(design)
    )]
    SameDesignFiles {
        index: usize,
        design: String,
        other: usize,
    },
    #[error("baseline: '{}' is not one of its designs", stored(baseline))]
    BaselineNotADesign { baseline: String },
    #[error("runs[{run}].point: {point} is out of range: {most} runs hold at most {most} points")]
    PointOutOfRange {
        run: usize,
        point: usize,
        most: usize,
    },
    #[error("runs[{run}].design: '{}' is not one of its designs", stored(design))]
    RunDesignUnknown { run: usize, design: String },
    #[error("runs[{run}].axis_values: {values} values for {axes} axes")]
    AxisValueCount {
        run: usize,
        values: usize,
        axes: usize,
    },
    #[error("runs[{run}].record.{error}")]
    Record { run: usize, error: RecordError },
    #[error(
        "runs[{run}]: run {} repeats another's point, design and repetition",
        stored(id)
    )]
    RepeatedRun { run: usize, id: String },
    #[error("runs[{run}].axis_values: point {point} has two sets of axis values")]
    TwoLabels { run: usize, point: usize },
    #[error("runs: point {point} has no runs")]
    PointWithoutRuns { point: usize },
    #[error("runs: point {point} lacks runs: every design runs its repetitions there")]
    PointLacksRuns { point: usize },
}

/// A value of a file futexsim wrote as its errors quote it.
fn stored(value: &str) -> String {
    echo_in(value, EchoStyle::AsStored)
}

/// What a design's chart files are named after (report::charts): names
/// that differ only in characters a file name leaves out name one file.
fn chart_name(design: &str) -> String {
    crate::files::file_part(design)
}

/// Host-dependent figures of the campaign's runs: kept beside the result set
/// (speed.json), never inside it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpeedLog {
    /// When the last run finished, RFC 3339 UTC.
    pub date: String,
    /// The most resident memory any process simulating these runs held
    /// (each from its campaign's start), in bytes.
    pub peak_rss_bytes: u64,
    /// Per run id, how fast the simulator went.
    pub runs: Vec<(String, Speed)>,
}

impl SpeedLog {
    pub fn total(&self) -> Speed {
        total_speed(self.runs.iter().map(|(_, s)| s))
    }
}

/// The speed of several runs together: their events over their summed wall
/// time, simulated ops weighted by each run's wall time.
pub fn total_speed<'a>(speeds: impl IntoIterator<Item = &'a Speed> + Clone) -> Speed {
    let events = speeds.clone().into_iter().map(|s| s.events).sum();
    let wall_s: f64 = speeds.clone().into_iter().map(|s| s.wall_s).sum();
    let sim_ops: f64 = speeds
        .into_iter()
        .map(|s| s.sim_ops_per_sec * s.wall_s)
        .sum();
    Speed {
        events,
        wall_s,
        events_per_sec: events as f64 / wall_s.max(1e-9),
        sim_ops_per_sec: sim_ops / wall_s.max(1e-9),
    }
}

/// Fields whose value may be negative, as JSON paths with every array
/// index written `[]`. No figure futexsim writes is: every number in a
/// result set, a speed log or a run file is a count, an address, a seed,
/// a time, or a rate or mean of them. A signed field added to those types
/// is listed here, or files holding a negative value of it are refused.
const MAY_BE_NEGATIVE: [&str; 0] = [];

/// A JSON document of a file futexsim wrote (results.json, speed.json, a
/// run file) read as a `T` and checked field by field: every number
/// finite and, but for [`MAY_BE_NEGATIVE`], not negative, and every field
/// of its type. The error names the field by its path
/// (`runs[3].record.ops_per_sec: -5 is negative`) and shows at most
/// [`ECHO_CHARS`](crate::echo::ECHO_CHARS) characters of a value.
pub fn from_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let value: serde_json::Value =
        serde_path_to_error::deserialize(&mut reader).map_err(JsonError::located)?;
    reader.end().map_err(|e| JsonError::Trailing {
        message: e.to_string(),
    })?;
    check_numbers(&value, &mut String::new())?;
    serde_path_to_error::deserialize(value).map_err(JsonError::located)
}

/// Why a JSON document is not a file futexsim wrote: the field, by its
/// path, and what is wrong with it. Messages of the JSON reader are shown
/// cut to [`ECHO_CHARS`](crate::echo::ECHO_CHARS) characters.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// Not JSON, or a field not of its type; no path when the document as
    /// a whole is wrong.
    #[error("{}{}", path.as_ref().map_or(String::new(), |p| format!("{p}: ")), stored(message))]
    Field {
        path: Option<String>,
        message: String,
    },
    /// Something after the document.
    #[error("{}", stored(message))]
    Trailing { message: String },
    #[error("{path}: {} is not a finite number", stored(value))]
    NotFinite { path: String, value: String },
    #[error("{path}: {} is negative", stored(value))]
    Negative { path: String, value: String },
}

impl JsonError {
    /// A deserializer's error, with the path of the field it met it at.
    fn located(e: serde_path_to_error::Error<serde_json::Error>) -> JsonError {
        let path = e.path().to_string();
        JsonError::Field {
            path: (path != ".").then_some(path),
            message: e.inner().to_string(),
        }
    }
}

/// Refuses the first number under `value` (at `path`) that is negative
/// or not finite.
fn check_numbers(value: &serde_json::Value, path: &mut String) -> Result<(), JsonError> {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            if n.as_f64().is_some_and(|v| !v.is_finite()) {
                return Err(JsonError::NotFinite {
                    path: path.clone(),
                    value: n.to_string(),
                });
            }
            let negative = n.as_i64().is_some_and(|v| v < 0)
                || (!n.is_i64() && !n.is_u64() && n.as_f64().is_some_and(|v| v < 0.0));
            if negative && !MAY_BE_NEGATIVE.contains(&pattern(path).as_str()) {
                return Err(JsonError::Negative {
                    path: path.clone(),
                    value: n.to_string(),
                });
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check_numbers(item, path)?;
                path.truncate(len);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&stored(key));
                check_numbers(item, path)?;
                path.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
    Ok(())
}

/// A path with its array indices left out: `runs[3].record.ops` as
/// `runs[].record.ops`.
fn pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_futexsim_wrote_is_refused_at_the_field_and_the_value_that_break_it() {
        let err =
            from_json::<SpeedLog>(br#"{"date":"x","peak_rss_bytes":-1,"runs":[]}"#).unwrap_err();
        assert_eq!(
            err,
            JsonError::Negative {
                path: "peak_rss_bytes".into(),
                value: "-1".into()
            }
        );
        assert_eq!(err.to_string(), "peak_rss_bytes: -1 is negative");
        let err = from_json::<SpeedLog>(b"{} x").unwrap_err();
        assert!(matches!(err, JsonError::Trailing { .. }), "{err}");
        let err = from_json::<SpeedLog>(br#"{"date":1,"peak_rss_bytes":0,"runs":[]}"#).unwrap_err();
        assert!(
            matches!(err, JsonError::Field { path: Some(_), .. }),
            "{err}"
        );
        assert!(err.to_string().starts_with("date: "), "{err}");
    }
}
