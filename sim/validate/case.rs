//! A validation case: a published figure, what was measured to get it, and
//! where in a config's results the model's prediction of it is read. The
//! configs are ordinary configs (`futexsim run` takes each as it is); the
//! cases file names them.
//!
//! ```toml
//! [[case]]
//! name = "16-bucket private / global, perf hash, 192 CPUs"
//! config = "../perf-hash-srf.toml"     # relative to the cases file
//! metric = "mean_thread_ops_per_sec"   # a record field, dotted, or extra.<figure name>
//! numerator = { design = "private-16", at = { threads = "192" } }
//! denominator = { design = "global" }  # absent: the numerator's figure itself
//! published = 0.0542                   # or published_range = [0.08, 0.44]
//! absolute = { numerator = 144593, denominator = 2667058, unit = "ops/s" }  # optional
//! machine = "srf-2s-192"               # the config's machine profile
//! kernel = { global = "80367ad01d", private-16 = "7c4f75a21f" }
//! command = "perf bench futex hash"    # the benchmark's exact command line
//! source = "where the figure was published"
//! lacks = "what the model leaves out that this case needs"   # optional
//! ```
//!
//! A case is a model case (the default) or, with `kind = "closed-form"`, a
//! check against a closed form of the model's own inputs, counted apart. A
//! model case with a denominator is a ratio; without one, an absolute figure
//! in `unit`, predicted on the case's machine profile. A model case says
//! which kernel state (a commit or a release) each design it reads stands
//! for, the machine and the command line; `absolute` gives the published
//! figures behind a ratio, which the report compares without judging.
//!
//! With `ns_per_op = true` each figure read is 1e9 over the metric: an ops/s
//! metric becomes the nanoseconds per op a lock or atomic micro-benchmark
//! prints.
//!
//! A case may instead read where a curve peaks: with `argmax = "<axis>"` the
//! model's figure is the value of that sweep axis at which the numerator's
//! metric is highest (the first of equals), the numerator's `at` naming the
//! other axes; there is no denominator. The Boyd-Wickizer knee is such a
//! figure: the thread count at peak throughput.
//!
//! ```toml
//! metric = "ops_per_sec"
//! argmax = "threads"
//! numerator = { design = "ticket" }
//! ```

use super::verdict::{Judged, Published};
use crate::config::Config;
use crate::record::RunRecord;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesFile {
    pub case: Vec<CaseSpec>,
}

/// Whether a case tests the model against a measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseKind {
    #[default]
    Model,
    ClosedForm,
}

/// The published figures behind a published ratio.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Absolute {
    pub numerator: f64,
    pub denominator: f64,
    pub unit: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    pub name: String,
    #[serde(default)]
    pub kind: CaseKind,
    pub config: String,
    pub metric: String,
    pub numerator: Selector,
    #[serde(default)]
    pub denominator: Option<Selector>,
    /// A sweep axis: the figure is its value where the metric peaks.
    #[serde(default)]
    pub argmax: Option<String>,
    #[serde(default)]
    pub published: Option<f64>,
    #[serde(default)]
    pub published_range: Option<[f64; 2]>,
    /// The unit of an absolute figure.
    #[serde(default)]
    pub unit: Option<String>,
    /// The figure is the nanoseconds per op, 1e9 over the metric (an ops/s
    /// figure): how lock and atomic micro-benchmarks publish their results.
    #[serde(default)]
    pub ns_per_op: bool,
    #[serde(default)]
    pub absolute: Option<Absolute>,
    /// The machine profile the config runs on.
    #[serde(default)]
    pub machine: Option<String>,
    /// Design name to the kernel state (a commit or release) it stands for.
    #[serde(default)]
    pub kernel: BTreeMap<String, String>,
    /// The benchmark's command line, as published.
    #[serde(default)]
    pub command: Option<String>,
    pub source: String,
    #[serde(default)]
    pub lacks: Option<String>,
}

/// The model's figure, and the figures it is formed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub figure: f64,
    pub numerator: f64,
    pub denominator: Option<f64>,
}

/// Runs of one design at one sweep point (every repetition).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    pub design: String,
    /// Axis name to value, as the results show them; axes not named must
    /// have a single value.
    #[serde(default)]
    pub at: BTreeMap<String, String>,
}

