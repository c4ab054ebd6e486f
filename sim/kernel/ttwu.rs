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

/// How the wake-up reaches the target CPU's runqueue (ttwu_queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunqueueAccess {
    /// The waker takes the target runqueue's lock (`rq_lock`), enqueues the
    /// task (`ttwu_do_activate`) and stores TASK_RUNNING itself.
    Lock(LockRef),
    /// `ttwu_queue_wakelist`: the waker sets the target's `ttwu_pending`
    /// and adds the task to its wake list (`__smp_call_single_queue`'s
    /// llist_add, a cmpxchg), both taken as one RMW of the target
    /// runqueue's line; the target enqueues the task under its own lock
    /// (`sched_ttwu_pending`).
    WakeList(Mem),
}

/// The steps of waking `wakee` onto the target CPU reached by `queue`,
/// after reading `placement_reads` (the runqueues the CPU's choice looked
/// at, `select_task_rq`): raw_spin_lock_irqsave of `pi_lock`, the read of
/// `__state`, the runqueue's way in, the activation the engine prices
/// (with the IPI, if one is due), and the release of `pi_lock`.
pub fn try_to_wake_up(
    wakee: u32,
    lines: WakeeLines,
    placement_reads: impl IntoIterator<Item = Mem>,
    queue: RunqueueAccess,
) -> impl Iterator<Item = Step> {
    let WakeeLines { state, pi_lock } = lines;
    let enqueue = match queue {
        RunqueueAccess::Lock(rq_lock) => vec![
            Step::Lock(rq_lock),
            Step::access(rq_lock.word(), AccessKind::Write),
            Step::access(state, AccessKind::Write),
            Step::Activate(wakee),
            Step::Unlock(rq_lock),
        ],
        RunqueueAccess::WakeList(runqueue) => vec![
            Step::access(runqueue, AccessKind::Rmw),
            Step::Activate(wakee),
        ],
    };
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
    .chain(enqueue)
    .chain([Step::access(pi_lock, AccessKind::Write)])
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
        let steps: Vec<Step> =
            try_to_wake_up(5, lines, [mem(10), mem(11)], RunqueueAccess::Lock(rq_lock)).collect();
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

    /// ttwu_queue_wakelist: the waker neither locks the target's runqueue
    /// nor writes the wakee's state; it queues the wake-up on the target.
    #[test]
    fn a_queued_wake_up_leaves_the_lock_and_the_state_to_the_target() {
        let lines = WakeeLines {
            state: mem(1),
            pi_lock: mem(2),
        };
        let steps: Vec<Step> =
            try_to_wake_up(5, lines, [], RunqueueAccess::WakeList(mem(3))).collect();
        assert_eq!(
            steps,
            [
                Step::access(mem(2), AccessKind::Rmw),
                Step::access(mem(1), AccessKind::Read),
                Step::access(mem(3), AccessKind::Rmw),
                Step::Activate(5),
                Step::access(mem(2), AccessKind::Write),
            ]
        );
    }
}
