//! The perf bench futex workloads beside perf hash: each test checks the
//! behaviour that defines its benchmark.

use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::machine::MachineSpec;
use futexsim::record::RunRecord;
use futexsim::scenario::{RunError, Scenario, ScenarioError};
use futexsim::task::RunWindow;
use futexsim::workload::perf_lock_pi::PerfLockPi;
use futexsim::workload::perf_requeue::PerfRequeue;
use futexsim::workload::perf_wake::PerfWake;
use futexsim::workload::perf_wake_parallel::PerfWakeParallel;
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

fn run(workload: WorkloadSpec, window: RunWindow) -> RunRecord {
    run_on(machine("icx-2s").unwrap(), workload, window)
}

/// `run` on the machine `spec`.
fn run_on(spec: MachineSpec, workload: WorkloadSpec, window: RunWindow) -> RunRecord {
    Scenario {
        machine: spec,
        design: table("aligned-3.14").unwrap(),
        workload,
        window,
        seed: 5,
    }
    .simulate()
    .unwrap()
    .0
}

fn metric(r: &RunRecord, name: &str) -> f64 {
    r.extra
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric '{name}' in {:?}", r.extra))
        .value
}

/// `rounds` whole rounds of `settle_us`, ending halfway through the next
/// round's settle, while every blocked thread sleeps and every waker waits.
fn rounds(rounds: u64, settle_us: u64) -> RunWindow {
    RunWindow {
        warmup: 0,
        duration: (2 * rounds * settle_us + settle_us / 2) * US,
        stop: None,
    }
}

#[test]
fn wake_parallel_wakes_every_waiter_exactly_once() {
    // 32 threads that all go to sleep at once queue on one ticket bucket
    // lock, each hand-off a transfer per spinner: tens of microseconds
    // before the last sleeps, so the settle time is 200 us.
    let (threads, wakers, settle) = (32, 4, 200);
    let r = run(
        WorkloadSpec::PerfWakeParallel(PerfWakeParallel {
            threads: Some(threads),
            wakers: Some(wakers),
            shared: false,
            settle_us: settle,
        }),
        rounds(3, settle),
    );
    // Per round, a blocked thread's wait and its sleep to the next round:
    // 2 ops; the main thread's sleep, then as the barrier's last arrival a
    // load, an add, the reset, the round's add and the wake of all: 6; a
    // waker's sleep until perf creates it, its barrier (a load, an add, the
    // wait and a load of the round), its wake, the timestamp after it and
    // its sleep to the next round: 8, and in the round the window ends in,
    // its sleep until created and the barrier's load and add before it
    // waits there.
    assert_eq!(
        (r.min_thread_ops, r.max_thread_ops),
        (6, 3 * 8 + 3),
        "{r:?}"
    );
    assert_eq!(metric(&r, "waker calls"), f64::from(3 * wakers));
    assert_eq!(metric(&r, "woken per waker"), f64::from(threads / wakers));
    assert_eq!(r.asleep_at_end, u64::from(threads + wakers));
    assert!(metric(&r, "per-waker latency") > 0.0);
    // The 32 blocked threads, going to sleep at once, wait for each other.
    assert!(r.locks.contended > 0, "{:?}", r.locks);
}

#[test]
fn wake_parallel_wakers_leave_the_barrier_one_ipi_apart_and_queue_where_idle_cpus_poll() {
    // perf's wakers pass a pthread barrier whose last arrival wakes them one
    // try_to_wake_up after another. Where each of those sends an IPI (idle
    // CPUs that do not poll, 700 ns a send: the SG2042's SBI call), each
    // waker meets the bucket lock nearly alone, so a waker's latency hardly
    // grows with the number of wakers. Where idle CPUs poll (icx-2s's mwait
    // idle), the wake-ups go out a few hundred ns apart, less than a
    // waker's hold of the bucket lock, and the wakers queue on it.
    let latency = |threads, polls: bool| {
        let mut spec = machine("icx-2s").unwrap();
        spec.scheduler.idle_polls = polls;
        spec.scheduler.ipi_send = 700.0;
        let r = run_on(
            spec,
            WorkloadSpec::PerfWakeParallel(PerfWakeParallel {
                threads: Some(threads),
                wakers: None,
                shared: false,
                settle_us: 200,
            }),
            rounds(2, 200),
        );
        assert_eq!(metric(&r, "woken per waker"), 1.0);
        metric(&r, "per-waker latency")
    };
    let (two, many) = (latency(2, false), latency(32, false));
    assert!(many < 1.5 * two, "2 wakers {two} ms, 32 wakers {many} ms");
    let (two_polling, many_polling) = (latency(2, true), latency(32, true));
    // Each wake-up onto a polling CPU also takes set_nr_if_polling's
    // cmpxchg and the wake list's llist_add on the target's lines, so the
    // wakers leave further apart than a bare send would put them: fewer
    // queue than once did (1.85x from 2 to 32 wakers, where a wake-up
    // without those atomics gave over 3x), but the queue is still what
    // separates the two idle states.
    assert!(
        many_polling > 1.5 * two_polling && many_polling / two_polling > 1.5 * (many / two),
        "polling: 2 wakers {two_polling} ms, 32 wakers {many_polling} ms; \
         halting: 2 wakers {two} ms, 32 wakers {many} ms"
    );
}

