//! The futexsim binary end to end: hash vectors from docs/kernel-facts.md §1.4 and
//! §1.5, error handling, and the layout command's JSON.

use std::process::{Command, Output};

fn futexsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = futexsim(args);
    assert!(
        out.status.success(),
        "futexsim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn json_of(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_of(args)).expect("valid JSON")
}

const EXAMPLE: [&str; 6] = [
    "hash",
    "futex",
    "--uaddr",
    "0x7f1234567abc",
    "--mm",
    "0xffff888100abc000",
];

/// (hash, bucket, used the private hash) of the §1.5 example key.
fn place_example(extra: &[&str]) -> (u64, u64, bool) {
    let args: Vec<&str> = EXAMPLE
        .iter()
        .chain(extra)
        .chain(&["--json"])
        .copied()
        .collect();
    let v = json_of(&args);
    (
        v["hash"].as_u64().unwrap(),
        v["bucket"].as_u64().unwrap(),
        v["private_hash"].as_bool().unwrap(),
    )
}

#[test]
fn derived_futex_vectors() {
    assert_eq!(
        place_example(&["--table", "fixed-256", "--private"]),
        (0x9683_6945, 69, false)
    );
    assert_eq!(
        place_example(&["--table", "numa-6.16", "--cpus", "32"]),
        (0x5e88_6637, 1591, false)
    );
    assert_eq!(
        place_example(&["--table", "private-6.17", "--cpus", "32", "--threads", "2"]),
        (0x5583_4d30, 0, true)
    );
    assert_eq!(
        place_example(&["--table", "private-6.17", "--cpus", "32", "--threads", "32"]),
        (0x5583_4d30, 48, true)
    );
}

