//! time_exit (seed 002, "Improving lock pages", 2013): the parent maps one
//! shared page, forks N children each pinned to its own CPU; every child
//! atomically increments `ready` and spins on `quit`; once all are ready
//! the parent reads the clock, sets `quit`, and calls wait() until no child
//! is left, then reads the clock again. The figure is that interval.
//!
//! The exit path is modelled as the critical sections and atomics on state
//! that every child shares with the others (everything private to a child
//! is one compute step), step by step as do_exit runs them. Each names the
//! kernel function it stands for; the report's kernels were 3.0 and 3.8,
//! and the sections are the v3.8 ones:
//!
//! | step | section | kernel (v3.8) | shared by |
//! |---|---|---|---|
//! | fault (before the release) | the child's first touch of the shared page: fork copied no pte of a shared mapping without an anon_vma, so it faults; the page is found in the shmem radix tree, its `_count` taken, and it comes back locked: `lock_page`, a test-and-set of PG_locked, and while the bit is set `__lock_page`'s sleep on the page's slot of the page wait table (the slot's spinlock, onto its list, asleep until woken, off the list at the end); the page is mapped (`_mapcount` inc) and `unlock_page` clears PG_locked and reads the slot's list (`waitqueue_active`), waking one waiter under the slot's lock if any | kernel/fork.c `dup_mmap` -> mm/memory.c `copy_page_range` (skips it); mm/memory.c `__do_fault` -> mm/shmem.c `shmem_fault` (returns VM_FAULT_LOCKED) -> `shmem_getpage_gfp` -> mm/filemap.c `find_lock_page`, `__lock_page` -> kernel/wait.c `__wait_on_bit_lock`; mm/filemap.c `unlock_page` -> `wake_up_page` -> kernel/wait.c `__wake_up_bit` | all children: one struct page and its wait-table slot (sim/kernel/page_wait.rs) |
//! | exit() (`exit_cow_faults`, 0 by default) | the first write since fork to a page of the parent's: `do_wp_page` locks the old page (trylock, else `lock_page` and the wait table), reads its map count (`reuse_swap_page`: not reusable, every sibling maps it), unlocks it, copies it and drops the child's `_mapcount` and `_count` of it | mm/memory.c `do_wp_page` | all children: the parent's page |
//! | exit_mm | the shared page's pte was dirtied and young: `set_page_dirty` (an atomic test-and-set of PG_dirty in `flags`), `mark_page_accessed` (a read of `flags`, PG_referenced already set), then `_mapcount`'s atomic dec; then each of the child's `anon_pages` ptes: a page still shared with the parent loses this mapping (`page_remove_rmap`, an atomic dec of `_mapcount` on its struct page), and each pte's own clearing; a fixed part per vma | kernel/exit.c `exit_mm` -> `mmput` -> mm/mmap.c `exit_mmap` -> mm/memory.c `unmap_vmas`, `zap_pte_range` -> mm/page-writeback.c `set_page_dirty`, mm/swap.c `mark_page_accessed`, mm/rmap.c `page_remove_rmap` | all children: one struct page |
//! | free_pgtables | each private vma's anon_vma root lock | mm/memory.c `free_pgtables` -> mm/rmap.c `unlink_anon_vmas` (`anon_vma_lock` on the root, inherited from the parent by fork) | all children: the parent's anon_vmas |
//! | free_pgtables | the shmem mapping's `i_mmap_mutex`, unlink the vma from `i_mmap` | mm/memory.c `free_pgtables` -> mm/mmap.c `unlink_file_vma` | all children: one address_space |
//! | free_pgtables | the page-table pages: a PTE page per vma with ptes and the PMD and PUD pages above them, each freed through the tlb gather; then the gathered pages' references, an atomic dec of `_count` on each shared page's struct page | mm/memory.c `free_pgd_range` -> `free_pte_range` (`pte_free_tlb`); mm/mmap.c `exit_mmap` -> mm/memory.c `tlb_finish_mmu` -> mm/swap_state.c `free_pages_and_swap_cache` -> mm/swap.c `release_pages` | all children: the parent's pages |
//! | remove_vma | `fput` of the mapping's file | mm/mmap.c `remove_vma` -> fs/file_table.c `fput` (`f_count`) | all children: one struct file |
//! | exit_files | `fput` of stdin, stdout, stderr | kernel/exit.c `exit_files` -> `close_files` | all children: the parent's struct files |
//! | exit_fs | `dput` of root and cwd: `d_lock`, `d_count` | kernel/exit.c `exit_fs` -> fs/dcache.c `dput` (d_count under d_lock before 3.12's lockref) | all children: two dentries |
//! | exit_notify | `tasklist_lock` for write | kernel/exit.c `exit_notify` (`write_lock_irq`) | every task on the machine |
//! | exit_notify | the parent's `siglock`, SIGCHLD | kernel/signal.c `do_notify_parent` | all children: one parent |
//! | exit_notify | the parent's `wait_chldexit` wait queue: its lock, and try_to_wake_up of the parent asleep in wait() | kernel/exit.c `__wake_up_parent` -> kernel/sched/core.c `__wake_up_sync_key` | all children: one parent |
//! | schedule | do_exit's last schedule() | kernel/exit.c `do_exit` | none |
//! | parent: do_wait | `tasklist_lock` for read, a walk of the children list reading each `exit_state`; asleep on `wait_chldexit` when no child is a zombie | kernel/exit.c `do_wait`, `do_wait_thread`, `wait_consider_task` | the parent against every exiting child |
//! | parent: release_task | `tasklist_lock` for write, the child unhashed | kernel/exit.c `wait_task_zombie` -> `release_task` | the parent against every exiting child |
//!
//! `tasklist_lock` is an rwlock: the x86 one of v3.8, a counter that a
//! writer takes with one atomic subtract of RW_LOCK_BIAS and a reader with
//! one decrement; a failed attempt undoes its atomic and spins reading the
//! word until the lock looks free, then tries again
//! (arch/x86/include/asm/spinlock.h `arch_read_lock`, `arch_write_lock`;
//! arch/x86/lib/rwlock.S `__read_lock_failed`, `__write_lock_failed`).
//! Readers do not wait for waiting writers. The word here counts the other
//! way round: 0 is free, a writer adds the bias, a reader adds 1.
//!
//! These are named from the kernel's function structure (read for facts);
//! struct layouts inside each object are approximate, and which v3.x
//! release added or removed a given lock is not pinned line by line.
//! The record's figures give the time each step took, mean per child, and
//! the parent's time in do_wait, asleep and in release_task.
//!
//! Simplifications: the mutexes (`i_mmap_mutex`, the anon_vma lock) are
//! modelled as the machine's spinlock; a sleeping mutex waiter's sleep and
//! wake are not; the parent starts on CPU 0 beside child 0 and the two
//! time-share it; it is not pinned in the real test, so with the profile's
//! `scheduler.placement = "placed"` its wake-ups place it (docs/scheduler.md),
//! and pinned (the default) it stays there; a spin on the rwlock's
//! word is a spin the tick may preempt, where the kernel's is not; the
//! exit path as v3.8 runs it takes no page lock (zap_pte_range dirties,
//! marks and unmaps the shared page without locking it, and frees the
//! private pages through release_pages, which does not lock them either):
//! the page lock is taken at the fault before the release, outside the
//! timed interval, which the record gives apart (exit()'s own
//! copy-on-write faults, with `exit_cow_faults`, are inside it); a woken
//! lock_page waiter tries the bit again against tasks that never slept, as
//! the kernel's does; the page walk's and the page-table frees' private
//! work are estimates per pte, per vma and per page-table page, and every
//! other private part of exit is a fixed compute step; the file vmas' ptes
//! the child faulted in (text) are not counted;
//! `-p` (a delay before the release) does not change what is timed and is
//! not modelled.

