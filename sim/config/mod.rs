//! The TOML config: a machine, the table designs to compare, a workload, a
//! sweep and a run window, resolved into one fully specified point per
//! combination of sweep values. Everything is checked here, before anything
//! runs, and every mistake is reported with its file, line and column.
//!
//! The schema, annotated, is configs/default.toml; docs/config.md lists every key.

pub mod profile;
mod serde_errors;
mod source;
mod sweep;
mod tree;

use crate::analysis::layout::LayoutError;
use crate::echo::{echo, echo_debug};
use crate::expr::{closest, Expr};
use crate::kernel::table::{self, TableDesign, SIZING_VARIABLES};
use crate::limits::{MAX_NAME_BYTES, MAX_POINTS, MAX_RUNS, MAX_WINDOW_US};
use crate::machine::plausible::Plausible;
use crate::machine::{presets, Machine, MachineSpec};
use crate::scenario::{Scenario, ScenarioError};
use crate::workload::{WorkloadError, WorkloadSpec};
use serde::{Deserialize, Serialize};
pub(crate) use serde_errors::with_suggestion;
use serde_errors::{typed, typed_value, Here};
pub use source::ConfigError;
pub(crate) use source::Source;
use std::path::Path;
use sweep::Axis;
pub use sweep::Label;
use toml::{Table, Value};

/// The config `futexsim run` uses when given none: the comparison that
/// started the 2009 thread.
pub const DEFAULT_TOML: &str = include_str!("../../configs/default.toml");

/// `[run]`: how long each point runs and how often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSettings {
    /// Simulated microseconds counted per run; with `half_width_pct`, the most.
    pub duration_us: u64,
    /// Simulated microseconds before counting starts.
    pub warmup_us: u64,
    /// Runs per point and design, repetition r with seed `seed + r`. Every
    /// design of a point sees the same seeds, so ratios compare like with like.
    /// The default, 5, is the fewest that state a usable seed interval: at
    /// 2 the 95 % t-interval is 12.7 standard errors wide either side, at 5
    /// it is 2.8 (docs/config.md).
    pub repetitions: u32,
    pub seed: u64,
    /// A sweep expanding to more points than this is refused before it runs.
    pub max_points: u64,
    /// Ends a run before `duration_us` once its throughput's 95 %
    /// batch-means interval is within this percentage of its mean
    /// (task::batch_means); absent, every run takes the whole duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub half_width_pct: Option<f64>,
    /// Attributes each counted op's time to what its task waited on
    /// (sim/engine/attribution.rs): the records carry `time_spent` and the
    /// report a "Where the time goes" section, as `futexsim explain` prints
    /// it. Off by default: it costs the event loop a little.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            duration_us: 1000,
            warmup_us: 200,
            repetitions: 5,
            seed: 1,
            max_points: 10_000,
            half_width_pct: None,
            explain: false,
        }
    }
}

/// The top level as written: presets and overrides not yet merged.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(default)]
    run: Table,
    #[serde(default)]
    machine: Option<Table>,
    #[serde(default)]
    workload: Option<Table>,
    #[serde(default)]
    table: Vec<Table>,
    #[serde(default)]
    sweep: Option<Table>,
}

/// One sweep point, every preset expanded and every default filled in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The point's value on each axis, as a label shows it.
    pub axis_values: Vec<String>,
    pub machine: MachineSpec,
    pub designs: Vec<TableDesign>,
    pub workload: WorkloadSpec,
    pub run: RunSettings,
}

/// A loaded config, checked and expanded.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file's stem, or "default".
    pub name: String,
    pub axes: Vec<String>,
    pub designs: Vec<String>,
    pub baseline: String,
    pub points: Vec<Point>,
    /// `[run]` before any sweep: the seed and repetitions provenance cites.
    pub run: RunSettings,
    /// The config resolved (presets expanded, defaults filled, candidate
    /// rules added) as TOML: what a campaign is the result of.
    pub resolved: String,
    /// The plausible ranges of its machine profile's unmeasured parameters
    /// (the profile's `[plausible]`), which `--sensitivity` runs over; none
    /// for a machine written out in full.
    pub plausible: Plausible,
    /// The parameters of `plausible` the config sets itself, in `[machine]`
    /// or on a sweep axis: their values are the config's, not the profile's.
    pub set_by_config: Vec<String>,
}

