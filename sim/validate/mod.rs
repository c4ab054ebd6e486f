//! Validation against published results: each case names a config, the runs
//! whose figures form a ratio or an absolute figure, and the figure published
//! for the real system. Every config is simulated once, however many cases
//! read it; the model's parameters come from the configs' machine profiles
//! and designs alone.

pub mod case;
pub mod coverage;
pub mod report;
pub mod suite;
pub mod verdict;

use crate::config::ConfigError;
use crate::config::{with_suggestion, Config, Source};
use crate::files::FileError;
use crate::record::RunRecord;
use crate::report::interval::SeedInterval;
use crate::report::track_record::{CaseRecord, Likeness, TrackRecord};
use crate::scenario::RunError;
use crate::sensitivity::Plan;
use case::{CaseError, CaseSpec, CasesFile, Prediction};
use coverage::StatedInterval;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use verdict::{Change, Judged, Published, Verdict};

/// Where the suite `futexsim validate` embeds lives in the source tree.
pub const SUITE: &str = "configs/validation/cases.toml";

/// One case judged.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub case: CaseSpec,
    pub judged: Judged,
    pub published: Published,
    pub predicted: Prediction,
    /// A ratio's change, judged by its effect on time per op.
    pub change: Option<Change>,
    /// What the case's runs are like (a model case's), for the track record.
    pub likeness: Option<Likeness>,
    /// The factor between predicted and published (1 inside a range).
    pub error: f64,
    pub verdict: Verdict,
    /// A model case's stated interval, seed and model together, when the
    /// suite ran over its profiles' plausible ranges.
    pub interval: Option<StatedInterval>,
}

/// What the suite runs: each config as it is, or also once per sample of
/// its machine profile's plausible ranges, for the model cases' stated
/// intervals and their coverage (sim/validate/coverage.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervals {
    /// The configs as they are: seed intervals only, no coverage.
    Seed,
    /// The configs and their samples: about twenty times the runs.
    SeedAndModel,
}

/// Cases and the configs they read, by the name the cases give them.
pub type Suite = (Vec<CaseSpec>, BTreeMap<String, Config>);

/// Loads a cases file and every config it names, checking all of it
/// before anything runs.
pub fn load(path: &Path) -> Result<Suite, SuiteError> {
    let text = crate::files::read_text(path, crate::limits::CONFIG_CAP).map_err(|error| {
        SuiteError::Unreadable {
            path: path.to_path_buf(),
            error,
        }
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse(&path.display().to_string(), &text, |name| {
        Ok(Config::load(&dir.join(name), &[])?)
    })
}

/// The suite compiled into the binary: configs/validation/cases.toml and
/// the configs it names, so `futexsim validate` runs from any directory.
pub fn load_embedded() -> Result<Suite, SuiteError> {
    parse(SUITE, suite::CASES, |name| {
        let text = suite::config(name).ok_or_else(|| SuiteError::NotEmbedded {
            name: name.to_string(),
        })?;
        // Named relative to the cases file, as in the tree.
        let file = match name.strip_prefix("../") {
            Some(in_configs) => Path::new("configs").join(in_configs),
            None => Path::new("configs/validation").join(name),
        };
        let stem = file
            .file_stem()
            .map_or("config".into(), |s| s.to_string_lossy().into_owned());
        Ok(Config::parse(
            &file.display().to_string(),
            &stem,
            text,
            &[],
        )?)
    })
}

/// Why a suite does not load: its cases file or a config it names, with
/// the place of the mistake where it has one.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{}: cannot read the cases: {}", path.display(), error.reason())]
    Unreadable { path: PathBuf, error: FileError },
    #[error(
        "{SUITE}: the case config '{name}' is not among the configs futexsim embeds \
         (sim/validate/suite.rs)"
    )]
    NotEmbedded { name: String },
    /// The cases file or a config it names, at the mistake.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Why a suite's runs could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{config}: {error}")]
    Run { config: String, error: RunError },
    #[error("{config}: the model interval's {error}")]
    Sample { config: String, error: String },
    #[error(transparent)]
    Case(#[from] CaseError),
}

fn parse(
    file: &str,
    text: &str,
    mut config_named: impl FnMut(&str) -> Result<Config, SuiteError>,
) -> Result<Suite, SuiteError> {
    let src = Source::parse(file, text)?;
    let cases: CasesFile =
        toml::from_str(text).map_err(|e| src.error_at(e.span(), with_suggestion(e.message())))?;
    let mut configs = BTreeMap::new();
    for (i, case) in cases.case.iter().enumerate() {
        if !configs.contains_key(&case.config) {
            configs.insert(case.config.clone(), config_named(&case.config)?);
        }
        // Placed at the key the mistake is about, or the case when it is not written.
        case.check(&configs[&case.config]).map_err(|e| {
            let at = ["case".to_string(), i.to_string(), e.key.to_string()];
            src.error_at_path(&at, e.to_string())
        })?;
    }
    Ok((cases.case, configs))
}

