//! FUTEX_LOCK_PI and FUTEX_UNLOCK_PI (kernel/futex/pi.c): a lock whose owner's
//! TID is in the user word, whose waiters queue on the bucket chain and on an
//! rt_mutex in a `futex_pi_state`, and which the unlocker hands directly to
//! the top waiter. Function only, built on core.rs like waitwake.rs.
//!
//! Simplified: every task has the same priority, so the rt_mutex is FIFO and
//! nobody is boosted or steals the lock; the rt_mutex's own work is the
//! accesses to the pi_state's line, with no lock of its own; the pi_state
//! lives as long as the futex is contended; the woken owner leaves the chain
//! (in the model's state) when it is handed the lock, and pays for the unlink
//! when it runs.

use super::core::{waiters_dec_step, FutexSystem, InFlight, PiState};
use super::futex_hash::Bucket;
use super::key::FutexKey;
use super::script::{Cost, Decision, Script, Step};
use crate::coherence::AccessKind;
use crate::memory::{Mem, MemoryMap};
use crate::symbol::Symbol;

/// What futex_unlock_pi returns to a task that does not own the lock.
pub const EPERM: i64 = -1;

impl FutexSystem {
    /// futex_q_lock, then futex_lock_pi_atomic reads the user word.
    pub(super) fn begin_lock_pi(&mut self, f: &InFlight, uaddr: Mem, s: &mut Script) {
        self.waiters_inc(f.lock, f.waiters(), s);
        read_word_locked(f, uaddr, Decision::LockPiAtomic, Symbol::FutexLockPi, s);
    }

    /// futex_unlock_pi takes the bucket lock directly and reads the word.
    pub(super) fn begin_unlock_pi(&self, f: &InFlight, uaddr: Mem, s: &mut Script) {
        read_word_locked(
            f,
            uaddr,
            Decision::UnlockPiHandOver,
            Symbol::FutexUnlockPi,
            s,
        );
    }

    /// Under the bucket lock: a free lock is taken with one cmpxchg of the
    /// word; an owned one gets FUTEX_WAITERS set, a pi_state, and the task
    /// queued and asleep until the owner hands it the lock.
    pub(super) fn lock_pi_atomic(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        f: &InFlight,
        uaddr: Mem,
        s: &mut Script,
    ) -> i64 {
        let lock = f.lock;
        let waiters = f.waiters();
        s.push(Step::access(
            uaddr,
            AccessKind::Rmw,
            Symbol::FutexLockPiAtomic,
        ));
        let cache = self.pi_state_cache[task as usize];
        let Some(state) = self.pi.get_mut(&f.key) else {
            self.pi.insert(
                f.key,
                PiState {
                    owner: task,
                    object: None,
                },
            );
            self.unlock_and_drop_waiter(f, s);
            return 0;
        };
        // attach_to_pi_owner initialises the waiter's cached pi_state;
        // lookup_pi_state takes a reference on the one already attached.
        let (object, attach) = match state.object {
            Some(o) => (o, AccessKind::Rmw),
            None => (cache, AccessKind::Write),
        };
        state.object = Some(object);
        s.push(Step::access(object, attach, Symbol::FutexLockPiAtomic));
        self.queue(memory, task, f.bucket, f.key, s);
        self.waiters_arrived(f.lock);
        // rt_mutex_start_proxy_lock: the rt_mutex's wait_lock and waiter tree.
        s.push(Step::access(
            object,
            AccessKind::Rmw,
            Symbol::RtMutexStartProxyLock,
        ));
        s.push(Step::Unlock(lock));
        s.push(Step::Compute(Cost::Schedule));
        s.push(Step::Block);
        // Woken as the owner: relock the bucket and leave its chain as the
        // top waiter, the head before it (plist_del). The script is written
        // now, so the head stands for the futex_q behind it too.
        s.push(Step::Lock(lock));
        let node = self.futex_q[task as usize];
        if let Some(h) = self.plist_head(memory, f.bucket) {
            s.extend(h.del(None, node, None));
        }
        // futex_unqueue_pi.
        s.extend(waiters.map(waiters_dec_step));
        s.push(Step::Unlock(lock));
        0
    }

