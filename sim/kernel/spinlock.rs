//! The kernel's spinlocks as protocols, without timing: who holds a lock,
//! whose turn is next, which line each waiter spins on. Each call says
//! what the task does next, as accesses for the engine to price: the lock
//! is acquired, spin on a line, read the lock word again, or take it and
//! hand the queue on with a write.

use super::script::LockRef;
use crate::machine::LockKind;
use crate::memory::Mem;
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
    /// The lock word's write count (as the coherence directory numbers the
    /// line's writes) at the last release: a waiter that takes the lock
    /// after a spin must have read the word at or after it.
    released: u32,
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
        released: 0,
    };
}

/// Where a task waiting for a lock is in the lock's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Ticket lock: spins on the lock word until `serving` reaches its ticket.
    Ticket { lock: LockRef, ticket: u32 },
    /// Queued lock: the first waiter, spinning on the lock word.
    Head { lock: LockRef },
    /// Queued lock: in the MCS queue, spinning on its own node.
    Queued { lock: LockRef },
}

impl LockWait {
    pub fn lock(&self) -> LockRef {
        match *self {
            LockWait::Ticket { lock, .. } | LockWait::Head { lock } | LockWait::Queued { lock } => {
                lock
            }
        }
    }
}

/// What a task at a spinlock does next. Each access named is the engine's
/// to price, in order, before the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The lock is the task's.
    Acquired,
    /// Spin: wait for the next write to the line the wait watches
    /// ([`Locks::watched`]), read it again, then [`Locks::recheck`].
    Spin(LockWait),
    /// Read the lock word at once, then [`Locks::recheck`]: an MCS waiter
    /// that became the head looks at the lock it now spins on.
    Look(LockWait),
    /// Take the free lock with an atomic on its word, then, when a waiter
    /// moved up to head, write its MCS node (the hand-off); then the lock
    /// is the task's.
    Take { word: Mem, hand_off: Option<Mem> },
}

pub struct Locks {
    kind: LockKind,
    slots: Vec<Slot>,
    queues: Vec<VecDeque<u32>>,
    free_queues: Vec<u32>,
    /// The MCS node each task spins on while queued: its CPU's.
    mcs_nodes: Vec<Mem>,
}

