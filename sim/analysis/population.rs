//! Which benchmark's futex keys a layout analysis hashes, when no run is
//! asked for: the keys are those the benchmark's own set-up places for the
//! seed (its `place`), the addresses the benchmark really uses.

use crate::limits::{MAX_ANALYSIS_KEYS, MAX_ANALYSIS_TASKS};
use crate::workload::futex_words::FutexWords;
use crate::workload::perf_hash::PerfHash;
use crate::workload::will_it_scale::{Mode, WillItScale};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Why a population cannot be analysed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PopulationError {
    #[error("{what} = {tasks}: must be from 1 to {MAX_ANALYSIS_TASKS}")]
    Tasks { what: &'static str, tasks: u32 },
    #[error("futexes = 0: each thread needs at least one futex")]
    NoFutexes,
    #[error("{0} keys is more than the {MAX_ANALYSIS_KEYS} the layout analysis takes")]
    Keys(u64),
}

/// Which benchmark's futexes are hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "workload", rename_all = "kebab-case")]
pub enum KeyPopulation {
    /// perf bench futex hash: one process, `threads` threads, each with its
    /// own array of `futexes` u32 futex words; private futexes unless `-S`.
    PerfHash {
        threads: u32,
        futexes: u32,
        shared: bool,
    },
    /// will-it-scale futex1-4: one stack word per task, the tasks being the
    /// threads of one process or forked processes of one parent; futex1 and
    /// futex2 are shared, futex3 and futex4 private.
    WillItScale {
        tasks: u32,
        process_mode: bool,
        shared: bool,
    },
}

impl KeyPopulation {
    pub fn validate(&self) -> Result<(), PopulationError> {
        let (tasks, what) = match *self {
            KeyPopulation::PerfHash { threads, .. } => (threads, "threads"),
            KeyPopulation::WillItScale { tasks, .. } => (tasks, "tasks"),
        };
        if !(1..=MAX_ANALYSIS_TASKS).contains(&tasks) {
            return Err(PopulationError::Tasks { what, tasks });
        }
        if let KeyPopulation::PerfHash { futexes: 0, .. } = self {
            return Err(PopulationError::NoFutexes);
        }
        if self.keys() > MAX_ANALYSIS_KEYS {
            return Err(PopulationError::Keys(self.keys()));
        }
        Ok(())
    }

    pub fn keys(&self) -> u64 {
        match *self {
            KeyPopulation::PerfHash {
                threads, futexes, ..
            } => u64::from(threads) * u64::from(futexes),
            KeyPopulation::WillItScale { tasks, .. } => u64::from(tasks),
        }
    }

    /// All threads of all processes.
    pub fn threads(&self) -> u64 {
        match *self {
            KeyPopulation::PerfHash { threads, .. } => threads.into(),
            KeyPopulation::WillItScale { tasks, .. } => tasks.into(),
        }
    }

    fn shared(&self) -> bool {
        match *self {
            KeyPopulation::PerfHash { shared, .. } | KeyPopulation::WillItScale { shared, .. } => {
                shared
            }
        }
    }

    /// One line for reports, e.g. "perf bench futex hash: 32 threads x 1024
    /// private futexes".
    pub fn describe(&self) -> String {
        let kind = if self.shared() { "shared" } else { "private" };
        match *self {
            KeyPopulation::PerfHash {
                threads, futexes, ..
            } => format!("perf bench futex hash: {threads} threads x {futexes} {kind} futexes"),
            KeyPopulation::WillItScale {
                tasks,
                process_mode,
                ..
            } => {
                let mode = if process_mode { "processes" } else { "threads" };
                format!("will-it-scale futex: {tasks} {mode}, one {kind} stack futex each")
            }
        }
    }

    /// The futex words the benchmark's set-up places for `seed`: the same
    /// seed gives the same addresses whatever table design they are hashed
    /// into, and a run of the benchmark with that seed uses them too.
    pub fn place(&self, seed: u64) -> FutexWords {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        match *self {
            KeyPopulation::PerfHash {
                threads,
                futexes,
                shared,
            } => PerfHash {
                threads: Some(threads),
                futexes,
                shared,
                ..PerfHash::default()
            }
            .place(threads, &mut rng),
            KeyPopulation::WillItScale {
                tasks,
                process_mode,
                shared,
            } => WillItScale {
                // futex1 and futex3 (FUTEX_WAKE) place their words as futex2 and futex4 do.
                test: if shared { 2 } else { 4 },
                mode: if process_mode {
                    Mode::Process
                } else {
                    Mode::Thread
                },
                tasks: Some(tasks),
            }
            .place(tasks, &mut rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::key::WordSize;
    use crate::workload::futex_words::PlacedKey;
    use std::collections::HashSet;

    fn keys(pop: &KeyPopulation, seed: u64) -> (Vec<PlacedKey>, usize) {
        let words = pop.place(seed);
        let mut keys = Vec::new();
        words
            .for_each_key(WordSize::Bits64, 4096, |k| keys.push(k))
            .unwrap();
        (keys, words.threads.len())
    }

    #[test]
    fn perf_hash_keys_are_one_process_and_distinct() {
        let pop = KeyPopulation::PerfHash {
            threads: 4,
            futexes: 1024,
            shared: false,
        };
        let (keys, processes) = keys(&pop, 1);
        assert_eq!(keys.len() as u64, pop.keys());
        assert!(keys.iter().all(|k| k.process == 0 && k.key.is_private()));
        let distinct: HashSet<_> = keys.iter().map(|k| k.key).collect();
        assert_eq!(distinct.len(), keys.len());
        assert_eq!(processes, 1);
    }

    #[test]
    fn forked_tasks_differ_only_by_mm() {
        let pop = KeyPopulation::WillItScale {
            tasks: 8,
            process_mode: true,
            shared: true,
        };
        let (keys, processes) = keys(&pop, 2);
        assert!(keys.iter().all(|k| k.key.word == keys[0].key.word));
        let mms: HashSet<_> = keys.iter().map(|k| k.key.ptr).collect();
        assert_eq!(mms.len(), 8);
        assert!(keys.iter().zip(0..).all(|(k, p)| k.process == p));
        assert!(keys.iter().all(|k| !k.key.is_private()));
        assert_eq!(processes, 8);
    }

    #[test]
    fn limits_are_checked() {
        let too_many = KeyPopulation::PerfHash {
            threads: MAX_ANALYSIS_TASKS,
            futexes: 1 << 10,
            shared: false,
        };
        assert_eq!(too_many.validate(), Err(PopulationError::Keys(1 << 26)));
        let none = KeyPopulation::WillItScale {
            tasks: 0,
            process_mode: false,
            shared: false,
        };
        assert_eq!(
            none.validate().map_err(|e| e.to_string()),
            Err(format!("tasks = 0: must be from 1 to {MAX_ANALYSIS_TASKS}"))
        );
    }
}
