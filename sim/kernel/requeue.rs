//! futex_requeue (kernel/futex/requeue.c), FUTEX_CMP_REQUEUE without PI:
//! under both bucket locks, compare the first word, wake up to `nr_wake`
//! waiters of it and move up to `nr_requeue` more onto the second word's
//! chain, without waking them. Function only, built on core.rs like waitwake.rs.

use super::core::{waiters_dec_step, waiters_inc_step, FutexOp, FutexSystem, Waiter, EAGAIN};
use super::futex_hash::Bucket;
use super::key::FutexKey;
use super::script::{Decision, Script, Step};
use super::table::FieldName;
use crate::coherence::AccessKind;
use crate::memory::MemoryMap;
use crate::symbol::Symbol;

impl FutexSystem {
    /// After the first word's key and hash: the second word's, then both
    /// bucket locks, then the compare.
    pub(super) fn begin_requeue(&mut self, memory: &MemoryMap, task: u32, s: &mut Script) {
        let f = self.op_in_flight(task);
        let FutexOp::CmpRequeue {
            uaddr,
            uaddr2,
            kind,
            ..
        } = f.op
        else {
            unreachable!("begin_requeue runs for FUTEX_CMP_REQUEUE")
        };
        let (_, hb2) = self.hash_key(memory, task, uaddr2, kind, s);
        // futex_hb_waiters_inc(hb2): a wake on the second word must not miss
        // waiters that are on their way over.
        let lock2 = self.lock_of(memory, hb2);
        self.waiters_inc(lock2, self.field(memory, hb2, FieldName::Waiters), s);
        for lock in self.double_lock_order(f.bucket, hb2) {
            s.push(Step::Lock(self.lock_of(memory, lock)));
        }
        s.push(Step::access(uaddr, AccessKind::Read, Symbol::FutexRequeue));
        s.push(Step::Decide(Decision::RequeueWalk));
    }

    /// double_lock_hb: the lower-addressed bucket first, once if they are one.
    fn double_lock_order(&self, hb1: Bucket, hb2: Bucket) -> Vec<Bucket> {
        if hb1 == hb2 {
            vec![hb1]
        } else if self.hash.bucket_addr(hb1) < self.hash.bucket_addr(hb2) {
            vec![hb1, hb2]
        } else {
            vec![hb2, hb1]
        }
    }

    /// Under both locks: compare, wake, move. Returns what the syscall
    /// returns: the waiters woken plus those requeued, or EAGAIN.
    pub(super) fn requeue_walk(
        &mut self,
        memory: &MemoryMap,
        task: u32,
        op: FutexOp,
        s: &mut Script,
    ) -> i64 {
        let FutexOp::CmpRequeue {
            uaddr2,
            nr_wake,
            nr_requeue,
            cmpval,
            kind,
            ..
        } = op
        else {
            unreachable!("requeue_walk runs for FUTEX_CMP_REQUEUE")
        };
        let f = self.op_in_flight(task);
        let (key1, hb1) = (f.key, f.bucket);
        let (key2, hb2) = self.locate(task, uaddr2.addr, kind);
        if self.value_of(&key1) != cmpval {
            self.unlock_and_wake(memory, hb1, hb2, &[], s);
            return self.requeue_done(memory, hb2, EAGAIN, s);
        }
        let woken = self.unqueue_matches(memory, hb1, &key1, nr_wake, Symbol::FutexRequeue, s);
        let moved = self.move_waiters(memory, (hb1, key1), (hb2, key2), nr_requeue, s);
        self.unlock_and_wake(memory, hb1, hb2, &woken, s);
        self.requeue_done(memory, hb2, (woken.len() + moved) as i64, s)
    }

    /// double_unlock_hb, then wake_up_q.
    fn unlock_and_wake(
        &self,
        memory: &MemoryMap,
        hb1: Bucket,
        hb2: Bucket,
        woken: &[u32],
        s: &mut Script,
    ) {
        s.push(Step::Unlock(self.lock_of(memory, hb1)));
        if hb1 != hb2 {
            s.push(Step::Unlock(self.lock_of(memory, hb2)));
        }
        s.extend(woken.iter().map(|&t| Step::Wake(t)));
    }

    /// futex_hb_waiters_dec(hb2), the pair of the increment before the locks.
    fn requeue_done(&mut self, memory: &MemoryMap, hb2: Bucket, ret: i64, s: &mut Script) -> i64 {
        self.waiters_arrived(self.lock_of(memory, hb2));
        let waiters = self.field(memory, hb2, FieldName::Waiters);
        s.extend(waiters.map(waiters_dec_step));
        ret
    }

