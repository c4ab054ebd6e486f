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
    /// The task_struct's first line: `thread_info.flags` (x86 and the
    /// other THREAD_INFO_IN_TASK architectures put thread_info first),
    /// `__state`, and the `wake_entry` node a queued wake-up links.
    pub state: Mem,
    /// `pi_lock`, which try_to_wake_up holds throughout.
    pub pi_lock: Mem,
}

/// How the wake-up reaches the target CPU's runqueue (ttwu_queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunqueueAccess {
    /// The waker takes the target runqueue's lock (`rq_lock`), enqueues the
    /// task (`ttwu_do_activate`), and stores TASK_RUNNING itself. On
    /// another CPU, `wakeup_preempt` -> `resched_curr` first reads the
    /// flags of the task the target runs (its idle task when idle) and sets
    /// TIF_NEED_RESCHED there with `fetch_or`, a cmpxchg loop: `resched`.
    Lock {
        rq_lock: LockRef,
        resched: Option<Mem>,
    },
    /// `ttwu_queue_wakelist`: the waker sets the target runqueue's
    /// `ttwu_pending`, links the task onto the target CPU's
    /// `call_single_queue` (`__smp_call_single_queue`'s llist_add: it reads
    /// the head, points the wakee's `wake_entry` at it, and swings the head
    /// with a cmpxchg), and then `send_call_function_single_ipi` calls
    /// `set_nr_if_polling` on the target's idle task: it reads the flags,
    /// and where the idle task polls (`polling`) sets TIF_NEED_RESCHED with
    /// a cmpxchg and sends no IPI. The target enqueues the task under its
    /// own lock (`target_side`).
    WakeList {
        runqueue: Mem,
        wake_list: Mem,
        idle_flags: Mem,
        polling: bool,
    },
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
///
/// A queued wake-up is taken to find the target's list empty, so that
/// llist_add returns true and the waker goes on to set_nr_if_polling: the
/// model runs one wake-up at a time per target.
pub fn try_to_wake_up<G: IntoIterator<Item = Mem>>(
    wakee: u32,
    lines: WakeeLines,
    placement_reads: impl IntoIterator<Item = G>,
    queue: RunqueueAccess,
) -> impl Iterator<Item = Step> {
    let WakeeLines { state, pi_lock } = lines;
    // The most a wake-up takes without placement reads: one allocation.
    let mut steps = Vec::with_capacity(10);
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
        RunqueueAccess::Lock { rq_lock, resched } => {
            steps.extend([
                Step::Lock(rq_lock),
                Step::access(rq_lock.word(), AccessKind::Write, Symbol::TtwuDoActivate),
            ]);
            if let Some(flags) = resched {
                steps.extend([
                    Step::access(flags, AccessKind::Read, Symbol::ReschedCurr),
                    Step::access(flags, AccessKind::Rmw, Symbol::ReschedCurr),
                ]);
            }
            steps.extend([
                Step::access(state, AccessKind::Write, Symbol::TtwuDoActivate),
                Step::Activate(wakee),
                Step::Unlock(rq_lock),
            ]);
        }
        RunqueueAccess::WakeList {
            runqueue,
            wake_list,
            idle_flags,
            polling,
        } => {
            let queue = Symbol::TtwuQueueWakelist;
            steps.extend([
                Step::access(runqueue, AccessKind::Write, queue),
                Step::access(wake_list, AccessKind::Read, queue),
                Step::access(state, AccessKind::Write, queue),
                Step::access(wake_list, AccessKind::Rmw, queue),
                Step::access(idle_flags, AccessKind::Read, Symbol::SetNrIfPolling),
            ]);
            if polling {
                steps.push(Step::access(
                    idle_flags,
                    AccessKind::Rmw,
                    Symbol::SetNrIfPolling,
                ));
            }
            steps.push(Step::Activate(wakee));
        }
    }
    steps.push(Step::access(pi_lock, AccessKind::Write, ttwu));
    steps.into_iter()
}

