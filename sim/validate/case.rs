//! A validation case: a published figure, and where in a config's results
//! the model's prediction of it is read. The configs are ordinary configs
//! (`futexsim run` takes each as it is); the cases file names them.
//!
//! ```toml
//! [[case]]
//! name = "16-bucket private / global hash, perf bench futex hash, 192 CPUs"
//! config = "perf-hash-srf.toml"        # relative to the cases file
//! metric = "mean_thread_ops_per_sec"   # a record field, dotted, or extra.<figure name>
//! numerator = { design = "private-16", at = { threads = "192" } }
//! denominator = { design = "global" }  # absent: the numerator's figure itself
//! published = 0.0542                   # or published_range = [0.08, 0.44]
//! source = "where the figure was published"
//! lacks = "what the model leaves out that this case needs"   # optional
//! ```
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

use super::verdict::Published;
use crate::config::Config;
use crate::record::RunRecord;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesFile {
    pub case: Vec<CaseSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    pub name: String,
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
    pub source: String,
    #[serde(default)]
    pub lacks: Option<String>,
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
            (Some(r), None) if r > 0.0 => Ok(Published::Ratio(r)),
            (None, Some([lo, hi])) if 0.0 < lo && lo <= hi => Ok(Published::Range(lo, hi)),
            _ => Err(format!(
                "case '{}': give either published = a positive ratio or published_range = [low, high]",
                self.name
            )),
        }
    }

    /// What the case reads, for the report.
    pub fn reads(&self) -> String {
        match &self.argmax {
            Some(axis) => format!("`{axis}` at peak `{}`", self.metric),
            None => format!("`{}`", self.metric),
        }
    }

    /// Whether the case's shape fits its config, before anything runs.
    pub fn check(&self, config: &Config) -> Result<(), String> {
        let Some(axis) = &self.argmax else {
            return Ok(());
        };
        if self.denominator.is_some() {
            return Err(format!(
                "case '{}': argmax reads one curve; give no denominator",
                self.name
            ));
        }
        if !config.axes.contains(axis) {
            return Err(format!(
                "case '{}': argmax names '{axis}', but config {} sweeps {}",
                self.name,
                self.config,
                config.axes.join(", ")
            ));
        }
        if self.numerator.at.contains_key(axis) {
            return Err(format!(
                "case '{}': the numerator's `at` fixes '{axis}', the axis argmax runs over",
                self.name
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
    ) -> Result<f64, String> {
        self.check(config)?;
        if let Some(axis) = &self.argmax {
            return self.peak(axis, config, runs);
        }
        let numerator = self.mean(&self.numerator, config, runs)?;
        match &self.denominator {
            None => Ok(numerator),
            Some(d) => Ok(numerator / self.mean(d, config, runs)?),
        }
    }

    fn peak(
        &self,
        axis: &str,
        config: &Config,
        runs: &[(usize, usize, RunRecord)],
    ) -> Result<f64, String> {
        let i = config.axes.iter().position(|a| a == axis).expect("checked");
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
        Ok(figures.iter().sum::<f64>() / figures.len() as f64)
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
    let tree = serde_json::to_value(record).expect("a record serializes");
    name.split('.')
        .try_fold(&tree, |node, key| node.get(key))
        .and_then(|v| v.as_f64())
        .ok_or_else(|| format!("'{name}' is not a numeric field of a run record"))
}
