//! Each kernel state's script, access by access, against the source it
//! names (docs/eras.md): a failing FUTEX_WAIT (perf bench futex hash's op)
//! on a private and on a shared word, a FUTEX_WAKE with nobody waiting, and
//! a FUTEX2_NUMA word's node. The lists are read off the cited code paths:
//! futex_wait_setup / futex_q_lock / futex_q_unlock, futex_hash and
//! futex_hash_put, futex_private_hash_get/put (rcuref in bd54df5ea7ca,
//! the immutable test of 63e8595c060a, futex_ref_get/put of 56180dd20c19),
//! get_futex_key (lock_page before 65d8fc777f6d, get_futex_key_refs before
//! 8019ad13ef7f and 222993395ed3), futex_wake's futex_hb_waiters_pending.

use super::core::{FutexOp, PerCpuOp, EAGAIN};
use super::futex_hash::{SetSlots, TableSel};
use super::key::{FutexNode, KeyKind};
use super::testing::{accesses, outcome, Kernel};

/// A FUTEX_WAIT whose value never matches, as perf bench futex hash issues it.
fn failing_wait(era: &str, kind: KeyKind, set_slots: Option<SetSlots>) -> Vec<String> {
    let mut k = Kernel::of_era(era, 2, set_slots);
    let uaddr = k.word(0x40);
    let s = k.run(
        0,
        FutexOp::Wait {
            uaddr,
            val: 1234,
            kind,
        },
    );
    assert_eq!(outcome(&s), (vec![], EAGAIN), "{era}");
    accesses(&k, 0, uaddr, &s)
}

fn list(steps: &[&str]) -> Vec<String> {
    steps.iter().map(|s| s.to_string()).collect()
}

const LOCKED_COMPARE: [&str; 3] = ["lock", "read uaddr", "unlock"];

/// 11d4616bd07f's locked compare, 3.14 to 6.15: the waiter count rises
/// before the lock (atomic_inc and a full barrier) and falls after the
/// unlock (atomic_dec, which orders nothing).
const COUNTED_AROUND: [&str; 5] = [
    "rmw hb->waiters",
    "lock",
    "read uaddr",
    "unlock",
    "relaxed-rmw hb->waiters",
];

/// fe00e88d217a's locked compare, every era from 6.16 on: the waiter count
/// rises before the lock and falls before the unlock.
const COUNTED_COMPARE: [&str; 5] = [
    "rmw hb->waiters",
    "lock",
    "read uaddr",
    "relaxed-rmw hb->waiters",
    "unlock",
];

#[test]
fn v2_6_29_locks_reads_and_unlocks_nothing_else() {
    assert_eq!(
        failing_wait("v2.6.29", KeyKind::Private, None),
        list(&LOCKED_COMPARE)
    );
    assert_eq!(
        failing_wait("fixed-256", KeyKind::Private, None),
        list(&LOCKED_COMPARE)
    );
}

/// 3.14 (11d4616bd07f): hb_waiters_inc before the lock, queue_unlock's
/// spin_unlock then hb_waiters_dec; unchanged to 6.15. To 5.6 a private
/// key's get_futex_key_refs makes the explicit smp_mb() (B) first.
#[test]
fn v3_14_to_v5_7_count_waiters_around_the_lock_and_drop_after_the_unlock() {
    let barrier_first = list(&[&["smp_mb"][..], &COUNTED_AROUND].concat());
    for era in ["v3.14", "v4.6", "aligned-3.14"] {
        assert_eq!(
            failing_wait(era, KeyKind::Private, None),
            barrier_first,
            "{era}"
        );
    }
    assert_eq!(
        failing_wait("v5.7", KeyKind::Private, None),
        list(&COUNTED_AROUND)
    );
}

/// fe00e88d217a: futex_q_unlock drops the count before spin_unlock. v6.16
/// as released has no private hash (9a57c3773152) and no hb->priv.
#[test]
fn v6_16_drops_the_waiter_count_before_the_unlock() {
    assert_eq!(
        failing_wait("v6.16", KeyKind::Private, None),
        list(&COUNTED_COMPARE)
    );
}

