//! The kernel's spinlocks as protocols, without timing: who holds a lock,
//! whose turn is next, which line each waiter spins on. Each call says
//! what the task does next, as accesses for the engine to price: the lock
//! is acquired, read a watched line, or make one access and go on after
//! it. An atomic's effect on the lock's state is done as it is asked for;
//! a plain store that hands something to a waiter (the release, an MCS
//! link, the hand-on to the next node) says what it publishes, and the
//! engine publishes it when the store reaches its line: a store may wait
//! in the store buffer for its line while the task goes on, and no waiter
//! may see what the store carries before the store is the line's value.
//!
//! The ticket lock (2.6.25-4.1) hands out tickets with an xadd; every
//! waiter spins on the lock word. The queued lock is the kernel's
//! qspinlock (kernel/locking/qspinlock.c, 4.2+): a cmpxchg fast path; on
//! contention one waiter sets the pending bit and spins on the lock word
//! before any queue exists; the others join an MCS queue with an xchg of
//! the word's tail and a store to their predecessor's node, and each spins
//! on its own node, until the queue head, which spins on the lock word.
//! The transitions that need no atomic are plain stores: pending to locked
//! (clear_pending_set_locked), the head's set_locked, the links and the
//! hand-on to the next node; the head prefetches its successor's node for
//! write while it waits.

use super::script::LockRef;
use crate::coherence::AccessKind;
use crate::machine::{CompareExchange, LockKind, MemoryModel};
use crate::memory::Mem;
use crate::symbol::Symbol;

const NONE: u32 = u32::MAX;

/// One lock's state; both kinds share the slot so a table of a million
/// buckets stays one flat array.
#[derive(Clone, Debug)]
struct Slot {
    /// The task that holds the lock (the locked byte, for the queued lock).
    holder: u32,
    /// Ticket lock: the next ticket to hand out and the ticket being served.
    next_ticket: u32,
    serving: u32,
    /// Queued lock: the task that set the pending bit, and the MCS queue's
    /// tail (the word's tail field).
    pending: u32,
    tail: u32,
    /// The lock word's write count (as the coherence directory numbers the
    /// line's writes) at the last release: a waiter that takes the lock
    /// after a spin must have read the word at or after it.
    released: u32,
}

/// Memory for one lock's state.
pub const BYTES_PER_LOCK: u64 = std::mem::size_of::<Slot>() as u64;

impl Slot {
    /// The word is `_Q_PENDING_VAL`: a pending waiter, no holder, no queue
    /// (the pending waiter is about to set the locked byte).
    fn pending_hand_over(&self) -> bool {
        self.holder == NONE && self.pending != NONE && self.tail == NONE
    }

    const FREE: Slot = Slot {
        holder: NONE,
        next_ticket: 0,
        serving: 0,
        pending: NONE,
        tail: NONE,
        released: 0,
    };
}

/// Where a task at a lock is in the lock's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Ticket lock: spins on the lock word until `serving` reaches its ticket.
    Ticket { lock: LockRef, ticket: u32 },
    /// Queued lock: the fast path's cmpxchg found the lock taken.
    Slow { lock: LockRef },
    /// Queued lock: the slow path found the word at `_Q_PENDING_VAL` (the
    /// pending waiter's hand-over to locked in progress) and reads it until
    /// it settles, for at most `_Q_PENDING_LOOPS` reads.
    PendingSettles { lock: LockRef },
    /// Queued lock: on its way into the MCS queue, its node initialised,
    /// queued_spin_trylock has read the word; a cmpxchg takes a free lock,
    /// else xchg_tail queues.
    Trylock { lock: LockRef },
    /// Queued lock: owns the pending bit, spins on the lock word until the
    /// locked byte clears.
    Pending { lock: LockRef },
    /// Queued lock: in the MCS queue behind `prev`, whose node's `next` it
    /// must now store.
    Link { lock: LockRef, prev: u32 },
    /// Queued lock: in the MCS queue, spinning on its own node's `locked`.
    Queued { lock: LockRef },
    /// Queued lock: the MCS queue head, spinning on the lock word until
    /// both the locked byte and the pending bit clear.
    Head { lock: LockRef },
    /// Queued lock: the former head holds the lock and hands the queue on
    /// to its successor's node.
    HandOn { lock: LockRef },
    /// Queued lock: as HandOn, but the successor has not yet stored its
    /// link: spins on its own node's `next`.
    AwaitNext { lock: LockRef },
    /// Ticket lock: spin_unlock has read the word's head; its store of the
    /// next ticket to serve follows.
    Releasing { lock: LockRef },
}

impl LockWait {
    /// Whether a read that shows the waiter its turn showed the lock word
    /// free: the ticket served, the locked byte clear for the pending
    /// waiter and the queue's head.
    pub fn free_on_turn(&self) -> bool {
        matches!(
            self,
            LockWait::Ticket { .. } | LockWait::Pending { .. } | LockWait::Head { .. }
        )
    }

