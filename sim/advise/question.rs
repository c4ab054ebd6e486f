//! The question `futexsim advise` answers, read from TOML (docs/advise.md):
//! the machines, workloads and points to answer at, the baseline, the
//! design family and the target. Each asked point becomes a config of the
//! ordinary kind (machine, workload, the baseline and the candidates, the
//! point as a one-value sweep), so that everything a config checks is
//! checked here too, and a config's error is reported at the part of the
//! question it comes from.

use super::search::{Budget, Order, Target};
use crate::config::{with_suggestion, Config, ConfigError, RunSettings, Source, TomlInput};
use crate::echo::echo;
use crate::record::RunRecord;
use crate::sensitivity::spans::Judged;
use crate::workload::lead::Better;
use serde::Deserialize;
use std::path::Path;
use toml::{Table, Value};

/// The question as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    question: String,
    machines: Vec<String>,
    #[serde(default)]
    figure: Option<String>,
    #[serde(default)]
    run: Table,
    workload: Vec<Table>,
    point: Vec<Table>,
    baseline: Table,
    family: WrittenFamily,
    target: WrittenTarget,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenFamily {
    base: Table,
    parameter: String,
    order: Order,
    values: Vec<WrittenCandidate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenCandidate {
    label: String,
    value: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenTarget {
    within_best_pct: Option<f64>,
    slower_than_baseline_pct: Option<f64>,
    max_bytes_per_process: Option<u64>,
}

/// The figure compared, read from each run; higher is better.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Operations per second, all threads together.
    OpsPerSec,
    /// The mean of the per-thread rates (perf's "Averaged").
    ThreadOpsPerSec,
    /// One of the workload's own figures, by name (schbench's requests per
    /// second), or a mix's group's (`databases ops/s/thread`).
    Workload(String),
}

impl Figure {
    fn parse(name: &str) -> Figure {
        match name {
            "ops/s" => Figure::OpsPerSec,
            "ops/s/thread" => Figure::ThreadOpsPerSec,
            other => Figure::Workload(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Figure::OpsPerSec => "ops/s",
            Figure::ThreadOpsPerSec => "ops/s/thread",
            Figure::Workload(name) => name,
        }
    }

    /// The figure as the model interval judges candidates by it: higher
    /// is better, and a run that lacks it reads NaN.
    pub fn judged(&self) -> Judged<'_> {
        Judged {
            name: self.name().into(),
            better: Better::Higher,
            read: Box::new(|r| self.read(r).unwrap_or(f64::NAN)),
        }
    }

    /// The figure of one run; None where the run lacks it.
    pub fn read(&self, record: &RunRecord) -> Option<f64> {
        match self {
            Figure::OpsPerSec => Some(record.ops_per_sec),
            Figure::ThreadOpsPerSec => Some(record.mean_thread_ops_per_sec),
            Figure::Workload(name) => record
                .workload_figures()
                .find(|m| &m.name == name)
                .map(|m| m.value),
        }
    }
}

/// One candidate of the family: its label and the parameter's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub label: String,
    pub value: Value,
}

/// A base design and one parameter varied over labelled values.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    base: Table,
    /// The parameter's dotted path inside a `[[table]]`.
    pub parameter: String,
    pub order: Order,
    pub candidates: Vec<Candidate>,
}

/// A point the question asks about: a machine, a workload and the point's
/// values (indices into the question's lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asked {
    pub machine: usize,
    pub workload: usize,
    pub point: usize,
}

/// A checked question.
pub struct Question {
    /// The file's stem: what its store and its campaigns are named after.
    pub name: String,
    /// The question in words, as its author put it.
    pub asks: String,
    pub machines: Vec<String>,
    workloads: Vec<Table>,
    points: Vec<Table>,
    run: Table,
    /// `[run]` as every asked point's config has it: the window a run
    /// takes at most, and the stopping rule that may end it sooner.
    pub run_settings: RunSettings,
    pub budget: Budget,
    pub figure: Figure,
    baseline: Table,
    /// The baseline's design name.
    pub baseline_name: String,
    pub family: Family,
    pub target: Target,
    src: Source,
}

/// `[run]` keys the search sets itself, and what to write instead.
const SET_BY_THE_SEARCH: [(&str, &str); 2] = [
    ("repetitions", "first_repetitions and max_repetitions"),
    ("max_points", "nothing: a question's config has one point"),
];

/// Repetitions of a first measurement and the most any candidate gets,
/// unless the question says otherwise.
const DEFAULT_BUDGET: Budget = Budget { first: 3, most: 12 };

/// The relative half-width (percent) of a run's batch-means interval at
/// which it stops, unless the question says otherwise: well inside the
/// tightest target a shipped question states (2 %), so a run's own noise
/// is small beside the seeds' spread that decides.
pub const DEFAULT_HALF_WIDTH_PCT: f64 = 1.0;

