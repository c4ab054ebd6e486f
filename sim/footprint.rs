//! How much memory one run holds at its peak, estimated before it runs from
//! what its scenario lays out, and how much the host has to give: a sweep
//! that cannot fit is refused before it starts instead of being killed by
//! the kernel hours in.

/// What a run lays out, counted when its scenario is prepared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Coherence lines of the memory map: each has a directory entry.
    pub lines: u64,
    /// Futex words the workload addresses: each has its address and line in
    /// a task's program, and the lines they share gain statistics as they
    /// move between caches.
    pub futex_words: u64,
}

/// Bytes of this process before any run (the binary, its heap, the config).
const BASE: u64 = 8 << 20;
/// Per line and per futex word. Calibrated on the peak resident memory
/// (VmHWM) of `futexsim run --jobs 1` on one-point configs of perf-hash on
/// uv-512 with 64 and 512 threads of 1024 to 32768 futexes each (4.6 K to
/// 68 M lines, 65 K to 16.8 M words; measured peaks 10 MiB to 3.9 GiB): the
/// estimate is within 20% of each, above it for the largest.
const PER_LINE: u64 = 56;
const PER_WORD: u64 = 60;

impl Footprint {
    pub fn bytes(&self) -> u64 {
        BASE + PER_LINE * self.lines + PER_WORD * self.futex_words
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_of_anything_costs_more() {
        let small = Footprint {
            lines: 1000,
            futex_words: 1000,
        };
        for bigger in [
            Footprint {
                lines: 2000,
                ..small
            },
            Footprint {
                futex_words: 2000,
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
