//! What a simulated task is, as a workload writes one: a program that hands
//! the engine one operation at a time and learns how each ended, and every
//! type those operations are made of. A workload needs nothing else to
//! describe what its tasks do; the kernel and the engine take it from here.

pub mod batch_means;
mod user_word;

pub use crate::coherence::AccessKind;
pub use crate::kernel::core::FutexOp;
pub use crate::kernel::key::KeyKind;
pub use crate::kernel::script::LockRef;
pub use crate::memory::Mem;
pub use batch_means::BatchMeans;
pub use user_word::{AtomicOp, Until, UserWord};

use crate::machine::Ps;

/// One operation of a task's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Futex(FutexOp),
    /// User-space work that touches no shared line.
    Compute(Ps),
    /// A timed sleep (usleep, nanosleep): the task leaves its CPU and a
    /// timer on that CPU wakes it.
    Sleep(Ps),
    /// A user-space load, store or atomic.
    Access(Mem, AccessKind),
    /// An atomic on a word whose value matters (the kernel sees it too: a
    /// futex word, a pthread mutex); it returns the word's old value.
    Atomic(UserWord, AtomicOp),
    /// A relaxed atomic RMW whose result the program does not use (C++'s
    /// `fetch_add(1, std::memory_order_relaxed)` as a statement): a weakly
    /// ordered core need not wait for it, so it retires into the store
    /// buffer and is performed when its line serves it. Under total store
    /// order every locked RMW is a full barrier, and this is `Atomic`.
    RelaxedAtomic(UserWord, AtomicOp),
    /// Spin reading a word (`while (...) cpu_relax();`) until its value satisfies the condition.
    SpinUntil(UserWord, Until),
    /// A kernel wait_event() on the wait queue a word stands for: unless
    /// the word's value already satisfies the condition, the task leaves
    /// its CPU until a `WakeUp` of the word; it returns when woken.
    WaitEvent(UserWord, Until),
    /// wake_up() of the word's wait queue: try_to_wake_up of every task
    /// asleep in `WaitEvent` on it.
    WakeUp(Mem),
    /// The same for an exclusive waiter: only the first asleep is woken
    /// (wake_up with nr_exclusive 1, as unlock_page wakes a lock_page waiter).
    WakeUpOne(Mem),
    /// spin_lock of one of the workload's own kernel locks. Its id counts
    /// from 0 among the workload's locks; the engine places them after the
    /// futex tables' bucket locks, and prices them the same way.
    SpinLock(LockRef),
    SpinUnlock(LockRef),
    /// One pass of the benchmark's loop is complete: counted as one op when
    /// the program counts iterations, its latency the time since the last one.
    Iteration,
    /// The program reads the clock, as a benchmark brackets what it times
    /// with gettimeofday; the engine notes the time for the workload's figures.
    Clock,
    /// The task exits: it issues nothing more and the engine notes when.
    Exit,
    /// The task has just been created: the kernel's part of its creation
    /// that futexsim models (the private hash's growth) runs now.
    ThreadCreated,
}

/// What one counted operation of a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// Every op (perf bench futex: each futex call).
    EachOp,
    /// Each `Op::Iteration` (will-it-scale: one pass of the test loop).
    Iterations,
}

/// How an operation ended, as its program learns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Simulated time at the end of the operation.
    pub now: Ps,
    /// A syscall's return value, a user atomic's old value, 0 otherwise.
    pub ret: i64,
    /// Whether the operation ended inside the counted window.
    pub counted: bool,
}

/// What a task does, one operation at a time.
pub trait Program: Send {
    fn next_op(&mut self) -> Op;

    /// The operation `next_op` gave last has ended. Programs that branch on
    /// results or measure time themselves look here. `Op::Iteration`,
    /// `Op::Clock` and `Op::Exit` take no time and report nothing.
    fn op_returned(&mut self, _done: Done) {}

    fn counting(&self) -> Counting {
        Counting::EachOp
    }

    /// Whether the task is inside the kernel between its ops (a workload
    /// that writes a kernel path as ops, such as an exit): the scheduler
    /// preempts a task only where it returns to user space.
    fn in_kernel(&self) -> bool {
        false
    }

    /// When the task comes to exist: 0 for every task of a benchmark that
    /// creates its threads before they start.
    fn created_at(&self) -> Ps {
        0
    }

    /// Which CPUs the task may run on, as its benchmark sets its affinity:
    /// the scheduler places a task that is not pinned when the profile's
    /// `scheduler.placement` asks it to (sim/engine/sched.rs).
    fn affinity(&self) -> Affinity {
        Affinity::Pinned
    }

    /// Bytes the program holds on the heap as laid out, before it runs (a
    /// path written out as ops at once): what a run's memory estimate
    /// counts for it (crate::footprint).
    fn held_bytes(&self) -> u64 {
        0
    }
}

/// A task's CPU affinity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Affinity {
    /// Bound to the CPU its workload gives it (sched_setaffinity to one CPU).
    #[default]
    Pinned,
    /// Any CPU from this one up (0: no affinity set).
    CpusFrom(u32),
}

/// A task: the CPU it is pinned to and what it runs.
pub struct TaskSpec {
    pub cpu: u32,
    pub program: Box<dyn Program>,
}

/// How long to run and what to count.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RunWindow {
    /// Simulated time before counting starts.
    pub warmup: Ps,
    /// Simulated time counted after the warm-up; with `stop`, the most.
    pub duration: Ps,
    /// Ends the run before `duration` once its throughput is known well
    /// enough. Absent from a scenario's identity when not asked for, so a
    /// run of a fixed length keeps its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<BatchMeans>,
}

impl RunWindow {
    /// When counting stops.
    pub fn end(&self) -> Ps {
        self.warmup + self.duration
    }

    /// Whether something that happens at `t` is counted.
    #[inline]
    pub fn counts(&self, t: Ps) -> bool {
        t >= self.warmup && t < self.end()
    }
}

/// When each task read the clock and exited: what workloads that time
/// something (time_exit, a solver run to completion) compute their figures from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub clock_reads: Vec<Vec<Ps>>,
    pub exits: Vec<Option<Ps>>,
}

impl Timeline {
    /// When the last task exited, if every task did.
    pub fn all_exited(&self) -> Option<Ps> {
        self.exits
            .iter()
            .try_fold(0, |last: Ps, e| e.map(|t| last.max(t)))
    }
}
