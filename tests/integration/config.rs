//! The TOML config: presets merged with overrides, sweeps expanded, and
//! mistakes reported at their file, line and column.

use futexsim::config::{Config, ConfigError};

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse("test.toml", "test", text, &[])
}

const SMALL: &str = r#"
[run]
duration_us = 20
warmup_us = 5

[machine]
preset = "icx-2s"

[workload]
name = "perf-hash"
futexes = 64

[[table]]
preset = "fixed-256"

[[table]]
preset = "aligned-3.14"
baseline = true

[sweep]
cpus = [4, 8]
"machine.coherence.line" = [64, 128]
"#;

#[test]
fn the_default_config_expands_to_its_sweep() {
    let c = Config::default_config(&[]).unwrap();
    assert_eq!(c.axes, ["cpus"]);
    assert_eq!(c.baseline, "fixed-256");
    assert_eq!(c.points.len(), 7);
    assert_eq!(c.points[0].axis_values, ["8"]);
    assert_eq!(c.points[6].machine.topology.nr_cpus, Some(512));
    assert_eq!(c.runs().len(), 7 * 5 * 5);
}

#[test]
fn axes_expand_as_a_cartesian_product_first_axis_outermost() {
    let c = parse(SMALL).unwrap();
    assert_eq!(c.baseline, "aligned-3.14");
    let labels: Vec<Vec<String>> = c.points.iter().map(|p| p.axis_values.clone()).collect();
    assert_eq!(
        labels,
        [["4", "64"], ["4", "128"], ["8", "64"], ["8", "128"]]
    );
    assert_eq!(c.points[1].machine.coherence.line, 128);
    assert_eq!(c.points[2].machine.topology.nr_cpus, Some(8));
    // The preset's fields survive the override.
    assert_eq!(c.points[0].machine.topology.sockets, 2);
}

#[test]
fn a_labelled_sweep_value_sets_its_value_and_names_its_point_by_its_label() {
    let labelled = SMALL.replace(
        "cpus = [4, 8]",
        r#"cpus = [{ value = 4, label = "four CPUs" }, 8]"#,
    );
    let c = parse(&labelled).unwrap();
    let labels: Vec<Vec<String>> = c.points.iter().map(|p| p.axis_values.clone()).collect();
    assert_eq!(
        labels,
        [
            ["four CPUs", "64"],
            ["four CPUs", "128"],
            ["8", "64"],
            ["8", "128"]
        ]
    );
    assert_eq!(c.points[0].machine.topology.nr_cpus, Some(4));
    // The resolved config keeps the label, so it resolves to itself.
    let again = Config::parse("campaign", &c.name, &c.resolved, &[]).unwrap();
    assert_eq!(again.resolved, c.resolved);
    assert_eq!(again.points[0].axis_values, c.points[0].axis_values);
}