use super::WorkloadError;
use super::objects::{Object, Objects};
use super::{lines_of, user_memory, Setup, Size, Workload};
use crate::kernel::page_wait::{self, PageWaitEra, WaitSlot};
use crate::machine::{Machine, Ps};
use crate::memory::{Home, MemoryMap};
use crate::record::Metric;
use crate::task::{
    AccessKind, Affinity, AtomicOp, Done, KeyKind, LockRef, Mem, Op, Program, RunWindow, TaskSpec,
    Timeline, Until, UserWord,
};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeExit {
    /// Children to fork, one per CPU; the machine's CPU count when absent.
    #[serde(default)]
    pub children: Option<u32>,
    /// Private anonymous vmas each child inherits from the parent (heap,
    /// stack, data, and the libraries' writable parts): one anon_vma root lock each.
    #[serde(default = "default_vmas")]
    pub anon_vmas: u32,
    /// The page wait table lock_page sleeps on (sim/kernel/page_wait.rs):
    /// `v3.8` (per zone, 4096 slots) or `v4.11` (256 slots, PG_waiters).
    #[serde(default)]
    pub page_wait_table: PageWaitEra,
    /// Anonymous pages each child inherits mapped from the parent (copy on
    /// write, shared with the parent and every sibling) and unmaps at exit.
    #[serde(default = "default_anon_pages")]
    pub anon_pages: u32,
    /// Of those, the pages the child first writes in exit() after the
    /// release (libc's data: the exit handlers, stdio): a copy-on-write
    /// fault each, which locks the shared page. 0 when absent: how many
    /// pages exit() dirties depends on the libc, and no measurement of the
    /// test's binary is at hand.
    #[serde(default)]
    pub exit_cow_faults: u32,
}

/// A small dynamically linked C program's anonymous memory, about 128 KiB
/// (ld.so's and libc's data and bss, the first heap pages, the stack), as
/// /proc/PID/status's RssAnon shows for such a program: an estimate.
fn default_anon_pages() -> u32 {
    32
}

fn default_vmas() -> u32 {
    6
}

impl Default for TimeExit {
    fn default() -> Self {
        TimeExit {
            children: None,
            anon_vmas: default_vmas(),
            page_wait_table: PageWaitEra::default(),
            anon_pages: default_anon_pages(),
            exit_cow_faults: 0,
        }
    }
}

// Work that touches nothing shared, in nanoseconds: estimates for a small
// process forked from a small parent, not measurements.

/// zap_pte_range's work per present pte beside its atomics: clear the
/// pte, the rss count, the tlb gather's slot.
const ZAP_PTE_NS: u64 = 30;
/// unmap_vmas' and remove_vma's work per vma beside the page walk.
const UNMAP_VMA_NS: u64 = 300;
/// free_pgtables per page-table page: pte_free_tlb, and the page's free to
/// the per-CPU list at tlb_finish_mmu.
const FREE_PT_PAGE_NS: u64 = 200;
/// The most pages exit() may write: each child queues its faults whole.
const MAX_EXIT_COW_FAULTS: u32 = 4096;
/// do_wp_page's copy: a new page allocated and 4 KiB copied.
const COW_COPY_NS: u64 = 1_000;
/// Page-table pages beside one PTE page per vma: the PMD and PUD pages of
/// the two ends of the address space (the program's low, the libraries'
/// and the stack's high).
const UPPER_PT_PAGES: u32 = 4;
/// The file vmas without anon_vma whose ptes fork did not copy: the
/// program's, libc's and ld.so's text.
const TEXT_VMAS: u32 = 3;
const EXIT_OTHER_PRIVATE_NS: u64 = 3_000;
const VMA_UNLINK_NS: u64 = 150;
/// The fault's own work: the walk, a page-table page for the child, the pte.
const FAULT_PRIVATE_NS: u64 = 1_000;
const NOTIFY_NS: u64 = 300;
const REAP_NS: u64 = 1_500;
/// `exit_state` of a zombie (include/linux/sched.h EXIT_ZOMBIE).
const EXIT_ZOMBIE: u32 = 16;
/// Bytes a struct page (64) takes among the objects: a 128-byte pair of
/// lines, so no two share the adjacent-line prefetcher's pair.
const STRUCT_PAGE_SPAN: u64 = 128;
const EXIT_DEAD: u32 = 32;

/// A child's actions beside its anon_vmas' (4 each) and exit()'s
/// copy-on-write faults' (6 each): what `child_actions` queues.
const CHILD_ACTIONS: u64 = 42;
/// Lines of the objects every child shares beside the pages and vmas:
/// the shmem mapping and file, the std files, the dentries, tasklist_lock,
/// the parent's signal state.
const OTHER_OBJECT_LINES: u64 = 24;
/// A lock's name as the objects keep it, on the heap.
const LOCK_NAME_BYTES: u64 = 64;