/// One run of a campaign: a point, a design, a repetition.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    pub point: usize,
    pub design: usize,
    pub repetition: u32,
    pub scenario: Scenario,
}

/// A TOML file a user gives (a config, a question): its name as errors
/// place it, its stem, which names what it makes, and its text.
pub struct TomlInput {
    pub file: String,
    pub name: String,
    pub text: String,
}

impl TomlInput {
    /// Reads `path`, a `what` ("config", "question"), within the configs'
    /// size cap; one that cannot be read is a located error.
    pub fn read(path: &Path, what: &str) -> Result<TomlInput, ConfigError> {
        let file = path.display().to_string();
        let text =
            crate::files::read_text(path, crate::limits::CONFIG_CAP).map_err(|e| ConfigError {
                file: file.clone(),
                line: 0,
                column: 0,
                message: format!("cannot read the {what}: {}", e.reason()),
            })?;
        let name = path
            .file_stem()
            .map_or(what.into(), |s| s.to_string_lossy().into_owned());
        Ok(TomlInput { file, name, text })
    }
}

impl Config {
    /// Loads a config file. `rules` are candidate sizing rules (`--rule`).
    pub fn load(path: &Path, rules: &[String]) -> Result<Config, ConfigError> {
        let input = TomlInput::read(path, "config")?;
        Config::parse(&input.file, &input.name, &input.text, rules)
    }

    /// The embedded default config.
    pub fn default_config(rules: &[String]) -> Result<Config, ConfigError> {
        Config::parse("configs/default.toml", "default", DEFAULT_TOML, rules)
    }

