//! The pending-event set: (time, sequence, event id) packed into one u128 so a
//! binary heap compares a single integer. The sequence number breaks ties in
//! the order events were scheduled, which makes every run reproducible. An
//! event's id is event.rs's.
//!
//! Most events schedule exactly one more for the same task, so the popped
//! event stays at the top of the heap until the next push overwrites it:
//! one sift-down (the classic "hold" operation) instead of a pop's and a
//! push's. Keys are unique, so the order events come out in is the same
//! as with any priority queue.

use super::event::Event;
use crate::machine::Ps;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const TASK_BITS: u32 = 24;
pub const MAX_TASKS: usize = crate::limits::EVENT_TASK_IDS;

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    seq: u64,
    /// The top of `heap` was handed out by `pop` and is no longer pending:
    /// the next push replaces it, the next pop removes it first.
    top_taken: bool,
}

impl EventQueue {
    // Forced: taking an `Event`, it became a call at the event loop's pushes (+2.4% instructions
    // at 64 CPUs); its sift stays a call of its own (`replace_top`), as it was then.
    #[inline(always)]
    pub fn push(&mut self, time: Ps, event: Event) {
        let id = event.id();
        debug_assert!((id as usize) < MAX_TASKS);
        self.seq += 1;
        let key = Reverse(
            (u128::from(time) << 64) | (u128::from(self.seq) << TASK_BITS) | u128::from(id),
        );
        if std::mem::take(&mut self.top_taken) && !self.heap.is_empty() {
            replace_top(&mut self.heap, key);
            return;
        }
        self.heap.push(key);
    }

    /// The earliest pending event, without taking it.
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        let Reverse(key) = match (self.top_taken, self.heap.as_slice()) {
            // The earliest after the top is one of the top's two children.
            (true, [_, a, b, ..]) => a.max(b),
            (true, [_, a]) => a,
            (false, [top, ..]) => top,
            _ => return None,
        };
        Some(event_of(*key))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        if std::mem::take(&mut self.top_taken) {
            self.heap.pop();
        }
        let &Reverse(key) = self.heap.peek()?;
        self.top_taken = true;
        Some(((key >> 64) as Ps, event_of(key)))
    }
}

/// The hold: `key` takes the top's place and sifts down to its own. Out of
/// line, so that the event loop, which inlines every push, does not inline
/// the sift as well (as a part of the loop, it crowded other calls out of
/// the compiler's inlining).
#[inline(never)]
fn replace_top(heap: &mut BinaryHeap<Reverse<u128>>, key: Reverse<u128>) {
    if let Some(mut top) = heap.peek_mut() {
        // Dropping the PeekMut sifts the new key down to its place.
        *top = key;
    }
}

#[inline]
fn event_of(key: u128) -> Event {
    Event::of_id((key as u32) & ((1 << TASK_BITS) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Event::Task;

    #[test]
    fn earliest_first_then_fifo() {
        let mut q = EventQueue::default();
        q.push(50, Task(1));
        q.push(10, Task(7));
        q.push(50, Task(0));
        q.push(10, Task(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [(10, Task(7)), (10, Task(3)), (50, Task(1)), (50, Task(0))]
        );
        q.push(60, Task(9));
        q.push(55, Task(4));
        assert_eq!(q.peek(), Some(Task(4)));
        assert_eq!(q.pop(), Some((55, Task(4))));
        assert_eq!(q.peek(), Some(Task(9)));
    }

    proptest! {
        /// Any interleaving of pops and pushes (each no earlier than the
        /// last pop, as in a simulation) comes out as a plain heap of the
        /// same keys gives it, and peek names what pop takes next.
        #[test]
        fn pops_as_a_plain_heap_does(ops in proptest::collection::vec((any::<bool>(), 0u64..50, 0u32..8), 1..200)) {
            let mut q = EventQueue::default();
            let mut plain = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for (pop, delay, task) in ops {
                if pop {
                    let peeked = q.peek();
                    let got = q.pop();
                    let want = plain.pop().map(|Reverse((t, _, k))| (t, Task(k)));
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(peeked, want.map(|(_, k)| k));
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    seq += 1;
                    q.push(now + delay, Task(task));
                    plain.push(Reverse((now + delay, seq, task)));
                }
            }
        }
    }
}
