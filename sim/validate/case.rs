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
//! noise = 0.0042                       # optional: the published run-to-run noise of a ratio
//! machine = "srf-2s-192"               # the config's machine profile
//! kernel = { global = "80367ad01d", private-16 = "7c4f75a21f" }
//! command = "perf bench futex hash"    # the benchmark's exact command line
//! source = "where the figure was published"
//! lacks = "what the model leaves out that this case needs"   # optional
//! ```
//!
//! A case is a model case (the default) or, with `kind = "closed-form"`, a
//! check against a closed form of the model's own inputs, counted apart; or,
//! with `kind = "calibration"` and `calibrates = "what was fitted to it"`, a
//! published figure a profile's parameter was fitted to: reported apart, as
//! used to calibrate, not a test, and counted in nothing. A
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

use super::verdict::{Change, Judged, Published, Reading, ASSUMED_NOISE};
use crate::config::{Config, Point};
use crate::echo::echo;
use crate::record::{
    CoherenceRecord, Latency, LoadRecord, LockRecord, RunRecord, TableRecord, UniformLoad,
    WorkloadName,
};
use crate::report::interval::{SeedInterval, CONFIDENCE};
use crate::report::track_record::Likeness;
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
    /// A figure a profile's parameter was fitted to: not a test.
    Calibration,
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
    /// The published run-to-run noise of a ratio's change, relative: the
    /// root sum of squares of its two figures' published spreads (0.0416
    /// for +-0.55 % and +-4.12 %). Absent: [`ASSUMED_NOISE`], said so.
    #[serde(default)]
    pub noise: Option<f64>,
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
    /// What a calibration input's figure was used to fit.
    #[serde(default)]
    pub calibrates: Option<String>,
}

