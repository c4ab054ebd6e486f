//! A campaign: the runs of one config, kept in one directory so that a run
//! cut short resumes where it stopped and shards run anywhere merge into
//! the same result set.
//!
//! ```text
//! DIR/campaign.json      the config resolved, and the build that ran it
//! DIR/runs/<id>.json     one finished run: its record and how fast it went
//! ```
//!
//! A run's id hashes its scenario with the futexsim version and a hash of
//! the source and compiler it was built from, so a run file is valid for
//! exactly one (scenario, build) and never reused by another. Every file is written whole or not at all.

pub mod shard;
mod store;

pub use shard::Shard;
pub use store::{now_utc, peak_rss_bytes, reset_peak_rss, write_atomic};

use crate::config::{Config, ConfigError, PlannedRun};
use crate::hash::lookup3::hashlittle2;
use crate::machine::Machine;
use crate::record::{RunRecord, Speed};
use crate::results::{MachineSource, Provenance, ResultSet, RunResult, SpeedLog};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

const CAMPAIGN_FILE: &str = "campaign.json";
const RUNS_DIR: &str = "runs";

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = env!("FUTEXSIM_GIT_COMMIT");

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(
        "{dir} holds a campaign of another config ({what}); pass --overwrite to replace it, \
         or choose another --out"
    )]
    ConfigChanged { dir: String, what: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a futexsim campaign file: {message}")]
    Corrupt { path: String, message: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Merge(String),
    #[error("run {id} ({what}): {message}")]
    Run {
        id: String,
        what: String,
        message: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CampaignError + '_ {
    move |source| CampaignError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What a campaign is: the config resolved, and the build that runs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Identity {
    futexsim_version: String,
    git_commit: String,
    config_name: String,
    resolved_config: String,
}

#[derive(Serialize, Deserialize)]
struct RunFile {
    id: String,
    record: RunRecord,
    speed: Speed,
    /// When the run finished, RFC 3339 UTC, and the peak resident memory of
    /// the process that ran it by then (since its campaign started): a
    /// campaign resumed or reused later still reports when and in how much
    /// memory its runs were simulated.
    #[serde(default)]
    finished: String,
    #[serde(default)]
    peak_rss_bytes: u64,
}

/// A planned run with its id.
pub struct Run {
    pub id: String,
    pub plan: PlannedRun,
}

impl Run {
    /// "cpus = 64, fixed-256, repetition 1": how a person names the run.
    pub fn describe(&self, config: &Config) -> String {
        let point = &config.points[self.plan.point];
        let mut parts: Vec<String> = config
            .axes
            .iter()
            .zip(&point.axis_values)
            .map(|(a, v)| format!("{a} = {v}"))
            .collect();
        parts.push(config.designs[self.plan.design].clone());
        parts.push(format!("repetition {}", self.plan.repetition + 1));
        parts.join(", ")
    }
}

pub struct Campaign {
    pub dir: PathBuf,
    pub config: Config,
    pub runs: Vec<Run>,
}

impl Campaign {
    /// Opens `dir` for `config`, creating it if needed. A directory holding
    /// another config's campaign is refused unless `overwrite`.
    pub fn open(dir: &Path, config: Config, overwrite: bool) -> Result<Campaign, CampaignError> {
        let campaign = Campaign::plan(dir, config, overwrite)?;
        campaign.create()?;
        Ok(campaign)
    }

    /// The campaign `open` would give, without writing anything: a run that
    /// is refused before it starts leaves the directory as it was.
    pub fn plan(dir: &Path, config: Config, overwrite: bool) -> Result<Campaign, CampaignError> {
        if let Some(old) = read_identity(&dir.join(CAMPAIGN_FILE))? {
            let what = if old.config_name != config.name {
                Some(format!("config '{}'", old.config_name))
            } else if old.resolved_config != config.resolved {
                Some(first_difference(&old.resolved_config, &config.resolved))
            } else {
                None
            };
            if let (Some(what), false) = (what, overwrite) {
                return Err(CampaignError::ConfigChanged {
                    dir: dir.display().to_string(),
                    what,
                });
            }
        }
        let runs = config
            .runs()
            .into_iter()
            .map(|plan| Run {
                id: run_id(&plan.scenario),
                plan,
            })
            .collect();
        Ok(Campaign {
            dir: dir.to_path_buf(),
            config,
            runs,
        })
    }

    /// Creates the directory, clears what a killed run left, and records
    /// which config and build the campaign belongs to.
    pub fn create(&self) -> Result<(), CampaignError> {
        let runs_dir = self.dir.join(RUNS_DIR);
        fs::create_dir_all(&runs_dir).map_err(io_error(&runs_dir))?;
        for d in [self.dir.as_path(), runs_dir.as_path()] {
            store::remove_temp_files(d).map_err(io_error(d))?;
        }
        let identity = Identity {
            futexsim_version: VERSION.into(),
            git_commit: COMMIT.into(),
            config_name: self.config.name.clone(),
            resolved_config: self.config.resolved.clone(),
        };
        let path = self.dir.join(CAMPAIGN_FILE);
        let json = serde_json::to_string_pretty(&identity).expect("an identity serializes") + "\n";
        write_atomic(&path, json.as_bytes()).map_err(io_error(&path))
    }

    /// Opens a campaign directory with the config it was made from.
    pub fn reopen(dir: &Path) -> Result<Campaign, CampaignError> {
        let path = dir.join(CAMPAIGN_FILE);
        let identity = read_identity(&path)?.ok_or_else(|| CampaignError::Io {
            path: path.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no campaign here"),
        })?;
        let config = Config::parse(
            &path.display().to_string(),
            &identity.config_name,
            &identity.resolved_config,
            &[],
        )?;
        Campaign::open(dir, config, false)
    }

    fn run_path(&self, id: &str) -> PathBuf {
        self.dir.join(RUNS_DIR).join(format!("{id}.json"))
    }

    /// The runs of `shard` that have no file yet, most expensive first so
    /// that parallel workers finish together.
    pub fn missing(&self, shard: Shard) -> Vec<&Run> {
        let mut todo: Vec<&Run> = self
            .runs
            .iter()
            .filter(|r| shard.holds(&r.id) && !self.run_path(&r.id).exists())
            .collect();
        let mut seen = BTreeSet::new();
        todo.retain(|r| seen.insert(r.id.clone()));
        todo.sort_by_cached_key(|r| std::cmp::Reverse(r.plan.scenario.cost_estimate()));
        todo
    }

    /// The run of `todo` estimated to take the most memory, with its estimate.
    pub fn largest_run<'a>(
        &self,
        todo: &[&'a Run],
    ) -> Result<Option<(&'a Run, u64)>, CampaignError> {
        let mut largest: Option<(&Run, u64)> = None;
        for run in todo.iter().filter(|r| r.plan.repetition == 0) {
            let scenario = &run.plan.scenario;
            let bytes = Machine::new(scenario.machine.clone())
                .map_err(|e| e.to_string())
                .and_then(|m| scenario.footprint(&m))
                .map_err(|message| CampaignError::Run {
                    id: run.id.clone(),
                    what: run.describe(&self.config),
                    message,
                })?
                .bytes();
            if largest.is_none_or(|(_, most)| bytes > most) {
                largest = Some((run, bytes));
            }
        }
        Ok(largest)
    }

    /// Simulates `todo` on `jobs` threads, writing each run's file as it
    /// finishes. Stops starting runs once `stop` is set; runs in flight finish.
    /// `done` is told of every finished run.
    pub fn simulate(
        &self,
        todo: &[&Run],
        jobs: usize,
        stop: &AtomicBool,
        done: &(dyn Fn(&Speed, u64) + Sync),
    ) -> Result<(), CampaignError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .expect("a thread pool of a positive size builds");
        let first_error = Mutex::new(None);
        // Each worker takes the next run in `todo`'s order (costliest first,
        // see `missing`), so the longest runs start first and the last to
        // finish are short: the makespan stays close to the work over jobs.
        let next = AtomicUsize::new(0);
        pool.broadcast(|_| {
            while !stop.load(Ordering::Relaxed) {
                let Some(run) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                if let Err(e) = self.simulate_one(run, done) {
                    stop.store(true, Ordering::Relaxed);
                    first_error
                        .lock()
                        .expect("no panics hold it")
                        .get_or_insert(e);
                }
            }
        });
        match first_error.into_inner().expect("no panics hold it") {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn simulate_one(
        &self,
        run: &Run,
        done: &(dyn Fn(&Speed, u64) + Sync),
    ) -> Result<(), CampaignError> {
        let (record, speed) =
            run.plan
                .scenario
                .simulate()
                .map_err(|message| CampaignError::Run {
                    id: run.id.clone(),
                    what: run.describe(&self.config),
                    message,
                })?;
        let ops = record.ops;
        let file = RunFile {
            id: run.id.clone(),
            record,
            speed,
            finished: now_utc(),
            peak_rss_bytes: peak_rss_bytes(),
        };
        let path = self.run_path(&run.id);
        let json = serde_json::to_string(&file).expect("a run serializes");
        write_atomic(&path, json.as_bytes()).map_err(io_error(&path))?;
        done(&file.speed, ops);
        Ok(())
    }

    /// The result set once every run has its file; None while some are missing.
    pub fn results(&self) -> Result<Option<(ResultSet, SpeedLog)>, CampaignError> {
        let mut runs = Vec::with_capacity(self.runs.len());
        let mut speeds = Vec::with_capacity(self.runs.len());
        let (mut last_finished, mut peak) = (String::new(), 0);
        for run in &self.runs {
            let path = self.run_path(&run.id);
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io_error(&path)(e)),
            };
            let file: RunFile =
                serde_json::from_str(&text).map_err(|e| CampaignError::Corrupt {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
            let p = &run.plan;
            runs.push(RunResult {
                point: p.point,
                axis_values: self.config.points[p.point].axis_values.clone(),
                design: self.config.designs[p.design].clone(),
                repetition: p.repetition,
                id: run.id.clone(),
                record: file.record,
            });
            speeds.push((run.id.clone(), file.speed));
            last_finished = last_finished.max(file.finished);
            peak = peak.max(file.peak_rss_bytes);
        }
        let mut machines: Vec<MachineSource> = Vec::new();
        for point in &self.config.points {
            let m = MachineSource {
                name: point.machine.name.clone(),
                source: point.machine.source.clone(),
            };
            if !machines.contains(&m) {
                machines.push(m);
            }
        }
        let set = ResultSet {
            provenance: Provenance {
                futexsim_version: VERSION.into(),
                git_commit: COMMIT.into(),
                config_name: self.config.name.clone(),
                resolved_config: self.config.resolved.clone(),
                base_seed: self.config.run.seed,
                repetitions: self.config.run.repetitions,
                machines,
            },
            axes: self.config.axes.clone(),
            designs: self.config.designs.clone(),
            baseline: self.config.baseline.clone(),
            runs,
        };
        let speed = SpeedLog {
            date: last_finished,
            peak_rss_bytes: peak,
            runs: speeds,
        };
        Ok(Some((set, speed)))
    }

    /// Removes run files no planned run names (left by an earlier build or
    /// config), once the new results are safely written.
    pub fn remove_stale_runs(&self) -> Result<usize, CampaignError> {
        let planned: BTreeSet<String> =
            self.runs.iter().map(|r| format!("{}.json", r.id)).collect();
        let dir = self.dir.join(RUNS_DIR);
        let mut removed = 0;
        for entry in fs::read_dir(&dir).map_err(io_error(&dir))? {
            let entry = entry.map_err(io_error(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !planned.contains(&name) {
                fs::remove_file(entry.path()).map_err(io_error(&entry.path()))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Copies into this campaign the run files it lacks from `other`, a
    /// campaign of the same config and build (a shard's output).
    pub fn absorb(&self, other: &Path) -> Result<usize, CampaignError> {
        let path = other.join(CAMPAIGN_FILE);
        let theirs = read_identity(&path)?.ok_or_else(|| {
            CampaignError::Merge(format!(
                "{}: no campaign.json; not a campaign directory",
                other.display()
            ))
        })?;
        let ours = read_identity(&self.dir.join(CAMPAIGN_FILE))?.expect("open wrote it");
        if theirs != ours {
            let what = if theirs.resolved_config != ours.resolved_config {
                first_difference(&ours.resolved_config, &theirs.resolved_config)
            } else {
                format!(
                    "made by futexsim {} ({}), not {} ({})",
                    theirs.futexsim_version,
                    theirs.git_commit,
                    ours.futexsim_version,
                    ours.git_commit
                )
            };
            return Err(CampaignError::Merge(format!(
                "{} is not a shard of the same campaign: {what}",
                other.display()
            )));
        }
        let mut copied = 0;
        for run in &self.runs {
            let (from, to) = (
                other.join(RUNS_DIR).join(format!("{}.json", run.id)),
                self.run_path(&run.id),
            );
            if from == to || to.exists() || !from.exists() {
                continue;
            }
            let bytes = fs::read(&from).map_err(io_error(&from))?;
            write_atomic(&to, &bytes).map_err(io_error(&to))?;
            copied += 1;
        }
        Ok(copied)
    }
}

fn read_identity(path: &Path) -> Result<Option<Identity>, CampaignError> {
    match fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| CampaignError::Corrupt {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path)(e)),
    }
}

/// "line 12: `futexes = 64` now `futexes = 128`": where two resolved configs part.
fn first_difference(old: &str, new: &str) -> String {
    let mut old_lines = old.lines();
    for (i, line) in new.lines().enumerate() {
        match old_lines.next() {
            Some(o) if o == line => continue,
            Some(o) => return format!("resolved line {}: `{o}`, now `{line}`", i + 1),
            None => return format!("resolved line {}: now `{line}`", i + 1),
        }
    }
    "the new config is shorter".into()
}

/// A run's identity: its scenario and the build that simulates it, hashed.
pub fn run_id(scenario: &Scenario) -> String {
    let canonical =
        serde_json::to_string(&(VERSION, build(), scenario)).expect("a scenario serializes");
    hash64(canonical.as_bytes())
}

fn hash64(bytes: &[u8]) -> String {
    let (c, b) = hashlittle2(bytes, 0, 0);
    format!("{:016x}", (u64::from(c) << 32) | u64::from(b))
}

/// The build: a hash of the source it was built from and the compiler
/// (build.rs), so an edit rebuilt without a commit (where the commit name
/// stays "-dirty") never reuses another build's runs, while copies of one
/// build, on the nodes of a cluster, share them.
fn build() -> &'static str {
    env!("FUTEXSIM_SOURCE_HASH")
}