    /// The function a task in this state runs: its spinning reads are
    /// that function's accesses.
    pub fn symbol(&self) -> Symbol {
        match self {
            LockWait::Ticket { .. } => Symbol::RawSpinLock,
            LockWait::Releasing { .. } => Symbol::RawSpinUnlock,
            _ => Symbol::QueuedSpinLockSlowpath,
        }
    }

    pub fn lock(&self) -> LockRef {
        match *self {
            LockWait::Ticket { lock, .. }
            | LockWait::Slow { lock }
            | LockWait::PendingSettles { lock }
            | LockWait::Trylock { lock }
            | LockWait::Pending { lock }
            | LockWait::Link { lock, .. }
            | LockWait::Queued { lock }
            | LockWait::Head { lock }
            | LockWait::HandOn { lock }
            | LockWait::AwaitNext { lock }
            | LockWait::Releasing { lock } => lock,
        }
    }
}

/// What a task does once the access the protocol asked for completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// The lock is the task's.
    Acquired,
    /// Spin: wait for the next write to the watched line after the
    /// access, read it again, and call [`Locks::next`] when it shows the
    /// task's turn ([`Locks::sees_turn`]).
    Spin(LockWait),
    /// Read the watched line at once, then as for `Spin`.
    Look(LockWait),
    /// Call [`Locks::next`] with this state.
    Move(LockWait),
    /// The release's store is made: the task goes on with its script.
    Released,
}

/// What a plain store hands to the lock's waiters once it is the value of
/// its line ([`Locks::publish`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Publishes {
    Nothing,
    /// spin_unlock's store: the ticket lock serves its next ticket, the
    /// queued lock's locked byte clears.
    Release {
        id: u32,
        task: u32,
    },
    /// `prev->next = node`: `task` is linked behind `prev`.
    Link {
        prev: u32,
        task: u32,
    },
    /// `next->locked = 1`: `next` is the queue's head now.
    HandOn {
        next: u32,
    },
}

/// What a task at a spinlock does next; the accesses are the engine's to price.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The lock is the task's.
    Acquired,
    /// Read the watched line at once, as `After::Look`.
    Look(LockWait),
    /// Make one access, ordered as `order` says, as part of the function
    /// `by`; what a plain store hands to waiters is `publishes`.
    Do {
        mem: Mem,
        kind: AccessKind,
        order: Order,
        publishes: Publishes,
        after: After,
        by: Symbol,
    },
}

/// How a protocol's access is ordered against the CPU's earlier ones, as
/// the kernel writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// A plain load (the ticket release's read of the word's head): it
    /// waits for no store, and a hit in the task's own cache takes no
    /// event of its own, as a script's loads do.
    Load,
    /// A plain store (the kernel's transitions without an atomic): it
    /// retires into the store buffer, and the task goes on at once.
    Posted,
    /// A fully ordered atomic (the generic ticket lock's atomic_fetch_add;
    /// xchg_tail, behind the smp_wmb that publishes the node): the stores
    /// before it drain first, on every core.
    Full,
    /// A prefetch for write (prefetchw): a request for ownership of the
    /// line that the task does not wait for. It takes no store-buffer
    /// slot, waits for no store before it and holds back none after it,
    /// and writes nothing: the line's spinners are not woken and no write
    /// is counted. The access's kind is what it asks the line for.
    PrefetchForWrite,
    /// An acquire or relaxed atomic (the queued lock's
    /// atomic_try_cmpxchg_acquire, fetch_set_pending_acquire, the last
    /// waiter's cmpxchg_relaxed): the stores before it drain first only on
    /// a core whose every locked RMW is a full barrier (x86).
    Acquire,
}

/// How the line sees a compare-and-exchange, from whether its compare
/// succeeded: an RMW, or a read where a failed compare does not write.
pub fn compare_exchange_access(compare_exchange: CompareExchange, compared: bool) -> AccessKind {
    if compared || compare_exchange.failed_compare_writes() {
        AccessKind::Rmw
    } else {
        AccessKind::Read
    }
}

/// How long a queued-lock waiter that finds the word at `_Q_PENDING_VAL`
/// reads it for the hand-over to settle (`_Q_PENDING_LOOPS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PendingWait {
    /// x86's 512 reads (arch/x86/include/asm/qspinlock.h, from 4.16): far
    /// longer than a hand-over takes, so until it settles.
    UntilSettled,
    /// Every other architecture's 1 (kernel/locking/qspinlock.c): the word
    /// is read again once, at once, and the waiter goes on to the queue if
    /// it has not settled.
    OneReread,
}

impl PendingWait {
    /// x86 is the one architecture of the profiles with a total store
    /// order, and the one that raises `_Q_PENDING_LOOPS`.
    pub fn of(memory_model: MemoryModel) -> PendingWait {
        match memory_model {
            MemoryModel::Tso => PendingWait::UntilSettled,
            MemoryModel::Weak => PendingWait::OneReread,
        }
    }
}