/// `RW_LOCK_BIAS` of x86's rwlock before the qrwlock (3.16).
const RW_LOCK_BIAS: u32 = 0x0100_0000;

/// Everything the children share, and the parent's side of it.
#[derive(Clone)]
struct Shared {
    ready: UserWord,
    quit: UserWord,
    /// The shared page's struct page: `flags`, and `_count` and
    /// `_mapcount` on its line; its lock bit and wait-table slot.
    page_flags: Mem,
    page_count: UserWord,
    mapcount: UserWord,
    page_lock: PageLock,
    /// The shmem mapping's radix tree, where the fault finds the page.
    page_tree: Mem,
    /// How many of the parent's anonymous pages (Pages::anon), from the
    /// first, each child writes in exit().
    exit_cow_faults: u32,
    i_mmap_mutex: LockRef,
    i_mmap: Mem,
    shm_file: UserWord,
    anon_vma_roots: Vec<(LockRef, Mem)>,
    std_files: Vec<UserWord>,
    dentries: Vec<(LockRef, Mem)>,
    /// The rwlock's word: 0 free, RW_LOCK_BIAS a writer, each reader 1.
    tasklist_lock: UserWord,
    siglock: LockRef,
    wait_chldexit_lock: LockRef,
    /// Written by each child's notification: the word the parent's
    /// `wait_chldexit` wait queue stands for.
    notified: UserWord,
    /// Each child's `exit_state`, in its task_struct.
    exit_state: Vec<UserWord>,
}

/// The shared page's PG_locked and the page wait table's slot it hashes
/// to: what lock_page and unlock_page touch.
#[derive(Clone, Copy, Debug)]
struct PageLock {
    /// PG_locked of the struct page's `flags`: 1 while the page is locked.
    flags: UserWord,
    slot: WaitSlot,
    slot_lock: LockRef,
    /// The design's PG_waiters: an unlock looks at the slot only when set.
    waiters_bit: bool,
}

/// An anonymous page of the parent's that the children map copy-on-write:
/// its lock, `_count` and `_mapcount`, one struct page line for all.
#[derive(Clone, Copy, Debug)]
struct AnonPage {
    lock: PageLock,
    count: UserWord,
    mapcount: UserWord,
}

/// A step of the exit path, or of the parent's wait(), as the record
/// times it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The child's first touch of the shared page, before it is ready.
    Fault,
    BeforeRelease,
    /// exit()'s copy-on-write faults on the parent's pages, before do_exit.
    ExitFaults,
    ExitMm,
    FreePgtables,
    RemoveVma,
    ExitFiles,
    ExitFs,
    ExitNotify,
    Schedule,
    DoWait,
    Asleep,
    ReleaseTask,
}

/// The stages the record gives, and their names: the children's first.
const REPORTED: [(Stage, &str); 12] = [
    (Stage::Fault, "fault on the shared page (lock_page), before the release"),
    (Stage::ExitFaults, "exit(): copy-on-write faults (lock_page)"),
    (Stage::ExitMm, "exit_mm (unmap_vmas)"),
    (Stage::FreePgtables, "free_pgtables"),
    (Stage::RemoveVma, "remove_vma"),
    (Stage::ExitFiles, "exit_files"),
    (Stage::ExitFs, "exit_fs and do_exit's other private work"),
    (Stage::ExitNotify, "exit_notify"),
    (Stage::Schedule, "last schedule"),
    (Stage::DoWait, "parent: do_wait"),
    (Stage::Asleep, "parent: asleep in wait()"),
    (Stage::ReleaseTask, "parent: release_task"),
];
const STAGES: usize = Stage::ReleaseTask as usize + 1;

/// Simulated time spent in each stage, summed over the tasks.
type StageTimes = Arc<Mutex<[Ps; STAGES]>>;

/// A task's clock for its stages: the time until each op ends goes to the
/// stage of that op.
struct Stages {
    times: StageTimes,
    current: Stage,
    since: Ps,
}

impl Stages {
    fn returned(&mut self, now: Ps) {
        let mut times = self.times.lock().expect("one thread runs programs");
        times[self.current as usize] += now - self.since;
        self.since = now;
    }
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Op(Op),
    ReadLock(UserWord),
    WriteLock(UserWord),
    ReadUnlock(UserWord),
    WriteUnlock(UserWord),
    /// lock_page: test_and_set of PG_locked, and __lock_page's sleep on
    /// the wait-table slot while it was set (`queued`: on the slot's list).
    LockPage { page: PageLock, queued: bool },
    /// The waiter joins, or leaves, the slot's list, under its lock.
    PageWaitAdd(PageLock),
    PageWaitDel(PageLock),
    /// unlock_page: clear PG_locked, then wake a waiter if there is one.
    UnlockPage(PageLock),
    /// waitqueue_active: the read of the slot's list every v3.8 unlock makes.
    PageWaitCheck(PageLock),
    /// An atomic dec of a struct page field on each of the parent's pages
    /// from `at` to `end`, one op at a time, so a child's queue does not
    /// hold one action per page.
    PageDrops {
        field: PageField,
        at: u32,
        end: u32,
    },
}

/// The struct page fields the exit drops one of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PageField {
    /// page_remove_rmap.
    MapCount,
    /// put_page, from release_pages.
    Count,
}

/// An rwlock acquisition in flight: the atomic, its undo when it failed,
/// the spin until the lock looks free, and again.
#[derive(Clone, Copy, Debug)]
struct RwAttempt {
    word: UserWord,
    write: bool,
    phase: RwPhase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RwPhase {
    Try,
    Undo,
    Spin,
}

impl RwAttempt {
    fn amount(&self) -> u32 {
        if self.write {
            RW_LOCK_BIAS
        } else {
            1
        }
    }

    fn op(&self) -> Op {
        match self.phase {
            RwPhase::Try => Op::Atomic(self.word, AtomicOp::Add(self.amount())),
            RwPhase::Undo => Op::Atomic(self.word, AtomicOp::Sub(self.amount())),
            RwPhase::Spin if self.write => Op::SpinUntil(self.word, Until::Equals(0)),
            RwPhase::Spin => Op::SpinUntil(self.word, Until::Below(RW_LOCK_BIAS)),
        }
    }

