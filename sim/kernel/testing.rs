//! A futex system with a few tasks of one process on a 2-node machine, and
//! a way to run an op's decisions at once, for the kernel's unit tests: they
//! check what an op does to the kernel's state, with no timing.

use super::core::{FutexOp, FutexSystem, PerCpuOp, TaskInfo};
use super::futex_hash::{FutexHash, ProcessInfo, SetSlots};
use super::key::KeyKind;
use super::resize::InRunCreation;
use super::script::{Decision, Script, Step};
use super::table::{preset, SizingVars};
use crate::machine::Ps;
use crate::memory::PAGE_SIZE;
use crate::memory::{Home, Mem, MemoryMap};

const HEAP: u64 = 0x5555_5555_6000;
const MM: u64 = 0xffff_8881_00ab_c000;

pub struct Kernel {
    pub sys: FutexSystem,
    pub memory: MemoryMap,
    /// The simulated time ops begin and decide at: tests move it by hand.
    pub now: Ps,
}

impl Kernel {
    /// `tasks` tasks of one process, on CPUs 0, 1, ... of two nodes.
    pub fn new(tasks: u32) -> Kernel {
        Kernel::of_era("aligned-3.14", tasks, None)
    }

    /// The same under the table preset `era`, its process having asked
    /// `set_slots` of PR_FUTEX_HASH.
    pub fn of_era(era: &str, tasks: u32, set_slots: Option<SetSlots>) -> Kernel {
        Kernel::of_era_on(era, tasks, set_slots, PerCpuOp::Plain)
    }

    /// The same on an architecture whose per-CPU counters change as
    /// `percpu_op` says (`of_era`: x86's).
    pub fn of_era_on(
        era: &str,
        tasks: u32,
        set_slots: Option<SetSlots>,
        percpu_op: PerCpuOp,
    ) -> Kernel {
        let process = ProcessInfo {
            set_slots,
            ..ProcessInfo::new(tasks.into(), 0)
        };
        let (sys, memory) = Kernel::system(era, tasks, (8, 2), process, percpu_op);
        Kernel {
            sys,
            memory,
            now: 0,
        }
    }

    /// `tasks` tasks of one process under `era`, created one after another
    /// in the run (index order), an RCU grace period being `grace_period`.
    pub fn growing(era: &str, tasks: u32, grace_period: Ps) -> Kernel {
        let process = ProcessInfo {
            created_in_run: true,
            ..ProcessInfo::new(tasks.into(), 0)
        };
        let (mut sys, mut memory) = Kernel::system(era, tasks, (64, 1), process, PerCpuOp::Plain);
        let creation = InRunCreation {
            index_in_process: (0..tasks.into()).collect(),
            grace_period,
        };
        sys.create_threads_in_run(&creation, &mut memory);
        Kernel {
            sys,
            memory,
            now: 0,
        }
    }

    /// The kernel of one process of `tasks` tasks under `era`, on `cpus`
    /// CPUs split evenly over `nodes` nodes, task n on CPU n.
    fn system(
        era: &str,
        tasks: u32,
        (cpus, nodes): (u32, u32),
        process: ProcessInfo,
        percpu_op: PerCpuOp,
    ) -> (FutexSystem, MemoryMap) {
        let mut memory = MemoryMap::new(64);
        memory.add("heap", HEAP, 2 * 4096, Home::Node(0));
        let design = preset(era).expect("preset");
        let vars = SizingVars {
            cpus: cpus.into(),
            possible_cpus: cpus.into(),
            nodes: nodes.into(),
            threads: tasks.into(),
            processes: 1,
            futexes: 2,
            node_slots: 0,
        };
        let hash = FutexHash::build(&design, vars, &[process], nodes, &mut memory).expect("builds");
        let infos = (0..tasks).map(|cpu| TaskInfo { process: 0, cpu }).collect();
        let cpu_nodes: Vec<u32> = (0..cpus).map(|c| c / (cpus / nodes)).collect();
        let sys = FutexSystem::new(
            hash,
            infos,
            vec![MM],
            &cpu_nodes,
            PAGE_SIZE,
            percpu_op,
            &mut memory,
        );
        (sys, memory)
    }

