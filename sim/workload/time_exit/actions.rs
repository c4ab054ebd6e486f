//! The queue of actions a time_exit task runs, each in the stage of the
//! exit path (or of the parent's wait()) the record times it in: plain
//! ops, and the shared primitives (the rwlock, the page lock) run to
//! their ends, as task_loop.rs runs the pthread ones.

use super::{Context, PageField};
use crate::machine::Ps;
use crate::task::{Done, Op, UserWord};
use crate::workload::primitives::page_lock::{LockPage, PageLock, UnlockPage};
use crate::workload::primitives::rwlock::{RwLock, RwUnlock, Side};
use crate::workload::primitives::Primitive;
use crate::task::AtomicOp;
use std::collections::VecDeque;
use std::sync::Arc;

/// A step of the exit path, or of the parent's wait(), as the record
/// times it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// The child's first touch of the shared page, before it is ready.
    Fault,
    BeforeRelease,
    /// exit()'s copy-on-write faults on the parent's pages, before do_exit.
    ExitFaults,
    ExitMm,
    FreePgtables,
    RemoveVma,
    ExitFiles,
    ExitFs,
    ExitNotify,
    Schedule,
    DoWait,
    Asleep,
    ReleaseTask,
}

/// The stages the record gives, and their names: the children's first.
pub(super) const REPORTED: [(Stage, &str); 12] = [
    (Stage::Fault, "fault on the shared page (lock_page), before the release"),
    (Stage::ExitFaults, "exit(): copy-on-write faults (lock_page)"),
    (Stage::ExitMm, "exit_mm (unmap_vmas)"),
    (Stage::FreePgtables, "free_pgtables"),
    (Stage::RemoveVma, "remove_vma"),
    (Stage::ExitFiles, "exit_files"),
    (Stage::ExitFs, "exit_fs and do_exit's other private work"),
    (Stage::ExitNotify, "exit_notify"),
    (Stage::Schedule, "last schedule"),
    (Stage::DoWait, "parent: do_wait"),
    (Stage::Asleep, "parent: asleep in wait()"),
    (Stage::ReleaseTask, "parent: release_task"),
];
pub(super) const STAGES: usize = Stage::ReleaseTask as usize + 1;


/// One thing a task does.
#[derive(Clone, Copy, Debug)]
pub(super) enum Action {
    /// A plain op: an atomic's old value goes to the task's program.
    Op(Op),
    RwLock(UserWord, Side),
    RwUnlock(UserWord, Side),
    LockPage(PageLock),
    UnlockPage(PageLock),
    /// An atomic dec of a struct page field on each of the parent's pages
    /// from `at` to `end`, one op at a time, so a child's queue does not
    /// hold one action per page.
    PageDrops { field: PageField, at: u32, end: u32 },
}

/// A task's actions in order, each in its stage; a primitive runs as many
/// ops as it takes.
pub(super) struct Actions {
    pub(super) queue: VecDeque<(Stage, Action)>,
    /// The primitive in flight, until it has no more ops.
    running: Option<Box<dyn Primitive + Send>>,
    /// Whether the op in flight is an atomic: a plain one's old value goes
    /// to the program, a primitive's to the primitive.
    atomic_in_flight: bool,
    /// The old value the primitive's last atomic returned.
    last: Option<u32>,
    context: Arc<Context>,
    /// The stage of the op in flight, and when the op before it ended:
    /// the time until each op ends goes to the op's stage.
    stage: Stage,
    since: Ps,
}

impl Actions {
    pub(super) fn new(context: Arc<Context>) -> Actions {
        Actions {
            queue: VecDeque::new(),
            running: None,
            atomic_in_flight: false,
            last: None,
            context,
            stage: Stage::BeforeRelease,
            since: 0,
        }
    }

    /// The queue's room: at tens of thousands of children, most of a run's memory.
    pub(super) fn held_bytes(&self) -> u64 {
        (self.queue.capacity() * size_of::<(Stage, Action)>()) as u64
    }

    pub(super) fn push(&mut self, stage: Stage, ops: impl IntoIterator<Item = Op>) {
        self.queue
            .extend(ops.into_iter().map(|op| (stage, Action::Op(op))));
    }

    pub(super) fn push_action(&mut self, stage: Stage, action: Action) {
        self.queue.push_back((stage, action));
    }

    pub(super) fn next(&mut self) -> Option<Op> {
        loop {
            if let Some(primitive) = &mut self.running {
                if let Some(op) = primitive.next(self.last.take()) {
                    self.atomic_in_flight = matches!(op, Op::Atomic(..));
                    return Some(op);
                }
                self.running = None;
            }
            let (stage, action) = self.queue.pop_front()?;
            self.stage = stage;
            self.atomic_in_flight = false;
            let waiters = || self.context.waiters.clone();
            let primitive: Box<dyn Primitive + Send> = match action {
                Action::Op(op) => {
                    self.atomic_in_flight = matches!(op, Op::Atomic(..));
                    return Some(op);
                }
                Action::PageDrops { field, at, end } => {
                    if at + 1 < end {
                        let rest = Action::PageDrops {
                            field,
                            at: at + 1,
                            end,
                        };
                        self.queue.push_front((stage, rest));
                    }
                    let page = &self.context.anon[at as usize];
                    let word = match field {
                        PageField::MapCount => page.mapcount,
                        PageField::Count => page.count,
                    };
                    return Some(Op::Atomic(word, AtomicOp::Sub(1)));
                }
                Action::RwLock(word, side) => Box::new(RwLock::new(word, side)),
                Action::RwUnlock(word, side) => Box::new(RwUnlock::new(word, side)),
                Action::LockPage(page) => Box::new(LockPage::new(page, waiters())),
                Action::UnlockPage(page) => Box::new(UnlockPage::new(page, waiters())),
            };
            self.running = Some(primitive);
        }
    }

    /// Past the release every step is the kernel's: exit, or wait(); so
    /// is the fault before it, and exit()'s faults.
    pub(super) fn in_kernel(&self) -> bool {
        self.stage != Stage::BeforeRelease
    }

    /// The op ended: the old value of a plain atomic, for its program.
    pub(super) fn returned(&mut self, done: Done) -> Option<u32> {
        self.context.spent(self.stage, done.now - self.since);
        self.since = done.now;
        let old = self.atomic_in_flight.then_some(done.ret as u32);
        match &mut self.running {
            Some(primitive) => {
                primitive.returned(done.ret as u32);
                self.last = old;
                None
            }
            None => old,
        }
    }
}
