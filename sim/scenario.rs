//! A scenario is one fully resolved point: a machine, a table design, a
//! workload, a run window and a seed. `prepare` resolves it on its machine
//! once, for its check, its memory estimate and its run; `simulate` lays it
//! out in memory, runs the engine and has the outcome recorded (record.rs).

use crate::analysis::layout;
use crate::engine::{place_at_fork, Engine, SchedLayout};
use crate::footprint::{Footprint, MemoryLimit};
use crate::kernel::core::{first_task_and_count, FutexSystem, PerCpuOp, TaskInfo};
use crate::kernel::futex_hash::SetSlots;
use crate::kernel::futex_hash::{FutexHash, ProcessInfo};
use crate::kernel::resize::InRunCreation;
use crate::kernel::table::{eval_slots, DesignError, Placement, SizingVars, TableDesign};
use crate::limits::MAX_TABLE_BYTES;
use crate::machine::{Machine, MachineError, MachineSpec, PlatformError};
use crate::memory::MemoryMap;
use crate::record::{LoadRecord, RunOrigin, RunRecord, Speed, TableRecord};
use crate::task::RunWindow;
use crate::workload::creation::staggered;
use crate::workload::{Setup, Workload, WorkloadError, WorkloadSpec};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::time::Instant;

/// Runs `analysis` on a thread of its own while `run` runs on this one,
/// and returns what both give; where no thread can start, the analysis
/// runs here first. Neither waits for the other, so the answer is the same
/// either way.
fn beside<A: Send, R>(analysis: impl Fn() -> A + Sync, run: impl FnOnce() -> R) -> (A, R) {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("futexsim-layout".into())
            .spawn_scoped(scope, &analysis);
        match thread {
            Ok(thread) => {
                let ran = run();
                match thread.join() {
                    Ok(analysed) => (analysed, ran),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Err(_) => (analysis(), run()),
        }
    })
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub machine: MachineSpec,
    pub design: TableDesign,
    pub workload: WorkloadSpec,
    pub window: RunWindow,
    pub seed: u64,
}

/// The most threads one run simulates: far more than any benchmark of the
/// suite runs, and few enough that every task's state fits in memory.
pub const MAX_THREADS: u32 = crate::limits::MAX_RUN_TASKS;

/// Checks a workload against the machine it runs on, giving its thread count:
/// its own parameters (the futex words futexsim lays out among them). More
/// threads than CPUs time-share them (sim/engine/sched.rs).
pub fn check_workload(workload: &WorkloadSpec, machine: &Machine) -> Result<u32, WorkloadError> {
    let workload = workload.workload();
    workload.validate(machine)?;
    let threads = workload.threads(machine);
    if threads == 0 {
        return Err("the workload has no threads".into());
    }
    if threads > MAX_THREADS {
        return Err(WorkloadError::at(
            "threads",
            format!("threads = {threads}: futexsim simulates at most {MAX_THREADS}"),
        ));
    }
    Ok(threads)
}

/// Refuses what the workload asks of a kernel that cannot do it, as that
/// kernel's syscalls would: PR_FUTEX_HASH without a private hash, the
/// immutable flag outside the 6.16 release candidates, FUTEX2_NUMA without
/// the per-node table it came with (cec199c5e39b).
fn check_era(workload: &WorkloadSpec, design: &TableDesign) -> Result<(), WorkloadError> {
    let workload = workload.workload();
    if let Some(set) = workload.set_slots() {
        let Some(private) = &design.private else {
            return Err(WorkloadError::at(
                "buckets",
                format!(
                    "table '{}' has no private hash: prctl(PR_FUTEX_HASH) fails with EINVAL",
                    design.name
                ),
            ));
        };
        if set.immutable && !private.immutable_flag {
            return Err(WorkloadError::at(
                "immutable",
                format!(
                    "table '{}' has no FH_FLAG_IMMUTABLE: only the 6.16 release candidates (v6.16-rc1) had it",
                    design.name
                ),
            ));
        }
    }
    if workload.numa_futexes() && design.placement != Placement::PerNode {
        return Err(WorkloadError::at(
            "steps",
            format!(
                "table '{}' has no FUTEX2_NUMA: it came with the per-node table (v6.16 on)",
                design.name
            ),
        ));
    }
    Ok(())
}

/// Why a scenario cannot be laid out: its table design, or its workload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// The design does not validate, or sizes no valid table on this machine.
    #[error("table '{design}': {error}")]
    Design { design: String, error: DesignError },
    #[error("workload: {0}")]
    Workload(#[from] WorkloadError),
    /// The machine is one the layout analysis of the run's keys cannot take.
    #[error("machine: {0}")]
    Platform(#[from] PlatformError),
    /// The layout analysis of the run's keys would refuse them.
    #[error("{0}")]
    Layout(#[from] layout::LayoutError),
    /// A run of it needs more memory than the process may use.
    #[error(
        "one run needs about {need_mib} MiB to lay out, more than the {} MiB {} allows",
        limit.mib(),
        limit.what
    )]
    Memory { need_mib: u64, limit: MemoryLimit },
}

