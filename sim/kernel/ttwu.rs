//! try_to_wake_up's memory accesses (kernel/sched/core.c, v6.6), as script
//! steps the engine runs in the waker's op like any other: the scheduler
//! (engine/sched.rs) chooses the target CPU and says where the wakee's
//! task_struct and the runqueues lie; this file says what the wake-up
//! touches, in the kernel's order.

use super::script::{LockRef, Step};
use crate::coherence::AccessKind;
use crate::memory::Mem;
use crate::symbol::Symbol;

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
/// at, `select_task_rq`, in groups): raw_spin_lock_irqsave of `pi_lock`,
/// the read of `__state`, the runqueue's way in, the activation the engine
/// prices (with the IPI, if one is due), and the release of `pi_lock`.
///
/// The runqueue reads of one group are independent loads: each one's
/// address comes from a CPU number, not from what another load returns, and
/// the branches between them (is this CPU idle? is it lighter?) are
/// predicted, so a core issues them together, up to its outstanding misses.
/// A group starts once the one before it is in: select_idle_sibling scans
/// from the target wake_affine's values chose. The first group waits for
/// `__state` (on a weakly ordered core, `on_cpu`'s load-acquire after it
/// orders them; and the wakee's `wake_cpu`, beside it, names the previous
/// CPU), and the way into the target runqueue waits for the last.
pub fn try_to_wake_up<G: IntoIterator<Item = Mem>>(
    wakee: u32,
    lines: WakeeLines,
    placement_reads: impl IntoIterator<Item = G>,
    queue: RunqueueAccess,
) -> impl Iterator<Item = Step> {
    let WakeeLines { state, pi_lock } = lines;
    // The most a wake-up takes without placement reads: one allocation.
    let mut steps = Vec::with_capacity(8);
    let ttwu = Symbol::TryToWakeUp;
    steps.extend([
        Step::access(pi_lock, AccessKind::Rmw, ttwu),
        Step::access(state, AccessKind::Read, ttwu),
    ]);
    for group in placement_reads {
        let before = steps.len();
        steps.extend(
            group
                .into_iter()
                .map(|m| Step::load(m, Symbol::SelectTaskRqFair)),
        );
        if steps.len() > before {
            steps.push(Step::Join);
        }
    }
    match queue {
        RunqueueAccess::Lock(rq_lock) => steps.extend([
            Step::Lock(rq_lock),
            Step::access(rq_lock.word(), AccessKind::Write, Symbol::TtwuDoActivate),
            Step::access(state, AccessKind::Write, Symbol::TtwuDoActivate),
            Step::Activate(wakee),
            Step::Unlock(rq_lock),
        ]),
        RunqueueAccess::WakeList(runqueue) => steps.extend([
            Step::access(runqueue, AccessKind::Rmw, Symbol::TtwuQueueWakelist),
            Step::Activate(wakee),
        ]),
    }
    steps.push(Step::access(pi_lock, AccessKind::Write, ttwu));
    steps.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTWU: Symbol = Symbol::TryToWakeUp;
    const PLACE: Symbol = Symbol::SelectTaskRqFair;
    const ACTIVATE: Symbol = Symbol::TtwuDoActivate;

    fn mem(line: u32) -> Mem {
        Mem {
            addr: u64::from(line) * 64,
            line,
        }
    }

    #[test]
    fn the_wakee_is_activated_under_its_locks_after_its_placement_reads_overlap_group_by_group() {
        let lines = WakeeLines {
            state: mem(1),
            pi_lock: mem(2),
        };
        let rq_lock = LockRef::new(7, mem(3));
        let steps: Vec<Step> = try_to_wake_up(
            5,
            lines,
            [vec![mem(10), mem(11)], vec![mem(12), mem(13), mem(14)]],
            RunqueueAccess::Lock(rq_lock),
        )
        .collect();
        // wake_affine's two runqueues load together, then the scan's
        // three from the target they chose, then the target's lock.
        assert_eq!(
            steps,
            [
                Step::access(mem(2), AccessKind::Rmw, TTWU),
                Step::access(mem(1), AccessKind::Read, TTWU),
                Step::load(mem(10), PLACE),
                Step::load(mem(11), PLACE),
                Step::Join,
                Step::load(mem(12), PLACE),
                Step::load(mem(13), PLACE),
                Step::load(mem(14), PLACE),
                Step::Join,
                Step::Lock(rq_lock),
                Step::access(mem(3), AccessKind::Write, ACTIVATE),
                Step::access(mem(1), AccessKind::Write, ACTIVATE),
                Step::Activate(5),
                Step::Unlock(rq_lock),
                Step::access(mem(2), AccessKind::Write, TTWU),
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
        let steps: Vec<Step> = try_to_wake_up(
            5,
            lines,
            [Vec::new(), Vec::new()],
            RunqueueAccess::WakeList(mem(3)),
        )
        .collect();
        assert_eq!(
            steps,
            [
                Step::access(mem(2), AccessKind::Rmw, TTWU),
                Step::access(mem(1), AccessKind::Read, TTWU),
                Step::access(mem(3), AccessKind::Rmw, Symbol::TtwuQueueWakelist),
                Step::Activate(5),
                Step::access(mem(2), AccessKind::Write, TTWU),
            ]
        );
    }
}