    /// The op returned `old`: whether the lock is now held.
    fn returned(&mut self, old: u32) -> bool {
        match self.phase {
            RwPhase::Try => {
                let free = if self.write {
                    old == 0
                } else {
                    old < RW_LOCK_BIAS
                };
                if !free {
                    self.phase = RwPhase::Undo;
                }
                free
            }
            RwPhase::Undo => {
                self.phase = RwPhase::Spin;
                false
            }
            RwPhase::Spin => {
                self.phase = RwPhase::Try;
                false
            }
        }
    }
}

/// A task's actions in order, each in its stage; an rwlock acquisition
/// runs as many ops as it takes, and a page lock as its waits need.
struct Actions {
    queue: VecDeque<(Stage, Action)>,
    attempt: Option<RwAttempt>,
    /// Whether the op in flight is a plain atomic, whose old value its
    /// program reads.
    atomic_in_flight: bool,
    /// The page-lock action in flight, which decides what follows it.
    page_in_flight: Option<Action>,
    pages: Pages,
    stages: Stages,
}

/// The most actions a page lock's outcome puts back at once: the slot's
/// lock, onto its list, the PG_waiters bit, the lock's release, the wait
/// for PG_locked, the lock again.
const PAGE_LOCK_OUTCOME_ACTIONS: usize = 6;

/// What every task's actions share about the parent's pages.
#[derive(Clone)]
struct Pages {
    /// Tasks on the wait-table lists of the pages, as the kernel's lists hold them.
    waiters: Arc<Mutex<u32>>,
    anon: Arc<[AnonPage]>,
}

impl Actions {
    fn new(times: StageTimes, pages: Pages) -> Actions {
        Actions {
            queue: VecDeque::new(),
            attempt: None,
            atomic_in_flight: false,
            page_in_flight: None,
            pages,
            stages: Stages {
                times,
                current: Stage::BeforeRelease,
                since: 0,
            },
        }
    }

    /// The queue's room: at tens of thousands of children, most of a run's memory.
    fn held_bytes(&self) -> u64 {
        (self.queue.capacity() * size_of::<(Stage, Action)>()) as u64
    }

    fn push(&mut self, stage: Stage, ops: impl IntoIterator<Item = Op>) {
        self.queue
            .extend(ops.into_iter().map(|op| (stage, Action::Op(op))));
    }

    fn next(&mut self) -> Option<Op> {
        if let Some(attempt) = &self.attempt {
            return Some(attempt.op());
        }
        let (stage, action) = self.queue.pop_front()?;
        self.stages.current = stage;
        self.atomic_in_flight = matches!(action, Action::Op(Op::Atomic(..)));
        self.page_in_flight = matches!(
            action,
            Action::LockPage { .. } | Action::UnlockPage(_) | Action::PageWaitCheck(_)
        )
        .then_some(action);
        Some(match action {
            Action::Op(op) => op,
            Action::ReadLock(word) | Action::WriteLock(word) => {
                let attempt = RwAttempt {
                    word,
                    write: matches!(action, Action::WriteLock(_)),
                    phase: RwPhase::Try,
                };
                self.attempt = Some(attempt);
                attempt.op()
            }
            Action::ReadUnlock(word) => Op::Atomic(word, AtomicOp::Sub(1)),
            Action::WriteUnlock(word) => Op::Atomic(word, AtomicOp::Sub(RW_LOCK_BIAS)),
            Action::LockPage { page, .. } => Op::Atomic(page.flags, AtomicOp::Exchange(1)),
            Action::PageWaitAdd(page) | Action::PageWaitDel(page) => {
                let mut waiters = self.pages.waiters.lock().expect("one thread runs programs");
                if matches!(action, Action::PageWaitAdd(_)) {
                    *waiters += 1;
                } else {
                    *waiters -= 1;
                }
                Op::Access(page.slot.list, AccessKind::Write)
            }
            Action::UnlockPage(page) => Op::Atomic(page.flags, AtomicOp::Store(0)),
            Action::PageWaitCheck(page) => Op::Access(page.slot.list, AccessKind::Read),
            Action::PageDrops { field, at, end } => {
                if at + 1 < end {
                    let rest = Action::PageDrops {
                        field,
                        at: at + 1,
                        end,
                    };
                    self.queue.push_front((stage, rest));
                }
                let page = &self.pages.anon[at as usize];
                let word = match field {
                    PageField::MapCount => page.mapcount,
                    PageField::Count => page.count,
                };
                Op::Atomic(word, AtomicOp::Sub(1))
            }
        })
    }

    /// A page-lock action returned `old`: what it takes next goes first
    /// (at most PAGE_LOCK_OUTCOME_ACTIONS).
    fn page_returned(&mut self, action: Action, old: u32) {
        let waiters = *self.pages.waiters.lock().expect("one thread runs programs");
        let mut next = Vec::new();
        match action {
            Action::LockPage { page, queued } if old == 0 && queued => {
                // finish_wait: off the slot's list.
                next = vec![
                    Action::Op(Op::SpinLock(page.slot_lock)),
                    Action::PageWaitDel(page),
                    Action::Op(Op::SpinUnlock(page.slot_lock)),
                ];
            }
            Action::LockPage { .. } if old == 0 => {}
            Action::LockPage { page, queued } => {
                // prepare_to_wait_exclusive, then sleep while PG_locked is set.
                next.push(Action::Op(Op::SpinLock(page.slot_lock)));
                if !queued {
                    next.push(Action::PageWaitAdd(page));
                    if page.waiters_bit {
                        next.push(Action::Op(Op::Access(page.flags.mem, AccessKind::Rmw)));
                    }
                }
                next.extend([
                    Action::Op(Op::SpinUnlock(page.slot_lock)),
                    Action::Op(Op::WaitEvent(page.flags, Until::Equals(0))),
                    Action::LockPage { page, queued: true },
                ]);
            }
            Action::UnlockPage(page) if !page.waiters_bit => next.push(Action::PageWaitCheck(page)),
            Action::UnlockPage(page) | Action::PageWaitCheck(page) if waiters > 0 => {
                next = vec![
                    Action::Op(Op::SpinLock(page.slot_lock)),
                    Action::Op(Op::WakeUpOne(page.flags.mem)),
                    Action::Op(Op::SpinUnlock(page.slot_lock)),
                ];
            }
            _ => {}
        }
        debug_assert!(next.len() <= PAGE_LOCK_OUTCOME_ACTIONS);
        let stage = self.stages.current;
        for action in next.into_iter().rev() {
            self.queue.push_front((stage, action));
        }
    }

