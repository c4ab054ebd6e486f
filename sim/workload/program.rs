//! A workload written in TOML as a list of steps, so a user can model
//! another hashed lock table or sharing pattern without writing Rust:
//!
//! ```toml
//! [workload]
//! name = "program"
//! threads = 8
//! iterations = 1000              # passes before each thread exits; absent: run the window
//! words = { counter = "64" }     # named user words: byte offset expressions
//! tables = [{ name = "page-wait", slots = 256, stride = 24 }]
//! steps = [
//!   { op = "lock", table = "page-wait", key = "0x7f0000000000 + 4096 * (iteration % 64)" },
//!   { op = "compute", ns = 200 },
//!   { op = "compute", ns = 2000, dist = "exponential" },  # drawn, mean 2000 ns
//!   { op = "unlock", table = "page-wait", key = "0x7f0000000000 + 4096 * (iteration % 64)" },
//!   { op = "atomic", word = "counter", action = "add", value = 1 },
//!   { op = "atomic", word = "counter", action = "add", order = "relaxed" },
//!   { op = "futex-wake", addr = "4 * thread", nr = 1 },
//!   { op = "futex-wait", addr = "256", val = 1, node = 1 },   # FUTEX2_NUMA, node 1
//!   { op = "barrier" },
//!   { op = "repeat", times = 4, steps = [{ op = "compute", ns = 50 }] },
//! ]
//! ```
//!
//! Each pass of the steps is one counted iteration. Addresses are byte
//! offsets into the process's user memory (`memory` bytes, private to each
//! process unless `shared`), written as expressions over `thread`,
//! `process`, `cpu`, `node`, `threads`, `processes` and `iteration`; an
//! offset wraps round the memory and is aligned down to a word, so
//! `64 * iteration` walks it. A table bucket is `hash_64(key, log2(slots))`
//! (include/linux/hash.h: the multiplicative hash of the page wait table
//! and other kernel tables), its lock at `stride * bucket` in the table.
//! Named locks and tables are kernel spinlocks on node 0; futex words are
//! private futexes unless the memory is shared. An atomic is sequentially
//! consistent unless `order = "relaxed"` says the benchmark's source makes
//! it relaxed (the program never uses an atomic's result): on a weakly
//! ordered core a relaxed add, sub or exchange is not waited for. A barrier spans the
//! threads that share its memory: each process's, or all with `shared`.

use crate::hash::multiplicative::hash_64;
use crate::limits::{MAX_PROGRAM_MEMORY, MAX_PROGRAM_SLOTS, MAX_PROGRAM_STEPS_PER_PASS};
use super::WorkloadError;
use super::objects::Objects;
use super::primitives::Barrier;
use super::task_loop::{Action, Body, TaskLoop};
use super::{lines_of, user_memory, Setup, Size, Workload};
use crate::coherence::AccessKind;
use crate::expr::{Expr, ExprError};
use crate::machine::Machine;
use crate::memory::{Home, MemoryMap, RegionId};
use crate::record::Metric;
use crate::kernel::key::FutexNode;
use crate::task::{
    AtomicOp, FutexOp, KeyKind, LockRef, Mem, Op, RunWindow, TaskSpec, Timeline, UserWord,
};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    pub threads: u32,
    #[serde(default = "one")]
    pub processes: u32,
    /// Bytes of user memory the address expressions index.
    #[serde(default = "page")]
    pub memory: u64,
    /// One MAP_SHARED mapping for all processes (shared futexes) instead of private memory.
    #[serde(default)]
    pub shared: bool,
    #[serde(default)]
    pub iterations: Option<u64>,
    #[serde(default)]
    pub words: BTreeMap<String, String>,
    #[serde(default)]
    pub locks: Vec<String>,
    #[serde(default)]
    pub tables: Vec<LockTable>,
    pub steps: Vec<StepSpec>,
    /// Each process creates a thread every this many ns, each starting its
    /// steps at once (sim/workload/creation.rs); absent, all exist from the start.
    #[serde(default)]
    pub create_every_ns: Option<u64>,
}

fn one() -> u32 {
    1
}
fn page() -> u64 {
    4096
}

