//! Property test over the config parser: configs/default.toml mangled line
//! by line (lines deleted, duplicated, garbled, inserted, values replaced)
//! is either a config that resolves to itself or one error on one line,
//! never a panic. FUTEXSIM_FUZZ_CASES raises the case count, and FUTEXSIM_FUZZ_SECONDS
//! repeats batches of cases for that long, for long runs:
//! `FUTEXSIM_FUZZ_CASES=500 FUTEXSIM_FUZZ_SECONDS=600 cargo test --release --test integration fuzz_config:: -- --nocapture`.

use futexsim::config::{Config, DEFAULT_TOML};
use proptest::prelude::*;

use crate::fuzzing;

/// Values a user might write, right and wrong.
const VALUES: [&str; 36] = [
    "0",
    "1",
    "-1",
    "3",
    "64",
    "96",
    "100000",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1.5",
    "nan",
    "-inf",
    "true",
    "\"\"",
    "\"x\"",
    "\"uv-512\"",
    "\"icx-2s\"",
    "\"arm64-8\"",
    "\"fixed-256\"",
    "\"numa-6.16\"",
    "\"perf-hash\"",
    "\"fea-solver\"",
    "\"roundup_pow_of_two(cpus)\"",
    "\"cpus - cpus\"",
    "\"2 *\"",
    "\"1 << 40\"",
    "[]",
    "[0]",
    "[1, 2]",
    "[\"a\"]",
    "[[1]]",
    "{}",
    "{ a = 1 }",
    "1979-05-27",
    "'''x'''",
];

/// Keys and headers to insert: real ones in the wrong place, and near-misses.
const LINES: [&str; 24] = [
    "[sweep]",
    "[[table]]",
    "[machine.topology]",
    "[machine.coherence]",
    "[workload]",
    "[run]",
    "[bogus]",
    "nr_cpus = ",
    "line = ",
    "slots = ",
    "threads = ",
    "futexes = ",
    "baseline = ",
    "preset = ",
    "name = ",
    "max_points = ",
    "repetitions = ",
    "duration_us = ",
    "\"machine.coherence.line\" = ",
    "\"table.*.slots\" = ",
    "\"table.fixed-256.align\" = ",
    "topology.numa_fake = ",
    "numa_fake = ",
    "cpus = ",
];

const GARBLE: [char; 16] = [
    '[', ']', '=', '"', '\'', '#', '.', ',', '{', '}', '0', 'a', '\n', '\\', ' ', 'é',
];

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    /// Replaces the character at a position (modulo the line's length).
    Garble(usize, usize, char),
    Truncate(usize, usize),
    /// Replaces what follows the line's `=`.
    Value(usize, &'static str),
    Insert(usize, &'static str, &'static str),
}

fn edit() -> impl Strategy<Value = Edit> {
    let line = 0..64usize;
    prop_oneof![
        line.clone().prop_map(Edit::Delete),
        line.clone().prop_map(Edit::Duplicate),
        (
            line.clone(),
            0..80usize,
            prop::sample::select(GARBLE.to_vec())
        )
            .prop_map(|(l, at, c)| Edit::Garble(l, at, c)),
        (line.clone(), 0..80usize).prop_map(|(l, at)| Edit::Truncate(l, at)),
        (line.clone(), prop::sample::select(VALUES.to_vec())).prop_map(|(l, v)| Edit::Value(l, v)),
        (
            line,
            prop::sample::select(LINES.to_vec()),
            prop::sample::select(VALUES.to_vec())
        )
            .prop_map(|(l, k, v)| Edit::Insert(l, k, v)),
    ]
}

fn apply(edits: &[Edit]) -> String {
    let mut lines: Vec<String> = DEFAULT_TOML.lines().map(str::to_string).collect();
    for e in edits {
        let n = lines.len().max(1);
        match *e {
            Edit::Delete(l) if !lines.is_empty() => {
                lines.remove(l % n);
            }
            Edit::Duplicate(l) if !lines.is_empty() => {
                let copy = lines[l % n].clone();
                lines.insert(l % n, copy);
            }
            Edit::Garble(l, at, c) if !lines.is_empty() => {
                let line: Vec<char> = lines[l % n].chars().collect();
                if !line.is_empty() {
                    let at = at % line.len();
                    let mut new: String = line[..at].iter().collect();
                    new.push(c);
                    new.extend(&line[at + 1..]);
                    lines[l % n] = new;
                }
            }
            Edit::Truncate(l, at) if !lines.is_empty() => {
                let line = &lines[l % n];
                lines[l % n] = line.chars().take(at % (line.chars().count() + 1)).collect();
            }
            Edit::Value(l, value) if !lines.is_empty() => {
                if let Some((key, _)) = lines[l % n].split_once('=') {
                    lines[l % n] = format!("{key}= {value}");
                }
            }
            Edit::Insert(l, key, value) => {
                let text = if key.ends_with("= ") {
                    format!("{key}{value}")
                } else {
                    key.to_string()
                };
                lines.insert(l % (lines.len() + 1), text);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// Parses a mangled config: no panic, and either one located error or a
/// config whose resolved form resolves to itself.
fn check(text: &str) {
    let lines = text.lines().count();
    match Config::parse("fuzz.toml", "fuzz", text, &[]) {
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.contains('\n'), "{shown}");
            assert!(e.line <= lines + 1, "{shown} (the text has {lines} lines)");
            assert!(shown.starts_with("fuzz.toml:"), "{shown}");
        }
        Ok(config) => {
            assert!(!config.points.is_empty());
            let again = Config::parse("resolved", "fuzz", &config.resolved, &[])
                .unwrap_or_else(|e| panic!("the resolved config is refused: {e}"));
            assert_eq!(again.resolved, config.resolved);
        }
    }
}

#[test]
fn a_mangled_config_is_refused_in_one_line_or_resolves_to_itself() {
    fuzzing::in_batches(200, &prop::collection::vec(edit(), 1..5), |edits| {
        check(&apply(&edits));
        Ok(())
    });
}
