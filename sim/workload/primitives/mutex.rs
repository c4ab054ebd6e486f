//! glibc NPTL's `pthread_mutex_lock` / `unlock` of a normal mutex: the
//! lowlevellock protocol (value 0 free, 1 locked, 2 locked with waiters;
//! Drepper, "Futexes Are Tricky", mutex 3): cmpxchg 0->1, else xchg 2 and
//! FUTEX_WAIT(2) until the xchg returns 0; unlock is xchg 0 and one
//! FUTEX_WAKE when the old value was 2.
//!
//! Spinning before sleeping (PTHREAD_MUTEX_ADAPTIVE_NP) and elision are not modelled.

use super::{wait, wake, Primitive};
use crate::task::{AtomicOp, Op, UserWord};

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
