//! A private hash growing while threads are created in the run
//! (sim/kernel/resize.rs): the table a process ends with is the one the
//! kernel's rule gives once the old tables drained, a resize with queued
//! waiters moves each of them and takes longer for it, and ops in flight
//! keep a resize from publishing.

use futexsim::kernel::futex_hash::ResizesInRun;
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::WorkloadSpec;

const US: u64 = 1_000_000;

#[derive(Debug, serde::Deserialize)]
struct Config {
    workload: WorkloadSpec,
}

fn run(era: &str, workload: &str, duration_us: u64) -> RunRecord {
    let workload = toml::from_str::<Config>(workload).unwrap().workload;
    Scenario {
        machine: machine("icx-2s").unwrap(),
        design: table(era).unwrap(),
        workload,
        window: RunWindow {
            warmup: 0,
            duration: duration_us * US,
            stop: None,
        },
        seed: 3,
    }
    .simulate()
    .unwrap()
    .0
}

fn reached(r: &RunRecord) -> (u64, ResizesInRun) {
    let life = r.table.private_hashes[0];
    (life.slots, life.in_run.expect("threads created in the run"))
}

/// 32 threads, one every microsecond, each failing a wait on its own word
/// and then computing for 20 us: the table is mostly free of references.
const THINKING: &str = r#"
    [workload]
    name = "program"
    threads = 32
    create_every_ns = 1000
    steps = [
      { op = "futex-wait", addr = "64 * thread", val = 1 },
      { op = "compute", ns = 20000 },
    ]
"#;

/// 6.16-rc's rcuref is dead the moment no op holds it: each of the three
/// growths (16, 32, 64, 128 slots on 64 CPUs) is published, and the table
/// ends at the 128 slots futex_hash_allocate_default gives 32 threads.
#[test]
fn created_in_turn_the_table_ends_as_the_kernel_sizes_it() {
    let r = run("v6.16-rc1", THINKING, 2000);
    let (slots, resizes) = reached(&r);
    assert_eq!(slots, 128);
    assert_eq!((resizes.allocated, resizes.published), (3, 3));
    assert_eq!(r.table.private_hashes[0].resizes, 3);
    assert_eq!(resizes.moved, 0, "no thread sleeps");
}

/// 6.17 moves the count to the atomic only two RCU grace periods (ticks
/// of 4 ms at HZ=250) after the first table's publication: the growths of
/// the first 32 us wait, the last supersedes the others, and one resize
/// publishes 128 slots no sooner than 8 ms after its allocation began.
#[test]
fn per_cpu_references_publish_one_resize_after_two_grace_periods() {
    let r = run("v6.17", THINKING, 12_000);
    let (slots, resizes) = reached(&r);
    assert_eq!(slots, 128);
    assert_eq!((resizes.allocated, resizes.published), (3, 1));
    assert!(
        resizes.resize_ns >= 8_000_000 - 32_000,
        "{} ns",
        resizes.resize_ns
    );
    let early = run("v6.17", THINKING, 7_000);
    assert_eq!(reached(&early).0, 16, "before the second grace period ends");
}

/// Eight threads that sleep on their own words for good: the 5th creation
/// grows the table with four futex_qs queued, which futex_rehash_private
/// moves; the same resize with nobody queued is shorter.
#[test]
fn a_resize_moves_the_queued_waiters_and_takes_longer_for_them() {
    let sleepers = run(
        "v6.16-rc1",
        r#"
        [workload]
        name = "program"
        threads = 8
        create_every_ns = 2000
        steps = [{ op = "futex-wait", addr = "64 * thread", val = 0 }]
        "#,
        100,
    );
    let (slots, with) = reached(&sleepers);
    assert_eq!(slots, 32);
    assert_eq!((with.published, with.moved), (1, 4));
    assert_eq!(sleepers.asleep_at_end, 8);
    let computing = run(
        "v6.16-rc1",
        r#"
        [workload]
        name = "program"
        threads = 8
        create_every_ns = 2000
        steps = [{ op = "compute", ns = 1000 }]
        "#,
        100,
    );
    let (_, without) = reached(&computing);
    assert_eq!((without.published, without.moved), (1, 0));
    assert!(
        with.resize_ns > without.resize_ns,
        "{} ns with four waiters, {} ns without",
        with.resize_ns,
        without.resize_ns
    );
}

/// perf bench futex hash's loop: every thread is always in a futex op, so
/// some op holds the table in use at every moment once a few threads run,
/// and a later growth waits for a drain that never comes.
#[test]
fn ops_always_in_flight_keep_a_resize_waiting() {
    let r = run(
        "v6.16-rc1",
        r#"
        [workload]
        name = "perf-hash"
        threads = 32
        create_every_ns = 2000
        "#,
        200,
    );
    let (slots, resizes) = reached(&r);
    assert!(resizes.published < resizes.allocated, "{resizes:?}");
    assert!(slots < 128);
}
