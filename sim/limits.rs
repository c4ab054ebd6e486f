//! Every cap futexsim puts on what a config, a command or a file may ask
//! for, in one place: the caps depend on one another (the tasks a run
//! accepts must fit the engine's event ids, the address map's areas are
//! sized from them), and the tests below keep them agreeing.
//!
//! This module imports nothing of the crate: every layer may use it.

/// Most tasks (threads) one run simulates: far more than any benchmark of
/// the suite runs, and few enough that every task's state fits in memory.
pub const MAX_RUN_TASKS: u32 = 1 << 20;

/// Task ids the engine's event queue can carry: it packs an event's task
/// in the low 24 bits of its key (sim/engine/queue.rs), and keeps the ids
/// at the top of the space for the engine's own events (the scheduler
/// tick's, the end of the warm-up).
pub const EVENT_TASK_IDS: usize = 1 << 24;

/// Most threads or tasks a layout analysis hashes the keys of: as many as
/// the largest machine futexsim models has CPUs.
pub const MAX_ANALYSIS_TASKS: u32 = 1 << 16;
/// Most keys one analysis hashes, so it stays in memory and time.
pub const MAX_ANALYSIS_KEYS: u64 = 1 << 24;
/// Most bucket slots, over all table instances, one analysis looks at.
pub const MAX_ANALYSIS_SLOTS: u64 = 1 << 26;

/// Most CPUs a machine may have.
pub const MAX_CPUS: u64 = 1 << 16;
/// The kernel's MAX_NUMNODES with NODES_SHIFT = 10.
pub const MAX_NODES: u32 = 1 << 10;
/// The base pages kernels use: 4 KiB (x86-64) to 256 KiB (some ppc44x).
pub const MIN_PAGE: u64 = 1 << 12;
pub const MAX_PAGE: u64 = 1 << 18;
/// The most store-buffer entries or misses in flight a profile may give a
/// core: beyond any core built (Golden Cove's store buffer has 114).
pub const MAX_IN_FLIGHT: u32 = 256;
/// The most grants in a row a profile may keep a line in one LLC domain:
/// more CPUs than any machine has, so any batch a machine could run fits.
pub const MAX_LOCAL_BATCH: u32 = 1 << 16;
/// The longest time one step may be written to take: 10 ms, far beyond any
/// cache, memory or kernel path, and short enough that sums of many stay
/// far inside u64 picoseconds.
pub const MAX_NS: f64 = 1e7;
/// The clocks a profile may give its cores: far beyond any built, and
/// high enough that no cycle count becomes more than MAX_NS.
pub const MIN_GHZ: f64 = 0.01;
pub const MAX_GHZ: f64 = 100.0;
/// The kernel returns a profile may say one syscall makes (`kernel.returns`):
/// more than any syscall's path makes, a bound that catches a duration or a
/// cycle count written in its place.
pub const MAX_RETURNS: f64 = 10_000.0;

/// The most bytes all of a design's tables may take together: far beyond
/// any kernel's (2^24 slots of 64-byte buckets), and as much as the
/// vmalloc area futexsim gives them holds (sim/address_map.rs).
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

/// Counts of objects a workload lays out (mutexes, vmas, sections of a
/// step): bounded, so a hostile config cannot exhaust memory before it runs.
pub const MAX_OBJECTS: u64 = 1 << 20;
/// Every futex word of every perf bench futex hash thread is laid out (with
/// its line) when a config is checked, before anything runs, so their
/// number is bounded: 2^24 is four times perf's default on 4096 CPUs, and
/// its layout takes 256 MiB.
pub const MAX_PERF_HASH_WORDS: u64 = 1 << 24;
/// The most slots perf bench futex hash's `-b` may ask for: a 2^24-slot
/// table is 1 GiB of buckets, all futexsim lays out.
pub const MAX_PERF_HASH_BUCKETS: u64 = 1 << 24;
/// Bounds on a program workload that keep a hostile config from exhausting
/// memory: its lock slots, its steps a pass, its memory in bytes.
pub const MAX_PROGRAM_SLOTS: u64 = 1 << 20;
pub const MAX_PROGRAM_STEPS_PER_PASS: u64 = 1 << 20;
pub const MAX_PROGRAM_MEMORY: u64 = 1 << 30;

/// The most sweep points a config may allow itself (run.max_points).
pub const MAX_POINTS: u64 = 1_000_000;
/// The most runs (points x designs x repetitions) one campaign plans.
pub const MAX_RUNS: u64 = 100_000;
/// The longest window: 1000 s simulated, far inside u64 picoseconds.
pub const MAX_WINDOW_US: u64 = 1_000_000_000;
/// Design names end up in chart file names; a file name has 255 bytes.
pub const MAX_NAME_BYTES: usize = 100;
/// A config's name is its campaign's directory's.
pub const MAX_DIR_NAME_BYTES: usize = 200;

/// Longest accepted sizing expression, in characters. Sizing rules are
/// one-liners; the cap bounds the work a hostile config can ask of the parser.
pub const MAX_EXPR_LEN: usize = 4096;
/// Deepest accepted nesting of parentheses and calls in an expression. The
/// parser and the evaluator recurse once per level, so this bounds their
/// stack use. Operator chains such as `1 + 2 + 3` are stored flat and do
/// not nest.
pub const MAX_EXPR_DEPTH: usize = 64;

