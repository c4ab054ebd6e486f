//! Micro-benchmarks run on the directory alone, no kernel and no engine:
//! the figures `futexsim calibrate` fits a profile's coherence parameters
//! to, and the ones the profile checks hold each profile to. Keeping them
//! here means calibrate fits exactly what the checks judge.

use super::{AccessKind, Directory, Request, Turn};
use crate::machine::{Machine, Ps};
use crate::memory::{Home, MemoryMap};
use crate::symbol::Symbol;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The probed line's address: any line of the probe's one region.
pub const LINE_ADDR: u64 = 0x10_0000;
/// The probes' accesses are a benchmark's own, as a workload's are.
const BY: Symbol = Symbol::Workload;
/// Far enough apart that no request of one step waits for another's.
pub const IDLE_GAP: Ps = 10_000_000;

/// A directory over a few lines whose memory is on node `home`.
pub fn directory(m: &Machine, home: u32) -> Directory {
    let mut mem = MemoryMap::new(m.line_size());
    mem.add("lines", LINE_ADDR, 4096, Home::Node(home));
    Directory::new(&mem, m, &[])
}

/// One writer (CPU 0) stores the line, then `readers` read it at once:
/// ns until the last of them has it.
pub fn fan_out_ns(m: &Machine, readers: &[u32]) -> f64 {
    let mut d = directory(m, 0);
    d.access(m, 0, 0, 0, LINE_ADDR, AccessKind::Write, BY);
    let now = IDLE_GAP;
    let last = readers
        .iter()
        .map(|&r| d.access(m, r, now, 0, LINE_ADDR, AccessKind::Read, BY).done)
        .max()
        .unwrap_or(now);
    (last - now) as f64 / 1000.0
}

/// One increment of a contended line: the index (into the probe's CPUs)
/// of the CPU whose request was served, and when it completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Increment {
    pub cpu: usize,
    pub done: Ps,
}

/// What the probe's clock runs: a CPU's next increment, or the line's turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Issue(usize),
    Turn(u32),
}

/// `cpus` increment one line back to back, each issuing its next
/// increment as its last completes; a request that finds the line busy
/// waits at it for its grant, as the engine's tasks do. The first
/// `rounds * cpus.len()` increments, in the order they were served.
pub fn contended_rmw(m: &Machine, cpus: &[u32], rounds: usize) -> Vec<Increment> {
    let mut d = directory(m, 0);
    let total = rounds * cpus.len();
    let mut served = Vec::with_capacity(total);
    let mut events = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: Ps, event: Event| {
        seq += 1;
        events.push(Reverse((at, seq, event)));
    };
    for i in 0..cpus.len() {
        push(&mut events, 0, Event::Issue(i));
    }
    while served.len() < total {
        let Some(Reverse((now, _, event))) = events.pop() else {
            break;
        };
        let (cpu, granted, more) = match event {
            Event::Issue(i) => (i, false, None),
            Event::Turn(queue) => match d.turn(m, queue, now) {
                Turn::Busy(at) => {
                    push(&mut events, at, Event::Turn(queue));
                    continue;
                }
                Turn::Idle => continue,
                Turn::Granted { waiter, more, .. } => {
                    (waiter as usize, true, more.then_some(queue))
                }
            },
        };
        let asked = d.request(
            m,
            cpus[cpu],
            now,
            0,
            LINE_ADDR,
            AccessKind::Rmw,
            BY,
            cpu as u32,
            granted,
        );
        match asked {
            Request::Served(out) => {
                served.push(Increment {
                    cpu,
                    done: out.done,
                });
                push(&mut events, out.done, Event::Issue(cpu));
            }
            Request::Waits(Some(turn)) => push(&mut events, turn.at, Event::Turn(turn.queue)),
            Request::Waits(None) => {}
        }
        if let Some(queue) = more {
            push(&mut events, d.next_turn(queue, now), Event::Turn(queue));
        }
    }
    served
}

/// The mean ns between increments of `contended_rmw`, once every CPU has
/// been served four times (at most half the increments are warm-up). The
/// warm-up is counted in each CPU's increments, not in increments: the
/// line's first fill from memory holds its server for the fill, and its
/// first holder meanwhile hits its own line, a run of increments as long as
/// the fill is over the RMW (about 50 on a core with a 1.7 ns atomic) that
/// no later round repeats.
pub fn contended_rmw_ns(m: &Machine, cpus: &[u32], rounds: usize) -> f64 {
    let served = contended_rmw(m, cpus, rounds);
    let mut each = vec![0usize; cpus.len()];
    let warm = served
        .iter()
        .position(|i| {
            each[i.cpu] += 1;
            each.iter().all(|&n| n >= 4)
        })
        .map_or(served.len(), |last| last + 1)
        .min(served.len() / 2);
    let last = |s: &[Increment]| s.iter().map(|i| i.done).max().unwrap_or(0);
    let (t0, done) = (last(&served[..warm]), last(&served));
    (done - t0) as f64 / 1000.0 / served.len().saturating_sub(warm).max(1) as f64
}
