//! What perf bench's futex benchmarks share, as tools/perf/bench/futex.h
//! serves every futex-*.c: the `-t` and `-S` options and how a label shows
//! them, and the one process whose threads every benchmark runs. Each
//! benchmark's file keeps only what is its own.

use super::{Readout, Setup, Size};
use crate::machine::Machine;
use crate::task::{KeyKind, TaskSpec};

/// `-S`: the futex benchmarks' shared futexes live in an anonymous private
/// mapping (`.bss` or the heap), so without FUTEX_PRIVATE_FLAG the kernel
/// keys them by (mm, address) after a page lookup.
pub fn key_kind(shared: bool) -> KeyKind {
    if shared {
        KeyKind::SharedAnon
    } else {
        KeyKind::Private
    }
}

/// `-t` of every futex benchmark: perf takes one thread per CPU when it is
/// absent or zero.
pub fn perf_threads(threads: Option<u32>, machine: &Machine) -> u32 {
    threads.filter(|&t| t > 0).unwrap_or(machine.cpus())
}

/// ` -t N` in a label where the config gives `-t`, so two records of one
/// benchmark with different thread counts are told apart.
pub fn threads_flag(threads: Option<u32>) -> String {
    threads.map(|t| format!(" -t {t}")).unwrap_or_default()
}

/// ` -S` in a label where the futexes are shared.
pub fn shared_flag(shared: bool) -> &'static str {
    if shared {
        " -S"
    } else {
        ""
    }
}

/// The default of `-w` and `-q`: one thread per call.
pub fn one_per_call() -> u32 {
    1
}

/// The size of a benchmark laid out by [`one_process`]: `tasks` threads
/// of one process, its futex words on a line or two of perf's .bss.
pub fn one_process_size(tasks: u64, futexes: u64) -> Size {
    Size {
        tasks,
        processes: 1,
        futexes,
        lines: 2,
        held_bytes: 0,
    }
}

/// A benchmark laid out as perf runs it: every task a thread of perf's one
/// process, with no kernel locks of its own and no key analysis.
pub fn one_process(tasks: Vec<TaskSpec>, mms: Vec<u64>, futexes: u64, readout: Readout) -> Setup {
    Setup {
        task_process: vec![0; tasks.len()],
        tasks,
        mms,
        futexes,
        lock_names: Vec::new(),
        readout: Some(readout),
        keys: None,
        thread_futexes: Vec::new(),
    }
}
