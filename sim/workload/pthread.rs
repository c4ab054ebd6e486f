//! The futex-based user-space locks of glibc's NPTL, as state machines that
//! issue one op at a time and branch on what each atomic returned:
//!
//! - `pthread_mutex_lock` / `unlock` of a normal mutex: the lowlevellock
//!   protocol (value 0 free, 1 locked, 2 locked with waiters; Drepper,
//!   "Futexes Are Tricky", mutex 3): cmpxchg 0->1, else xchg 2 and
//!   FUTEX_WAIT(2) until the xchg returns 0; unlock is xchg 0 and one
//!   FUTEX_WAKE when the old value was 2.
//! - `pthread_barrier_wait`: an arrival counter and a round word the
//!   waiters sleep on; the last to arrive resets the counter, advances the
//!   round and wakes everyone (the shape of glibc 2.23+'s barrier; the 2009
//!   glibc guarded the counter with an internal lowlevellock instead, which
//!   adds one more lock word per barrier).
//!
//! Spinning before sleeping (PTHREAD_MUTEX_ADAPTIVE_NP) and elision are not modelled.

use crate::task::{AtomicOp, FutexOp, Op, UserWord};

/// A sequence of ops that branches on results; `None` when it has finished.
pub trait Primitive {
    /// The next op, given the old value of the word the previous `Op::Atomic` touched.
    fn next(&mut self, last: Option<u32>) -> Option<Op>;
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

pub struct MutexLock {
    word: UserWord,
    state: LockState,
}

enum LockState {
    Start,
    Tried,
    Exchanged,
    Slept,
}

impl MutexLock {
    pub fn new(word: UserWord) -> MutexLock {
        MutexLock {
            word,
            state: LockState::Start,
        }
    }
}

impl Primitive for MutexLock {
    fn next(&mut self, last: Option<u32>) -> Option<Op> {
        let exchange = Op::Atomic(self.word, AtomicOp::Exchange(2));
        match self.state {
            LockState::Start => {
                self.state = LockState::Tried;
                Some(Op::Atomic(
                    self.word,
                    AtomicOp::CompareExchange {
                        expected: 0,
                        new: 1,
                    },
                ))
            }
            LockState::Tried | LockState::Exchanged if last == Some(0) => None,
            LockState::Tried | LockState::Slept => {
                self.state = LockState::Exchanged;
                Some(exchange)
            }
            LockState::Exchanged => {
                self.state = LockState::Slept;
                Some(wait(self.word, 2))
            }
        }
    }
}

pub struct MutexUnlock {
    word: UserWord,
    state: UnlockState,
}

enum UnlockState {
    Start,
    Released,
    Woke,
}

impl MutexUnlock {
    pub fn new(word: UserWord) -> MutexUnlock {
        MutexUnlock {
            word,
            state: UnlockState::Start,
        }
    }
}

impl Primitive for MutexUnlock {
    fn next(&mut self, last: Option<u32>) -> Option<Op> {
        match self.state {
            UnlockState::Start => {
                self.state = UnlockState::Released;
                Some(Op::Atomic(self.word, AtomicOp::Exchange(0)))
            }
            UnlockState::Released if last.is_some_and(|old| old > 1) => {
                self.state = UnlockState::Woke;
                Some(wake(self.word, 1))
            }
            UnlockState::Released | UnlockState::Woke => None,
        }
    }
}

/// The two words of a barrier for `count` threads.
#[derive(Clone, Copy, Debug)]
pub struct Barrier {
    pub arrived: UserWord,
    pub round: UserWord,
    pub count: u32,
}

pub struct BarrierWait {
    barrier: Barrier,
    state: BarrierState,
}

enum BarrierState {
    Start,
    ReadRound,
    Arrived { round: u32 },
    Reset,
    Advanced,
    Woke,
    Slept { round: u32 },
    Reread { round: u32 },
}

impl BarrierWait {
    pub fn new(barrier: Barrier) -> BarrierWait {
        BarrierWait {
            barrier,
            state: BarrierState::Start,
        }
    }
}

impl Primitive for BarrierWait {
    fn next(&mut self, last: Option<u32>) -> Option<Op> {
        let b = self.barrier;
        let old = last.unwrap_or(0);
        let (state, op) = match self.state {
            BarrierState::Start => (
                BarrierState::ReadRound,
                Some(Op::Atomic(b.round, AtomicOp::Load)),
            ),
            BarrierState::ReadRound => (
                BarrierState::Arrived { round: old },
                Some(Op::Atomic(b.arrived, AtomicOp::Add(1))),
            ),
            BarrierState::Arrived { .. } if old + 1 >= b.count => (
                BarrierState::Reset,
                Some(Op::Atomic(b.arrived, AtomicOp::Store(0))),
            ),
            BarrierState::Arrived { round } => {
                (BarrierState::Slept { round }, Some(wait(b.round, round)))
            }
            BarrierState::Reset => (
                BarrierState::Advanced,
                Some(Op::Atomic(b.round, AtomicOp::Add(1))),
            ),
            BarrierState::Advanced => (BarrierState::Woke, Some(wake(b.round, u32::MAX))),
            BarrierState::Woke => (BarrierState::Woke, None),
            BarrierState::Slept { round } => (
                BarrierState::Reread { round },
                Some(Op::Atomic(b.round, AtomicOp::Load)),
            ),
            // Woken, or the round moved on before we slept: done. Else sleep again.
            BarrierState::Reread { round } if old != round => (BarrierState::Woke, None),
            BarrierState::Reread { round } => {
                (BarrierState::Slept { round }, Some(wait(b.round, round)))
            }
        };
        self.state = state;
        op
    }
}