    /// Past the release every step is the kernel's: exit, or wait(); so
    /// is the fault before it, and exit()'s faults.
    fn in_kernel(&self) -> bool {
        self.stages.current != Stage::BeforeRelease
    }

    /// The op ended: the old value of a plain atomic, for its program.
    fn returned(&mut self, done: Done) -> Option<u32> {
        self.stages.returned(done.now);
        if let Some(action) = self.page_in_flight.take() {
            self.page_returned(action, done.ret as u32);
            return None;
        }
        if let Some(attempt) = &mut self.attempt {
            if attempt.returned(done.ret as u32) {
                self.attempt = None;
            }
            return None;
        }
        self.atomic_in_flight.then_some(done.ret as u32)
    }
}

struct Child {
    actions: Actions,
}

impl Program for Child {
    fn next_op(&mut self) -> Op {
        self.actions.next().unwrap_or(Op::Exit)
    }

    fn op_returned(&mut self, done: Done) {
        self.actions.returned(done);
    }

    fn in_kernel(&self) -> bool {
        self.actions.in_kernel()
    }

    fn held_bytes(&self) -> u64 {
        self.actions.held_bytes()
    }
}

fn child_actions(
    s: &Shared,
    child: usize,
    schedule_ps: u64,
    times: StageTimes,
    pages: Pages,
) -> Actions {
    let ns = |n: u64| Op::Compute(n * 1000);
    let mut a = Actions::new(times, pages);
    // The first touch of the shared page faults: fork copied no pte of a
    // shared mapping. shmem_fault finds the page and returns it locked;
    // __do_fault maps it and unlocks it.
    a.push(
        Stage::Fault,
        [
            Op::Access(s.page_tree, AccessKind::Read),
            Op::Atomic(s.page_count, AtomicOp::Add(1)),
        ],
    );
    a.queue.push_back((
        Stage::Fault,
        Action::LockPage {
            page: s.page_lock,
            queued: false,
        },
    ));
    a.push(
        Stage::Fault,
        [Op::Atomic(s.mapcount, AtomicOp::Add(1)), ns(FAULT_PRIVATE_NS)],
    );
    a.queue
        .push_back((Stage::Fault, Action::UnlockPage(s.page_lock)));
    a.push(
        Stage::BeforeRelease,
        [
            Op::Atomic(s.ready, AtomicOp::Add(1)),
            Op::SpinUntil(s.quit, Until::NotEquals(0)),
        ],
    );
    // exit(): the first write to each of these pages since fork is a
    // copy-on-write fault; do_wp_page locks the old page to see whether it
    // may reuse it (it may not: every sibling maps it), copies it, and
    // drops the child's mapping and reference of it.
    let anon = a.pages.anon.clone();
    let (written, end) = (s.exit_cow_faults, anon.len() as u32);
    let shared = |field| Action::PageDrops {
        field,
        at: written,
        end,
    };
    for page in &anon[..written as usize] {
        a.queue.push_back((
            Stage::ExitFaults,
            Action::LockPage {
                page: page.lock,
                queued: false,
            },
        ));
        a.push(
            Stage::ExitFaults,
            [Op::Access(page.mapcount.mem, AccessKind::Read)],
        );
        a.queue
            .push_back((Stage::ExitFaults, Action::UnlockPage(page.lock)));
        a.push(
            Stage::ExitFaults,
            [
                ns(COW_COPY_NS),
                Op::Atomic(page.mapcount, AtomicOp::Sub(1)),
                Op::Atomic(page.count, AtomicOp::Sub(1)),
            ],
        );
    }
    // exit_mm -> exit_mmap -> unmap_vmas: zap the shared page, then each
    // pte: a page still shared with the parent loses this mapping
    // (page_remove_rmap); one the child copied is its own.
    let vmas = s.anon_vma_roots.len() as u32 + 1 + TEXT_VMAS;
    a.push(
        Stage::ExitMm,
        [
            Op::Access(s.page_flags, AccessKind::Rmw),
            Op::Access(s.page_flags, AccessKind::Read),
            Op::Atomic(s.mapcount, AtomicOp::Sub(1)),
            ns(u64::from(vmas) * UNMAP_VMA_NS),
        ],
    );
    if written < end {
        a.queue
            .push_back((Stage::ExitMm, shared(PageField::MapCount)));
    }
    a.push(Stage::ExitMm, [ns(u64::from(end) * ZAP_PTE_NS)]);
    // free_pgtables: each vma's anon_vmas, then the file vma from i_mmap.
    for &(lock, root) in &s.anon_vma_roots {
        a.push(
            Stage::FreePgtables,
            [
                Op::SpinLock(lock),
                Op::Access(root, AccessKind::Write),
                ns(VMA_UNLINK_NS),
                Op::SpinUnlock(lock),
            ],
        );
    }
    a.push(
        Stage::FreePgtables,
        [
            Op::SpinLock(s.i_mmap_mutex),
            Op::Access(s.i_mmap, AccessKind::Write),
            ns(VMA_UNLINK_NS),
            Op::SpinUnlock(s.i_mmap_mutex),
        ],
    );
    // free_pgd_range frees a PTE page per vma and the pages above them;
    // tlb_finish_mmu -> free_pages_and_swap_cache -> release_pages drops
    // the gathered pages' references: the shared pages' `_count`.
    let pt_pages = s.anon_vma_roots.len() as u64 + 1 + u64::from(UPPER_PT_PAGES);
    a.push(Stage::FreePgtables, [ns(pt_pages * FREE_PT_PAGE_NS)]);
    if written < end {
        a.queue
            .push_back((Stage::FreePgtables, shared(PageField::Count)));
    }
    a.push(
        Stage::RemoveVma,
        [Op::Atomic(s.shm_file, AtomicOp::Sub(1))],
    );
    a.push(
        Stage::ExitFiles,
        s.std_files.iter().map(|&f| Op::Atomic(f, AtomicOp::Sub(1))),
    );
    for &(d_lock, d_count) in &s.dentries {
        a.push(
            Stage::ExitFs,
            [
                Op::SpinLock(d_lock),
                Op::Access(d_count, AccessKind::Write),
                Op::SpinUnlock(d_lock),
            ],
        );
    }
    a.push(Stage::ExitFs, [ns(EXIT_OTHER_PRIVATE_NS)]);
    a.queue
        .push_back((Stage::ExitNotify, Action::WriteLock(s.tasklist_lock)));
    a.push(
        Stage::ExitNotify,
        [
            Op::SpinLock(s.siglock),
            ns(NOTIFY_NS),
            Op::SpinLock(s.wait_chldexit_lock),
            Op::Atomic(s.notified, AtomicOp::Add(1)),
            Op::WakeUp(s.notified.mem),
            Op::SpinUnlock(s.wait_chldexit_lock),
            Op::SpinUnlock(s.siglock),
            Op::Atomic(s.exit_state[child], AtomicOp::Store(EXIT_ZOMBIE)),
        ],
    );
    a.queue
        .push_back((Stage::ExitNotify, Action::WriteUnlock(s.tasklist_lock)));
    a.push(Stage::Schedule, [Op::Compute(schedule_ps)]);
    // Tens of thousands of children each hold their queue from the start:
    // without the room its growth left, it is half the size. A page lock's
    // outcome puts its actions back at the front while the lock's own
    // is out: room for those keeps the queue from growing again then.
    a.queue.shrink_to(a.queue.len() + PAGE_LOCK_OUTCOME_ACTIONS);
    a
}

/// The parent: wait for every child to be ready, release them, then
/// wait() until none is left, each wait() walking the remaining children
/// in fork order under `tasklist_lock` for the first zombie.
struct Parent {
    shared: Shared,
    children: u32,
    /// Children not yet reaped, in fork order.
    alive: Vec<usize>,
    state: ParentState,
    actions: Actions,
    /// The old value the last plain atomic returned, until a step reads it.
    last: Option<u32>,
    syscall_ps: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ParentState {
    Release,
    /// wait(): read how many children have notified, then walk.
    WaitStart,
    Walk {
        notified: u32,
        at: usize,
    },
    Reaped,
    Done,
}

impl Program for Parent {
    fn next_op(&mut self) -> Op {
        self.choose_op()
    }

