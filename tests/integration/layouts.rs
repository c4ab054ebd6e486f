//! Every shipped machine lays out every workload's memory: the kernel's and
//! the workloads' objects are placed in fixed areas of the address space,
//! and a machine with many nodes, CPUs or tasks once ran one area into the
//! next (a panic where two regions shared a line). Each machine runs each
//! workload for a few simulated microseconds, on the table designs that
//! lay out the most: per-node tables, and a private hash per process.

use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::{self, preset as machine};
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::WorkloadSpec;

/// The workloads as their configs name them, the ones that lay out a
/// process per task among them.
const WORKLOADS: [&str; 12] = [
    "name = \"perf-hash\"\nshared = true",
    "name = \"perf-wake\"",
    "name = \"perf-wake-parallel\"",
    "name = \"perf-requeue\"",
    "name = \"perf-lock-pi\"",
    "name = \"will-it-scale\"\ntest = 2\nmode = \"process\"",
    "name = \"will-it-scale\"\ntest = 4\nmode = \"thread\"",
    "name = \"schbench\"",
    "name = \"fea-solver\"",
    "name = \"time-exit\"",
    "name = \"lru-lock\"",
    "name = \"will-it-scale\"\ntest = 3\nmode = \"process\"",
];

#[test]
fn every_machine_lays_out_every_workload() {
    let mut failures = Vec::new();
    // Each machine as shipped, and two with the shortest and longest lines
    // a profile may give (objects that share a line then share a region).
    let lines = presets::names()
        .map(|name| (name, None))
        .chain([("icx-2s", Some(8)), ("uv-512", Some(4096))]);
    for (name, line) in lines {
        let mut spec_of_machine = machine(name).unwrap();
        if let Some(line) = line {
            spec_of_machine.coherence.line = line;
        }
        for workload in WORKLOADS {
            let spec: WorkloadSpec = toml::from_str(workload).unwrap();
            for design in ["numa-6.16", "private-6.17"] {
                let scenario = Scenario {
                    machine: spec_of_machine.clone(),
                    design: table(design).unwrap(),
                    workload: spec.clone(),
                    window: RunWindow {
                        warmup: 1_000_000,
                        duration: 1_000_000,
                        stop: None,
                    },
                    seed: 1,
                };
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    scenario.simulate().map(|_| ())
                }));
                match ran {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        failures.push(format!("{name} {line:?}, {design}, {workload:?}: {e}"))
                    }
                    Err(_) => {
                        failures.push(format!("{name} {line:?}, {design}, {workload:?}: panicked"))
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
