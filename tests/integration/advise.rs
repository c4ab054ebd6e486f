//! `futexsim advise`: the search on made-up figures whose answer is known,
//! its determinism, and the command end to end on a small question.

use crate::common::{futexsim, perf_hash_sweep, run_sweep, Scratch};
use futexsim::advise::search::{
    search, Budget, Evaluator, Measured, Memory, Order, Outcome, Standing, Target,
};
use futexsim::report::interval::{SeedInterval, CONFIDENCE};
use std::convert::Infallible;

/// A figure per candidate, measured with a made-up seed noise: seed s of
/// candidate c is `ratio(c)` plus `noise(c)` times a fixed pattern in
/// [-1, 1]. Every ask is logged.
struct MadeUp {
    ratio: fn(usize) -> f64,
    noise: fn(usize) -> f64,
    memory: fn(usize) -> u64,
    asks: Vec<(usize, u32)>,
}

impl MadeUp {
    fn new(ratio: fn(usize) -> f64, noise: fn(usize) -> f64, memory: fn(usize) -> u64) -> MadeUp {
        MadeUp {
            ratio,
            noise,
            memory,
            asks: Vec::new(),
        }
    }
}

impl Evaluator for MadeUp {
    type Error = Infallible;

    fn measure(&mut self, asks: &[(usize, u32)]) -> Result<Vec<Measured>, Infallible> {
        self.asks.extend_from_slice(asks);
        Ok(asks
            .iter()
            .map(|&(c, repetitions)| {
                let seeds: Vec<f64> = (0..repetitions)
                    .map(|s| {
                        let pattern = ((s * 7 + 3) % 5) as f64 / 2.0 - 1.0;
                        (self.ratio)(c) + (self.noise)(c) * pattern
                    })
                    .collect();
                let bytes = (self.memory)(c);
                Measured {
                    ratio: SeedInterval::of(&seeds, CONFIDENCE).unwrap(),
                    memory: Memory {
                        global_bytes: 0,
                        private_bytes_per_process: bytes,
                        total_bytes: bytes,
                    },
                }
            })
            .collect())
    }
}

const BUDGET: Budget = Budget { first: 3, most: 12 };

/// Rises by 0.06 a candidate from 0.5 and flattens at 1.0 (candidate 9 on).
fn rising(c: usize) -> f64 {
    (0.5 + 0.06 * c as f64).min(1.0)
}

fn small_noise(_: usize) -> f64 {
    0.002
}

fn growing_memory(c: usize) -> u64 {
    1024 << c
}

fn within_best(share: f64) -> Target {
    Target {
        within_best: Some(share),
        ..Target::default()
    }
}

fn monotone_search(target: &Target) -> (Outcome, Vec<(usize, u32)>) {
    let mut figure = MadeUp::new(rising, small_noise, growing_memory);
    let outcome = search(&mut figure, 16, Order::Monotone, target, BUDGET).unwrap();
    (outcome, figure.asks)
}

#[test]
fn bisection_finds_the_first_candidate_of_a_monotone_figure_within_5_percent_of_the_best() {
    // The best is 1.0, so the threshold is 0.95: candidate 8 (0.98) is the
    // first above it, candidate 7 (0.92) the last below.
    let (outcome, asks) = monotone_search(&within_best(0.05));
    assert_eq!(outcome.chosen, Some(8), "{outcome:?}");
    assert!(
        (outcome.threshold - 0.95).abs() < 0.01,
        "{}",
        outcome.threshold
    );
    assert!(outcome.cannot_tell.is_empty());
    assert!(outcome.against_order.is_empty());
    // A search, not a grid: the two ends and about log2(16) midpoints.
    assert!(
        outcome.measured.len() <= 2 + 4,
        "measured {} of 16",
        outcome.measured.len()
    );
    assert!(asks.iter().all(|&(_, r)| r == BUDGET.first), "{asks:?}");
}

