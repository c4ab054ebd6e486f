//! The pending-event set: (time, sequence, task) packed into one u128 so a
//! binary heap compares a single integer. The sequence number breaks ties in
//! the order events were scheduled, which makes every run reproducible.

use crate::machine::Ps;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const TASK_BITS: u32 = 24;
pub const MAX_TASKS: usize = 1 << TASK_BITS;

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Ps, task: u32) {
        debug_assert!((task as usize) < MAX_TASKS);
        self.seq += 1;
        let key = (u128::from(time) << 64) | (u128::from(self.seq) << TASK_BITS) | u128::from(task);
        self.heap.push(Reverse(key));
    }

    /// The task of the earliest event, without taking it.
    #[inline]
    pub fn peek_task(&self) -> Option<u32> {
        let Reverse(key) = self.heap.peek()?;
        Some((*key as u32) & ((1 << TASK_BITS) - 1))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, u32)> {
        let Reverse(key) = self.heap.pop()?;
        Some(((key >> 64) as Ps, (key as u32) & ((1 << TASK_BITS) - 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo() {
        let mut q = EventQueue::default();
        q.push(50, 1);
        q.push(10, 7);
        q.push(50, 0);
        q.push(10, 3);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(10, 7), (10, 3), (50, 1), (50, 0)]);
        q.push(60, 9);
        q.push(55, 4);
        assert_eq!(q.peek_task(), Some(4));
        assert_eq!(q.pop(), Some((55, 4)));
    }
}
