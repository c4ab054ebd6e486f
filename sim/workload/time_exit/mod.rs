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
//! `tasklist_lock` is the x86 rwlock of v3.8, and the page lock is
//! lock_page on the page wait table: both are shared workload primitives
//! (sim/workload/primitives/rwlock.rs, page_lock.rs). The child's exit
//! path is child.rs, the parent's wait() parent.rs, and the queue of
//! actions each runs, timed by stage, actions.rs.
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

mod actions;
mod child;
mod parent;

use super::objects::{Object, Objects};
use super::primitives::page_lock::{PageLock, PageWaiters};
use super::WorkloadError;
use super::{lines_of, user_memory, Setup, Size, Workload};
use crate::kernel::page_wait::{self, PageWaitEra};
use crate::machine::{Machine, Ps};
use crate::memory::{Home, MemoryMap};
use crate::record::{Metric, WorkloadKind};
use crate::task::{KeyKind, LockRef, Mem, RunWindow, TaskSpec, Timeline, UserWord};
use child::Child;
use parent::Parent;
use actions::{Action, Stage, STAGES};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
// Fixed nanoseconds that ignore the profile's clock: scaling them would move results.

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
    /// How many of the parent's anonymous pages (Context::anon), from the
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

/// An anonymous page of the parent's that the children map copy-on-write:
/// its lock, `_count` and `_mapcount`, one struct page line for all.
#[derive(Clone, Copy, Debug)]
struct AnonPage {
    lock: PageLock,
    count: UserWord,
    mapcount: UserWord,
}

/// The struct page fields the exit drops one of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PageField {
    /// page_remove_rmap.
    MapCount,
    /// put_page, from release_pages.
    Count,
}

/// What the parent and every child of one run share beside simulated
/// memory: the page wait lists their page locks read, the parent's
/// anonymous pages, and the time they spent in each stage, which the
/// readout reads once the run is over. One per run, built with its tasks.
struct Context {
    waiters: Arc<PageWaiters>,
    anon: Box<[AnonPage]>,
    /// Simulated time spent in each stage, summed over the tasks.
    stage_ps: [AtomicU64; STAGES],
}

impl Context {
    fn spent(&self, stage: Stage, ps: Ps) {
        self.stage_ps[stage as usize].fetch_add(ps, Ordering::Relaxed);
    }

    fn total(&self, stage: Stage) -> Ps {
        self.stage_ps[stage as usize].load(Ordering::Relaxed)
    }
}

/// The parent's stages are its own time; the children's are summed over them.
fn is_parents(stage: Stage) -> bool {
    stage as usize >= Stage::DoWait as usize
}