#[test]
fn bisection_meets_a_bound_on_the_baseline_and_says_when_nothing_meets_it() {
    let slower = Target {
        slower_than_baseline: Some(0.10),
        ..Target::default()
    };
    // 0.9 or more: candidate 7 (0.92) is the first.
    assert_eq!(monotone_search(&slower).0.chosen, Some(7));
    // Every candidate's private hash is over 1 KiB from candidate 1 on, and
    // candidate 0 is far too slow: nothing meets both.
    let bounded = Target {
        max_bytes_per_process: Some(1024),
        ..slower
    };
    let (outcome, _) = monotone_search(&bounded);
    assert_eq!(outcome.chosen, None);
    assert_eq!(outcome.standing(0, &bounded), Some(Standing::Fails));
}

/// Candidate 5 sits near the threshold with a wide noise: only it needs
/// more seeds.
fn noisy_at_5(c: usize) -> f64 {
    if c == 5 {
        0.05
    } else {
        0.002
    }
}

fn flat(c: usize) -> f64 {
    if c == 5 {
        0.96
    } else {
        [0.6, 0.7, 0.8, 0.9, 0.93, 0.0, 0.97, 0.98, 0.99, 1.0][c]
    }
}

#[test]
fn more_repetitions_go_only_to_a_candidate_whose_interval_spans_the_threshold() {
    let mut figure = MadeUp::new(flat, noisy_at_5, growing_memory);
    let target = Target {
        slower_than_baseline: Some(0.05),
        ..Target::default()
    };
    let outcome = search(&mut figure, 10, Order::Monotone, &target, BUDGET).unwrap();
    let repetitions = |c: usize| outcome.measured[&c].ratio.repetitions;
    assert_eq!(repetitions(5), BUDGET.most as usize, "{outcome:?}");
    for (&c, m) in &outcome.measured {
        if c != 5 {
            assert_eq!(m.ratio.repetitions, BUDGET.first as usize, "candidate {c}");
        }
    }
    // Still spanning 0.95 at the most seeds: the model cannot tell there,
    // and the answer is the next one that is shown to meet it.
    assert_eq!(outcome.cannot_tell, vec![5]);
    assert_eq!(outcome.chosen, Some(6));
}

/// Unordered candidates: their memory in no order, their figure neither.
fn scattered(c: usize) -> f64 {
    [0.7, 1.0, 0.99, 0.5, 0.985, 0.9][c]
}

fn scattered_memory(c: usize) -> u64 {
    [100, 900, 600, 10, 300, 50][c]
}

#[test]
fn rounds_over_unordered_candidates_find_the_least_memory_within_2_percent_of_the_best() {
    let mut figure = MadeUp::new(scattered, small_noise, scattered_memory);
    let outcome = search(&mut figure, 6, Order::Unordered, &within_best(0.02), BUDGET).unwrap();
    // Threshold 0.98: candidates 1, 2 and 4 meet it; 4 takes the least memory.
    assert_eq!(outcome.chosen, Some(4), "{outcome:?}");
    assert_eq!(outcome.best, 1);
}

#[test]
fn bisection_and_the_rounds_ask_for_the_same_runs_and_answer_the_same_every_time() {
    let run = |order: Order, count: usize| {
        let mut figure = match order {
            Order::Monotone => MadeUp::new(rising, noisy_at_5, growing_memory),
            Order::Unordered => MadeUp::new(scattered, noisy_at_5, scattered_memory),
        };
        let outcome = search(&mut figure, count, order, &within_best(0.05), BUDGET).unwrap();
        (outcome, figure.asks)
    };
    assert_eq!(run(Order::Monotone, 16), run(Order::Monotone, 16));
    assert_eq!(run(Order::Unordered, 6), run(Order::Unordered, 6));
}

