//! How much memory one run holds at its peak, estimated before it runs
//! from its scenario's numbers (`Scenario::estimate`: nothing is laid out
//! to be counted), and how much the process may use (the least of
//! MemAvailable, RLIMIT_AS and its cgroup's limit) and how many threads it
//! may start: a run or a sweep that cannot fit is refused before it starts
//! instead of aborting as it is laid out, or being killed by the kernel
//! hours in.

use crate::coherence::BYTES_PER_LINE;
use crate::kernel::spinlock::BYTES_PER_LOCK;
use crate::workload::program::StepSpec;
use crate::workload::task_loop::Action;
use crate::workload::WorkloadSpec;

/// What a run lays out: counted from its scenario's numbers
/// (`Scenario::estimate`), or as laid out (`Scenario::footprint`, what the
/// per-unit figures below were measured against).
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
    /// Saturating: counted from a config's numbers, a footprint may be
    /// past what any host holds, and must then say so.
    pub fn bytes(&self) -> u64 {
        [
            BASE,
            BYTES_PER_LINE.saturating_mul(self.lines),
            BYTES_PER_LOCK.saturating_mul(self.locks),
            BYTES_PER_STEP.saturating_mul(self.queued_steps),
            BYTES_PER_TASK.saturating_mul(self.tasks),
            BYTES_PER_CPU.saturating_mul(self.cpus),
            self.program_bytes,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// The soft limit of the resource `$resource` (libc::RLIMIT_*), None when
/// unlimited or unknown. A macro: libc types the resource per C library.
macro_rules! soft_limit {
    ($resource:expr) => {{
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into the struct it is given.
        let ok = unsafe { libc::getrlimit($resource, &mut limit) } == 0;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as u64)
    }};
}

/// The most memory this process may use, and which limit says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// The limit as a person looks it up: "MemAvailable (/proc/meminfo)",
    /// "RLIMIT_AS (ulimit -v)", "the cgroup's memory.max (PATH)".
    pub what: String,
}

impl MemoryLimit {
    pub fn mib(&self) -> u64 {
        self.bytes.div_ceil(1 << 20)
    }
}

/// The least of the memory the host can give without swapping
/// (MemAvailable), the address space the process may map (RLIMIT_AS) and
/// the memory its cgroup may use (memory.max of its cgroup and every
/// cgroup above it; memory.limit_in_bytes under cgroup v1): what a run
/// must fit in. None where none of them is known or set.
pub fn memory_limit() -> Option<MemoryLimit> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let available = read("/proc/meminfo")
        .as_deref()
        .and_then(meminfo_available)
        .map(|bytes| MemoryLimit {
            bytes,
            what: "MemAvailable (/proc/meminfo)".into(),
        });
    let address_space = address_space_limit().map(|bytes| MemoryLimit {
        bytes,
        what: "RLIMIT_AS (ulimit -v)".into(),
    });
    let cgroup = read("/proc/self/cgroup")
        .map(|text| cgroup_limit_files(&text))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|path| {
            let bytes = read(&path).as_deref().and_then(cgroup_limit)?;
            Some(MemoryLimit {
                bytes,
                what: format!("the cgroup's limit ({path})"),
            })
        })
        .min_by_key(|l| l.bytes);
    [available, address_space, cgroup]
        .into_iter()
        .flatten()
        .min_by_key(|l| l.bytes)
}

/// [`memory_limit`] as this process first read it: what every scenario of
/// a config is checked against as the config is read (one look, not one
/// per point).
pub fn process_memory_limit() -> Option<&'static MemoryLimit> {
    static LIMIT: std::sync::OnceLock<Option<MemoryLimit>> = std::sync::OnceLock::new();
    LIMIT.get_or_init(memory_limit).as_ref()
}

/// The most threads this process may start, and which limit says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadLimit {
    pub count: u64,
    pub what: String,
}