/// Why a simulation gave no record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The scenario's machine does not build.
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The watchdog stopped a run whose events no longer advanced time.
    #[error(
        "stopped at {at_ns} ns of simulated time: {events} events there without time \
         advancing (every step takes 0 ns?); the run would never end"
    )]
    Stalled { at_ns: u64, events: u64 },
}

impl Scenario {
    /// Resolves the scenario on `machine` (its own, built once for all the
    /// scenarios of its point): the design and the workload checked, the
    /// workload against the kernel era too. Lays nothing out.
    pub fn prepare<'a>(&'a self, machine: &'a Machine) -> Result<Prepared<'a>, ScenarioError> {
        self.design
            .validate()
            .map_err(|error| ScenarioError::Design {
                design: self.design.name.clone(),
                error,
            })?;
        let threads = check_workload(&self.workload, machine)?;
        check_era(&self.workload, &self.design)?;
        Ok(Prepared {
            scenario: self,
            machine,
            workload: self.workload.workload(),
            threads,
        })
    }

    /// Checks everything `simulate` would refuse on `machine`, without
    /// running anything (`Prepared::check`).
    pub fn check(&self, machine: &Machine) -> Result<(), ScenarioError> {
        self.prepare(machine)?.check()
    }

    /// Builds the scenario's machine, and simulates it there.
    pub fn simulate(&self) -> Result<(RunRecord, Speed), RunError> {
        self.simulate_with(RunOptions::default())
    }

    /// `simulate`, with what the run records besides its results as
    /// `options` asks.
    pub fn simulate_with(&self, options: RunOptions) -> Result<(RunRecord, Speed), RunError> {
        let machine = Machine::new(self.machine.clone())?;
        self.prepare(&machine)?.simulate_with(options)
    }
}

/// What a run records besides its results; none of it changes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Attribute each counted op's time to what its task waited on: the
    /// record's `time_spent` (`futexsim explain`).
    pub explain: bool,
}

/// A scenario resolved on its machine, its thread count known: what its
/// check, its memory estimate and its run share. Nothing is laid out yet:
/// the estimate counts from the scenario's numbers, and only `lay_out`,
/// once the estimate has passed, takes the memory a run holds.
pub struct Prepared<'a> {
    scenario: &'a Scenario,
    machine: &'a Machine,
    workload: &'a dyn Workload,
    threads: u32,
}

/// A prepared scenario laid out in memory, ready for the engine.
struct LaidOut {
    memory: MemoryMap,
    setup: Setup,
    processes: Vec<ProcessInfo>,
    hash: FutexHash,
}

