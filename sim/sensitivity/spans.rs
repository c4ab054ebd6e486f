//! What a figure spans over the model interval: its value in the nominal
//! run and in every sample, their least and greatest, and the parameter
//! that moves it most, by one-at-a-time swings: for each parameter, the
//! figure with the parameter at its high minus with it at its low, every
//! other parameter nominal; the largest swing in size names the parameter.
//!
//! The figures are each (point, design)'s means over repetitions of the
//! judged figure and [`FIGURES`]. Designs are judged by one figure
//! ([`Judged`]): a report's is its benchmark's lead figure (a wake time for
//! perf bench futex wake, ops/s per thread for perf bench futex hash), an
//! advise question's the figure it asks about. The ratios are that figure's
//! paired ratio (mean of per-seed ratios design/baseline at the same seed,
//! as report.md's); the best design at a point is the one best by that
//! figure in its direction. Where a ratio's range spans both sides of 1, or
//! the best design changes inside the model interval, the model cannot tell.

use super::{HeldParameter, Parameter, Plan, Sample};
use crate::record::RunRecord;
use crate::report::compare::{Change, Test};
use crate::report::summary::{self, point_label};
use crate::results::ResultSet;
use crate::workload::lead::{Better, LeadFigure};
use serde::{Deserialize, Serialize};

/// A figure of a run, read from its record.
pub type Figure = fn(&RunRecord) -> f64;

/// A figure of a run, whether a plain function or one that carries what
/// it reads (a question's figure).
type ReadFigure<'a> = &'a dyn Fn(&RunRecord) -> f64;

/// The figures of a run spanned, by name, each a mean over repetitions.
pub const FIGURES: [(&str, Figure); 4] = [
    (LeadFigure::ThreadOpsPerSec.name(), |r| {
        r.mean_thread_ops_per_sec
    }),
    ("ops/s", |r| r.ops_per_sec),
    ("mean op latency (ns)", |r| r.latency_ns.mean),
    ("line transfers per op", |r| r.coherence.transfers_per_op),
];

/// The figure designs are judged by: each design's ratio to the baseline
/// is of this figure, and the best design at a point is best by it.
pub struct Judged<'a> {
    /// As tables name it.
    pub name: String,
    pub better: Better,
    pub read: Box<dyn Fn(&RunRecord) -> f64 + 'a>,
}

impl Judged<'static> {
    /// A benchmark's lead figure, as its report leads with it.
    pub fn lead(figure: LeadFigure) -> Judged<'static> {
        Judged {
            name: figure.name().into(),
            better: figure.better(),
            read: Box::new(move |r| figure.read(r)),
        }
    }
}

impl Judged<'_> {
    /// How the ratios are defined, as every rendering names them.
    pub fn ratio_definition(&self) -> String {
        ratio_definition(&self.name)
    }
}

/// How the ratios of `figure` are defined, as every rendering names them.
pub fn ratio_definition(figure: &str) -> String {
    format!("paired ratio: mean of per-seed ratios design/baseline at the same seed, of {figure}")
}

/// A config's model interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    pub config_name: String,
    pub baseline: String,
    /// The sampling rule, in words.
    pub rule: String,
    pub ratio_definition: String,
    pub parameters: Vec<Parameter>,
    pub held: Vec<HeldParameter>,
    pub samples: Vec<SampleSettings>,
    pub figures: Vec<FigureSpan>,
    pub ratios: Vec<RatioSpan>,
    pub fastest: Vec<FastestSpan>,
}

/// A sample and the values it sets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleSettings {
    pub label: String,
    pub settings: Vec<(String, f64)>,
}

