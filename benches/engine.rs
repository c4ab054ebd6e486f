//! Simulator speed: events and simulated futex ops per wall second for perf
//! bench futex hash with aligned-3.14 buckets, at 64, 512 and 4096 CPUs.
//! Each sample is a whole `simulate`: set-up, the bucket-load analysis of
//! every key (on a thread beside the event loop), the event loop and the
//! record. The 4096-CPU run simulates
//! 200 us, long enough that the event loop's steady state dominates its
//! set-up (4M keys analysed, 80 MB of directory and locks laid out); the
//! line printed before each group gives the engine's own rate (directory
//! set-up and event loop) and the process's peak resident memory in that
//! run (the target at 4096 CPUs x 1024 futexes: under 1 GiB).
//!
//! Beside each engine figure at 64 and 4096 CPUs runs the floor it is
//! judged against: a std binary heap's pop of the earliest of N pending
//! events and push of one more, N being the engine's pending events there
//! (64, 4096), each delay uniform in [1, 10000]. The engine's events per
//! second over the floor's is the speed ratio benches/performance.md
//! reports (targets 0.40 at 64 CPUs, 0.14 at 4096), both from one sitting.
//! The host's load moves the two apart, so the bench also prints the ratio
//! over seven pairs of a floor sample and a whole run, each pair back to
//! back: their median, least and greatest. The bench profile builds with
//! fat LTO and one codegen unit, as the stand-alone floor benchmark builds
//! its heap, so that this floor runs as fast as that one.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futexsim::campaign::{peak_rss_bytes, reset_peak_rss};
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset as machine;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;

/// `duration_us` simulated microseconds counted after a warm-up of a fifth of that.
fn scenario(machine_name: &str, threads: u32, duration_us: u64) -> Scenario {
    Scenario {
        machine: machine(machine_name).unwrap(),
        design: table("aligned-3.14").unwrap(),
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(threads),
            ..Default::default()
        }),
        window: RunWindow {
            warmup: duration_us * 200_000,
            duration: duration_us * 1_000_000,
            stop: None,
        },
        seed: 1,
    }
}

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("perf_hash_aligned_3_14");
    group.sample_size(10);
    for (name, threads, duration_us, floor_pending) in [
        ("icx-2s", 64, 1000, Some(64)),
        ("uv-512", 512, 200, None),
        ("uv-4096", 4096, 200, Some(4096)),
    ] {
        let mut floor = floor_pending.map(Floor::new);
        if let Some(heap) = floor.as_mut() {
            group.throughput(Throughput::Elements(FLOOR_EVENTS));
            group.bench_function(format!("floor_binary_heap_{}_pending", heap.pending), |b| {
                b.iter(|| heap.run(FLOOR_EVENTS))
            });
        }
        let s = scenario(name, threads, duration_us);
        reset_peak_rss();
        let (record, speed) = s.simulate().unwrap();
        eprintln!(
            "{threads} CPUs: {} events, {} ops per run; the engine alone (directory set-up and event loop): {:.1} M events/s, {:.2} M simulated ops/s; the process's peak resident memory in the run: {:.1} MiB",
            record.events,
            record.ops,
            speed.events_per_sec / 1e6,
            speed.sim_ops_per_sec / 1e6,
            peak_rss_bytes() as f64 / f64::from(1 << 20)
        );
        group.throughput(Throughput::Elements(record.events));
        group.bench_function(format!("{threads}_cpus_events"), |b| {
            b.iter(|| s.simulate().unwrap())
        });
        if let Some(heap) = floor.as_mut() {
            let ratios = interleaved_ratios(&s, record.events, heap);
            eprintln!(
                "{threads} CPUs over the floor at {} pending, {PAIRS} interleaved pairs: median {:.3} [{:.3}, {:.3}]",
                heap.pending,
                ratios[PAIRS / 2],
                ratios[0],
                ratios[PAIRS - 1]
            );
        }
    }
    group.finish();
}

/// Engine-floor pairs run one after the other, so that both sides of each
/// ratio see the same moment of the host's load.
const PAIRS: usize = 7;

/// The engine's events per second over the floor's, for PAIRS pairs of a
/// floor sample then a whole `simulate`, in increasing order.
fn interleaved_ratios(s: &Scenario, events: u64, floor: &mut Floor) -> Vec<f64> {
    let rate = |count: u64, since: Instant| count as f64 / since.elapsed().as_secs_f64();
    let mut ratios: Vec<f64> = (0..PAIRS)
        .map(|_| {
            let started = Instant::now();
            floor.run(FLOOR_EVENTS);
            let floor_rate = rate(FLOOR_EVENTS, started);
            let started = Instant::now();
            black_box(s.simulate().unwrap());
            rate(events, started) / floor_rate
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios
}

/// Events a floor sample pops and pushes: about as long as a 64-CPU
/// engine sample.
const FLOOR_EVENTS: u64 = 1 << 20;
/// The floor's delays are uniform in [1, FLOOR_DELAY].
const FLOOR_DELAY: u64 = 10_000;

/// A pending event of the floor: ordered by time, then by the order it
/// was scheduled in, reversed so that std's max-heap pops the earliest.
#[derive(Clone, Copy, PartialEq, Eq)]
struct FloorEvent {
    time: u64,
    seq: u32,
    payload: u32,
}

impl Ord for FloorEvent {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for FloorEvent {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A std binary heap at a steady population, each pop followed by one
/// push; its delays come from a xorshift generator, a few instructions an
/// event, so the heap's work is what is timed.
struct Floor {
    pending: usize,
    heap: BinaryHeap<FloorEvent>,
    state: u64,
    seq: u32,
}

impl Floor {
    fn new(pending: usize) -> Floor {
        let mut floor = Floor {
            pending,
            heap: BinaryHeap::with_capacity(pending + 1),
            state: 0x9e37_79b9_7f4a_7c15 ^ pending as u64,
            seq: 0,
        };
        for _ in 0..pending {
            let time = floor.delay() - 1;
            let seq = floor.next_seq();
            floor.heap.push(FloorEvent {
                time,
                seq,
                payload: seq,
            });
        }
        // Warm-up: the pending times reach their steady spread.
        floor.run((20 * pending as u64).max(1 << 20));
        floor
    }

    /// Uniform in [1, FLOOR_DELAY] (Marsaglia's xorshift64, scaled by a
    /// multiply, no division).
    fn delay(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        1 + ((u128::from(x) * u128::from(FLOOR_DELAY)) >> 64) as u64
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// `events` pops of the earliest event, each with a push of one more.
    fn run(&mut self, events: u64) -> u64 {
        let mut sum = 0u64;
        for _ in 0..events {
            let delay = self.delay();
            let seq = self.next_seq();
            let Some(earliest) = self.heap.pop() else {
                break;
            };
            self.heap.push(FloorEvent {
                time: earliest.time + delay,
                seq,
                payload: earliest.payload ^ seq,
            });
            sum = sum.wrapping_add(earliest.time ^ u64::from(earliest.payload));
        }
        black_box(sum)
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
