//! The locks and waits workloads are written with, each a state machine
//! that issues one op at a time and branches on what its ops returned, so
//! that a workload's program queues "take this lock" and the primitive
//! runs it to its end (task_loop.rs, time_exit/):
//!
//! - glibc's normal mutex and its barrier (mutex.rs, barrier.rs);
//! - x86's rwlock before the qrwlock (rwlock.rs): the kernel's
//!   `tasklist_lock`;
//! - the kernel's page lock, `lock_page` and `unlock_page` on the page
//!   wait table (page_lock.rs).

pub mod barrier;
pub mod mutex;
pub mod page_lock;
pub mod rwlock;

pub use barrier::{Barrier, BarrierWait};
pub use mutex::{MutexLock, MutexUnlock};

use crate::task::{FutexOp, Op, UserWord};

/// A sequence of ops that branches on results; `None` when it has finished.
pub trait Primitive {
    /// The next op, given the old value of the word the previous `Op::Atomic` touched.
    fn next(&mut self, last: Option<u32>) -> Option<Op>;

    /// Its op in flight returned `ret`. A primitive that reads what other
    /// tasks change (a wait list's length) reads it here, as its op
    /// returns, not when its task next runs.
    fn returned(&mut self, _ret: u32) {}
}

fn wait(word: UserWord, val: u32) -> Op {
    Op::Futex(FutexOp::Wait {
        uaddr: word.mem,
        val,
        kind: word.kind,
    })
}

fn wake(word: UserWord, nr: u32) -> Op {
    Op::Futex(FutexOp::Wake {
        uaddr: word.mem,
        nr,
        kind: word.kind,
    })
}