/// One figure's range over the nominal run and the samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub nominal: f64,
    pub low: f64,
    pub high: f64,
    /// Per parameter (in `Sensitivity::parameters`' order): the figure with
    /// it at its high minus with it at its low.
    pub swings: Vec<f64>,
    /// The parameter of the largest swing in size; None when none moves it.
    pub moved_most_by: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureSpan {
    pub point: String,
    pub design: String,
    pub figure: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioSpan {
    pub point: String,
    pub design: String,
    pub span: Span,
    /// The range holds values on both sides of 1: faster or slower than
    /// the baseline depends on what the model does not know.
    pub cannot_tell: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastestSpan {
    pub point: String,
    pub nominal: String,
    /// Every design that is fastest in the nominal run or some sample, the
    /// nominal's first.
    pub within: Vec<String>,
    pub cannot_tell: bool,
}

impl Sensitivity {
    /// Whether this model interval was computed around `set`: the same
    /// config and baseline, and every nominal figure and ratio `set`'s. A
    /// report published again from the same results (`futexsim report`, a
    /// run that simulated nothing new) keeps its model interval only then.
    pub fn describes(&self, set: &ResultSet) -> bool {
        let judged = Judged::lead(summary::kind(set).primary());
        let fresh = sensitivity(&Plan::default(), set, set, &judged);
        self.config_name == fresh.config_name
            && self.baseline == fresh.baseline
            && self.nominals() == fresh.nominals()
    }

    /// Each figure's and ratio's nominal value, by point and design.
    fn nominals(&self) -> NominalValues<'_> {
        let figures = self
            .figures
            .iter()
            .map(|f| (&*f.point, &*f.design, &*f.figure, f.span.nominal))
            .collect();
        let ratios = self
            .ratios
            .iter()
            .map(|r| (&*r.point, &*r.design, r.span.nominal))
            .collect();
        (figures, ratios)
    }
}

/// Figures as (point, design, figure, value) and ratios as (point,
/// design, value).
type NominalValues<'a> = (
    Vec<(&'a str, &'a str, &'a str, f64)>,
    Vec<(&'a str, &'a str, f64)>,
);

/// The records of `design` at `point`, in repetition order.
fn runs_at<'a>(set: &'a ResultSet, point: usize, design: &str) -> Vec<&'a RunRecord> {
    set.runs
        .iter()
        .filter(|r| r.point == point && r.design == design)
        .map(|r| &r.record)
        .collect()
}

