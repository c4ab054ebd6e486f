//! The time_exit parent (the table in mod.rs): it waits for every child
//! to be ready, releases them, and calls wait() until none is left.

use super::actions::{Action, Actions, Stage};
use super::{Context, Shared, EXIT_DEAD, EXIT_ZOMBIE, REAP_NS};
use crate::task::{Affinity, AtomicOp, Done, Op, Program, Until};
use crate::workload::primitives::rwlock::Side;
use std::sync::Arc;

/// The parent: wait for every child to be ready, release them, then
/// wait() until none is left, each wait() walking the remaining children
/// in fork order under `tasklist_lock` for the first zombie.
pub(super) struct Parent {
    shared: Shared,
    children: u32,
    /// Children not yet reaped, in fork order.
    alive: Vec<usize>,
    state: ParentState,
    actions: Actions,
    /// The old value the last plain atomic returned, until a step reads it.
    last: Option<u32>,
    syscall_ps: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ParentState {
    Release,
    /// wait(): read how many children have notified, then walk.
    WaitStart,
    Walk {
        notified: u32,
        at: usize,
    },
    Reaped,
    Done,
}

impl Program for Parent {
    fn next_op(&mut self) -> Op {
        self.choose_op()
    }

    /// The test does not pin the parent.
    fn affinity(&self) -> Affinity {
        Affinity::CpusFrom(0)
    }

    fn op_returned(&mut self, done: Done) {
        if let Some(old) = self.actions.returned(done) {
            self.last = Some(old);
        }
    }

    fn in_kernel(&self) -> bool {
        self.actions.in_kernel()
    }

    fn held_bytes(&self) -> u64 {
        self.actions.held_bytes() + (self.alive.capacity() * size_of::<usize>()) as u64
    }
}

impl Parent {
    pub(super) fn new(shared: Shared, children: u32, syscall_ps: u64, context: Arc<Context>) -> Parent {
        Parent {
            shared,
            children,
            alive: (0..children as usize).collect(),
            state: ParentState::Release,
            actions: Actions::new(context),
            last: None,
            syscall_ps,
        }
    }

    fn choose_op(&mut self) -> Op {
        loop {
            if let Some(op) = self.actions.next() {
                return op;
            }
            let s = &self.shared;
            let last = self.last.take();
            match self.state {
                ParentState::Release => {
                    self.actions.push(
                        Stage::BeforeRelease,
                        [
                            Op::SpinUntil(s.ready, Until::Equals(self.children)),
                            Op::Clock,
                            Op::Atomic(s.quit, AtomicOp::Store(1)),
                        ],
                    );
                    self.state = ParentState::WaitStart;
                }
                ParentState::WaitStart if self.alive.is_empty() => {
                    self.actions.push(Stage::DoWait, [Op::Clock, Op::Exit]);
                    self.state = ParentState::Done;
                }
                ParentState::WaitStart => {
                    self.actions.push(
                        Stage::DoWait,
                        [
                            Op::Compute(self.syscall_ps / 2),
                            Op::Atomic(s.notified, AtomicOp::Load),
                        ],
                    );
                    self.actions
                        .push_action(Stage::DoWait, Action::RwLock(s.tasklist_lock, Side::Read));
                    self.state = ParentState::Walk {
                        notified: u32::MAX,
                        at: 0,
                    };
                }
                ParentState::Walk { notified, at } => {
                    // The first result is the notify count; later ones are exit states.
                    let notified = if notified == u32::MAX {
                        last.unwrap_or(0)
                    } else {
                        if last == Some(EXIT_ZOMBIE) {
                            let child = self.alive.remove(at - 1);
                            self.reap(child);
                            continue;
                        }
                        notified
                    };
                    if at < self.alive.len() {
                        let child = self.alive[at];
                        self.actions.push(
                            Stage::DoWait,
                            [Op::Atomic(s.exit_state[child], AtomicOp::Load)],
                        );
                        self.state = ParentState::Walk {
                            notified,
                            at: at + 1,
                        };
                    } else {
                        // No zombie yet: sleep until another child notifies.
                        self.actions.push_action(
                            Stage::DoWait,
                            Action::RwUnlock(s.tasklist_lock, Side::Read),
                        );
                        self.actions.push(
                            Stage::Asleep,
                            [Op::WaitEvent(s.notified, Until::NotEquals(notified))],
                        );
                        self.state = ParentState::WaitStart;
                    }
                }
                ParentState::Reaped => {
                    self.actions
                        .push(Stage::DoWait, [Op::Compute(self.syscall_ps / 2)]);
                    self.state = ParentState::WaitStart;
                }
                ParentState::Done => return Op::Exit,
            }
        }
    }

    /// wait_task_zombie drops the read lock; release_task takes it for write.
    fn reap(&mut self, child: usize) {
        let tasklist_lock = self.shared.tasklist_lock;
        let exit_state = self.shared.exit_state[child];
        let a = &mut self.actions;
        a.push_action(Stage::DoWait, Action::RwUnlock(tasklist_lock, Side::Read));
        a.push(Stage::ReleaseTask, [Op::Compute(REAP_NS * 1000)]);
        a.push_action(Stage::ReleaseTask, Action::RwLock(tasklist_lock, Side::Write));
        a.push(
            Stage::ReleaseTask,
            [Op::Atomic(exit_state, AtomicOp::Store(EXIT_DEAD))],
        );
        a.push_action(Stage::ReleaseTask, Action::RwUnlock(tasklist_lock, Side::Write));
        self.state = ParentState::Reaped;
    }
}

