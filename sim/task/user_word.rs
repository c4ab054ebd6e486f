//! Words whose values a workload's logic depends on: a pthread mutex, a
//! barrier counter, time_exit's shared cell. This is function only (what an
//! atomic returns and stores, when a spinner may stop); the engine prices
//! each one as one access through the coherence directory.
//!
//! A word's value lives where the futex code reads it, under the futex key
//! that names the word (`FutexSystem`'s user values), so a FUTEX_WAIT
//! compares against exactly what the atomics wrote, and a word in memory
//! shared between processes has one value for all of them.

use crate::coherence::AccessKind;
use crate::kernel::core::FutexSystem;
use crate::kernel::key::KeyKind;
use crate::kernel::spinlock::compare_exchange_access;
use crate::machine::CompareExchange;
use crate::memory::Mem;

/// A user word: where it is, and whether it is private to a process or
/// shared between processes (which decides whose copy an access sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserWord {
    pub mem: Mem,
    pub kind: KeyKind,
}

/// An access whose value matters. The program learns the value the word
/// held before it (`Done::ret` in `Program::op_returned`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Load,
    Store(u32),
    /// lock xadd (wrapping, as on u32).
    Add(u32),
    Sub(u32),
    /// xchg.
    Exchange(u32),
    /// lock cmpxchg: stores `new` only if the word holds `expected`.
    CompareExchange {
        expected: u32,
        new: u32,
    },
}

impl AtomicOp {
    /// The word's value after the op, from its value before.
    pub fn apply(self, old: u32) -> u32 {
        match self {
            AtomicOp::Load => old,
            AtomicOp::Store(v) | AtomicOp::Exchange(v) => v,
            AtomicOp::Add(d) => old.wrapping_add(d),
            AtomicOp::Sub(d) => old.wrapping_sub(d),
            AtomicOp::CompareExchange { expected, new } => {
                if old == expected {
                    new
                } else {
                    old
                }
            }
        }
    }

    /// Performs the op on `word` as `task` sees it, where the kernel keeps
    /// user words' values; returns the value before.
    pub fn perform(self, futex: &mut FutexSystem, task: u32, word: UserWord) -> u32 {
        let old = futex.value(task, word.mem.addr, word.kind);
        let new = self.apply(old);
        if new != old {
            futex.set_value(task, word.mem.addr, word.kind, new);
        }
        old
    }

    /// How the cache sees it, from the value the word held before it: a
    /// failed cmpxchg takes the line exclusive as a locked instruction, and
    /// only reads it where the core makes it with a load-reserved loop.
    pub fn access_as_performed(self, old: u32, compare_exchange: CompareExchange) -> AccessKind {
        match self {
            AtomicOp::CompareExchange { expected, .. } => {
                compare_exchange_access(compare_exchange, old == expected)
            }
            _ => self.access(),
        }
    }

    /// How the cache sees it before its value is known: a cmpxchg as an
    /// RMW.
    pub fn access(self) -> AccessKind {
        match self {
            AtomicOp::Load => AccessKind::Read,
            AtomicOp::Store(_) => AccessKind::Write,
            _ => AccessKind::Rmw,
        }
    }
}

/// When a task spinning on a word (a `while (*p ...) cpu_relax();` loop) stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    Equals(u32),
    NotEquals(u32),
    AtLeast(u32),
    Below(u32),
}

impl Until {
    pub fn holds(self, value: u32) -> bool {
        match self {
            Until::Equals(v) => value == v,
            Until::NotEquals(v) => value != v,
            Until::AtLeast(v) => value >= v,
            Until::Below(v) => value < v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomics_store_what_the_instruction_would() {
        assert_eq!(AtomicOp::Add(1).apply(u32::MAX), 0);
        assert_eq!(AtomicOp::Sub(1).apply(0), u32::MAX);
        assert_eq!(AtomicOp::Exchange(2).apply(1), 2);
        let cas = AtomicOp::CompareExchange {
            expected: 0,
            new: 1,
        };
        assert_eq!((cas.apply(0), cas.apply(2)), (1, 2));
        assert_eq!(AtomicOp::Load.apply(7), 7);
        assert_eq!(cas.access(), AccessKind::Rmw);
        assert_eq!(AtomicOp::Store(0).access(), AccessKind::Write);
    }

    #[test]
    fn a_failed_compare_reads_its_line_only_on_a_load_reserved_core() {
        let cas = AtomicOp::CompareExchange {
            expected: 1,
            new: 2,
        };
        let (locked, reserved) = (CompareExchange::Locked, CompareExchange::LoadReserved);
        assert_eq!(cas.access_as_performed(0, locked), AccessKind::Rmw);
        assert_eq!(cas.access_as_performed(0, reserved), AccessKind::Read);
        assert_eq!(cas.access_as_performed(1, reserved), AccessKind::Rmw);
        assert_eq!(
            AtomicOp::Add(1).access_as_performed(0, reserved),
            AccessKind::Rmw
        );
    }

    #[test]
    fn spinners_stop_on_their_condition_only() {
        assert!(Until::AtLeast(3).holds(4) && !Until::AtLeast(3).holds(2));
        assert!(Until::NotEquals(0).holds(1) && !Until::NotEquals(0).holds(0));
        assert!(Until::Equals(5).holds(5) && !Until::Equals(5).holds(6));
    }
}
