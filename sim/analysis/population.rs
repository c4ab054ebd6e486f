//! The futex keys a benchmark makes the kernel hash, built from the addresses
//! the benchmark really uses (workload::user_memory).

use crate::kernel::futex_hash::ProcessInfo;
use crate::kernel::key::{get_futex_key, FutexKey, KeyError, KeySource, WordSize};
use crate::workload::user_memory::{mm_addresses, perf_hash_arrays, stack_words};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Most threads or tasks a population may have: as many as the largest
/// machine futexsim models has CPUs.
pub const MAX_TASKS: u32 = 1 << 16;
/// Most keys a population may have, so one analysis stays in memory and time.
pub const MAX_KEYS: u64 = 1 << 24;

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

/// One futex key and the process whose futex it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedKey {
    pub key: FutexKey,
    pub process: u32,
}

impl KeyPopulation {
    pub fn validate(&self) -> Result<(), String> {
        let (tasks, what) = match *self {
            KeyPopulation::PerfHash { threads, .. } => (threads, "threads"),
            KeyPopulation::WillItScale { tasks, .. } => (tasks, "tasks"),
        };
        if !(1..=MAX_TASKS).contains(&tasks) {
            return Err(format!("{what} = {tasks}: must be from 1 to {MAX_TASKS}"));
        }
        if let KeyPopulation::PerfHash { futexes: 0, .. } = self {
            return Err("futexes = 0: each thread needs at least one futex".into());
        }
        if self.keys() > MAX_KEYS {
            return Err(format!(
                "{} keys is more than the {MAX_KEYS} the layout analysis takes",
                self.keys()
            ));
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

    /// The processes, in the order their keys name them. Each starts on node
    /// 0: placement does not change which bucket or line a key lands on.
    pub fn processes(&self) -> Vec<ProcessInfo> {
        let (count, threads) = match *self {
            KeyPopulation::WillItScale {
                tasks,
                process_mode: true,
                ..
            } => (tasks, 1),
            _ => (1, self.threads()),
        };
        vec![ProcessInfo { threads, node: 0 }; count as usize]
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

    /// The keys, deterministic for a seed: the same seed gives the same
    /// addresses whatever table design they are hashed into.
    pub fn place_keys(&self, seed: u64, bits: WordSize) -> Result<Vec<PlacedKey>, KeyError> {
        let mut keys = Vec::with_capacity(self.keys() as usize);
        self.for_each_key(seed, bits, |k| keys.push(k))?;
        Ok(keys)
    }

    /// Hands the keys of `place_keys` to `f` one at a time: millions of
    /// them need not sit in memory to be counted.
    pub fn for_each_key(
        &self,
        seed: u64,
        bits: WordSize,
        mut f: impl FnMut(PlacedKey),
    ) -> Result<(), KeyError> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // Every population is arrays of consecutive u32 words: a thread's
        // array in perf bench futex hash, a one-word stack slot in
        // will-it-scale. Each array is (base, process).
        let (mms, arrays, words_per_array): (Vec<u64>, Vec<(u64, u32)>, u64) = match *self {
            KeyPopulation::PerfHash {
                threads, futexes, ..
            } => {
                let mms = mm_addresses(1, &mut rng);
                let arrays = perf_hash_arrays(threads, futexes, &mut rng)
                    .into_iter()
                    .map(|base| (base, 0))
                    .collect();
                (mms, arrays, futexes.into())
            }
            KeyPopulation::WillItScale {
                tasks,
                process_mode,
                ..
            } => {
                let processes = if process_mode { tasks } else { 1 };
                let mms = mm_addresses(processes, &mut rng);
                let words = stack_words(tasks, process_mode, &mut rng)
                    .into_iter()
                    .zip(0..)
                    .map(|(word, task)| (word, if process_mode { task } else { 0 }))
                    .collect();
                (mms, words, 1)
            }
        };
        for (base, process) in arrays {
            let mm = mms[process as usize];
            // Heap arrays and stacks are anonymous memory.
            let source = if self.shared() {
                KeySource::SharedAnon { mm }
            } else {
                KeySource::Private { mm }
            };
            for i in 0..words_per_array {
                let key = get_futex_key(base + 4 * i, source, bits)?;
                f(PlacedKey { key, process });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn perf_hash_keys_are_one_process_and_distinct() {
        let pop = KeyPopulation::PerfHash {
            threads: 4,
            futexes: 1024,
            shared: false,
        };
        let keys = pop.place_keys(1, WordSize::Bits64).unwrap();
        assert_eq!(keys.len() as u64, pop.keys());
        assert!(keys.iter().all(|k| k.process == 0 && k.key.is_private()));
        let distinct: HashSet<_> = keys.iter().map(|k| k.key).collect();
        assert_eq!(distinct.len(), keys.len());
        assert_eq!(pop.processes().len(), 1);
    }

    #[test]
    fn forked_tasks_differ_only_by_mm() {
        let pop = KeyPopulation::WillItScale {
            tasks: 8,
            process_mode: true,
            shared: true,
        };
        let keys = pop.place_keys(2, WordSize::Bits64).unwrap();
        assert!(keys.iter().all(|k| k.key.word == keys[0].key.word));
        let mms: HashSet<_> = keys.iter().map(|k| k.key.ptr).collect();
        assert_eq!(mms.len(), 8);
        assert!(keys.iter().zip(0..).all(|(k, p)| k.process == p));
        assert!(keys.iter().all(|k| !k.key.is_private()));
        assert_eq!(pop.processes().len(), 8);
    }

    #[test]
    fn limits_are_checked() {
        let too_many = KeyPopulation::PerfHash {
            threads: MAX_TASKS,
            futexes: 1 << 10,
            shared: false,
        };
        assert!(too_many.validate().unwrap_err().contains("keys"));
        let none = KeyPopulation::WillItScale {
            tasks: 0,
            process_mode: false,
            shared: false,
        };
        assert!(none.validate().unwrap_err().contains("tasks = 0"));
    }
}
