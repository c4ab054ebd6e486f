//! Property test over `futexsim hash`'s arguments: any argument vector gets
//! an answer or a usage error (exit 0, 1 or 2), never a panic or a signal.
//! FUTEXSIM_FUZZ_CASES raises the case count, and FUTEXSIM_FUZZ_SECONDS
//! repeats batches of cases for that long, for long runs:
//! `FUTEXSIM_FUZZ_CASES=2000 FUTEXSIM_FUZZ_SECONDS=600 cargo test --release --test integration fuzz_hash_args:: -- --nocapture`.

use proptest::prelude::*;
use std::process::Command;

use crate::fuzzing;

/// Subcommands, flags and values of `futexsim hash`, with near-misses.
const TOKENS: [&str; 48] = [
    "jhash2",
    "jhash",
    "futex",
    "jhash3",
    "--form",
    "lookup2",
    "lookup3",
    "--initval",
    "--hex",
    "--text",
    "--table",
    "fixed-256",
    "private-6.17",
    "numa-6.16",
    "fixed-512",
    "--uaddr",
    "--private",
    "--shared-anon",
    "--shared-file",
    "--mm",
    "--inode-seq",
    "--pgoff",
    "--cpus",
    "--nodes",
    "--threads",
    "--bits",
    "32",
    "64",
    "--json",
    "--help",
    "0",
    "1",
    "3",
    "4096",
    "0x7f1234567abc",
    "0xffff888100abc000",
    "0xffffffff",
    "0x100000000",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "0x",
    "41424344",
    "414",
    "zz",
    "",
    "é",
    "1_000",
];

#[test]
fn any_hash_arguments_get_an_answer_or_a_usage_error() {
    // Half the cases start as a valid `futex` command, to get past clap.
    let valid = ["futex", "--table", "fixed-256", "--uaddr", "0x7f1234567abc"];
    let args = (
        any::<bool>(),
        prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..9),
    )
        .prop_map(move |(start_valid, rest)| {
            let start: &[&str] = if start_valid { &valid } else { &[] };
            start.iter().copied().chain(rest).collect::<Vec<_>>()
        });
    fuzzing::in_batches(100, &args, |args| {
        let out = Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .arg("hash")
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(
            matches!(out.status.code(), Some(0..=2)),
            "futexsim hash {args:?}: {:?}\n{stderr}",
            out.status
        );
        prop_assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        Ok(())
    });
}
