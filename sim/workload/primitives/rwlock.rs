//! The x86 rwlock of v3.8 (arch/x86/include/asm/spinlock.h `arch_read_lock`,
//! `arch_write_lock`; arch/x86/lib/rwlock.S `__read_lock_failed`,
//! `__write_lock_failed`), as the kernel's `tasklist_lock` is one: a
//! counter that a writer takes with one atomic of RW_LOCK_BIAS and a
//! reader with one of 1; a failed attempt undoes its atomic and spins
//! reading the word until the lock looks free, then tries again. Readers
//! do not wait for waiting writers. The word here counts the other way
//! round from the kernel's: 0 is free, a writer adds the bias, a reader
//! adds 1.

use super::Primitive;
use crate::task::{AtomicOp, Op, Until, UserWord};

/// `RW_LOCK_BIAS` of x86's rwlock before the qrwlock (3.16).
pub const RW_LOCK_BIAS: u32 = 0x0100_0000;

/// Which side of the lock a task takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Read,
    Write,
}

impl Side {
    /// What this side adds to the word.
    fn amount(self) -> u32 {
        match self {
            Side::Read => 1,
            Side::Write => RW_LOCK_BIAS,
        }
    }
}

/// `read_lock` or `write_lock`: the attempt, its undo when it failed, the
/// spin until the lock looks free, and again, until an attempt finds it free.
pub struct RwLock {
    word: UserWord,
    side: Side,
    phase: Phase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Try,
    Undo,
    Spin,
    Held,
}

impl RwLock {
    pub fn new(word: UserWord, side: Side) -> RwLock {
        RwLock {
            word,
            side,
            phase: Phase::Try,
        }
    }
}

impl Primitive for RwLock {
    fn next(&mut self, _: Option<u32>) -> Option<Op> {
        let amount = self.side.amount();
        Some(match self.phase {
            Phase::Try => Op::Atomic(self.word, AtomicOp::Add(amount)),
            Phase::Undo => Op::Atomic(self.word, AtomicOp::Sub(amount)),
            Phase::Spin => match self.side {
                Side::Write => Op::SpinUntil(self.word, Until::Equals(0)),
                Side::Read => Op::SpinUntil(self.word, Until::Below(RW_LOCK_BIAS)),
            },
            Phase::Held => return None,
        })
    }

    fn returned(&mut self, old: u32) {
        self.phase = match self.phase {
            Phase::Try => {
                let free = match self.side {
                    Side::Write => old == 0,
                    Side::Read => old < RW_LOCK_BIAS,
                };
                if free {
                    Phase::Held
                } else {
                    Phase::Undo
                }
            }
            Phase::Undo => Phase::Spin,
            Phase::Spin => Phase::Try,
            Phase::Held => Phase::Held,
        };
    }
}

/// `read_unlock` or `write_unlock`: one atomic that takes the side's share
/// off the word.
pub struct RwUnlock {
    op: Option<Op>,
}

impl RwUnlock {
    pub fn new(word: UserWord, side: Side) -> RwUnlock {
        RwUnlock {
            op: Some(Op::Atomic(word, AtomicOp::Sub(side.amount()))),
        }
    }
}

impl Primitive for RwUnlock {
    fn next(&mut self, _: Option<u32>) -> Option<Op> {
        self.op.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{KeyKind, Mem};

    fn word() -> UserWord {
        UserWord {
            mem: Mem { addr: 64, line: 1 },
            kind: KeyKind::SharedFile,
        }
    }

    /// Runs `primitive` with each op's return taken from `returns` in
    /// turn, giving the ops it issued.
    fn run(mut primitive: impl Primitive, returns: &[u32]) -> Vec<Op> {
        let mut ops = Vec::new();
        let mut returns = returns.iter();
        while let Some(op) = primitive.next(None) {
            ops.push(op);
            let Some(&ret) = returns.next() else { break };
            primitive.returned(ret);
        }
        ops
    }

    #[test]
    fn a_free_lock_is_taken_with_one_atomic_on_either_side() {
        for (side, amount) in [(Side::Read, 1), (Side::Write, RW_LOCK_BIAS)] {
            let ops = run(RwLock::new(word(), side), &[0]);
            assert_eq!(ops, [Op::Atomic(word(), AtomicOp::Add(amount))]);
        }
    }

    #[test]
    fn readers_share_the_lock_and_a_writer_waits_for_them() {
        let reader = run(RwLock::new(word(), Side::Read), &[3]);
        assert_eq!(reader, [Op::Atomic(word(), AtomicOp::Add(1))]);
        let writer = run(
            RwLock::new(word(), Side::Write),
            &[3, 3 + RW_LOCK_BIAS, 0, 0],
        );
        let add = Op::Atomic(word(), AtomicOp::Add(RW_LOCK_BIAS));
        assert_eq!(
            writer,
            [
                add,
                Op::Atomic(word(), AtomicOp::Sub(RW_LOCK_BIAS)),
                Op::SpinUntil(word(), Until::Equals(0)),
                add,
            ]
        );
    }

    #[test]
    fn a_reader_under_a_writer_undoes_its_share_and_spins_until_the_writer_leaves() {
        let reader = run(
            RwLock::new(word(), Side::Read),
            &[RW_LOCK_BIAS, RW_LOCK_BIAS + 1, 0, 0],
        );
        assert_eq!(
            reader,
            [
                Op::Atomic(word(), AtomicOp::Add(1)),
                Op::Atomic(word(), AtomicOp::Sub(1)),
                Op::SpinUntil(word(), Until::Below(RW_LOCK_BIAS)),
                Op::Atomic(word(), AtomicOp::Add(1)),
            ]
        );
    }

    #[test]
    fn an_unlock_takes_its_side_off_the_word_in_one_atomic() {
        for (side, amount) in [(Side::Read, 1), (Side::Write, RW_LOCK_BIAS)] {
            let ops = run(RwUnlock::new(word(), side), &[amount]);
            assert_eq!(ops, [Op::Atomic(word(), AtomicOp::Sub(amount))]);
        }
    }
}