#[test]
fn a_label_is_refused_at_its_column_when_it_breaks_a_table_or_names_two_values() {
    let with = |cpus: &str| SMALL.replace("cpus = [4, 8]", cpus);
    // The sweep's first axis is on line 21; a column is the label's opening quote.
    let column_of = |line: &str, label: &str| line.find(label).unwrap() + 1;
    let bad = r#"cpus = [{ value = 4, label = "a|b" }, 8]"#;
    let e = error(&with(bad));
    assert_eq!((e.line, e.column), (21, column_of(bad, "\"a|b")), "{e}");
    assert!(e.message.contains("a label \"a|b\" holds '|'"), "{e}");
    let twice = r#"cpus = [4, { value = 8, label = "4" }]"#;
    let e = error(&with(twice));
    assert_eq!((e.line, e.column), (21, column_of(twice, "\"4\"")), "{e}");
    assert!(e.message.contains("the label '4' names value 1 too"), "{e}");
    let e = error(&with(
        r#"cpus = [{ value = 4, label = "four", unit = "cpus" }, 8]"#,
    ));
    assert!(
        e.message
            .contains("holds 'value' and 'label' only, not 'unit'"),
        "{e}"
    );
    let e = error(&with(r#"cpus = [{ label = "four" }, 8]"#));
    assert!(e.message.contains("needs its value"), "{e}");
    // The plain form and a table without a label are values as before.
    assert!(parse(&with("cpus = [4, 8]")).is_ok());
}

fn error(text: &str) -> ConfigError {
    parse(text).expect_err("the config should be refused")
}

#[test]
fn a_swept_value_that_is_out_of_range_is_placed_at_that_value() {
    let e = error(&SMALL.replace("cpus = [4, 8]", "cpus = [4, 100000]"));
    assert_eq!((e.line, e.column), (21, 12), "{e}");
    assert!(e.message.contains("at sweep point cpus = 100000"), "{e}");
    assert!(e.message.contains("nr_cpus"), "{e}");
}

#[test]
fn an_unknown_key_is_named_with_the_closest_valid_one() {
    let e = error(&SMALL.replace("futexes = 64", "futexs = 64"));
    assert_eq!(e.line, 11, "{e}");
    assert!(e.message.contains("did you mean `futexes`?"), "{e}");
}

/// A mistake in one step of a long program is placed at that step's
/// value, whichever of the steps it is in.
#[test]
fn a_bad_step_among_many_is_placed_at_its_value() {
    for bad in [0, 1, 317, 499] {
        let steps: Vec<String> = (0..500)
            .map(|i| {
                let ns = if i == bad {
                    "\"ten\"".to_string()
                } else {
                    i.to_string()
                };
                format!("  {{ op = \"compute\", ns = {ns} }},")
            })
            .collect();
        let text = format!(
            "[machine]\npreset = \"icx-2s\"\n\n[workload]\nname = \"program\"\nthreads = 2\nsteps = [\n{}\n]\n\n[[table]]\npreset = \"aligned-3.14\"\n",
            steps.join("\n")
        );
        let e = error(&text);
        assert_eq!((e.line, e.column), (bad + 8, 26), "{e}");
        assert!(
            e.message
                .starts_with(&format!("workload.steps.{bad}.ns: invalid type")),
            "{e}"
        );
    }
}

#[test]
fn the_resolved_config_is_a_config_that_resolves_to_itself() {
    let rules = ["roundup_pow_of_two(4 * threads)".to_string()];
    for c in [
        parse(SMALL).unwrap(),
        Config::default_config(&rules).unwrap(),
    ] {
        let again = Config::parse("campaign", &c.name, &c.resolved, &[]).unwrap();
        assert_eq!(again.resolved, c.resolved);
        assert_eq!(again.axes, c.axes);
        assert_eq!(again.designs, c.designs);
        assert_eq!(again.baseline, c.baseline);
        assert_eq!(again.points, c.points);
    }
}

#[test]
fn every_shipped_config_parses() {
    let mut seen = 0;
    for entry in ["/configs", "/configs/validation"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(format!("{}{dir}", env!("CARGO_MANIFEST_DIR"))).unwrap())
    {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") && !path.ends_with("cases.toml") {
            Config::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
            seen += 1;
        }
    }
    assert!(seen >= 4, "{seen} configs");
}

#[test]
fn the_example_in_the_config_reference_parses() {
    let doc = include_str!("../../docs/config.md");
    let example = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/config.md opens with a TOML example");
    let c = Config::parse("docs/config.md", "example", example, &[]).unwrap();
    assert_eq!(c.designs, ["fixed-256", "chain-apart"]);
    assert_eq!(c.points.len(), 3 * 2);
    assert_eq!(c.points[5].designs[1].slots.to_string(), "1024");
}

/// What a kernel state cannot do is refused where the config asks for it:
/// perf's -b on a kernel without a private hash, -I outside the 6.16
/// release candidates, a FUTEX2_NUMA node on a kernel before the per-node
/// table.
#[test]
fn an_era_refuses_what_its_kernel_did_not_have() {
    let e = error(&SMALL.replace("futexes = 64", "futexes = 64\nbuckets = 16"));
    assert_eq!(e.line, 12, "{e}");
    assert!(e.message.contains("prctl(PR_FUTEX_HASH) fails"), "{e}");
    let private = SMALL
        .replace(
            "futexes = 64",
            "futexes = 64\nbuckets = 16\nimmutable = true",
        )
        .replace("preset = \"fixed-256\"", "preset = \"v6.17\"")
        .replace("preset = \"aligned-3.14\"", "preset = \"v6.16-rc1\"");
    let e = error(&private);
    assert_eq!(e.line, 13, "{e}");
    assert!(e.message.contains("FH_FLAG_IMMUTABLE"), "{e}");
    assert!(parse(&private.replace(
        "preset = \"v6.17\"",
        "preset = \"private-6.16rc\"\nname = \"rc\""
    ))
    .is_ok());
    let numa = r#"
[run]
duration_us = 20
warmup_us = 5

[machine]
preset = "icx-2s"

[workload]
name = "program"
threads = 2
steps = [{ op = "futex-wait", addr = "64", val = 1, node = 1 }]

[[table]]
preset = "v5.7"
"#;
    let e = error(numa);
    assert!(e.message.contains("no FUTEX2_NUMA"), "{e}");
    assert!(parse(&numa.replace("v5.7", "v6.16")).is_ok());
    let e = error(
        &numa
            .replace("v5.7", "v6.16")
            .replace("node = 1", "node = 2"),
    );
    assert!(e.message.contains("EINVAL"), "{e}");
}

/// A profile file named by `preset` is found beside the config, loads as
/// the shipped profile it copies, and takes the config's overrides.
#[test]
fn a_preset_path_names_a_profile_file_beside_the_config() {
    let dir = std::env::temp_dir().join(format!("futexsim-profile-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("machines")).unwrap();
    let shipped = include_str!("../../configs/machines/arm64-8.toml");
    std::fs::write(dir.join("machines/box.toml"), shipped).unwrap();
    let text = SMALL
        .replace(
            "preset = \"icx-2s\"",
            "preset = \"machines/box.toml\"\nlatency.llc = 45.0",
        )
        .replace("\"machine.coherence.line\" = [64, 128]\n", "");
    std::fs::write(dir.join("study.toml"), &text).unwrap();
    let config = Config::load(&dir.join("study.toml"), &[]).unwrap();
    let mut expected = futexsim::machine::presets::preset("arm64-8").unwrap();
    expected.latency.llc = 45.0;
    expected.topology.nr_cpus = Some(4);
    // The file's plausible ranges are the config's; a point's machine,
    // what its runs simulate, carries none.
    assert!(!config.plausible.is_empty());
    assert_eq!(config.plausible, std::mem::take(&mut expected.plausible));
    assert_eq!(config.points[0].machine, expected);
    // Named from elsewhere, the same relative path is not found.
    let elsewhere = Config::parse("other/study.toml", "study", &text, &[]).unwrap_err();
    assert!(
        elsewhere.message.contains("other/machines/box.toml"),
        "{elsewhere}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The syscall a config's machine pays: the defences its profile's kernel
/// version selects on the part, each in the measured core's cycles at the
/// profile's clock, and a config of another era names its own version.
#[test]
fn a_profiles_kernel_version_selects_its_defences_and_a_config_can_name_its_era() {
    let syscall_ps = |kernel: Option<&str>| {
        let text = SMALL.replace(
            "preset = \"icx-2s\"",
            &match kernel {
                None => "preset = \"skl-2s-104\"".to_string(),
                Some(k) => format!("preset = \"skl-2s-104\"\n{k}"),
            },
        );
        let config = parse(&text).unwrap();
        futexsim::machine::Machine::new(config.points[0].machine.clone())
            .unwrap()
            .costs
            .syscall as f64
            / 1000.0
    };
    let near = |ns: f64, expected: f64| (ns - expected).abs() < 0.002;
    let v6_8 = syscall_ps(None);
    let bare = syscall_ps(Some("kernel.mitigations = []"));
    let pti = syscall_ps(Some("kernel.mitigations = [\"pti\"]"));
    let v5_6 = syscall_ps(Some("kernel.version = \"5.6\""));
    let v6_9 = syscall_ps(Some("kernel.version = \"6.9\""));
    // Two CR3 writes of the Skylake client's 191 cycles at 2.1 GHz.
    assert!(near(pti - bare, 382.0 / 2.1), "{}", pti - bare);
    // v6.8: page-table isolation, IBRS (fitted) and the VERW clear.
    assert!(near(v6_8 - bare, (382.0 + 518.0) / 2.1 + 101.8));
    // v5.6 predates IBRS on entry: a retpoline on the dispatch instead.
    assert!(near(v6_8 - v5_6, 101.8 - 19.0 / 2.1));
    // v6.9 adds the branch history clear, Cascade Lake's 81.6 cycles.
    assert!(near(v6_9 - v6_8, 81.6 / 2.1));
}