/// The most bytes futexsim reads of a file of one kind, named as an error says.
#[derive(Clone, Copy, Debug)]
pub struct Cap {
    pub what: &'static str,
    pub bytes: u64,
}

impl Cap {
    pub const fn new(what: &'static str, bytes: u64) -> Cap {
        Cap { what, bytes }
    }
}

/// A config, a validation suite or a machine profile: the largest shipped
/// is 40 KiB; a generated sweep of a few thousand values stays far below.
pub const CONFIG_CAP: Cap = Cap::new("a config", 16 << 20);
/// A measured latency matrix (4096 CPUs squared, 8 bytes a figure: 128 MiB).
pub const MEASUREMENTS_CAP: Cap = Cap::new("a measurements file", 256 << 20);
/// A kernel's BTF or its vmlinux: /sys/kernel/btf/vmlinux is a few MiB, a
/// vmlinux with its debug information a few hundred.
pub const KERNEL_IMAGE_CAP: Cap = Cap::new("a kernel image", 2 << 30);
/// A result set: the default campaign's is 4.5 MiB, a 4096-CPU sweep's tens.
pub const RESULTS_CAP: Cap = Cap::new("a result set", 1 << 30);
/// One run's file: the largest committed is under 1 MiB.
pub const RUN_FILE_CAP: Cap = Cap::new("a run file", 256 << 20);
/// A campaign's mark (it holds the resolved config).
pub const CAMPAIGN_CAP: Cap = Cap::new("a campaign file", 64 << 20);
/// A campaign's lock file: the holder's process id and host.
pub const LOCK_FILE_CAP: Cap = Cap::new("a lock file", 64);
/// A report's manifest: a line per file of the report.
pub const MANIFEST_CAP: Cap = Cap::new("a report's manifest", 16 << 20);
/// A report's file, read back to prove futexsim wrote it.
pub const REPORT_FILE_CAP: Cap = Cap::new("a report file", 1 << 30);
/// A file futexsim is about to replace, read to prove it wrote it.
pub const REPLACED_CAP: Cap = Cap::new("a file futexsim replaces", 1 << 30);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_a_run_accepts_has_an_event_id_beside_the_engines_own() {
        // The engine's own events take the ids above the tasks': one a CPU
        // for the scheduler tick, one for the end of the warm-up, one for
        // the end of a unit of a window that may end early.
        let engine_ids = MAX_CPUS as usize + 2;
        assert!(MAX_RUN_TASKS as usize + engine_ids <= EVENT_TASK_IDS);
    }

    #[test]
    fn a_layout_analysis_takes_a_task_a_cpu_of_the_largest_machine_and_no_more_than_a_run() {
        assert_eq!(u64::from(MAX_ANALYSIS_TASKS), MAX_CPUS);
        const { assert!(MAX_ANALYSIS_TASKS <= MAX_RUN_TASKS) };
        assert!(u64::from(MAX_ANALYSIS_TASKS) <= MAX_ANALYSIS_KEYS);
    }

    #[test]
    fn an_analysis_can_look_at_the_largest_table_a_design_may_build() {
        // 64-byte buckets, the smallest a design packs a line with.
        const { assert!(MAX_TABLE_BYTES / 64 <= MAX_ANALYSIS_SLOTS) };
    }

    #[test]
    fn perf_bench_futex_hashs_largest_table_is_one_a_design_may_build() {
        const { assert!(MAX_PERF_HASH_BUCKETS * 64 <= MAX_TABLE_BYTES) };
    }

    #[test]
    fn every_cpu_of_the_largest_machine_can_run_a_task_and_a_batch() {
        assert!(MAX_CPUS <= u64::from(MAX_RUN_TASKS));
        assert!(u64::from(MAX_LOCAL_BATCH) >= MAX_CPUS);
        assert!(u64::from(MAX_NODES) <= MAX_CPUS);
    }

    #[test]
    fn the_longest_window_and_step_stay_inside_u64_picoseconds() {
        // A thousand times the window still fits: a run's sums of it do.
        let window_ps = u128::from(MAX_WINDOW_US) * 1_000_000;
        assert!(window_ps * 1000 < u128::from(u64::MAX));
        // A million of the longest steps fit, and the slowest clock's cycle
        // is a step futexsim accepts.
        assert!(MAX_NS * 1e3 * 1e6 < u64::MAX as f64);
        const { assert!(1.0 / MIN_GHZ <= MAX_NS) };
    }

    #[test]
    fn a_design_or_config_name_futexsim_accepts_fits_a_file_name() {
        // A chart's file name adds a prefix and ".svg" to a design's name.
        const { assert!(MAX_NAME_BYTES + 32 <= 255) };
        const { assert!(MAX_DIR_NAME_BYTES <= 255) };
    }

    #[test]
    fn the_base_pages_are_powers_of_two() {
        assert!(MIN_PAGE.is_power_of_two() && MAX_PAGE.is_power_of_two());
        const { assert!(MIN_PAGE <= MAX_PAGE) };
    }

    #[test]
    fn a_file_that_holds_a_measured_matrix_of_the_largest_machine_is_read() {
        // A latency matrix of 4096 CPUs, 8 bytes a figure, as measured.
        const { assert!(4096 * 4096 * 8 <= MEASUREMENTS_CAP.bytes) };
        const { assert!(RESULTS_CAP.bytes <= REPLACED_CAP.bytes) };
        const { assert!(REPORT_FILE_CAP.bytes <= REPLACED_CAP.bytes) };
    }
}