    /// Under the bucket lock: with no waiters the word goes back to 0;
    /// otherwise the top waiter becomes the owner, its TID is written into
    /// the word, and it is woken.
    pub(super) fn unlock_pi_hand_over(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        f: &InFlight,
        uaddr: Mem,
        s: &mut Script,
    ) -> i64 {
        let lock = f.lock;
        let owned = self.pi.get(&f.key).is_some_and(|p| p.owner == task);
        if !owned {
            s.push(Step::Unlock(lock));
            return EPERM;
        }
        let Some(next) = self.top_waiter(memory, f.bucket, &f.key, s) else {
            self.pi.remove(&f.key);
            s.push(Step::access(uaddr, AccessKind::Rmw, Symbol::FutexUnlockPi));
            s.push(Step::Unlock(lock));
            return 0;
        };
        let state = self.pi.get_mut(&f.key).expect("checked above");
        state.owner = next;
        let object = state.object.expect("a waiter attached a pi_state");
        s.push(Step::access(object, AccessKind::Rmw, Symbol::FutexUnlockPi));
        s.push(Step::Unlock(lock));
        // wake_futex_pi: the new owner's TID | FUTEX_WAITERS, then the rt_mutex.
        s.push(Step::access(uaddr, AccessKind::Rmw, Symbol::WakeFutexPi));
        s.push(Step::access(object, AccessKind::Write, Symbol::WakeFutexPi));
        s.push(Step::Wake(next));
        0
    }

    /// futex_top_waiter: the first futex_q on the chain with this key (a
    /// walk from the head's first link), taken off the chain because it is
    /// about to own the lock.
    fn top_waiter(
        &mut self,
        memory: &MemoryMap,
        bucket: Bucket,
        key: &FutexKey,
        s: &mut Script,
    ) -> Option<u32> {
        s.extend(
            self.plist_head(memory, bucket)
                .map(|h| h.walk_start(Symbol::FutexTopWaiter)),
        );
        let chain = self.chains.get_mut(&bucket)?;
        let futex_q = &self.futex_q;
        let top = chain.iter().position(|w| {
            s.push(Step::access(
                futex_q[w.task as usize],
                AccessKind::Read,
                Symbol::FutexTopWaiter,
            ));
            w.key == *key
        })?;
        Some(chain.remove(top).task)
    }
}

/// How both PI ops begin once the bucket is known: take its lock, read the
/// user word (in `by`), and decide under the lock what the word says to do.
fn read_word_locked(f: &InFlight, uaddr: Mem, then: Decision, by: Symbol, s: &mut Script) {
    s.push(Step::Lock(f.lock));
    s.push(Step::access(uaddr, AccessKind::Read, by));
    s.push(Step::Decide(then));
}

#[cfg(test)]
mod tests {
    use super::super::testing::{blocks, outcome, Kernel};
    use super::*;
    use crate::kernel::core::FutexOp;
    use crate::kernel::key::KeyKind;

    fn lock(k: &mut Kernel, task: u32) -> Script {
        let uaddr = k.word(0);
        k.run(
            task,
            FutexOp::LockPi {
                uaddr,
                kind: KeyKind::Private,
            },
        )
    }

    fn unlock(k: &mut Kernel, task: u32) -> Script {
        let uaddr = k.word(0);
        k.run(
            task,
            FutexOp::UnlockPi {
                uaddr,
                kind: KeyKind::Private,
            },
        )
    }

    #[test]
    fn the_owner_hands_the_lock_to_its_waiters_in_turn() {
        let mut k = Kernel::new(3);
        let free = lock(&mut k, 0);
        assert!(!blocks(&free));
        assert_eq!(outcome(&free), (vec![], 0));
        assert!(blocks(&lock(&mut k, 1)));
        assert!(blocks(&lock(&mut k, 2)));
        // Only the owner may unlock.
        assert_eq!(outcome(&unlock(&mut k, 2)), (vec![], EPERM));
        assert_eq!(outcome(&unlock(&mut k, 0)), (vec![1], 0));
        assert_eq!(outcome(&unlock(&mut k, 1)), (vec![2], 0));
        assert_eq!(outcome(&unlock(&mut k, 2)), (vec![], 0));
        // Free again: the next lock takes it at once.
        assert!(!blocks(&lock(&mut k, 0)));
    }
}