#[test]
fn futex_json_names_the_words_and_the_fields() {
    let args: Vec<&str> = EXAMPLE
        .iter()
        .chain(&["--table", "fixed-256", "--json"])
        .copied()
        .collect();
    let v = json_of(&args);
    let words: Vec<u64> = v["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap())
        .collect();
    assert_eq!(words, [0x3456_7000, 0x7f12, 0x00ab_c000, 0xffff_8881]);
    assert_eq!(v["initval"], 0xabc);
    assert_eq!(
        (v["slots"].as_u64(), v["node"].as_u64()),
        (Some(256), Some(0))
    );
    // Bucket 69 of 40-byte buckets from a line boundary: bytes 2760-2799.
    let lock = &v["fields"][0];
    assert_eq!(
        (lock["name"].as_str(), lock["offset_in_line"].as_u64()),
        (Some("lock"), Some(8))
    );
}

#[test]
fn futex_text_report() {
    let args: Vec<&str> = EXAMPLE
        .iter()
        .chain(&["--table", "fixed-256"])
        .copied()
        .collect();
    let text = stdout_of(&args);
    for want in [
        "0x96836945",
        "bucket   69",
        "| lock | 4 |",
        "| chain | 32 |",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
}

#[test]
fn jhash_vectors() {
    let hash = |args: &[&str]| stdout_of(args).trim().to_string();
    assert_eq!(
        hash(&["hash", "jhash2", "0x65726f4c", "0x7069206d", "0x206d7573"]),
        "0x8e663aee"
    );
    assert_eq!(
        hash(&["hash", "jhash2", "--form", "lookup2", "0x44434241"]),
        "0x1c31fd95"
    );
    assert_eq!(
        hash(&[
            "hash",
            "jhash2",
            "--form",
            "lookup2",
            "1145258561",
            "0x48474645",
            "0x4c4b4a49"
        ]),
        "0xea9c4f7a"
    );
    assert_eq!(hash(&["hash", "jhash2", "--initval", "1"]), "0xdeadbef0");
    assert_eq!(hash(&["hash", "jhash", "--text", "foobar"]), "0xaeb72b0c");
    assert_eq!(
        hash(&[
            "hash",
            "jhash",
            "--text",
            "foobar",
            "--initval",
            "0x7da236b9"
        ]),
        "0x7306b2fc"
    );
    assert_eq!(
        hash(&[
            "hash",
            "jhash",
            "--form",
            "lookup2",
            "--hex",
            "0x666f6f626172"
        ]),
        "0x9d3ffa02"
    );
}

fn assert_input_error(args: &[&str], message: &str) {
    let out = futexsim(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_input_exits_2_with_a_message() {
    assert_input_error(&["hash", "jhash2", "0xzz"], "'0xzz' is not a 64-bit number");
    assert_input_error(
        &["hash", "jhash2", "0x100000000"],
        "does not fit in 32 bits",
    );
    assert_input_error(
        &["hash", "jhash", "--hex", "414"],
        "odd number of hex digits",
    );
    assert_input_error(
        &["hash", "futex", "--table", "fixed-256", "--uaddr", "0x1002"],
        "futexsim: error: futex address 0x1002 is not 4-byte aligned",
    );
    assert_input_error(
        &[
            "hash",
            "futex",
            "--table",
            "fixed-256",
            "--uaddr",
            "4",
            "--bits",
            "32",
        ],
        "futexsim: error: mm 0xffff888100abc000 does not fit a 32-bit kernel",
    );
    assert_input_error(
        &["hash", "futex", "--table", "fixed-512", "--uaddr", "4"],
        "fixed-512",
    );
    assert_input_error(
        &["layout", "--table", "aligned-3.14", "--cpus", "0"],
        "futexsim: error: cpus = 0",
    );
    assert_input_error(
        &[
            "layout",
            "--table",
            "aligned-3.14",
            "--cpus",
            "8",
            "--line",
            "100",
        ],
        "futexsim: error: line size 100",
    );
    assert_input_error(
        &[
            "layout",
            "--table",
            "aligned-3.14",
            "--cpus",
            "8",
            "--futexes",
            "0",
        ],
        "futexsim: error: futexes = 0",
    );
}

#[test]
fn layout_json_parses() {
    let v = json_of(&[
        "layout",
        "--table",
        "fixed-256",
        "--table",
        "aligned-3.14",
        "--cpus",
        "8",
        "--json",
    ]);
    assert_eq!(v["population"]["workload"], "perf-hash");
    let designs = v["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 2);
    assert_eq!(designs[0]["design"], "fixed-256");
    assert_eq!(designs[0]["keys"], 8 * 1024);
    assert_eq!(designs[1]["slots_per_instance"], 2048);
    assert!(designs[1]["expected"]["colliding_pairs"].as_f64().unwrap() > 0.0);
}

#[test]
fn layout_markdown_compares_designs() {
    let text = stdout_of(&[
        "layout",
        "--table",
        "fixed-256",
        "--table",
        "private-6.17",
        "--cpus",
        "16",
        "--workload",
        "will-it-scale-threads",
    ]);
    for want in [
        "will-it-scale futex: 16 threads",
        "## fixed-256",
        "## private-6.17",
        "private hash of 64 slots in 1 process(es)",
        "| colliding key pairs |",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
}

/// Every kernel state, proposal and alias is a `--table` for both commands,
/// and an alias places the key exactly as its era does.
#[test]
fn hash_and_layout_take_every_era_name() {
    for name in futexsim::kernel::table::PRESET_NAMES {
        let (hash, bucket, _) = place_example(&["--table", name, "--cpus", "32"]);
        assert!(hash > 0 && bucket < 1 << 20, "{name}");
        let text = stdout_of(&["layout", "--table", name, "--cpus", "8", "--threads", "8"]);
        assert!(text.contains(&format!("## {name}")), "{name}:\n{text}");
    }
    for (alias, era) in futexsim::kernel::table::ALIASES {
        assert_eq!(
            place_example(&["--table", alias, "--cpus", "32", "--threads", "32"]),
            place_example(&["--table", era, "--cpus", "32", "--threads", "32"]),
            "{alias} is {era}"
        );
    }
}

/// A 64 KiB page (ppc64le) moves 16 address bits into the offset, which is
/// jhash2's initval: the key hashes elsewhere.
#[test]
fn the_page_size_changes_the_hash() {
    let small = place_example(&["--table", "v6.16", "--cpus", "32"]);
    let large = place_example(&["--table", "v6.16", "--cpus", "32", "--page-size", "65536"]);
    assert_ne!(small.0, large.0);
    let numa = json_of(&[
        "hash",
        "futex",
        "--uaddr",
        "0x7f1234567ab8",
        "--table",
        "v6.16",
        "--cpus",
        "32",
        "--nodes",
        "2",
        "--numa-node",
        "1",
        "--json",
    ]);
    assert_eq!(numa["node"].as_u64(), Some(1));
}
