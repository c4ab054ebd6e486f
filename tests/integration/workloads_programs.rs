//! The defining behaviour of the program-style workloads: the FEA-style
//! solver, time_exit, the LRU lock under NUMA emulation.

use futexsim::kernel::page_wait::PageWaitEra;
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::machine::MachineSpec;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::fea_solver::FeaSolver;
use futexsim::workload::lru_lock::LruLock;
use futexsim::workload::time_exit::TimeExit;
use futexsim::workload::WorkloadSpec;

const MS: u64 = 1_000_000_000;

fn run(machine: MachineSpec, design: &str, workload: WorkloadSpec, window: RunWindow) -> RunRecord {
    Scenario {
        machine,
        design: table(design).unwrap(),
        workload,
        window,
        seed: 3,
    }
    .simulate()
    .unwrap()
    .0
}

fn extra(r: &RunRecord, name: &str) -> f64 {
    r.extra
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no '{name}' in {:?}", r.extra))
        .value
}

/// A run that ends when every task has exited; the window is only a limit.
const UNTIL_EXIT: RunWindow = RunWindow {
    warmup: 0,
    duration: 2000 * MS,
    stop: None,
};

#[test]
fn time_exit_takes_longer_with_more_children() {
    let times: Vec<f64> = [8, 32, 128]
        .into_iter()
        .map(|n| {
            let r = run(
                machine("uv-512").unwrap(),
                "fixed-256",
                WorkloadSpec::TimeExit(TimeExit {
                    children: Some(n),
                    ..TimeExit::default()
                }),
                UNTIL_EXIT,
            );
            assert_eq!(extra(&r, "children exited"), f64::from(n));
            // Every child ran each step of its exit inside the timed
            // interval, and the parent reaped each.
            let total = extra(&r, "time until all exited");
            let steps: Vec<f64> = r
                .extra
                .iter()
                .filter(|m| m.name.ends_with("mean per child") && !m.name.starts_with("fault"))
                .map(|m| m.value)
                .collect();
            assert_eq!(steps.len(), 7);
            assert!(steps.iter().all(|&us| us > 0.0), "{steps:?}");
            assert!(
                steps.iter().sum::<f64>() * 1e-6 <= total,
                "{steps:?} {total}"
            );
            assert!(extra(&r, "parent: release_task") > 0.0);
            total
        })
        .collect();
    assert!(
        times.windows(2).all(|w| w[1] > w[0] * 1.5),
        "time_exit should grow with N: {times:?}"
    );
}

/// time_exit's children on the page wait table of `era`: the fault's mean
/// time per child (us) and the acquisitions of the page's slot lock.
fn page_lock_waits(children: u32, era: PageWaitEra) -> (f64, u64) {
    let r = run(
        machine("uv-512").unwrap(),
        "fixed-256",
        WorkloadSpec::TimeExit(TimeExit {
            children: Some(children),
            page_wait_table: era,
            ..TimeExit::default()
        }),
        UNTIL_EXIT,
    );
    let slot = r
        .workload_locks
        .iter()
        .filter(|l| l.name.starts_with("page wait table slot"))
        .map(|l| l.lock.acquisitions)
        .sum();
    let fault = extra(
        &r,
        "fault on the shared page (lock_page), before the release, mean per child",
    );
    (fault, slot)
}

#[test]
fn children_that_fault_on_the_shared_page_together_sleep_on_its_wait_table_slot() {
    // One child never finds the page locked: it never takes the slot's lock.
    assert_eq!(page_lock_waits(1, PageWaitEra::V3_8).1, 0);
    for era in [PageWaitEra::V3_8, PageWaitEra::V4_11] {
        let (alone, _) = page_lock_waits(1, era);
        let (together, slot) = page_lock_waits(64, era);
        // 64 children lock one page: the later ones queue on its slot,
        // each through prepare_to_wait and finish_wait, and are woken.
        assert!(
            slot >= 64,
            "{era:?}: {slot} acquisitions of the slot's lock"
        );
        assert!(
            together > 5.0 * alone,
            "{era:?}: {alone} us alone, {together} us with 64"
        );
    }
}

/// time_exit on the UV, 32 children unless the workload says.
fn time_exit_of(workload: TimeExit) -> RunRecord {
    run(
        machine("uv-512").unwrap(),
        "fixed-256",
        WorkloadSpec::TimeExit(TimeExit {
            children: workload.children.or(Some(32)),
            ..workload
        }),
        UNTIL_EXIT,
    )
}

