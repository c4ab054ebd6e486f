//! A mix of workloads: groups, each a workload with processes of its own,
//! run together as processes of one machine on one kernel, sharing its
//! tables (the global hash; each process's private hash is its own). What
//! a machine runs is rarely one benchmark: a few processes with thousands
//! of futexes beside many with one.
//!
//! ```toml
//! [workload]
//! name = "mix"
//!
//! [[workload.group]]
//! label = "databases"      # names the group in every table
//! name = "perf-hash"       # the group's workload and its own keys
//! threads = 16
//! futexes = 4096
//!
//! [[workload.group]]
//! label = "small"
//! name = "will-it-scale"
//! test = 4
//! mode = "process"
//! tasks = 60
//! ```
//!
//! Each group lays itself out as it would alone; the mix owns what the
//! groups would otherwise each number from zero:
//! - processes: a group's are numbered after those of the groups before
//!   it, each with an mm_struct of its own (`Setup::append`);
//! - user memory: each group is laid out in an address space of its own
//!   (`MemoryMap::in_space`), as different processes' pages are different
//!   memory at the same virtual addresses: a group draws the user
//!   addresses its futex keys hash as it draws them alone;
//! - CPUs: the groups fill the CPUs in order, a group's first task on the
//!   CPU after the last task of the group before, round the machine; more
//!   tasks than CPUs time-share them, as a workload's alone do.
//!
//! A mix takes perf bench futex hash and will-it-scale, whose tasks are
//! all its threads and whose figure is their ops: a group is read apart
//! (`GroupRecord`) by its ops/s and its lead figure, the mean of its
//! threads' rates. The mix's own lead figure is the mean of every thread's
//! rate, all groups together. Its groups ask the kernel for one private
//! hash size (perf's `-b`, `-I`) or none, and create every thread before
//! any starts.

use super::perf_hash::PerfHash;
use super::will_it_scale::WillItScale;
use super::{FirstCpu, Setup, Size, Workload, WorkloadError};
use crate::record::TaskGroup;
use crate::kernel::futex_hash::SetSlots;
use crate::machine::Machine;
use crate::memory::{AddressSpace, MemoryMap};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Groups of workloads run as processes of one machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    pub group: Vec<Group>,
}

/// One group: a workload and the label every table names it by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub label: String,
    /// Its keys are the group's own, beside `label`; each workload's
    /// refuses a key it does not know.
    #[serde(flatten)]
    pub workload: GroupWorkload,
}

/// The workloads a mix takes: each a config's workload of the same name,
/// whose tasks are its threads, with no kernel locks of its own and no
/// readout (what `Setup::append` joins).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum GroupWorkload {
    PerfHash(PerfHash),
    WillItScale(WillItScale),
}

impl GroupWorkload {
    fn workload(&self) -> &dyn Workload {
        match self {
            GroupWorkload::PerfHash(w) => w,
            GroupWorkload::WillItScale(w) => w,
        }
    }

    fn setup_from(
        &self,
        first_cpu: FirstCpu,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        match self {
            GroupWorkload::PerfHash(w) => w.setup_from(first_cpu, machine, memory, rng),
            GroupWorkload::WillItScale(w) => w.setup_from(first_cpu, machine, memory, rng),
        }
    }

    /// Whether the workload creates its threads while the others run: the
    /// kernel's creations in a run are one workload's (sim/kernel/resize.rs).
    fn creates_in_run(&self) -> bool {
        self.workload().create_every_ns().is_some()
    }
}

impl Workload for Mix {
    fn label(&self) -> String {
        let groups: Vec<String> = self
            .group
            .iter()
            .map(|g| format!("{} = {}", g.label, g.workload.workload().label()))
            .collect();
        format!("mix: {}", groups.join("; "))
    }

    fn threads(&self, machine: &Machine) -> u32 {
        self.group
            .iter()
            .map(|g| g.workload.workload().threads(machine))
            .fold(0, u32::saturating_add)
    }

    fn validate(&self, machine: &Machine) -> Result<(), WorkloadError> {
        if self.group.is_empty() {
            return Err(WorkloadError::at(
                "group",
                "a mix needs at least one [[workload.group]]",
            ));
        }
        let asks = self.set_slots();
        for (i, g) in self.group.iter().enumerate() {
            let in_group = |e: WorkloadError| e.in_group(i, &g.label);
            if let Some(j) = self.group[..i].iter().position(|h| h.label == g.label) {
                return Err(in_group(WorkloadError::at(
                    "label",
                    format!("group {j} has this label too: label them apart"),
                )));
            }
            let workload = g.workload.workload();
            workload.validate(machine).map_err(in_group)?;
            if g.workload.creates_in_run() {
                return Err(in_group(WorkloadError::at(
                    "create_every_ns",
                    "a mix's groups create every thread before any starts: leave create_every_ns out",
                )));
            }
            if workload.set_slots() != asks {
                return Err(in_group(WorkloadError::at(
                    "buckets",
                    format!(
                        "it asks for another private hash size than group '{}': a mix's groups \
                         make one PR_FUTEX_HASH prctl or none",
                        crate::echo::echo(&self.group[0].label)
                    ),
                )));
            }
        }
        Ok(())
    }

