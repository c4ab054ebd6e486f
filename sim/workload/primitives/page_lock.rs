//! The kernel's page lock (mm/filemap.c; kernel/wait.c in v3.8): `lock_page`
//! is a test-and-set of PG_locked in the struct page's `flags`; while the
//! bit is set, `__lock_page` sleeps on the page's slot of the page wait
//! table (sim/kernel/page_wait.rs): under the slot's spinlock onto its
//! list (and, where the table has PG_waiters, that bit set), asleep until
//! PG_locked clears, then the bit tried again, against tasks that never
//! slept; once it has the bit, a task that slept leaves the list under
//! the slot's lock. `unlock_page` clears PG_locked and, where the list
//! holds a waiter, wakes one under the slot's lock: v3.8 reads the list
//! every time (`waitqueue_active`), a table with PG_waiters only when the
//! bit says so.

use super::Primitive;
use crate::kernel::page_wait::WaitSlot;
use crate::task::{AccessKind, AtomicOp, LockRef, Op, Until, UserWord};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A page's PG_locked and the wait-table slot it hashes to: what
/// lock_page and unlock_page touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageLock {
    /// PG_locked of the struct page's `flags`: 1 while the page is locked.
    pub flags: UserWord,
    pub slot: WaitSlot,
    pub slot_lock: LockRef,
    /// The design's PG_waiters: an unlock looks at the slot only when set.
    pub waiters_bit: bool,
}

/// The tasks on the wait-table lists of one run's pages, as the kernel's
/// lists hold them: what an unlock reads to decide whether to wake one.
/// Each workload's run has its own, shared by its tasks' page locks.
#[derive(Debug, Default)]
pub struct PageWaiters(AtomicU32);

impl PageWaiters {
    fn join(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn leave(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }

    fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }
}

/// One step of a page lock or unlock: an op, or one whose issue also
/// changes the wait lists, or one whose return decides what follows.
#[derive(Clone, Copy, Debug)]
enum Step {
    Op(Op),
    /// Onto the slot's list, or off it: a write of its head.
    JoinList,
    LeaveList,
    /// lock_page's test-and-set of PG_locked.
    TestAndSet,
    /// unlock_page's clear of PG_locked.
    Clear,
    /// waitqueue_active: the read of the slot's list.
    CheckList,
}

/// The steps of a page lock's or unlock's run, and which deciding step is in flight.
struct Steps {
    page: PageLock,
    waiters: Arc<PageWaiters>,
    queue: VecDeque<Step>,
    deciding: Option<Step>,
}

impl Steps {
    fn new(page: PageLock, waiters: Arc<PageWaiters>, first: Step) -> Steps {
        Steps {
            page,
            waiters,
            queue: VecDeque::from([first]),
            deciding: None,
        }
    }

    fn next(&mut self) -> Option<Op> {
        let step = self.queue.pop_front()?;
        let page = self.page;
        self.deciding = None;
        Some(match step {
            Step::Op(op) => op,
            Step::JoinList | Step::LeaveList => {
                if matches!(step, Step::JoinList) {
                    self.waiters.join();
                } else {
                    self.waiters.leave();
                }
                Op::Access(page.slot.list, AccessKind::Write)
            }
            Step::TestAndSet => {
                self.deciding = Some(step);
                Op::Atomic(page.flags, AtomicOp::Exchange(1))
            }
            Step::Clear => {
                self.deciding = Some(step);
                Op::Atomic(page.flags, AtomicOp::Store(0))
            }
            Step::CheckList => {
                self.deciding = Some(step);
                Op::Access(page.slot.list, AccessKind::Read)
            }
        })
    }

    /// The slot's lock around `steps`.
    fn under_slot_lock(&mut self, steps: impl IntoIterator<Item = Step>) {
        let lock = self.page.slot_lock;
        self.queue.push_back(Step::Op(Op::SpinLock(lock)));
        self.queue.extend(steps);
        self.queue.push_back(Step::Op(Op::SpinUnlock(lock)));
    }

    /// unlock_page's wake of one waiter, where the list holds any.
    fn wake_one_if_waiting(&mut self) {
        if self.waiters.any() {
            let flags = self.page.flags.mem;
            self.under_slot_lock([Step::Op(Op::WakeUpOne(flags))]);
        }
    }
}

/// `lock_page`: the test-and-set, and while it finds the page locked, the
/// sleep on the wait table and the test-and-set again.
pub struct LockPage {
    steps: Steps,
    /// On the slot's list: it slept at least once.
    queued: bool,
}

impl LockPage {
    pub fn new(page: PageLock, waiters: Arc<PageWaiters>) -> LockPage {
        LockPage {
            steps: Steps::new(page, waiters, Step::TestAndSet),
            queued: false,
        }
    }
}

impl Primitive for LockPage {
    fn next(&mut self, _: Option<u32>) -> Option<Op> {
        self.steps.next()
    }

    fn returned(&mut self, old: u32) {
        if self.steps.deciding.take().is_none() {
            return;
        }
        let page = self.steps.page;
        match (old, self.queued) {
            // finish_wait: off the slot's list.
            (0, true) => self.steps.under_slot_lock([Step::LeaveList]),
            (0, false) => {}
            // prepare_to_wait_exclusive, then sleep while PG_locked is set.
            _ => {
                let mut join = Vec::new();
                if !self.queued {
                    join.push(Step::JoinList);
                    if page.waiters_bit {
                        join.push(Step::Op(Op::Access(page.flags.mem, AccessKind::Rmw)));
                    }
                }
                self.steps.under_slot_lock(join);
                self.steps.queue.extend([
                    Step::Op(Op::WaitEvent(page.flags, Until::Equals(0))),
                    Step::TestAndSet,
                ]);
                self.queued = true;
            }
        }
    }
}

