//! What the property tests that may run for long share: their budget, from
//! FUTEXSIM_FUZZ_CASES and FUTEXSIM_FUZZ_SECONDS, and their batches of
//! cases, so every such test reads the two variables the same way.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config as Runner, TestCaseError, TestRunner};
use std::fmt::Debug;
use std::time::{Duration, Instant};

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|n| n.parse().ok())
}

/// Runs `test` on cases drawn from `strategy`, in batches of
/// FUTEXSIM_FUZZ_CASES cases (`default_cases` without it), each batch with
/// its own random seed, repeated for FUTEXSIM_FUZZ_SECONDS (one batch
/// without it); a failing case fails the test.
pub fn in_batches<S>(
    default_cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: Debug,
{
    let cases = env("FUTEXSIM_FUZZ_CASES").map_or(default_cases, |n| n as u32);
    let duration = Duration::from_secs(env("FUTEXSIM_FUZZ_SECONDS").unwrap_or(0));
    let started = Instant::now();
    let mut total = 0;
    loop {
        let mut runner = TestRunner::new(Runner {
            cases,
            failure_persistence: None,
            ..Runner::default()
        });
        runner.run(strategy, &test).unwrap();
        total += cases;
        if started.elapsed() >= duration {
            break;
        }
    }
    eprintln!("{total} cases in {:.1?}", started.elapsed());
}