/// A hashed array of spinlocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockTable {
    pub name: String,
    /// A power of two.
    pub slots: u64,
    /// Bytes per bucket; the lock word is at the bucket's start.
    #[serde(default = "line")]
    pub stride: u64,
}

fn line() -> u64 {
    64
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StepSpec {
    FutexWait {
        addr: String,
        #[serde(default)]
        val: u32,
        /// A FUTEX2_NUMA word {value, node} holding this node; -1 is
        /// FUTEX_NO_NODE (the kernel writes the current node in).
        #[serde(default)]
        node: Option<i64>,
    },
    FutexWake {
        addr: String,
        #[serde(default = "one")]
        nr: u32,
        #[serde(default)]
        node: Option<i64>,
    },
    Lock(LockSpec),
    Unlock(LockSpec),
    Atomic {
        word: String,
        action: AtomicAction,
        #[serde(default = "one")]
        value: u32,
        /// The C++ memory order the benchmark's source gives the atomic.
        #[serde(default)]
        order: AtomicOrder,
    },
    Compute {
        ns: u64,
        /// How each pass's time is drawn: `ns` every time, or from an
        /// exponential distribution of mean `ns` (the think time the
        /// Boyd-Wickizer lock model assumes).
        #[serde(default)]
        dist: ComputeDist,
    },
    Barrier,
    Repeat {
        times: u32,
        steps: Vec<StepSpec>,
    },
}

/// The lock a `lock` or `unlock` step names: a named lock (`lock`), or the
/// bucket of `table` that `key` hashes to. One type, so both steps take
/// their lock the same way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockSpec {
    #[serde(default)]
    pub lock: Option<String>,
    #[serde(default)]
    pub table: Option<String>,
    #[serde(default)]
    pub key: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComputeDist {
    #[default]
    Fixed,
    Exponential,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AtomicAction {
    Add,
    Sub,
    Exchange,
    Store,
    Load,
}

/// How a step's atomic is ordered, as the benchmark's source writes it.
/// The program never uses an atomic's result, so a relaxed add, sub or
/// exchange is one nothing waits for (`Op::RelaxedAtomic`); a relaxed load
/// or store is the plain access the model already makes of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AtomicOrder {
    #[default]
    SeqCst,
    Relaxed,
}

const VARIABLES: &[&str] = &[
    "thread",
    "process",
    "cpu",
    "node",
    "threads",
    "processes",
    "iteration",
];
/// What a lock of a program holds as laid out: its name on the heap, and
/// its word in its table's list.
const LOCK_BYTES: u64 = 96;

/// A step, checked and resolved.
#[derive(Clone, Debug)]
enum Step {
    FutexWait(Expr, u32, Option<FutexNode>),
    FutexWake(Expr, u32, Option<FutexNode>),
    Lock(LockSel),
    Unlock(LockSel),
    Atomic(usize, AtomicAction, u32, AtomicOrder),
    /// Picoseconds, fixed or the mean of an exponential draw.
    Compute(u64, ComputeDist),
    Barrier,
}

#[derive(Clone, Debug)]
enum LockSel {
    Named(usize),
    Bucket(usize, Expr),
}

impl StepSpec {
    fn op(&self) -> &'static str {
        match self {
            StepSpec::FutexWait { .. } => "futex-wait",
            StepSpec::FutexWake { .. } => "futex-wake",
            StepSpec::Lock(_) => "lock",
            StepSpec::Unlock(_) => "unlock",
            StepSpec::Atomic { .. } => "atomic",
            StepSpec::Compute { .. } => "compute",
            StepSpec::Barrier => "barrier",
            StepSpec::Repeat { .. } => "repeat",
        }
    }
}

/// `src`, an expression of the program (`what` says where), parsed and
/// naming only [`VARIABLES`].
fn expr(what: String, src: &str) -> Result<Expr, ProgramError> {
    let bad = |error| ProgramError::Expr {
        what: what.clone(),
        src: src.to_string(),
        error,
    };
    let e = Expr::parse(src).map_err(bad)?;
    e.check_variables(VARIABLES).map_err(bad)?;
    Ok(e)
}

/// Where a step is: `program: steps[2].steps[0] (lock)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepAt {
    /// The list it is in, `steps` or a repeat's `steps[2].steps`.
    pub path: String,
    pub index: usize,
    pub op: &'static str,
}