impl CaseSpec {
    pub fn published(&self) -> Result<Published, String> {
        match (self.published, self.published_range) {
            (Some(r), None) if r > 0.0 => Ok(Published::Value(r)),
            (None, Some([lo, hi])) if 0.0 < lo && lo <= hi => Ok(Published::Range(lo, hi)),
            _ => Err(format!(
                "case '{}': give either published = a positive figure or published_range = [low, high]",
                self.name
            )),
        }
    }

    /// What kind of figure the case compares.
    pub fn judged(&self) -> Judged {
        match (self.kind, &self.denominator) {
            (CaseKind::ClosedForm, _) => Judged::ClosedForm,
            (CaseKind::Model, Some(_)) => Judged::Ratio,
            (CaseKind::Model, None) => Judged::Absolute,
        }
    }

    /// What the case reads, for the report.
    pub fn reads(&self) -> String {
        match &self.argmax {
            Some(axis) => format!("`{axis}` at peak `{}`", self.metric),
            None => format!("`{}`", self.metric),
        }
    }

    /// The designs the case reads, numerator first.
    pub fn designs(&self) -> Vec<&str> {
        let mut designs = vec![self.numerator.design.as_str()];
        if let Some(d) = &self.denominator {
            if d.design != self.numerator.design {
                designs.push(&d.design);
            }
        }
        designs
    }

    /// Whether the case's shape fits its config, and a model case says what
    /// was measured, before anything runs.
    pub fn check(&self, config: &Config) -> Result<(), String> {
        self.published()?;
        let fail = |what: String| Err(format!("case '{}': {what}", self.name));
        match self.judged() {
            Judged::Ratio if self.unit.is_some() => {
                return fail("a ratio has no unit; `absolute` gives the figures behind it".into())
            }
            Judged::Absolute if self.unit.is_none() => {
                return fail("an absolute figure needs its unit (unit = \"ops/s\")".into())
            }
            Judged::Absolute | Judged::ClosedForm if self.absolute.is_some() => {
                return fail(
                    "`absolute` gives the figures behind a ratio; this case has no denominator"
                        .into(),
                )
            }
            _ => {}
        }
        if self.kind == CaseKind::Model {
            let Some(machine) = &self.machine else {
                return fail("a model case names its machine profile (machine = \"...\")".into());
            };
            if let Some(point) = config.points.iter().find(|p| p.machine.name != *machine) {
                return fail(format!(
                    "names machine '{machine}', but config {} runs on '{}'",
                    self.config, point.machine.name
                ));
            }
            if self.command.as_deref().is_none_or(str::is_empty) {
                return fail(
                    "a model case gives the benchmark's command line (command = \"...\")".into(),
                );
            }
            for design in self.designs() {
                if !self.kernel.contains_key(design) {
                    return fail(format!(
                        "says no kernel state for design '{design}' (kernel = {{ \"{design}\" = \"commit or release\" }})"
                    ));
                }
            }
        }
        if let Some(extra) = self
            .kernel
            .keys()
            .find(|k| !self.designs().contains(&k.as_str()))
        {
            return fail(format!(
                "names a kernel for '{extra}', a design it does not read"
            ));
        }
        let Some(axis) = &self.argmax else {
            return Ok(());
        };
        if self.denominator.is_some() {
            return fail("argmax reads one curve; give no denominator".into());
        }
        if self.ns_per_op {
            return fail(
                "argmax reads where the metric peaks; ns_per_op would turn the peak into a trough"
                    .into(),
            );
        }
        if !config.axes.contains(axis) {
            return fail(format!(
                "argmax names '{axis}', but config {} sweeps {}",
                self.config,
                config.axes.join(", ")
            ));
        }
        if self.numerator.at.contains_key(axis) {
            return fail(format!(
                "the numerator's `at` fixes '{axis}', the axis argmax runs over"
            ));
        }
        Ok(())
    }

