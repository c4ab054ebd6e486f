//! time_exit (seed 002, "Improving lock pages", 2013): the parent maps one
//! shared page, forks N children each pinned to its own CPU; every child
//! atomically increments `ready` and spins on `quit`; once all are ready
//! the parent reads the clock, sets `quit`, and calls wait() until no child
//! is left, then reads the clock again. The figure is that interval.
//!
//! The exit path is modelled as the critical sections and atomics on state
//! that every child shares with the others (everything private to a child
//! is one compute step). Each names the kernel function it stands for; the
//! report's kernels were 3.0 and 3.8, and the sections are the v3.x ones:
//!
//! | section | kernel (v3.x) | shared by |
//! |---|---|---|
//! | shared page `_mapcount` atomic dec | mm/rmap.c `page_remove_rmap`, from `zap_pte_range` in `exit_mmap` | all children: one struct page |
//! | shmem mapping's `i_mmap_mutex`, unlink the vma from `i_mmap` | mm/mmap.c `unlink_file_vma` (via `free_pgtables`) | all children: one address_space |
//! | `fput` of the mapping's file | fs/file_table.c `fput` (`f_count`) | all children: one struct file |
//! | each private vma's anon_vma root lock | mm/rmap.c `unlink_anon_vmas` (`anon_vma_lock` on the root, inherited from the parent by fork) | all children: the parent's anon_vmas |
//! | `fput` of stdin, stdout, stderr | fs/file.c `close_files` from `exit_files` | all children: the parent's struct files |
//! | `dput` of root and cwd: `d_lock`, `d_count` | fs/dcache.c `dput` from `exit_fs` (`path_put`; d_count under d_lock before 3.12's lockref) | all children: two dentries |
//! | `tasklist_lock` for write | kernel/exit.c `exit_notify` | every task on the machine |
//! | parent's `siglock`, SIGCHLD | kernel/signal.c `do_notify_parent` | all children: one parent |
//! | parent's `wait_chldexit` wait queue lock | kernel/exit.c `__wake_up_parent` | all children: one parent |
//! | parent: `tasklist_lock` (read) and a walk of its children list reading each `exit_state` | kernel/exit.c `do_wait`, `wait_consider_task` | the parent against every exiting child |
//! | parent: `tasklist_lock` (write) to reap | kernel/exit.c `release_task` from `wait_task_zombie` | the parent against every exiting child |
//!
//! These are named from the kernel's function structure (read for facts);
//! struct layouts inside each object are approximate, and which v3.x
//! release added or removed a given lock is not pinned line by line.
//!
//! Simplifications: rwlocks and mutexes (`tasklist_lock`, `i_mmap_mutex`,
//! the anon_vma lock) are modelled as the machine's spinlock, exclusive
//! for readers too (the only reader is the parent); a sleeping mutex
//! waiter's sleep and wake are not; the parent's sleep in wait() is a wait
//! for the line its children write when they notify it; the parent runs on
//! CPU 0 beside child 0 (it is not pinned in the real test) and the model
//! does not time-slice them; the children's page-table teardown and every
//! other private part of exit are fixed compute steps; `-p` (a delay before
//! the release) does not change what is timed and is not modelled.

use super::WorkloadError;
use super::objects::{Object, Objects};
use super::{user_memory, Setup, Workload};
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap};
use crate::record::Metric;
use crate::task::{
    AtomicOp, Done, KeyKind, LockRef, Mem, Op, Program, RunWindow, TaskSpec, Timeline, Until,
    UserWord,
};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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
}

fn default_vmas() -> u32 {
    6
}

impl Default for TimeExit {
    fn default() -> Self {
        TimeExit {
            children: None,
            anon_vmas: default_vmas(),
        }
    }
}

/// Work that touches nothing shared, in nanoseconds: estimates for a small
/// process forked from a small parent, not measurements.
const EXIT_MMAP_PRIVATE_NS: u64 = 10_000;
const EXIT_OTHER_PRIVATE_NS: u64 = 3_000;
const VMA_UNLINK_NS: u64 = 150;
const NOTIFY_NS: u64 = 300;
const REAP_NS: u64 = 1_500;
/// `exit_state` of a zombie (include/linux/sched.h EXIT_ZOMBIE).
const EXIT_ZOMBIE: u32 = 16;
const EXIT_DEAD: u32 = 32;

