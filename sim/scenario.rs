//! A scenario is one fully resolved point: a machine, a table design, a
//! workload, a run window and a seed. `simulate` lays it out in memory, runs
//! the engine and turns the outcome into a record.

use crate::analysis::layout;
use crate::engine::{place_at_fork, Engine, SchedLayout};
use crate::footprint::{Footprint, MemoryLimit};
use crate::kernel::core::{first_task_and_count, FutexSystem, TaskInfo};
use crate::kernel::futex_hash::SetSlots;
use crate::kernel::futex_hash::{FutexHash, ProcessInfo, TableSel};
use crate::kernel::resize::InRunCreation;
use crate::kernel::table::{eval_slots, DesignError, Placement, SizingVars, TableDesign};
use crate::limits::MAX_TABLE_BYTES;
use crate::machine::{Machine, MachineSpec, PlatformError};
use crate::memory::MemoryMap;
use crate::record::{
    BucketRef, BucketTable, CoherenceRecord, Latency, LineRecord, LoadRecord, LockRecord,
    NamedLockRecord, Occupant, PerfThreadRecord, RunRecord, Speed, TableRecord,
};
use crate::task::RunWindow;
use crate::workload::creation::staggered;
use crate::workload::{Setup, WorkloadError, WorkloadSpec};
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

/// Lines listed in a record's c2c table.
pub const TOP_LINES: usize = 10;

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

/// A scenario laid out in memory, ready for the engine.
struct Prepared {
    memory: MemoryMap,
    setup: Setup,
    processes: Vec<ProcessInfo>,
    hash: FutexHash,
    threads: u32,
}

impl Scenario {
    /// Checks everything `simulate` would refuse (threads beyond the CPUs, a
    /// sizing rule that gives no valid table) without running anything.
    /// A run too large for the memory the process may use is refused
    /// first, from its estimate: laying it out would take that memory.
    pub fn check(&self, machine: &Machine) -> Result<(), ScenarioError> {
        self.design
            .validate()
            .map_err(|error| ScenarioError::Design {
                design: self.design.name.clone(),
                error,
            })?;
        check_workload(&self.workload, machine)?;
        self.check_memory(machine, crate::footprint::process_memory_limit())?;
        let prepared = self.prepare(machine)?;
        // The load record analyses the run's own keys on this machine.
        if let Some(words) = &prepared.setup.keys {
            let platform = machine.platform();
            platform.validate()?;
            let set_slots = self.workload.workload().set_slots();
            layout::check_set(&self.design, &platform, words, set_slots)?;
        }
        Ok(())
    }

    /// What a run of it lays out, counted from its numbers without laying
    /// anything out: the workload's size (`Workload::size`) and the tables
    /// its design's sizing rules give for it. What a run's memory is
    /// estimated from before it is laid out.
    pub fn estimate(&self, machine: &Machine) -> Footprint {
        let workload = self.workload.workload();
        let size = workload.size(machine);
        let (locks, table_lines) = table_size(
            &self.design,
            machine,
            &size,
            workload.set_slots(),
            workload.create_every_ns().is_some(),
        );
        Footprint {
            lines: size.lines.saturating_add(table_lines),
            locks,
            queued_steps: crate::footprint::queued_steps(&self.workload, workload.threads(machine)),
            tasks: size.tasks,
            cpus: machine.cpus().into(),
            program_bytes: size.held_bytes,
        }
    }

