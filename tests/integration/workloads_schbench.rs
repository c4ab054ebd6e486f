//! schbench: message threads waking workers through futexes.

use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::schbench::Schbench;
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

fn run(message_threads: u32, workers: u32, seed: u64) -> RunRecord {
    Scenario {
        machine: machine("icx-2s").unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: WorkloadSpec::Schbench(Schbench {
            message_threads,
            workers: Some(workers),
            work_ns: 1_000,
        }),
        window: RunWindow {
            warmup: 100 * US,
            duration: 1_000 * US,
            stop: None,
        },
        seed,
    }
    .simulate()
    .unwrap()
    .0
}

fn metric(r: &RunRecord, name: &str) -> f64 {
    r.extra.iter().find(|m| m.name == name).unwrap().value
}

#[test]
fn workers_are_woken_through_their_futexes_and_timed() {
    let r = run(2, 8, 1);
    assert_eq!(r.threads, 18);
    let rps = metric(&r, "requests per second");
    assert!(rps > 100_000.0, "{rps}");
    // A wake-up takes at least the machine's wake-up time (3 us), and
    // the percentiles are ordered.
    let p = |q: &str| metric(&r, &format!("wakeup latency {q}"));
    assert!(p("p50") >= 3.0, "{:?}", r.extra);
    assert!(p("p50") <= p("p90") && p("p90") <= p("p99") && p("p99") <= p("max"));
    // Every request went through FUTEX_WAKE and FUTEX_WAIT on a bucket lock.
    assert!(r.locks.acquisitions as f64 > rps * 0.001);
}

#[test]
fn a_message_thread_with_more_workers_wakes_its_last_one_later() {
    let few = metric(&run(1, 4, 2), "wakeup latency p99");
    let many = metric(&run(1, 32, 2), "wakeup latency p99");
    assert!(many > few, "4 workers {few} us, 32 workers {many} us");
}

#[test]
fn a_seed_fixes_the_run() {
    assert_eq!(
        serde_json::to_string(&run(2, 6, 9)).unwrap(),
        serde_json::to_string(&run(2, 6, 9)).unwrap()
    );
}