/// Everything the children share, and the parent's side of it.
#[derive(Clone)]
struct Shared {
    ready: UserWord,
    quit: UserWord,
    mapcount: UserWord,
    i_mmap_mutex: LockRef,
    i_mmap: Mem,
    shm_file: UserWord,
    anon_vma_roots: Vec<(LockRef, Mem)>,
    std_files: Vec<UserWord>,
    dentries: Vec<(LockRef, Mem)>,
    tasklist_lock: LockRef,
    siglock: LockRef,
    wait_chldexit_lock: LockRef,
    /// Written by each child's wake-up of the parent: what the sleeping parent waits on.
    notified: UserWord,
    /// Each child's `exit_state`, in its task_struct.
    exit_state: Vec<UserWord>,
}

struct Child {
    ops: VecDeque<Op>,
}

impl Program for Child {
    fn next_op(&mut self) -> Op {
        self.ops.pop_front().unwrap_or(Op::Exit)
    }
}

fn child_ops(s: &Shared, child: usize, schedule_ps: u64) -> VecDeque<Op> {
    let ns = |n: u64| Op::Compute(n * 1000);
    let mut ops = VecDeque::from([
        Op::Atomic(s.ready, AtomicOp::Add(1)),
        Op::SpinUntil(s.quit, Until::NotEquals(0)),
        // exit_mm -> exit_mmap: zap the shared page, tear down the rest.
        Op::Atomic(s.mapcount, AtomicOp::Sub(1)),
        ns(EXIT_MMAP_PRIVATE_NS),
        Op::SpinLock(s.i_mmap_mutex),
        Op::Access(s.i_mmap, crate::coherence::AccessKind::Write),
        ns(VMA_UNLINK_NS),
        Op::SpinUnlock(s.i_mmap_mutex),
        Op::Atomic(s.shm_file, AtomicOp::Sub(1)),
    ]);
    for &(lock, root) in &s.anon_vma_roots {
        ops.extend([
            Op::SpinLock(lock),
            Op::Access(root, crate::coherence::AccessKind::Write),
            ns(VMA_UNLINK_NS),
            Op::SpinUnlock(lock),
        ]);
    }
    ops.extend(s.std_files.iter().map(|&f| Op::Atomic(f, AtomicOp::Sub(1))));
    for &(d_lock, d_count) in &s.dentries {
        ops.extend([
            Op::SpinLock(d_lock),
            Op::Access(d_count, crate::coherence::AccessKind::Write),
            Op::SpinUnlock(d_lock),
        ]);
    }
    ops.extend([
        ns(EXIT_OTHER_PRIVATE_NS),
        // exit_notify.
        Op::SpinLock(s.tasklist_lock),
        Op::SpinLock(s.siglock),
        ns(NOTIFY_NS),
        Op::SpinLock(s.wait_chldexit_lock),
        Op::Atomic(s.notified, AtomicOp::Add(1)),
        Op::SpinUnlock(s.wait_chldexit_lock),
        Op::SpinUnlock(s.siglock),
        Op::Atomic(s.exit_state[child], AtomicOp::Store(EXIT_ZOMBIE)),
        Op::SpinUnlock(s.tasklist_lock),
        // The last schedule() of do_exit.
        Op::Compute(schedule_ps),
        Op::Exit,
    ]);
    ops
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
    ops: VecDeque<Op>,
    /// The old value the last `Op::Atomic` returned, until a step reads it.
    last: Option<u32>,
    atomic_in_flight: bool,
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
        let op = self.choose_op();
        self.atomic_in_flight = matches!(op, Op::Atomic(..));
        op
    }

    fn op_returned(&mut self, done: Done) {
        if self.atomic_in_flight {
            self.last = Some(done.ret as u32);
        }
    }
}

