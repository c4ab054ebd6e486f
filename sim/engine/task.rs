//! A task as the engine holds it, and its waits: why it is not running
//! its script (`Wait`), and how it makes a request that waited at its line
//! again once the line's turn grants it (`Redo`).

use super::sched::OnCpu;
use crate::kernel::script::{LockRef, Script};
use crate::kernel::spinlock::{After, LockWait, Next};
use crate::machine::Ps;
use crate::memory::LineId;
use crate::task::{AtomicOp, Counting, Program, TaskSpec, Until, UserWord};

/// Why a task is not running its script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wait {
    Running,
    Blocked,
    /// Spinning on a line: the next write to it wakes the task to re-read it.
    Spin(Spin),
    /// The re-read is in flight; at its completion the task acts on what
    /// the read returned when it was served: `turn` when that showed the
    /// lock free for it, or the word's awaited value.
    Check {
        spin: Spin,
        turn: bool,
    },
    /// An access of a lock's protocol is in flight; at its completion the
    /// task goes on as the protocol said.
    Lock {
        lock: LockRef,
        after: After,
    },
    /// A request waits at its line for the grant; then the task makes it
    /// again as its `LineWait::redo` says (kept apart: a lock protocol's
    /// access is larger than every other state).
    AtLine,
    /// The task waits for its CPU's stores waiting at their lines to be
    /// served (a fence, or a full store buffer); then it makes its step
    /// again as its `LineWait::redo` says.
    Drain,
}

/// How a task makes its waiting request again once it is granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Redo {
    /// The script's step (an access, a load) runs again.
    Step,
    /// The spinner's re-read: what it returns is the line as of its grant.
    Reread(Spin),
    /// The lock protocol's access, as the protocol asked for it.
    Follow { lock: LockRef, next: Next },
    /// The protocol's next move from this state, asked for at the grant.
    Move(LockWait),
}

/// A user-space atomic in flight: its word, its op, and whether nothing
/// waits for it (a relaxed RMW on a weakly ordered core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct UserAtomic {
    pub(super) word: UserWord,
    pub(super) op: AtomicOp,
    pub(super) posted: bool,
}

/// What a spinning task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Spin {
    /// A kernel spinlock, where its protocol has the task.
    Lock(LockWait),
    /// A user-space spin on a word's value.
    Word { word: UserWord, until: Until },
}

/// A task's state in the engine: its program and the script of its op in
/// flight, and where it stands with its waits. What every event of the
/// task reads comes first, in the task's first two host lines (the event
/// loop's look at the next event's task brings them in; the host's
/// adjacent-line prefetcher pairs them): where it stands with its CPU,
/// the grant it holds, its CPU, its script and step, its wait. The third
/// holds what each op's start and end read and write (its program, when
/// it started, what it returns); what rarer paths read follows.
#[repr(C, align(128))]
pub(super) struct Task {
    pub(super) on_cpu: OnCpu,
    /// The line whose turn granted the task's waiting request: the task's
    /// next request, if on that line, is served at once.
    pub(super) granted: Option<LineId>,
    pub(super) cpu: u32,
    /// The index of the script's next step.
    pub(super) pc: u32,
    pub(super) script: Script,
    pub(super) wait: Wait,
    pub(super) program: Box<dyn Program>,
    pub(super) measured: Measured,
    pub(super) op: OpInFlight,
    pub(super) line: LineWait,
}

// The hot fields stay within the first two host lines, and what an op's
// start and end touch within the third.
const _: () = assert!(std::mem::offset_of!(Task, wait) + std::mem::size_of::<Wait>() <= 128);
const _: () = assert!(std::mem::offset_of!(Task, op) + std::mem::size_of::<i64>() <= 192);

/// How the task makes a request that waited again, and what its spin saw.
pub(super) struct LineWait {
    /// How it makes its request again when it waits at a line.
    pub(super) redo: Redo,
    /// The watched line's write count when the spinner's last read was
    /// served: a write after it makes what the read returned stale.
    pub(super) read_writes: u32,
}

/// What the op in flight carries between its steps; what every op writes
/// first.
#[derive(Default)]
#[repr(C)]
pub(super) struct OpInFlight {
    /// What it returns.
    pub(super) ret: i64,
    /// Its user atomic (`Step::Atomic`).
    pub(super) atomic: Option<UserAtomic>,
    /// A wake came while the task was still on its way to sleep.
    pub(super) woken_early: bool,
}

/// When what the metrics count began; what every op reads first.
#[repr(C)]
pub(super) struct Measured {
    pub(super) op_start: Ps,
    pub(super) counting: Counting,
    pub(super) iteration_start: Ps,
    pub(super) lock_asked: Ps,
    pub(super) lock_taken: Ps,
}

/// Steps a task's script has room for from the start: more than most ops'
/// scripts take, so the first ops need not grow it.
const SCRIPT_CAPACITY: usize = 32;

impl Task {
    pub(super) fn new(spec: TaskSpec, on_cpu: OnCpu) -> Task {
        Task {
            cpu: spec.cpu,
            measured: Measured {
                counting: spec.program.counting(),
                op_start: 0,
                iteration_start: 0,
                lock_asked: 0,
                lock_taken: 0,
            },
            program: spec.program,
            script: Vec::with_capacity(SCRIPT_CAPACITY),
            pc: 0,
            wait: Wait::Running,
            granted: None,
            line: LineWait {
                redo: Redo::Step,
                read_writes: 0,
            },
            op: OpInFlight::default(),
            on_cpu,
        }
    }

    /// The task's request waits at its line: it makes it again as `redo`
    /// says once granted (a step runs again).
    pub(super) fn park(&mut self, redo: Redo) {
        self.wait = Wait::AtLine;
        if redo == Redo::Step {
            self.pc -= 1;
        }
        self.line.redo = redo;
    }

    /// Whether the task's request on `line` is the one its line's turn
    /// granted. A grant lapses with the task's next request, on its line
    /// or not.
    #[inline]
    pub(super) fn takes_grant(&mut self, line: LineId) -> bool {
        self.granted.is_some() && self.granted.take() == Some(line)
    }
}