#[test]
fn unmapping_takes_longer_the_more_pages_the_children_share() {
    let exit_mm = |anon_pages| {
        let r = time_exit_of(TimeExit {
            anon_pages,
            ..TimeExit::default()
        });
        extra(&r, "exit_mm (unmap_vmas), mean per child")
    };
    let (few, many) = (exit_mm(8), exit_mm(512));
    // Each shared page costs a pte's zap and an atomic on a struct page
    // line every sibling writes too: far more than its private part.
    let private_us = 504.0 * 30e-3;
    assert!(many - few > private_us * 2.0, "{few} us, {many} us");
}

#[test]
fn a_copy_on_write_fault_in_exit_locks_a_page_every_child_shares() {
    assert!(time_exit_of(TimeExit::default())
        .extra
        .iter()
        .all(|m| !m.name.starts_with("exit()")));
    let fault = |children| {
        let r = time_exit_of(TimeExit {
            children: Some(children),
            exit_cow_faults: 1,
            ..TimeExit::default()
        });
        let us = extra(
            &r,
            "exit(): copy-on-write faults (lock_page), mean per child",
        );
        assert!(us * 1e-6 < extra(&r, "time until all exited"));
        us
    };
    // Released together, the children lock one page at once inside the
    // timed interval: the later ones wait for the earlier ones' faults.
    let (alone, together) = (fault(1), fault(32));
    assert!(alone > 0.0);
    assert!(
        together > 5.0 * alone,
        "{alone} us alone, {together} us with 32"
    );
}

#[test]
fn every_solver_thread_runs_every_step_behind_the_barrier() {
    let solver = FeaSolver {
        processes: 2,
        threads_per_process: 4,
        steps: 30,
        ..serde_json::from_str("{}").unwrap()
    };
    for design in ["fixed-256", "private-2009"] {
        let r = run(
            machine("vsmp-32").unwrap(),
            design,
            WorkloadSpec::FeaSolver(solver.clone()),
            UNTIL_EXIT,
        );
        assert_eq!((r.min_thread_ops, r.max_thread_ops), (30, 30), "{design}");
        assert_eq!(r.asleep_at_end, 0, "{design}: nobody left behind a barrier");
        // 8 threads x 30 steps, each taking its step's share of the compute at least.
        assert!(extra(&r, "solve time") > 30.0 * 20e-3, "{design}");
    }
}

#[test]
fn the_fea_solver_on_vsmp_pays_for_its_page_sized_coherence_unit() {
    // Four processes of eight threads, one per board: the solver's shared
    // words and the kernel's table lines of one page are written from
    // several boards, which vSMP's 4 KiB unit makes them share.
    let solver = FeaSolver {
        steps: 20,
        ..serde_json::from_str("{}").unwrap()
    };
    let solve = |board_line: u64| {
        let mut m = machine("vsmp-32").unwrap();
        m.coherence.board_line = Some(board_line);
        let r = run(
            m,
            "fixed-256",
            WorkloadSpec::FeaSolver(solver.clone()),
            UNTIL_EXIT,
        );
        extra(&r, "solve time")
    };
    let (page, line) = (solve(4096), solve(64));
    assert!(page > line, "4 KiB unit {page} s, 64-byte unit {line} s");
}

/// A one-node arm64 machine with enough cores for the report's 96 processes.
fn arm64_96(numa_fake: u32) -> MachineSpec {
    let mut m = machine("arm64-8").unwrap();
    m.topology.cores_per_socket = 96;
    m.topology.cores_per_llc = 96;
    m.topology.numa_fake = numa_fake;
    m
}

#[test]
fn numa_emulation_splits_the_lru_lock_and_its_contention() {
    let window = RunWindow {
        warmup: MS / 2,
        duration: 2 * MS,
        stop: None,
    };
    let rate = |processes, fake| {
        run(
            arm64_96(fake),
            "numa-6.16",
            WorkloadSpec::LruLock(LruLock {
                processes: Some(processes),
            }),
            window,
        )
        .ops_per_sec
    };
    let (one, one_fake) = (rate(1, 1), rate(1, 2));
    assert!(
        (one_fake / one - 1.0).abs() < 0.02,
        "one process: {one} vs {one_fake}"
    );
    let (busy, busy_fake) = (rate(48, 1), rate(48, 2));
    assert!(
        busy_fake > 1.5 * busy,
        "48 processes: {busy} vs {busy_fake}"
    );
}
