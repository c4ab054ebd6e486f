//! `futexsim advise`: a question (machines, workloads, points, a baseline,
//! a design family and a target) answered by searching the family rather
//! than running all of it: question.rs reads it, search.rs decides what to
//! measure next and what the answer is (apart from any simulation),
//! evaluate.rs measures by running campaigns, answer.rs writes the answer.

pub mod answer;
pub mod evaluate;
pub mod question;
pub mod quick;
pub mod search;

use crate::campaign::Shard;
use answer::{Advice, PointAdvice};
use evaluate::{AdviseError, CampaignEvaluator};
use question::Question;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Answers `question`, keeping its runs in `store` (one campaign directory
/// per asked point), `jobs` runs at once; stops starting runs once `stop`
/// is set. A `shard` other than all of them simulates only its share of the
/// first measurement the store lacks runs of, and stops there
/// (`AdviseError::ShardDone`). With `sensitivity`, each recommendation's ratio also gets its
/// model interval. `command` is what reproduces the answer.
pub fn advise<'q>(
    question: &'q Question,
    store: &Path,
    jobs: usize,
    shard: Shard,
    stop: &AtomicBool,
    sensitivity: bool,
    command: String,
) -> Result<Advice<'q>, AdviseError> {
    let mut points = Vec::new();
    let mut used = BTreeMap::new();
    let mut simulated = 0;
    for at in question.asked() {
        let label = question.label(at);
        let dir = store.join(crate::files::file_part(&label));
        let mut evaluator = CampaignEvaluator::new(question, at, dir, jobs, shard, stop);
        let outcome = search::search(
            &mut evaluator,
            question.family.candidates.len(),
            question.family.order,
            &question.target,
            question.budget,
        )?;
        let model = match (sensitivity, outcome.chosen) {
            (true, Some(c)) => {
                let repetitions = outcome.measured[&c].ratio.repetitions as u32;
                evaluator.model_interval(c, repetitions)?
            }
            _ => None,
        };
        used.extend(evaluator.used);
        simulated += evaluator.simulated;
        points.push(PointAdvice {
            label,
            outcome,
            seen: evaluator.seen,
            model,
        });
    }
    Ok(Advice {
        question,
        sensitivity,
        points,
        runs_used: used.len(),
        simulated_us: used.values().sum::<u64>() / 1000,
        runs_simulated: simulated,
        command,
    })
}