    /// Refuses a run that would not fit in `limit` even alone: laying it
    /// out (to check it, or to run it) would take that memory.
    pub fn check_memory(
        &self,
        machine: &Machine,
        limit: Option<&MemoryLimit>,
    ) -> Result<(), ScenarioError> {
        let need = self.estimate(machine).bytes();
        match limit {
            Some(limit) if need > limit.bytes => Err(ScenarioError::Memory {
                need_mib: need.div_ceil(1 << 20),
                limit: limit.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// What a run of it lays out, as laid out: how the estimate was measured.
    pub fn footprint(&self, machine: &Machine) -> Result<Footprint, String> {
        let prepared = self.prepare(machine).map_err(|e| e.to_string())?;
        let hash = &prepared.hash;
        Ok(Footprint {
            lines: prepared.memory.lines().into(),
            locks: hash
                .global
                .iter()
                .chain(hash.private.iter().flatten())
                .chain(hash.outgrown.iter().flatten())
                .map(|t| t.slots)
                .sum(),
            queued_steps: crate::footprint::queued_steps(&self.workload, prepared.threads),
            tasks: prepared.setup.tasks.len() as u64,
            cpus: machine.cpus().into(),
            program_bytes: prepared
                .setup
                .tasks
                .iter()
                .map(|t| t.program.held_bytes())
                .sum(),
        })
    }

    /// Relative cost of simulating it, to start the longest runs first:
    /// tasks times simulated time, each task having about one event in
    /// flight. A scenario whose machine does not build costs nothing.
    pub fn cost_estimate(&self) -> u64 {
        let Ok(machine) = Machine::new(self.machine.clone()) else {
            return 0;
        };
        u64::from(self.workload.workload().threads(&machine))
            * ((self.window.warmup + self.window.duration) / 1_000_000)
    }

    fn prepare(&self, machine: &Machine) -> Result<Prepared, ScenarioError> {
        let design_error = |error: DesignError| ScenarioError::Design {
            design: self.design.name.clone(),
            error,
        };
        self.design.validate().map_err(design_error)?;
        let threads = check_workload(&self.workload, machine)?;
        check_era(&self.workload, &self.design)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut memory = MemoryMap::new(machine.line_size());
        let setup = self
            .workload
            .workload()
            .setup(machine, &mut memory, &mut rng);
        let processes: Vec<ProcessInfo> =
            first_task_and_count(setup.task_process.iter().copied(), setup.mms.len())
                .into_iter()
                .map(|(first, count)| ProcessInfo {
                    threads: count.max(1),
                    node: machine.node_of(setup.tasks[first.unwrap_or(0)].cpu),
                    set_slots: self.workload.workload().set_slots(),
                    created_in_run: self.workload.workload().create_every_ns().is_some(),
                })
                .collect();
        let vars = SizingVars::new(
            &machine.platform(),
            setup.tasks.len() as u64,
            processes.len() as u64,
            setup.futexes,
        );
        let hash = FutexHash::build(&self.design, vars, &processes, machine.nodes(), &mut memory)
            .map_err(design_error)?;
        Ok(Prepared {
            memory,
            setup,
            processes,
            hash,
            threads,
        })
    }

    pub fn simulate(&self) -> Result<(RunRecord, Speed), String> {
        let machine = Machine::new(self.machine.clone()).map_err(|e| e.to_string())?;
        let Prepared {
            mut memory,
            mut setup,
            processes,
            hash,
            threads,
        } = self.prepare(&machine).map_err(|e| e.to_string())?;
        place_at_fork(&machine, &mut setup.tasks);
        let mut table = TableRecord {
            slots: hash.global_slots(),
            instances: hash.global.len() as u32,
            private_slots: hash.private.iter().flatten().map(|t| t.slots).collect(),
            bytes: hash.memory_bytes(),
            private_hashes: if self.design.private.is_some() {
                hash.lives.clone()
            } else {
                Vec::new()
            },
        };
        // The keys this run's tasks use, straight from its set-up: the
        // analysis of their buckets runs beside the event loop, once
        // everything it could refuse has been checked.
        let platform = machine.platform();
        let set_slots = self.workload.workload().set_slots();
        if let Some(words) = &setup.keys {
            layout::check_set(&self.design, &platform, words, set_slots)
                .map_err(|e| e.to_string())?;
        }
        let keys = &setup.keys;
        let analysis = || {
            keys.as_ref()
                .map(|words| layout::analyze_set(&self.design, &platform, words, set_slots))
                .transpose()
        };
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
            &mut memory,
        );
        if let Some(ns) = self.workload.workload().create_every_ns() {
            let tasks = std::mem::take(&mut setup.tasks);
            let (tasks, index_in_process) =
                staggered(tasks, &setup.task_process, ns.saturating_mul(1000));
            setup.tasks = tasks;
            let creation = InRunCreation {
                index_in_process,
                grace_period: machine.sched.tick,
            };
            futex.create_threads_in_run(&creation, &mut memory);
        }
        let lock = self.design.lock_kind(machine.lock_kind());
        let lock_names = std::mem::take(&mut setup.lock_names);
        let readout = setup.readout.take();
        let started = Instant::now();
        let task_cpus: Vec<u32> = setup.tasks.iter().map(|t| t.cpu).collect();
        let layout = SchedLayout::new(&machine, &mut memory, &task_cpus);
        let (load, mut out) = beside(analysis, || {
            Engine::new(
                &machine,
                &memory,
                futex,
                setup.tasks,
                lock,
                self.window,
                layout,
            )
            .run()
        });
        let wall_s = started.elapsed().as_secs_f64();
        let load = load
            .map_err(|e| e.to_string())?
            .map(|report| LoadRecord::from_layout(&report));
        if let Some(t) = out.stalled_at {
            return Err(format!(
                "stopped at {} ns of simulated time: {} events there without time advancing \
                 (every step takes 0 ns?); the run would never end",
                t / 1000,
                crate::engine::STALL_EVENTS
            ));
        }

        // Where threads were created in the run: the slots and resizes it reached.
        for (life, reached) in table.private_hashes.iter_mut().zip(&out.resizes) {
            if let Some((slots, resizes)) = reached {
                life.slots = *slots;
                life.resizes = resizes.published;
                life.in_run = Some(*resizes);
            }
        }
        let m = &out.metrics;
        let ops: u64 = m.ops_per_task.iter().sum();
        // A run whose tasks all exit ends early: its counted time ends with the last exit.
        let counted_ps = out.timeline.all_exited().map_or(self.window.duration, |t| {
            t.saturating_sub(self.window.warmup)
                .clamp(1000, self.window.duration)
        });
        let sim_ns = counted_ps / 1000;
        let secs = sim_ns as f64 / 1e9;
        let rates: Vec<f64> = m.ops_per_task.iter().map(|&n| n as f64 / secs).collect();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len().max(1) as f64;
        let top_lines = out
            .directory
            .hottest_lines(TOP_LINES)
            .into_iter()
            .map(|s| {
                let region = memory.region(memory.region_of_line(s.line));
                let address = memory.line_addr(s.line);
                let what = |offset: u16| describe(&hash, &region.name, address + u64::from(offset));
                let node = memory.home_of_line(s.line);
                LineRecord::from_stats(&s, address, node, region.name.clone(), what, |c| {
                    machine.node_of(c)
                })
            })
            .collect();
        // perf bench futex hash prints each thread's array and rate.
        let perf_threads = match (&self.workload, &setup.keys) {
            (WorkloadSpec::PerfHash(_), Some(words)) => words
                .arrays
                .iter()
                .zip(&m.ops_per_task)
                .map(|(array, &ops)| PerfThreadRecord {
                    first_futex: array.base,
                    last_futex: array.base + 4 * u64::from(array.words.saturating_sub(1)),
                    ops,
                })
                .collect(),
            _ => Vec::new(),
        };
        let record = RunRecord {
            machine: machine.name().to_string(),
            design: self.design.name.clone(),
            workload: self.workload.workload().label(),
            seed: self.seed,
            cpus: machine.cpus(),
            nodes: machine.nodes(),
            threads,
            processes: processes.len() as u32,
            line_size: machine.line_size(),
            table,
            sim_ns,
            ops,
            ops_per_sec: ops as f64 / secs,
            mean_thread_ops_per_sec: mean,
            thread_rsd_pct: if mean > 0.0 {
                100.0 * var.sqrt() / mean
            } else {
                0.0
            },
            min_thread_ops: m.ops_per_task.iter().copied().min().unwrap_or(0),
            max_thread_ops: m.ops_per_task.iter().copied().max().unwrap_or(0),
            latency_ns: Latency {
                mean: m.latency.mean(),
                p50: m.latency.quantile(0.50),
                p90: m.latency.quantile(0.90),
                p99: m.latency.quantile(0.99),
                max: m.latency.max(),
            },
            locks: LockRecord::from_stats(&m.locks),
            coherence: CoherenceRecord::from_totals(&out.directory.totals, ops),
            load,
            top_lines,
            events: out.events,
            asleep_at_end: out.asleep_at_end as u64,
            workload_locks: lock_names
                .iter()
                .zip(
                    m.workload_locks
                        .iter()
                        .chain(std::iter::repeat(&Default::default())),
                )
                .filter(|(_, stats)| stats.acquisitions > 0)
                .map(|(name, stats)| NamedLockRecord::from_stats(name, stats))
                .collect(),
            extra: readout.map_or_else(Vec::new, |read| read(&self.window, &out.timeline)),
            perf_threads,
        };
        let speed = Speed {
            events: out.events,
            wall_s,
            events_per_sec: out.events as f64 / wall_s.max(1e-9),
            sim_ops_per_sec: ops as f64 / wall_s.max(1e-9),
        };
        Ok((record, speed))
    }
}

/// The bucket locks of `design`'s tables for a workload of `size`, and the
/// lines their arrays span, from the design's sizing rules: the global
/// table's instances, each process's private hash (at the size its threads
/// give it, and as much again for the tables it outgrows where threads
/// are created in the run). A rule that gives no table counts none: the
/// check refuses it.
fn table_size(
    design: &TableDesign,
    machine: &Machine,
    size: &crate::workload::Size,
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
        let processes = size.processes.max(1);
        let threads = size.tasks.div_ceil(processes);
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
    // More than this is refused as the tables are laid out.
    let bucket = u64::from(design.bucket.size).max(1);
    let slots = slots.min(MAX_TABLE_BYTES / bucket);
    let lines = (slots * bucket)
        .div_ceil(machine.line_size())
        .saturating_add(tables);
    (slots, lines)
}

/// Names the byte at `addr`: a bucket's field, a private hash header, or the region.
fn describe(hash: &FutexHash, region: &str, addr: u64) -> Occupant {
    // A process's outgrown tables are named as its private hash's.
    let tables = (0..hash.global.len() as u32)
        .map(TableSel::Global)
        .chain(
            (0..hash.private.len() as u32)
                .filter(|&p| hash.private[p as usize].is_some())
                .map(TableSel::Private),
        )
        .chain(hash.outgrown.iter().enumerate().flat_map(|(p, tables)| {
            (0..tables.len() as u32).map(move |generation| TableSel::Outgrown {
                process: p as u32,
                generation,
            })
        }));
    for table in tables {
        if let Some((index, field)) = hash.locate(table, addr) {
            let table = match table {
                TableSel::Global(_) => BucketTable::Global,
                TableSel::Private(process) | TableSel::Outgrown { process, .. } => {
                    BucketTable::Private { process }
                }
            };
            let bucket = BucketRef { table, index };
            return Occupant::Bucket { bucket, field };
        }
        if hash
            .instance(table)
            .header
            .is_some_and(|h| addr >= h && addr < hash.instance(table).base)
        {
            return Occupant::PrivateHashHeader;
        }
    }
    Occupant::Region(region.to_string())
}