#[test]
fn wake_parallel_refuses_an_uneven_share_like_perf() {
    let s = Scenario {
        machine: machine("icx-2s").unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: WorkloadSpec::PerfWakeParallel(PerfWakeParallel {
            threads: Some(10),
            wakers: Some(4),
            ..Default::default()
        }),
        window: rounds(1, 10),
        seed: 1,
    };
    let err = s.simulate().unwrap_err();
    assert!(
        matches!(err, RunError::Scenario(ScenarioError::Workload(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("perfectly divisible"), "{err}");
}

#[test]
fn wake_one_at_a_time_takes_longer_with_more_threads() {
    let wake = |threads, nwakes| {
        let r = run(
            WorkloadSpec::PerfWake(PerfWake {
                threads: Some(threads),
                nwakes,
                shared: false,
                settle_us: 200,
            }),
            rounds(2, 200),
        );
        assert_eq!(metric(&r, "rounds"), 2.0);
        assert_eq!(metric(&r, "woken per round"), f64::from(threads));
        metric(&r, "wake time")
    };
    let (few, many) = (wake(8, 1), wake(32, 1));
    assert!(many > 3.0 * few, "8 threads {few} ms, 32 threads {many} ms");
    // Waking all 32 in one call saves 31 syscalls; the walk and the
    // futex_q lines it pulls over remain.
    let at_once = wake(32, 32);
    assert!(at_once < many, "one call {at_once} ms, 32 calls {many} ms");
}

#[test]
fn requeue_moves_waiters_without_waking_them() {
    let requeue = |all, nrequeue| {
        run(
            WorkloadSpec::PerfRequeue(PerfRequeue {
                threads: Some(24),
                nrequeue,
                all,
                shared: false,
                settle_us: 40,
            }),
            rounds(2, 40),
        )
    };
    for r in [requeue(true, 1), requeue(false, 1), requeue(false, 5)] {
        assert_eq!(metric(&r, "rounds"), 2.0);
        assert_eq!(metric(&r, "requeued per round"), 24.0);
        // Had a requeue woken anyone, the wake on futex2 would find fewer.
        assert_eq!(
            metric(&r, "woken on futex2 per round"),
            24.0,
            "{}",
            r.workload
        );
        assert_eq!(r.asleep_at_end, 24);
    }
    let all = metric(&requeue(true, 1), "requeue time");
    let one_by_one = metric(&requeue(false, 1), "requeue time");
    // One call per thread costs a syscall, two keys and two locks each.
    assert!(one_by_one > 1.3 * all, "-B {all} ms, -q 1 {one_by_one} ms");
}

fn lock_pi(threads: u32, multi: bool) -> RunRecord {
    run(
        WorkloadSpec::PerfLockPi(PerfLockPi {
            threads: Some(threads),
            multi,
            shared: false,
            hold_ns: 2_000,
        }),
        RunWindow {
            warmup: 100 * US,
            duration: 2_000 * US,
            stop: None,
        },
    )
}

#[test]
fn lock_pi_holders_exclude_each_other_and_hand_over_in_turn() {
    let r = lock_pi(8, false);
    let per_thread = metric(&r, "averaged lock/unlock pairs per thread");
    let total = per_thread * 8.0 * 0.002;
    // One 2 us hold at a time: at most 1000 pairs in 2 ms, and the hand-over
    // keeps the lock busy for a good part of it.
    assert!(total <= 1000.0 + 8.0, "{total} pairs");
    assert!(total > 300.0, "{total} pairs");
    // FIFO hand-over: every thread gets its turn.
    assert!(
        metric(&r, "slowest thread") > 0.8 * per_thread,
        "{:?}",
        r.extra
    );
    let multi = lock_pi(8, true);
    let multi_per_thread = metric(&multi, "averaged lock/unlock pairs per thread");
    assert!(
        multi_per_thread > 5.0 * per_thread,
        "{multi_per_thread} vs {per_thread}"
    );
}

#[test]
fn shared_futexes_skip_the_private_hash() {
    use futexsim::workload::perf_hash::PerfHash;
    let hash = |shared| {
        Scenario {
            machine: machine("icx-2s").unwrap(),
            design: table("private-6.17").unwrap(),
            workload: WorkloadSpec::PerfHash(PerfHash {
                threads: Some(8),
                futexes: 256,
                shared,
                ..PerfHash::default()
            }),
            window: RunWindow {
                warmup: 20 * US,
                duration: 200 * US,
                stop: None,
            },
            seed: 3,
        }
        .simulate()
        .unwrap()
        .0
    };
    let in_private_hash = |r: &RunRecord| {
        r.top_lines
            .iter()
            .any(|l| l.region.contains("private hash"))
    };
    // 8 x 256 private futexes crowd a 32-slot private hash; with -S the keys
    // are shared, which only the global table holds.
    let private = hash(false);
    assert!(in_private_hash(&private), "{:?}", private.top_lines.first());
    let shared = hash(true);
    assert!(!in_private_hash(&shared), "{:?}", shared.top_lines.first());
}