impl Parent {
    fn choose_op(&mut self) -> Op {
        loop {
            if let Some(op) = self.ops.pop_front() {
                return op;
            }
            let s = &self.shared;
            let last = self.last.take();
            match self.state {
                ParentState::Release => {
                    self.ops.extend([
                        Op::SpinUntil(s.ready, Until::Equals(self.children)),
                        Op::Clock,
                        Op::Atomic(s.quit, AtomicOp::Store(1)),
                    ]);
                    self.state = ParentState::WaitStart;
                }
                ParentState::WaitStart if self.alive.is_empty() => {
                    self.ops.extend([Op::Clock, Op::Exit]);
                    self.state = ParentState::Done;
                }
                ParentState::WaitStart => {
                    self.ops.extend([
                        Op::Compute(self.syscall_ps / 2),
                        Op::Atomic(s.notified, AtomicOp::Load),
                        Op::SpinLock(s.tasklist_lock),
                    ]);
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
                        self.ops
                            .push_back(Op::Atomic(s.exit_state[child], AtomicOp::Load));
                        self.state = ParentState::Walk {
                            notified,
                            at: at + 1,
                        };
                    } else {
                        // No zombie yet: sleep until another child notifies.
                        self.ops.extend([
                            Op::SpinUnlock(s.tasklist_lock),
                            Op::SpinUntil(s.notified, Until::NotEquals(notified)),
                        ]);
                        self.state = ParentState::WaitStart;
                    }
                }
                ParentState::Reaped => {
                    self.ops.push_back(Op::Compute(self.syscall_ps / 2));
                    self.state = ParentState::WaitStart;
                }
                ParentState::Done => return Op::Exit,
            }
        }
    }

    /// wait_task_zombie -> release_task.
    fn reap(&mut self, child: usize) {
        let s = &self.shared;
        self.ops.extend([
            Op::SpinUnlock(s.tasklist_lock),
            Op::Compute(REAP_NS * 1000),
            Op::SpinLock(s.tasklist_lock),
            Op::Atomic(s.exit_state[child], AtomicOp::Store(EXIT_DEAD)),
            Op::SpinUnlock(s.tasklist_lock),
        ]);
        self.state = ParentState::Reaped;
    }
}

impl Workload for TimeExit {
    fn label(&self) -> String {
        match self.children {
            Some(n) => format!("time_exit {n}"),
            None => "time_exit (one child per CPU)".into(),
        }
    }

    fn threads(&self, machine: &Machine) -> u32 {
        self.children.unwrap_or(machine.cpus())
    }

    fn validate(&self, _: &Machine) -> Result<(), WorkloadError> {
        if self.children == Some(0) {
            return Err("time-exit: children must be at least 1".into());
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
        let mapcount = word_in(&mut o, memory, "shared page struct page", 64, 12);
        let mapping = o.object(memory, "shmem address_space", 192, home);
        let i_mmap_mutex = o.lock_at("shmem i_mmap_mutex", mapping.at(memory, 0x48));
        let i_mmap = mapping.at(memory, 0x20);
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
        let tasklist_lock = o.lock(memory, "tasklist_lock", Home::Node(0));
        let signal = o.object(memory, "parent sighand and signal", 128, home);
        let siglock = o.lock_at("parent siglock", signal.at(memory, 8));
        let wait_chldexit_lock = o.lock_at("parent wait_chldexit lock", signal.at(memory, 64));
        let notified = UserWord {
            mem: signal.at(memory, 72),
            kind: KeyKind::SharedFile,
        };
        let exit_state = (0..n)
            .map(|c| {
                let node = Home::Node(machine.node_of(c));
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
            mapcount,
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
        let mut tasks: Vec<TaskSpec> = (0..n)
            .map(|c| TaskSpec {
                cpu: c,
                program: Box::new(Child {
                    ops: child_ops(&shared, c as usize, machine.costs.schedule),
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
                ops: VecDeque::new(),
                last: None,
                atomic_in_flight: false,
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
            readout: Some(Box::new(time_until_all_exited)),
            keys: None,
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
                "time until all exited",
                (reaped - released) as f64 / 1e12,
                "s",
            ));
        }
    }
    figures.push(Metric::new("children exited", exited as f64, ""));
    figures
}