    /// The test does not pin the parent.
    fn affinity(&self) -> Affinity {
        Affinity::CpusFrom(0)
    }

    fn op_returned(&mut self, done: Done) {
        if let Some(old) = self.actions.returned(done) {
            self.last = Some(old);
        }
    }

    fn in_kernel(&self) -> bool {
        self.actions.in_kernel()
    }

    fn held_bytes(&self) -> u64 {
        self.actions.held_bytes() + (self.alive.capacity() * size_of::<usize>()) as u64
    }
}

impl Parent {
    fn choose_op(&mut self) -> Op {
        loop {
            if let Some(op) = self.actions.next() {
                return op;
            }
            let s = &self.shared;
            let last = self.last.take();
            match self.state {
                ParentState::Release => {
                    self.actions.push(
                        Stage::BeforeRelease,
                        [
                            Op::SpinUntil(s.ready, Until::Equals(self.children)),
                            Op::Clock,
                            Op::Atomic(s.quit, AtomicOp::Store(1)),
                        ],
                    );
                    self.state = ParentState::WaitStart;
                }
                ParentState::WaitStart if self.alive.is_empty() => {
                    self.actions.push(Stage::DoWait, [Op::Clock, Op::Exit]);
                    self.state = ParentState::Done;
                }
                ParentState::WaitStart => {
                    self.actions.push(
                        Stage::DoWait,
                        [
                            Op::Compute(self.syscall_ps / 2),
                            Op::Atomic(s.notified, AtomicOp::Load),
                        ],
                    );
                    self.actions
                        .queue
                        .push_back((Stage::DoWait, Action::ReadLock(s.tasklist_lock)));
                    self.state = ParentState::Walk {
                        notified: u32::MAX,
                        at: 0,
                    };
                }
                ParentState::Walk { notified, at } => {
                    // The first result is the notify count; later ones are exit states.
                    let notified = if notified == u32::MAX {
                        last.unwrap_or(0)
                    } else {
                        if last == Some(EXIT_ZOMBIE) {
                            let child = self.alive.remove(at - 1);
                            self.reap(child);
                            continue;
                        }
                        notified
                    };
                    if at < self.alive.len() {
                        let child = self.alive[at];
                        self.actions.push(
                            Stage::DoWait,
                            [Op::Atomic(s.exit_state[child], AtomicOp::Load)],
                        );
                        self.state = ParentState::Walk {
                            notified,
                            at: at + 1,
                        };
                    } else {
                        // No zombie yet: sleep until another child notifies.
                        self.actions
                            .queue
                            .push_back((Stage::DoWait, Action::ReadUnlock(s.tasklist_lock)));
                        self.actions.push(
                            Stage::Asleep,
                            [Op::WaitEvent(s.notified, Until::NotEquals(notified))],
                        );
                        self.state = ParentState::WaitStart;
                    }
                }
                ParentState::Reaped => {
                    self.actions
                        .push(Stage::DoWait, [Op::Compute(self.syscall_ps / 2)]);
                    self.state = ParentState::WaitStart;
                }
                ParentState::Done => return Op::Exit,
            }
        }
    }

    /// wait_task_zombie drops the read lock; release_task takes it for write.
    fn reap(&mut self, child: usize) {
        let s = &self.shared;
        let q = &mut self.actions.queue;
        q.push_back((Stage::DoWait, Action::ReadUnlock(s.tasklist_lock)));
        q.push_back((Stage::ReleaseTask, Action::Op(Op::Compute(REAP_NS * 1000))));
        q.push_back((Stage::ReleaseTask, Action::WriteLock(s.tasklist_lock)));
        q.push_back((
            Stage::ReleaseTask,
            Action::Op(Op::Atomic(s.exit_state[child], AtomicOp::Store(EXIT_DEAD))),
        ));
        q.push_back((Stage::ReleaseTask, Action::WriteUnlock(s.tasklist_lock)));
        self.state = ParentState::Reaped;
    }
}

/// The parent's stages are its own time; the children's are summed over them.
fn is_parents(stage: Stage) -> bool {
    stage as usize >= Stage::DoWait as usize
}

/// The stages the readout reports, each with its figure's name: a child's
/// stage is its mean per child. The exit faults' only where there are any.
fn stage_figures(reports_exit_faults: bool) -> impl Iterator<Item = (Stage, String)> {
    REPORTED
        .into_iter()
        .filter(move |&(stage, _)| stage != Stage::ExitFaults || reports_exit_faults)
        .map(|(stage, name)| {
            let per = if is_parents(stage) {
                ""
            } else {
                ", mean per child"
            };
            (stage, format!("{name}{per}"))
        })
}

/// The figures of the interval the real test prints, before the stages'.
const ALL_EXITED: &str = "time until all exited";
const CHILDREN_EXITED: &str = "children exited";

impl Workload for TimeExit {
    fn figures(&self) -> Vec<String> {
        [ALL_EXITED, CHILDREN_EXITED]
            .into_iter()
            .map(String::from)
            .chain(stage_figures(self.exit_cow_faults > 0).map(|(_, name)| name))
            .collect()
    }

