//! Which function made an access: the Symbol column of perf c2c's Pareto,
//! one name per function that writes a script's accesses (or runs a lock's
//! protocol), spelled as the kernel spells it. A static function the
//! compiler inlines is still named for itself, as the kernel's source
//! names it, so that the rows say which part of an op touched the line.
//!
//! A symbol is a byte: it rides in the padding of a script's step and of a
//! counted sample, so naming the function costs the engine no memory. It
//! sits below the layers that use it: the kernel writes it into scripts,
//! the engine carries it, the directory counts by it, the records name it.

use serde::{Deserialize, Serialize};

macro_rules! symbols {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A function that makes memory accesses in a simulated run.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[repr(u8)]
        pub enum Symbol {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
        }

        impl Symbol {
            /// Every symbol, in declaration order: `ALL[s as usize] == s`.
            pub const ALL: &'static [Symbol] = &[$(Symbol::$variant,)*];

            /// The function's name, as the kernel (or the workload) spells it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Symbol::$variant => $name,)*
                }
            }
        }
    };
}

symbols! {
    /// The spinlock's fast path: the first atomic on the word (a queued
    /// lock's cmpxchg, a ticket lock's fetch-add and its spin, inline in
    /// the lock function).
    RawSpinLock = "_raw_spin_lock",
    /// The spinlock's release: the queued lock's store of the locked byte,
    /// the ticket lock's read of the head and its store.
    RawSpinUnlock = "_raw_spin_unlock",
    /// The queued spinlock's slow path: pending bit, MCS node, queue head.
    QueuedSpinLockSlowpath = "queued_spin_lock_slowpath",
    /// The key of a word: a shared key's page reference, page lock and
    /// mm or inode pin; a NUMA word's node half.
    GetFutexKey = "get_futex_key",
    /// get_futex_key_refs' smp_mb() on a private key (before 4.20).
    GetFutexKeyRefs = "get_futex_key_refs",
    /// put_futex_key: dropping what a shared key pinned.
    PutFutexKey = "put_futex_key",
    /// futex_hash's reads of the private hash: its mask, `hb->priv`.
    FutexHash = "futex_hash",
    /// futex_hash_put's read of `hb->priv`.
    FutexHashPut = "futex_hash_put",
    /// The private hash's reference taken: the header's reads, the
    /// reference count's RMW (rcuref or the per-CPU counter).
    FutexPrivateHashGet = "futex_private_hash_get",
    /// The private hash's reference dropped.
    FutexPrivateHashPut = "futex_private_hash_put",
    /// The bucket's `waiters` counted up on the way to its lock (futex_q_lock's,
    /// futex_requeue's for the second bucket, a rehash's).
    FutexHbWaitersInc = "futex_hb_waiters_inc",
    /// futex_wake's read of `waiters` (3.14+), to skip the lock.
    FutexHbWaitersPending = "futex_hb_waiters_pending",
    /// `waiters` counted down (futex_q_unlock's, __futex_unqueue's,
    /// requeue_futex's).
    FutexHbWaitersDec = "futex_hb_waiters_dec",
    /// futex_wait_setup's read of the user word under the bucket lock.
    FutexWaitSetup = "futex_wait_setup",
    /// __futex_queue: the waiter's futex_q initialised.
    FutexQueue = "__futex_queue",
    /// plist_add: the chain read and linked.
    PlistAdd = "plist_add",
    /// plist_del: the neighbours' links written.
    PlistDel = "plist_del",
    /// futex_wake: the chain walked, each futex_q's key read.
    FutexWake = "futex_wake",
    /// futex_requeue: the word read, the chain walked.
    FutexRequeue = "futex_requeue",
    /// requeue_futex: a waiter's futex_q moved to the second bucket.
    RequeueFutex = "requeue_futex",
    /// futex_lock_pi_atomic: the word's cmpxchg, the owner's pi_state.
    FutexLockPiAtomic = "futex_lock_pi_atomic",
    /// futex_lock_pi: the word read under the bucket lock.
    FutexLockPi = "futex_lock_pi",
    /// futex_unlock_pi: the word released or handed to the top waiter.
    FutexUnlockPi = "futex_unlock_pi",
    /// rt_mutex_start_proxy_lock: the rt_mutex's wait_lock and waiter tree.
    RtMutexStartProxyLock = "rt_mutex_start_proxy_lock",
    /// wake_futex_pi: the new owner's TID in the word, the rt_mutex handed on.
    WakeFutexPi = "wake_futex_pi",
    /// futex_top_waiter: the first waiter's futex_q read.
    FutexTopWaiter = "futex_top_waiter",
    /// The private hash allocated: its header and buckets initialised.
    FutexHashAllocate = "futex_hash_allocate",
    /// The new private hash published: the old one's state, mm->futex_phash.
    FutexPivotHash = "futex_pivot_hash",
    /// Queued waiters moved from the old private hash to the new.
    FutexRehashPrivate = "futex_rehash_private",
    /// 6.17's switch of the private hash's reference from per-CPU to
    /// atomic: every possible CPU's counter read and zeroed, the sum added
    /// to `mm->futex_atomic`.
    FutexRefAtomicEnd = "__futex_ref_atomic_end",
    /// The wakee's pi_lock and state, the runqueue's lock word written
    /// under it.
    TryToWakeUp = "try_to_wake_up",
    /// select_task_rq_fair's reads of the runqueues it weighs.
    SelectTaskRqFair = "select_task_rq_fair",
    /// ttwu_do_activate under the target runqueue's lock: the runqueue
    /// and the wakee's state written.
    TtwuDoActivate = "ttwu_do_activate",
    /// ttwu_queue_wakelist: the wakee queued on the target CPU's list.
    TtwuQueueWakelist = "ttwu_queue_wakelist",
    /// resched_curr under the target runqueue's lock: the running task's
    /// flags read and TIF_NEED_RESCHED set.
    ReschedCurr = "resched_curr",
    /// set_nr_if_polling: the target's idle task's flags read, and set
    /// with a cmpxchg where it polls (no IPI then).
    SetNrIfPolling = "set_nr_if_polling",
    /// do_idle leaving a polling loop: TIF_POLLING_NRFLAG cleared.
    DoIdle = "do_idle",
    /// flush_smp_call_function_queue: the CPU's wake list taken whole.
    FlushSmpCallFunctionQueue = "flush_smp_call_function_queue",
    /// sched_ttwu_pending: a queued wakee enqueued under the target's own
    /// runqueue lock.
    SchedTtwuPending = "sched_ttwu_pending",
    /// The workload's own accesses: its user-space code, or the kernel
    /// work it stands for outside the futex code.
    Workload = "workload",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_symbol_is_at_its_own_index_and_has_its_own_name() {
        for (i, s) in Symbol::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
        let mut names: Vec<&str> = Symbol::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Symbol::ALL.len());
    }
}
