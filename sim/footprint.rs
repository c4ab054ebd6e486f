//! How much memory one run holds at its peak, estimated before it runs from
//! what its scenario lays out, and how much the host has to give: a sweep
//! that cannot fit is refused before it starts instead of being killed by
//! the kernel hours in.

use crate::coherence::BYTES_PER_LINE;
use crate::kernel::spinlock::BYTES_PER_LOCK;
use crate::workload::program::StepSpec;
use crate::workload::task_loop::Action;
use crate::workload::WorkloadSpec;

/// What a run lays out, counted when its scenario is prepared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Coherence lines of the memory map: each has a directory entry, and
    /// statistics once it moves between caches.
    pub lines: u64,
    /// Spinlocks of the tables' buckets.
    pub locks: u64,
    /// Steps the workload's threads queue for one pass, all threads together
    /// (a program's steps, repeats unrolled; a solver's sections).
    pub queued_steps: u64,
    /// The run's tasks: each has the engine's state and script, a kernel
    /// stack, a task_struct and a cached pi_state, laid out once the run
    /// starts.
    pub tasks: u64,
    /// The machine's CPUs: each has the engine's store buffer and miss
    /// slots, its run queue, and its rows of the machine's per-CPU tables
    /// (its kernel objects are lines, counted above).
    pub cpus: u64,
    /// What the tasks' programs hold as laid out (`Program::held_bytes`):
    /// time_exit's children, their whole exit queued.
    pub program_bytes: u64,
}

/// Bytes of one queued step: an action of a task loop.
const BYTES_PER_STEP: u64 = size_of::<Action>() as u64;

/// The steps all of `workload`'s `threads` queue at once, one pass each.
pub fn queued_steps(workload: &WorkloadSpec, threads: u32) -> u64 {
    let per_thread = match workload {
        WorkloadSpec::Program(p) => steps_of(&p.steps),
        // Each section is a lock, its work and an unlock, between computes.
        WorkloadSpec::FeaSolver(f) => 4 * u64::from(f.sections_per_step) + 2,
        _ => 0,
    };
    per_thread.saturating_mul(threads.into())
}

fn steps_of(steps: &[StepSpec]) -> u64 {
    steps
        .iter()
        .map(|s| match s {
            StepSpec::Repeat { times, steps } => u64::from(*times).saturating_mul(steps_of(steps)),
            _ => 1,
        })
        .fold(0, u64::saturating_add)
}

/// Bytes of this process before any run (the binary, its heap, the config)
/// and a run's other state (metrics, the bucket loads of its keys).
const BASE: u64 = 8 << 20;

/// Bytes a task adds to a run at its peak: its state and the script room
/// the engine gives it, and the memory regions and directory lines of its
/// kernel objects. Measured (VmHWM, `futexsim run --jobs 1`, perf
/// wake-parallel on 4 CPUs, 2 us): 50.8, 180.0 and 696.6 MiB at 16 Ki,
/// 64 Ki and 256 Ki tasks, 2.69 KiB a task; a heap profile at 64 Ki tasks
/// (2.72 KiB a task): 768 bytes of script room, 450 of directory lines,
/// 560 of memory regions and their names, 200 of engine state, 128 of the
/// op in flight.
const BYTES_PER_TASK: u64 = 3 << 10;

/// Bytes a CPU adds to a run. Measured (VmHWM, `futexsim run --jobs 1`,
/// time-exit with 512 children for 20 us): 13.8 MiB on uv-512, 23.1 MiB
/// on uv-4096, 2.66 KiB a CPU.
const BYTES_PER_CPU: u64 = 3 << 10;

impl Footprint {
    /// What long runs come to: every line that moves between
    /// caches gains statistics, and after 1000 us at 4096 CPUs nearly all
    /// have. Measured peaks (VmHWM, `futexsim run --jobs 1`, perf-hash on
    /// aligned-3.14): 4096 threads x 1024 futexes, 1.33 M lines, 469-503
    /// MiB after 1200 us against 475 MiB estimated with 72-byte directory
    /// lines and 272-byte records, 475 MiB against 434 with 64 and 248 (a
    /// heap profile of that run: 236 MB of records for the 0.95 M lines
    /// that moved, 98 MB of directory, 92 MB of the CPU bitmaps of offsets
    /// more than six CPUs touched, which the estimate does not count, 25 MB
    /// of locks); on uv-512, 512 threads x 32768 futexes, 108 MiB after
    /// 120 us against 403 MiB (few of its 16 M words' lines move).
    pub fn bytes(&self) -> u64 {
        BASE + BYTES_PER_LINE * self.lines
            + BYTES_PER_LOCK * self.locks
            + BYTES_PER_STEP * self.queued_steps
            + BYTES_PER_TASK * self.tasks
            + BYTES_PER_CPU * self.cpus
            + self.program_bytes
    }
}

/// Memory the host can give without swapping (MemAvailable in
/// /proc/meminfo); None where there is no such file.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// Hands the host back what this thread's allocator holds freed. Checking
/// and estimating a sweep lay each of its runs out once on this thread;
/// the runs then lay themselves out again on the pool's threads, whose
/// allocator arenas cannot take what this one freed: without this, a run
/// of 32768 time_exit children peaked 232 MiB higher (583 MiB, not 351).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns the free pages of the allocator's
    // arenas to the kernel: no live allocation is moved or touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_of_anything_costs_more() {
        let small = Footprint {
            lines: 1000,
            locks: 1000,
            queued_steps: 1000,
            tasks: 1000,
            cpus: 1000,
            program_bytes: 1000,
        };
        for bigger in [
            Footprint {
                lines: 2000,
                ..small
            },
            Footprint {
                locks: 2000,
                ..small
            },
            Footprint {
                queued_steps: 2000,
                ..small
            },
            Footprint {
                tasks: 2000,
                ..small
            },
            Footprint {
                cpus: 2000,
                ..small
            },
            Footprint {
                program_bytes: 2000,
                ..small
            },
        ] {
            assert!(bigger.bytes() > small.bytes());
        }
    }

    #[test]
    fn the_host_has_some_memory_available() {
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(available_bytes().is_some_and(|b| b > 0));
        }
    }
}