    fn label(&self) -> String {
        match self.children {
            Some(n) => format!("time_exit {n}"),
            None => "time_exit (one child per CPU)".into(),
        }
    }

    fn threads(&self, machine: &Machine) -> u32 {
        super::one_per_cpu_unless(self.children, machine)
    }

    fn size(&self, machine: &Machine) -> Size {
        let children = u64::from(self.threads(machine));
        let vmas = u64::from(self.anon_vmas);
        let pages = u64::from(self.anon_pages);
        let wait_table = page_wait::preset(self.page_wait_table);
        let object = |bytes| lines_of(bytes, machine);
        let lines = [
            object(4096),
            object(wait_table.slots() * wait_table.bucket_bytes),
            // The shared page's and the parent's pages' struct pages.
            (pages + 1).saturating_mul(object(STRUCT_PAGE_SPAN)),
            vmas.saturating_mul(object(64)),
            // Each child's task_struct.
            children.saturating_mul(object(64)),
            OTHER_OBJECT_LINES,
        ]
        .into_iter()
        .fold(0, u64::saturating_add);
        // Each child's exit queued whole (child_actions), the parent's list
        // of children, and the name of each lock the objects hold.
        let queue = CHILD_ACTIONS
            + 4 * vmas
            + 6 * u64::from(self.exit_cow_faults)
            + PAGE_LOCK_OUTCOME_ACTIONS as u64;
        let action = size_of::<(Stage, Action)>() as u64;
        let held = [
            children.saturating_mul(queue.saturating_mul(action)),
            children.saturating_mul(size_of::<usize>() as u64),
            (vmas + pages).saturating_mul(LOCK_NAME_BYTES),
        ]
        .into_iter()
        .fold(0, u64::saturating_add);
        Size {
            tasks: children + 1,
            processes: children + 1,
            futexes: 0,
            lines,
            held_bytes: held,
        }
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        super::at_least_one("time-exit: children", self.children)?;
        super::at_most_objects("time-exit: anon_pages", self.anon_pages.into())?;
        if self.exit_cow_faults > MAX_EXIT_COW_FAULTS {
            return Err(WorkloadError::at(
                "exit_cow_faults",
                format!(
                    "time-exit: exit_cow_faults = {} is more than the {MAX_EXIT_COW_FAULTS} \
                     pages futexsim lets exit() write",
                    self.exit_cow_faults
                ),
            ));
        }
        if self.exit_cow_faults > self.anon_pages {
            return Err(WorkloadError::at(
                "exit_cow_faults",
                format!(
                    "time-exit: exit_cow_faults = {} is more than the anon_pages = {} a child maps",
                    self.exit_cow_faults, self.anon_pages
                ),
            ));
        }
        super::at_most_objects("time-exit: anon_vmas", self.anon_vmas.into())
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let n = self.threads(machine);
        let parent_node = machine.node_of(0);
        let home = Home::Node(parent_node);
        // struct time_exit: ready and quit each on its own line of a MAP_SHARED page.
        let page = user_memory::first_mmap(4096, rng);
        let cell = memory.add("time_exit shared page", page, 4096, home);
        let shared_word = |addr: u64| UserWord {
            mem: Mem {
                addr,
                line: memory.line_in(cell, addr),
            },
            kind: KeyKind::SharedFile,
        };
        let (ready, quit) = (shared_word(page), shared_word(page + 64));
        let mut o = Objects::default();
        let word_in = |o: &mut Objects, memory: &mut MemoryMap, name: &str, bytes, at| {
            let obj: Object = o.object(memory, name, bytes, home);
            UserWord {
                mem: obj.at(memory, at),
                kind: KeyKind::SharedFile,
            }
        };
        // The parent's pages, in its node's memory, their struct pages in
        // the vmemmap, and the wait table their locks sleep on.
        let table = page_wait::preset(self.page_wait_table).lay_out(memory, parent_node);
        let mut slot_locks: HashMap<u64, LockRef> = HashMap::new();
        // A struct page is an object of its own, apart from its neighbours'
        // adjacent-line pairs: its address is what hash_ptr hashes.
        let mut struct_page = |memory: &mut MemoryMap, o: &mut Objects, name: &str| {
            let page = o.object(memory, format!("{name} struct page"), STRUCT_PAGE_SPAN, home);
            let addr = page.base;
            let word = |at| UserWord {
                mem: page.at(memory, at),
                kind: KeyKind::SharedFile,
            };
            let slot = table.slot(memory, addr);
            let slot_lock = *slot_locks.entry(slot.index).or_insert_with(|| {
                o.lock_at(&format!("page wait table slot {} lock", slot.index), slot.lock)
            });
            let lock = PageLock {
                flags: word(0),
                slot,
                slot_lock,
                waiters_bit: table.design.waiters_bit,
            };
            (lock, word(24), word(28))
        };
        let (page_lock, mapcount, page_count) = struct_page(memory, &mut o, "shared page");
        let page_flags = page_lock.flags.mem;
        let anon_pages: Vec<AnonPage> = (1..=self.anon_pages)
            .map(|i| {
                let (lock, mapcount, count) =
                    struct_page(memory, &mut o, &format!("parent anon page {i}"));
                AnonPage {
                    lock,
                    count,
                    mapcount,
                }
            })
            .collect();
        let mapping = o.object(memory, "shmem address_space", 192, home);
        let i_mmap_mutex = o.lock_at("shmem i_mmap_mutex", mapping.at(memory, 0x48));
        let i_mmap = mapping.at(memory, 0x20);
        let page_tree = mapping.at(memory, 0x08);
        let shm_file = word_in(&mut o, memory, "shmem struct file", 256, 0x38);
        let anon_vma_roots = (0..self.anon_vmas)
            .map(|v| {
                let root = o.object(memory, format!("anon_vma root {v}"), 64, home);
                (
                    o.lock_at(&format!("anon_vma root {v} lock"), root.at(memory, 8)),
                    root.at(memory, 40),
                )
            })
            .collect();
        let std_files = (0..3)
            .map(|fd| word_in(&mut o, memory, &format!("struct file fd {fd}"), 256, 0x38))
            .collect();
        let dentries = ["/", "cwd"]
            .iter()
            .map(|d| {
                let dentry = o.object(memory, format!("dentry {d}"), 192, home);
                (
                    o.lock_at(&format!("dentry {d} d_lock"), dentry.at(memory, 0x64)),
                    dentry.at(memory, 0x60),
                )
            })
            .collect();
        let tasklist_lock = word_in(&mut o, memory, "tasklist_lock", 64, 0);
        let signal = o.object(memory, "parent sighand and signal", 128, home);
        let siglock = o.lock_at("parent siglock", signal.at(memory, 8));
        let wait_chldexit_lock = o.lock_at("parent wait_chldexit lock", signal.at(memory, 64));
        let notified = UserWord {
            mem: signal.at(memory, 72),
            kind: KeyKind::SharedFile,
        };
        let exit_state = (0..n)
            .map(|c| {
                let node = Home::Node(machine.node_of(c % machine.cpus()));
                let task = o.object(memory, format!("child {c} task_struct"), 64, node);
                UserWord {
                    mem: task.at(memory, 0),
                    kind: KeyKind::SharedFile,
                }
            })
            .collect();
        let shared = Shared {
            ready,
            quit,
            page_flags,
            page_count,
            mapcount,
            page_lock,
            page_tree,
            exit_cow_faults: self.exit_cow_faults,
            i_mmap_mutex,
            i_mmap,
            shm_file,
            anon_vma_roots,
            std_files,
            dentries,
            tasklist_lock,
            siglock,
            wait_chldexit_lock,
            notified,
            exit_state,
        };
        let reports_exit_faults = self.exit_cow_faults > 0;
        let times: StageTimes = Arc::new(Mutex::new([0; STAGES]));
        let pages = Pages {
            waiters: Arc::new(Mutex::new(0)),
            anon: anon_pages.into(),
        };
        let mut tasks: Vec<TaskSpec> = (0..n)
            .map(|c| TaskSpec {
                cpu: c % machine.cpus(),
                program: Box::new(Child {
                    actions: child_actions(
                        &shared,
                        c as usize,
                        machine.costs.schedule,
                        times.clone(),
                        pages.clone(),
                    ),
                }),
            })
            .collect();
        tasks.push(TaskSpec {
            cpu: 0,
            program: Box::new(Parent {
                shared,
                children: n,
                alive: (0..n as usize).collect(),
                state: ParentState::Release,
                actions: Actions::new(times.clone(), pages),
                last: None,
                syscall_ps: machine.costs.syscall,
            }),
        });
        let processes = n + 1;
        Setup {
            tasks,
            // Children are processes 0..n, the parent n.
            task_process: (0..processes).collect(),
            mms: user_memory::mm_addresses(processes, rng),
            futexes: 0,
            lock_names: o.into_lock_names(),
            readout: Some(Box::new(move |window, timeline| {
                let mut figures = time_until_all_exited(window, timeline);
                let times = times.lock().expect("the run is over");
                for (stage, name) in stage_figures(reports_exit_faults) {
                    let total = times[stage as usize] as f64 / 1e6;
                    let figure = if is_parents(stage) {
                        total
                    } else {
                        total / f64::from(n)
                    };
                    figures.push(Metric::new(name, figure, "us"));
                }
                figures
            })),
            keys: None,
            thread_futexes: Vec::new(),
        }
    }
}

/// The interval the real test prints: from setting `quit` until wait()
/// finds no child left, as the parent's two clock reads bracket it.
fn time_until_all_exited(_: &RunWindow, timeline: &Timeline) -> Vec<Metric> {
    let children = timeline.exits.split_last().map_or(&[][..], |(_, c)| c);
    let exited = children.iter().filter(|e| e.is_some()).count();
    let mut figures = Vec::new();
    if let Some(reads) = timeline.clock_reads.last() {
        if let [released, reaped] = reads[..] {
            figures.push(Metric::new(
                ALL_EXITED,
                (reaped - released) as f64 / 1e12,
                "s",
            ));
        }
    }
    figures.push(Metric::new(CHILDREN_EXITED, exited as f64, ""));
    figures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;
    use rand::SeedableRng;

    /// The size counted from the numbers holds what is laid out: the
    /// children's queues to within their room, the objects' lines.
    #[test]
    fn the_size_counts_what_is_laid_out() {
        let machine = Machine::new(preset("icx-2s").unwrap()).unwrap();
        for (children, anon_vmas, anon_pages, exit_cow_faults) in
            [(4, 6, 32, 0), (64, 100, 32, 8), (16, 1000, 2000, 100)]
        {
            let workload = TimeExit {
                children: Some(children),
                anon_vmas,
                anon_pages,
                exit_cow_faults,
                ..TimeExit::default()
            };
            let mut memory = MemoryMap::new(machine.line_size());
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            let setup = workload.setup(&machine, &mut memory, &mut rng);
            let size = workload.size(&machine);
            assert_eq!(size.tasks, setup.tasks.len() as u64);
            assert_eq!(size.processes, setup.mms.len() as u64);
            let held: u64 = setup.tasks.iter().map(|t| t.program.held_bytes()).sum();
            assert!(
                (held..=held + held / 4 + (64 << 10)).contains(&size.held_bytes),
                "{children} children, {anon_vmas} vmas: {} bytes for {held} held",
                size.held_bytes
            );
            let lines = u64::from(memory.lines());
            assert!(
                (lines..=2 * lines).contains(&size.lines),
                "{children} children, {anon_vmas} vmas: {} lines for {lines}",
                size.lines
            );
        }
    }
}