    pub fn parse(
        file: &str,
        name: &str,
        text: &str,
        rules: &[String],
    ) -> Result<Config, ConfigError> {
        let src = Source::parse(file, text)?;
        let written: Written = toml::from_str(text)
            .map_err(|e| src.error_at(e.span(), with_suggestion(e.message())))?;
        let mut doc = Table::new();
        doc.insert("run".into(), Value::Table(written.run.clone()));
        let (machine, plausible) = resolve_machine(&src, written.machine.as_ref())?;
        doc.insert("machine".into(), Value::Table(machine));
        doc.insert(
            "workload".into(),
            Value::Table(written.workload.clone().unwrap_or_else(|| {
                Table::from_iter([("name".to_string(), Value::from("perf-hash"))])
            })),
        );
        let (tables, baseline) = resolve_tables(&src, &written.table, rules)?;
        doc.insert("table".into(), Value::Array(tables));
        let axes = sweep::axes(&src, written.sweep.as_ref())?;
        let set_by_config = plausible
            .keys()
            .filter(|parameter| {
                let path: Vec<&str> = parameter.split('.').collect();
                let overridden = written
                    .machine
                    .as_ref()
                    .is_some_and(|m| tree::holds(m, &path));
                let swept = axes
                    .iter()
                    .any(|a| a.section() == "machine" && a.path[1..] == path[..]);
                overridden || swept
            })
            .cloned()
            .collect();

        let base_run: RunSettings = typed(&src, &doc, "run", &Here::nowhere())?;
        if base_run.max_points > MAX_POINTS {
            return Err(src.error_at_path(
                &["run".into(), "max_points".into()],
                format!(
                    "run.max_points = {} is more than the {MAX_POINTS} futexsim takes",
                    base_run.max_points
                ),
            ));
        }
        let count = sweep::count(&axes);
        if count > base_run.max_points {
            return Err(src.error_at(
                src.span_of(&["sweep".into()]),
                format!(
                    "the sweep expands to {count} points, more than run.max_points = {}; \
                     raise max_points in [run] if that is intended",
                    base_run.max_points
                ),
            ));
        }
        let names: Vec<String> = doc["table"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
            .collect();
        check_chart_names(&src, &names, written.table.len())?;
        check_run_count(&src, &axes, count, tables_in(&doc), base_run.repetitions)?;
        let points = (0..count as usize)
            .map(|i| resolve_point(&src, &doc, &axes, i))
            .collect::<Result<Vec<_>, _>>()?;
        let designs: Vec<String> = points[0].designs.iter().map(|d| d.name.clone()).collect();
        let resolved = resolved_toml(&doc, &axes, &baseline);
        Ok(Config {
            name: name.to_string(),
            axes: axes.iter().map(|a| a.name.clone()).collect(),
            baseline: baseline.clone(),
            designs,
            points,
            run: base_run,
            resolved,
            plausible,
            set_by_config,
        })
    }

    /// Every run of the campaign: points in expansion order, then designs,
    /// then repetitions.
    pub fn runs(&self) -> Vec<PlannedRun> {
        let mut out = Vec::new();
        for (p, point) in self.points.iter().enumerate() {
            for (d, design) in point.designs.iter().enumerate() {
                for r in 0..point.run.repetitions {
                    out.push(PlannedRun {
                        point: p,
                        design: d,
                        repetition: r,
                        scenario: point.scenario(design, r),
                    });
                }
            }
        }
        out
    }
}

impl Point {
    pub fn scenario(&self, design: &TableDesign, repetition: u32) -> Scenario {
        Scenario {
            machine: self.machine.clone(),
            design: design.clone(),
            workload: self.workload.clone(),
            window: crate::task::RunWindow {
                warmup: self.run.warmup_us * 1_000_000,
                duration: self.run.duration_us * 1_000_000,
                stop: self.run.half_width_pct.map(|pct| crate::task::BatchMeans {
                    half_width: pct / 100.0,
                }),
            },
            seed: self.run.seed.wrapping_add(repetition.into()),
        }
    }
}

/// `[machine]`: a preset (a shipped profile's name, or a profile file's
/// path) with fields overridden, or a full profile; with the preset's
/// plausible ranges.
fn resolve_machine(
    src: &Source,
    written: Option<&Table>,
) -> Result<(Table, Plausible), ConfigError> {
    let Some(written) = written else {
        return Err(src.error_at(
            None,
            "the config has no [machine]: name one, e.g. [machine] preset = \"icx-2s\"",
        ));
    };
    if written.contains_key("plausible") {
        return Err(src.error_at_path(
            &["machine".into(), "plausible".into()],
            "a [plausible] table belongs in a machine profile's file, whose parameters it \
             ranges: move it there and name the file as the preset",
        ));
    }
    let mut overrides = written.clone();
    let Some(preset) = overrides.remove("preset") else {
        return Ok((overrides, Plausible::new()));
    };
    let at = || src.span_of(&["machine".into(), "preset".into()]);
    let name = preset
        .as_str()
        .ok_or_else(|| src.error_at(at(), "machine.preset must be a string"))?;
    let spec = if profile::is_profile_path(name) {
        profile::load(&profile::resolve(&src.file, name), |e| {
            src.error_at(at(), e)
        })?
    } else {
        presets::preset(name).ok_or_else(|| {
            let names: Vec<&str> = presets::names().collect();
            src.error_at(
                at(),
                format!(
                    "{}, or a profile file's path (holding a '/' or ending in .toml)",
                    unknown("machine preset", name, &names)
                ),
            )
        })?
    };
    let mut base = to_table(&spec);
    tree::merge(&mut base, &overrides);
    Ok((base, spec.plausible))
}

/// `[[table]]`: each a preset with fields overridden, or a full design; one
/// marked `baseline = true` (the first when none is). Candidate rules follow.
fn resolve_tables(
    src: &Source,
    written: &[Table],
    rules: &[String],
) -> Result<(Vec<Value>, String), ConfigError> {
    if written.is_empty() {
        return Err(src.error_at(
            None,
            "the config has no [[table]]: name at least one design, e.g. [[table]] preset = \"fixed-256\"",
        ));
    }
    let mut tables = Vec::new();
    let mut baseline: Option<(usize, String)> = None;
    for (i, t) in written.iter().enumerate() {
        let path = |key: &str| vec!["table".to_string(), i.to_string(), key.to_string()];
        let mut overrides = t.clone();
        let mut design = match overrides.remove("preset") {
            None => Table::new(),
            Some(p) => {
                let name = p.as_str().ok_or_else(|| {
                    src.error_at_path(&path("preset"), "table preset must be a string")
                })?;
                let preset = table::preset(name).ok_or_else(|| {
                    src.error_at_path(
                        &path("preset"),
                        unknown("table preset", name, &table::PRESET_NAMES),
                    )
                })?;
                to_table(&preset)
            }
        };
        let is_baseline = match overrides.remove("baseline") {
            None => false,
            Some(Value::Boolean(b)) => b,
            Some(_) => {
                return Err(src.error_at_path(&path("baseline"), "baseline must be true or false"))
            }
        };
        tree::merge(&mut design, &overrides);
        let name = match design.get("name") {
            Some(Value::String(n)) => n.clone(),
            _ => {
                return Err(src.error_at_path(
                    &["table".into(), i.to_string()],
                    "a [[table]] needs a preset or a name",
                ))
            }
        };
        check_design_name(&name).map_err(|e| src.error_at_path(&path("name"), e.message))?;
        if tables
            .iter()
            .any(|d: &Value| d.get("name").and_then(Value::as_str) == Some(&name))
        {
            return Err(src.error_at_path(
                &path("name"),
                format!(
                    "two tables are named '{}': give one a distinct name = \"...\"",
                    echo(&name)
                ),
            ));
        }
        if is_baseline {
            if let Some((_, first)) = &baseline {
                return Err(src.error_at_path(
                    &path("baseline"),
                    format!(
                        "'{}' is already the baseline; mark one table only",
                        echo(first)
                    ),
                ));
            }
            baseline = Some((i, name.clone()));
        }
        tables.push(Value::Table(design));
    }
    let baseline = baseline.map_or_else(
        || tables[0]["name"].as_str().unwrap_or_default().to_string(),
        |(_, n)| n,
    );
    for rule in rules {
        tables.push(Value::Table(candidate(&tables, &baseline, rule)?));
    }
    Ok((tables, baseline))
}

/// The run window in picoseconds must fit: the key and why when it does not.
fn check_window(run: &RunSettings) -> Result<(), (&'static str, String)> {
    for (key, us) in [
        ("duration_us", run.duration_us),
        ("warmup_us", run.warmup_us),
    ] {
        if us > MAX_WINDOW_US {
            return Err((
                key,
                format!("run.{key} = {us} is more than {MAX_WINDOW_US} (1000 s of simulated time)"),
            ));
        }
    }
    Ok(())
}

/// A design's name labels its column, its runs and its charts' files, and
/// a sweep path names it: it must be printable, not a number (a sweep's
/// `table.0` is the first table), not `*`, short enough for a file name,
/// and free of what would break the report's Markdown around it. A
/// config's `[[table]]` and a `--rule` are held to this one rule. A `/`
/// stays allowed: rules divide with it, and a chart's file name replaces
/// it (`files::file_part`).
pub(crate) fn check_design_name(name: &str) -> Result<(), NameError> {
    const NAMED: &str = "a table named";
    if name.parse::<u64>().is_ok() {
        return Err(NameError::new(
            NAMED,
            name,
            "is a number, which a sweep path reads as a table's index",
            None,
        ));
    }
    if name == "*" {
        return Err(NameError::new(
            NAMED,
            name,
            "is what a sweep path writes for every table",
            None,
        ));
    }
    check_printed_name(NAMED, name)
}

/// What every name the report prints in its tables, its code spans and its
/// charts' file names is held to (a design's, a sweep value's label): not
/// empty, printable, none of `|`, `` ` `` or `\`, and short enough for a
/// file name. `named` says what is named, as the message begins.
pub(crate) fn check_printed_name(named: &str, name: &str) -> Result<(), NameError> {
    let at = |pred: &dyn Fn(char) -> bool| name.chars().position(pred);
    let (why, at) = if name.trim().is_empty() {
        ("is empty", None)
    } else if let Some(i) = at(&|c: char| c.is_control()) {
        ("holds a control character", Some(i))
    } else if let Some(i) = at(&|c: char| c == '|') {
        (
            "holds '|', which ends a cell of the report's tables",
            Some(i),
        )
    } else if let Some(i) = at(&|c: char| c == '`') {
        ("holds '`', which ends the report's code spans", Some(i))
    } else if let Some(i) = at(&|c: char| c == '\\') {
        (
            "holds '\\', which escapes the character after it in the report",
            Some(i),
        )
    } else if name.len() > MAX_NAME_BYTES {
        ("is too long for a chart's file name", None)
    } else {
        return Ok(());
    };
    Err(NameError::new(named, name, why, at))
}

/// Why a name (a design's, a sweep value's label) is refused, and the
/// character it is about, when one is.
#[derive(Debug)]
pub struct NameError {
    pub message: String,
    /// 0-based, in characters.
    pub at: Option<usize>,
}

impl NameError {
    fn new(named: &str, name: &str, why: &str, at: Option<usize>) -> NameError {
        NameError {
            message: format!(
                "{named} {} {why}: name it with at most {MAX_NAME_BYTES} printable \
                 characters, none of | ` \\",
                echo_debug(name)
            ),
            at,
        }
    }
}

/// Designs whose names differ only in what a file name cannot hold would
/// write one chart file. The first `written` designs are the config's own
/// `[[table]]`s, the rest come from `--rule`.
fn check_chart_names(src: &Source, designs: &[String], written: usize) -> Result<(), ConfigError> {
    use crate::files::file_part;
    for (i, a) in designs.iter().enumerate() {
        if let Some(b) = designs[..i].iter().find(|b| file_part(b) == file_part(a)) {
            let message = format!(
                "tables '{}' and '{}' would share chart files ({}); name them apart in \
                 letters, digits, '-', '_' or '.'",
                echo(b),
                echo(a),
                echo(&file_part(a))
            );
            if i >= written {
                return Err(ConfigError {
                    file: "--rule".into(),
                    line: 1,
                    column: 1,
                    message,
                });
            }
            return Err(src.error_at_path(&["table".into(), i.to_string(), "name".into()], message));
        }
    }
    Ok(())
}

/// The designs of the document: its `[[table]]`s and the candidate rules.
fn tables_in(doc: &Table) -> u64 {
    doc.get("table")
        .and_then(Value::as_array)
        .map_or(0, |t| t.len() as u64)
}

/// Every run is planned (its scenario held in memory) before any starts:
/// their number is bounded. It is known from the axes' lengths, the designs
/// and the repetitions (the values of a `run.repetitions` axis when there
/// is one) before any point is resolved, which for a large machine and a
/// large sweep would take minutes to end in this refusal.
fn check_run_count(
    src: &Source,
    axes: &[Axis],
    points: u64,
    designs: u64,
    repetitions: u32,
) -> Result<(), ConfigError> {
    let swept = axes.iter().find(|a| a.path == ["run", "repetitions"]);
    let (repetitions_per_design, detail) = match swept {
        // Each of the axis's values is taken by points / its length points;
        // a value that is no count is refused when its point is resolved.
        Some(axis) => {
            let sum = axis
                .values
                .iter()
                .filter_map(Value::as_integer)
                .map(|r| u64::try_from(r).unwrap_or(0))
                .fold(0u64, u64::saturating_add);
            let each = points / axis.values.len().max(1) as u64;
            (
                each.saturating_mul(sum),
                format!("{points} points x {designs} designs, repetitions as swept"),
            )
        }
        None => (
            points.saturating_mul(u64::from(repetitions)),
            format!("{points} points x {designs} designs x {repetitions} repetitions"),
        ),
    };
    let runs = repetitions_per_design.saturating_mul(designs);
    if runs > MAX_RUNS {
        let at = if axes.is_empty() {
            src.span_of(&["run".into(), "repetitions".into()])
        } else {
            src.span_of(&["sweep".into()])
        };
        return Err(src.error_at(
            at,
            format!(
                "the config plans {runs} runs (points x designs x repetitions), more than the \
                 {MAX_RUNS} futexsim takes in one campaign ({detail}); split it"
            ),
        ));
    }
    Ok(())
}

/// A `--rule [DESIGN:]EXPR` candidate: DESIGN (the baseline by default) with
/// its slots sized by EXPR; its private tables' slots when it has them.
fn candidate(tables: &[Value], baseline: &str, rule: &str) -> Result<Table, ConfigError> {
    let error = |column: usize, message: String| ConfigError {
        file: "--rule".into(),
        line: 1,
        column,
        message: format!("'{}': {message}", echo(rule)),
    };
    // Columns count characters, as the expression's own errors do.
    let (base, text, offset) = match rule.split_once(':') {
        Some((design, expr)) => (design.trim(), expr, design.chars().count() + 1),
        None => (baseline, rule, 0),
    };
    let names: Vec<&str> = tables.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut design = tables
        .iter()
        .find(|t| t["name"].as_str() == Some(base))
        .and_then(Value::as_table)
        .cloned()
        .ok_or_else(|| error(1, unknown("design", base, &names)))?;
    let expr = Expr::parse(text).map_err(|e| error(offset + e.column, e.message.clone()))?;
    expr.check_variables(&SIZING_VARIABLES)
        .map_err(|e| error(offset + e.column, e.message.clone()))?;
    let rule_text = Value::String(expr.to_string());
    match design.get_mut("private") {
        Some(Value::Table(private)) => {
            private.insert("slots".into(), rule_text);
        }
        _ => {
            design.insert("slots".into(), rule_text);
        }
    }
    let name = format!("{base} slots={expr}");
    // The base's name passed this check as a table's; what is wrong is in
    // the expression, which the name holds as written.
    check_design_name(&name).map_err(|e| {
        let prefix = name.chars().count() - text.chars().count();
        let column = e.at.map_or(1, |i| offset + i.saturating_sub(prefix) + 1);
        error(column, e.message)
    })?;
    // `2*cpus` and `2 * cpus` are one rule.
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    if names.iter().any(|n| squeeze(n) == squeeze(&name)) {
        return Err(error(1, "the same rule is given twice".into()));
    }
    design.insert("name".into(), Value::String(name));
    Ok(design)
}

/// Point `index`: the axes' values set into the document, then every section
/// read as its type and checked the way the simulator will use it.
fn resolve_point(
    src: &Source,
    doc: &Table,
    axes: &[Axis],
    index: usize,
) -> Result<Point, ConfigError> {
    let coords = sweep::coordinates(axes, index);
    let mut doc = doc.clone();
    for (axis, &c) in axes.iter().zip(&coords) {
        if tree::set(&mut doc, &axis.path, &axis.values[c]) == 0 {
            let what = if axis.section() == "table" {
                let names: Vec<&str> = doc["table"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["name"].as_str())
                    .collect();
                format!(
                    "; after 'table.' name a design ({}) or '*'",
                    names.join(", ")
                )
            } else {
                String::new()
            };
            return Err(src.error_at(
                axis.key_span.clone(),
                format!("sweep axis '{}' names no field{what}", echo(&axis.name)),
            ));
        }
    }
    let tables = doc["table"]
        .as_array()
        .expect("resolve_tables builds an array");
    let here = Here {
        axes,
        coords: &coords,
        designs: tables.iter().filter_map(|t| t["name"].as_str()).collect(),
    };
    let machine: MachineSpec = typed(src, &doc, "machine", &here)?;
    let run: RunSettings = typed(src, &doc, "run", &here)?;
    let workload: WorkloadSpec = typed(src, &doc, "workload", &here)?;
    if let WorkloadSpec::Mix(mix) = &workload {
        // A group's label names it in every table, as a design's name does.
        for (i, group) in mix.group.iter().enumerate() {
            check_printed_name("a group's label", &group.label).map_err(|e| {
                here.locate(
                    src,
                    &[
                        "workload".into(),
                        "group".into(),
                        i.to_string(),
                        "label".into(),
                    ],
                    e.message,
                )
            })?;
        }
    }
    let designs = tables
        .iter()
        .enumerate()
        .map(|(i, t)| typed_value::<TableDesign>(src, t, &["table".into(), i.to_string()], &here))
        .collect::<Result<Vec<_>, _>>()?;
    for (key, value) in [
        ("repetitions", u64::from(run.repetitions)),
        ("duration_us", run.duration_us),
    ] {
        if value == 0 {
            return Err(here.locate(
                src,
                &["run".into(), key.into()],
                format!("run.{key} = 0: it must be at least 1"),
            ));
        }
    }
    check_window(&run).map_err(|(key, e)| here.locate(src, &["run".into(), key.into()], e))?;
    if let Some(pct) = run.half_width_pct {
        if !(pct > 0.0 && pct < 100.0) {
            return Err(here.locate(
                src,
                &["run".into(), "half_width_pct".into()],
                format!("run.half_width_pct = {pct}: a percentage above 0 and below 100"),
            ));
        }
    }
    let m = Machine::new(machine.clone())
        .map_err(|e| here.locate(src, &["machine".into()], e.message))?;
    let point = Point {
        axis_values: axes.iter().zip(&coords).map(|(a, &c)| a.shown(c)).collect(),
        machine,
        designs,
        workload,
        run,
    };
    // Laying each design out checks the design, then the workload on this machine.
    for (i, design) in point.designs.iter().enumerate() {
        point.scenario(design, 0).check(&m).map_err(|e| match e {
            ScenarioError::Workload(w) => workload_error(src, &here, &point.workload, w),
            ScenarioError::Platform(p) => here.locate(src, &["machine".into()], p.to_string()),
            // What the workload lays out, on the tables this design gives it.
            e @ ScenarioError::Memory { .. } => here.locate(
                src,
                &["workload".into(), "name".into()],
                format!("table '{}': {e}", design.name),
            ),
            // Too many keys, or keys of a process not there: the workload's.
            ScenarioError::Layout(
                e @ (LayoutError::TooManyKeys { .. } | LayoutError::StrayKey { .. }),
            ) => here.locate(src, &["workload".into(), "name".into()], e.to_string()),
            table => here.locate(src, &["table".into(), i.to_string()], table.to_string()),
        })?;
    }
    Ok(point)
}

/// A workload error, at the key it blames when the workload holds that key,
/// else at the workload's name; in a mix, the group's key or name.
fn workload_error(
    src: &Source,
    here: &Here,
    workload: &WorkloadSpec,
    error: WorkloadError,
) -> ConfigError {
    let mut path = vec!["workload".to_string()];
    if let Some(group) = error.group {
        path.extend(["group".to_string(), group.to_string()]);
    }
    let written = Value::try_from(workload).ok();
    let table = written.as_ref().and_then(|w| match error.group {
        Some(group) => w.get("group")?.get(group),
        None => Some(w),
    });
    let key = error
        .key
        .filter(|k| table.is_some_and(|t| t.get(*k).is_some()));
    path.push(key.unwrap_or("name").to_string());
    let message = ScenarioError::Workload(error).to_string();
    here.locate(src, &path, message)
}

fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    let hint = closest(name, known).map_or(String::new(), |c| format!(" (did you mean '{c}'?)"));
    format!(
        "unknown {what} '{}'{hint}; expected one of {}",
        echo(name),
        known.join(", ")
    )
}

