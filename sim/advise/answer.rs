//! The answer to a question, per asked point: the design that meets the
//! target at the least memory, its memory (the global table and one
//! process's private hash apart), its gain over the baseline with its seed
//! interval, the Pareto front of the candidates measured, the nearest
//! validation cases, and where the model cannot tell. As Markdown and as
//! JSON.

use super::evaluate::Seen;
use super::question::Question;
use super::search::{Memory, Order, Outcome, Standing, Target};
use crate::config::RunSettings;
use crate::report::interval::{SeedInterval, CONFIDENCE};
use crate::report::summary::bytes;
use crate::report::track_record::{CaseRecord, TrackRecord};
use crate::sensitivity::spans::{ratio_definition, Span};
use crate::task::batch_means::{BATCHES, CHECKS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What the search found at one asked point, and what its runs were like.
pub struct PointAdvice {
    pub label: String,
    pub outcome: Outcome,
    pub seen: BTreeMap<usize, Seen>,
    /// The recommendation's model interval (`--sensitivity`), where asked
    /// for and the machine profile ranges something.
    pub model: Option<Span>,
}

impl PointAdvice {
    /// Whether the recommendation's model interval reaches below the
    /// threshold: what the model does not know could undo it.
    pub fn model_cannot_tell(&self) -> bool {
        self.model
            .as_ref()
            .is_some_and(|m| m.low < self.outcome.threshold)
    }
}

/// The whole answer.
pub struct Advice<'q> {
    pub question: &'q Question,
    /// Whether the model intervals were asked for.
    pub sensitivity: bool,
    pub points: Vec<PointAdvice>,
    /// Distinct runs the answer rests on, found in the store or simulated.
    pub runs_used: usize,
    /// Of them, the ones this command simulated.
    pub runs_simulated: usize,
    /// The simulated time the runs used counted, all together, in microseconds.
    pub simulated_us: u64,
    /// The command that reproduces the answer.
    pub command: String,
}

/// Validation cases shown beside a recommendation.
const NEAREST: usize = 3;