/// The stages the readout reports, each with its figure's name: a child's
/// stage is its mean per child. The exit faults' only where there are any.
fn stage_figures(reports_exit_faults: bool) -> impl Iterator<Item = (Stage, String)> {
    actions::REPORTED
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

/// The figures of the interval the real test prints, before the stages':
/// the time from the release until the last child was reaped, what the
/// test exists for, and how many exited.
pub const ALL_EXITED: &str = "time until all exited";
const CHILDREN_EXITED: &str = "children exited";

impl Workload for TimeExit {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::TimeExit
    }

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
        let queue = CHILD_ACTIONS + 4 * vmas + 6 * u64::from(self.exit_cow_faults);
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
        let context = Arc::new(Context {
            waiters: Arc::default(),
            anon: anon_pages.into(),
            stage_ps: Default::default(),
        });
        let mut tasks: Vec<TaskSpec> = (0..n)
            .map(|c| TaskSpec {
                cpu: c % machine.cpus(),
                program: Box::new(Child::new(
                    &shared,
                    c as usize,
                    machine.costs.schedule,
                    context.clone(),
                )),
            })
            .collect();
        tasks.push(TaskSpec {
            cpu: 0,
            program: Box::new(Parent::new(
                shared,
                n,
                machine.costs.syscall,
                context.clone(),
            )),
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
                for (stage, name) in stage_figures(reports_exit_faults) {
                    let total = context.total(stage) as f64 / 1e6;
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
    use crate::task::{AtomicOp, Done, Op, Program, Until};
    use crate::workload::primitives::rwlock::RW_LOCK_BIAS;
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

    /// The programs of a time_exit of `children` children on icx-2s, the
    /// parent last.
    fn programs(children: u32, exit_cow_faults: u32) -> Vec<Box<dyn Program>> {
        let machine = Machine::new(preset("icx-2s").unwrap()).unwrap();
        let workload = TimeExit {
            children: Some(children),
            anon_pages: 4,
            exit_cow_faults,
            ..TimeExit::default()
        };
        let mut memory = MemoryMap::new(machine.line_size());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let setup = workload.setup(&machine, &mut memory, &mut rng);
        setup.tasks.into_iter().map(|t| t.program).collect()
    }

    /// Runs `program` alone, each op returning what `answer` gives for it,
    /// until it exits or has issued `limit` ops; gives the ops it issued.
    fn drive(
        program: &mut dyn Program,
        limit: usize,
        answer: impl Fn(&Op) -> u32,
    ) -> Vec<Op> {
        let mut ops = Vec::new();
        while ops.len() < limit {
            let op = program.next_op();
            ops.push(op);
            if op == Op::Exit {
                break;
            }
            program.op_returned(Done {
                now: ops.len() as u64 * 1000,
                ret: answer(&op).into(),
                counted: true,
            });
        }
        ops
    }

    fn count(ops: &[Op], what: impl Fn(&Op) -> bool) -> usize {
        ops.iter().filter(|op| what(op)).count()
    }

    /// Uncontended, a child locks the shared page at its fault and each
    /// page exit() writes once, and takes tasklist_lock for write once,
    /// around its notification of the parent, before its last schedule.
    #[test]
    fn a_child_locks_each_page_it_faults_on_and_notifies_under_tasklist_lock() {
        let mut tasks = programs(2, 3);
        let ops = drive(tasks[0].as_mut(), 10_000, |_| 0);
        assert_eq!(ops.last(), Some(&Op::Exit));
        let test_and_set = |op: &Op| matches!(op, Op::Atomic(_, AtomicOp::Exchange(1)));
        assert_eq!(count(&ops, test_and_set), 1 + 3);
        let write_lock = ops
            .iter()
            .position(|op| matches!(op, Op::Atomic(_, AtomicOp::Add(RW_LOCK_BIAS))))
            .unwrap();
        let write_unlock = ops
            .iter()
            .position(|op| matches!(op, Op::Atomic(_, AtomicOp::Sub(RW_LOCK_BIAS))))
            .unwrap();
        assert!(write_lock < write_unlock);
        let notify = &ops[write_lock..write_unlock];
        assert_eq!(count(notify, |op| matches!(op, Op::WakeUp(_))), 1);
        let zombie = |op: &Op| matches!(op, Op::Atomic(_, AtomicOp::Store(EXIT_ZOMBIE)));
        assert_eq!(count(notify, zombie), 1);
        assert!(matches!(ops[ops.len() - 2], Op::Compute(_)), "{ops:?}");
    }

    /// Every exit_state the parent reads is a zombie's: it reaps each
    /// child in turn under tasklist_lock for write, then reads the clock
    /// the second time and exits.
    #[test]
    fn the_parent_reaps_every_zombie_it_finds_then_reads_the_clock_and_exits() {
        let children = 3;
        let mut tasks = programs(children, 0);
        let parent = tasks.last_mut().unwrap();
        let ops = drive(parent.as_mut(), 10_000, |op| match op {
            Op::Atomic(_, AtomicOp::Load) => EXIT_ZOMBIE,
            _ => 0,
        });
        assert_eq!(ops.last(), Some(&Op::Exit));
        assert_eq!(count(&ops, |op| *op == Op::Clock), 2);
        let dead = |op: &Op| matches!(op, Op::Atomic(_, AtomicOp::Store(EXIT_DEAD)));
        assert_eq!(count(&ops, dead), children as usize);
        let write_lock = |op: &Op| matches!(op, Op::Atomic(_, AtomicOp::Add(RW_LOCK_BIAS)));
        assert_eq!(count(&ops, write_lock), children as usize);
        assert_eq!(count(&ops, |op| matches!(op, Op::WaitEvent(..))), 0);
    }

    /// Finding no zombie, the parent drops tasklist_lock's read side and
    /// sleeps until the count of notifications moves past what it read.
    #[test]
    fn a_parent_that_finds_no_zombie_sleeps_until_another_child_notifies() {
        let mut tasks = programs(2, 0);
        let parent = tasks.last_mut().unwrap();
        let ops = drive(parent.as_mut(), 40, |op| match op {
            Op::Atomic(_, AtomicOp::Load) => 1,
            _ => 0,
        });
        let asleep = ops
            .iter()
            .position(|op| matches!(op, Op::WaitEvent(_, Until::NotEquals(1))))
            .unwrap();
        let read_unlock = |op: &Op| matches!(op, Op::Atomic(_, AtomicOp::Sub(1)));
        assert!(matches!(ops[asleep - 1], op if read_unlock(&op)), "{ops:?}");
        assert_eq!(count(&ops[..asleep], |op| matches!(op, Op::Clock)), 1);
    }
}