impl Prepared<'_> {
    /// Checks everything `simulate` would refuse (threads beyond the CPUs, a
    /// sizing rule that gives no valid table, keys the layout analysis
    /// refuses) without running anything. A run too large for the memory
    /// the process may use is refused first, from its estimate: laying it
    /// out would take that memory.
    pub fn check(&self) -> Result<(), ScenarioError> {
        self.check_memory(crate::footprint::process_memory_limit())?;
        let laid_out = self.lay_out()?;
        self.check_keys(&laid_out)
    }

    /// What a run of it lays out, counted from its numbers without laying
    /// anything out: the workload's size (`Workload::size`) and the tables
    /// its design's sizing rules give for it. What a run's memory is
    /// estimated from before it is laid out.
    pub fn estimate(&self) -> Footprint {
        let size = self.workload.size(self.machine);
        let (locks, table_lines) = table_size(
            &self.scenario.design,
            self.machine,
            &size,
            &self.workload.parts(self.machine),
            self.workload.set_slots(),
            self.workload.create_every_ns().is_some(),
        );
        Footprint {
            lines: size.lines.saturating_add(table_lines),
            locks,
            queued_steps: crate::footprint::queued_steps(&self.scenario.workload, self.threads),
            tasks: size.tasks,
            cpus: self.machine.cpus().into(),
            program_bytes: size.held_bytes,
        }
    }

    /// Refuses a run that would not fit in `limit` even alone: laying it
    /// out (to check it, or to run it) would take that memory.
    pub fn check_memory(&self, limit: Option<&MemoryLimit>) -> Result<(), ScenarioError> {
        let need = self.estimate().bytes();
        match limit {
            Some(limit) if need > limit.bytes => Err(ScenarioError::Memory {
                need_mib: need.div_ceil(1 << 20),
                limit: limit.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// What a run of it lays out, as laid out: what the estimate's per-unit
    /// figures were measured against, and what a test holds the estimate to
    /// for every shipped config.
    pub fn footprint(&self) -> Result<Footprint, ScenarioError> {
        let laid_out = self.lay_out()?;
        let hash = &laid_out.hash;
        Ok(Footprint {
            lines: laid_out.memory.lines().into(),
            locks: hash
                .global
                .iter()
                .chain(hash.private.iter().flatten())
                .chain(hash.outgrown.iter().flatten())
                .map(|t| t.slots)
                .sum(),
            queued_steps: crate::footprint::queued_steps(&self.scenario.workload, self.threads),
            tasks: laid_out.setup.tasks.len() as u64,
            cpus: self.machine.cpus().into(),
            program_bytes: laid_out
                .setup
                .tasks
                .iter()
                .map(|t| t.program.held_bytes())
                .sum(),
        })
    }

    /// Relative cost of simulating it, to start the longest runs first:
    /// tasks times simulated time, each task having about one event in
    /// flight.
    pub fn cost(&self) -> u64 {
        let window = &self.scenario.window;
        u64::from(self.threads) * ((window.warmup + window.duration) / 1_000_000)
    }

    /// Lays the workload and its tables out in memory, each random choice
    /// drawn from the scenario's seed: what holds a run's memory.
    fn lay_out(&self) -> Result<LaidOut, ScenarioError> {
        let machine = self.machine;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.scenario.seed);
        let mut memory = MemoryMap::new(machine.line_size());
        let setup = self.workload.setup(machine, &mut memory, &mut rng);
        let processes: Vec<ProcessInfo> =
            first_task_and_count(setup.task_process.iter().copied(), setup.mms.len())
                .into_iter()
                .map(|(first, count)| ProcessInfo {
                    threads: count.max(1),
                    node: machine.node_of(setup.tasks[first.unwrap_or(0)].cpu),
                    set_slots: self.workload.set_slots(),
                    created_in_run: self.workload.create_every_ns().is_some(),
                })
                .collect();
        let vars = SizingVars::new(
            &machine.platform(),
            setup.tasks.len() as u64,
            processes.len() as u64,
            setup.futexes,
        );
        let design = &self.scenario.design;
        let hash = FutexHash::build(design, vars, &processes, machine.nodes(), &mut memory)
            .map_err(|error| ScenarioError::Design {
                design: design.name.clone(),
                error,
            })?;
        Ok(LaidOut {
            memory,
            setup,
            processes,
            hash,
        })
    }

    /// Refuses keys the layout analysis of the run's load record would
    /// refuse, on this machine.
    fn check_keys(&self, laid_out: &LaidOut) -> Result<(), ScenarioError> {
        if let Some(words) = &laid_out.setup.keys {
            let platform = self.machine.platform();
            platform.validate()?;
            layout::check_set(
                &self.scenario.design,
                &platform,
                words,
                self.workload.set_slots(),
            )?;
        }
        Ok(())
    }

    /// Lays the scenario out, runs the engine on it, and records the run.
    pub fn simulate(&self) -> Result<(RunRecord, Speed), RunError> {
        self.simulate_with(RunOptions::default())
    }

    /// `simulate`, with what the run records besides its results as
    /// `options` asks.
    pub fn simulate_with(&self, options: RunOptions) -> Result<(RunRecord, Speed), RunError> {
        let machine = self.machine;
        let scenario = self.scenario;
        let laid_out = self.lay_out()?;
        // Everything the analysis of the run's keys could refuse, before
        // it runs beside the event loop.
        self.check_keys(&laid_out)?;
        let LaidOut {
            mut memory,
            mut setup,
            processes,
            hash,
        } = laid_out;
        place_at_fork(machine, &mut setup.tasks);
        let table = TableRecord::laid_out(&hash, scenario.design.private.is_some());
        let futex = self.kernel(&hash, &mut setup, &mut memory);
        // The keys this run's tasks use, straight from its set-up: the
        // analysis of their buckets runs beside the event loop.
        let platform = machine.platform();
        let set_slots = self.workload.set_slots();
        let keys = &setup.keys;
        let analysis = || {
            keys.as_ref()
                .map(|words| layout::analyze_set(&scenario.design, &platform, words, set_slots))
                .transpose()
        };
        let lock = scenario.design.lock_kind(machine.lock_kind());
        let lock_names = std::mem::take(&mut setup.lock_names);
        let readout = setup.readout.take();
        let started = Instant::now();
        let task_cpus: Vec<u32> = setup.tasks.iter().map(|t| t.cpu).collect();
        let layout = SchedLayout::new(machine, &mut memory, &task_cpus);
        let (load, out) = beside(analysis, || {
            let engine = Engine::new(
                machine,
                &memory,
                futex,
                setup.tasks,
                lock,
                scenario.window,
                layout,
            );
            match options.explain {
                true => engine.explaining().run(),
                false => engine.run(),
            }
        });
        let wall_s = started.elapsed().as_secs_f64();
        let load = load
            .map_err(ScenarioError::from)?
            .map(|report| LoadRecord::from_layout(&report));
        if let Some(t) = out.stalled_at {
            return Err(RunError::Stalled {
                at_ns: t / 1000,
                events: crate::engine::STALL_EVENTS,
            });
        }
        let extra = readout.map_or_else(Vec::new, |read| read(&out.window, &out.timeline));
        let record = RunRecord::assemble(
            RunOrigin {
                machine,
                design: &scenario.design.name,
                workload: self.workload.name(),
                seed: scenario.seed,
                threads: self.threads,
                processes: processes.len() as u32,
                table,
                load,
                lock_names: &lock_names,
                extra,
                thread_futexes: &setup.thread_futexes,
                groups: &self.workload.task_groups(machine),
                memory: &memory,
                hash: &hash,
            },
            out,
        );
        let speed = Speed::of(&record, wall_s);
        Ok((record, speed))
    }

    /// The kernel the run's tasks call into, its objects laid out in
    /// `memory`; where the workload creates its threads in the run, their
    /// creations are staggered and the kernel told of them.
    fn kernel(&self, hash: &FutexHash, setup: &mut Setup, memory: &mut MemoryMap) -> FutexSystem {
        let machine = self.machine;
        let infos: Vec<TaskInfo> = setup
            .tasks
            .iter()
            .zip(&setup.task_process)
            .map(|(t, &process)| TaskInfo {
                process,
                cpu: t.cpu,
            })
            .collect();
        let cpu_nodes: Vec<u32> = (0..machine.cpus()).map(|c| machine.node_of(c)).collect();
        let mut futex = FutexSystem::new(
            hash.clone(),
            infos,
            setup.mms.clone(),
            &cpu_nodes,
            machine.page_size(),
            PerCpuOp::of(machine.memory_model),
            memory,
        );
        if let Some(ns) = self.workload.create_every_ns() {
            let tasks = std::mem::take(&mut setup.tasks);
            let (tasks, index_in_process) =
                staggered(tasks, &setup.task_process, ns.saturating_mul(1000));
            setup.tasks = tasks;
            let creation = InRunCreation {
                index_in_process,
                grace_period: machine.sched.tick,
            };
            futex.create_threads_in_run(&creation, memory);
        }
        futex
    }
}

/// The bucket locks of `design`'s tables for a workload of `size`, and the
/// lines their arrays span, from the design's sizing rules: the global
/// table's instances, each process's private hash (at the size its threads
/// give it, each of the workload's `parts` (`Workload::parts`) counting
/// its processes' threads alike, and as much again for the tables it
/// outgrows where threads are created in the run). A rule that gives no
/// table counts none: the check refuses it.
fn table_size(
    design: &TableDesign,
    machine: &Machine,
    size: &crate::workload::Size,
    parts: &[crate::workload::Size],
    set_slots: Option<SetSlots>,
    created_in_run: bool,
) -> (u64, u64) {
    let vars = SizingVars::new(
        &machine.platform(),
        size.tasks,
        size.processes,
        size.futexes,
    );
    let global = eval_slots(&design.slots, &vars).unwrap_or(0);
    let instances = match design.placement {
        Placement::PerNode => u64::from(machine.nodes()),
        _ => 1,
    };
    let mut slots = global.saturating_mul(instances);
    let mut tables = instances;
    if let Some(ph) = &design.private {
        for part in parts {
            let processes = part.processes.max(1);
            let threads = part.tasks.div_ceil(processes);
            let per_process = match set_slots {
                Some(set) => set.slots,
                None if threads >= u64::from(ph.min_threads) => {
                    let at = |t| eval_slots(&ph.slots, &vars.for_process(t, global)).unwrap_or(0);
                    let last = if ph.grows {
                        at(1).max(at(threads))
                    } else {
                        at(1)
                    };
                    if created_in_run {
                        last.saturating_mul(2)
                    } else {
                        last
                    }
                }
                None => 0,
            };
            slots = slots.saturating_add(processes.saturating_mul(per_process));
            tables = tables.saturating_add(processes);
        }
    }
    // More than this is refused as the tables are laid out.
    let bucket = u64::from(design.bucket.size).max(1);
    let slots = slots.min(MAX_TABLE_BYTES / bucket);
    let lines = (slots * bucket)
        .div_ceil(machine.line_size())
        .saturating_add(tables);
    (slots, lines)
}