/// `unlock_page`: the clear of PG_locked, and the wake of one waiter
/// where the wait list (or PG_waiters) says there is one.
pub struct UnlockPage {
    steps: Steps,
}

impl UnlockPage {
    pub fn new(page: PageLock, waiters: Arc<PageWaiters>) -> UnlockPage {
        UnlockPage {
            steps: Steps::new(page, waiters, Step::Clear),
        }
    }
}

impl Primitive for UnlockPage {
    fn next(&mut self, _: Option<u32>) -> Option<Op> {
        self.steps.next()
    }

    fn returned(&mut self, _: u32) {
        match self.steps.deciding.take() {
            Some(Step::Clear) if !self.steps.page.waiters_bit => {
                self.steps.queue.push_back(Step::CheckList);
            }
            Some(Step::Clear | Step::CheckList) => self.steps.wake_one_if_waiting(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Mem;
    use crate::task::KeyKind;

    fn page(waiters_bit: bool) -> PageLock {
        let mem = |addr: u64| Mem {
            addr,
            line: (addr / 64) as u32,
        };
        PageLock {
            flags: UserWord {
                mem: mem(0),
                kind: KeyKind::SharedFile,
            },
            slot: WaitSlot {
                index: 3,
                lock: mem(4096),
                list: mem(4104),
            },
            slot_lock: LockRef::new(0, mem(4096)),
            waiters_bit,
        }
    }

    /// Runs `primitive` with each op's return taken from `returns` in
    /// turn (0 past their end), giving the ops it issued.
    fn run(mut primitive: impl Primitive, returns: &[u32]) -> Vec<Op> {
        let mut ops = Vec::new();
        let mut returns = returns.iter().copied();
        while let Some(op) = primitive.next(None) {
            ops.push(op);
            primitive.returned(returns.next().unwrap_or(0));
        }
        ops
    }

    #[test]
    fn an_unlocked_page_is_locked_with_one_test_and_set() {
        let waiters = Arc::new(PageWaiters::default());
        let ops = run(LockPage::new(page(false), waiters.clone()), &[0]);
        assert_eq!(ops, [Op::Atomic(page(false).flags, AtomicOp::Exchange(1))]);
        assert!(!waiters.any());
    }

    #[test]
    fn a_locked_page_is_waited_for_on_its_slot_then_taken_and_the_list_left() {
        for waiters_bit in [false, true] {
            let p = page(waiters_bit);
            let waiters = Arc::new(PageWaiters::default());
            let mut lock = LockPage::new(p, waiters.clone());
            let test_and_set = Op::Atomic(p.flags, AtomicOp::Exchange(1));
            assert_eq!(lock.next(None), Some(test_and_set));
            lock.returned(1);
            let mut asleep = vec![
                Op::SpinLock(p.slot_lock),
                Op::Access(p.slot.list, AccessKind::Write),
            ];
            if waiters_bit {
                asleep.push(Op::Access(p.flags.mem, AccessKind::Rmw));
            }
            asleep.extend([
                Op::SpinUnlock(p.slot_lock),
                Op::WaitEvent(p.flags, Until::Equals(0)),
                test_and_set,
            ]);
            for op in &asleep {
                assert_eq!(lock.next(None).as_ref(), Some(op));
                lock.returned(0);
            }
            assert!(waiters.any(), "it stays on the list until it has the bit");
            let rest = run(lock, &[]);
            assert_eq!(
                rest,
                [
                    Op::SpinLock(p.slot_lock),
                    Op::Access(p.slot.list, AccessKind::Write),
                    Op::SpinUnlock(p.slot_lock),
                ]
            );
            assert!(!waiters.any());
        }
    }

    #[test]
    fn a_task_that_slept_joins_the_list_once_however_often_it_finds_the_page_locked() {
        let p = page(false);
        let waiters = Arc::new(PageWaiters::default());
        // Locked, locked again after the wake, then free.
        let ops = run(
            LockPage::new(p, waiters.clone()),
            &[1, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        );
        let joins = ops
            .iter()
            .filter(|op| **op == Op::Access(p.slot.list, AccessKind::Write))
            .count();
        assert_eq!(joins, 2, "one join and one leave: {ops:?}");
        assert!(!waiters.any());
    }

    #[test]
    fn an_unlock_wakes_one_waiter_only_when_the_list_holds_one() {
        for waiters_bit in [false, true] {
            let p = page(waiters_bit);
            let clear = Op::Atomic(p.flags, AtomicOp::Store(0));
            let check = Op::Access(p.slot.list, AccessKind::Read);
            let wake = [
                Op::SpinLock(p.slot_lock),
                Op::WakeUpOne(p.flags.mem),
                Op::SpinUnlock(p.slot_lock),
            ];
            let waiters = Arc::new(PageWaiters::default());
            let alone = run(UnlockPage::new(p, waiters.clone()), &[]);
            let mut expected = vec![clear];
            if !waiters_bit {
                expected.push(check);
            }
            assert_eq!(alone, expected);
            waiters.join();
            let waited = run(UnlockPage::new(p, waiters.clone()), &[]);
            expected.extend(wake);
            assert_eq!(waited, expected);
        }
    }
}
