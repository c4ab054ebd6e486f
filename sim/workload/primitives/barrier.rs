//! glibc NPTL's `pthread_barrier_wait`: an arrival counter and a round
//! word the waiters sleep on; the last to arrive resets the counter,
//! advances the round and wakes everyone (the shape of glibc 2.23+'s
//! barrier; the 2009 glibc guarded the counter with an internal
//! lowlevellock instead, which adds one more lock word per barrier).

use super::{wait, wake, Primitive};
use crate::task::{AtomicOp, Op, UserWord};

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