/// The model's figure, and the figures it is formed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub figure: f64,
    pub numerator: f64,
    pub denominator: Option<f64>,
    /// How the figures read as time per op; None for a count.
    pub reading: Option<Reading>,
    /// The figure's seed interval, over the per-seed values it is the mean
    /// of (a ratio's per-seed ratios); None for a peak along an axis, which
    /// is one value of the axis, not a mean.
    pub seed: Option<SeedInterval>,
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
    pub fn published(&self) -> Result<Published, CaseError> {
        match (self.published, self.published_range) {
            (Some(r), None) if r > 0.0 => Ok(Published::Value(r)),
            (None, Some([lo, hi])) if 0.0 < lo && lo <= hi => Ok(Published::Range(lo, hi)),
            (None, Some(_)) => Err(self.error("published_range", CaseProblem::NoPublishedFigure)),
            _ => Err(self.error("published", CaseProblem::NoPublishedFigure)),
        }
    }

    /// `problem`, placed at the case's `key`.
    fn error(&self, key: &'static str, problem: CaseProblem) -> CaseError {
        CaseError {
            case: self.name.clone(),
            key,
            problem,
        }
    }

    /// What kind of figure the case compares.
    pub fn judged(&self) -> Judged {
        match (self.kind, &self.denominator) {
            (CaseKind::ClosedForm, _) => Judged::ClosedForm,
            (CaseKind::Calibration, _) => Judged::Calibration,
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
    /// was measured, before anything runs, with the key of the case each
    /// mistake is about: everything that can be known before a run is, the
    /// designs and the points the case reads, and the metric it reads of
    /// them, included.
    pub fn check(&self, config: &Config) -> Result<(), CaseError> {
        self.published()?;
        let fail = |key: &'static str, problem: CaseProblem| Err(self.error(key, problem));
        match self.judged() {
            Judged::Ratio if self.unit.is_some() => {
                return fail("unit", CaseProblem::RatioWithUnit)
            }
            Judged::Absolute | Judged::Calibration if self.unit.is_none() => {
                return fail("unit", CaseProblem::AbsoluteWithoutUnit)
            }
            Judged::Absolute | Judged::ClosedForm | Judged::Calibration
                if self.absolute.is_some() =>
            {
                return fail("absolute", CaseProblem::AbsoluteWithoutDenominator)
            }
            Judged::Absolute | Judged::ClosedForm | Judged::Calibration if self.noise.is_some() => {
                return fail("noise", CaseProblem::NoiseWithoutChange)
            }
            Judged::Calibration if self.calibrates.is_none() => {
                return fail("calibrates", CaseProblem::CalibrationWithoutFit)
            }
            Judged::Ratio | Judged::Absolute | Judged::ClosedForm if self.calibrates.is_some() => {
                return fail("calibrates", CaseProblem::FitOfATest)
            }
            _ => {}
        }
        if let Some(noise) = self.noise {
            if !(noise > 0.0 && noise < 1.0) {
                return fail("noise", CaseProblem::NoiseOutOfRange { noise });
            }
        }
        if self.kind != CaseKind::ClosedForm {
            let Some(machine) = &self.machine else {
                return fail("machine", CaseProblem::NoMachine);
            };
            if let Some(point) = config.points.iter().find(|p| p.machine.name != *machine) {
                return fail(
                    "machine",
                    CaseProblem::OtherMachine {
                        named: machine.clone(),
                        config: self.config.clone(),
                        runs_on: point.machine.name.clone(),
                    },
                );
            }
            if self.command.as_deref().is_none_or(str::is_empty) {
                return fail("command", CaseProblem::NoCommand);
            }
            if let Some(design) = self
                .designs()
                .into_iter()
                .find(|d| !self.kernel.contains_key(*d))
            {
                return fail(
                    "kernel",
                    CaseProblem::NoKernel {
                        design: design.to_string(),
                    },
                );
            }
        }
        if let Some(extra) = self
            .kernel
            .keys()
            .find(|k| !self.designs().contains(&k.as_str()))
        {
            return fail(
                "kernel",
                CaseProblem::KernelOfUnreadDesign {
                    design: extra.clone(),
                },
            );
        }
        let Some(axis) = &self.argmax else {
            let mut read = vec![("numerator", &self.numerator)];
            if let Some(d) = &self.denominator {
                read.push(("denominator", d));
            }
            for (key, selector) in read {
                let (_, point) = self.select(key, selector, config)?;
                self.check_metric(&config.points[point])?;
            }
            return Ok(());
        };
        if self.denominator.is_some() {
            return fail("denominator", CaseProblem::ArgmaxWithDenominator);
        }
        if self.ns_per_op {
            return fail("ns_per_op", CaseProblem::ArgmaxOfNsPerOp);
        }
        let Some(i) = config.axes.iter().position(|a| a == axis) else {
            return fail(
                "argmax",
                CaseProblem::ArgmaxAxisNotSwept {
                    axis: axis.clone(),
                    config: self.config.clone(),
                    axes: config.axes.clone(),
                },
            );
        };
        if self.numerator.at.contains_key(axis) {
            return fail(
                "numerator",
                CaseProblem::NumeratorFixesArgmaxAxis { axis: axis.clone() },
            );
        }
        for selector in self.along(&self.numerator, axis, i, config) {
            let (_, point) = self.select("numerator", &selector, config)?;
            self.check_metric(&config.points[point])?;
        }
        Ok(())
    }

    /// Whether the runs of `point` have the figure the case reads: a
    /// numeric field of every run record, or a figure the point's workload
    /// reports (`extra.<name>`).
    fn check_metric(&self, point: &Point) -> Result<(), CaseError> {
        let workload = point.workload.workload();
        let Some(figure) = self.metric.strip_prefix("extra.") else {
            return metric(&template_record(), &self.metric)
                .map(|_| ())
                .map_err(|e| self.error("metric", CaseProblem::Metric(e)));
        };
        let figures = workload.figures();
        if figures.iter().any(|f| f == figure) {
            return Ok(());
        }
        Err(self.error(
            "metric",
            CaseProblem::NoWorkloadFigure {
                workload: workload.label(),
                figure: figure.to_string(),
                reported: figures.iter().map(|f| f.to_string()).collect(),
            },
        ))
    }

    /// The selectors of `selector` at each value of sweep axis `axis` (the
    /// `i`th), in the order the points give them.
    fn along(&self, selector: &Selector, axis: &str, i: usize, config: &Config) -> Vec<Selector> {
        let mut values: Vec<&String> = Vec::new();
        for point in &config.points {
            if !values.contains(&&point.axis_values[i]) {
                values.push(&point.axis_values[i]);
            }
        }
        values
            .into_iter()
            .map(|value| {
                let mut at = selector.at.clone();
                at.insert(axis.to_string(), value.clone());
                Selector {
                    design: selector.design.clone(),
                    at,
                }
            })
            .collect()
    }

    /// The design (its index) and the one sweep point `selector`, the
    /// case's `key`, names.
    fn select(
        &self,
        key: &'static str,
        selector: &Selector,
        config: &Config,
    ) -> Result<(usize, usize), CaseError> {
        let design = config
            .designs
            .iter()
            .position(|d| *d == selector.design)
            .ok_or_else(|| {
                self.error(
                    key,
                    CaseProblem::NoDesign {
                        config: self.config.clone(),
                        design: selector.design.clone(),
                        designs: config.designs.clone(),
                    },
                )
            })?;
        if let Some(axis) = selector.at.keys().find(|a| !config.axes.contains(a)) {
            return Err(self.error(
                key,
                CaseProblem::NoAxis {
                    config: self.config.clone(),
                    axis: axis.clone(),
                    axes: config.axes.clone(),
                },
            ));
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
        match points[..] {
            [point] => Ok((design, point)),
            _ => Err(self.error(
                key,
                CaseProblem::NotOnePoint {
                    at: selector.at.clone(),
                    points: points.len(),
                    config: self.config.clone(),
                },
            )),
        }
    }

    /// The model's figure: the numerator's mean over repetitions, or with a
    /// denominator the paired ratio (the mean over repetitions of the
    /// numerator's figure over the denominator's at the same seed); or, with
    /// `argmax`, the axis value where the numerator's mean peaks.
    pub fn predict(
        &self,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<Prediction, CaseError> {
        self.check(config)?;
        if let Some(axis) = &self.argmax {
            let figure = self.peak(axis, config, runs)?;
            return Ok(Prediction {
                figure,
                numerator: figure,
                denominator: None,
                reading: None,
                seed: None,
            });
        }
        let numerators = self.figures("numerator", &self.numerator, config, runs)?;
        let numerator = mean_of(&numerators);
        let reading = runs.first().and_then(|(_, _, record)| self.reading(record));
        let Some(d) = &self.denominator else {
            return Ok(Prediction {
                figure: numerator,
                numerator,
                denominator: None,
                reading,
                seed: SeedInterval::of(&numerators, CONFIDENCE),
            });
        };
        let denominators = self.figures("denominator", d, config, runs)?;
        // The paired ratio, as every report gives it: repetition r of the
        // numerator's runs over repetition r of the denominator's (the same
        // seed), then the mean of those ratios.
        let ratios: Vec<f64> = numerators
            .iter()
            .zip(&denominators)
            .map(|(n, d)| n / d)
            .collect();
        Ok(Prediction {
            figure: mean_of(&ratios),
            numerator,
            denominator: Some(mean_of(&denominators)),
            reading,
            seed: SeedInterval::of(&ratios, CONFIDENCE),
        })
    }

    /// How the case's figure reads as time per op: with `ns_per_op` a time
    /// in nanoseconds; a record's `*_per_sec` field a rate; a workload's
    /// figure by its unit.
    fn reading(&self, record: &RunRecord) -> Option<Reading> {
        if self.ns_per_op {
            return Some(Reading::Time { ns: 1.0 });
        }
        match self.metric.strip_prefix("extra.") {
            Some(figure) => record
                .extra
                .iter()
                .find(|m| m.name == figure)
                .and_then(|m| Reading::of_unit(&m.unit)),
            None if self.metric.ends_with("_per_sec") => Some(Reading::Rate),
            None => None,
        }
    }

    /// What the case's runs are like, for the track record: its
    /// numerator's first run; None for a closed form.
    pub fn likeness(
        &self,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Option<Likeness> {
        if self.kind != CaseKind::Model || self.argmax.is_some() {
            return None;
        }
        let (design, point) = self.select("numerator", &self.numerator, config).ok()?;
        runs.iter()
            .find(|(p, d, _)| *p == point && *d == design)
            .map(|(_, _, record)| Likeness::of(record))
    }

    /// A ratio case's change from its denominator's run (before) to its
    /// numerator's (after), published and predicted, as effects on time
    /// per op.
    pub fn change(&self, published: f64, predicted: &Prediction) -> Result<Change, CaseError> {
        let reading = predicted
            .reading
            .ok_or_else(|| self.error("metric", CaseProblem::NoTimePerOp))?;
        let published_ns = self.absolute.as_ref().and_then(|a| {
            let reading = Reading::of_unit(&a.unit)?;
            Some(reading.ns_per_op(a.numerator) - reading.ns_per_op(a.denominator))
        });
        let predicted_ns = predicted
            .denominator
            .map(|d| reading.ns_per_op(predicted.numerator) - reading.ns_per_op(d));
        Ok(Change {
            published: reading.effect(published),
            predicted: reading.effect(predicted.figure),
            published_ns,
            predicted_ns,
            noise: self.noise.unwrap_or(ASSUMED_NOISE),
            noise_published: self.noise.is_some(),
        })
    }

    fn peak(
        &self,
        axis: &str,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<f64, CaseError> {
        let fail = |problem| self.error("argmax", problem);
        let i = config
            .axes
            .iter()
            .position(|a| a == axis)
            .ok_or_else(|| fail(CaseProblem::NoSweepAxis { axis: axis.into() }))?;
        let mut best: Option<(f64, String)> = None;
        for selector in self.along(&self.numerator, axis, i, config) {
            let figure = self.mean("numerator", &selector, config, runs)?;
            if best.as_ref().is_none_or(|(top, _)| figure > *top) {
                best = Some((figure, selector.at[axis].clone()));
            }
        }
        let (_, value) =
            best.ok_or_else(|| fail(CaseProblem::NoAxisValues { axis: axis.into() }))?;
        value.parse().map_err(|_| {
            fail(CaseProblem::NonNumericAxis {
                axis: axis.into(),
                value: value.clone(),
            })
        })
    }

    /// The figure the case reads of each repetition of the runs `selector`,
    /// the case's `key`, names, in repetition order.
    fn figures(
        &self,
        key: &'static str,
        selector: &Selector,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<Vec<f64>, CaseError> {
        let (design, point) = self.select(key, selector, config)?;
        runs.iter()
            .filter(|(p, d, _)| *p == point && *d == design)
            .map(|(_, _, record)| {
                metric(record, &self.metric).map(|x| if self.ns_per_op { 1e9 / x } else { x })
            })
            .collect::<Result<Vec<f64>, MetricError>>()
            .map_err(|e| self.error("metric", CaseProblem::Metric(e)))
    }

    /// The mean over repetitions of the figure `figures` reads.
    fn mean(
        &self,
        key: &'static str,
        selector: &Selector,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<f64, CaseError> {
        Ok(mean_of(&self.figures(key, selector, config, runs)?))
    }
}

fn mean_of(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// A case's mistake: the case's name, the key of the case it is about
/// (`metric`, `numerator`...), where in the cases file it is placed, and
/// what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("case '{case}': {problem}")]
pub struct CaseError {
    pub case: String,
    pub key: &'static str,
    pub problem: CaseProblem,
}

/// What is wrong with a case, or with what it reads of its config's runs.
#[derive(Debug, thiserror::Error)]
pub enum CaseProblem {
    #[error("give either published = a positive figure or published_range = [low, high]")]
    NoPublishedFigure,
    #[error("a ratio has no unit; `absolute` gives the figures behind it")]
    RatioWithUnit,
    #[error("an absolute figure needs its unit (unit = \"ops/s\")")]
    AbsoluteWithoutUnit,
    #[error("`absolute` gives the figures behind a ratio; this case has no denominator")]
    AbsoluteWithoutDenominator,
    #[error("`noise` is the published noise of a change; this case has no denominator")]
    NoiseWithoutChange,
    #[error("a calibration input says what was fitted to it (calibrates = \"...\")")]
    CalibrationWithoutFit,
    #[error("only a calibration input (kind = \"calibration\") names what was fitted to it")]
    FitOfATest,
    #[error(
        "noise = {noise} is not a share of a figure: give it above 0 and below 1 (0.02 for 2 %)"
    )]
    NoiseOutOfRange { noise: f64 },
    #[error(
        "a ratio is judged by its effect on time per op, and this metric is neither a rate \
         (ops/s) nor a time (ns, us, ms, s)"
    )]
    NoTimePerOp,
    #[error("a model case names its machine profile (machine = \"...\")")]
    NoMachine,
    #[error(
        "names machine '{}', but config {config} runs on '{runs_on}'",
        echo(named)
    )]
    OtherMachine {
        named: String,
        config: String,
        runs_on: String,
    },
    #[error("a model case gives the benchmark's command line (command = \"...\")")]
    NoCommand,
    #[error(
        "says no kernel state for design '{}' (kernel = {{ \"{}\" = \"commit or release\" }})",
        echo(design),
        echo(design)
    )]
    NoKernel { design: String },
    #[error("names a kernel for '{}', a design it does not read", echo(design))]
    KernelOfUnreadDesign { design: String },
    #[error("argmax reads one curve; give no denominator")]
    ArgmaxWithDenominator,
    #[error("argmax reads where the metric peaks; ns_per_op would turn the peak into a trough")]
    ArgmaxOfNsPerOp,
    #[error(
        "argmax names '{}', but config {config} sweeps {}",
        echo(axis),
        axes.join(", ")
    )]
    ArgmaxAxisNotSwept {
        axis: String,
        config: String,
        axes: Vec<String>,
    },
    #[error(
        "the numerator's `at` fixes '{}', the axis argmax runs over",
        echo(axis)
    )]
    NumeratorFixesArgmaxAxis { axis: String },
    #[error(
        "config {config} has no design '{}' (it has {})",
        echo(design),
        designs.join(", ")
    )]
    NoDesign {
        config: String,
        design: String,
        designs: Vec<String>,
    },
    #[error(
        "config {config} has no sweep axis '{}' (it has {})",
        echo(axis),
        axes.join(", ")
    )]
    NoAxis {
        config: String,
        axis: String,
        axes: Vec<String>,
    },
    #[error(
        "{} selects {points} sweep points of {config}; name a value on every axis",
        echo(&format!("{at:?}"))
    )]
    NotOnePoint {
        at: BTreeMap<String, String>,
        points: usize,
        config: String,
    },
    #[error(transparent)]
    Metric(MetricError),
    #[error(
        "the workload ({workload}) reports no figure '{}'; it reports {}",
        echo(figure),
        if reported.is_empty() { "none beyond the record's fields".to_string() } else { reported.join(", ") }
    )]
    NoWorkloadFigure {
        workload: String,
        figure: String,
        reported: Vec<String>,
    },
    #[error("no sweep axis '{}'", echo(axis))]
    NoSweepAxis { axis: String },
    #[error("'{axis}' has no values")]
    NoAxisValues { axis: String },
    #[error(
        "argmax needs a numeric axis; '{axis}' has the value '{}'",
        echo(value)
    )]
    NonNumericAxis { axis: String, value: String },
}

