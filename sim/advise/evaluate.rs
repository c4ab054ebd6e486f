//! The evaluator that runs simulations: each measurement of an asked point
//! is a campaign (sim/campaign) in the point's own directory of the
//! question's store, holding the baseline and the candidates asked for.
//! A run's file is named by its scenario, so a measurement finds every run
//! an earlier one, or an earlier question, already finished there: more
//! repetitions of a candidate run only the new seeds, a re-run of the same
//! question simulates nothing, and an extended one only what is new.

use super::question::{Asked, Question};
use super::search::{Evaluator, Measured, Memory};
use crate::campaign::{Campaign, CampaignError, Shard};
use crate::config::{Config, ConfigError};
use crate::record::RunRecord;
use crate::report::compare::{Change, Test};
use crate::report::track_record::Likeness;
use crate::results::ResultSet;
use crate::sensitivity::spans::{self, Span};
use crate::sensitivity::Plan;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum AdviseError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    /// Stopped by a signal; the runs finished are in the store.
    #[error("stopped; {store} holds every finished run: run the same command again to resume")]
    Interrupted { store: String },
    /// A shard ran its share of a measurement the search cannot go past
    /// until every shard has run its own.
    #[error(
        "shard {shard} simulated its {simulated} runs of the search's next measurement at \
         {point}; {store} holds them. Once every shard has run, run each again for the next \
         measurement, or run the question without --shard to go on to the answer"
    )]
    ShardDone {
        shard: Shard,
        simulated: usize,
        point: String,
        store: String,
    },
    /// The samples of the model interval could not be made.
    #[error("at {point}: the model interval: {what}")]
    Sensitivity { point: String, what: String },
    /// A candidate's figure has no ratio to the baseline's (a run without the figure, or a baseline at zero).
    #[error("at {point}: {what}")]
    NoRatio { point: String, what: String },
}

/// Where a point's model-interval samples are kept, a campaign of their own
/// (as `futexsim run --sensitivity` keeps them).
const SAMPLES_DIR: &str = "sensitivity";

/// What the runs of an asked point tell besides the ratio: for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    /// The workload, table kind and machine class of the candidate's runs,
    /// for the nearest validation cases.
    pub likeness: Likeness,
    /// The figure's mean over its seeds.
    pub figure: f64,
    /// The simulated time its runs counted, on average: the window's
    /// duration, or less where a run's stopping rule was met.
    pub run_ns: f64,
}

/// Runs one asked point's measurements as campaigns.
pub struct CampaignEvaluator<'a> {
    question: &'a Question,
    at: Asked,
    dir: PathBuf,
    jobs: usize,
    /// The share of each measurement's runs this process simulates.
    shard: Shard,
    stop: &'a AtomicBool,
    /// Every run a measurement used, found or simulated, by id: the
    /// simulated nanoseconds it counted.
    pub used: BTreeMap<String, u64>,
    /// Runs this process simulated.
    pub simulated: usize,
    /// Per candidate, what its latest measurement saw.
    pub seen: BTreeMap<usize, Seen>,
}

