//! will-it-scale futex1-4 in thread and process mode.

use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::record::RunRecord;
use futexsim::scenario::{RunError, Scenario, ScenarioError};
use futexsim::task::RunWindow;
use futexsim::workload::will_it_scale::{Mode, WillItScale};
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

fn run(design: &str, test: u8, mode: Mode, tasks: u32) -> RunRecord {
    Scenario {
        machine: machine("clx-2s").unwrap(),
        design: table(design).unwrap(),
        workload: WorkloadSpec::WillItScale(WillItScale {
            test,
            mode,
            tasks: Some(tasks),
        }),
        window: RunWindow {
            warmup: 20 * US,
            duration: 200 * US,
            stop: None,
        },
        seed: 11,
    }
    .simulate()
    .unwrap()
    .0
}

#[test]
fn process_mode_has_one_mm_per_process() {
    let p = run("private-6.17", 4, Mode::Process, 16);
    assert_eq!(p.processes, 16);
    // A single-threaded process has no private hash; its private futexes
    // use the global table.
    assert!(p.table.private_slots.is_empty());
    let t = run("private-6.17", 4, Mode::Thread, 16);
    assert_eq!(t.processes, 1);
    assert_eq!(t.table.private_slots.len(), 1);
}

#[test]
fn forked_words_share_an_address_but_not_a_key() {
    // Every process's word is at one virtual address; were the keys the
    // same, all eight would take one bucket lock and its line would bounce.
    // Each process keys by its own mm, so they spread over the table.
    let p = run("aligned-3.14", 4, Mode::Process, 8);
    assert_eq!(p.processes, 8);
    assert!(p.ops > 8 * 1000);
    assert!(
        p.coherence.hitm_per_op < 0.05,
        "{:?} {:?}",
        p.coherence,
        p.top_lines.first()
    );
}

#[test]
fn the_four_tests_take_their_own_kernel_paths() {
    let tasks = 4;
    let rates: Vec<RunRecord> = (1..=4)
        .map(|test| run("aligned-3.14", test, Mode::Thread, tasks))
        .collect();
    let rate = |i: usize| rates[i].mean_thread_ops_per_sec;
    // Wakes with nobody waiting take no bucket lock (3.14+); waits do.
    assert_eq!(rates[0].locks.acquisitions, 0);
    assert_eq!(rates[2].locks.acquisitions, 0);
    assert!(rates[1].locks.acquisitions > 0 && rates[3].locks.acquisitions > 0);
    // Shared keys pay the page lookup: futex1 and futex2 are slower than
    // their private twins futex3 and futex4.
    assert!(rate(0) < rate(2), "futex1 {} futex3 {}", rate(0), rate(2));
    assert!(rate(1) < rate(3), "futex2 {} futex4 {}", rate(1), rate(3));
    // A wait locks and unlocks on top of what a wake does.
    assert!(rate(3) < rate(2));
}

#[test]
fn only_futex1_to_futex4_exist() {
    let s = Scenario {
        machine: machine("clx-2s").unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: WorkloadSpec::WillItScale(WillItScale {
            test: 5,
            mode: Mode::Thread,
            tasks: None,
        }),
        window: RunWindow {
            warmup: 0,
            duration: US,
            stop: None,
        },
        seed: 1,
    };
    let err = s.simulate().unwrap_err();
    assert!(
        matches!(err, RunError::Scenario(ScenarioError::Workload(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("futex1 to futex4"), "{err}");
}

#[test]
fn more_tasks_than_cpus_take_turns_on_them() {
    // Eight tasks on four CPUs, in both modes: each CPU's two tasks share
    // it a slice at a time, so the machine does what four tasks do, and
    // every task does about half of what one alone on a CPU does.
    let on = |mode: Mode, tasks: u32| {
        let mut spec = machine("clx-2s").unwrap();
        spec.topology.nr_cpus = Some(4);
        Scenario {
            machine: spec,
            design: table("aligned-3.14").unwrap(),
            workload: WorkloadSpec::WillItScale(WillItScale {
                test: 4,
                mode,
                tasks: Some(tasks),
            }),
            window: RunWindow {
                warmup: 2_000 * US,
                duration: 30_000 * US,
                stop: None,
            },
            seed: 11,
        }
        .simulate()
        .unwrap()
        .0
    };
    for mode in [Mode::Thread, Mode::Process] {
        let (alone, shared) = (on(mode, 4), on(mode, 8));
        assert_eq!(shared.threads, 8);
        let ratio = shared.ops as f64 / alone.ops as f64;
        assert!((0.9..=1.0).contains(&ratio), "{mode:?}: {ratio}");
        let half = alone.min_thread_ops as f64 / 2.0;
        assert!(
            shared.min_thread_ops as f64 > 0.8 * half
                && (shared.max_thread_ops as f64) < 1.2 * half,
            "{mode:?}: {} to {} ops per task, against {half} for half a CPU",
            shared.min_thread_ops,
            shared.max_thread_ops
        );
    }
}