/// A question small enough to simulate in a test: 4 CPUs, a short window,
/// three sizes of the private hash.
fn small_question(points: &str) -> String {
    format!(
        r#"
question = "Is K = 4 enough on a small machine?"
machines = ["icx-2s"]

[run]
duration_us = 20
warmup_us = 5

[[workload]]
name = "perf-hash"
futexes = 16
{points}
[baseline]
preset = "private-6.17"
name = "today"

[family]
base = {{ preset = "private-6.17" }}
parameter = "private.slots"
order = "monotone"
values = [
  {{ label = "K=1", value = "clamp(roundup_pow_of_two(1 * min(threads, cpus)), 16, node_slots)" }},
  {{ label = "K=4", value = "clamp(roundup_pow_of_two(4 * min(threads, cpus)), 16, node_slots)" }},
  {{ label = "K=16", value = "clamp(roundup_pow_of_two(16 * min(threads, cpus)), 16, node_slots)" }},
]

[target]
within_best_pct = 5
"#
    )
}

const ONE_POINT: &str = "\n[[point]]\ncpus = 4\nthreads = 4\n";
const TWO_POINTS: &str = "\n[[point]]\ncpus = 4\nthreads = 4\n\n[[point]]\ncpus = 8\nthreads = 8\n";

fn advise_json(question: &std::path::Path, store: &std::path::Path) -> serde_json::Value {
    let out = futexsim(&[
        "advise",
        question.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A question whose workload is a mix: judged on one group's own figure,
/// the mean rate of the database's threads beside many single-futex
/// processes, which each of the family's sizes of the private hash gives.
#[test]
fn a_question_over_a_mix_answers_on_its_named_group_s_figure() {
    let s = Scratch::new("advise-mix");
    let question = s.0.join("mix.toml");
    let text = small_question(ONE_POINT)
        .replace(
            "[[workload]]\nname = \"perf-hash\"\nfutexes = 16\n",
            "[[workload]]\nname = \"mix\"\n\
             [[workload.group]]\nlabel = \"db\"\nname = \"perf-hash\"\nthreads = 4\nfutexes = 16\n\
             [[workload.group]]\nlabel = \"small\"\nname = \"will-it-scale\"\ntest = 4\n\
             mode = \"process\"\ntasks = 4\n",
        )
        .replace("cpus = 4\nthreads = 4\n", "cpus = 8\n")
        .replace(
            "machines = [\"icx-2s\"]",
            "machines = [\"icx-2s\"]\nfigure = \"db ops/s/thread\"",
        );
    assert!(text.contains("label = \"small\""), "{text}");
    std::fs::write(&question, &text).unwrap();
    let json = advise_json(&question, &s.0.join("store"));
    let point = &json["points"][0];
    assert_eq!(point["point"], "icx-2s, mix, cpus=8");
    let recommended = point["recommended"].as_str().unwrap();
    assert!(["K=1", "K=4", "K=16"].contains(&recommended), "{point}");
    let gain = &point["gain"];
    assert!(gain["mean"].as_f64().unwrap().is_finite(), "{gain}");
}

#[test]
fn a_small_question_answers_with_the_promised_fields_in_its_json() {
    let s = Scratch::new("advise-small");
    let question = s.0.join("small.toml");
    std::fs::write(&question, small_question(ONE_POINT)).unwrap();
    let json = advise_json(&question, &s.0.join("store"));
    let point = &json["points"][0];
    assert_eq!(point["point"], "icx-2s, perf-hash, cpus=4, threads=4");
    let recommended = point["recommended"].as_str().unwrap();
    assert!(["K=1", "K=4", "K=16"].contains(&recommended), "{point}");
    assert_eq!(point["target_met"], true);
    assert!(
        point["memory"]["private_bytes_per_process"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        point["memory"]["global_bytes"].as_u64().unwrap()
            < point["memory"]["total_bytes"].as_u64().unwrap()
    );
    let gain = &point["gain"];
    let (low, mean, high) = (
        gain["low"].as_f64().unwrap(),
        gain["mean"].as_f64().unwrap(),
        gain["high"].as_f64().unwrap(),
    );
    assert!(low <= mean && mean <= high, "{gain}");
    assert!(json["runs_used"].as_u64().unwrap() <= json["grid_runs"].as_u64().unwrap());

    // The same question as Markdown into --out: advice.md, with the
    // paragraph for a commit message.
    let out = futexsim(&[
        "advise",
        question.to_str().unwrap(),
        "--store",
        s.0.join("store").to_str().unwrap(),
        "--out",
        s.0.join("answer").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let md = std::fs::read_to_string(s.0.join("answer/advice.md")).unwrap();
    assert!(
        md.contains(&format!("**Recommended: {recommended}**")),
        "{md}"
    );
    assert!(md.contains("## For the commit message"));
}

#[test]
fn asking_again_reuses_every_finished_run_and_an_extended_question_runs_only_what_is_new() {
    let s = Scratch::new("advise-again");
    let question = s.0.join("again.toml");
    let store = s.0.join("store");
    std::fs::write(&question, small_question(ONE_POINT)).unwrap();
    let first = advise_json(&question, &store);
    assert!(first["runs_simulated"].as_u64().unwrap() > 0);
    let again = advise_json(&question, &store);
    assert_eq!(again["runs_simulated"], 0);
    assert_eq!(again["runs_used"], first["runs_used"]);
    assert_eq!(again["points"], first["points"]);

    std::fs::write(&question, small_question(TWO_POINTS)).unwrap();
    let extended = advise_json(&question, &store);
    assert_eq!(extended["points"][0], first["points"][0]);
    let used = extended["runs_used"].as_u64().unwrap();
    let simulated = extended["runs_simulated"].as_u64().unwrap();
    assert_eq!(
        used - simulated,
        first["runs_used"].as_u64().unwrap(),
        "{extended}"
    );
}

#[test]
fn a_question_with_a_mistake_is_refused_at_its_line_and_column_with_exit_2() {
    let s = Scratch::new("advise-bad");
    let cases = [
        // A machine that does not exist: the machines entry, line 3.
        (
            small_question(ONE_POINT).replace("[\"icx-2s\"]", "[\"icx-2z\"]"),
            "bad.toml:3:",
            "unknown machine preset 'icx-2z'",
        ),
        // A target without a share: the [target] header.
        (
            small_question(ONE_POINT).replace("within_best_pct = 5", "within_best_pct = 150"),
            "bad.toml:32:",
            "a percentage from 0",
        ),
        // A run's stopping rule beside a figure that is not the ops'
        // throughput it watches: the [run] key.
        (
            small_question(ONE_POINT)
                .replace("warmup_us = 5", "warmup_us = 5\nhalf_width_pct = 2\n")
                .replace("machines = ", "figure = \"requests/s\"\nmachines = "),
            "bad.toml:9:",
            "not the figure",
        ),
        // A candidate whose rule is no power of two: its entry in values.
        (
            small_question(ONE_POINT).replace(
                "16 * min(threads, cpus)), 16",
                "3 * min(threads, cpus)) + 1, 16",
            ),
            "bad.toml:28:",
            "power of two",
        ),
    ];
    for (text, at, what) in cases {
        let question = s.0.join("bad.toml");
        std::fs::write(&question, &text).unwrap();
        let out = futexsim(&[
            "advise",
            question.to_str().unwrap(),
            "--store",
            s.0.join("store").to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(at), "expected {at}: {stderr}");
        assert!(stderr.contains(what), "expected {what}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// The flags of a small question, each a question file's key.
const QUICK_FLAGS: [&str; 20] = [
    "advise",
    "--machine",
    "icx-2s",
    "--workload",
    "perf-hash,futexes=16",
    "--at",
    "cpus=4,threads=4",
    "--baseline",
    "private-6.17",
    "--vary",
    "private.slots",
    "--value",
    "16",
    "--value",
    "K=4:clamp(roundup_pow_of_two(4 * min(threads, cpus)), 16, node_slots)",
    "--within-best",
    "5",
    "--duration-us",
    "20",
    "--warmup-us",
];

#[test]
fn a_question_asked_with_flags_answers_as_the_question_file_it_prints() {
    let s = Scratch::new("advise-flags");
    let flags: Vec<&str> = QUICK_FLAGS.iter().copied().chain(["5"]).collect();
    let printed = futexsim(&[flags.as_slice(), &["--print-question"]].concat());
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let question = s.0.join("printed.toml");
    std::fs::write(&question, &printed.stdout).unwrap();
    let from_file = advise_json(&question, &s.0.join("file-store"));
    let store = s.0.join("flags-store");
    let asked = futexsim(
        &[
            flags.as_slice(),
            &["--store", store.to_str().unwrap(), "--json"],
        ]
        .concat(),
    );
    assert!(
        asked.status.success(),
        "{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    let from_flags: serde_json::Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(from_flags["points"], from_file["points"]);
    assert_eq!(
        from_flags["points"][0]["point"],
        "icx-2s, perf-hash, cpus=4, threads=4"
    );
    let recommended = from_flags["points"][0]["recommended"].as_str().unwrap();
    assert!(["slots=16", "K=4"].contains(&recommended), "{from_flags}");
}

/// `--half-width-pct` stands for `[run] half_width_pct` in the question
/// the flags make, and is read back from it.
#[test]
fn the_half_width_flag_is_the_question_file_s_run_length_target() {
    let flags: Vec<&str> = QUICK_FLAGS
        .iter()
        .copied()
        .chain(["5", "--half-width-pct", "4", "--print-question"])
        .collect();
    let printed = futexsim(&flags);
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let text = String::from_utf8_lossy(&printed.stdout);
    let question: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        question["run"]["half_width_pct"].as_float(),
        Some(4.0),
        "{text}"
    );
    let help = futexsim(&["advise", "--help"]);
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("--half-width-pct"),
        "the flag is in advise's help"
    );
}

#[test]
fn a_mistake_in_the_flags_is_located_in_the_question_they_make_with_exit_2() {
    let flags: Vec<&str> = QUICK_FLAGS
        .iter()
        .copied()
        .chain(["5"])
        .map(|f| if f == "icx-2s" { "no-such-machine" } else { f })
        .collect();
    let out = futexsim(&flags);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // The question is shown numbered, and the error names a line of it.
    assert!(
        err.contains("   2 | machines = [\"no-such-machine\"]"),
        "{err}"
    );
    assert!(err.contains("(the question the flags ask):2:"), "{err}");
    let with_file = futexsim(&[
        "advise",
        "configs/advise/private-slots-k.toml",
        "--machine",
        "icx-2s",
    ]);
    assert_eq!(with_file.status.code(), Some(2));
}

/// The simulated nanoseconds each run of `futexsim run` counted for a
/// 40 us window whose runs stop at `half_width_pct`.
fn run_lengths(half_width_pct: &str) -> Vec<u64> {
    let run = format!(
        "duration_us = 40\nwarmup_us = 5\nrepetitions = 2\nhalf_width_pct = {half_width_pct}"
    );
    let (s, config) = Scratch::holding(
        &format!("advise-run-length-{}", half_width_pct.replace('.', "_")),
        "stop.toml",
        &perf_hash_sweep(&run, &["private-6.17"], "[4]"),
    );
    let out = run_sweep(&config, &s.0.join("out"), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.0.join("out/results.json")).unwrap()).unwrap();
    results["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["record"]["sim_ns"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_run_stops_at_its_first_check_when_the_rule_is_loose_and_never_runs_past_its_duration() {
    // A rule any throughput meets: every run ends at the first check, an
    // eighth of the 40 us window.
    assert!(run_lengths("90").iter().all(|&ns| ns == 5_000));
    // A rule no run meets: every run takes the whole window and no more.
    assert!(run_lengths("0.0001").iter().all(|&ns| ns == 40_000));
}

#[test]
fn an_answer_is_the_same_byte_for_byte_at_any_number_of_jobs() {
    let s = Scratch::new("advise-jobs");
    let question = s.0.join("jobs.toml");
    std::fs::write(&question, small_question(ONE_POINT)).unwrap();
    let answer = |jobs: &str| {
        let out = futexsim(&[
            "advise",
            question.to_str().unwrap(),
            "--store",
            s.0.join(format!("store-{jobs}")).to_str().unwrap(),
            "--jobs",
            jobs,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let one = answer("1");
    assert_eq!(one, answer("2"));
    // Each candidate measured says how long its runs took, within the window.
    let json: serde_json::Value = serde_json::from_slice(&one).unwrap();
    for candidate in json["points"][0]["measured"].as_array().unwrap() {
        let run_us = candidate["run_us"].as_f64().unwrap();
        assert!(run_us > 0.0 && run_us <= 20.0, "{candidate}");
    }
}

/// An answer as JSON without the one field that depends on what the store
/// held before: the runs this command simulated.
fn answer_without_runs_simulated(stdout: &[u8]) -> serde_json::Value {
    let mut json: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    json.as_object_mut().unwrap().remove("runs_simulated");
    json
}

#[test]
fn shards_in_one_store_one_after_the_other_or_at_once_answer_as_the_unsharded_search() {
    let s = Scratch::new("advise-shards");
    let question = s.0.join("shards.toml");
    std::fs::write(&question, small_question(ONE_POINT)).unwrap();
    let whole = futexsim(&[
        "advise",
        question.to_str().unwrap(),
        "--store",
        s.0.join("whole").to_str().unwrap(),
        "--json",
    ]);
    assert!(whole.status.success());
    let whole = answer_without_runs_simulated(&whole.stdout);
    let shard_args = |store: &str, shard: &str| -> Vec<String> {
        [
            "advise",
            question.to_str().unwrap(),
            "--store",
            s.0.join(store).to_str().unwrap(),
            "--shard",
            shard,
            "--json",
        ]
        .map(String::from)
        .to_vec()
    };

    // One after the other, measurement after measurement, until the shards
    // themselves find every run the answer needs.
    let mut answers = Vec::new();
    for _ in 0..30 {
        let outs: Vec<_> = ["1/2", "2/2"]
            .iter()
            .map(|shard| {
                let args = shard_args("after", shard);
                futexsim(&args.iter().map(String::as_str).collect::<Vec<_>>())
            })
            .collect();
        for out in &outs {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        if outs.iter().all(|o| o.stdout.starts_with(b"{")) {
            answers = outs;
            break;
        }
        assert!(
            outs.iter()
                .any(|o| String::from_utf8_lossy(&o.stdout).contains("simulated its")),
            "a shard that gives no answer says what it ran"
        );
    }
    assert_eq!(answers.len(), 2, "the shards reached the answer");
    for answer in &answers {
        assert_eq!(answer_without_runs_simulated(&answer.stdout), whole);
    }

    // At once, into another store, then the question without --shard goes on.
    let spawned: Vec<_> = ["1/2", "2/2"]
        .iter()
        .map(|shard| {
            std::process::Command::new(env!("CARGO_BIN_EXE_futexsim"))
                .args(shard_args("together", shard))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in spawned {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let after = futexsim(&[
        "advise",
        question.to_str().unwrap(),
        "--store",
        s.0.join("together").to_str().unwrap(),
        "--json",
    ]);
    assert!(after.status.success());
    let simulated: serde_json::Value = serde_json::from_slice(&after.stdout).unwrap();
    let used = simulated["runs_used"].as_u64().unwrap();
    assert!(
        simulated["runs_simulated"].as_u64().unwrap() < used,
        "{simulated}"
    );
    assert_eq!(answer_without_runs_simulated(&after.stdout), whole);
}
