//! Validation against published results: each case names a config, the runs
//! whose figures form a ratio, and the ratio published for the real system.
//! Every config is simulated once, however many cases read it; the model's
//! parameters come from the configs' machine profiles and designs alone.

pub mod case;
pub mod report;
pub mod verdict;

use crate::config::Config;
use crate::record::RunRecord;
use case::{CaseSpec, CasesFile};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use verdict::{Published, Verdict};

/// The suite `futexsim validate` runs.
pub const SUITE: &str = "configs/validation/cases.toml";

/// One case judged.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub case: CaseSpec,
    pub published: Published,
    pub predicted: f64,
    pub verdict: Verdict,
}

/// Loads the cases file and every config it names, checking all of it
/// before anything runs.
pub fn load(path: &Path) -> Result<(Vec<CaseSpec>, BTreeMap<String, Config>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the cases: {e}", path.display()))?;
    let file: CasesFile =
        toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut configs = BTreeMap::new();
    for case in &file.case {
        case.published()?;
        if !configs.contains_key(&case.config) {
            let config = Config::load(&dir.join(&case.config), &[]).map_err(|e| e.to_string())?;
            configs.insert(case.config.clone(), config);
        }
        case.check(&configs[&case.config])?;
    }
    Ok((file.case, configs))
}

/// Simulates every run of every config on `jobs` threads and judges each case.
pub fn run(
    cases: Vec<CaseSpec>,
    configs: &BTreeMap<String, Config>,
    jobs: usize,
) -> Result<Vec<Outcome>, String> {
    let planned: Vec<(&String, crate::config::PlannedRun)> = configs
        .iter()
        .flat_map(|(name, config)| config.runs().into_iter().map(move |r| (name, r)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("a thread pool of a positive size builds");
    let records: Vec<(&String, usize, usize, RunRecord)> = pool.install(|| {
        planned
            .par_iter()
            .map(|(name, plan)| {
                let (record, _) = plan
                    .scenario
                    .simulate()
                    .map_err(|e| format!("{name}: {e}"))?;
                Ok((*name, plan.point, plan.design, record))
            })
            .collect::<Result<_, String>>()
    })?;
    let mut by_config: BTreeMap<&String, Vec<(usize, usize, RunRecord)>> = BTreeMap::new();
    for (name, point, design, record) in records {
        by_config
            .entry(name)
            .or_default()
            .push((point, design, record));
    }
    cases
        .into_iter()
        .map(|case| {
            let published = case.published()?;
            let predicted = case.predict(&configs[&case.config], &by_config[&case.config])?;
            Ok(Outcome {
                verdict: published.judge(predicted),
                published,
                predicted,
                case,
            })
        })
        .collect()
}