/// The least of the threads the user may run (RLIMIT_NPROC, which counts
/// threads) and the kernel may (kernel.threads-max): none of them starts
/// past it. None where neither is known or set.
pub fn thread_limit() -> Option<ThreadLimit> {
    let user = soft_limit!(libc::RLIMIT_NPROC).map(|count| ThreadLimit {
        count,
        what: "RLIMIT_NPROC (ulimit -u)".into(),
    });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .map(|count| ThreadLimit {
            count,
            what: "kernel.threads-max (/proc/sys/kernel/threads-max)".into(),
        });
    [user, kernel].into_iter().flatten().min_by_key(|l| l.count)
}

/// MemAvailable of /proc/meminfo's text, in bytes.
pub fn meminfo_available(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib.saturating_mul(1024))
}

/// The soft RLIMIT_AS, None when unlimited.
fn address_space_limit() -> Option<u64> {
    soft_limit!(libc::RLIMIT_AS)
}

/// A cgroup memory limit file's value in bytes: memory.max holds "max"
/// for none, memory.limit_in_bytes (cgroup v1) a number near 2^63 for none.
pub fn cgroup_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < 1 << 62).then_some(bytes)
}

/// The files that may limit this process's memory, from /proc/self/cgroup:
/// memory.max of its cgroup v2 and of each cgroup above it, and
/// memory.limit_in_bytes of its cgroup v1 memory controller's and above,
/// where the hierarchies are mounted as systemd mounts them.
pub fn cgroup_limit_files(proc_self_cgroup: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in proc_self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (roots, file): (&[&str], &str) = if controllers.is_empty() {
            (&["/sys/fs/cgroup", "/sys/fs/cgroup/unified"], "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (&["/sys/fs/cgroup/memory"], "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The cgroup and each above it: a limit anywhere above binds too.
        let mut dir = std::path::Path::new(path);
        loop {
            let relative = dir.to_string_lossy();
            let relative = relative.trim_start_matches('/');
            for root in roots {
                let file = if relative.is_empty() {
                    format!("{root}/{file}")
                } else {
                    format!("{root}/{relative}/{file}")
                };
                if !files.contains(&file) {
                    files.push(file);
                }
            }
            match dir.parent() {
                Some(parent) => dir = parent,
                None => break,
            }
        }
    }
    files
}

/// Hands the host back what this thread's allocator holds freed. Checking
/// a sweep's config lays each of its designs out once on this thread;
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
            assert!(memory_limit().is_some_and(|l| l.bytes > 0));
        }
    }

    #[test]
    fn meminfo_gives_the_memory_available_in_bytes() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:        1000 kB\n\
                       MemAvailable:   2048 kB\nBuffers:        0 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(2 << 20));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn a_cgroup_limit_of_max_is_none_and_a_number_its_bytes() {
        assert_eq!(cgroup_limit("max\n"), None);
        assert_eq!(cgroup_limit("8589934592\n"), Some(8 << 30));
        // cgroup v1 writes no limit as the largest page-aligned i64.
        assert_eq!(cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(cgroup_limit(""), None);
        assert_eq!(cgroup_limit("12k"), None);
    }

    #[test]
    fn the_limit_files_are_the_cgroups_and_every_one_above_it() {
        let v2 = cgroup_limit_files("0::/user.slice/session-2.scope\n");
        assert_eq!(
            v2,
            [
                "/sys/fs/cgroup/user.slice/session-2.scope/memory.max",
                "/sys/fs/cgroup/unified/user.slice/session-2.scope/memory.max",
                "/sys/fs/cgroup/user.slice/memory.max",
                "/sys/fs/cgroup/unified/user.slice/memory.max",
                "/sys/fs/cgroup/memory.max",
                "/sys/fs/cgroup/unified/memory.max",
            ]
        );
        let v1 = cgroup_limit_files("5:cpu,cpuacct:/a\n4:memory:/jobs/x\n0::/\n");
        assert_eq!(
            v1,
            [
                "/sys/fs/cgroup/memory/jobs/x/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory.max",
                "/sys/fs/cgroup/unified/memory.max",
            ]
        );
        assert!(cgroup_limit_files("garbage\n").is_empty());
    }
}