impl Locks {
    /// `count` locks of `kind`, for tasks whose CPUs' MCS nodes are `mcs_nodes`.
    pub fn new(kind: LockKind, count: u32, mcs_nodes: Vec<Mem>) -> Locks {
        Locks {
            kind,
            slots: crate::huge_pages::vec_filled(Slot::FREE, count as usize),
            queues: Vec::new(),
            free_queues: Vec::new(),
            mcs_nodes,
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

    /// The line a waiting task watches.
    #[inline]
    pub fn watched(&self, wait: LockWait, task: u32) -> Mem {
        match wait {
            LockWait::Ticket { lock, .. } | LockWait::Head { lock } => lock.word,
            LockWait::Queued { .. } => self.mcs_nodes[task as usize],
        }
    }

    /// spin_lock's atomic on the lock word (a ticket xadd, or a qspinlock
    /// cmpxchg/xchg) has been done: the lock is the task's, or it spins.
    pub fn arrive(&mut self, lock: LockRef, task: u32) -> Next {
        let s = &mut self.slots[lock.id as usize];
        match self.kind {
            LockKind::Ticket => {
                let ticket = s.next_ticket;
                s.next_ticket = s.next_ticket.wrapping_add(1);
                if ticket == s.serving {
                    s.holder = task;
                    Next::Acquired
                } else {
                    Next::Spin(LockWait::Ticket { lock, ticket })
                }
            }
            LockKind::Queued => {
                if s.holder == NONE && s.head == NONE && s.queue == NONE {
                    s.holder = task;
                    Next::Acquired
                } else if s.head == NONE && s.queue == NONE {
                    s.head = task;
                    Next::Spin(LockWait::Head { lock })
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
                    Next::Spin(LockWait::Queued { lock })
                }
            }
        }
    }

    /// Whether a read of the watched line made now shows the waiter its
    /// turn: the ticket being served is its own, the lock word is free
    /// under the head, or the MCS node says it is now the head. The engine
    /// asks at the moment the directory serves the read: the value it
    /// returns is the one of that moment, however late it arrives.
    #[inline]
    pub fn sees_turn(&self, wait: LockWait, task: u32) -> bool {
        match wait {
            LockWait::Ticket { lock, ticket } => self.slots[lock.id as usize].serving == ticket,
            LockWait::Head { lock } => self.slots[lock.id as usize].holder == NONE,
            LockWait::Queued { lock } => self.slots[lock.id as usize].head == task,
        }
    }

    /// The lock word's write count at the lock's last release.
    #[inline]
    pub fn released_at(&self, id: u32) -> u32 {
        self.slots[id as usize].released
    }

    /// A waiter's read of the line it watches showed its turn
    /// ([`Locks::sees_turn`]); what it does about it.
    pub fn recheck(&mut self, wait: LockWait, task: u32) -> Next {
        match wait {
            LockWait::Ticket { lock, ticket } => {
                let s = &mut self.slots[lock.id as usize];
                if s.serving == ticket && s.holder == NONE {
                    s.holder = task;
                    Next::Acquired
                } else {
                    Next::Spin(wait)
                }
            }
            LockWait::Head { lock } => {
                if self.slots[lock.id as usize].holder == NONE {
                    let hand_off = self
                        .head_take(lock.id, task)
                        .map(|next| self.mcs_nodes[next as usize]);
                    Next::Take {
                        word: lock.word,
                        hand_off,
                    }
                } else {
                    Next::Spin(wait)
                }
            }
            LockWait::Queued { lock } => {
                if self.slots[lock.id as usize].head == task {
                    Next::Look(LockWait::Head { lock })
                } else {
                    Next::Spin(wait)
                }
            }
        }
    }

    /// The queue head takes the lock and promotes the next MCS waiter, if
    /// any, to head; returns that waiter, whose node it must then write.
    fn head_take(&mut self, id: u32, task: u32) -> Option<u32> {
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

    /// spin_unlock: the ticket lock serves the next ticket; the queued
    /// lock clears its locked byte. `word_writes` is the lock word's write
    /// count once the release's store is served.
    pub fn release(&mut self, id: u32, task: u32, word_writes: u32) {
        let s = &mut self.slots[id as usize];
        debug_assert_eq!(
            s.holder, task,
            "unlock by a task that does not hold the lock"
        );
        s.holder = NONE;
        s.released = word_writes;
        if self.kind == LockKind::Ticket {
            s.serving = s.serving.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(addr: u64) -> Mem {
        Mem {
            addr,
            line: addr as u32 / 64,
        }
    }

    const LOCK: LockRef = LockRef {
        id: 0,
        word: Mem { addr: 0, line: 0 },
    };

    /// Tasks 0..8, each with its own MCS node.
    fn locks(kind: LockKind) -> Locks {
        Locks::new(kind, 1, (1..=8).map(|n| word(64 * n)).collect())
    }

    #[test]
    fn ticket_lock_serves_in_arrival_order() {
        let mut l = locks(LockKind::Ticket);
        assert_eq!(l.arrive(LOCK, 0), Next::Acquired);
        let Next::Spin(first) = l.arrive(LOCK, 1) else {
            panic!("a held lock makes the next task spin")
        };
        let Next::Spin(second) = l.arrive(LOCK, 2) else {
            panic!("and the one after")
        };
        assert_eq!(
            second,
            LockWait::Ticket {
                lock: LOCK,
                ticket: 2
            }
        );
        // Every ticket waiter watches the lock word.
        assert_eq!(
            (l.watched(first, 1), l.watched(second, 2)),
            (LOCK.word, LOCK.word)
        );
        assert_eq!(l.recheck(second, 2), Next::Spin(second));
        l.release(0, 0, 1);
        assert_eq!(l.recheck(second, 2), Next::Spin(second));
        assert_eq!(l.recheck(first, 1), Next::Acquired);
        l.release(0, 1, 2);
        assert_eq!(l.recheck(second, 2), Next::Acquired);
    }

    #[test]
    fn queued_lock_has_one_spinner_and_a_fifo_behind_it() {
        let mut l = locks(LockKind::Queued);
        assert_eq!(l.arrive(LOCK, 1), Next::Acquired);
        let head = LockWait::Head { lock: LOCK };
        let queued = LockWait::Queued { lock: LOCK };
        assert_eq!(l.arrive(LOCK, 2), Next::Spin(head));
        assert_eq!(l.arrive(LOCK, 3), Next::Spin(queued));
        assert_eq!(l.arrive(LOCK, 4), Next::Spin(queued));
        // The head spins on the lock word, the others each on their own node.
        assert_eq!(l.watched(head, 2), LOCK.word);
        assert_eq!(l.watched(queued, 3), word(64 * 4));
        assert_eq!(l.recheck(head, 2), Next::Spin(head));
        l.release(0, 1, 2);
        // Taking the lock hands the head on to task 3, through its node.
        assert_eq!(
            l.recheck(head, 2),
            Next::Take {
                word: LOCK.word,
                hand_off: Some(word(64 * 4))
            }
        );
        assert_eq!(l.recheck(queued, 3), Next::Look(head));
        assert_eq!(l.recheck(queued, 4), Next::Spin(queued));
        // A newcomer while others wait queues behind them, even if the lock is free.
        l.release(0, 2, 2);
        assert_eq!(l.arrive(LOCK, 5), Next::Spin(queued));
        assert_eq!(
            l.recheck(head, 3),
            Next::Take {
                word: LOCK.word,
                hand_off: Some(word(64 * 5))
            }
        );
    }
}