impl Advice<'_> {
    /// The runs an exhaustive grid of the same question takes: every
    /// candidate and the baseline at every point, at the most repetitions.
    pub fn grid_runs(&self) -> usize {
        let q = self.question;
        self.points.len() * (q.family.candidates.len() + 1) * q.budget.most as usize
    }

    fn label(&self, candidate: usize) -> &str {
        &self.question.family.candidates[candidate].label
    }

    pub fn markdown(&self) -> String {
        let q = self.question;
        let mut md = String::new();
        let _ = writeln!(md, "# Advice: {}\n", q.asks);
        let _ = writeln!(
            md,
            "Target: {}. The figure is {} (higher is better), compared as the paired ratio to \
             the baseline `{}` (the mean of per-seed ratios) with its {:.0} % Student-t seed \
             interval. The candidates: `{}` varied over {} values ({}).\n",
            target_words(&q.target),
            q.figure.name(),
            q.baseline_name,
            CONFIDENCE * 100.0,
            q.family.parameter,
            q.family.candidates.len(),
            order_words(q.family.order)
        );
        let _ = writeln!(
            md,
            "Runs: {} distinct runs ({} simulated by this command, the rest found in the store), \
             {} us of simulated time counted; an exhaustive grid of the same question at {} \
             repetitions takes {}. Repetitions grow from {} up to {} only where a seed interval \
             spans the threshold. {}\n",
            self.runs_used,
            self.runs_simulated,
            self.simulated_us,
            q.budget.most,
            self.grid_runs(),
            q.budget.first,
            q.budget.most,
            run_length_words(&q.run_settings)
        );
        let record = TrackRecord::embedded().ok();
        for point in &self.points {
            self.point_section(&mut md, point, record.as_ref());
        }
        let _ = writeln!(md, "## For the commit message\n");
        let _ = writeln!(md, "{}\n", self.commit_paragraph());
        md
    }

    fn point_section(&self, md: &mut String, point: &PointAdvice, record: Option<&TrackRecord>) {
        let q = self.question;
        let o = &point.outcome;
        let _ = writeln!(md, "## {}\n", point.label);
        match o.chosen {
            Some(c) => {
                let m = &o.measured[&c];
                let _ = writeln!(
                    md,
                    "**Recommended: {}**: {}; {} the baseline's {} ({} seeds); the target is met.\n",
                    self.label(c),
                    memory_words(&m.memory),
                    ratio_words(&m.ratio),
                    q.figure.name(),
                    m.ratio.repetitions
                );
            }
            None => {
                let _ = writeln!(md, "**No candidate is shown to meet the target.**\n");
            }
        }
        match (&point.model, self.sensitivity && o.chosen.is_some()) {
            (Some(model), _) => {
                let verdict = if point.model_cannot_tell() {
                    format!(
                        "it reaches below the threshold {:.3}: **the model cannot tell** whether \
                         this design meets the target; what the model does not know could undo it",
                        o.threshold
                    )
                } else {
                    "it stays above the threshold".to_string()
                };
                let _ = writeln!(
                    md,
                    "Model interval ({}, over the plausible ranges of the machine \
                     profile's unmeasured parameters): {:.3}..{:.3} (nominal {:.3}), moved most by {}; \
                     {verdict}.\n",
                    ratio_definition(q.figure.name()),
                    model.low,
                    model.high,
                    model.nominal,
                    model.moved_most_by.as_deref().unwrap_or("none")
                );
            }
            (None, true) => {
                let _ = writeln!(
                    md,
                    "Model interval: none, the machine profile ranges no parameter.\n"
                );
            }
            (None, false) => {}
        }
        if !o.cannot_tell.is_empty() {
            let names: Vec<String> = o
                .cannot_tell
                .iter()
                .map(|&c| {
                    format!(
                        "{} ({} at {} seeds)",
                        self.label(c),
                        o.measured[&c].ratio.show_range(),
                        o.measured[&c].ratio.repetitions
                    )
                })
                .collect();
            let _ = writeln!(
                md,
                "The model cannot tell at {}: with less memory than the recommendation, their \
                 seed interval spans the threshold {:.3} at the most repetitions.\n",
                names.join(", "),
                o.threshold
            );
        }
        for &(small, large) in &o.against_order {
            let _ = writeln!(
                md,
                "Against the monotone assumption: {} ({}) lies wholly above {} ({}); the \
                 bisection's answer is suspect here, ask again with order = \"unordered\".\n",
                self.label(small),
                o.measured[&small].ratio.show_range(),
                self.label(large),
                o.measured[&large].ratio.show_range()
            );
        }
        for &(small, large) in &o.memory_against_order {
            let _ = writeln!(
                md,
                "Against the family's order: {} takes more memory ({}) than {} ({}), which comes \
                 after it; ask again with order = \"unordered\".\n",
                self.label(small),
                bytes(o.measured[&small].memory.total_bytes),
                self.label(large),
                bytes(o.measured[&large].memory.total_bytes)
            );
        }
        let _ = writeln!(
            md,
            "Threshold: a ratio of {:.3} or more (best measured: {} at {:.3}).\n",
            o.threshold,
            self.label(o.best),
            o.measured.get(&o.best).map_or(f64::NAN, |m| m.ratio.mean)
        );
        let front = pareto_front(o);
        let _ = writeln!(
            md,
            "| candidate | private hash per process | global table | all tables | {} | ratio to baseline | seeds | run length | standing | Pareto front |",
            q.figure.name()
        );
        let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
        for (&c, m) in &o.measured {
            let standing = o.standing(c, &q.target).map_or("-", standing_words);
            let seen = point.seen.get(&c);
            let figure = seen.map_or("-".into(), |s| crate::report::summary::figure(s.figure));
            let run_length = seen.map_or("-".into(), |s| format!("{:.1} us", s.run_ns / 1000.0));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                self.label(c),
                bytes(m.memory.private_bytes_per_process),
                bytes(m.memory.global_bytes),
                bytes(m.memory.total_bytes),
                figure,
                m.ratio.show_range(),
                m.ratio.repetitions,
                run_length,
                standing,
                if front.contains(&c) { "yes" } else { "" }
            );
        }
        md.push('\n');
        let not_measured: Vec<&str> = (0..q.family.candidates.len())
            .filter(|c| !o.measured.contains_key(c))
            .map(|c| self.label(c))
            .collect();
        if !not_measured.is_empty() {
            let _ = writeln!(
                md,
                "Not measured (the search did not need them): {}.\n",
                not_measured.join(", ")
            );
        }
        let shown = o.chosen.unwrap_or(o.best);
        if let (Some(record), Some(seen)) = (record, point.seen.get(&shown)) {
            let cases: Vec<&CaseRecord> = record.nearest(&seen.likeness, NEAREST);
            let _ = writeln!(
                md,
                "Nearest validation cases to {}'s runs (the factor between the model's prediction \
                 and the published figure):\n",
                self.label(shown)
            );
            if cases.is_empty() {
                let _ = writeln!(md, "none shares anything with these runs.\n");
            }
            for case in cases {
                let _ = writeln!(
                    md,
                    "- {}: {:.2}x off, {} (shares {})",
                    case.case,
                    case.error,
                    if case.passed { "passes" } else { "fails" },
                    seen.likeness.shared(&case.likeness)
                );
            }
            md.push('\n');
        }
    }

    /// A paragraph a kernel engineer can paste into a commit message.
    fn commit_paragraph(&self) -> String {
        let q = self.question;
        let mut lines = Vec::new();
        for point in &self.points {
            let o = &point.outcome;
            let line = match o.chosen {
                Some(c) => {
                    let m = &o.measured[&c];
                    format!(
                        "at {}, {} is the smallest design that meets it ({}; {} of {} {}, \
                         {:.0} % seed interval over {} seeds)",
                        point.label,
                        self.label(c),
                        memory_words(&m.memory),
                        ratio_words(&m.ratio),
                        q.baseline_name,
                        q.figure.name(),
                        CONFIDENCE * 100.0,
                        m.ratio.repetitions
                    )
                }
                None => format!("at {}, no candidate is shown to meet it", point.label),
            };
            lines.push(line);
        }
        format!(
            "Simulated with futexsim ({} of {} varied over {}); target: {}: {}. Reproduce with \
             `{}`.",
            q.family.parameter,
            q.baseline_name,
            q.family
                .candidates
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            target_words(&q.target),
            lines.join("; "),
            self.command
        )
    }

    pub fn json(&self) -> Json<'_> {
        let q = self.question;
        Json {
            question: &q.asks,
            target: q.target,
            runs_used: self.runs_used,
            runs_simulated: self.runs_simulated,
            simulated_us: self.simulated_us,
            grid_runs: self.grid_runs(),
            points: self
                .points
                .iter()
                .map(|p| {
                    let o = &p.outcome;
                    let chosen = o.chosen.map(|c| &o.measured[&c]);
                    JsonPoint {
                        point: p.label.clone(),
                        recommended: o.chosen.map(|c| self.label(c).to_string()),
                        memory: chosen.map(|m| m.memory),
                        gain: chosen.map(|m| Gain::of(&m.ratio)),
                        target_met: o.chosen.is_some(),
                        model: p.model.as_ref().map(|m| ModelInterval {
                            low: m.low,
                            high: m.high,
                            cannot_tell: p.model_cannot_tell(),
                        }),
                        cannot_tell: o
                            .cannot_tell
                            .iter()
                            .map(|&c| self.label(c).to_string())
                            .collect(),
                        threshold: o.threshold,
                        measured: o
                            .measured
                            .iter()
                            .map(|(&c, m)| JsonCandidate {
                                label: self.label(c).to_string(),
                                memory: m.memory,
                                gain: Gain::of(&m.ratio),
                                run_us: p.seen.get(&c).map(|s| s.run_ns / 1000.0),
                                standing: o.standing(c, &q.target),
                            })
                            .collect(),
                    }
                })
                .collect(),
        }
    }
}

