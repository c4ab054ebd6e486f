//! futex_wait and futex_wake (kernel/futex/waitwake.c): the script of each,
//! per era, and the state they change. Function only, built on core.rs:
//! the chains, the user words' values, who sleeps. What each step costs is
//! the engine's.

use super::core::{FutexSystem, InFlight, EAGAIN};
use super::script::{Cost, Decision, Script, Step, WaitersWord};
use super::table::WakeBarrier;
use crate::memory::{Mem, MemoryMap};
use crate::symbol::Symbol;

impl FutexSystem {
    pub(super) fn begin_wait(&mut self, f: &InFlight, uaddr: Mem, s: &mut Script) {
        // hb_waiters_inc: an atomic with a full barrier, before the lock.
        self.waiters_inc(f.lock, f.waiters(), s);
        s.push(Step::Lock(f.lock));
        // The compare needs the word, but the queueing stores after it do
        // not wait for it: they commit behind it, the unlock included.
        s.push(Step::load(uaddr, Symbol::FutexWaitSetup));
        s.push(Step::Decide(Decision::WaitCompare));
    }

    pub(super) fn begin_wake(&self, task: u32, f: &InFlight, s: &mut Script) {
        match f.waiters() {
            // 3.14+: a barrier and a read of `waiters`; no lock if nobody
            // waits. From 5.7 the barrier is futex_hb_waiters_pending's own
            // smp_mb(); before, get_futex_key's (core.rs).
            Some(w) => {
                if self.hash.design.path.wake_barrier == WakeBarrier::BeforeWaitersRead {
                    s.push(self.full_barrier(task, Symbol::FutexHbWaitersPending));
                }
                // The decision is taken as the line serves the read.
                s.push(Step::WaitersRead(WaitersWord::new(f.lock.id, w)));
            }
            None => {
                s.push(Step::Lock(f.lock));
                s.push(Step::Decide(Decision::WakeWalk));
            }
        }
    }

    /// futex_wait under the bucket lock: EAGAIN if the word changed, else
    /// queue and sleep. Returns what the wait returns once it is over.
    pub(super) fn wait_compare(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        f: &InFlight,
        val: u32,
        s: &mut Script,
    ) -> i64 {
        let lock = f.lock;
        if self.value_of(&f.key) != val {
            self.unlock_and_drop_waiter(f, s);
            return EAGAIN;
        }
        self.queue(memory, task, f.bucket, f.key, s);
        self.waiters_arrived(f.lock);
        s.push(Step::Unlock(lock));
        s.push(Step::Compute(Cost::Schedule));
        s.push(Step::Block);
        0
    }

    /// futex_wake after reading `waiters` (3.14+): nothing to do when it is
    /// zero, which returns 0; else take the lock and walk the chain (None:
    /// the op goes on to that decision). `waiters` counts a task from its
    /// increment before the lock, so a waker sees one that has not queued
    /// yet, or is about to give up, and takes the lock for nothing.
    pub(super) fn wake_check_waiters(&self, f: &InFlight, s: &mut Script) -> Option<i64> {
        if self.waiters_pending(f.bucket, f.lock) {
            s.push(Step::Lock(f.lock));
            s.push(Step::Decide(Decision::WakeWalk));
            return None;
        }
        Some(0)
    }

    /// futex_wake under the bucket lock: unqueue up to `nr` waiters on the
    /// key, unlock, then wake them. Returns how many it woke.
    pub(super) fn wake_walk(
        &mut self,
        memory: &MemoryMap,
        f: &InFlight,
        nr: u32,
        s: &mut Script,
    ) -> i64 {
        let lock = f.lock;
        let woken = self.unqueue_matches(memory, f.bucket, &f.key, nr, Symbol::FutexWake, s);
        s.push(Step::Unlock(lock));
        let n = woken.len() as i64;
        s.extend(woken.into_iter().map(Step::Wake));
        n
    }
}
