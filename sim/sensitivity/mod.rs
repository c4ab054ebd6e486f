//! The model interval: a config re-run over the plausible ranges of its
//! machine profile's unmeasured parameters (the profile's `[plausible]`,
//! sim/machine/plausible.rs), for `futexsim run --sensitivity`.
//!
//! The samples are deterministic, beside the nominal run (the config as it
//! is, whose report is report.md):
//!
//! - one at a time: each parameter at its low, then at its high, every
//!   other parameter at its nominal value (an end equal to the nominal
//!   value is the nominal run, not run again);
//! - jointly: every corner of the ranges when at most [`MAX_CORNER_PARAMETERS`]
//!   parameters vary (up to 8 samples), otherwise a Latin hypercube of
//!   [`HYPERCUBE_SAMPLES`] samples: each range cut into that many equal
//!   strata, each stratum's midpoint taken once, the strata paired across
//!   parameters by fixed permutations (a splitmix64 stream of a fixed seed).
//!
//! So k parameters cost at most 2k + 8 runs of the config. A parameter the
//! config sets itself (in `[machine]` or on a sweep axis), or whose value
//! at some point lies outside its range, is held at its value and named.
//! What the runs give is in [`spans`].

pub mod spans;

use crate::config::{Config, Point};
use crate::machine::plausible::{self, PlausibleRange};
use serde::{Deserialize, Serialize};

/// Up to this many parameters, the joint samples are the corners.
pub const MAX_CORNER_PARAMETERS: usize = 3;
/// The joint samples of a Latin hypercube, beyond that.
pub const HYPERCUBE_SAMPLES: usize = 8;
/// The seed of the hypercube's permutations: fixed, so a config always
/// gets the same samples.
const HYPERCUBE_SEED: u64 = 0x5e45_1717_7e5e_ed50;

/// A parameter the samples vary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// Its path in the profile: `coherence.read_occupancy`.
    pub path: String,
    #[serde(flatten)]
    pub range: PlausibleRange,
    /// Its value in the config (at the first point where points differ).
    pub nominal: f64,
    /// A whole number: samples round to one.
    #[serde(skip)]
    pub whole: bool,
    /// The same value at every point, so a sample at it is the nominal run.
    #[serde(skip)]
    pub uniform: bool,
}

/// A parameter with a range that the samples leave at the config's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldParameter {
    pub path: String,
    pub why: String,
}

/// How the joint samples were drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Joint {
    /// No parameter varies: nothing to draw.
    #[default]
    None,
    Corners,
    LatinHypercube,
}

/// One sample: a value for each parameter, None where it keeps the
/// config's own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// The samples of a config; the default draws none (the nominal run alone).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub parameters: Vec<Parameter>,
    pub held: Vec<HeldParameter>,
    pub joint: Joint,
    pub samples: Vec<Sample>,
    /// For each parameter, the sample at its low and the one at its high,
    /// every other parameter nominal; None where that end is the nominal run.
    pub swings: Vec<[Option<usize>; 2]>,
}

impl Plan {
    /// The samples `config`'s plausible ranges give.
    pub fn new(config: &Config) -> Plan {
        let mut parameters = Vec::new();
        let mut held = Vec::new();
        for (path, range) in &config.plausible {
            let hold = |why: String| HeldParameter {
                path: path.clone(),
                why,
            };
            if config.set_by_config.contains(path) {
                held.push(hold("the config sets it".into()));
                continue;
            }
            let nominals: Result<Vec<f64>, String> = config
                .points
                .iter()
                .map(|p| plausible::nominal(&p.machine, path))
                .collect();
            let nominals = match nominals {
                Ok(n) => n,
                Err(e) => {
                    held.push(hold(e));
                    continue;
                }
            };
            if let Some(outside) = nominals
                .iter()
                .find(|v| !(range.low..=range.high).contains(*v))
            {
                held.push(hold(format!(
                    "its value here, {outside}, lies outside the profile's range, {} to {}",
                    range.low, range.high
                )));
                continue;
            }
            let nominal = nominals.first().copied().unwrap_or(f64::NAN);
            parameters.push(Parameter {
                path: path.clone(),
                range: range.clone(),
                nominal,
                whole: config
                    .points
                    .first()
                    .is_some_and(|p| plausible::is_whole(&p.machine, path)),
                uniform: nominals.iter().all(|v| *v == nominal),
            });
        }
        let mut plan = Plan {
            joint: match parameters.len() {
                0 => Joint::None,
                n if n <= MAX_CORNER_PARAMETERS => Joint::Corners,
                _ => Joint::LatinHypercube,
            },
            parameters,
            held,
            samples: Vec::new(),
            swings: Vec::new(),
        };
        for j in 0..plan.parameters.len() {
            let range = &plan.parameters[j].range;
            let ends = [range.low, range.high].map(|v| {
                let mut values = vec![None; plan.parameters.len()];
                values[j] = Some(v);
                plan.add(values)
            });
            plan.swings.push(ends);
        }
        for values in plan.joint_values() {
            plan.add(values.into_iter().map(Some).collect());
        }
        plan
    }

