//! The validation suite compiled in: the cases file and every config it
//! names, so `futexsim validate` runs from any directory and a binary
//! always validates the configs it was built with. A config named in the
//! cases and missing here is an error when the suite loads (and a test
//! fails); one here that no case names is caught by a test.

/// configs/validation/cases.toml.
pub const CASES: &str = include_str!("../../configs/validation/cases.toml");

/// Each config as the cases name it (relative to the cases file), and its text.
pub const CONFIGS: &[(&str, &str)] = &[
    (
        "../atomic-incr-graviton2.toml",
        include_str!("../../configs/atomic-incr-graviton2.toml"),
    ),
    (
        "../atomic-incr-m3max.toml",
        include_str!("../../configs/atomic-incr-m3max.toml"),
    ),
    (
        "../balls-into-bins.toml",
        include_str!("../../configs/balls-into-bins.toml"),
    ),
    (
        "../fea-2009-vsmp.toml",
        include_str!("../../configs/fea-2009-vsmp.toml"),
    ),
    (
        "../lkp-futex2-hash-skl.toml",
        include_str!("../../configs/lkp-futex2-hash-skl.toml"),
    ),
    (
        "../lkp-futex3-clx-ap.toml",
        include_str!("../../configs/lkp-futex3-clx-ap.toml"),
    ),
    (
        "../lkp-futex4-cpl.toml",
        include_str!("../../configs/lkp-futex4-cpl.toml"),
    ),
    (
        "../lkp-futex4-gnr.toml",
        include_str!("../../configs/lkp-futex4-gnr.toml"),
    ),
    (
        "../lkp-futex4-process-skl.toml",
        include_str!("../../configs/lkp-futex4-process-skl.toml"),
    ),
    (
        "../lkp-wis-skl-2024.toml",
        include_str!("../../configs/lkp-wis-skl-2024.toml"),
    ),
    (
        "../lru-numa-fake.toml",
        include_str!("../../configs/lru-numa-fake.toml"),
    ),
    (
        "../perf-bench-sync-vm.toml",
        include_str!("../../configs/perf-bench-sync-vm.toml"),
    ),
    (
        "../perf-hash-e5-2650.toml",
        include_str!("../../configs/perf-hash-e5-2650.toml"),
    ),
    (
        "../perf-hash-sg2042.toml",
        include_str!("../../configs/perf-hash-sg2042.toml"),
    ),
    (
        "../perf-hash-srf.toml",
        include_str!("../../configs/perf-hash-srf.toml"),
    ),
    (
        "../perf-requeue-sg2042.toml",
        include_str!("../../configs/perf-requeue-sg2042.toml"),
    ),
    (
        "../perf-wake-parallel-sg2042.toml",
        include_str!("../../configs/perf-wake-parallel-sg2042.toml"),
    ),
    (
        "../schbench-private-hash.toml",
        include_str!("../../configs/schbench-private-hash.toml"),
    ),
    (
        "../ticket-knee.toml",
        include_str!("../../configs/ticket-knee.toml"),
    ),
    (
        "../time-exit-uv.toml",
        include_str!("../../configs/time-exit-uv.toml"),
    ),
];

/// The embedded text of the config the cases name `name`.
pub fn config(name: &str) -> Option<&'static str> {
    CONFIGS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