/// The model interval of `nominal` (the config's result set) over `samples`
/// (the result set of `plan.sample_config`, sample by sample), its designs
/// judged by `judged`.
pub fn sensitivity(
    plan: &Plan,
    nominal: &ResultSet,
    samples: &ResultSet,
    judged: &Judged,
) -> Sensitivity {
    let points = nominal.points();
    // Run v: 0 the nominal, s + 1 sample s, whose points follow the
    // nominal's, sample by sample.
    let runs = plan.samples.len() + 1;
    let cell = |v: usize, point: usize, design: &str| {
        let (set, at) = match v {
            0 => (nominal, point),
            s => (samples, (s - 1) * points + point),
        };
        runs_at(set, at, design)
    };
    let mean = |records: &[&RunRecord], figure: &dyn Fn(&RunRecord) -> f64| {
        records.iter().map(|r| figure(r)).sum::<f64>() / records.len().max(1) as f64
    };
    let span_of = |value: &dyn Fn(usize) -> Option<f64>| -> Option<Span> {
        let nominal = value(0)?;
        let values: Vec<f64> = (0..runs).filter_map(value).collect();
        let at = |end: Option<usize>| end.map_or(Some(nominal), |s| value(s + 1));
        let swings: Vec<f64> = plan
            .swings
            .iter()
            .map(|[low, high]| match (at(*low), at(*high)) {
                (Some(l), Some(h)) => h - l,
                _ => f64::NAN,
            })
            .collect();
        let moved_most_by = swings
            .iter()
            .zip(&plan.parameters)
            .filter(|(s, _)| s.abs() > 0.0)
            .max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))
            .map(|(_, p)| p.path.clone());
        Some(Span {
            nominal,
            low: values.iter().copied().fold(f64::INFINITY, f64::min),
            high: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            swings,
            moved_most_by,
        })
    };
    let label = |point: usize| {
        nominal
            .runs
            .iter()
            .find(|r| r.point == point)
            .map_or("-".into(), |r| point_label(&nominal.axes, &r.axis_values))
    };
    let headline = &*judged.read;
    // The judged figure first, unless it is one of the figures every span
    // table has.
    let judged_apart = !FIGURES.iter().any(|(name, _)| *name == judged.name);
    let spanned: Vec<(&str, ReadFigure)> = judged_apart
        .then_some((judged.name.as_str(), headline))
        .into_iter()
        .chain(
            FIGURES
                .iter()
                .map(|(name, figure)| (*name, figure as ReadFigure)),
        )
        .collect();
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    let mut fastest = Vec::new();
    for point in 0..points {
        for design in &nominal.designs {
            for &(name, figure) in &spanned {
                let value = |v: usize| {
                    let records = cell(v, point, design);
                    (!records.is_empty()).then(|| mean(&records, figure))
                };
                if let Some(span) = span_of(&value) {
                    figures.push(FigureSpan {
                        point: label(point),
                        design: design.clone(),
                        figure: name.into(),
                        span,
                    });
                }
            }
            if *design == nominal.baseline {
                continue;
            }
            let ratio = |v: usize| {
                let each = |d: &str| -> Vec<f64> {
                    cell(v, point, d).iter().map(|r| headline(r)).collect()
                };
                Change::between(&each(&nominal.baseline), &each(design), &Test::DEFAULT)
                    .map(|c| c.ratio.mean)
            };
            if let Some(span) = span_of(&ratio) {
                ratios.push(RatioSpan {
                    point: label(point),
                    design: design.clone(),
                    cannot_tell: span.low < 1.0 && span.high > 1.0,
                    span,
                });
            }
        }
        let winner = |v: usize| {
            nominal
                .designs
                .iter()
                .filter_map(|d| {
                    let records = cell(v, point, d);
                    (!records.is_empty()).then(|| (mean(&records, headline), d))
                })
                .max_by(|a, b| match judged.better {
                    Better::Higher => a.0.total_cmp(&b.0),
                    Better::Lower => b.0.total_cmp(&a.0),
                })
                .map(|(_, d)| d.clone())
        };
        let mut within: Vec<String> = Vec::new();
        for v in 0..runs {
            if let Some(w) = winner(v).filter(|w| !within.contains(w)) {
                within.push(w);
            }
        }
        if let Some(first) = within.first() {
            fastest.push(FastestSpan {
                point: label(point),
                nominal: first.clone(),
                cannot_tell: within.len() > 1,
                within,
            });
        }
    }
    Sensitivity {
        config_name: nominal.provenance.config_name.clone(),
        baseline: nominal.baseline.clone(),
        rule: plan.rule(),
        ratio_definition: judged.ratio_definition(),
        parameters: plan.parameters.clone(),
        held: plan.held.clone(),
        samples: plan
            .samples
            .iter()
            .map(|s: &Sample| SampleSettings {
                label: s.label.clone(),
                settings: plan.settings(s),
            })
            .collect(),
        figures,
        ratios,
        fastest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::machine::plausible::PlausibleRange;
    use crate::results::RunResult;

    /// A result set of one point, designs `base` and `new` at the given
    /// ops/s per thread, one value per repetition.
    fn set(base: &[f64], new: &[f64]) -> ResultSet {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/reports/lkp-futex4-process-skl/results.json"
        );
        let mut set: ResultSet = crate::results::from_json(&std::fs::read(path).unwrap()).unwrap();
        let template = &set.runs[0].record.clone();
        set.designs = vec!["base".into(), "new".into()];
        set.baseline = "base".into();
        set.runs = [("base", base), ("new", new)]
            .iter()
            .flat_map(|(design, values)| {
                values.iter().enumerate().map(move |(r, v)| {
                    let mut record = template.clone();
                    record.mean_thread_ops_per_sec = *v;
                    RunResult {
                        point: 0,
                        axis_values: Vec::new(),
                        design: design.to_string(),
                        repetition: r as u32,
                        id: format!("{design}{r}"),
                        record,
                    }
                })
            })
            .collect();
        set
    }

    /// The samples' result set: the parameter at its low (sample s01,
    /// point 0), then at its high (s02, point 1).
    fn low_then_high(mut low: ResultSet, high: ResultSet) -> ResultSet {
        low.runs.extend(high.runs.into_iter().map(|mut r| {
            r.point = 1;
            r
        }));
        low
    }

    fn per_thread() -> Judged<'static> {
        Judged::lead(LeadFigure::ThreadOpsPerSec)
    }

    fn plan() -> Plan {
        let mut config = Config::default_config(&[]).unwrap();
        config.plausible = [(
            "latency.rmw".to_string(),
            PlausibleRange {
                low: 5.0,
                high: 8.0,
                source: "a test".into(),
            },
        )]
        .into();
        Plan::new(&config)
    }

    #[test]
    fn a_ratio_on_both_sides_of_one_and_a_changing_winner_are_what_the_model_cannot_tell() {
        let plan = plan();
        assert_eq!(plan.swings, [[Some(0), Some(1)]]);
        let nominal = set(&[100.0, 100.0], &[110.0, 120.0]);
        // Sample s01 (rmw at its low), then s02 (at its high), one point each.
        let samples = low_then_high(
            set(&[100.0, 100.0], &[90.0, 90.0]),
            set(&[100.0, 100.0], &[130.0, 130.0]),
        );
        let s = sensitivity(&plan, &nominal, &samples, &per_thread());
        let ratio = &s.ratios[0];
        // The paired ratio: (110/100 + 120/100) / 2.
        assert!((ratio.span.nominal - 1.15).abs() < 1e-12, "{ratio:?}");
        assert_eq!((ratio.span.low, ratio.span.high), (0.9, 1.3));
        assert!((ratio.span.swings[0] - 0.4).abs() < 1e-12, "{ratio:?}");
        assert_eq!(ratio.span.moved_most_by.as_deref(), Some("latency.rmw"));
        assert!(ratio.cannot_tell);
        assert_eq!(s.fastest[0].within, ["new", "base"]);
        assert!(s.fastest[0].cannot_tell);
        let per_thread = &s.figures.iter().find(|f| f.design == "new").unwrap().span;
        assert!(per_thread.low <= per_thread.nominal && per_thread.nominal <= per_thread.high);
    }

    #[test]
    fn a_ratio_on_one_side_of_one_throughout_is_told() {
        let plan = plan();
        let nominal = set(&[100.0], &[150.0]);
        let samples = low_then_high(set(&[100.0], &[140.0]), set(&[100.0], &[160.0]));
        let s = sensitivity(&plan, &nominal, &samples, &per_thread());
        assert!(!s.ratios[0].cannot_tell);
        assert!(!s.fastest[0].cannot_tell);
        assert_eq!(s.fastest[0].within, ["new"]);
    }

    #[test]
    fn a_figure_better_lower_names_the_design_with_less_of_it_best() {
        let plan = plan();
        let nominal = set(&[100.0], &[150.0]);
        let samples = low_then_high(set(&[100.0], &[140.0]), set(&[100.0], &[160.0]));
        let time = Judged {
            name: "wake time".into(),
            better: Better::Lower,
            read: Box::new(|r| r.mean_thread_ops_per_sec),
        };
        let s = sensitivity(&plan, &nominal, &samples, &time);
        assert_eq!(s.fastest[0].within, ["base"]);
        assert!((s.ratios[0].span.nominal - 1.5).abs() < 1e-12);
        assert!(s.ratio_definition.ends_with("of wake time"));
        // The judged figure is spanned first, beside the figures every
        // table has.
        assert_eq!(s.figures[0].figure, "wake time");
        assert_eq!(s.figures.len(), 2 * (FIGURES.len() + 1));
        let by_per_thread = sensitivity(&plan, &nominal, &samples, &per_thread());
        assert_eq!(by_per_thread.fastest[0].within, ["new"]);
        assert_eq!(by_per_thread.figures.len(), 2 * FIGURES.len());
    }
}