    /// Adds a sample unless it is the nominal run or one already drawn;
    /// returns its index, None for the nominal run.
    fn add(&mut self, values: Vec<Option<f64>>) -> Option<usize> {
        let values: Vec<Option<f64>> = values
            .into_iter()
            .zip(&self.parameters)
            .map(|(v, p)| {
                let v = v.map(|v| if p.whole { v.round() } else { v });
                v.filter(|v| !(p.uniform && *v == p.nominal))
            })
            .collect();
        if values.iter().all(Option::is_none) {
            return None;
        }
        if let Some(at) = self.samples.iter().position(|s| s.values == values) {
            return Some(at);
        }
        self.samples.push(Sample {
            label: format!("s{:02}", self.samples.len() + 1),
            values,
        });
        Some(self.samples.len() - 1)
    }

    /// The joint samples' values, every parameter set.
    fn joint_values(&self) -> Vec<Vec<f64>> {
        let k = self.parameters.len();
        match self.joint {
            Joint::None => Vec::new(),
            Joint::Corners => (0..1usize << k)
                .map(|corner| {
                    self.parameters
                        .iter()
                        .enumerate()
                        .map(|(j, p)| {
                            if corner >> j & 1 == 0 {
                                p.range.low
                            } else {
                                p.range.high
                            }
                        })
                        .collect()
                })
                .collect(),
            Joint::LatinHypercube => {
                let mut random = SplitMix64(HYPERCUBE_SEED);
                let strata: Vec<Vec<usize>> = (0..k)
                    .map(|_| permutation(HYPERCUBE_SAMPLES, &mut random))
                    .collect();
                (0..HYPERCUBE_SAMPLES)
                    .map(|i| {
                        self.parameters
                            .iter()
                            .zip(&strata)
                            .map(|(p, order)| {
                                let at = (order[i] as f64 + 0.5) / HYPERCUBE_SAMPLES as f64;
                                significant(p.range.low + at * (p.range.high - p.range.low))
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// The rule the samples follow, in words, for the report.
    pub fn rule(&self) -> String {
        let k = self.parameters.len();
        let joint = match self.joint {
            Joint::None => return "no parameter varies: nothing was re-run".into(),
            Joint::Corners => format!(
                "and jointly every corner of the ranges ({} corners: at most \
                 {MAX_CORNER_PARAMETERS} parameters vary)",
                1usize << k
            ),
            Joint::LatinHypercube => format!(
                "and jointly a Latin hypercube of {HYPERCUBE_SAMPLES} samples (more than \
                 {MAX_CORNER_PARAMETERS} parameters vary: each range cut into \
                 {HYPERCUBE_SAMPLES} equal strata, each stratum's midpoint taken once, paired \
                 across parameters by fixed permutations)"
            ),
        };
        format!(
            "{k} parameter(s) varied: each one at a time at its low and its high, the others \
             nominal, {joint}; {} distinct samples beside the nominal run",
            self.samples.len()
        )
    }

    /// What a sample sets, as `coherence.read_occupancy = 0.75, latency.rmw = 8`.
    pub fn settings(&self, sample: &Sample) -> Vec<(String, f64)> {
        self.parameters
            .iter()
            .zip(&sample.values)
            .filter_map(|(p, v)| v.map(|v| (p.path.clone(), v)))
            .collect()
    }

    /// `config` with one sample's values set on every point's machine.
    pub fn config_at(&self, config: &Config, sample: &Sample) -> Result<Config, String> {
        let settings = self.settings(sample);
        let mut points = Vec::with_capacity(config.points.len());
        for point in &config.points {
            let mut machine = point.machine.clone();
            for (path, value) in &settings {
                machine = plausible::with_value(&machine, path, *value)
                    .map_err(|e| format!("sample {}: {path}: {e}", sample.label))?;
            }
            points.push(Point {
                machine,
                ..point.clone()
            });
        }
        Ok(Config {
            points,
            ..config.clone()
        })
    }

    /// The config the samples are run as: a leading `sample` axis over the
    /// config's own points, each point's machine with the sample's values.
    pub fn sample_config(&self, config: &Config) -> Result<Config, String> {
        let mut points = Vec::new();
        let mut described = String::new();
        for sample in &self.samples {
            let text: Vec<String> = self
                .settings(sample)
                .iter()
                .map(|(p, v)| format!("{p} = {v}"))
                .collect();
            described.push_str(&format!("# {}: {}\n", sample.label, text.join(", ")));
            for point in self.config_at(config, sample)?.points {
                let mut axis_values = vec![sample.label.clone()];
                axis_values.extend(point.axis_values.iter().cloned());
                points.push(Point {
                    axis_values,
                    ..point
                });
            }
        }
        let mut axes = vec![SAMPLE_AXIS.to_string()];
        axes.extend(config.axes.iter().cloned());
        Ok(Config {
            axes,
            points,
            // What the campaign is the result of: the config and the samples.
            resolved: format!(
                "{}\n# --sensitivity: each sample sets the machine's parameters named\n{described}",
                config.resolved
            ),
            ..config.clone()
        })
    }
}

/// The axis the samples' campaign adds before the config's own.
pub const SAMPLE_AXIS: &str = "sample";

/// `v` to 4 significant digits: a stratum's midpoint as a person writes
/// it (0.35, not 0.35000000000000003), still inside its stratum.
fn significant(v: f64) -> f64 {
    format!("{v:.3e}").parse().unwrap_or(v)
}

/// A shuffle of 0..n (Fisher-Yates).
fn permutation(n: usize, random: &mut SplitMix64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (random.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// splitmix64 (Steele, Lea, Flood 2014): a small generator whose stream is
/// fixed by its seed, on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::plausible::PlausibleRange;

    fn config_with(ranges: &[(&str, f64, f64)]) -> Config {
        let mut config = Config::default_config(&[]).unwrap();
        config.plausible = ranges
            .iter()
            .map(|(path, low, high)| {
                (
                    path.to_string(),
                    PlausibleRange {
                        low: *low,
                        high: *high,
                        source: "a test".into(),
                    },
                )
            })
            .collect();
        config
    }

    #[test]
    fn few_parameters_get_the_corners_and_an_end_at_the_nominal_value_is_not_run_again() {
        let plan = Plan::new(&config_with(&[
            ("coherence.read_occupancy", 0.75, 1.5),
            ("latency.rmw", 5.0, 8.0),
        ]));
        assert_eq!(plan.joint, Joint::Corners);
        // read_occupancy's high is its nominal 1.5: its swing's high end is the nominal run.
        assert_eq!(plan.swings[0][1], None);
        // 3 swings, then the corners not already drawn: (0.75, 8) and (1.5, 8) are
        // swings or new; (0.75, 5) new.
        let settings: Vec<Vec<(String, f64)>> =
            plan.samples.iter().map(|s| plan.settings(s)).collect();
        assert_eq!(plan.samples.len(), 5, "{settings:?}");
        assert!(plan.samples.windows(2).all(|w| w[0].values != w[1].values));
    }

    #[test]
    fn many_parameters_get_a_hypercube_that_takes_each_stratum_once() {
        let plan = Plan::new(&config_with(&[
            ("coherence.read_occupancy", 0.75, 1.5),
            ("coherence.clean_hit", 15.0, 20.0),
            ("latency.rmw", 5.0, 8.0),
            ("scheduler.ipi_send", 50.0, 300.0),
        ]));
        assert_eq!(plan.joint, Joint::LatinHypercube);
        let joint = &plan.samples[plan.samples.len() - HYPERCUBE_SAMPLES..];
        let mut rmw: Vec<f64> = joint.iter().filter_map(|s| s.values[2]).collect();
        rmw.sort_by(f64::total_cmp);
        let expected: Vec<f64> = (0..HYPERCUBE_SAMPLES)
            .map(|i| significant(5.0 + (i as f64 + 0.5) / HYPERCUBE_SAMPLES as f64 * 3.0))
            .collect();
        assert_eq!(rmw, expected);
        assert_eq!(
            plan,
            Plan::new(&config_with(&[
                ("coherence.read_occupancy", 0.75, 1.5),
                ("coherence.clean_hit", 15.0, 20.0),
                ("latency.rmw", 5.0, 8.0),
                ("scheduler.ipi_send", 50.0, 300.0),
            ]))
        );
    }

    #[test]
    fn a_parameter_the_config_sets_or_that_lies_outside_its_range_is_held() {
        let mut config = config_with(&[
            ("coherence.read_occupancy", 0.75, 1.5),
            ("latency.rmw", 7.5, 8.0),
        ]);
        config.set_by_config = vec!["coherence.read_occupancy".into()];
        let plan = Plan::new(&config);
        assert!(plan.parameters.is_empty());
        assert_eq!(plan.held.len(), 2);
        assert!(
            plan.held[1].why.contains("outside the profile's range"),
            "{:?}",
            plan.held
        );
        assert!(plan.samples.is_empty());
    }

    #[test]
    fn the_sample_config_sets_each_samples_values_on_every_point() {
        let config = config_with(&[("latency.rmw", 5.0, 8.0)]);
        let plan = Plan::new(&config);
        let samples = plan.sample_config(&config).unwrap();
        assert_eq!(
            samples.points.len(),
            plan.samples.len() * config.points.len()
        );
        assert_eq!(samples.axes[0], SAMPLE_AXIS);
        let rmw: Vec<f64> = samples
            .points
            .iter()
            .map(|p| p.machine.latency.rmw)
            .collect();
        assert_eq!(rmw[0], 5.0);
        assert_eq!(rmw[config.points.len()], 8.0);
        assert_ne!(samples.resolved, config.resolved);
    }
}