/// Simulates every run of every config (and, for `Intervals::SeedAndModel`,
/// of its samples) on `jobs` threads and judges each case.
pub fn run(
    cases: Vec<CaseSpec>,
    configs: &BTreeMap<String, Config>,
    jobs: usize,
    intervals: Intervals,
) -> Result<Vec<Outcome>, ValidateError> {
    // Each config as it is, then its samples: one pool runs them all.
    let mut variants: Vec<(&String, Config)> = Vec::new();
    let mut nominal = BTreeMap::new();
    let mut samples: BTreeMap<&String, Vec<usize>> = BTreeMap::new();
    for (name, config) in configs {
        nominal.insert(name, variants.len());
        variants.push((name, config.clone()));
        if intervals == Intervals::Seed {
            continue;
        }
        let plan = Plan::new(config);
        for sample in &plan.samples {
            let at = plan
                .config_at(config, sample)
                .map_err(|error| ValidateError::Sample {
                    config: name.clone(),
                    error,
                })?;
            samples.entry(name).or_default().push(variants.len());
            variants.push((name, at));
        }
    }
    let runs = simulate(&variants, jobs)?;
    cases
        .into_iter()
        .map(|case| {
            let published = case.published()?;
            let judged = case.judged();
            let at = nominal[&case.config];
            let (config, case_runs) = (&variants[at].1, &runs[at]);
            let predicted = case.predict(config, case_runs)?;
            let change = match (judged, published) {
                (Judged::Ratio, Published::Value(figure)) => Some(case.change(figure, &predicted)?),
                _ => None,
            };
            let interval = match (intervals, judged) {
                (Intervals::Seed, _) | (_, Judged::ClosedForm | Judged::Calibration) => None,
                (Intervals::SeedAndModel, _) => {
                    let sampled = samples.get(&case.config).map_or(&[][..], Vec::as_slice);
                    let seeds = sampled
                        .iter()
                        .map(|&v| Ok(seed_interval(&case.predict(&variants[v].1, &runs[v])?)))
                        .collect::<Result<Vec<_>, CaseError>>()?;
                    Some(StatedInterval::of(&seed_interval(&predicted), &seeds))
                }
            };
            Ok(Outcome {
                verdict: change
                    .as_ref()
                    .map_or_else(|| published.judge(judged, predicted.figure), Change::judge),
                error: published.error(predicted.figure),
                likeness: case.likeness(config, case_runs),
                change,
                judged,
                published,
                predicted,
                interval,
                case,
            })
        })
        .collect()
}

/// A config's runs: point, design and record of each.
type Runs = Vec<(usize, usize, RunRecord)>;

/// Every run of every config in `variants`, on `jobs` threads.
fn simulate(variants: &[(&String, Config)], jobs: usize) -> Result<Vec<Runs>, ValidateError> {
    let planned: Vec<(usize, crate::config::PlannedRun)> = variants
        .iter()
        .enumerate()
        .flat_map(|(v, (_, config))| config.runs().into_iter().map(move |r| (v, r)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("a thread pool of a positive size builds");
    let records: Vec<(usize, usize, usize, RunRecord)> = pool.install(|| {
        planned
            .par_iter()
            .map(|(v, plan)| {
                let (record, _) = plan
                    .scenario
                    .simulate()
                    .map_err(|error| ValidateError::Run {
                        config: variants[*v].0.to_string(),
                        error,
                    })?;
                Ok((*v, plan.point, plan.design, record))
            })
            .collect::<Result<_, ValidateError>>()
    })?;
    let mut runs = vec![Vec::new(); variants.len()];
    for (v, point, design, record) in records {
        runs[v].push((point, design, record));
    }
    Ok(runs)
}

/// A prediction's seed interval, or its figure alone where it is no mean
/// over seeds (a peak along an axis).
fn seed_interval(predicted: &Prediction) -> SeedInterval {
    predicted.seed.unwrap_or(SeedInterval {
        mean: predicted.figure,
        low: None,
        high: None,
        repetitions: 1,
        bimodal: false,
    })
}

/// The model cases of a suite's outcomes, as the track record keeps them
/// (closed forms test the model's arithmetic, not its predictions, and stay
/// out).
pub fn track_record(outcomes: &[Outcome]) -> TrackRecord {
    TrackRecord {
        case: outcomes
            .iter()
            .filter_map(|o| {
                Some(CaseRecord {
                    case: o.case.name.clone(),
                    likeness: o.likeness.clone()?,
                    error: o.error,
                    passed: o.verdict.passed(),
                })
            })
            .collect(),
    }
}