fn to_table(value: &impl Serialize) -> Table {
    match Value::try_from(value) {
        Ok(Value::Table(t)) => t,
        _ => unreachable!("presets serialize to TOML tables"),
    }
}

/// The resolved config as TOML, itself a config that resolves to the same
/// text: a campaign directory carries it, so merging shards needs nothing else.
fn resolved_toml(doc: &Table, axes: &[Axis], baseline: &str) -> String {
    let mut doc = doc.clone();
    for table in doc["table"].as_array_mut().into_iter().flatten() {
        if table["name"].as_str() == Some(baseline) {
            if let Value::Table(t) = table {
                t.insert("baseline".into(), Value::Boolean(true));
            }
        }
    }
    let mut text = toml::to_string(&doc).expect("a TOML table serializes");
    // Written by hand, each axis on one line with its values inline: a table
    // would write an axis of labelled values as `[[sweep.axis]]` sections
    // after the plain axes, and the axes' order is the points' order.
    if !axes.is_empty() {
        text.push_str("\n[sweep]\n");
        for a in axes {
            text.push_str(&format!(
                "{} = {}\n",
                toml_edit::Key::new(a.name.as_str()),
                Value::Array(a.written())
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::serde_errors::echo_quoted;
    use super::*;

    #[test]
    fn a_quoted_value_in_an_error_is_cut_as_an_echo_is() {
        let long = "é".repeat(250);
        let quoted = echo_quoted(&format!("invalid type: string \"{long}\", expected `u32`"));
        assert!(
            quoted.len() < 300 && quoted.ends_with("…\", expected `u32`"),
            "{quoted}"
        );
    }

    #[test]
    fn a_name_that_passes_makes_chart_files_a_file_system_takes() {
        let longest = "x".repeat(MAX_NAME_BYTES);
        assert!(check_design_name(&longest).is_ok());
        for chart in [
            crate::report::charts::load_chart(&longest),
            crate::report::charts::nodes_chart(&longest),
        ] {
            let file = Path::new(&chart).file_name().map_or(0, |f| f.len());
            assert!(file <= 255, "{chart}");
        }
        assert!(check_design_name(&format!("{longest}x")).is_err());
    }

    #[test]
    fn a_name_that_breaks_a_table_or_a_line_is_refused_at_its_character() {
        for (name, at) in [
            ("a|b", 1),
            ("a`b", 1),
            ("ab\\", 2),
            ("a\nb", 1),
            ("fixed\t", 5),
        ] {
            let e = check_design_name(name).unwrap_err();
            assert_eq!(e.at, Some(at), "{name:?}: {}", e.message);
            assert!(!e.message.contains('\n'), "{}", e.message);
        }
        for fine in ["fixed-256 slots=256 * cpus / nodes", "private-6.17", "a/b"] {
            assert!(check_design_name(fine).is_ok(), "{fine}");
        }
    }
}