/// `--json`: per asked point, the recommended design's label, its memory
/// in bytes, its gain's mean and interval, and whether the target is met.
#[derive(Serialize)]
pub struct Json<'a> {
    question: &'a str,
    target: Target,
    runs_used: usize,
    runs_simulated: usize,
    simulated_us: u64,
    grid_runs: usize,
    points: Vec<JsonPoint>,
}

#[derive(Serialize)]
struct JsonPoint {
    point: String,
    recommended: Option<String>,
    memory: Option<Memory>,
    gain: Option<Gain>,
    target_met: bool,
    /// The recommendation's model interval, with `--sensitivity`.
    model: Option<ModelInterval>,
    cannot_tell: Vec<String>,
    threshold: f64,
    measured: Vec<JsonCandidate>,
}

#[derive(Serialize)]
struct JsonCandidate {
    label: String,
    memory: Memory,
    gain: Gain,
    /// The simulated time its runs counted, on average.
    run_us: Option<f64>,
    standing: Option<Standing>,
}

/// A ratio's range over the model's unmeasured parameters, and whether it
/// reaches below the threshold.
#[derive(Serialize)]
struct ModelInterval {
    low: f64,
    high: f64,
    cannot_tell: bool,
}

/// A paired ratio to the baseline with its seed interval.
#[derive(Serialize)]
struct Gain {
    mean: f64,
    low: Option<f64>,
    high: Option<f64>,
    repetitions: usize,
}

