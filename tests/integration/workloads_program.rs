//! The TOML-written task program: it runs exactly as written, and its
//! errors name the step at fault.

use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::machine::Machine;
use futexsim::record::RunRecord;
use futexsim::scenario::{RunError, Scenario};
use futexsim::task::RunWindow;
use futexsim::workload::WorkloadSpec;

const MS: u64 = 1_000_000_000;

#[derive(Debug, serde::Deserialize)]
struct Config {
    workload: WorkloadSpec,
}

fn workload(toml_text: &str) -> WorkloadSpec {
    toml::from_str::<Config>(toml_text).unwrap().workload
}

fn run(w: WorkloadSpec) -> Result<RunRecord, RunError> {
    Scenario {
        machine: machine("icx-2s").unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: w,
        window: RunWindow {
            warmup: 0,
            duration: 10 * MS,
            stop: None,
        },
        seed: 1,
    }
    .simulate()
    .map(|(r, _)| r)
}

#[test]
fn a_two_step_program_runs_exactly_as_written() {
    let r = run(workload(
        r#"
        [workload]
        name = "program"
        threads = 1
        iterations = 5
        words = { counter = "64" }
        steps = [
          { op = "atomic", word = "counter", action = "add", value = 1 },
          { op = "compute", ns = 40 },
        ]
        "#,
    ))
    .unwrap();
    assert_eq!(r.ops, 5, "five passes, then the thread exits");
    // After the first pass the counter's line is in the thread's cache:
    // a pass is one cached atomic and the compute step, nothing else.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    // Below 64 ns the latency histogram is exact.
    let pass_ns = (40_000 + m.l1_ps + m.rmw_ps) / 1000;
    assert!(pass_ns < 64);
    assert_eq!(r.latency_ns.p50, pass_ns);
    assert!(
        r.latency_ns.max > pass_ns,
        "the first pass misses to memory"
    );
    assert_eq!(r.coherence.dram_lcl + r.coherence.dram_rmt, 1);
}

#[test]
fn a_bucket_lock_is_taken_as_written() {
    let r = run(workload(
        r#"
        [workload]
        name = "program"
        threads = 4
        iterations = 20
        tables = [{ name = "page-wait", slots = 256 }]
        steps = [
          { op = "lock", table = "page-wait", key = "0x7f0000000000" },
          { op = "compute", ns = 100 },
          { op = "unlock", table = "page-wait", key = "0x7f0000000000" },
        ]
        "#,
    ))
    .unwrap();
    // One key, one bucket: every pass of every thread took that bucket's lock.
    assert_eq!(r.workload_locks.len(), 1);
    assert_eq!(r.workload_locks[0].lock.acquisitions, 80);
    assert!(r.workload_locks[0].name.starts_with("page-wait bucket "));
    assert!(r.workload_locks[0].lock.contended > 0);
}

#[test]
fn errors_name_the_step() {
    let bad = |steps: &str| {
        run(workload(&format!(
            "[workload]\nname = \"program\"\nthreads = 2\nlocks = [\"a\"]\nsteps = {steps}\n"
        )))
        .unwrap_err()
        .to_string()
    };
    let e = bad(r#"[{ op = "compute", ns = 1 }, { op = "futex-wake", addr = "4 * thred" }]"#);
    assert!(
        e.contains("steps[1] (futex-wake)") && e.contains("thread"),
        "{e}"
    );
    let e = bad(r#"[{ op = "repeat", times = 2, steps = [{ op = "lock", lock = "b" }] }]"#);
    assert!(
        e.contains("steps[0].steps[0] (lock)") && e.contains("'b'"),
        "{e}"
    );
    let e = bad(r#"[{ op = "lock", table = "t" }]"#);
    assert!(e.contains("steps[0] (lock)") && e.contains("key"), "{e}");
    let unknown = toml::from_str::<Config>(
        "[workload]\nname = \"program\"\nthreads = 1\nsteps = [{ op = \"sleep\" }]\n",
    );
    assert!(unknown.unwrap_err().to_string().contains("sleep"));
}

/// An exponential compute step draws each pass's time: its mean is the
/// step's `ns`, its median ln 2 of that, and its tail past twice the mean,
/// where the fixed step's every pass takes the same time.
#[test]
fn an_exponential_compute_step_draws_its_time_around_its_mean() {
    let program = |dist: &str| {
        workload(&format!(
            r#"
            [workload]
            name = "program"
            threads = 2
            iterations = 4000
            steps = [{{ op = "compute", ns = 2000{dist} }}]
            "#
        ))
    };
    let fixed = run(program("")).unwrap();
    let f = &fixed.latency_ns;
    assert!((f.mean - 2000.0).abs() < 1.0 && f.p50 == f.p99, "{f:?}");
    let drawn = run(program(r#", dist = "exponential""#)).unwrap();
    let l = &drawn.latency_ns;
    assert!((l.mean - 2000.0).abs() < 100.0, "mean {}", l.mean);
    assert!((1250..1550).contains(&l.p50), "median {}", l.p50);
    assert!(l.p90 > 4000, "p90 {}", l.p90);
    assert_eq!(drawn, run(program(r#", dist = "exponential""#)).unwrap());
}