impl<'a> CampaignEvaluator<'a> {
    pub fn new(
        question: &'a Question,
        at: Asked,
        dir: PathBuf,
        jobs: usize,
        shard: Shard,
        stop: &'a AtomicBool,
    ) -> CampaignEvaluator<'a> {
        CampaignEvaluator {
            question,
            at,
            dir,
            jobs,
            shard,
            stop,
            used: BTreeMap::new(),
            simulated: 0,
            seen: BTreeMap::new(),
        }
    }

    /// Runs `config` as the campaign in `dir` (only what the directory
    /// lacks is simulated) and gives its result set.
    fn results(
        &mut self,
        dir: &std::path::Path,
        config: Config,
    ) -> Result<(Campaign, ResultSet), AdviseError> {
        let interrupted = || AdviseError::Interrupted {
            store: self.dir.display().to_string(),
        };
        // Each measurement is a campaign of its own config in one
        // directory: the config changes from one to the next, the run
        // files (named by scenario) stay and are found again.
        let campaign = Campaign::plan(dir, config, true)?;
        let lock = campaign.create(true)?;
        let todo = campaign.missing(Shard::ALL, true)?;
        if self.shard != Shard::ALL && !todo.is_empty() {
            let share = campaign.missing(self.shard, false)?;
            // The shards of a measurement write disjoint runs, each file
            // whole under its own name (a temporary one carries its
            // writer's pid, so no other futexsim removes it while it
            // lives): they need not take turns at the directory while
            // they simulate, only while they mark it.
            drop(lock);
            campaign.simulate(&share, self.jobs, self.stop, &|_, _| {})?;
            if self.stop.load(Ordering::Relaxed) {
                return Err(interrupted());
            }
            return Err(AdviseError::ShardDone {
                shard: self.shard,
                simulated: share.len(),
                point: self.question.label(self.at),
                store: self.dir.display().to_string(),
            });
        }
        campaign.simulate(&todo, self.jobs, self.stop, &|_, _| {})?;
        if self.stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        self.simulated += todo.len();
        let (set, _) = campaign.results()?.ok_or_else(interrupted)?;
        self.used
            .extend(set.runs.iter().map(|r| (r.id.clone(), r.record.sim_ns)));
        Ok((campaign, set))
    }

    /// The model interval of `candidate`'s ratio to the baseline at
    /// `repetitions`: the runs again over the plausible ranges of the
    /// machine profile's unmeasured parameters (`futexsim run
    /// --sensitivity`'s samples, kept in the point's sensitivity/
    /// directory). None where the profile ranges nothing.
    pub fn model_interval(
        &mut self,
        candidate: usize,
        repetitions: u32,
    ) -> Result<Option<Span>, AdviseError> {
        let config = self.question.config(self.at, &[candidate], repetitions)?;
        let plan = Plan::new(&config);
        if plan.samples.is_empty() {
            return Ok(None);
        }
        let samples = plan
            .sample_config(&config)
            .map_err(|what| AdviseError::Sensitivity {
                point: self.question.label(self.at),
                what,
            })?;
        let dir = self.dir.clone();
        let (_, nominal) = self.results(&dir, config)?;
        let (_, sampled) = self.results(&dir.join(SAMPLES_DIR), samples)?;
        let label = &self.question.family.candidates[candidate].label;
        let judged = self.question.figure.judged();
        Ok(spans::sensitivity(&plan, &nominal, &sampled, &judged)
            .ratios
            .into_iter()
            .find(|r| r.design == *label)
            .map(|r| r.span))
    }

    /// The per-seed figures of `design` in `set`, in repetition order.
    fn figures(&self, set: &ResultSet, design: &str) -> Result<Vec<f64>, AdviseError> {
        let mut runs: Vec<_> = set.runs.iter().filter(|r| r.design == design).collect();
        runs.sort_by_key(|r| r.repetition);
        runs.iter()
            .map(|r| {
                self.question
                    .figure
                    .read(&r.record)
                    .ok_or_else(|| AdviseError::NoRatio {
                        point: self.question.label(self.at),
                        what: format!(
                            "the runs of {design} have no figure named '{}'",
                            self.question.figure.name()
                        ),
                    })
            })
            .collect()
    }
}

/// The bytes of a candidate's tables as its run laid them out, the global
/// table and each process's private hash apart.
fn memory(config: &Config, design: usize, record: &RunRecord) -> Memory {
    let d = &config.points[0].designs[design];
    let bucket = u64::from(d.bucket.size);
    let header = d.private.as_ref().map_or(0, |p| u64::from(p.header_bytes));
    let table = &record.table;
    let largest_private = table.private_slots.iter().copied().max();
    Memory {
        global_bytes: table.slots * u64::from(table.instances) * bucket,
        private_bytes_per_process: largest_private.map_or(0, |slots| slots * bucket + header),
        total_bytes: table.bytes,
    }
}

impl Evaluator for CampaignEvaluator<'_> {
    type Error = AdviseError;

    fn measure(&mut self, asks: &[(usize, u32)]) -> Result<Vec<Measured>, AdviseError> {
        let repetitions = asks.iter().map(|&(_, r)| r).max().unwrap_or(1);
        let candidates: Vec<usize> = asks.iter().map(|&(c, _)| c).collect();
        let config = self.question.config(self.at, &candidates, repetitions)?;
        let dir = self.dir.clone();
        let (campaign, set) = self.results(&dir, config)?;
        let baseline = self.figures(&set, &self.question.baseline_name)?;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let mut out = Vec::new();
        for (design, &candidate) in candidates.iter().enumerate() {
            // Design 0 is the baseline; the candidates follow in order.
            let design = design + 1;
            let label = &self.question.family.candidates[candidate].label;
            let figures = self.figures(&set, label)?;
            let change = Change::between(&baseline, &figures, &Test::DEFAULT).ok_or_else(|| {
                AdviseError::NoRatio {
                    point: self.question.label(self.at),
                    what: format!("{label} has no ratio to the baseline, whose figure is 0"),
                }
            })?;
            let runs: Vec<&RunRecord> = set
                .runs
                .iter()
                .filter(|r| r.design == *label)
                .map(|r| &r.record)
                .collect();
            let first = runs.first().copied();
            let Some(record) = first else {
                return Err(AdviseError::NoRatio {
                    point: self.question.label(self.at),
                    what: format!("{label} has no runs"),
                });
            };
            self.seen.insert(
                candidate,
                Seen {
                    likeness: Likeness::of(record),
                    figure: mean(&figures),
                    run_ns: mean(&runs.iter().map(|r| r.sim_ns as f64).collect::<Vec<_>>()),
                },
            );
            out.push(Measured {
                ratio: change.ratio,
                memory: memory(&campaign.config, design, record),
            });
        }
        Ok(out)
    }
}