pub struct Locks {
    kind: LockKind,
    pending_wait: PendingWait,
    /// How the core's compare-and-exchange treats a line when it fails.
    compare_exchange: CompareExchange,
    slots: Vec<Slot>,
    /// Per task, its MCS node (its CPU's) and the node's two fields: the
    /// successor that linked itself behind it, and whether its predecessor
    /// has made it the queue head.
    mcs_nodes: Vec<Mem>,
    node_next: Vec<u32>,
    node_locked: Vec<bool>,
    /// The id of the workload's lock 0: its locks follow the kernel's.
    workload_base: u32,
}

impl Locks {
    /// `count` locks of `kind`, for tasks whose CPUs' MCS nodes are
    /// `mcs_nodes`; a workload's locks are numbered after them.
    pub fn new(
        kind: LockKind,
        compare_exchange: CompareExchange,
        pending_wait: PendingWait,
        count: u32,
        mcs_nodes: Vec<Mem>,
    ) -> Locks {
        let tasks = mcs_nodes.len();
        Locks {
            kind,
            pending_wait,
            compare_exchange,
            slots: crate::huge_pages::vec_filled(Slot::FREE, count as usize),
            mcs_nodes,
            node_next: vec![NONE; tasks],
            node_locked: vec![false; tasks],
            workload_base: count,
        }
    }

    /// A workload's lock, numbered among the kernel's.
    pub fn workload_lock(&self, lock: LockRef) -> LockRef {
        LockRef::new(self.workload_base + lock.id, lock.word())
    }

    /// Which of the workload's locks lock `id` is; None for the kernel's.
    #[inline]
    pub fn workload_index(&self, id: u32) -> Option<u32> {
        id.checked_sub(self.workload_base)
    }

    /// How spin_lock's first atomic is ordered: the generic ticket lock's
    /// atomic_fetch_add fully, the queued lock's atomic_try_cmpxchg_acquire
    /// as an acquire (include/asm-generic/ticket_spinlock.h, qspinlock.h).
    pub fn first_atomic_order(&self) -> Order {
        match self.kind {
            LockKind::Ticket => Order::Full,
            LockKind::Queued => Order::Acquire,
        }
    }

    /// spin_unlock. The ticket lock's store of the next ticket to serve is
    /// the word's head plus one, read first (x86's `add` to the head in
    /// memory, arch/x86/include/asm/spinlock.h 2.6.25-4.1; the generic
    /// lock's atomic_read then smp_store_release, include/asm-generic/
    /// ticket_spinlock.h); the read needs no earlier load's value, so it
    /// issues at once. The queued lock's release stores a zero to its
    /// locked byte and reads nothing.
    pub fn unlock(&self, lock: LockRef, task: u32) -> Next {
        match self.kind {
            LockKind::Ticket => Next::Do {
                mem: lock.word(),
                kind: AccessKind::Read,
                order: Order::Load,
                publishes: Publishes::Nothing,
                after: After::Move(LockWait::Releasing { lock }),
                by: Symbol::RawSpinUnlock,
            },
            LockKind::Queued => Self::release_store(lock, task),
        }
    }

