//! The loop every workload task runs: one pass of its body after another,
//! each pass a list of actions (plain ops, or pthread primitives that
//! branch on what their atomics return), counted as one iteration; after
//! a set number of passes the task exits.

use super::primitives::{Barrier, BarrierWait, MutexLock, MutexUnlock, Primitive};
use crate::task::{Counting, Done, Op, Program, UserWord};
use std::collections::VecDeque;

/// One thing a pass of a task's body does.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    Op(Op),
    MutexLock(UserWord),
    MutexUnlock(UserWord),
    BarrierWait(Barrier),
}

/// Writes the actions of pass `iteration` (from 0) of a task's body.
pub trait Body: Send {
    fn pass(&mut self, iteration: u64, actions: &mut VecDeque<Action>);
}

pub struct TaskLoop<B: Body> {
    body: B,
    /// Passes before the task exits; `None` runs until the window closes.
    iterations: Option<u64>,
    done: u64,
    actions: VecDeque<Action>,
    primitive: Option<Box<dyn Primitive + Send>>,
    last: Option<u32>,
    /// The op in flight is an `Op::Atomic`, whose old value `last` takes.
    atomic_in_flight: bool,
    /// The current pass's actions have all been issued.
    pass_open: bool,
}

impl<B: Body> TaskLoop<B> {
    pub fn new(body: B, iterations: Option<u64>) -> TaskLoop<B> {
        TaskLoop {
            body,
            iterations,
            done: 0,
            actions: VecDeque::new(),
            primitive: None,
            last: None,
            atomic_in_flight: false,
            pass_open: false,
        }
    }
}

impl<B: Body> TaskLoop<B> {
    fn choose_op(&mut self) -> Op {
        loop {
            if let Some(p) = &mut self.primitive {
                if let Some(op) = p.next(self.last.take()) {
                    return op;
                }
                self.primitive = None;
            }
            // A plain atomic's result is the program's own business, not the next primitive's.
            self.last = None;
            match self.actions.pop_front() {
                Some(Action::Op(op)) => return op,
                Some(Action::MutexLock(w)) => self.primitive = Some(Box::new(MutexLock::new(w))),
                Some(Action::MutexUnlock(w)) => {
                    self.primitive = Some(Box::new(MutexUnlock::new(w)))
                }
                Some(Action::BarrierWait(b)) => {
                    self.primitive = Some(Box::new(BarrierWait::new(b)))
                }
                None if self.pass_open => {
                    self.pass_open = false;
                    self.done += 1;
                    return Op::Iteration;
                }
                None if self.iterations.is_some_and(|n| self.done >= n) => return Op::Exit,
                None => {
                    self.body.pass(self.done, &mut self.actions);
                    self.pass_open = true;
                }
            }
        }
    }
}

impl<B: Body> Program for TaskLoop<B> {
    fn next_op(&mut self) -> Op {
        let op = self.choose_op();
        self.atomic_in_flight = matches!(op, Op::Atomic(..));
        op
    }

    fn op_returned(&mut self, done: Done) {
        if let Some(p) = &mut self.primitive {
            p.returned(done.ret as u32);
        }
        if self.atomic_in_flight {
            self.last = Some(done.ret as u32);
        }
    }

    fn counting(&self) -> Counting {
        Counting::Iterations
    }
}
