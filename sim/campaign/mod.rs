//! A campaign: the runs of one config, kept in one directory so that a run
//! cut short resumes where it stopped and shards run anywhere merge into
//! the same result set.
//!
//! ```text
//! DIR/campaign.json      the config resolved, and the build that ran it
//! DIR/runs/<id>.json     one finished run: its record, its id and a checksum
//! DIR/.futexsim.lock     held by the futexsim working in DIR
//! ```
//!
//! A run's id hashes its scenario with the futexsim version and a hash of
//! the source and compiler it was built from, so a run file is valid for
//! exactly one (scenario, build) and never reused by another. Every file is
//! written whole or not at all. futexsim writes only into an empty directory
//! or a campaign (campaign.json is the mark), and removes only files it can
//! tell are its own.

mod run_file;
pub mod shard;
mod store;

use crate::dir_lock::{lock, DirLock, LOCK_FILE};
pub use shard::Shard;
pub use store::{now_utc, peak_rss_bytes, reset_peak_rss};

use crate::config::{Config, ConfigError, PlannedRun};
use crate::files::{self, FileError};
use crate::limits::{self, MAX_DIR_NAME_BYTES};
use crate::machine::{Machine, MachineError};
use crate::record::Speed;
use crate::results::{MachineSource, Provenance, ResultSet, RunResult, SpeedLog};
use crate::scenario::{Prepared, RunError, RunOptions, Scenario, ScenarioError};
use run_file::RunFile;
pub use run_file::RunFileError;
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
    #[error(
        "{dir} is not a futexsim campaign and is not empty (it holds {first}); futexsim \
         writes only into an empty directory or its own campaign: choose another --out"
    )]
    NotACampaign { dir: String, first: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{path}: not a futexsim campaign file: {message}")]
    Corrupt { path: String, message: String },
    /// A run's file that is not its run's, met where every run must be whole.
    #[error("{path}: not a futexsim campaign file: {why}")]
    DamagedRun { path: String, why: RunFileError },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Merge(String),
    /// The threads the runs are simulated on could not start.
    #[error("{0}")]
    Threads(String),
    /// A published report's results.json, read to tell which config it is
    /// of, that is not one futexsim wrote.
    #[error(transparent)]
    Report(#[from] crate::report::ReadError),
    /// A point's machine does not build.
    #[error(transparent)]
    Machine(#[from] MachineError),
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
    /// Each point's machine, built once for every run of the point: its
    /// cost, its memory estimate and its simulation.
    machines: Vec<Machine>,
}

impl Campaign {
    /// Opens `dir` for `config`, creating it if needed, locked while the
    /// lock lives. A directory holding another config's campaign is refused
    /// unless `overwrite`; one holding anything else is refused.
    pub fn open(
        dir: &Path,
        config: Config,
        overwrite: bool,
    ) -> Result<(Campaign, DirLock), CampaignError> {
        let campaign = Campaign::plan(dir, config, overwrite)?;
        let lock = campaign.create(overwrite)?;
        Ok((campaign, lock))
    }

    /// The campaign `open` would give, without writing anything: a run that
    /// is refused before it starts leaves the directory as it was.
    pub fn plan(dir: &Path, config: Config, overwrite: bool) -> Result<Campaign, CampaignError> {
        check_identity(dir, &config, overwrite)?;
        let runs = config
            .runs()
            .into_iter()
            .map(|plan| Run {
                id: run_id(&plan.scenario),
                plan,
            })
            .collect();
        let machines = config
            .points
            .iter()
            .map(|point| Machine::new(point.machine.clone()))
            .collect::<Result<_, _>>()?;
        Ok(Campaign {
            dir: dir.to_path_buf(),
            config,
            runs,
            machines,
        })
    }

    /// Creates the directory and locks it (waiting for a futexsim already
    /// working there), checks again under the lock that it may be written,
    /// clears what a killed run left, and records which config and build the
    /// campaign belongs to. The directory stays locked while the lock lives.
    ///
    /// The mark comes first, runs/ after: a kill at any step leaves the
    /// directory as it was, or a campaign (perhaps without runs/ yet), and
    /// either resumes.
    pub fn create(&self, overwrite: bool) -> Result<DirLock, CampaignError> {
        files::create_user_dir(&self.dir)?;
        let held = lock(&self.dir)?;
        check_identity(&self.dir, &self.config, overwrite)?;
        files::remove_temp_files(&self.dir)?;
        let identity = Identity {
            futexsim_version: VERSION.into(),
            git_commit: COMMIT.into(),
            config_name: self.config.name.clone(),
            resolved_config: self.config.resolved.clone(),
        };
        let path = self.dir.join(CAMPAIGN_FILE);
        let json = serde_json::to_string_pretty(&identity).expect("an identity serializes") + "\n";
        // The mark is replaced only when it is one (checked above against
        // this config, or --overwrite).
        files::write(&path, json.as_bytes(), &is_identity)?;
        let runs_dir = self.dir.join(RUNS_DIR);
        files::create_dir(&runs_dir)?;
        files::remove_temp_files(&runs_dir)?;
        Ok(held)
    }

    /// A campaign directory with the config it was made from, read only.
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
        Campaign::plan(dir, config, false)
    }

    fn run_path(&self, id: &str) -> PathBuf {
        self.dir.join(RUNS_DIR).join(format!("{id}.json"))
    }

    /// The run file of `run`: whole and that run's, damaged, or absent.
    /// A FIFO, a device or a file over the cap there is refused.
    fn read_run(&self, run: &Run) -> Result<Stored, CampaignError> {
        read_run_file(&self.run_path(&run.id), &run.id)
    }

    /// Writes a run's file. The name is the proof: a file in a campaign's
    /// runs/ named for one of its planned runs is futexsim's, whatever it
    /// holds now (a damaged one is replaced); a link or a FIFO there is not.
    fn write_run(&self, id: &str, text: &[u8]) -> Result<(), CampaignError> {
        Ok(files::write(&self.run_path(id), text, &|_| true)?)
    }

    /// The runs of `shard` that have no valid file yet, most expensive first
    /// so that parallel workers finish together. A file that is not its
    /// run's (edited, cut, another run's) counts as missing: it is simulated
    /// again, and replaced. `warn` says so, one line per file, on stderr.
    pub fn missing(&self, shard: Shard, warn: bool) -> Result<Vec<&Run>, CampaignError> {
        let mut todo: Vec<&Run> = Vec::new();
        for run in self.runs.iter().filter(|r| shard.holds(&r.id)) {
            match self.read_run(run)? {
                Stored::Whole(_) => {}
                Stored::Absent => todo.push(run),
                Stored::Damaged(why) => {
                    if warn {
                        eprintln!(
                            "futexsim: warning: {} is not run {} ({why}); simulating it again",
                            self.run_path(&run.id).display(),
                            run.describe(&self.config)
                        );
                    }
                    todo.push(run);
                }
            }
        }
        let mut seen = BTreeSet::new();
        todo.retain(|r| seen.insert(r.id.clone()));
        // A run that does not resolve costs nothing: simulating it refuses it.
        todo.sort_by_cached_key(|r| {
            std::cmp::Reverse(self.prepare(r).map_or(0, |prepared| prepared.cost()))
        });
        Ok(todo)
    }

    /// The run of `todo` estimated to take the most memory, with its
    /// estimate, counted from each scenario's numbers: nothing is laid out
    /// (`Scenario::estimate`), so a run too large for the host is refused
    /// before it takes the memory. Repetitions differ only in their seed,
    /// so each (point, design) is estimated once, from whichever of its
    /// runs is in `todo`.
    pub fn largest_run<'a>(
        &self,
        todo: &[&'a Run],
    ) -> Result<Option<(&'a Run, u64)>, CampaignError> {
        let mut largest: Option<(&Run, u64)> = None;
        let mut seen = BTreeSet::new();
        for run in todo
            .iter()
            .filter(|r| seen.insert((r.plan.point, r.plan.design)))
        {
            let bytes = self
                .prepare(run)
                .map_err(|e| self.run_error(run, e.to_string()))?
                .estimate()
                .bytes();
            if largest.is_none_or(|(_, most)| bytes > most) {
                largest = Some((run, bytes));
            }
        }
        Ok(largest)
    }

    /// `run`'s scenario resolved on its point's machine.
    fn prepare<'a>(&'a self, run: &'a Run) -> Result<Prepared<'a>, ScenarioError> {
        run.plan.scenario.prepare(&self.machines[run.plan.point])
    }

    fn run_error(&self, run: &Run, message: String) -> CampaignError {
        CampaignError::Run {
            id: run.id.clone(),
            what: run.describe(&self.config),
            message,
        }
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
        // No more threads than runs: `--jobs 100000` on 12 runs starts 12.
        let threads = jobs.clamp(1, todo.len().max(1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| {
                CampaignError::Threads(format!(
                    "starting {threads} threads to simulate on failed ({e}); lower --jobs"
                ))
            })?;
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
        let (record, speed) = self
            .prepare(run)
            .map_err(RunError::from)
            .and_then(|prepared| {
                prepared.simulate_with(RunOptions {
                    explain: self.config.points[run.plan.point].run.explain,
                })
            })
            .map_err(|e| self.run_error(run, e.to_string()))?;
        let ops = record.ops;
        let file = RunFile {
            id: run.id.clone(),
            record,
            speed,
            finished: now_utc(),
            peak_rss_bytes: peak_rss_bytes(),
        };
        self.write_run(&run.id, run_file::encode(&file).as_bytes())?;
        done(&file.speed, ops);
        Ok(())
    }

    /// The result set once every run has its file; None while some are missing.
    pub fn results(&self) -> Result<Option<(ResultSet, SpeedLog)>, CampaignError> {
        let mut runs = Vec::with_capacity(self.runs.len());
        let mut speeds = Vec::with_capacity(self.runs.len());
        let (mut last_finished, mut peak) = (String::new(), 0);
        for run in &self.runs {
            let file = match self.read_run(run)? {
                Stored::Whole(file) => *file,
                Stored::Absent => return Ok(None),
                Stored::Damaged(why) => {
                    return Err(CampaignError::DamagedRun {
                        path: self.run_path(&run.id).display().to_string(),
                        why,
                    })
                }
            };
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

    /// Removes the run files no planned run names (left by an earlier build
    /// or config), once the new results are safely written: only files that
    /// are futexsim's run files, named for the run they hold. Anything else
    /// in runs/ is left where it is.
    pub fn remove_stale_runs(&self) -> Result<usize, CampaignError> {
        let planned: BTreeSet<String> =
            self.runs.iter().map(|r| format!("{}.json", r.id)).collect();
        let dir = self.dir.join(RUNS_DIR);
        let mut removed = 0;
        for entry in fs::read_dir(&dir).map_err(io_error(&dir))? {
            let entry = entry.map_err(io_error(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if planned.contains(&name) || !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let ours = |bytes: &[u8]| {
                std::str::from_utf8(bytes).is_ok_and(|text| run_file::is_futexsims(&name, text))
            };
            if files::remove(&entry.path(), limits::RUN_FILE_CAP, &ours)? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Copies into this campaign the run files it lacks (or holds damaged)
    /// from `other`, a campaign of the same config and build (a shard's
    /// output). A shard's file that is not its run's is never copied: it is
    /// named in a one-line warning and the run counts as missing.
    pub fn absorb(&self, other: &Path) -> Result<usize, CampaignError> {
        let path = other.join(CAMPAIGN_FILE);
        let theirs = read_identity(&path)?.ok_or_else(|| {
            CampaignError::Merge(format!(
                "{}: no campaign.json; not a campaign directory",
                other.display()
            ))
        })?;
        let here = self.dir.join(CAMPAIGN_FILE);
        let ours = read_identity(&here)?.ok_or_else(|| CampaignError::Corrupt {
            path: here.display().to_string(),
            message: "the merged campaign lost its campaign.json".into(),
        })?;
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
            if same_file(&from, &to) || matches!(self.read_run(run)?, Stored::Whole(_)) {
                continue;
            }
            let file = match read_run_file(&from, &run.id)? {
                Stored::Whole(file) => file,
                Stored::Absent => continue,
                Stored::Damaged(why) => {
                    eprintln!(
                        "futexsim: warning: {} is not run {} ({why}); not merged",
                        from.display(),
                        run.describe(&self.config)
                    );
                    continue;
                }
            };
            self.write_run(&run.id, run_file::encode(&file).as_bytes())?;
            copied += 1;
        }
        Ok(copied)
    }
}

/// Why `name` (a config's) cannot be one directory under a campaigns'
/// root: it must be a plain file name, so that the campaign stays under it.
pub fn check_dir_name(name: &str) -> Result<(), DirNameError> {
    if name.is_empty() {
        return Err(DirNameError::Empty);
    }
    if name == "." || name == ".." {
        return Err(DirNameError::AtOrAboveRoot(name.to_string()));
    }
    if name.starts_with('.') {
        return Err(DirNameError::Hidden);
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '/' | '\\'))
    {
        return Err(DirNameError::Holds(c));
    }
    if name.len() > MAX_DIR_NAME_BYTES {
        return Err(DirNameError::TooLong(name.len()));
    }
    Ok(())
}

/// Why a config's name cannot be a campaign's directory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DirNameError {
    #[error("it is empty")]
    Empty,
    #[error("'{0}' names a directory at or above the root")]
    AtOrAboveRoot(String),
    #[error("it starts with '.'")]
    Hidden,
    #[error("it holds {0:?}")]
    Holds(char),
    #[error("it is {0} bytes long, more than {MAX_DIR_NAME_BYTES}")]
    TooLong(usize),
}

/// Whether two paths name one file (a shard merged into itself).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Whether `dir` may hold `config`'s campaign: it does not exist, is empty,
/// or holds a campaign or a published report of this config (of any
/// config with `overwrite`).
fn check_identity(dir: &Path, config: &Config, overwrite: bool) -> Result<(), CampaignError> {
    let old = match read_identity(&dir.join(CAMPAIGN_FILE))? {
        Some(old) => old,
        None => match report_identity(dir)? {
            Some(old) => old,
            None => return Ok(()),
        },
    };
    let what = if old.config_name != config.name {
        Some(format!("config '{}'", old.config_name))
    } else if old.resolved_config != config.resolved {
        Some(first_difference(&old.resolved_config, &config.resolved))
    } else {
        None
    };
    match (what, overwrite) {
        (Some(what), false) => Err(CampaignError::ConfigChanged {
            dir: dir.display().to_string(),
            what,
        }),
        _ => Ok(()),
    }
}

/// A directory without a campaign may be used only when it holds nothing
/// (but the lock of a futexsim that made it and was killed at once) or
/// only a report futexsim published, as a checkout of the project's
/// reports/ has them (git keeps no campaign file): then the report's
/// provenance names its config. None for an empty directory.
fn report_identity(dir: &Path) -> Result<Option<Identity>, CampaignError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(dir)(e)),
    };
    let mut published = false;
    for entry in entries {
        let entry = entry.map_err(io_error(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(io_error(dir))?;
        // What a futexsim killed while it made the campaign leaves: its
        // lock, the mark's temporary file, an empty runs/.
        let empty_dir =
            || kind.is_dir() && fs::read_dir(entry.path()).is_ok_and(|mut d| d.next().is_none());
        // A campaign made since `check_identity` found no mark: the check
        // before the lock races with a futexsim creating the campaign
        // under it (two runs started together on a new directory).
        if name == CAMPAIGN_FILE {
            return read_identity(&entry.path());
        }
        if name == LOCK_FILE
            || (files::is_temp_name(&name) && kind.is_file())
            || (name == RUNS_DIR && empty_dir())
        {
            continue;
        }
        if !crate::report::is_own_entry(dir, &name, kind) {
            return Err(CampaignError::NotACampaign {
                dir: dir.display().to_string(),
                first: name,
            });
        }
        published = true;
    }
    if !published {
        return Ok(None);
    }
    let (set, _) = crate::report::read(dir)?;
    let p = set.provenance;
    Ok(Some(Identity {
        futexsim_version: p.futexsim_version,
        git_commit: p.git_commit,
        config_name: p.config_name,
        resolved_config: p.resolved_config,
    }))
}

fn read_identity(path: &Path) -> Result<Option<Identity>, CampaignError> {
    let Some(text) = files::read_text_if_any(path, limits::CAMPAIGN_CAP)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| CampaignError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

/// Whether `bytes` are a campaign's mark, which futexsim alone writes.
fn is_identity(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Identity>(bytes).is_ok()
}

/// What a campaign's runs/ holds for one run.
enum Stored {
    /// The run's file, whole (boxed: a record is large beside the others).
    Whole(Box<RunFile>),
    /// A file that is not the run's (edited, cut, another run's), and why.
    Damaged(RunFileError),
    /// No file.
    Absent,
}

/// The run file at `path`: whole and run `id`'s, damaged, or absent. What
/// is not a regular file, or is over the cap, is refused.
fn read_run_file(path: &Path, id: &str) -> Result<Stored, CampaignError> {
    let bytes = match files::read(path, limits::RUN_FILE_CAP) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Ok(Stored::Absent),
        Err(e) => return Err(e.into()),
    };
    let decoded = match String::from_utf8(bytes) {
        Ok(text) => run_file::decode(&text, id),
        Err(_) => Err(RunFileError::NotText),
    };
    Ok(match decoded {
        Ok(file) => Stored::Whole(Box::new(file)),
        Err(why) => Stored::Damaged(why),
    })
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
    files::hash_hex(canonical.as_bytes())
}

/// The build: a hash of the source it was built from and the compiler
/// (build.rs), so an edit rebuilt without a commit (where the commit name
/// stays "-dirty") never reuses another build's runs, while copies of one
/// build, on the nodes of a cluster, share them.
fn build() -> &'static str {
    env!("FUTEXSIM_SOURCE_HASH")
}