    /// The release is a plain store (smp_store_release): the store
    /// buffer's order is the release order. The lock is free once the
    /// directory serves the store ([`Locks::publish`]), not before.
    fn release_store(lock: LockRef, task: u32) -> Next {
        Next::Do {
            mem: lock.word(),
            kind: AccessKind::Write,
            order: Order::Posted,
            publishes: Publishes::Release { id: lock.id, task },
            after: After::Released,
            by: Symbol::RawSpinUnlock,
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

    /// The line a waiting task watches: the lock word, or its own MCS node.
    #[inline]
    pub fn watched(&self, wait: LockWait, task: u32) -> Mem {
        match wait {
            LockWait::Queued { .. } | LockWait::AwaitNext { .. } => self.mcs_nodes[task as usize],
            _ => wait.lock().word(),
        }
    }

    /// spin_lock: the atomic on the lock word (a ticket xadd, or the
    /// qspinlock fast path's cmpxchg), done as it is asked for. A cmpxchg
    /// that finds the lock taken writes nothing on a load-reserved core.
    pub fn arrive(&mut self, lock: LockRef, task: u32) -> Next {
        let s = &mut self.slots[lock.id as usize];
        let mut kind = AccessKind::Rmw;
        let after = match self.kind {
            LockKind::Ticket => {
                let ticket = s.next_ticket;
                s.next_ticket = s.next_ticket.wrapping_add(1);
                if ticket == s.serving {
                    s.holder = task;
                    After::Acquired
                } else {
                    After::Spin(LockWait::Ticket { lock, ticket })
                }
            }
            LockKind::Queued => {
                let free = s.holder == NONE && s.pending == NONE && s.tail == NONE;
                kind = compare_exchange_access(self.compare_exchange, free);
                if free {
                    s.holder = task;
                    After::Acquired
                } else {
                    After::Move(LockWait::Slow { lock })
                }
            }
        };
        Next::Do {
            mem: lock.word(),
            kind,
            order: self.first_atomic_order(),
            publishes: Publishes::Nothing,
            after,
            by: Symbol::RawSpinLock,
        }
    }

    /// Whether a read of the watched line made now shows the waiter its
    /// turn: the ticket being served is its own, the lock word is free for
    /// the pending waiter or the head, its node says it is the head, or its
    /// node names a successor. The engine asks at the moment the directory
    /// serves the read: the value it returns is the one of that moment,
    /// however late it arrives.
    #[inline]
    pub fn sees_turn(&self, wait: LockWait, task: u32) -> bool {
        match wait {
            LockWait::Ticket { lock, ticket } => self.slots[lock.id as usize].serving == ticket,
            LockWait::Pending { lock } => self.slots[lock.id as usize].holder == NONE,
            LockWait::PendingSettles { lock } => {
                self.pending_wait == PendingWait::OneReread
                    || !self.slots[lock.id as usize].pending_hand_over()
            }
            LockWait::Head { lock } => {
                let s = &self.slots[lock.id as usize];
                s.holder == NONE && s.pending == NONE
            }
            LockWait::Queued { .. } => self.node_locked[task as usize],
            LockWait::AwaitNext { .. } => self.node_next[task as usize] != NONE,
            LockWait::Slow { .. }
            | LockWait::Trylock { .. }
            | LockWait::Link { .. }
            | LockWait::HandOn { .. }
            | LockWait::Releasing { .. } => true,
        }
    }

    /// Whether the protocol's next move from `wait` starts with an atomic on
    /// the lock word (the slow path's fetch_set_pending or xchg_tail, the
    /// last queued waiter's cmpxchg as it takes the lock): the engine asks
    /// for that move once the word's line is granted to it, so that the
    /// atomic acts on the word as the line serves it.
    pub fn moves_by_atomic(&self, wait: LockWait, task: u32) -> bool {
        match wait {
            LockWait::Slow { .. } | LockWait::PendingSettles { .. } | LockWait::Trylock { .. } => {
                true
            }
            LockWait::Head { lock } => self.slots[lock.id as usize].tail == task,
            _ => false,
        }
    }

    /// The lock word's write count at the lock's last release.
    #[inline]
    pub fn released_at(&self, id: u32) -> u32 {
        self.slots[id as usize].released
    }

    /// The protocol's next move from `wait`: a spinner whose read showed
    /// its turn ([`Locks::sees_turn`]), or a task whose last access completed.
    #[inline]
    pub fn next(&mut self, wait: LockWait, task: u32) -> Next {
        let t = task as usize;
        match wait {
            LockWait::Ticket { lock, ticket } => {
                let s = &mut self.slots[lock.id as usize];
                debug_assert!(s.serving == ticket && s.holder == NONE);
                s.holder = task;
                Next::Acquired
            }
            LockWait::Slow { lock } => self.slow_path(lock, task, true),
            LockWait::PendingSettles { lock } => self.slow_path(lock, task, false),
            LockWait::Trylock { lock } => {
                let s = &mut self.slots[lock.id as usize];
                if s.holder == NONE && s.pending == NONE && s.tail == NONE {
                    // The trylock's cmpxchg takes the lock; the node goes unused.
                    s.holder = task;
                    return Next::Do {
                        mem: lock.word(),
                        kind: AccessKind::Rmw,
                        order: Order::Acquire,
                        publishes: Publishes::Nothing,
                        after: After::Acquired,
                        by: Symbol::QueuedSpinLockSlowpath,
                    };
                }
                self.xchg_tail(lock, task)
            }
            LockWait::Pending { lock } => {
                // clear_pending_set_locked: one store of the word's low half.
                let s = &mut self.slots[lock.id as usize];
                s.pending = NONE;
                s.holder = task;
                Next::Do {
                    mem: lock.word(),
                    kind: AccessKind::Write,
                    order: Order::Posted,
                    publishes: Publishes::Nothing,
                    after: After::Acquired,
                    by: Symbol::QueuedSpinLockSlowpath,
                }
            }
            LockWait::Link { lock, prev } => Next::Do {
                // WRITE_ONCE(prev->next, node).
                mem: self.mcs_nodes[prev as usize],
                kind: AccessKind::Write,
                order: Order::Posted,
                publishes: Publishes::Link { prev, task },
                after: After::Look(LockWait::Queued { lock }),
                by: Symbol::QueuedSpinLockSlowpath,
            },
            LockWait::Queued { lock } => {
                let head = LockWait::Head { lock };
                match self.node_next[t] {
                    NONE => Next::Look(head),
                    next => Next::Do {
                        // prefetchw(next): ownership of the successor's
                        // node, for the hand-on store to come.
                        mem: self.mcs_nodes[next as usize],
                        kind: AccessKind::Write,
                        order: Order::PrefetchForWrite,
                        publishes: Publishes::Nothing,
                        after: After::Look(head),
                        by: Symbol::QueuedSpinLockSlowpath,
                    },
                }
            }
            LockWait::Head { lock } => {
                let s = &mut self.slots[lock.id as usize];
                debug_assert!(s.holder == NONE && s.pending == NONE);
                s.holder = task;
                if s.tail == task {
                    // The last in the queue: a cmpxchg clears the tail as it locks.
                    s.tail = NONE;
                    return Next::Do {
                        mem: lock.word(),
                        kind: AccessKind::Rmw,
                        order: Order::Acquire,
                        publishes: Publishes::Nothing,
                        after: After::Acquired,
                        by: Symbol::QueuedSpinLockSlowpath,
                    };
                }
                // set_locked: a store of the locked byte; then hand the queue on.
                Next::Do {
                    mem: lock.word(),
                    kind: AccessKind::Write,
                    order: Order::Posted,
                    publishes: Publishes::Nothing,
                    after: After::Move(LockWait::HandOn { lock }),
                    by: Symbol::QueuedSpinLockSlowpath,
                }
            }
            LockWait::HandOn { lock } | LockWait::AwaitNext { lock } => match self.node_next[t] {
                NONE => Next::Look(LockWait::AwaitNext { lock }),
                // arch_mcs_spin_unlock_contended(&next->locked).
                next => Next::Do {
                    mem: self.mcs_nodes[next as usize],
                    kind: AccessKind::Write,
                    order: Order::Posted,
                    publishes: Publishes::HandOn { next },
                    after: After::Acquired,
                    by: Symbol::QueuedSpinLockSlowpath,
                },
            },
            LockWait::Releasing { lock } => Self::release_store(lock, task),
        }
    }

    /// queued_spin_lock_slowpath from the fast path's failed cmpxchg: wait
    /// for a pending waiter's hand-over to settle (when `may_wait`: not
    /// again after that wait), then take the pending bit where nobody has
    /// it and nobody queues, else initialise the node and try the lock
    /// once more (queued_spin_trylock: a read of the word) before queueing.
    fn slow_path(&mut self, lock: LockRef, task: u32, may_wait: bool) -> Next {
        let s = &mut self.slots[lock.id as usize];
        if may_wait && s.pending_hand_over() {
            return Next::Look(LockWait::PendingSettles { lock });
        }
        if s.pending == NONE && s.tail == NONE {
            // fetch_set_pending: the one waiter before any queue.
            s.pending = task;
            return Next::Do {
                mem: lock.word(),
                kind: AccessKind::Rmw,
                order: Order::Acquire,
                publishes: Publishes::Nothing,
                after: After::Look(LockWait::Pending { lock }),
                by: Symbol::QueuedSpinLockSlowpath,
            };
        }
        Next::Do {
            mem: lock.word(),
            kind: AccessKind::Read,
            order: Order::Load,
            publishes: Publishes::Nothing,
            after: After::Move(LockWait::Trylock { lock }),
            by: Symbol::QueuedSpinLockSlowpath,
        }
    }

    /// xchg_tail: the task's node becomes the queue's tail.
    fn xchg_tail(&mut self, lock: LockRef, task: u32) -> Next {
        let t = task as usize;
        let s = &mut self.slots[lock.id as usize];
        let prev = std::mem::replace(&mut s.tail, task);
        self.node_next[t] = NONE;
        self.node_locked[t] = false;
        let after = if prev == NONE {
            After::Look(LockWait::Head { lock })
        } else {
            After::Move(LockWait::Link { lock, prev })
        };
        Next::Do {
            mem: lock.word(),
            kind: AccessKind::Rmw,
            order: Order::Full,
            publishes: Publishes::Nothing,
            after,
            by: Symbol::QueuedSpinLockSlowpath,
        }
    }

    /// A posted store is now the value of its line: what it carries is
    /// there for the waiters. `writes` is the line's write count with it.
    pub fn publish(&mut self, publishes: Publishes, writes: u32) {
        match publishes {
            Publishes::Nothing => {}
            Publishes::Release { id, task } => self.release(id, task, writes),
            Publishes::Link { prev, task } => self.node_next[prev as usize] = task,
            Publishes::HandOn { next } => self.node_locked[next as usize] = true,
        }
    }

    /// spin_unlock: the ticket lock serves the next ticket; the queued
    /// lock clears its locked byte. `word_writes` is the lock word's write
    /// count once the release's store is served.
    fn release(&mut self, id: u32, task: u32, word_writes: u32) {
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

    const LOCK: LockRef = LockRef::new(0, Mem { addr: 0, line: 0 });

    /// Tasks 0..8, task n's MCS node at 64 * (n + 1).
    fn locks(kind: LockKind) -> Locks {
        Locks::new(
            kind,
            CompareExchange::Locked,
            PendingWait::UntilSettled,
            1,
            (1..=8).map(|n| word(64 * n)).collect(),
        )
    }

    fn on_word(kind: AccessKind, order: Order, after: After, by: Symbol) -> Next {
        Next::Do {
            mem: LOCK.word(),
            kind,
            order,
            publishes: Publishes::Nothing,
            after,
            by,
        }
    }

    /// The slow path from the fast path's failed cmpxchg, past the
    /// trylock's read of the word where it queues.
    fn slow_path(l: &mut Locks, task: u32) -> Next {
        match l.next(LockWait::Slow { lock: LOCK }, task) {
            Next::Do {
                after: After::Move(trylock @ LockWait::Trylock { .. }),
                ..
            } => l.next(trylock, task),
            next => next,
        }
    }

    fn node_of(task: u64) -> Mem {
        word(64 * (task + 1))
    }

    #[test]
    fn the_ticket_release_reads_the_word_before_it_stores_and_the_queued_one_only_stores() {
        let release = Next::Do {
            mem: LOCK.word(),
            kind: AccessKind::Write,
            order: Order::Posted,
            publishes: Publishes::Release {
                id: LOCK.id,
                task: 3,
            },
            after: After::Released,
            by: Symbol::RawSpinUnlock,
        };
        let mut ticket = locks(LockKind::Ticket);
        let releasing = LockWait::Releasing { lock: LOCK };
        assert_eq!(
            ticket.unlock(LOCK, 3),
            on_word(
                AccessKind::Read,
                Order::Load,
                After::Move(releasing),
                Symbol::RawSpinUnlock
            )
        );
        assert_eq!(ticket.next(releasing, 3), release);
        assert_eq!(locks(LockKind::Queued).unlock(LOCK, 3), release);
    }

    #[test]
    fn a_fast_path_cmpxchg_that_finds_the_lock_taken_only_reads_the_word_on_a_load_reserved_core() {
        for (compare_exchange, failed) in [
            (CompareExchange::Locked, AccessKind::Rmw),
            (CompareExchange::LoadReserved, AccessKind::Read),
        ] {
            let mut l = Locks::new(
                LockKind::Queued,
                compare_exchange,
                PendingWait::UntilSettled,
                1,
                vec![word(64); 2],
            );
            let taken = l.arrive(LOCK, 0);
            assert!(matches!(
                taken,
                Next::Do {
                    kind: AccessKind::Rmw,
                    ..
                }
            ));
            let Next::Do { kind, after, .. } = l.arrive(LOCK, 1) else {
                panic!("the fast path's cmpxchg is an access");
            };
            assert_eq!(kind, failed, "{compare_exchange:?}");
            assert_eq!(after, After::Move(LockWait::Slow { lock: LOCK }));
        }
    }

    #[test]
    fn a_slow_path_that_finds_a_pending_hand_over_reads_until_it_settles_then_takes_the_pending_bit(
    ) {
        let slow = LockWait::Slow { lock: LOCK };
        let settles = LockWait::PendingSettles { lock: LOCK };
        let pending = LockWait::Pending { lock: LOCK };
        for wait in [PendingWait::UntilSettled, PendingWait::OneReread] {
            let mut l = Locks::new(
                LockKind::Queued,
                CompareExchange::Locked,
                wait,
                1,
                (1..=8).map(|n| word(64 * n)).collect(),
            );
            l.arrive(LOCK, 1);
            l.arrive(LOCK, 2);
            l.next(slow, 2);
            // 1 releases: the word is _Q_PENDING_VAL until 2 sets locked.
            l.release(0, 1, 1);
            l.arrive(LOCK, 3);
            assert_eq!(l.next(slow, 3), Next::Look(settles));
            assert_eq!(l.watched(settles, 3), LOCK.word());
            assert!(l.moves_by_atomic(settles, 3));
            // x86 reads on while the hand-over lasts; one re-read elsewhere.
            assert_eq!(
                l.sees_turn(settles, 3),
                wait == PendingWait::OneReread,
                "{wait:?}"
            );
            // clear_pending_set_locked: settled, and the pending bit is free.
            l.next(pending, 2);
            assert!(l.sees_turn(settles, 3));
            assert_eq!(
                l.next(settles, 3),
                on_word(
                    AccessKind::Rmw,
                    Order::Acquire,
                    After::Look(pending),
                    Symbol::QueuedSpinLockSlowpath
                )
            );
        }
    }

    #[test]
    fn a_waiter_whose_node_is_initialised_takes_a_lock_freed_meanwhile_without_queueing() {
        let mut l = locks(LockKind::Queued);
        let trylock = LockWait::Trylock { lock: LOCK };
        l.arrive(LOCK, 1);
        l.arrive(LOCK, 2);
        l.next(LockWait::Slow { lock: LOCK }, 2);
        l.arrive(LOCK, 3);
        assert_eq!(
            l.next(LockWait::Slow { lock: LOCK }, 3),
            on_word(
                AccessKind::Read,
                Order::Load,
                After::Move(trylock),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        // 1 releases and 2, the pending waiter, takes and releases it too.
        l.release(0, 1, 1);
        l.next(LockWait::Pending { lock: LOCK }, 2);
        l.release(0, 2, 2);
        assert_eq!(
            l.next(trylock, 3),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Acquired,
                Symbol::QueuedSpinLockSlowpath
            )
        );
        assert_eq!(
            l.arrive(LOCK, 4),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Move(LockWait::Slow { lock: LOCK }),
                Symbol::RawSpinLock
            )
        );
    }

    #[test]
    fn ticket_lock_serves_in_arrival_order() {
        let mut l = locks(LockKind::Ticket);
        assert_eq!(
            l.arrive(LOCK, 0),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Acquired,
                Symbol::RawSpinLock
            )
        );
        let first = LockWait::Ticket {
            lock: LOCK,
            ticket: 1,
        };
        let second = LockWait::Ticket {
            lock: LOCK,
            ticket: 2,
        };
        assert_eq!(
            l.arrive(LOCK, 1),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Spin(first),
                Symbol::RawSpinLock
            )
        );
        assert_eq!(
            l.arrive(LOCK, 2),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Spin(second),
                Symbol::RawSpinLock
            )
        );
        // Every ticket waiter watches the lock word.
        assert_eq!(
            (l.watched(first, 1), l.watched(second, 2)),
            (LOCK.word(), LOCK.word())
        );
        assert!(!l.sees_turn(first, 1));
        l.release(0, 0, 1);
        assert!(!l.sees_turn(second, 2));
        assert!(l.sees_turn(first, 1));
        assert_eq!(l.next(first, 1), Next::Acquired);
        l.release(0, 1, 2);
        assert!(l.sees_turn(second, 2));
        assert_eq!(l.released_at(0), 2);
    }

