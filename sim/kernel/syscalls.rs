//! The futex syscall (kernel/futex/syscalls.c): each op's script begins
//! with the way in every op shares (core.rs), goes on to the op's own file,
//! and at each decision the state of that moment picks how it continues.
//! Function only, like the ops themselves.

use super::core::{FutexOp, FutexSystem, InFlight};
use super::script::{Decision, Script};
use super::table::FieldName;
use crate::machine::Ps;
use crate::memory::MemoryMap;

impl FutexSystem {
    /// Writes the script of `op` for `task` into `s`, up to its first decision.
    pub fn begin(&mut self, memory: &MemoryMap, task: u32, now: Ps, op: FutexOp, s: &mut Script) {
        self.now = now;
        let (uaddr, kind) = op.uaddr();
        let (key, bucket) = self.enter(memory, task, uaddr, kind, s);
        let f = InFlight::new(
            op,
            key,
            bucket,
            self.lock_of(memory, bucket),
            self.field(memory, bucket, FieldName::Waiters),
        );
        self.in_flight[task as usize] = Some(f);
        match op {
            FutexOp::Wait { uaddr, .. } => self.begin_wait(&f, uaddr, s),
            FutexOp::Wake { .. } => self.begin_wake(task, &f, s),
            FutexOp::CmpRequeue { .. } => self.begin_requeue(memory, task, s),
            FutexOp::LockPi { uaddr, .. } => self.begin_lock_pi(&f, uaddr, s),
            FutexOp::UnlockPi { uaddr, .. } => self.begin_unlock_pi(&f, uaddr, s),
        }
    }

    /// Continues a task's script at a decision, from the state right now:
    /// to the next decision, or to the way out with what the op returns.
    pub fn decide(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        now: Ps,
        decision: Decision,
        s: &mut Script,
    ) {
        self.now = now;
        if let Decision::HashPublished(process) = decision {
            self.hash_published(process);
            return;
        }
        let f = self.op_in_flight(task);
        let ret = match (decision, f.op) {
            (Decision::WaitCompare, FutexOp::Wait { val, .. }) => {
                Some(self.wait_compare(memory, task, &f, val, s))
            }
            (Decision::WakeCheckWaiters, FutexOp::Wake { .. }) => self.wake_check_waiters(&f, s),
            (Decision::WakeWalk, FutexOp::Wake { nr, .. }) => {
                Some(self.wake_walk(memory, &f, nr, s))
            }
            (Decision::RequeueWalk, op @ FutexOp::CmpRequeue { .. }) => {
                Some(self.requeue_walk(memory, task, op, s))
            }
            (Decision::LockPiAtomic, FutexOp::LockPi { uaddr, .. }) => {
                Some(self.lock_pi_atomic(memory, task, &f, uaddr, s))
            }
            (Decision::UnlockPiHandOver, FutexOp::UnlockPi { uaddr, .. }) => {
                Some(self.unlock_pi_hand_over(memory, task, &f, uaddr, s))
            }
            (d, op) => unreachable!("decision {d:?} does not belong to {op:?}"),
        };
        if let Some(ret) = ret {
            self.end(memory, task, &f, ret, s);
        }
    }
}