    /// Task `task`'s creation, its decisions taken at once.
    pub fn create(&mut self, task: u32) -> Script {
        let mut s = Script::new();
        self.sys
            .thread_created(&self.memory, task, self.now, &mut s);
        self.decide_all(task, &mut s);
        s
    }

    /// Takes every decision in `s`, in order, as it is reached: a decision
    /// inside the script (a resize's publication) as well as the last.
    fn decide_all(&mut self, task: u32, s: &mut Script) {
        let mut i = 0;
        while i < s.len() {
            match s[i] {
                Step::Decide(d) => self.sys.decide(&self.memory, task, self.now, d, s),
                // The engine takes these as the line serves the access.
                Step::WaitersInc(w) => self.sys.waiter_counted(w.lock),
                Step::WaitersRead(_) => {
                    let d = Decision::WakeCheckWaiters;
                    self.sys.decide(&self.memory, task, self.now, d, s)
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The heap word at `offset`.
    pub fn word(&self, offset: u64) -> Mem {
        Mem {
            addr: HEAP + offset,
            line: self.memory.line_in(0, HEAP + offset),
        }
    }

    /// The whole script of `op`, every decision taken as it is reached.
    pub fn run(&mut self, task: u32, op: FutexOp) -> Script {
        let mut s = Script::new();
        self.sys.begin(&self.memory, task, self.now, op, &mut s);
        self.decide_all(task, &mut s);
        s
    }

    pub fn wait(&mut self, task: u32, uaddr: Mem) -> Script {
        self.run(
            task,
            FutexOp::Wait {
                uaddr,
                val: 0,
                kind: KeyKind::Private,
            },
        )
    }

    /// Tasks queued on `uaddr`'s key, in chain order.
    pub fn waiters_on(&self, task: u32, uaddr: Mem) -> Vec<u32> {
        let (key, bucket) = self.sys.locate(task, uaddr.addr, KeyKind::Private);
        self.sys
            .chains
            .get(&bucket)
            .map(|c| c.iter().filter(|w| w.key == key).map(|w| w.task).collect())
            .unwrap_or_default()
    }
}

/// The tasks a script wakes, and what it returns.
pub fn outcome(s: &Script) -> (Vec<u32>, i64) {
    let woken = s
        .iter()
        .filter_map(|step| match step {
            Step::Wake(t) => Some(*t),
            _ => None,
        })
        .collect();
    let ret = s
        .iter()
        .find_map(|step| match step {
            Step::Returns(r) => Some(*r),
            _ => None,
        })
        .expect("every op returns");
    (woken, ret)
}

pub fn blocks(s: &Script) -> bool {
    s.contains(&Step::Block)
}

/// The accesses and lock steps of a script, in order, each as its kind and
/// the field it touches: what the era tests compare with the kernel source.
/// An RMW that orders nothing is a `relaxed-rmw`, an acquire one an
/// `acquire-rmw`; a full barrier on the task's stack is `smp_mb`.
pub fn accesses(k: &Kernel, task: u32, uaddr: Mem, s: &Script) -> Vec<String> {
    s.iter()
        .filter_map(|step| {
            let (m, kind) = match *step {
                Step::Access(a) => (a.mem(), format!("{:?}", a.kind).to_lowercase()),
                Step::WaitersInc(w) => (w.mem(), "rmw".into()),
                Step::WaitersRead(w) => (w.mem(), "read".into()),
                Step::RelaxedRmw(m) => (m.mem(), "relaxed-rmw".into()),
                Step::AcquireRmw(m) => (m.mem(), "acquire-rmw".into()),
                // A load issued to overlap with what follows is a read all the same.
                Step::Load(m) => (m.mem(), "read".into()),
                Step::Lock(_) => return Some("lock".into()),
                Step::Unlock(_) => return Some("unlock".into()),
                _ => return None,
            };
            let named = format!(
                "{kind} {}",
                k.sys.field_name(&k.memory, task, uaddr.addr, m.addr)
            );
            // smp_mb() is a locked RMW of the task's own stack line.
            Some(if named == "rmw futex_q" {
                "smp_mb".into()
            } else {
                named
            })
        })
        .collect()
}