    /// The model's figure: the numerator's mean over repetitions, divided by
    /// the denominator's when there is one; or, with `argmax`, the axis value
    /// where the numerator's mean peaks.
    pub fn predict(
        &self,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<Prediction, String> {
        self.check(config)?;
        if let Some(axis) = &self.argmax {
            let figure = self.peak(axis, config, runs)?;
            return Ok(Prediction {
                figure,
                numerator: figure,
                denominator: None,
            });
        }
        let numerator = self.mean(&self.numerator, config, runs)?;
        let denominator = match &self.denominator {
            None => None,
            Some(d) => Some(self.mean(d, config, runs)?),
        };
        Ok(Prediction {
            figure: denominator.map_or(numerator, |d| numerator / d),
            numerator,
            denominator,
        })
    }

    fn peak(
        &self,
        axis: &str,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<f64, String> {
        let i = config
            .axes
            .iter()
            .position(|a| a == axis)
            .ok_or_else(|| format!("case '{}': no sweep axis '{axis}'", self.name))?;
        let mut values: Vec<&String> = Vec::new();
        for point in &config.points {
            if !values.contains(&&point.axis_values[i]) {
                values.push(&point.axis_values[i]);
            }
        }
        let mut best: Option<(f64, &String)> = None;
        for value in values {
            let mut at = self.numerator.at.clone();
            at.insert(axis.to_string(), value.clone());
            let selector = Selector {
                design: self.numerator.design.clone(),
                at,
            };
            let figure = self.mean(&selector, config, runs)?;
            if best.is_none_or(|(top, _)| figure > top) {
                best = Some((figure, value));
            }
        }
        let (_, value) =
            best.ok_or_else(|| format!("case '{}': '{axis}' has no values", self.name))?;
        value.parse().map_err(|_| {
            format!(
                "case '{}': argmax needs a numeric axis; '{axis}' has the value '{value}'",
                self.name
            )
        })
    }

    fn mean(
        &self,
        selector: &Selector,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<f64, String> {
        let design = config
            .designs
            .iter()
            .position(|d| *d == selector.design)
            .ok_or_else(|| {
                format!(
                    "case '{}': config {} has no design '{}' (it has {})",
                    self.name,
                    self.config,
                    selector.design,
                    config.designs.join(", ")
                )
            })?;
        for axis in selector.at.keys() {
            if !config.axes.contains(axis) {
                return Err(format!(
                    "case '{}': config {} has no sweep axis '{axis}' (it has {})",
                    self.name,
                    self.config,
                    config.axes.join(", ")
                ));
            }
        }
        let points: Vec<usize> = (0..config.points.len())
            .filter(|&p| {
                config.axes.iter().enumerate().all(|(i, axis)| {
                    selector
                        .at
                        .get(axis)
                        .is_none_or(|v| *v == config.points[p].axis_values[i])
                })
            })
            .collect();
        if points.len() != 1 {
            return Err(format!(
                "case '{}': {:?} selects {} sweep points of {}; name a value on every axis",
                self.name,
                selector.at,
                points.len(),
                self.config
            ));
        }
        let figures = runs
            .iter()
            .filter(|(p, d, _)| *p == points[0] && *d == design)
            .map(|(_, _, record)| metric(record, &self.metric))
            .collect::<Result<Vec<f64>, String>>()
            .map_err(|e| format!("case '{}': {e}", self.name))?;
        let mean = figures.iter().sum::<f64>() / figures.len() as f64;
        Ok(if self.ns_per_op { 1e9 / mean } else { mean })
    }
}

/// A record's figure by name: a field path (`ops_per_sec`,
/// `load.colliding_pairs`) or a workload figure (`extra.solve time`).
pub fn metric(record: &RunRecord, name: &str) -> Result<f64, String> {
    if let Some(figure) = name.strip_prefix("extra.") {
        return record
            .extra
            .iter()
            .find(|m| m.name == figure)
            .map(|m| m.value)
            .ok_or_else(|| format!("the run has no figure '{figure}'"));
    }
    let tree = serde_json::to_value(record).map_err(|e| format!("a run record: {e}"))?;
    name.split('.')
        .try_fold(&tree, |node, key| node.get(key))
        .and_then(|v| v.as_f64())
        .ok_or_else(|| format!("'{name}' is not a numeric field of a run record"))
}