    /// requeue_futex for up to `nr` waiters of `from`'s key, in a walk of
    /// the first chain: each leaves it (plist_del, futex_hb_waiters_dec),
    /// joins the second (futex_hb_waiters_inc, plist_add at the tail) and
    /// takes the new lock pointer and key; the task stays asleep. Returns
    /// how many moved.
    fn move_waiters(
        &mut self,
        memory: &MemoryMap,
        (hb1, key1): (Bucket, FutexKey),
        (hb2, key2): (Bucket, FutexKey),
        nr: u32,
        s: &mut Script,
    ) -> usize {
        let (head1, head2) = (self.plist_head(memory, hb1), self.plist_head(memory, hb2));
        let waiters1 = self.field(memory, hb1, FieldName::Waiters);
        let waiters2 = self.field(memory, hb2, FieldName::Waiters);
        let mut moved = 0;
        s.extend(head1.map(|h| h.walk_start(Symbol::FutexRequeue)));
        let mut chain = self.chains.remove(&hb1).unwrap_or_default();
        let mut i = 0;
        while i < chain.len() && moved < nr {
            let w = chain[i];
            let node = self.futex_q[w.task as usize];
            s.push(Step::access(node, AccessKind::Read, Symbol::FutexRequeue));
            if w.key != key1 {
                i += 1;
                continue;
            }
            moved += 1;
            if hb1 == hb2 {
                // Same chain: only the key changes.
                chain[i].key = key2;
                s.push(Step::access(node, AccessKind::Write, Symbol::RequeueFutex));
                i += 1;
                continue;
            }
            s.extend(Self::unlink_steps(&self.futex_q, head1, &chain, i));
            chain.remove(i);
            s.extend(waiters1.map(waiters_dec_step));
            s.extend(waiters2.map(waiters_inc_step));
            let to = self.chains.entry(hb2).or_default();
            let ends = to.first().zip(to.last()).map(|(first, last)| {
                (
                    self.futex_q[first.task as usize],
                    self.futex_q[last.task as usize],
                )
            });
            to.push(Waiter {
                task: w.task,
                key: key2,
            });
            s.extend(head2.into_iter().flat_map(|h| h.add(ends, node)));
            // The moved futex_q gets its new lock pointer and key.
            s.push(Step::access(node, AccessKind::Write, Symbol::RequeueFutex));
        }
        if !chain.is_empty() {
            self.chains.insert(hb1, chain);
        }
        moved as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{blocks, outcome, Kernel};
    use super::*;
    use crate::kernel::key::KeyKind;

    fn requeue(k: &mut Kernel, task: u32, nr_wake: u32, nr_requeue: u32, cmpval: u32) -> Script {
        let (uaddr, uaddr2) = (k.word(0), k.word(64));
        k.run(
            task,
            FutexOp::CmpRequeue {
                uaddr,
                uaddr2,
                nr_wake,
                nr_requeue,
                cmpval,
                kind: KeyKind::Private,
            },
        )
    }

    #[test]
    fn wakes_the_first_and_moves_the_next_without_waking_them() {
        let mut k = Kernel::new(5);
        for t in 0..4 {
            let uaddr = k.word(0);
            assert!(blocks(&k.wait(t, uaddr)));
        }
        let s = requeue(&mut k, 4, 1, 2, 0);
        assert_eq!(outcome(&s), (vec![0], 3));
        let (a, b) = (k.word(0), k.word(64));
        assert_eq!(k.waiters_on(4, a), [3]);
        assert_eq!(k.waiters_on(4, b), [1, 2]);
        // The moved waiters are woken by a wake of the second word.
        let wake = k.run(
            4,
            FutexOp::Wake {
                uaddr: b,
                nr: 10,
                kind: KeyKind::Private,
            },
        );
        assert_eq!(outcome(&wake), (vec![1, 2], 2));
    }

    #[test]
    fn a_changed_word_moves_nobody() {
        let mut k = Kernel::new(3);
        let a = k.word(0);
        k.wait(0, a);
        k.wait(1, a);
        k.sys.set_value(2, a.addr, KeyKind::Private, 1);
        assert_eq!(outcome(&requeue(&mut k, 2, 0, 10, 0)), (vec![], EAGAIN));
        assert_eq!(k.waiters_on(2, a), [0, 1]);
    }
}
