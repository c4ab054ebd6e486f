//! When a workload's threads come to exist. The benchmarks create every
//! thread before any starts its loop (perf bench's main thread creates the
//! workers, which wait until all are created), so a private hash's growth
//! is over before the first futex op; a workload may instead create them
//! one every N ns while the run goes on, and the threads already running
//! then meet each resize (sim/kernel/resize.rs).

use super::WorkloadError;
use crate::machine::Ps;
use crate::task::{Counting, Done, Op, Program, TaskSpec};

/// A workload's `create_every_ns`: from 1 ns to 1 s, or absent.
pub fn check_create_every(ns: Option<u64>) -> Result<(), WorkloadError> {
    match ns {
        Some(ns) if ns == 0 || ns > 1_000_000_000 => Err(WorkloadError::at(
            "create_every_ns",
            format!(
                "create_every_ns = {ns}: give 1 ns to 1 s (1000000000 ns) between creations, or leave it out for every thread at the start"
            ),
        )),
        _ => Ok(()),
    }
}

/// A task created at `at`: its first op is its creation.
struct CreatedAt {
    at: Ps,
    created: bool,
    inner: Box<dyn Program>,
}

impl Program for CreatedAt {
    fn next_op(&mut self) -> Op {
        if !self.created {
            self.created = true;
            return Op::ThreadCreated;
        }
        self.inner.next_op()
    }

    // The creation's script returns nothing to the program: every op that
    // returns is the inner program's.
    fn op_returned(&mut self, done: Done) {
        self.inner.op_returned(done);
    }

    fn counting(&self) -> Counting {
        self.inner.counting()
    }

    fn in_kernel(&self) -> bool {
        self.inner.in_kernel()
    }

    fn created_at(&self) -> Ps {
        self.at
    }
}

/// Each process's threads created one every `every` ps in task order, its
/// first at time 0: the tasks as created, and each task's index among its
/// process's threads.
pub fn staggered(
    tasks: Vec<TaskSpec>,
    task_process: &[u32],
    every: Ps,
) -> (Vec<TaskSpec>, Vec<u64>) {
    let processes = task_process.iter().max().map_or(0, |&p| p as usize + 1);
    let mut created = vec![0u64; processes];
    let mut index_in_process = Vec::with_capacity(tasks.len());
    let tasks = tasks
        .into_iter()
        .zip(task_process)
        .map(|(t, &p)| {
            let index = created[p as usize];
            created[p as usize] += 1;
            index_in_process.push(index);
            TaskSpec {
                cpu: t.cpu,
                program: Box::new(CreatedAt {
                    at: index * every,
                    created: false,
                    inner: t.program,
                }),
            }
        })
        .collect();
    (tasks, index_in_process)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Computes;
    impl Program for Computes {
        fn next_op(&mut self) -> Op {
            Op::Compute(1000)
        }
    }

    /// Two processes' threads interleaved: each process's own count from
    /// 0, each thread created `every` after its process's previous one,
    /// its creation its first op.
    #[test]
    fn each_process_creates_its_threads_in_turn() {
        let tasks = (0..5)
            .map(|cpu| TaskSpec {
                cpu,
                program: Box::new(Computes),
            })
            .collect();
        let (mut tasks, index) = staggered(tasks, &[0, 1, 0, 0, 1], 500);
        assert_eq!(index, [0, 0, 1, 2, 1]);
        let at: Vec<Ps> = tasks.iter().map(|t| t.program.created_at()).collect();
        assert_eq!(at, [0, 0, 500, 1000, 500]);
        assert_eq!(tasks[3].program.next_op(), Op::ThreadCreated);
        assert_eq!(tasks[3].program.next_op(), Op::Compute(1000));
    }
}