/// 7c4f75a21f: __futex_hash_private reads fph->hash_mask; futex_hash is
/// __futex_hash alone and futex_hash_get/put are empty.
#[test]
fn commit_7c4f75a21f_reads_the_mask_and_takes_no_reference() {
    assert_eq!(
        failing_wait("7c4f75a21f", KeyKind::Private, None),
        list(&[&["read fph->hash_mask"][..], &COUNTED_COMPARE].concat())
    );
}

/// v6.16-rc1: the mask, `fph = hb->priv`, futex_private_hash_get's
/// fph->immutable then rcuref_get; futex_hash_put re-reads hb->priv, then
/// fph->immutable and rcuref_put. Four header transactions besides the mask.
/// rcuref_get's add is relaxed, rcuref_put's a release.
#[test]
fn v6_16_rc1_reads_the_header_four_times_and_bounces_the_rcuref() {
    let around = |get: &[&str], put: &[&str]| {
        let mut v = vec!["read fph->hash_mask", "read hb->priv"];
        v.extend(get);
        v.extend(COUNTED_COMPARE);
        v.push("read hb->priv");
        v.extend(put);
        list(&v)
    };
    assert_eq!(
        failing_wait("v6.16-rc1", KeyKind::Private, None),
        around(
            &["read fph->immutable", "relaxed-rmw fph->users/state"],
            &["read fph->immutable", "rmw fph->users/state"]
        )
    );
    // -I: the immutable test returns before the rcuref.
    let immutable = Some(SetSlots {
        slots: 16,
        immutable: true,
    });
    assert_eq!(
        failing_wait("private-6.16rc", KeyKind::Private, immutable),
        around(&["read fph->immutable"], &["read fph->immutable"])
    );
}