/// The `[run]` key of a run's stopping rule.
const HALF_WIDTH_KEY: &str = "half_width_pct";

impl Question {
    pub fn load(path: &Path) -> Result<Question, ConfigError> {
        let input = TomlInput::read(path, "question")?;
        Question::parse(&input.file, &input.name, &input.text)
    }

    /// Parses and checks a question: its own keys here, then every config
    /// it asks for (`check_configs`).
    pub fn parse(file: &str, name: &str, text: &str) -> Result<Question, ConfigError> {
        let src = Source::parse(file, text)?;
        let written: Written = toml::from_str(text)
            .map_err(|e| src.error_at(e.span(), with_suggestion(e.message())))?;
        let at = |path: &[&str]| path.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let err = |path: &[&str], message: String| src.error_at_path(&at(path), message);
        for (list, len) in [
            ("machines", written.machines.len()),
            ("workload", written.workload.len()),
            ("point", written.point.len()),
        ] {
            if len == 0 {
                return Err(err(&[list], format!("{list}: give at least one")));
            }
        }
        let mut run = written.run;
        let mut budget = DEFAULT_BUDGET;
        for (key, instead) in SET_BY_THE_SEARCH {
            if run.contains_key(key) {
                return Err(err(
                    &["run", key],
                    format!("run.{key} is the search's to choose; give {instead}"),
                ));
            }
        }
        for (key, slot) in [
            ("first_repetitions", &mut budget.first),
            ("max_repetitions", &mut budget.most),
        ] {
            if let Some(value) = run.remove(key) {
                *slot = value
                    .as_integer()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| {
                        err(&["run", key], format!("run.{key} must be a whole number"))
                    })?;
            }
        }
        if budget.first < 2 || budget.most < budget.first {
            return Err(err(
                &["run", "first_repetitions"],
                format!(
                    "first_repetitions = {} and max_repetitions = {}: a seed interval needs at \
                     least 2 repetitions, and the most may not be below the first",
                    budget.first, budget.most
                ),
            ));
        }
        let figure = Figure::parse(written.figure.as_deref().unwrap_or("ops/s"));
        match (&figure, run.contains_key(HALF_WIDTH_KEY)) {
            (Figure::Workload(name), true) => {
                return Err(err(
                    &["run", HALF_WIDTH_KEY],
                    format!(
                        "run.{HALF_WIDTH_KEY} stops a run on its ops' throughput, which is not                          the figure {}: leave it out, and each run takes its whole duration_us",
                        echo(name)
                    ),
                ))
            }
            // A workload's own figure is not the ops counted in batches:
            // its runs take their whole window.
            (Figure::Workload(_), false) | (_, true) => {}
            (_, false) => {
                run.insert(HALF_WIDTH_KEY.into(), Value::from(DEFAULT_HALF_WIDTH_PCT));
            }
        }
        let target = target(&written.target, &err)?;
        let family = family(written.family, &err)?;
        let baseline_name = written
            .baseline
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("baseline")
            .to_string();
        if let Some(i) = family
            .candidates
            .iter()
            .position(|c| c.label == baseline_name)
        {
            return Err(err(
                &["family", "values", &i.to_string(), "label"],
                format!(
                    "label {} is the baseline's name too; name them apart",
                    echo(&baseline_name)
                ),
            ));
        }
        for (i, c) in family.candidates.iter().enumerate() {
            if let Some(j) = family.candidates[..i].iter().position(|d| {
                crate::files::file_part(&d.label) == crate::files::file_part(&c.label)
            }) {
                return Err(err(
                    &["family", "values", &i.to_string(), "label"],
                    format!(
                        "labels {} and {} would name one design; name them apart in letters, \
                         digits, '-', '_' or '.'",
                        echo(&family.candidates[j].label),
                        echo(&c.label)
                    ),
                ));
            }
        }
        let mut question = Question {
            name: name.to_string(),
            asks: written.question,
            machines: written.machines,
            workloads: written.workload,
            points: written.point,
            run,
            run_settings: RunSettings::default(),
            budget,
            figure,
            baseline: written.baseline,
            baseline_name,
            family,
            target,
            src,
        };
        question.run_settings = question.check_configs()?;
        Ok(question)
    }

    /// Every point asked: machines outermost, then workloads, then points.
    pub fn asked(&self) -> Vec<Asked> {
        let mut out = Vec::new();
        for machine in 0..self.machines.len() {
            for workload in 0..self.workloads.len() {
                for point in 0..self.points.len() {
                    out.push(Asked {
                        machine,
                        workload,
                        point,
                    });
                }
            }
        }
        out
    }

    /// "icx-2s, perf-hash, cpus=32, threads=32": how a person names an asked point.
    pub fn label(&self, at: Asked) -> String {
        let workload = self.workloads[at.workload]
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("perf-hash");
        let mut parts = vec![self.machines[at.machine].clone(), workload.to_string()];
        parts.extend(
            self.points[at.point]
                .iter()
                .map(|(k, v)| format!("{k}={}", plain(v))),
        );
        parts.join(", ")
    }

    /// Builds every asked point's config with every candidate once, so that
    /// a mistake anywhere is reported before anything runs; gives their
    /// `[run]` (one for all: a question has one, and no point sweeps it).
    fn check_configs(&self) -> Result<RunSettings, ConfigError> {
        let all: Vec<usize> = (0..self.family.candidates.len()).collect();
        let mut run = RunSettings::default();
        for at in self.asked() {
            run = self.config(at, &all, self.budget.first)?.run;
        }
        Ok(run)
    }

    /// The config of `at` with the baseline and `candidates`, at
    /// `repetitions` each; a mistake in it is reported at the part of the
    /// question it comes from.
    pub fn config(
        &self,
        at: Asked,
        candidates: &[usize],
        repetitions: u32,
    ) -> Result<Config, ConfigError> {
        let mut run = self.run.clone();
        run.insert("repetitions".into(), Value::Integer(repetitions.into()));
        let mut doc = Table::new();
        doc.insert("run".into(), Value::Table(run));
        doc.insert(
            "machine".into(),
            Value::Table(Table::from_iter([(
                "preset".to_string(),
                Value::from(self.machines[at.machine].as_str()),
            )])),
        );
        doc.insert(
            "workload".into(),
            Value::Table(self.workloads[at.workload].clone()),
        );
        let mut baseline = self.baseline.clone();
        baseline.insert("name".into(), Value::from(self.baseline_name.as_str()));
        baseline.insert("baseline".into(), Value::Boolean(true));
        let mut tables = vec![Value::Table(baseline)];
        for &c in candidates {
            tables.push(Value::Table(self.family.design(c)));
        }
        doc.insert("table".into(), Value::Array(tables));
        doc.insert(
            "sweep".into(),
            Value::Table(
                self.points[at.point]
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::Array(vec![v.clone()])))
                    .collect(),
            ),
        );
        let text = toml::to_string(&doc).map_err(|e| {
            self.src
                .error_at_path(&["point".into(), at.point.to_string()], e.to_string())
        })?;
        let name = format!("advise-{}", self.name);
        Config::parse(&self.src.file, &name, &text, &[])
            .map_err(|e| self.locate(&e, &text, at, candidates))
    }

    /// A generated config's error at the part of the question it comes
    /// from: the section of the config its line falls in tells which.
    fn locate(&self, e: &ConfigError, text: &str, at: Asked, candidates: &[usize]) -> ConfigError {
        let (section, index) = section_at(text, e.line);
        let path: Vec<String> = match (section.as_str(), index) {
            ("run", _) => vec!["run".into()],
            ("machine", _) => vec!["machines".into(), at.machine.to_string()],
            ("workload", _) => vec!["workload".into(), at.workload.to_string()],
            ("table", 0) => vec!["baseline".into()],
            ("table", i) => match candidates.get(i - 1) {
                Some(c) => vec!["family".into(), "values".into(), c.to_string()],
                None => vec!["family".into()],
            },
            _ => vec!["point".into(), at.point.to_string()],
        };
        self.src.error_at_path(
            &path,
            format!(
                "{} (at {}): {}",
                section_name(&section),
                self.label(at),
                e.message
            ),
        )
    }
}