impl std::fmt::Display for StepAt {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "program: {}[{}] ({})", self.path, self.index, self.op)
    }
}

/// Why a program cannot run: its names, expressions and steps, each
/// placed by what it is (a word, a step) and what it names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// `what` names the word or the step's field the expression is.
    #[error("{what} '{src}': {error}")]
    Expr {
        what: String,
        src: String,
        error: ExprError,
    },
    #[error("program: two locks are named '{name}'")]
    TwoLocksNamed { name: String },
    #[error("program: two tables are named '{name}'")]
    TwoTablesNamed { name: String },
    /// An expression that fails to evaluate for one thread at one
    /// iteration (a division by zero, an overflow).
    #[error("program: {what} '{expr}' fails for thread {thread} at iteration {iteration}: {error}")]
    Evaluation {
        what: String,
        expr: String,
        thread: u32,
        iteration: u64,
        error: ExprError,
    },
    #[error("{at}: no word named '{word}' in workload.words")]
    NoWord { at: StepAt, word: String },
    #[error("{at}: ns = {ns} is too long")]
    ComputeTooLong { at: StepAt, ns: u64 },
    #[error("{at}: more than {MAX_PROGRAM_STEPS_PER_PASS} steps per pass once repeated")]
    TooManyStepsRepeated { at: StepAt },
    #[error("{at}: more than {MAX_PROGRAM_STEPS_PER_PASS} steps per pass")]
    TooManySteps { at: StepAt },
    #[error("{at}: node = {node}: futexsim models FUTEX2_NUMA on private futexes, and the memory is shared")]
    NumaOnShared { at: StepAt, node: i64 },
    #[error("{at}: node = {node}: give -1 (FUTEX_NO_NODE) or a node of the machine")]
    NotANode { at: StepAt, node: i64 },
    #[error("{at}: no lock named '{name}' in workload.locks")]
    NoLock { at: StepAt, name: String },
    #[error("{at}: no table named '{name}' in workload.tables")]
    NoTable { at: StepAt, name: String },
    #[error("{at}: give either `lock` (a named lock) or `table` and `key` (a bucket)")]
    LockOrBucket { at: StepAt },
    #[error("program: steps = []: a pass has no step, so a pass takes no simulated time and the run would never end")]
    NoSteps,
    #[error("program: the steps repeat nothing (times = 0, or no steps), so a pass takes no simulated time and the run would never end")]
    RepeatsNothing,
    #[error("program: the steps compute for 0 ns and do nothing else, so a pass takes no simulated time and the run would never end")]
    OnlyZeroCompute,
    /// `lock` names a lock as the program does: `lock 'name'`, or
    /// `table 'name' key 'expr'` for a bucket's.
    #[error("program: the steps take {lock} while holding it: the thread would wait for itself")]
    TakenWhileHeld { lock: String },
    #[error("program: the steps unlock {lock}, which they do not hold there")]
    UnlockedNotHeld { lock: String },
    #[error("program: a pass of the steps ends holding {lock}; unlock it in the same pass")]
    EndsHolding { lock: String },
}

/// A program's mistake names no key of `[workload]` alone: the program as
/// a whole is to blame.
impl From<ProgramError> for WorkloadError {
    fn from(error: ProgramError) -> WorkloadError {
        error.to_string().into()
    }
}

impl ProgramSpec {
    /// The process thread `t` belongs to: threads are split evenly, in order.
    fn process_of(&self, t: u32) -> u32 {
        (u64::from(t) * u64::from(self.processes) / u64::from(self.threads)) as u32
    }

    /// Thread `t`'s values of VARIABLES before `iteration`, which the thread
    /// supplies as it runs: the one list the check and the run both read.
    fn thread_vars(&self, machine: &Machine, t: u32) -> [u64; 6] {
        let cpu = t % machine.cpus();
        [
            u64::from(t),
            u64::from(self.process_of(t)),
            u64::from(cpu),
            u64::from(machine.node_of(cpu)),
            u64::from(self.threads),
            u64::from(self.processes),
        ]
    }