/// What the target CPU does for a wake-up before the wakee runs, as the
/// wakee's first steps there (kernel/sched/idle.c do_idle, kernel/smp.c,
/// kernel/sched/core.c, v6.6):
///
/// - leaving a polling idle loop, `__current_clr_polling` clears
///   TIF_POLLING_NRFLAG in the idle task's flags with a locked bit clear
///   (`idle_flags`, where the CPU polled);
/// - for a queued wake-up (`queued`: the wake list's lock and line),
///   `flush_smp_call_function_queue` takes the CPU's `call_single_queue`
///   whole with llist_del_all (an xchg), and `sched_ttwu_pending` takes the
///   runqueue's lock, enqueues the task, stores TASK_RUNNING into its
///   `__state`, clears `ttwu_pending` and unlocks.
///
/// From an IPI (an idle CPU that does not poll, or a busy one) the same
/// work runs in the IPI's handler; the model runs it when the wakee is
/// switched in, where a busy target's current task is not delayed by it.
pub fn target_side(
    wakee_state: Mem,
    idle_flags: Option<Mem>,
    queued: Option<(Mem, LockRef)>,
) -> impl Iterator<Item = Step> {
    let clear_polling =
        idle_flags.map(|flags| Step::access(flags, AccessKind::Rmw, Symbol::DoIdle));
    let pending = queued.into_iter().flat_map(move |(wake_list, rq_lock)| {
        let pending = Symbol::SchedTtwuPending;
        [
            Step::access(
                wake_list,
                AccessKind::Rmw,
                Symbol::FlushSmpCallFunctionQueue,
            ),
            Step::Lock(rq_lock),
            Step::access(rq_lock.word(), AccessKind::Write, pending),
            Step::access(wakee_state, AccessKind::Write, pending),
            Step::Unlock(rq_lock),
        ]
    });
    clear_polling.into_iter().chain(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTWU: Symbol = Symbol::TryToWakeUp;
    const PLACE: Symbol = Symbol::SelectTaskRqFair;
    const ACTIVATE: Symbol = Symbol::TtwuDoActivate;
    const QUEUE: Symbol = Symbol::TtwuQueueWakelist;

    fn mem(line: u32) -> Mem {
        Mem {
            addr: u64::from(line) * 64,
            line,
        }
    }

    const LINES: WakeeLines = WakeeLines {
        state: Mem { addr: 64, line: 1 },
        pi_lock: Mem { addr: 128, line: 2 },
    };

    #[test]
    fn the_wakee_is_activated_under_its_locks_after_its_placement_reads_overlap_group_by_group() {
        let rq_lock = LockRef::new(7, mem(3));
        let steps: Vec<Step> = try_to_wake_up(
            5,
            LINES,
            [vec![mem(10), mem(11)], vec![mem(12), mem(13), mem(14)]],
            RunqueueAccess::Lock {
                rq_lock,
                resched: Some(mem(4)),
            },
        )
        .collect();
        // wake_affine's two runqueues load together, then the scan's
        // three from the target they chose, then the target's lock; under
        // it the enqueue, resched_curr's read and fetch_or of the flags of
        // the task the target runs, and TASK_RUNNING.
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
                Step::access(mem(4), AccessKind::Read, Symbol::ReschedCurr),
                Step::access(mem(4), AccessKind::Rmw, Symbol::ReschedCurr),
                Step::access(mem(1), AccessKind::Write, ACTIVATE),
                Step::Activate(5),
                Step::Unlock(rq_lock),
                Step::access(mem(2), AccessKind::Write, TTWU),
            ]
        );
    }

    /// ttwu_queue_wakelist: the waker neither locks the target's runqueue
    /// nor stores TASK_RUNNING; it links the wakee onto the target's list
    /// with its own cmpxchg, and set_nr_if_polling sets the polling idle
    /// task's need-resched flag with another.
    #[test]
    fn a_queued_wake_up_links_the_wakee_with_a_cmpxchg_and_sets_a_polling_cpus_flag_with_another() {
        let steps: Vec<Step> = try_to_wake_up(
            5,
            LINES,
            [Vec::new(), Vec::new()],
            RunqueueAccess::WakeList {
                runqueue: mem(3),
                wake_list: mem(6),
                idle_flags: mem(8),
                polling: true,
            },
        )
        .collect();
        assert_eq!(
            steps,
            [
                Step::access(mem(2), AccessKind::Rmw, TTWU),
                Step::access(mem(1), AccessKind::Read, TTWU),
                Step::access(mem(3), AccessKind::Write, QUEUE),
                Step::access(mem(6), AccessKind::Read, QUEUE),
                Step::access(mem(1), AccessKind::Write, QUEUE),
                Step::access(mem(6), AccessKind::Rmw, QUEUE),
                Step::access(mem(8), AccessKind::Read, Symbol::SetNrIfPolling),
                Step::access(mem(8), AccessKind::Rmw, Symbol::SetNrIfPolling),
                Step::Activate(5),
                Step::access(mem(2), AccessKind::Write, TTWU),
            ]
        );
    }

    /// set_nr_if_polling returns at its read where the idle task does not
    /// poll: no cmpxchg, and the engine sends the IPI.
    #[test]
    fn a_queued_wake_up_onto_a_cpu_that_does_not_poll_only_reads_its_idle_tasks_flags() {
        let steps: Vec<Step> = try_to_wake_up(
            5,
            LINES,
            [Vec::<Mem>::new()],
            RunqueueAccess::WakeList {
                runqueue: mem(3),
                wake_list: mem(6),
                idle_flags: mem(8),
                polling: false,
            },
        )
        .collect();
        let on_flags: Vec<&Step> = steps
            .iter()
            .filter(|s| matches!(s, Step::Access(a) if a.mem() == mem(8)))
            .collect();
        assert_eq!(
            on_flags,
            [&Step::access(
                mem(8),
                AccessKind::Read,
                Symbol::SetNrIfPolling
            )]
        );
    }

    #[test]
    fn the_target_clears_its_polling_flag_then_takes_its_wake_list_whole_and_enqueues_under_its_own_lock(
    ) {
        let rq_lock = LockRef::new(7, mem(3));
        let steps: Vec<Step> = target_side(mem(1), Some(mem(8)), Some((mem(6), rq_lock))).collect();
        assert_eq!(
            steps,
            [
                Step::access(mem(8), AccessKind::Rmw, Symbol::DoIdle),
                Step::access(mem(6), AccessKind::Rmw, Symbol::FlushSmpCallFunctionQueue),
                Step::Lock(rq_lock),
                Step::access(mem(3), AccessKind::Write, Symbol::SchedTtwuPending),
                Step::access(mem(1), AccessKind::Write, Symbol::SchedTtwuPending),
                Step::Unlock(rq_lock),
            ]
        );
        // A direct wake-up onto a CPU that halts leaves the target nothing.
        assert_eq!(target_side(mem(1), None, None).count(), 0);
    }
}
