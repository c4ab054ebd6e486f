//! Waiting: a task that spins watches one line; the next write to it costs
//! the task one re-read, after which it looks again. For a kernel spinlock
//! what it looks at, and what it does next, is the lock protocol's
//! (kernel::spinlock); this file prices it.

use super::attribution::Attribute;
use super::event::{Event, Waiter};
use super::memory_order::{Carries, Fence};
use super::{Engine, Redo, Spin, Wait};
use crate::coherence::{AccessKind, Class, Turn};
use crate::kernel::script::LockRef;
use crate::kernel::spinlock::{After, LockWait, Next, Order};
use crate::machine::Ps;
use crate::memory::{LineId, Mem};
use crate::symbol::Symbol;

/// The tasks spinning on each watched line, as lists: a line's `watch` in
/// the directory is 1 + its list's index, 0 for none.
#[derive(Default)]
pub(super) struct Spinners {
    lists: Vec<Vec<u32>>,
    /// Lists no line uses, for the next line watched.
    free: Vec<u32>,
}

impl Spinners {
    /// Adds `task` to the spinners of the line whose watch is `slot`,
    /// giving the line a list if it has none.
    fn watch(&mut self, slot: &mut u32, task: u32) {
        if *slot == 0 {
            let index = self.free.pop().unwrap_or_else(|| {
                self.lists.push(Vec::new());
                self.lists.len() as u32 - 1
            });
            *slot = index + 1;
        }
        self.lists[*slot as usize - 1].push(task);
    }

    /// The spinners of list `index`, taken out: the list is free.
    pub(super) fn take(&mut self, index: usize) -> std::vec::Drain<'_, u32> {
        self.free.push(index as u32);
        self.lists[index].drain(..)
    }
}

