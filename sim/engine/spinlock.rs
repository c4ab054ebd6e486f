//! The logic of the kernel's spinlocks, without timing: who holds a lock,
//! whose turn is next, who spins where. The engine prices each step through
//! the coherence directory.

use crate::machine::LockKind;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// One lock's state; both kinds share the slot so a table of a million
/// buckets stays one flat array.
#[derive(Clone, Debug)]
struct Slot {
    holder: u32,
    /// Ticket lock: the next ticket to hand out and the ticket being served.
    next_ticket: u32,
    serving: u32,
    /// Queued lock: the waiter spinning on the lock word, and the MCS queue behind it.
    head: u32,
    queue: u32,
}

/// Memory for one lock's state.
pub const BYTES_PER_LOCK: u64 = std::mem::size_of::<Slot>() as u64;

impl Slot {
    const FREE: Slot = Slot {
        holder: NONE,
        next_ticket: 0,
        serving: 0,
        head: NONE,
        queue: NONE,
    };
}

/// What a task arriving at a lock does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Acquired,
    /// Ticket lock: spin on the lock word until `serving` reaches this ticket.
    Ticket(u32),
    /// Queued lock: first waiter, spins on the lock word.
    Head,
    /// Queued lock: joined the MCS queue, spins on its own node.
    Queued,
}

pub struct Locks {
    kind: LockKind,
    slots: Vec<Slot>,
    queues: Vec<VecDeque<u32>>,
    free_queues: Vec<u32>,
}

impl Locks {
    pub fn new(kind: LockKind, count: u32) -> Locks {
        Locks {
            kind,
            slots: crate::huge_pages::vec_filled(Slot::FREE, count as usize),
            queues: Vec::new(),
            free_queues: Vec::new(),
        }
    }

    /// Starts loading a lock's state into the host's cache.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Some(slot) = self.slots.get(id as usize) {
            crate::prefetch::prefetch(slot);
        }
    }

    /// Makes room for locks up to id `count - 1` (a workload's locks are
    /// known only as its tasks first take them).
    pub fn grow_to(&mut self, count: u32) {
        if self.slots.len() < count as usize {
            self.slots.resize(count as usize, Slot::FREE);
        }
    }

    pub fn kind(&self) -> LockKind {
        self.kind
    }

    /// The atomic of spin_lock: a ticket xadd, or a qspinlock cmpxchg/xchg.
    pub fn arrive(&mut self, id: u32, task: u32) -> Arrival {
        let s = &mut self.slots[id as usize];
        match self.kind {
            LockKind::Ticket => {
                let ticket = s.next_ticket;
                s.next_ticket = s.next_ticket.wrapping_add(1);
                if ticket == s.serving {
                    s.holder = task;
                    Arrival::Acquired
                } else {
                    Arrival::Ticket(ticket)
                }
            }
            LockKind::Queued => {
                if s.holder == NONE && s.head == NONE && s.queue == NONE {
                    s.holder = task;
                    Arrival::Acquired
                } else if s.head == NONE && s.queue == NONE {
                    s.head = task;
                    Arrival::Head
                } else {
                    if s.queue == NONE {
                        s.queue = match self.free_queues.pop() {
                            Some(q) => q,
                            None => {
                                self.queues.push(VecDeque::new());
                                self.queues.len() as u32 - 1
                            }
                        };
                    }
                    self.queues[s.queue as usize].push_back(task);
                    Arrival::Queued
                }
            }
        }
    }

    /// A ticket spinner re-read the lock word: is it its turn?
    pub fn ticket_turn(&mut self, id: u32, task: u32, ticket: u32) -> bool {
        let s = &mut self.slots[id as usize];
        let turn = s.serving == ticket && s.holder == NONE;
        if turn {
            s.holder = task;
        }
        turn
    }

    /// The queue head re-read the lock word: is it free to take?
    pub fn head_free(&self, id: u32) -> bool {
        self.slots[id as usize].holder == NONE
    }

    /// The queue head takes the lock and promotes the next MCS waiter, if
    /// any, to head; returns that waiter, whose node it must then write.
    pub fn head_take(&mut self, id: u32, task: u32) -> Option<u32> {
        let s = &mut self.slots[id as usize];
        debug_assert!(s.holder == NONE && s.head == task);
        s.holder = task;
        s.head = NONE;
        if s.queue == NONE {
            return None;
        }
        let q = s.queue;
        let next = self.queues[q as usize].pop_front();
        s.head = next.unwrap_or(NONE);
        if self.queues[q as usize].is_empty() {
            s.queue = NONE;
            self.free_queues.push(q);
        }
        next
    }

    /// Whether an MCS waiter has been promoted to the head.
    pub fn is_head(&self, id: u32, task: u32) -> bool {
        self.slots[id as usize].head == task
    }

    /// spin_unlock: the ticket lock serves the next ticket; the queued lock clears its locked byte.
    pub fn release(&mut self, id: u32, task: u32) {
        let s = &mut self.slots[id as usize];
        debug_assert_eq!(
            s.holder, task,
            "unlock by a task that does not hold the lock"
        );
        s.holder = NONE;
        if self.kind == LockKind::Ticket {
            s.serving = s.serving.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticket_lock_serves_in_arrival_order() {
        let mut l = Locks::new(LockKind::Ticket, 1);
        assert_eq!(l.arrive(0, 10), Arrival::Acquired);
        assert_eq!(l.arrive(0, 11), Arrival::Ticket(1));
        assert_eq!(l.arrive(0, 12), Arrival::Ticket(2));
        assert!(!l.ticket_turn(0, 12, 2));
        l.release(0, 10);
        assert!(!l.ticket_turn(0, 12, 2));
        assert!(l.ticket_turn(0, 11, 1));
        l.release(0, 11);
        assert!(l.ticket_turn(0, 12, 2));
    }

    #[test]
    fn queued_lock_has_one_spinner_and_a_fifo_behind_it() {
        let mut l = Locks::new(LockKind::Queued, 1);
        assert_eq!(l.arrive(0, 1), Arrival::Acquired);
        assert_eq!(l.arrive(0, 2), Arrival::Head);
        assert_eq!(l.arrive(0, 3), Arrival::Queued);
        assert_eq!(l.arrive(0, 4), Arrival::Queued);
        assert!(!l.head_free(0));
        l.release(0, 1);
        assert!(l.head_free(0));
        assert_eq!(l.head_take(0, 2), Some(3));
        assert!(l.is_head(0, 3) && !l.is_head(0, 4));
        // A newcomer while others wait queues behind them, even if the lock is free.
        l.release(0, 2);
        assert_eq!(l.arrive(0, 5), Arrival::Queued);
        assert_eq!(l.head_take(0, 3), Some(4));
    }
}