/// Why a record has no figure of a metric's name.
#[derive(Debug, thiserror::Error)]
pub enum MetricError {
    #[error("the run has no figure '{}'", echo(figure))]
    NoFigure { figure: String },
    #[error("'{}' is not a numeric field of a run record", echo(name))]
    NotNumeric { name: String },
    #[error("a run record: {0}")]
    Unreadable(serde_json::Error),
}

/// A record holding every field, each 0: what a metric that names a
/// record's field is checked against before any run.
fn template_record() -> RunRecord {
    let lock = LockRecord {
        acquisitions: 0,
        contended: 0,
        mean_wait_ns: 0.0,
        mean_hold_ns: 0.0,
    };
    RunRecord {
        machine: String::new(),
        design: String::new(),
        workload: WorkloadName::parse(""),
        seed: 0,
        cpus: 0,
        nodes: 0,
        threads: 0,
        processes: 0,
        line_size: 0,
        table: TableRecord {
            slots: 0,
            instances: 0,
            private_slots: Vec::new(),
            bytes: 0,
            private_hashes: Vec::new(),
        },
        sim_ns: 0,
        ops: 0,
        ops_per_sec: 0.0,
        mean_thread_ops_per_sec: 0.0,
        thread_rsd_pct: 0.0,
        min_thread_ops: 0,
        max_thread_ops: 0,
        latency_ns: Latency {
            mean: 0.0,
            p50: 0,
            p90: 0,
            p99: 0,
            max: 0,
        },
        locks: lock,
        coherence: CoherenceRecord {
            loads: 0,
            stores: 0,
            l1_hit: 0,
            lcl_hit: 0,
            rmt_hit: 0,
            lcl_hitm: 0,
            rmt_hitm: 0,
            lcl_rfo_modified: 0,
            rmt_rfo_modified: 0,
            dram_lcl: 0,
            dram_rmt: 0,
            transfers: 0,
            transfers_per_op: 0.0,
            hitm_per_op: 0.0,
            true_sharing: 0,
            false_sharing: 0,
            hitm_nodes: Vec::new(),
        },
        load: Some(LoadRecord {
            keys: 0,
            buckets: 0,
            max_load: 0,
            mean_load: 0.0,
            keys_sharing_bucket: 0,
            keys_sharing_line: 0,
            colliding_pairs: 0,
            histogram: Vec::new(),
            uniform: UniformLoad {
                max_load: 0.0,
                mean_load: 0.0,
                keys_sharing_bucket: 0.0,
                keys_sharing_bucket_sd: 0.0,
                keys_sharing_line: 0.0,
                colliding_pairs: 0.0,
                colliding_pairs_sd: 0.0,
                histogram: Vec::new(),
            },
        }),
        top_lines: Vec::new(),
        events: 0,
        asleep_at_end: 0,
        workload_locks: Vec::new(),
        extra: Vec::new(),
        perf_threads: Vec::new(),
        groups: Vec::new(),
        time_spent: None,
    }
}

/// A record's figure by name: a field path (`ops_per_sec`,
/// `load.colliding_pairs`) or a workload figure (`extra.solve time`).
pub fn metric(record: &RunRecord, name: &str) -> Result<f64, MetricError> {
    if let Some(figure) = name.strip_prefix("extra.") {
        return record
            .extra
            .iter()
            .find(|m| m.name == figure)
            .map(|m| m.value)
            .ok_or_else(|| MetricError::NoFigure {
                figure: figure.to_string(),
            });
    }
    let tree = serde_json::to_value(record).map_err(MetricError::Unreadable)?;
    name.split('.')
        .try_fold(&tree, |node, key| node.get(key))
        .and_then(|v| v.as_f64())
        .ok_or_else(|| MetricError::NotNumeric {
            name: name.to_string(),
        })
}