impl<A: Attribute> Engine<'_, A> {
    /// The task's event has come: it runs on, or its spin has news.
    /// Always inlined into the event loop, its one caller, with the step
    /// loop inside it (run_script says why).
    #[inline(always)]
    pub(super) fn resume(&mut self, task: u32, now: Ps) {
        match self.tasks[task as usize].wait {
            Wait::Running => self.run_script(task, now),
            Wait::Blocked => unreachable!("a blocked task has no event until it is woken"),
            // The line changed under the spinner: one transfer to see how.
            Wait::Spin(spin) => self.reread(task, now, self.watched(task, spin), spin),
            Wait::Check { spin, turn } => self.recheck(task, now, spin, turn),
            Wait::Lock { lock, after } => {
                self.tasks[task as usize].wait = Wait::Running;
                self.after(task, now, lock, after);
            }
            Wait::AtLine => unreachable!("a task waiting at a line has no event until granted"),
            Wait::Drain => self.redo(task, now),
        }
    }

    /// A line's turn: its server may be free. The granted waiter makes its
    /// request again, served now; while others wait, the next turn comes
    /// when the server frees after it.
    pub(super) fn line_turn(&mut self, queue: u32, now: Ps) {
        match self.dir.turn(self.m, queue, now) {
            Turn::Busy(at) => self.queue.push(at, Event::LineTurn(queue)),
            Turn::Idle => {}
            Turn::Granted { waiter, line, more } => {
                match Waiter::of_id(waiter) {
                    Waiter::StoreBuffer(cpu) => self.store_granted(cpu, line, now),
                    Waiter::Task(waiter) => {
                        let t = &mut self.tasks[waiter as usize];
                        debug_assert_eq!(t.wait, Wait::AtLine, "only a waiting task is granted");
                        t.granted = Some(line);
                        self.redo(waiter, now);
                        // A grant not taken (the redo asked for another line
                        // first) lapses with its task's next request.
                        self.tasks[waiter as usize].granted = None;
                    }
                }
                if more {
                    let at = self.dir.next_turn(queue, now);
                    self.queue.push(at, Event::LineTurn(queue));
                }
            }
        }
    }

    /// The task's wait is over: it makes its request again as it parked it.
    fn redo(&mut self, task: u32, now: Ps) {
        self.tasks[task as usize].wait = Wait::Running;
        match self.tasks[task as usize].line.redo {
            Redo::Step => self.step(task, now),
            Redo::Reread(spin) => self.reread(task, now, self.watched(task, spin), spin),
            Redo::Follow { lock, next } => {
                if let Some(at) = self.follow(task, now, lock, next) {
                    self.step(task, at);
                }
            }
            Redo::Move(wait) => {
                if let Some(at) = self.move_on(task, now, wait) {
                    self.step(task, at);
                }
            }
        }
    }

    /// Takes the protocol's next move from `wait`, as `follow` does. A move
    /// that starts with an atomic on the lock word waits for the word's
    /// line when it is busy, and the protocol decides at the grant.
    fn move_on(&mut self, task: u32, now: Ps, wait: LockWait) -> Option<Ps> {
        let lock = wait.lock();
        let line = lock.word().line;
        if self.tasks[task as usize].granted != Some(line)
            && self.locks.moves_by_atomic(wait, task)
            && self.atomic_waits(task, now, line)
        {
            return self.park(task, Redo::Move(wait));
        }
        let next = self.locks.next(wait, task);
        self.follow(task, now, lock, next)
    }

    /// The line a spinning task watches.
    #[inline]
    fn watched(&self, task: u32, spin: Spin) -> Mem {
        match spin {
            Spin::Lock(wait) => self.locks.watched(wait, task),
            Spin::Word { word, .. } => word.mem,
        }
    }

    /// Reads the watched line; at the read's end the task acts on what the
    /// read returned. The directory serves requests on a line in the order
    /// they are made, so the value the read returns is the state now.
    pub(super) fn reread(&mut self, task: u32, now: Ps, line: Mem, spin: Spin) {
        let turn = match spin {
            Spin::Lock(wait) => self.locks.sees_turn(wait, task),
            Spin::Word { word, until } => until.holds(self.user_value(task, word)),
        };
        let by = match spin {
            Spin::Lock(wait) => wait.symbol(),
            Spin::Word { .. } => Symbol::Workload,
        };
        let read_writes = self.dir.writes(line.line);
        let Some(read) = self.request(task, now, line, AccessKind::Read, by) else {
            self.park(task, Redo::Reread(spin));
            return;
        };
        let done = read.done;
        let t = &mut self.tasks[task as usize];
        t.wait = Wait::Check { spin, turn };
        t.line.read_writes = read_writes;
        self.queue.push(done, Event::Task(task));
    }

    /// A spinner's re-read completed: it goes on when the read showed its
    /// turn, else it spins on. A write served after the read already
    /// changed the line, so the spinner reads again at once.
    fn recheck(&mut self, task: u32, now: Ps, spin: Spin, turn: bool) {
        if !turn {
            let line = self.watched(task, spin);
            if self.dir.writes(line.line) != self.tasks[task as usize].line.read_writes {
                self.reread(task, now, line, spin);
            } else {
                self.spin(task, spin);
            }
            return;
        }
        match spin {
            Spin::Lock(wait) => {
                let lock = wait.lock();
                // A read of the lock word that showed it free follows its
                // release (a settled pending hand-over frees nothing).
                if wait.free_on_turn() {
                    self.count_stale_read(task, lock);
                }
                self.tasks[task as usize].wait = Wait::Running;
                if let Some(at) = self.move_on(task, now, wait) {
                    self.step(task, at);
                }
            }
            Spin::Word { .. } => {
                self.tasks[task as usize].wait = Wait::Running;
                self.step(task, now);
            }
        }
    }

    /// The record a test of causality reads: an acquisition that follows
    /// from a read of the lock word served before the lock's release.
    #[inline]
    fn count_stale_read(&mut self, task: u32, lock: LockRef) {
        let read = self.tasks[task as usize].line.read_writes;
        let released = self.locks.released_at(lock.id);
        // Write counts wrap: compare by distance.
        if (released.wrapping_sub(read) as i32) > 0 {
            self.record.stale_acquisition();
        }
    }

    /// Does, from `now`, what the lock's protocol said the task does next:
    /// the time the task goes on at in this event holding the lock, or None
    /// when its next event is scheduled. Always inlined: as a call it read
    /// the protocol's `Next` back from memory its caller had just written
    /// field by field, loads the host cannot forward from its store buffer
    /// (a third of the call's time in the 64-CPU benchmark).
    #[inline(always)]
    pub(super) fn follow(&mut self, task: u32, now: Ps, lock: LockRef, next: Next) -> Option<Ps> {
        match next {
            Next::Acquired => {
                self.acquired(task, now, lock.id);
                Some(now)
            }
            Next::Look(wait) => {
                let spin = Spin::Lock(wait);
                self.reread(task, now, self.watched(task, spin), spin);
                None
            }
            Next::Do {
                mem,
                kind,
                order,
                publishes,
                after,
                by,
            } => {
                let redo = || Redo::Follow { lock, next };
                let (at, own_cache) = match order {
                    Order::Posted => {
                        // A plain store retires into the store buffer.
                        let carries = Carries::Lock(publishes);
                        let stored = self.store(task, now, mem, by, carries, redo)?;
                        (stored.at, stored.at_once)
                    }
                    Order::PrefetchForWrite => {
                        // Issued, not waited for; the directory moves the line.
                        let cpu = self.tasks[task as usize].cpu;
                        self.dir.prefetch_for_write(self.m, cpu, now, mem.line);
                        (now, true)
                    }
                    Order::Load => {
                        let Some(out) = self.request(task, now, mem, kind, by) else {
                            return self.park(task, redo());
                        };
                        (out.done, self.in_own_cache(now, out))
                    }
                    Order::Full | Order::Acquire => {
                        // A locked RMW that orders the stores before it
                        // starts once the store buffer drains: it is asked
                        // for now and finishes that much later.
                        let drain = if self.orders_earlier_stores(order) {
                            match self.fence_pending(task, now) {
                                Fence::Now => 0,
                                Fence::At(ready) => ready - now,
                                Fence::Drain => return self.await_drain(task, redo()),
                            }
                        } else {
                            0
                        };
                        let Some(out) = self.request(task, now, mem, kind, by) else {
                            return self.park(task, redo());
                        };
                        (out.done + drain, out.class == Class::L1Hit && drain == 0)
                    }
                };
                match after {
                    After::Acquired => {
                        self.acquired(task, at, lock.id);
                        self.go_on(task, at, own_cache)
                    }
                    After::Spin(wait) => {
                        // What the atomic returned is its turn or not; a
                        // write after it wakes the task to read again.
                        let t = &mut self.tasks[task as usize];
                        t.line.read_writes = self.dir.writes(mem.line);
                        t.wait = Wait::Check {
                            spin: Spin::Lock(wait),
                            turn: false,
                        };
                        self.queue.push(at, Event::Task(task));
                        None
                    }
                    // The hold is counted when the release commits.
                    After::Released => self.go_on(task, at, own_cache),
                    // A load within the task's own cache needs no event of
                    // its own; the protocol's atomics and stores keep theirs.
                    After::Move(wait) if order == Order::Load && own_cache => {
                        self.move_on(task, at, wait)
                    }
                    After::Look(_) | After::Move(_) => {
                        self.tasks[task as usize].wait = Wait::Lock { lock, after };
                        self.queue.push(at, Event::Task(task));
                        None
                    }
                }
            }
        }
    }

    /// The protocol's access completed: the task reads the line it now
    /// watches, or takes the protocol's next move.
    fn after(&mut self, task: u32, now: Ps, lock: LockRef, after: After) {
        let went_on = match after {
            After::Look(wait) => self.follow(task, now, lock, Next::Look(wait)),
            After::Move(wait) => self.move_on(task, now, wait),
            After::Acquired | After::Spin(_) | After::Released => {
                unreachable!("follow goes on with these itself")
            }
        };
        if let Some(at) = went_on {
            self.step(task, at);
        }
    }

    /// The task spins until the next write to the line it watches.
    fn spin(&mut self, task: u32, spin: Spin) {
        let line = self.watched(task, spin).line;
        self.tasks[task as usize].wait = Wait::Spin(spin);
        self.watch(line, task);
    }

    fn watch(&mut self, line: LineId, task: u32) {
        self.spinners.watch(self.dir.watch(line), task);
    }
}