/// The private hash's reference around a 6.17 op's locked compare:
/// futex_ref_get/put read fph->mm and fph->state, then change this CPU's
/// counter as `counter` says; `priv_reads` says whether hb->priv is read
/// on the way in and out.
fn v6_17_wait(counter: &[&'static str], priv_reads: bool) -> Vec<String> {
    let mut reference = vec!["read fph->mm", "read fph->users/state"];
    reference.extend(counter);
    let read_priv = priv_reads.then_some("read hb->priv");
    let mut v = vec!["read fph->hash_mask"];
    v.extend(read_priv);
    v.extend(&reference);
    v.extend(COUNTED_COMPARE);
    v.extend(read_priv);
    v.extend(&reference);
    list(&v)
}

/// v6.17 on x86: this_cpu_inc and this_cpu_dec are one `incl`/`decl` of a
/// %gs-relative address without a lock prefix, a load and a plain store:
/// no RMW, so nothing drains the store buffer for the reference.
/// a734d9fca84e has no hb->priv to read.
#[test]
fn v6_17_counts_per_cpu_with_plain_instructions_on_x86_and_a734d9fca84e_drops_the_priv_reads() {
    let plain = ["read percpu futex_ref", "write percpu futex_ref"];
    assert_eq!(
        failing_wait("v6.17", KeyKind::Private, None),
        v6_17_wait(&plain, true)
    );
    assert_eq!(
        failing_wait("a734d9fca84e", KeyKind::Private, None),
        v6_17_wait(&plain, false)
    );
}

/// v6.17 on arm64: the per-CPU counter is an LL/SC loop or an LSE STADD
/// with preemption disabled and no barrier: an atomic that orders nothing.
#[test]
fn v6_17_counts_per_cpu_with_relaxed_atomics_on_arm64() {
    let mut k = Kernel::of_era_on("v6.17", 2, None, PerCpuOp::RelaxedAtomic);
    let uaddr = k.word(0x40);
    let s = k.run(
        0,
        FutexOp::Wait {
            uaddr,
            val: 1234,
            kind: KeyKind::Private,
        },
    );
    assert_eq!(
        accesses(&k, 0, uaddr, &s),
        v6_17_wait(&["relaxed-rmw percpu futex_ref"], true)
    );
}

/// SET_SLOTS 0 (perf -b 0): the table's mask is 0, so __futex_hash_private
/// reads it and falls back to the global table, whose hb->priv is NULL.
#[test]
fn set_slots_zero_reads_the_mask_and_uses_the_global_table() {
    let global = Some(SetSlots {
        slots: 0,
        immutable: false,
    });
    assert_eq!(
        failing_wait("v6.17", KeyKind::Private, global),
        list(
            &[
                &["read fph->hash_mask", "read hb->priv"][..],
                &COUNTED_COMPARE,
                &["read hb->priv"],
            ]
            .concat()
        )
    );
}

/// get_futex_key of a shared anonymous word: get_user_pages_fast's page
/// reference in every era; lock_page and mmgrab before 4.6; mmgrab alone
/// to 5.6; neither from 5.7. put_futex_key's mmdrop ends the op.
#[test]
fn shared_keys_pin_the_page_and_the_mm_as_each_era_did() {
    let page_ref = "rmw page->_refcount";
    let mm = "rmw mm->mm_count";
    let v2_6_29 = [
        // lock_page's test_and_set_bit_lock is an acquire; unlock_page's
        // clear_bit_unlock then smp_mb__after_atomic is fully ordered.
        &[
            page_ref,
            "acquire-rmw page->flags",
            mm,
            "rmw page->flags",
            page_ref,
        ][..],
        &LOCKED_COMPARE,
        &[mm],
    ]
    .concat();
    assert_eq!(
        failing_wait("v2.6.29", KeyKind::SharedAnon, None),
        list(&v2_6_29)
    );
    let v4_6 = [&[page_ref, mm, page_ref][..], &COUNTED_AROUND, &[mm]].concat();
    assert_eq!(failing_wait("v4.6", KeyKind::SharedAnon, None), list(&v4_6));
    let v5_7 = [&[page_ref, page_ref][..], &COUNTED_AROUND].concat();
    assert_eq!(failing_wait("v5.7", KeyKind::SharedAnon, None), list(&v5_7));
    // A file page's key holds the inode before 5.6.
    assert!(failing_wait("v3.14", KeyKind::SharedFile, None)
        .contains(&"rmw inode->i_count".to_string()));
}

/// futex_wake reads `waiters` and takes the lock only if it is not zero:
/// a waiter that has counted itself but not queued yet makes it lock.
#[test]
fn wake_checks_the_waiter_count_not_the_chain() {
    let mut k = Kernel::of_era("v5.7", 2, None);
    let uaddr = k.word(0x40);
    let wake = FutexOp::Wake {
        uaddr,
        nr: 1,
        kind: KeyKind::Private,
    };
    let s = k.run(1, wake);
    // futex_hb_waiters_pending: smp_mb(), then the read (5.7 on).
    assert_eq!(
        accesses(&k, 1, uaddr, &s),
        list(&["smp_mb", "read hb->waiters"])
    );
    // Task 0's wait has incremented the count and waits for the lock.
    let mut begun = super::script::Script::new();
    k.sys.begin(
        &k.memory,
        0,
        k.now,
        FutexOp::Wait {
            uaddr,
            val: 0,
            kind: KeyKind::Private,
        },
        &mut begun,
    );
    // Its increment is served before the wake's read.
    for step in &begun {
        if let super::script::Step::WaitersInc(w) = *step {
            k.sys.waiter_counted(w.lock);
        }
    }
    let s = k.run(1, wake);
    // futex_wake's walk reads the head's first link, and finds the chain empty.
    assert_eq!(
        accesses(&k, 1, uaddr, &s),
        list(&[
            "smp_mb",
            "read hb->waiters",
            "lock",
            "read hb->chain.next",
            "unlock"
        ])
    );
    assert_eq!(outcome(&s), (vec![], 0));
    // 2.6.29 has no count: always the lock.
    let mut k = Kernel::of_era("v2.6.29", 2, None);
    let uaddr = k.word(0x40);
    let s = k.run(
        1,
        FutexOp::Wake {
            uaddr,
            nr: 1,
            kind: KeyKind::Private,
        },
    );
    assert_eq!(
        accesses(&k, 1, uaddr, &s),
        list(&["lock", "read hb->chain.next", "unlock"])
    );
}

/// FUTEX2_NUMA (cec199c5e39b): get_futex_key reads the word's node; a
/// FUTEX_NO_NODE word gets the current node written back, which later ops
/// from any node read; the key goes to that node's table, never the
/// private hash.
#[test]
fn a_numa_word_goes_to_its_node_and_no_node_becomes_the_current_one() {
    // Tasks 0-3 on node 0, 4-5 on node 1.
    let mut k = Kernel::of_era("v6.17", 6, None);
    let chosen = k.word(0x40);
    let wait = |uaddr, node| FutexOp::Wait {
        uaddr,
        val: 1,
        kind: KeyKind::PrivateNuma(node),
    };
    let s = k.run(0, wait(chosen, FutexNode::Node(1)));
    let (_, bucket) = k
        .sys
        .locate(0, chosen.addr, KeyKind::PrivateNuma(FutexNode::Node(1)));
    assert_eq!(bucket.table, TableSel::Global(1));
    assert_eq!(accesses(&k, 0, chosen, &s)[0], "read uaddr node");
    let unset = k.word(0x80);
    let s = k.run(4, wait(unset, FutexNode::NoNode));
    let names = accesses(&k, 4, unset, &s);
    assert_eq!(names[..2], list(&["read uaddr node", "write uaddr node"]));
    assert!(
        !names.iter().any(|n| n.starts_with("read fph")),
        "{names:?}"
    );
    // Task 0, on node 0, finds node 1 in the word now.
    let s = k.run(0, wait(unset, FutexNode::NoNode));
    assert!(!accesses(&k, 0, unset, &s).contains(&"write uaddr node".to_string()));
    let (_, bucket) = k
        .sys
        .locate(0, unset.addr, KeyKind::PrivateNuma(FutexNode::NoNode));
    assert_eq!(bucket.table, TableSel::Global(1));
}

/// Every futex_hb_waiters_inc is fully ordered (atomic_inc, then
/// smp_mb__after_atomic) and every futex_hb_waiters_dec orders nothing
/// (atomic_dec returns no value): the wake that unqueues a waiter, and the
/// requeue that moves one to another bucket, say so step by step.
#[test]
fn waiter_counts_rise_fully_ordered_and_fall_relaxed() {
    let mut k = Kernel::of_era("v6.16", 3, None);
    let (first, second) = (k.word(0x40), k.word(0x1040));
    let wait = k.wait(0, first);
    assert_eq!(accesses(&k, 0, first, &wait)[0], "rmw hb->waiters");
    let wake = k.run(
        1,
        FutexOp::Wake {
            uaddr: first,
            nr: 1,
            kind: KeyKind::Private,
        },
    );
    assert_eq!(outcome(&wake).0, vec![0]);
    let woke = accesses(&k, 1, first, &wake);
    assert!(
        woke.contains(&"relaxed-rmw hb->waiters".to_string()),
        "{woke:?}"
    );
    assert!(!woke.contains(&"rmw hb->waiters".to_string()), "{woke:?}");
    k.wait(0, first);
    let requeue = k.run(
        1,
        FutexOp::CmpRequeue {
            uaddr: first,
            uaddr2: second,
            nr_wake: 0,
            nr_requeue: 1,
            cmpval: 0,
            kind: KeyKind::Private,
        },
    );
    let moved = accesses(&k, 1, first, &requeue);
    let rises = moved.iter().filter(|a| a.starts_with("rmw ")).count();
    let falls = moved
        .iter()
        .filter(|a| a.starts_with("relaxed-rmw "))
        .count();
    assert!(rises >= 2 && falls >= 2, "{moved:?}");
}

/// 2.6.39 on (lib/plist.c): futex_queue's plist_node_init, then plist_add
/// reads the head (plist_head_empty), on a queued chain the first futex_q
/// (its prio and prio_list), then list_add_tail reads and writes the head's
/// prev and writes the new node and the old tail's next (the head's own on
/// an empty chain). futex_wake's plist_for_each_entry_safe starts from the
/// head's next; plist_del of the first futex_q writes the next one's prev
/// and the head's next, then resets the node.
#[test]
fn the_chain_is_read_before_it_is_linked_and_unlinked_through_its_neighbours() {
    let mut k = Kernel::of_era("v5.7", 3, None);
    let uaddr = k.word(0x40);
    let queued = |linked: &[&str]| {
        let mut v = vec!["rmw hb->waiters", "lock", "read uaddr", "write futex_q"];
        v.extend(linked);
        v.push("unlock");
        list(&v)
    };
    let first = k.wait(0, uaddr);
    assert_eq!(
        accesses(&k, 0, uaddr, &first),
        queued(&[
            "read hb->chain.next",
            "read hb->chain.prev",
            "write hb->chain.prev",
            "write futex_q",
            "write hb->chain.next",
        ])
    );
    let second = k.wait(1, uaddr);
    assert_eq!(
        accesses(&k, 1, uaddr, &second),
        queued(&[
            "read hb->chain.next",
            "read futex_q of task 0",
            "read hb->chain.prev",
            "write hb->chain.prev",
            "write futex_q",
            "write futex_q of task 0",
        ])
    );
    let wake = k.run(
        2,
        FutexOp::Wake {
            uaddr,
            nr: 1,
            kind: KeyKind::Private,
        },
    );
    assert_eq!(outcome(&wake).0, vec![0]);
    assert_eq!(
        accesses(&k, 2, uaddr, &wake),
        list(&[
            "smp_mb",
            "read hb->waiters",
            "lock",
            "read hb->chain.next",
            "read futex_q of task 0",
            "read futex_q of task 0",
            "write futex_q of task 1",
            "write hb->chain.next",
            "write futex_q of task 0",
            "relaxed-rmw hb->waiters",
            "unlock",
        ])
    );
}

/// 2.6.18 to 2.6.38: the head has a prio_list of its own, and the first
/// futex_q joins it (plist_add's lt_prio) before the node_list.
#[test]
fn v2_6_29_links_the_first_waiter_into_the_heads_prio_list_too() {
    let mut k = Kernel::of_era("v2.6.29", 2, None);
    let uaddr = k.word(0x40);
    let s = k.wait(0, uaddr);
    assert_eq!(
        accesses(&k, 0, uaddr, &s),
        list(&[
            "lock",
            "read uaddr",
            "write futex_q",
            "read hb->chain.prio_list.next",
            "read hb->chain.prio_list.prev",
            "write hb->chain.prio_list.prev",
            "write futex_q",
            "write hb->chain.prio_list.next",
            "read hb->chain.prev",
            "write hb->chain.prev",
            "write futex_q",
            "write hb->chain.next",
            "unlock",
        ])
    );
}

/// The barrier (B) that orders a waker's store to the word before its read
/// of `waiters`: get_futex_key_refs' smp_mb() for a private key in every op
/// of 3.14 to 5.6, futex_hb_waiters_pending's before the read from 5.7;
/// 2.6.29 has no count and no barrier.
#[test]
fn the_waker_orders_its_store_before_reading_the_waiter_count() {
    let wake_of = |era: &str| {
        let mut k = Kernel::of_era(era, 2, None);
        let uaddr = k.word(0x40);
        let s = k.run(
            1,
            FutexOp::Wake {
                uaddr,
                nr: 1,
                kind: KeyKind::Private,
            },
        );
        accesses(&k, 1, uaddr, &s)
    };
    assert_eq!(wake_of("v4.6"), list(&["smp_mb", "read hb->waiters"]));
    assert_eq!(
        wake_of("v6.17")[..2],
        list(&["read fph->hash_mask", "read hb->priv"])
    );
    let v6_17 = wake_of("v6.17");
    let read = v6_17.iter().position(|a| a == "read hb->waiters").unwrap();
    assert_eq!(v6_17[read - 1], "smp_mb", "{v6_17:?}");
    assert!(!wake_of("v2.6.29").contains(&"smp_mb".to_string()));
}