fn section_name(section: &str) -> &'static str {
    match section {
        "run" => "[run]",
        "machine" => "the machine",
        "workload" => "the workload",
        "table" => "the design",
        _ => "the point",
    }
}

/// The top-level section a 1-based line of a TOML text falls in, and for
/// an array of tables which of them; ("", 0) before any section.
fn section_at(text: &str, line: usize) -> (String, usize) {
    let mut section = (String::new(), 0);
    let mut seen: Vec<String> = Vec::new();
    for l in text.lines().take(line) {
        let l = l.trim();
        let Some(inner) = l.strip_prefix('[') else {
            continue;
        };
        let many = inner.starts_with('[');
        let head = inner
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split('.')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if many {
            seen.push(head.clone());
            let count = seen.iter().filter(|s| **s == head).count();
            section = (head, count - 1);
        } else if head != section.0 {
            section = (head, 0);
        }
    }
    section
}

/// A TOML value as a label shows it: strings without their quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Family {
    /// Candidate `c`'s `[[table]]`: the base with the parameter set and the label as its name.
    fn design(&self, c: usize) -> Table {
        let candidate = &self.candidates[c];
        let mut table = self.base.clone();
        table.insert("name".into(), Value::from(candidate.label.as_str()));
        let path: Vec<&str> = self.parameter.split('.').collect();
        set(&mut table, &path, candidate.value.clone());
        table
    }
}