    fn setup(
        &self,
        machine: &Machine,
        memory: &mut MemoryMap,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Setup {
        let mut mix = Setup::default();
        let mut first_cpu = FirstCpu::default();
        for (space, g) in (0..).map(AddressSpace).zip(&self.group) {
            let laid_out = memory.in_space(space, |memory| {
                g.workload.setup_from(first_cpu, machine, memory, rng)
            });
            first_cpu = FirstCpu(first_cpu.cpu_of(laid_out.tasks.len() as u32, machine));
            mix.append(laid_out, rng);
        }
        mix
    }

    fn size(&self, machine: &Machine) -> Size {
        self.parts(machine)
            .into_iter()
            .fold(Size::default(), |sum, part| Size {
                tasks: sum.tasks.saturating_add(part.tasks),
                processes: sum.processes.saturating_add(part.processes),
                futexes: sum.futexes.saturating_add(part.futexes),
                lines: sum.lines.saturating_add(part.lines),
                held_bytes: sum.held_bytes.saturating_add(part.held_bytes),
            })
    }

    fn parts(&self, machine: &Machine) -> Vec<Size> {
        self.group
            .iter()
            .map(|g| g.workload.workload().size(machine))
            .collect()
    }

    fn task_groups(&self, machine: &Machine) -> Vec<TaskGroup> {
        let mut first = 0;
        self.group
            .iter()
            .map(|g| {
                let workload = g.workload.workload();
                let size = workload.size(machine);
                let tasks = first..first + workload.threads(machine) as usize;
                first = tasks.end;
                TaskGroup {
                    label: g.label.clone(),
                    workload: workload.name(),
                    tasks,
                    processes: size.processes.try_into().unwrap_or(u32::MAX),
                }
            })
            .collect()
    }

    /// The one request every group makes (`validate` refuses others).
    fn set_slots(&self) -> Option<SetSlots> {
        self.group
            .first()
            .and_then(|g| g.workload.workload().set_slots())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;
    use crate::workload::WorkloadSpec;
    use rand::SeedableRng;
    use std::collections::HashSet;

    fn machine() -> Machine {
        Machine::new(preset("icx-2s").unwrap()).unwrap()
    }

    fn databases_and_small() -> Mix {
        let spec: WorkloadSpec = toml::from_str(
            "name = \"mix\"\n\
             [[group]]\nlabel = \"databases\"\nname = \"perf-hash\"\nthreads = 8\nfutexes = 256\n\
             [[group]]\nlabel = \"db2\"\nname = \"perf-hash\"\nthreads = 8\nfutexes = 256\n\
             [[group]]\nlabel = \"small\"\nname = \"will-it-scale\"\ntest = 4\nmode = \"process\"\ntasks = 20\n\
             [[group]]\nlabel = \"small2\"\nname = \"will-it-scale\"\ntest = 4\nmode = \"process\"\ntasks = 20\n",
        )
        .unwrap();
        let WorkloadSpec::Mix(mix) = spec else {
            panic!("{spec:?} is not a mix")
        };
        mix
    }

    /// Groups that lay themselves out alike (two perf benches, two sets of
    /// forked will-it-scale tasks at one virtual address) still get
    /// processes, mm_structs, lines and CPUs of their own.
    #[test]
    fn the_groups_processes_get_disjoint_numbers_mm_structs_and_lines() {
        let machine = machine();
        let mix = databases_and_small();
        mix.validate(&machine).unwrap();
        let mut memory = MemoryMap::new(machine.line_size());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let setup = mix.setup(&machine, &mut memory, &mut rng);
        let groups = mix.task_groups(&machine);
        assert_eq!(setup.tasks.len(), 56);
        assert_eq!(groups.last().unwrap().tasks.end, setup.tasks.len());
        // 1 + 1 + 20 + 20 processes, numbered in group order.
        assert_eq!(setup.mms.len(), 42);
        assert_eq!(setup.mms.iter().collect::<HashSet<_>>().len(), 42);
        let process_sets: Vec<HashSet<u32>> = groups
            .iter()
            .map(|g| setup.task_process[g.tasks.clone()].iter().copied().collect())
            .collect();
        for (i, a) in process_sets.iter().enumerate() {
            assert_eq!(a.len() as u32, groups[i].processes, "{}", groups[i].label);
            for b in &process_sets[i + 1..] {
                assert!(a.is_disjoint(b), "{a:?} and {b:?}");
            }
        }
        // Each group of forked will-it-scale tasks puts task i's word on
        // the i-th of the same run of stack pages, at an offset it draws:
        // in one space two groups' words would share a line one time in
        // 64. Each group's pages are in its own space, on lines of its own.
        let words = setup.keys.as_ref().unwrap();
        assert_eq!(words.mms, setup.mms);
        assert_eq!(words.arrays.len(), 56);
        for i in 0..20 {
            let name = format!("task {i} stack");
            let stacks: Vec<_> = memory.regions().iter().filter(|r| r.name == name).collect();
            assert_eq!(stacks.len(), 2, "{name}");
            assert_eq!(stacks[0].base >> 12, stacks[1].base >> 12, "{name}");
            assert_ne!(stacks[0].space, stacks[1].space, "{name}");
            assert_ne!(stacks[0].first_line(), stacks[1].first_line(), "{name}");
        }
        // The groups fill the CPUs in order, round the machine: first the
        // 16 perf threads, then the 40 will-it-scale tasks.
        let cpus: Vec<u32> = setup.tasks.iter().map(|t| t.cpu).collect();
        let in_order: Vec<u32> = (0..56).map(|t| t % machine.cpus()).collect();
        assert_eq!(cpus, in_order);
        for (t, array) in words.arrays.iter().enumerate() {
            assert_eq!(array.process, setup.task_process[t]);
        }
    }
}
