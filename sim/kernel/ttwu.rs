//! try_to_wake_up's memory accesses (kernel/sched/core.c, v6.6), as script
//! steps the engine runs in the waker's op like any other: the scheduler
//! (engine/sched.rs) chooses the target CPU and says where the wakee's
//! task_struct and the runqueues lie; this file says what the wake-up
//! touches, in the kernel's order.

use super::script::{LockRef, Step};
use crate::coherence::AccessKind;
use crate::memory::Mem;

/// The two lines of the wakee's task_struct that a wake-up touches.
#[derive(Clone, Copy, Debug)]
pub struct WakeeLines {
    /// `__state`, in the task_struct's first line.
    pub state: Mem,
    /// `pi_lock`, which try_to_wake_up holds throughout.
    pub pi_lock: Mem,
}

/// The steps of waking `wakee` onto the CPU whose runqueue lock is
/// `rq_lock`, after reading `placement_reads` (the runqueues the CPU's
/// choice looked at, `select_task_rq`): raw_spin_lock_irqsave of
/// `pi_lock`, the read of `__state`, the target runqueue's lock
/// (`ttwu_queue` -> `rq_lock`), the enqueue on the runqueue's line
/// (`ttwu_do_activate`), the store of TASK_RUNNING, the activation the
/// engine prices, and both unlocks.
pub fn try_to_wake_up(
    wakee: u32,
    lines: WakeeLines,
    placement_reads: impl IntoIterator<Item = Mem>,
    rq_lock: LockRef,
) -> impl Iterator<Item = Step> {
    let WakeeLines { state, pi_lock } = lines;
    [
        Step::access(pi_lock, AccessKind::Rmw),
        Step::access(state, AccessKind::Read),
    ]
    .into_iter()
    .chain(
        placement_reads
            .into_iter()
            .map(|runqueue| Step::access(runqueue, AccessKind::Read)),
    )
    .chain([
        Step::Lock(rq_lock),
        Step::access(rq_lock.word(), AccessKind::Write),
        Step::access(state, AccessKind::Write),
        Step::Activate(wakee),
        Step::Unlock(rq_lock),
        Step::access(pi_lock, AccessKind::Write),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(line: u32) -> Mem {
        Mem {
            addr: u64::from(line) * 64,
            line,
        }
    }

    #[test]
    fn the_wakee_is_activated_under_its_pi_lock_and_the_target_runqueue_lock() {
        let lines = WakeeLines {
            state: mem(1),
            pi_lock: mem(2),
        };
        let rq_lock = LockRef::new(7, mem(3));
        let steps: Vec<Step> = try_to_wake_up(5, lines, [mem(10), mem(11)], rq_lock).collect();
        assert_eq!(
            steps,
            [
                Step::access(mem(2), AccessKind::Rmw),
                Step::access(mem(1), AccessKind::Read),
                Step::access(mem(10), AccessKind::Read),
                Step::access(mem(11), AccessKind::Read),
                Step::Lock(rq_lock),
                Step::access(mem(3), AccessKind::Write),
                Step::access(mem(1), AccessKind::Write),
                Step::Activate(5),
                Step::Unlock(rq_lock),
                Step::access(mem(2), AccessKind::Write),
            ]
        );
    }
}