/// Sets `value` at a dotted path, making the tables on the way.
fn set(table: &mut Table, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            table.insert((*last).to_string(), value);
        }
        [first, rest @ ..] => {
            let entry = table
                .entry((*first).to_string())
                .or_insert_with(|| Value::Table(Table::new()));
            if !entry.is_table() {
                *entry = Value::Table(Table::new());
            }
            if let Value::Table(inner) = entry {
                set(inner, rest, value);
            }
        }
    }
}

fn family(
    written: WrittenFamily,
    err: &impl Fn(&[&str], String) -> ConfigError,
) -> Result<Family, ConfigError> {
    if written.values.len() < 2 {
        return Err(err(
            &["family", "values"],
            "family.values: give at least two candidates to choose between".into(),
        ));
    }
    if written.base.contains_key("name") || written.base.contains_key("baseline") {
        return Err(err(
            &["family", "base"],
            "family.base: each candidate is named by its label, and the baseline is [baseline]; \
             leave out name and baseline"
                .into(),
        ));
    }
    let parameter = written.parameter;
    if parameter.is_empty()
        || parameter.split('.').any(str::is_empty)
        || ["name", "baseline"].contains(&parameter.as_str())
    {
        return Err(err(
            &["family", "parameter"],
            format!(
                "family.parameter = {}: name a key of a [[table]], dotted (\"private.slots\", \
                 \"slots\", \"private.refcount\", \"bucket\")",
                echo(&parameter)
            ),
        ));
    }
    for (i, v) in written.values.iter().enumerate() {
        if v.label.trim().is_empty() {
            return Err(err(
                &["family", "values", &i.to_string(), "label"],
                "a candidate's label may not be empty".into(),
            ));
        }
    }
    Ok(Family {
        base: written.base,
        parameter,
        order: written.order,
        candidates: written
            .values
            .into_iter()
            .map(|v| Candidate {
                label: v.label,
                value: v.value,
            })
            .collect(),
    })
}

fn target(
    written: &WrittenTarget,
    err: &impl Fn(&[&str], String) -> ConfigError,
) -> Result<Target, ConfigError> {
    let share = |key: &str, pct: Option<f64>| match pct {
        Some(p) if !(0.0..100.0).contains(&p) => Err(err(
            &["target", key],
            format!("target.{key} = {p}: a percentage from 0 up to (not including) 100"),
        )),
        other => Ok(other.map(|p| p / 100.0)),
    };
    let target = Target {
        within_best: share("within_best_pct", written.within_best_pct)?,
        slower_than_baseline: share("slower_than_baseline_pct", written.slower_than_baseline_pct)?,
        max_bytes_per_process: written.max_bytes_per_process,
    };
    if target.within_best.is_none() && target.slower_than_baseline.is_none() {
        return Err(err(
            &["target"],
            "[target]: give within_best_pct or slower_than_baseline_pct (or both), and \
             max_bytes_per_process if memory is bounded"
                .into(),
        ));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_placed_in_its_section_and_its_table_of_an_array() {
        let text = "[run]\nseed = 1\n\n[[table]]\nname = \"a\"\n\n[[table]]\nname = \"b\"\n\n\
                    [table.private]\nslots = \"16\"\n\n[sweep]\ncpus = [4]\n";
        assert_eq!(section_at(text, 2), ("run".into(), 0));
        assert_eq!(section_at(text, 5), ("table".into(), 0));
        assert_eq!(section_at(text, 8), ("table".into(), 1));
        // A sub-table stays with the table of the array it belongs to.
        assert_eq!(section_at(text, 11), ("table".into(), 1));
        assert_eq!(section_at(text, 14), ("sweep".into(), 0));
    }

    #[test]
    fn a_candidate_sets_its_value_under_the_base_and_keeps_the_rest() {
        let family = Family {
            base: toml::from_str("preset = \"private-6.17\"\nprivate = { grows = false }").unwrap(),
            parameter: "private.slots".into(),
            order: Order::Monotone,
            candidates: vec![Candidate {
                label: "K=2".into(),
                value: Value::from("16"),
            }],
        };
        let design = family.design(0);
        assert_eq!(design["name"].as_str(), Some("K=2"));
        assert_eq!(design["preset"].as_str(), Some("private-6.17"));
        assert_eq!(design["private"]["slots"].as_str(), Some("16"));
        assert_eq!(design["private"]["grows"].as_bool(), Some(false));
    }
}