impl Gain {
    fn of(ratio: &SeedInterval) -> Gain {
        Gain {
            mean: ratio.mean,
            low: ratio.low,
            high: ratio.high,
            repetitions: ratio.repetitions,
        }
    }
}

/// The candidates no other beats on both memory and figure: none with at
/// most its memory has a higher ratio, none with less memory an equal one.
fn pareto_front(o: &Outcome) -> Vec<usize> {
    o.measured
        .iter()
        .filter(|(&c, m)| {
            !o.measured.iter().any(|(&d, n)| {
                d != c
                    && n.memory.total_bytes <= m.memory.total_bytes
                    && n.ratio.mean >= m.ratio.mean
                    && (n.memory.total_bytes < m.memory.total_bytes || n.ratio.mean > m.ratio.mean)
            })
        })
        .map(|(&c, _)| c)
        .collect()
}

fn standing_words(s: Standing) -> &'static str {
    match s {
        Standing::Meets => "meets",
        Standing::Fails => "fails",
        Standing::CannotTell => "cannot tell",
    }
}

/// How long each run took, as the question's `[run]` says.
fn run_length_words(run: &RunSettings) -> String {
    match run.half_width_pct {
        Some(pct) => format!(
            "Each run ends once its throughput's 95 % batch-means interval is within {pct} % of \
             its mean ({BATCHES} batches, checked at 1/{} of the window and at each doubling \
             after), or at {} us at most: the run length column gives what the candidate's \
             runs took.",
            1u32 << CHECKS,
            run.duration_us
        ),
        None => format!(
            "Each run takes the question's whole window, {} us.",
            run.duration_us
        ),
    }
}

fn order_words(order: Order) -> &'static str {
    match order {
        Order::Monotone => {
            "monotone: memory grows along the list and the figure is assumed not to fall, so \
             bisection finds the first that meets the target; the ends are measured first and \
             every measured pair is checked against the assumption"
        }
        Order::Unordered => {
            "unordered: rounds at doubling repetitions, each dropping the candidates that clearly \
             fail and those a smaller one clearly beats"
        }
    }
}

fn memory_words(m: &Memory) -> String {
    format!(
        "private hash {} per process, global table {} ({} in all)",
        bytes(m.private_bytes_per_process),
        bytes(m.global_bytes),
        bytes(m.total_bytes)
    )
}

fn ratio_words(r: &SeedInterval) -> String {
    match (r.low, r.high) {
        (Some(low), Some(high)) => format!("{:.3}x ({low:.3}..{high:.3})", r.mean),
        _ => format!("{:.3}x", r.mean),
    }
}

fn target_words(t: &Target) -> String {
    let mut parts = Vec::new();
    if let Some(x) = t.within_best {
        parts.push(format!("within {} % of the best candidate", x * 100.0));
    }
    if let Some(x) = t.slower_than_baseline {
        parts.push(format!("at most {} % slower than the baseline", x * 100.0));
    }
    if let Some(n) = t.max_bytes_per_process {
        parts.push(format!("at most {n} bytes of private hash per process"));
    }
    parts.join(", and ")
}
