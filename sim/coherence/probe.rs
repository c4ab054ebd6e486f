//! Micro-benchmarks run on the directory alone, no kernel and no engine:
//! the figures `futexsim calibrate` fits a profile's coherence parameters
//! to, and the ones the profile checks hold each profile to. Keeping them
//! here means calibrate fits exactly what the checks judge.

use super::{AccessKind, Directory};
use crate::machine::{Machine, Ps};
use crate::memory::{Home, MemoryMap};

/// The probed line's address: any line of the probe's one region.
pub const LINE_ADDR: u64 = 0x10_0000;
/// Far enough apart that no request of one step waits for another's.
pub const IDLE_GAP: Ps = 10_000_000;

/// A directory over a few lines whose memory is on node `home`.
pub fn directory(m: &Machine, home: u32) -> Directory {
    let mut mem = MemoryMap::new(m.line_size());
    mem.add("lines", LINE_ADDR, 4096, Home::Node(home));
    Directory::new(&mem, m)
}

/// One writer (CPU 0) stores the line, then `readers` read it at once:
/// ns until the last of them has it.
pub fn fan_out_ns(m: &Machine, readers: &[u32]) -> f64 {
    let mut d = directory(m, 0);
    d.access(m, 0, 0, 0, LINE_ADDR, AccessKind::Write);
    let now = IDLE_GAP;
    let last = readers
        .iter()
        .map(|&r| d.access(m, r, now, 0, LINE_ADDR, AccessKind::Read).done)
        .max()
        .unwrap_or(now);
    (last - now) as f64 / 1000.0
}

/// `cpus` increment one line back to back, each issuing its next
/// increment as its last completes: the mean ns between increments, after
/// four rounds of warm-up.
pub fn contended_rmw_ns(m: &Machine, cpus: &[u32], rounds: usize) -> f64 {
    let mut d = directory(m, 0);
    let mut next: Vec<Ps> = vec![0; cpus.len()];
    let mut done = 0;
    let mut first_counted = None;
    for op in 0..rounds * cpus.len() {
        let (i, &now) = next
            .iter()
            .enumerate()
            .min_by_key(|&(i, &t)| (t, i))
            .unwrap_or((0, &0));
        let out = d.access(m, cpus[i], now, 0, LINE_ADDR, AccessKind::Rmw);
        next[i] = out.done;
        done = done.max(out.done);
        if op == cpus.len() * 4 {
            first_counted = Some((op, done));
        }
    }
    let (op0, t0) = first_counted.unwrap_or((0, 0));
    (done - t0) as f64 / 1000.0 / (rounds * cpus.len()).saturating_sub(op0 + 1).max(1) as f64
}