    #[test]
    fn qspinlock_has_a_pending_waiter_then_an_mcs_queue() {
        let mut l = locks(LockKind::Queued);
        let slow = After::Move(LockWait::Slow { lock: LOCK });
        let pending = LockWait::Pending { lock: LOCK };
        let head = LockWait::Head { lock: LOCK };
        let queued = LockWait::Queued { lock: LOCK };
        // The fast path's cmpxchg takes a free lock.
        assert_eq!(
            l.arrive(LOCK, 1),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Acquired,
                Symbol::RawSpinLock
            )
        );
        // The first waiter sets the pending bit and spins on the lock word.
        assert_eq!(
            l.arrive(LOCK, 2),
            on_word(AccessKind::Rmw, Order::Acquire, slow, Symbol::RawSpinLock)
        );
        assert_eq!(
            l.next(LockWait::Slow { lock: LOCK }, 2),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Look(pending),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        // The next initialises its node, tries the lock once more with a
        // read of the word (queued_spin_trylock), finds it held and
        // exchanges the tail: the queue was empty, so it is the head.
        assert_eq!(
            l.arrive(LOCK, 3),
            on_word(AccessKind::Rmw, Order::Acquire, slow, Symbol::RawSpinLock)
        );
        let trylock = LockWait::Trylock { lock: LOCK };
        assert_eq!(
            l.next(LockWait::Slow { lock: LOCK }, 3),
            on_word(
                AccessKind::Read,
                Order::Load,
                After::Move(trylock),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        assert!(l.moves_by_atomic(trylock, 3));
        assert_eq!(
            l.next(trylock, 3),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Look(head),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        // The one after links itself behind 3 with a store to 3's node.
        assert_eq!(
            l.arrive(LOCK, 4),
            on_word(AccessKind::Rmw, Order::Acquire, slow, Symbol::RawSpinLock)
        );
        let link = LockWait::Link {
            lock: LOCK,
            prev: 3,
        };
        assert_eq!(
            l.next(LockWait::Slow { lock: LOCK }, 4),
            on_word(
                AccessKind::Read,
                Order::Load,
                After::Move(trylock),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        assert_eq!(
            l.next(trylock, 4),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Move(link),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        let linked = Publishes::Link { prev: 3, task: 4 };
        assert_eq!(
            l.next(link, 4),
            Next::Do {
                mem: node_of(3),
                kind: AccessKind::Write,
                order: Order::Posted,
                publishes: linked,
                after: After::Look(queued),
                by: Symbol::QueuedSpinLockSlowpath,
            }
        );
        l.publish(linked, 4);
        // The pending waiter and the head watch the lock word, 4 its own node.
        assert_eq!(l.watched(pending, 2), LOCK.word());
        assert_eq!(l.watched(head, 3), LOCK.word());
        assert_eq!(l.watched(queued, 4), node_of(4));
        assert!(!l.sees_turn(pending, 2) && !l.sees_turn(head, 3));
        // The release lets the pending waiter in with a plain store.
        l.release(0, 1, 5);
        assert!(l.sees_turn(pending, 2));
        assert!(!l.sees_turn(head, 3), "the pending bit still stands");
        assert_eq!(
            l.next(pending, 2),
            on_word(
                AccessKind::Write,
                Order::Posted,
                After::Acquired,
                Symbol::QueuedSpinLockSlowpath
            )
        );
        l.release(0, 2, 6);
        // The head takes it with set_locked, then hands the queue on to 4.
        assert!(l.sees_turn(head, 3) && !l.sees_turn(queued, 4));
        assert!(!l.moves_by_atomic(head, 3), "4 is behind it: no cmpxchg");
        let hand_on = LockWait::HandOn { lock: LOCK };
        assert_eq!(
            l.next(head, 3),
            on_word(
                AccessKind::Write,
                Order::Posted,
                After::Move(hand_on),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        let handed_on = Publishes::HandOn { next: 4 };
        assert_eq!(
            l.next(hand_on, 3),
            Next::Do {
                mem: node_of(4),
                kind: AccessKind::Write,
                order: Order::Posted,
                publishes: handed_on,
                after: After::Acquired,
                by: Symbol::QueuedSpinLockSlowpath,
            }
        );
        // The successor is the head once the hand-on's store is its node's value.
        assert!(!l.sees_turn(queued, 4));
        l.publish(handed_on, 1);
        assert!(l.sees_turn(queued, 4));
        // 4 is the head with nobody behind: it looks at the lock word, and,
        // being the tail, takes the lock with a cmpxchg (an atomic on the
        // word, where 3, followed by 4, took it with a store).
        assert_eq!(l.next(queued, 4), Next::Look(head));
        assert!(l.moves_by_atomic(head, 4) && !l.moves_by_atomic(queued, 4));
        assert!(l.moves_by_atomic(LockWait::Slow { lock: LOCK }, 5));
        l.release(0, 3, 7);
        assert_eq!(
            l.next(head, 4),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Acquired,
                Symbol::QueuedSpinLockSlowpath
            )
        );
        // The lock and its queue are empty again: the fast path works.
        l.release(0, 4, 8);
        assert_eq!(
            l.arrive(LOCK, 5),
            on_word(
                AccessKind::Rmw,
                Order::Acquire,
                After::Acquired,
                Symbol::RawSpinLock
            )
        );
    }

    #[test]
    fn a_queued_waiter_made_head_prefetches_its_successors_node_for_write_not_by_a_store() {
        let mut l = locks(LockKind::Queued);
        let queued = LockWait::Queued { lock: LOCK };
        // 1 holds, 2 pends, 3 heads the queue, 4 and 5 queue behind it.
        l.arrive(LOCK, 1);
        for task in 2..=5 {
            l.arrive(LOCK, task);
            if let Next::Do {
                after: After::Move(LockWait::Link { prev, .. }),
                ..
            } = slow_path(&mut l, task)
            {
                l.publish(Publishes::Link { prev, task }, 0);
            }
        }
        l.publish(Publishes::HandOn { next: 4 }, 0);
        // 4 is the head now, 5 behind it: it asks for 5's node for write,
        // a request for ownership that carries nothing and is no store.
        assert_eq!(
            l.next(queued, 4),
            Next::Do {
                mem: node_of(5),
                kind: AccessKind::Write,
                order: Order::PrefetchForWrite,
                publishes: Publishes::Nothing,
                after: After::Look(LockWait::Head { lock: LOCK }),
                by: Symbol::QueuedSpinLockSlowpath,
            }
        );
    }

    #[test]
    fn a_head_whose_successor_has_not_linked_waits_for_it() {
        let mut l = locks(LockKind::Queued);
        let slow = LockWait::Slow { lock: LOCK };
        l.arrive(LOCK, 0);
        l.arrive(LOCK, 1);
        l.next(slow, 1); // pending
        l.arrive(LOCK, 2);
        slow_path(&mut l, 2); // head
        l.arrive(LOCK, 3);
        let link = LockWait::Link {
            lock: LOCK,
            prev: 2,
        };
        assert_eq!(
            slow_path(&mut l, 3),
            on_word(
                AccessKind::Rmw,
                Order::Full,
                After::Move(link),
                Symbol::QueuedSpinLockSlowpath
            )
        );
        l.release(0, 0, 1);
        l.next(LockWait::Pending { lock: LOCK }, 1);
        l.release(0, 1, 2);
        // 3 exchanged the tail but has not stored its link yet.
        let hand_on = LockWait::HandOn { lock: LOCK };
        l.next(LockWait::Head { lock: LOCK }, 2);
        let await_next = LockWait::AwaitNext { lock: LOCK };
        assert_eq!(l.next(hand_on, 2), Next::Look(await_next));
        assert_eq!(l.watched(await_next, 2), node_of(2));
        assert!(!l.sees_turn(await_next, 2));
        let Next::Do { publishes, .. } = l.next(link, 3) else {
            panic!("the link is a store")
        };
        assert!(
            !l.sees_turn(await_next, 2),
            "the link is not yet its line's value"
        );
        l.publish(publishes, 3);
        assert!(l.sees_turn(await_next, 2));
        assert_eq!(
            l.next(await_next, 2),
            Next::Do {
                mem: node_of(3),
                kind: AccessKind::Write,
                order: Order::Posted,
                publishes: Publishes::HandOn { next: 3 },
                after: After::Acquired,
                by: Symbol::QueuedSpinLockSlowpath,
            }
        );
    }
}