    /// Lock and table names are each one lock or table.
    fn check_names(&self) -> Result<(), ProgramError> {
        let mut seen = std::collections::BTreeSet::new();
        for name in &self.locks {
            if !seen.insert(name) {
                return Err(ProgramError::TwoLocksNamed { name: name.clone() });
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for t in &self.tables {
            if !seen.insert(&t.name) {
                return Err(ProgramError::TwoTablesNamed {
                    name: t.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Every address and key expression evaluates (no division by zero, no
    /// overflow) for the first and last threads at the first iterations and
    /// the last one: one that fails there is refused rather than read as 0.
    fn check_expressions(&self, steps: &[Step], machine: &Machine) -> Result<(), ProgramError> {
        let mut exprs: Vec<(String, &Expr)> = Vec::new();
        let words: Vec<(String, Expr)> = self
            .words
            .iter()
            .map(|(name, src)| Ok((format!("word '{name}'"), expr(name.clone(), src)?)))
            .collect::<Result<_, ProgramError>>()?;
        exprs.extend(words.iter().map(|(what, e)| (what.clone(), e)));
        for step in steps {
            match step {
                Step::FutexWait(e, ..) => exprs.push(("a futex-wait addr".into(), e)),
                Step::FutexWake(e, ..) => exprs.push(("a futex-wake addr".into(), e)),
                Step::Lock(LockSel::Bucket(_, e)) | Step::Unlock(LockSel::Bucket(_, e)) => {
                    exprs.push(("a lock key".into(), e))
                }
                _ => {}
            }
        }
        let last = self.iterations.map_or(1, |n| n.saturating_sub(1));
        let threads =
            (0..self.threads.min(64)).chain(self.threads.saturating_sub(64)..self.threads);
        for t in threads {
            let vars = self.thread_vars(machine, t);
            for iteration in [0, 1, last] {
                // As `Thread::eval` reads them: the thread's, then the iteration.
                let lookup = |name: &str| {
                    VARIABLES
                        .iter()
                        .position(|&v| v == name)
                        .map(|i| vars.get(i).copied().unwrap_or(iteration))
                };
                for (what, e) in &exprs {
                    if let Err(error) = e.eval(&lookup) {
                        return Err(ProgramError::Evaluation {
                            what: what.clone(),
                            expr: e.to_string(),
                            thread: t,
                            iteration,
                            error,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The steps of one pass, repeats unrolled, names resolved.
    fn compile(&self) -> Result<Vec<Step>, ProgramError> {
        let mut out = Vec::new();
        self.compile_into(&self.steps, "steps", &mut out)?;
        Ok(out)
    }

    fn compile_into(
        &self,
        steps: &[StepSpec],
        path: &str,
        out: &mut Vec<Step>,
    ) -> Result<(), ProgramError> {
        for (i, spec) in steps.iter().enumerate() {
            let at = StepAt {
                path: path.to_string(),
                index: i,
                op: spec.op(),
            };
            let step = match spec {
                StepSpec::FutexWait { addr, val, node } => Step::FutexWait(
                    expr(format!("{at}: addr"), addr)?,
                    *val,
                    self.numa_node(&at, *node)?,
                ),
                StepSpec::FutexWake { addr, nr, node } => Step::FutexWake(
                    expr(format!("{at}: addr"), addr)?,
                    *nr,
                    self.numa_node(&at, *node)?,
                ),
                StepSpec::Lock(spec) => Step::Lock(self.lock_sel(&at, spec)?),
                StepSpec::Unlock(spec) => Step::Unlock(self.lock_sel(&at, spec)?),
                StepSpec::Atomic {
                    word,
                    action,
                    value,
                    order,
                } => {
                    let w = self.words.keys().position(|n| n == word).ok_or_else(|| {
                        ProgramError::NoWord {
                            at: at.clone(),
                            word: word.clone(),
                        }
                    })?;
                    Step::Atomic(w, *action, *value, *order)
                }
                StepSpec::Compute { ns, dist } => Step::Compute(
                    ns.checked_mul(1000).ok_or_else(|| ProgramError::ComputeTooLong {
                        at: at.clone(),
                        ns: *ns,
                    })?,
                    *dist,
                ),
                StepSpec::Barrier => Step::Barrier,
                StepSpec::Repeat { times, steps } => {
                    let mut body = Vec::new();
                    self.compile_into(steps, &format!("{path}[{i}].steps"), &mut body)?;
                    if (out.len() + body.len()) as u64 * u64::from(*times) > MAX_PROGRAM_STEPS_PER_PASS {
                        return Err(ProgramError::TooManyStepsRepeated { at });
                    }
                    for _ in 0..*times {
                        out.extend(body.iter().cloned());
                    }
                    continue;
                }
            };
            out.push(step);
            if out.len() as u64 > MAX_PROGRAM_STEPS_PER_PASS {
                return Err(ProgramError::TooManySteps { at });
            }
        }
        Ok(())
    }

    /// A step's FUTEX2_NUMA node: -1 is FUTEX_NO_NODE; the node must be
    /// below the machine's nodes, which `validate` checks.
    fn numa_node(&self, at: &StepAt, node: Option<i64>) -> Result<Option<FutexNode>, ProgramError> {
        let Some(node) = node else {
            return Ok(None);
        };
        if self.shared {
            return Err(ProgramError::NumaOnShared {
                at: at.clone(),
                node,
            });
        }
        match node {
            -1 => Ok(Some(FutexNode::NoNode)),
            n => u32::try_from(n)
                .map(|n| Some(FutexNode::Node(n)))
                .map_err(|_| ProgramError::NotANode {
                    at: at.clone(),
                    node: n,
                }),
        }
    }

    fn lock_sel(&self, at: &StepAt, spec: &LockSpec) -> Result<LockSel, ProgramError> {
        match (&spec.lock, &spec.table, &spec.key) {
            (Some(name), None, None) => self
                .locks
                .iter()
                .position(|l| l == name)
                .map(LockSel::Named)
                .ok_or_else(|| ProgramError::NoLock {
                    at: at.clone(),
                    name: name.clone(),
                }),
            (None, Some(name), Some(key)) => {
                let t = self
                    .tables
                    .iter()
                    .position(|t| &t.name == name)
                    .ok_or_else(|| ProgramError::NoTable {
                        at: at.clone(),
                        name: name.clone(),
                    })?;
                Ok(LockSel::Bucket(t, expr(format!("{at}: key"), key)?))
            }
            _ => Err(ProgramError::LockOrBucket { at: at.clone() }),
        }
    }
}

/// A program's one figure: when its last task exited.
const ALL_EXITED: &str = "time until all exited";

impl Workload for ProgramSpec {
    fn figures(&self) -> Vec<String> {
        vec![ALL_EXITED.to_string()]
    }

    fn label(&self) -> String {
        format!(
            "program of {} steps, {} threads in {} processes",
            self.steps.len(),
            self.threads,
            self.processes
        )
    }

    fn threads(&self, _: &Machine) -> u32 {
        self.threads
    }

    fn size(&self, machine: &Machine) -> Size {
        let threads = u64::from(self.threads);
        let spaces = if self.shared {
            1
        } else {
            u64::from(self.processes)
        };
        let slots = self
            .tables
            .iter()
            .map(|t| t.slots)
            .fold(0, u64::saturating_add);
        let table_lines = self
            .tables
            .iter()
            .map(|t| lines_of(t.slots.saturating_mul(t.stride), machine))
            .fold(0, u64::saturating_add);
        let locks = (self.locks.len() as u64).saturating_add(slots);
        // Each space's memory and its barrier's line; each lock on a line
        // of its own, or in its table.
        let lines = [
            spaces.saturating_mul(lines_of(self.memory, machine).saturating_add(1)),
            self.locks.len() as u64,
            table_lines,
        ]
        .into_iter()
        .fold(0, u64::saturating_add);
        Size {
            tasks: threads,
            processes: u64::from(self.processes),
            futexes: threads,
            lines,
            // Each lock's name and each bucket lock's word, which every
            // thread shares.
            held_bytes: locks.saturating_mul(LOCK_BYTES),
        }
    }

    fn create_every_ns(&self) -> Option<u64> {
        self.create_every_ns
    }

    fn numa_futexes(&self) -> bool {
        self.compile().is_ok_and(|steps| {
            steps.iter().any(|s| {
                matches!(
                    s,
                    Step::FutexWait(.., Some(_)) | Step::FutexWake(.., Some(_))
                )
            })
        })
    }

    fn validate(&self, machine: &Machine) -> Result<(), WorkloadError> {
        super::creation::check_create_every(self.create_every_ns)?;
        if self.threads == 0 || self.processes == 0 || self.processes > self.threads {
            return Err(
                "program: threads and processes must be at least 1, with no more processes than threads"
                    .into(),
            );
        }
        if self.memory < 4 || self.memory > MAX_PROGRAM_MEMORY {
            return Err(format!(
                "program: memory must be from 4 bytes to {MAX_PROGRAM_MEMORY}"
            ).into());
        }
        let heaps = if self.shared { 1 } else { u64::from(self.processes) };
        user_memory::check_heaps("program", heaps, self.memory)?;
        for t in &self.tables {
            if !t.slots.is_power_of_two() || t.slots > MAX_PROGRAM_SLOTS || t.stride < 4 {
                return Err(format!(
                    "program: table '{}': slots must be a power of two up to {MAX_PROGRAM_SLOTS} and stride at least 4",
                    t.name
                ).into());
            }
            // A lock word is 4 bytes at the bucket's start: on a multiple of
            // 4 it never straddles a line.
            if !t.stride.is_multiple_of(4) {
                return Err(format!(
                    "program: table '{}': stride = {} must be a multiple of 4, or lock words straddle lines",
                    t.name, t.stride
                ).into());
            }
        }
        self.check_names()?;
        for (name, src) in &self.words {
            expr(format!("program: word '{name}'"), src)?;
        }
        let steps = self.compile()?;
        check_pass(&steps, self)?;
        for step in &steps {
            if let Step::FutexWait(.., Some(FutexNode::Node(n)))
            | Step::FutexWake(.., Some(FutexNode::Node(n))) = step
            {
                if *n >= machine.nodes() {
                    return Err(WorkloadError::at(
                        "steps",
                        format!(
                            "program: node = {n}, but the machine has {} nodes: the kernel returns EINVAL",
                            machine.nodes()
                        ),
                    ));
                }
            }
        }
        Ok(self.check_expressions(&steps, machine)?)
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let steps: Arc<[Step]> = self.compile().expect("validated before setup").into();
        let word_exprs: Arc<[Expr]> = self
            .words
            .iter()
            .map(|(name, src)| expr(name.clone(), src).expect("validated before setup"))
            .collect();
        let mut o = Objects::default();
        let home = Home::Node(0);
        let named_locks: Arc<[LockRef]> = self
            .locks
            .iter()
            .map(|name| o.lock(memory, name, home))
            .collect();
        let tables: Arc<[(Vec<LockRef>, u32)]> = self
            .tables
            .iter()
            .map(|t| {
                let obj = o.object(
                    memory,
                    format!("table {}", t.name),
                    t.slots * t.stride,
                    home,
                );
                let locks = (0..t.slots)
                    .map(|b| {
                        o.lock_at(
                            &format!("{} bucket {b}", t.name),
                            obj.at(memory, b * t.stride),
                        )
                    })
                    .collect();
                (locks, t.slots.trailing_zeros())
            })
            .collect();
        let kind = if self.shared {
            KeyKind::SharedFile
        } else {
            KeyKind::Private
        };
        // Each process's memory (one mapping for all when shared), and its barrier's two words.
        let spaces: Vec<(RegionId, u64, Barrier)> =
            (0..if self.shared { 1 } else { self.processes })
                .map(|p| {
                    let base = if self.shared {
                        user_memory::first_mmap(self.memory, rng)
                    } else {
                        // The memory, and its barrier on the page after it.
                        user_memory::heap_start(memory, self.memory + 4096 + 16, rng)
                    };
                    let first = (0..self.threads)
                        .find(|&t| self.shared || self.process_of(t) == p)
                        .unwrap_or(0);
                    let node = Home::Node(machine.node_of(first % machine.cpus()));
                    let region = memory.add(format!("program memory {p}"), base, self.memory, node);
                    let barrier_base = (base + self.memory).next_multiple_of(4096);
                    let barrier_region =
                        memory.add(format!("program barrier {p}"), barrier_base, 16, node);
                    let word = |addr| UserWord {
                        mem: Mem {
                            addr,
                            line: memory.line_in(barrier_region, addr),
                        },
                        kind,
                    };
                    let count = (0..self.threads)
                        .filter(|&t| self.shared || self.process_of(t) == p)
                        .count() as u32;
                    (
                        region,
                        base,
                        Barrier {
                            arrived: word(barrier_base),
                            round: word(barrier_base + 8),
                            count,
                        },
                    )
                })
                .collect();
        // Each thread's think-time stream is a jump of the run's stream,
        // not a draw from it: configs without random compute times keep
        // the addresses they had.
        let mut think = rng.clone();
        let tasks = (0..self.threads)
            .map(|t| {
                think.jump();
                let p = self.process_of(t);
                let (region, base, barrier) = spaces[if self.shared { 0 } else { p as usize }];
                TaskSpec {
                    cpu: t % machine.cpus(),
                    program: Box::new(TaskLoop::new(
                        Thread {
                            steps: steps.clone(),
                            words: word_exprs.clone(),
                            named_locks: named_locks.clone(),
                            tables: tables.clone(),
                            space: Space {
                                base,
                                len: self.memory,
                                kind,
                                first_line: memory.line_in(region, base),
                                line_shift: memory.line_size().trailing_zeros(),
                            },
                            barrier,
                            vars: self.thread_vars(machine, t),
                            think: think.clone(),
                        },
                        self.iterations,
                    )),
                }
            })
            .collect();
        Setup {
            tasks,
            task_process: (0..self.threads).map(|t| self.process_of(t)).collect(),
            mms: user_memory::mm_addresses(self.processes, rng),
            futexes: u64::from(self.threads),
            lock_names: o.into_lock_names(),
            readout: Some(Box::new(time_until_all_exited)),
            keys: None,
            thread_futexes: Vec::new(),
        }
    }
}

/// What a pass does with its locks, checked before it runs: it takes no lock
/// it holds (a spinlock taken twice never comes free), releases only locks
/// it holds, and ends holding none (the next pass takes them again); and it
/// advances simulated time, or a run of it never ends. Bucket locks are the
/// same lock when their table and key expression are.
fn check_pass(steps: &[Step], program: &ProgramSpec) -> Result<(), ProgramError> {
    if steps.iter().all(|s| matches!(s, Step::Compute(0, _))) {
        return Err(if program.steps.is_empty() {
            ProgramError::NoSteps
        } else if steps.is_empty() {
            ProgramError::RepeatsNothing
        } else {
            ProgramError::OnlyZeroCompute
        });
    }
    let name = |sel: &LockSel| match sel {
        LockSel::Named(l) => format!("lock '{}'", program.locks[*l]),
        LockSel::Bucket(t, key) => format!("table '{}' key '{key}'", program.tables[*t].name),
    };
    let mut held: Vec<String> = Vec::new();
    for step in steps {
        match step {
            Step::Lock(sel) => {
                let lock = name(sel);
                if held.contains(&lock) {
                    return Err(ProgramError::TakenWhileHeld { lock });
                }
                held.push(lock);
            }
            Step::Unlock(sel) => {
                let lock = name(sel);
                let Some(at) = held.iter().position(|h| *h == lock) else {
                    return Err(ProgramError::UnlockedNotHeld { lock });
                };
                held.remove(at);
            }
            _ => {}
        }
    }
    match held.first() {
        Some(lock) => Err(ProgramError::EndsHolding { lock: lock.clone() }),
        None => Ok(()),
    }
}

fn time_until_all_exited(_: &RunWindow, timeline: &Timeline) -> Vec<Metric> {
    timeline
        .all_exited()
        .map(|t| vec![Metric::new(ALL_EXITED, t as f64 / 1e9, "ms")])
        .unwrap_or_default()
}

/// A process's user memory, as a thread's addresses index it.
#[derive(Clone, Copy)]
struct Space {
    base: u64,
    len: u64,
    kind: KeyKind,
    first_line: u32,
    line_shift: u32,
}

impl Space {
    /// The futex word at a byte offset: a FUTEX2_NUMA one is two words,
    /// aligned to their size (the kernel refuses it otherwise).
    fn futex_word(&self, offset: u64, node: Option<FutexNode>) -> UserWord {
        match node {
            None => self.word(offset),
            Some(node) => UserWord {
                kind: KeyKind::PrivateNuma(node),
                ..self.word_aligned(offset, 8)
            },
        }
    }

    /// The word at a byte offset, wrapped round the memory and aligned down.
    fn word(&self, offset: u64) -> UserWord {
        self.word_aligned(offset, 4)
    }

    fn word_aligned(&self, offset: u64, align: u64) -> UserWord {
        let addr = self.base + (offset % self.len) / align * align;
        let line =
            self.first_line + ((addr >> self.line_shift) - (self.base >> self.line_shift)) as u32;
        UserWord {
            mem: Mem { addr, line },
            kind: self.kind,
        }
    }
}

struct Thread {
    steps: Arc<[Step]>,
    words: Arc<[Expr]>,
    named_locks: Arc<[LockRef]>,
    tables: Arc<[(Vec<LockRef>, u32)]>,
    space: Space,
    barrier: Barrier,
    /// thread, process, cpu, node, threads, processes.
    vars: [u64; 6],
    /// The thread's own stream for exponential compute times.
    think: Xoshiro256PlusPlus,
}

impl Thread {
    /// An expression's value for this thread at `iteration`. Expressions are
    /// checked before the run; one that overflows at a late iteration reads as 0.
    fn eval(&self, e: &Expr, iteration: u64) -> u64 {
        let lookup = |name: &str| {
            VARIABLES
                .iter()
                .position(|&v| v == name)
                .map(|i| self.vars.get(i).copied().unwrap_or(iteration))
        };
        e.eval(&lookup).unwrap_or(0)
    }

    fn lock(&self, sel: &LockSel, iteration: u64) -> LockRef {
        match sel {
            LockSel::Named(l) => self.named_locks[*l],
            LockSel::Bucket(t, key) => {
                let (locks, bits) = &self.tables[*t];
                locks[hash_64(self.eval(key, iteration), *bits) as usize]
            }
        }
    }
}

impl Body for Thread {
    fn pass(&mut self, iteration: u64, actions: &mut VecDeque<Action>) {
        let futex = |op| Action::Op(Op::Futex(op));
        for step in self.steps.iter() {
            actions.push_back(match step {
                Step::FutexWait(addr, val, node) => {
                    let w = self.space.futex_word(self.eval(addr, iteration), *node);
                    futex(FutexOp::Wait {
                        uaddr: w.mem,
                        val: *val,
                        kind: w.kind,
                    })
                }
                Step::FutexWake(addr, nr, node) => {
                    let w = self.space.futex_word(self.eval(addr, iteration), *node);
                    futex(FutexOp::Wake {
                        uaddr: w.mem,
                        nr: *nr,
                        kind: w.kind,
                    })
                }
                Step::Lock(sel) => Action::Op(Op::SpinLock(self.lock(sel, iteration))),
                Step::Unlock(sel) => Action::Op(Op::SpinUnlock(self.lock(sel, iteration))),
                Step::Atomic(w, action, value, order) => {
                    let word = self.space.word(self.eval(&self.words[*w], iteration));
                    let op = match action {
                        AtomicAction::Add => AtomicOp::Add(*value),
                        AtomicAction::Sub => AtomicOp::Sub(*value),
                        AtomicAction::Exchange => AtomicOp::Exchange(*value),
                        AtomicAction::Store => AtomicOp::Store(*value),
                        AtomicAction::Load => AtomicOp::Load,
                    };
                    let unordered = *order == AtomicOrder::Relaxed && op.access() == AccessKind::Rmw;
                    Action::Op(if unordered {
                        Op::RelaxedAtomic(word, op)
                    } else {
                        Op::Atomic(word, op)
                    })
                }
                Step::Compute(ps, ComputeDist::Fixed) => Action::Op(Op::Compute(*ps)),
                Step::Compute(mean, ComputeDist::Exponential) => {
                    let u: f64 = self.think.gen_range(f64::EPSILON..1.0);
                    Action::Op(Op::Compute((-u.ln() * *mean as f64) as u64))
                }
                Step::Barrier => Action::BarrierWait(self.barrier),
            });
        }
    }
}
