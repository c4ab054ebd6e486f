//! Analytic checks of the engine (docs/model.md, Validation): each asserts a
//! behaviour that follows from the mechanisms, not a number read off a run.

use futexsim::analysis::ticket_lock::TicketLockModel;
use futexsim::coherence::probe::contended_rmw_ns;
use futexsim::coherence::AccessKind;
use futexsim::engine::{Engine, Outcome, SchedLayout};
use futexsim::kernel::core::{FutexSystem, PerCpuOp, TaskInfo};
use futexsim::kernel::futex_hash::{FutexHash, ProcessInfo};
use futexsim::kernel::key::{get_futex_key, KeyKind, KeySource};
use futexsim::kernel::table::{preset as table, SizingVars, TableDesign};
use futexsim::machine::{
    presets::preset as machine, LockKind, Machine, MachineSpec, MemoryModel, TaskPlacement,
};
use futexsim::memory::{Home, MemoryMap};
use futexsim::scenario::Scenario;
use futexsim::task::{
    Affinity, AtomicOp, FutexOp, LockRef, Mem, Op, Program, RunWindow, TaskSpec, UserWord,
};
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const MM: u64 = 0xffff_8881_00ab_c000;
const HEAP: u64 = 0x5555_5555_6000;
const MS: u64 = 1_000_000_000;

/// A task that fails FUTEX_WAIT on one word, forever.
struct WaitOn(Mem);
impl Program for WaitOn {
    fn next_op(&mut self) -> Op {
        Op::Futex(FutexOp::Wait {
            uaddr: self.0,
            val: 1,
            kind: KeyKind::Private,
        })
    }
}

/// Runs tasks of one process, on `cpus`, whose programs `programs` builds
/// from the words of a one-page heap (a word is named by its offset).
fn run_process(
    m: &Machine,
    design: &TableDesign,
    lock: LockKind,
    cpus: &[u32],
    programs: impl Fn(&dyn Fn(u64) -> Mem) -> Vec<Box<dyn Program>>,
    window: RunWindow,
) -> Outcome {
    let mut memory = MemoryMap::new(m.line_size());
    let heap = memory.add("heap", HEAP, 4096, Home::Node(0));
    let threads = cpus.len() as u64;
    let vars = SizingVars {
        cpus: m.cpus().into(),
        possible_cpus: m.cpus().into(),
        nodes: m.nodes().into(),
        threads,
        processes: 1,
        futexes: threads,
        node_slots: 0,
    };
    let procs = [ProcessInfo::new(threads, 0)];
    let hash = FutexHash::build(design, vars, &procs, m.nodes(), &mut memory).unwrap();
    let infos = cpus
        .iter()
        .map(|&cpu| TaskInfo { process: 0, cpu })
        .collect();
    let nodes: Vec<u32> = (0..m.cpus()).map(|c| m.node_of(c)).collect();
    let futex = FutexSystem::new(
        hash,
        infos,
        vec![MM],
        &nodes,
        4096,
        PerCpuOp::Plain,
        &mut memory,
    );
    let word = |off: u64| Mem {
        addr: HEAP + off,
        line: memory.line_in(heap, HEAP + off),
    };
    let specs = cpus
        .iter()
        .zip(programs(&word))
        .map(|(&cpu, program)| TaskSpec { cpu, program })
        .collect();
    let layout = SchedLayout::new(m, &mut memory, cpus);
    Engine::new(m, &memory, futex, specs, lock, window, layout).run()
}

/// `run_process` on the 3.14 kernel's table with queued spinlocks: the
/// setting of the checks whose subject is the scheduler or the memory
/// model, where neither the table nor the lock is what is checked.
fn run_on_plain_table(
    m: &Machine,
    cpus: &[u32],
    programs: impl Fn(&dyn Fn(u64) -> Mem) -> Vec<Box<dyn Program>>,
    window: RunWindow,
) -> Outcome {
    let design = table("aligned-3.14").unwrap();
    run_process(m, &design, LockKind::Queued, cpus, programs, window)
}

/// Runs `tasks` (cpu, word offset) failing FUTEX_WAIT on their word, all in one process.
fn run_waits(
    m: &Machine,
    design: &TableDesign,
    lock: LockKind,
    tasks: &[(u32, u64)],
    window: RunWindow,
) -> Outcome {
    let cpus: Vec<u32> = tasks.iter().map(|&(cpu, _)| cpu).collect();
    let programs = |word: &dyn Fn(u64) -> Mem| {
        tasks
            .iter()
            .map(|&(_, off)| Box::new(WaitOn(word(off))) as Box<dyn Program>)
            .collect()
    };
    run_process(m, design, lock, &cpus, programs, window)
}

fn total_ops(o: &Outcome) -> u64 {
    o.metrics.ops_per_task.iter().sum()
}

#[test]
fn an_uncontended_op_costs_the_sum_of_its_steps() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: MS / 10,
        duration: MS / 10,
        stop: None,
    };
    let o = run_waits(
        &m,
        &table("aligned-3.14").unwrap(),
        LockKind::Ticket,
        &[(0, 0)],
        window,
    );
    // Syscall, key (with get_futex_key_refs' smp_mb, a locked RMW of the
    // task's stack) and hash; waiters inc, lock, unlock, waiters dec; all in
    // L1. The read of the word under the lock is a load nothing after it
    // waits for (the unlock's store commits behind it): it adds nothing.
    // The ticket unlock reads its lock word before its store: one more hit.
    let k = &m.costs;
    let steps = k.syscall / 2 * 2
        + k.futex_key_private
        + k.jhash2
        + 4 * (m.l1_ps + m.rmw_ps)
        + m.l1_ps
        + m.l1_ps;
    let h = &o.metrics.latency;
    assert_eq!(
        (h.mean(), h.max()),
        ((steps / 1000) as f64, steps / 1000),
        "every op takes the same time"
    );
    assert_eq!(
        o.directory.totals.transfers(),
        0,
        "one thread alone moves no line"
    );
    assert!(total_ops(&o).abs_diff(window.duration / steps) <= 1);
}

#[test]
fn one_thread_of_perf_bench_moves_no_lines() {
    let s = Scenario {
        machine: machine("clx-2s").unwrap(),
        design: table("fixed-256").unwrap(),
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(1),
            ..Default::default()
        }),
        window: RunWindow {
            warmup: MS / 2,
            duration: MS / 2,
            stop: None,
        },
        seed: 7,
    };
    let (r, _) = s.simulate().unwrap();
    assert!(r.ops > 1000);
    assert_eq!(r.coherence.transfers, 0);
    assert_eq!(r.coherence.false_sharing + r.coherence.true_sharing, 0);
}

/// Offsets in one heap page whose fixed-256 buckets are 0 and 1: the same
/// 64-byte line (40-byte buckets from a line boundary).
fn neighbour_words(design: &TableDesign) -> (u64, u64) {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let mut memory = MemoryMap::new(64);
    let vars = SizingVars {
        cpus: 128,
        possible_cpus: 128,
        nodes: 2,
        threads: 2,
        processes: 1,
        futexes: 2,
        node_slots: 0,
    };
    let procs = [ProcessInfo::new(2, 0)];
    let h = FutexHash::build(design, vars, &procs, m.nodes(), &mut memory).unwrap();
    let bucket_of = |off: u64| {
        let key = get_futex_key(
            HEAP + off,
            KeySource::Private { mm: MM },
            Default::default(),
            4096,
        )
        .unwrap();
        h.futex_hash(&key, 0).bucket.index
    };
    let find = |want| {
        (0..1024)
            .map(|i| i * 4)
            .find(|&off| bucket_of(off) == want)
            .unwrap()
    };
    (find(0), find(1))
}

#[test]
fn neighbouring_buckets_falsely_share_a_line_only_when_packed() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let (a, b) = neighbour_words(&table("fixed-256").unwrap());
    let window = RunWindow {
        warmup: MS / 10,
        duration: MS / 2,
        stop: None,
    };
    // CPU 0 and a CPU of the other socket: two cores, two caches.
    let far = (0..m.cpus()).find(|&c| m.place(c).socket == 1).unwrap();
    let tasks = [(0, a), (far, b)];
    let packed = run_waits(
        &m,
        &table("fixed-256").unwrap(),
        LockKind::Ticket,
        &tasks,
        window,
    );
    assert!(
        packed.directory.totals.false_sharing > 1000,
        "{:?}",
        packed.directory.totals
    );
    let aligned = run_waits(
        &m,
        &table("aligned-3.14").unwrap(),
        LockKind::Ticket,
        &tasks,
        window,
    );
    assert_eq!(aligned.directory.totals.transfers(), 0);
    assert_eq!(aligned.directory.totals.false_sharing, 0);
    assert!(total_ops(&aligned) > total_ops(&packed));
}

/// icx-2s with each read of a Shared line holding its server for a clean
/// hit, the top of the read occupancy's plausible range (docs/model.md,
/// third round): a ticket lock's spinners then re-read the word one after
/// another, as Boyd-Wickizer et al.'s chain charges them. The shipped
/// profile's re-reads pipeline at one cache access (not measured for the
/// part), and its ticket lock barely collapses
/// (`a_ticket_hand_off_grows_by_one_read_occupancy_per_spinner`); these
/// checks hold the collapse's mechanism, not that figure.
fn icx_with_serial_rereads() -> Machine {
    let mut spec = machine("icx-2s").unwrap();
    spec.coherence.read_occupancy = spec.coherence.clean_hit;
    Machine::new(spec).unwrap()
}

/// Acquisitions per simulated ms of `n` threads, one per core on the first
/// socket, each holding one lock for `hold` and working between acquires
/// for an exponential time of mean `think`: the Boyd-Wickizer setting, on
/// `icx_with_serial_rereads`.
fn lock_rate(lock: LockKind, n: u32, hold: u64, think: u64) -> f64 {
    let m = icx_with_serial_rereads();
    let cpus: Vec<u32> = (0..n).collect();
    let window = RunWindow {
        warmup: MS / 20,
        duration: MS / 2,
        stop: None,
    };
    let o = run_lock_loops(&m, lock, &cpus, hold, Think::Exponential(think), 7, window);
    o.metrics.locks.acquisitions as f64 / 0.5
}

#[test]
fn ticket_locks_collapse_past_a_knee_and_queued_locks_hold() {
    let counts = [1, 2, 4, 8, 16, 24, 32];
    let rates = |lock| -> Vec<f64> {
        counts
            .iter()
            .map(|&n| lock_rate(lock, n, 100 * NS, 2000 * NS))
            .collect()
    };
    let (ticket, queued) = (rates(LockKind::Ticket), rates(LockKind::Queued));
    let peak = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let last = counts.len() - 1;
    let knee = ticket.iter().position(|&t| t == peak(&ticket)).unwrap();
    assert!(knee > 0 && knee < last - 1, "ticket {ticket:?}");
    assert!(ticket[last] < 0.5 * peak(&ticket), "ticket {ticket:?}");
    // Once its MCS queue forms (a holder, a pending waiter and one queued:
    // four threads and more), the queued lock's hand-off is O(1).
    assert!(queued[last] > 0.7 * peak(&queued[2..]), "queued {queued:?}");
    assert!(
        queued[last] > 2.0 * ticket[last],
        "ticket {ticket:?} queued {queued:?}"
    );
}

#[test]
fn ticket_lock_curves_follow_the_markov_model_below_its_knee() {
    // The Boyd-Wickizer chain with the same exponential think time (2 us),
    // two serial sections, over 1 to 32 threads. Below the chain's knee the
    // simulated curve is within 1.5x of it at every count (the closed-form
    // verdict's bound); from the knee on the simulated lock has collapsed
    // further, and is slowest at the most threads: the directory serves the
    // k spinners' re-reads one after another (k transfers a hand-off) where
    // the chain charges c k / 2. Between the knee and saturation the curve
    // need not fall at every count: there a waiter's xadd during the serial
    // section makes the release read the word back (a transfer the
    // saturated lock, with no thread left to arrive, does not pay).
    let m = icx_with_serial_rereads();
    let transfer = m.transfer_ps(0, 1) as f64;
    let counts = [1, 2, 4, 8, 12, 16, 24, 32];
    for hold_ns in [100, 400] {
        let model = TicketLockModel {
            think: 2000.0 * NS as f64,
            serial: (hold_ns * NS) as f64,
            transfer,
        };
        let knee = model.knee(&counts).unwrap();
        let mut past_knee = Vec::new();
        for n in counts {
            let simulated = lock_rate(LockKind::Ticket, n, hold_ns * NS, 2000 * NS);
            // Acquisitions per ms from the model's per-ps rate.
            let predicted = model.throughput(n) * MS as f64;
            let ratio = simulated / predicted;
            if n < knee {
                assert!(
                    (1.0 / 1.5..1.5).contains(&ratio),
                    "s = {hold_ns} ns, {n} threads: simulated {simulated:.0}/ms, model {predicted:.0}/ms"
                );
            } else {
                assert!(ratio < 1.0, "s = {hold_ns} ns, {n} threads: {ratio}");
                past_knee.push(simulated);
            }
        }
        let (first, last) = (past_knee[0], past_knee[past_knee.len() - 1]);
        assert!(
            past_knee[1..].iter().all(|&r| r < first && r >= last),
            "s = {hold_ns} ns past the knee at {knee}: {past_knee:?}"
        );
    }
}

/// perf bench futex hash, 64 futexes a thread, on `spec` with `design`:
/// 100 us counted after 50 us, seed 3.
fn perf_hash_64_futexes(spec: MachineSpec, design: &str, threads: u32) -> Scenario {
    Scenario {
        machine: spec,
        design: table(design).unwrap(),
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(threads),
            futexes: 64,
            ..PerfHash::default()
        }),
        window: RunWindow {
            warmup: MS / 20,
            duration: MS / 10,
            stop: None,
        },
        seed: 3,
    }
}

#[test]
fn the_same_seed_gives_a_byte_identical_record() {
    let s = perf_hash_64_futexes(machine("milan-2s").unwrap(), "private-6.17", 48);
    let a = serde_json::to_string(&s.simulate().unwrap().0).unwrap();
    let b = serde_json::to_string(&s.simulate().unwrap().0).unwrap();
    assert_eq!(a, b);
    let other = Scenario { seed: 4, ..s }.simulate().unwrap().0;
    assert_ne!(a, serde_json::to_string(&other).unwrap());
}

#[test]
fn a_store_to_a_word_nobody_reads_is_a_hit() {
    // User accesses go through the same directory as the kernel's.
    struct Store(Mem);
    impl Program for Store {
        fn next_op(&mut self) -> Op {
            Op::Access(self.0, AccessKind::Write)
        }
    }
    let m = Machine::new(machine("arm64-8").unwrap()).unwrap();
    let programs = |word: &dyn Fn(u64) -> Mem| vec![Box::new(Store(word(0))) as Box<dyn Program>];
    let window = RunWindow {
        warmup: MS / 100,
        duration: MS / 100,
        stop: None,
    };
    let o = run_process(
        &m,
        &table("numa-6.16").unwrap(),
        LockKind::Queued,
        &[0],
        programs,
        window,
    );
    assert_eq!(o.directory.totals.transfers(), 0);
    assert!(total_ops(&o) > 1000);
}

#[test]
fn a_waiter_sleeps_until_each_wake() {
    // One task sleeps on a word that matches; another wakes it every 10 us,
    // 90 times, and exits.
    struct Waiter(Mem);
    impl Program for Waiter {
        fn next_op(&mut self) -> Op {
            Op::Futex(FutexOp::Wait {
                uaddr: self.0,
                val: 0,
                kind: KeyKind::Private,
            })
        }
    }
    struct Waker(Mem, bool, u32);
    impl Program for Waker {
        fn next_op(&mut self) -> Op {
            self.1 = !self.1;
            if self.2 == 0 {
                Op::Exit
            } else if self.1 {
                Op::Compute(10_000_000)
            } else {
                self.2 -= 1;
                Op::Futex(FutexOp::Wake {
                    uaddr: self.0,
                    nr: 1,
                    kind: KeyKind::Private,
                })
            }
        }
    }
    const WAKES: u64 = 90;
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let programs = |word: &dyn Fn(u64) -> Mem| {
        vec![
            Box::new(Waiter(word(0))) as Box<dyn Program>,
            Box::new(Waker(word(0), false, WAKES as u32)),
        ]
    };
    let window = RunWindow {
        warmup: 0,
        duration: 2 * MS,
        stop: None,
    };
    let o = run_on_plain_table(&m, &[0, 64], programs, window);
    let [waits, waker_ops] = [o.metrics.ops_per_task[0], o.metrics.ops_per_task[1]];
    // Every wake (a compute and a FUTEX_WAKE each) completes one wait, and
    // the waiter is asleep in the next when the run ends.
    assert_eq!(waker_ops, 2 * WAKES);
    assert_eq!(waits, WAKES, "{waits} waits for {WAKES} wakes");
    assert_eq!(o.asleep_at_end, 1);
    // A completed wait lasted about one wake period: it slept.
    assert!(o.metrics.latency.max() > 9_000);
}

/// How long a lock benchmark's thread works between its acquires.
#[derive(Clone)]
enum Think {
    /// Drawn uniformly from the range.
    Uniform(std::ops::RangeInclusive<u64>),
    /// Drawn from an exponential distribution of this mean, as the
    /// Boyd-Wickizer Markov model assumes.
    Exponential(u64),
}

/// A task that takes one of the workload's spinlocks in a loop: hold it
/// for `hold`, then think for a time drawn from `think` (its own seeded
/// stream), as a lock benchmark's threads do.
struct LockLoop {
    lock: LockRef,
    hold: u64,
    think: Think,
    rng: Xoshiro256PlusPlus,
    phase: u8,
}

impl Program for LockLoop {
    fn next_op(&mut self) -> Op {
        self.phase = (self.phase + 1) % 4;
        match self.phase {
            1 => Op::SpinLock(self.lock),
            2 => Op::Compute(self.hold),
            3 => Op::SpinUnlock(self.lock),
            _ => Op::Compute(match &self.think {
                Think::Uniform(range) => self.rng.gen_range(range.clone()),
                Think::Exponential(mean) => {
                    let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                    (-u.ln() * *mean as f64) as u64
                }
            }),
        }
    }
}

/// Runs one `LockLoop` per CPU of `cpus` on one lock word; returns the run.
fn run_lock_loops(
    m: &Machine,
    lock: LockKind,
    cpus: &[u32],
    hold: u64,
    think: Think,
    seed: u64,
    window: RunWindow,
) -> Outcome {
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let lock = LockRef::new(0, word(0));
        (0..cpus.len() as u64)
            .map(|t| {
                Box::new(LockLoop {
                    lock,
                    hold,
                    think: think.clone(),
                    rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ (t << 32)),
                    phase: 0,
                }) as Box<dyn Program>
            })
            .collect()
    };
    run_process(
        m,
        &table("fixed-256").unwrap(),
        lock,
        cpus,
        programs,
        window,
    )
}

const NS: u64 = 1000;

#[test]
fn a_spinner_that_read_the_lock_held_does_not_take_it() {
    // The case that exposed spinners acting on state they had not read:
    // 16 threads, 20 ns critical sections, 50 ns between acquisitions.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let cpus: Vec<u32> = (0..16).collect();
    let window = RunWindow {
        warmup: MS / 100,
        duration: MS / 4,
        stop: None,
    };
    let o = run_lock_loops(
        &m,
        LockKind::Ticket,
        &cpus,
        20 * NS,
        Think::Uniform(50 * NS..=50 * NS),
        1,
        window,
    );
    assert!(o.metrics.locks.contended > 100, "{:?}", o.metrics.locks);
    assert_eq!(o.metrics.stale_acquisitions, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// No acquisition ever follows from a read of the lock word served
    /// before the lock's release, whatever the lock, the thread count and
    /// placement, the critical section and think times, and the seed.
    #[test]
    fn every_acquisition_follows_a_read_of_the_release(
        queued in any::<bool>(),
        threads in 2u32..24,
        spread in 1u32..4,
        hold_ns in 0u64..200,
        think_ns in 0u64..1000,
        seed in any::<u64>(),
    ) {
        let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
        let lock = if queued { LockKind::Queued } else { LockKind::Ticket };
        // Every `spread`-th CPU: one socket, or both.
        let cpus: Vec<u32> = (0..threads).map(|t| t * spread % m.cpus()).collect();
        let window = RunWindow { warmup: 5 * MS / 1000, duration: 20 * MS / 1000, stop: None };
        let o = run_lock_loops(&m, lock, &cpus, hold_ns * NS, Think::Uniform(0..=think_ns * NS), seed, window);
        prop_assert!(o.metrics.locks.acquisitions > 0);
        prop_assert_eq!(o.metrics.stale_acquisitions, 0, "{:?}", o.metrics.locks);
    }
}

#[test]
fn a_ticket_hand_off_grows_by_one_read_occupancy_per_spinner() {
    // Every thread comes straight back to the lock, so all but the holder
    // spin. Each release makes every spinner re-read the lock word: the
    // first takes it from the releaser's Modified copy, and the others'
    // reads of the now Shared line pipeline, each holding the line's
    // server for the read occupancy, not for a transfer, before the next
    // release can be served: the hand-off grows by one read occupancy per
    // spinner, on the shipped profile (one cache access) and at the top of
    // its plausible range (a clean hit) alike. From three spinners: with
    // one or two, the releasing thread's next xadd is served during the new
    // holder's 20 ns, after its re-read, so every release must read the
    // word back first (see the next check); with three or more that xadd
    // still waits behind the other re-reads when the holder releases. That
    // count holds where an ownership transfer (18.1 ns and the RMW) is about
    // the hold: at icx-2s's own 45.3 ns the releaser's xadd and the
    // re-reads interleave differently, and 3, 4, 8 and 16 spinners hand off
    // in 270, 272, 282 and 272 ns, steps the 1.2 ns read occupancy does not
    // set, so the transfer occupancy is held at 18.1 ns here.
    let with_short_transfers = |m: Machine| {
        let mut spec = m.spec.clone();
        spec.coherence.transfer_occupancy = Some(18.1);
        Machine::new(spec).unwrap()
    };
    for m in [
        Machine::new(machine("icx-2s").unwrap()).unwrap(),
        icx_with_serial_rereads(),
    ]
    .map(with_short_transfers)
    {
        a_hand_off_grows_by_a_read_occupancy_per_spinner(&m);
    }
}

fn a_hand_off_grows_by_a_read_occupancy_per_spinner(m: &Machine) {
    let occupancy = m.hierarchy.read_occupancy_ps as f64;
    let transfer = m.transfer_ps(0, 1) as f64;
    let window = RunWindow {
        warmup: MS / 50,
        duration: MS / 5,
        stop: None,
    };
    let hand_off = |spinners: u32| {
        let cpus: Vec<u32> = (0..=spinners).collect();
        assert!(cpus
            .iter()
            .all(|&c| m.transfer_ps(0, c) as f64 == transfer || c == 0));
        let o = run_lock_loops(
            m,
            LockKind::Ticket,
            &cpus,
            20 * NS,
            Think::Uniform(0..=0),
            1,
            window,
        );
        window.duration as f64 / o.metrics.locks.acquisitions as f64
    };
    let spinners = [3, 4, 8, 16];
    let times: Vec<f64> = spinners.iter().map(|&s| hand_off(s)).collect();
    for (pair, t) in spinners.windows(2).zip(times.windows(2)) {
        let slope = (t[1] - t[0]) / f64::from(pair[1] - pair[0]);
        assert!(
            (0.7..1.3).contains(&(slope / occupancy)),
            "{pair:?} spinners: {slope} ps per spinner, a read occupancy is {occupancy} ps; hand-offs {times:?}"
        );
    }
}

/// The time the lock was held: by a task on CPU 0 that takes it, holds
/// it 1 us and releases it, and by a second task on CPU 1, if `waiter`,
/// that asks for it 300 ns into that hold and so waits for the release.
fn hold_ps(m: &Machine, lock: LockKind, waiter: bool) -> u64 {
    let window = RunWindow {
        warmup: 0,
        duration: MS / 100,
        stop: None,
    };
    let cpus: &[u32] = if waiter { &[0, 1] } else { &[0] };
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let lock = LockRef::new(0, word(0));
        let mut programs = vec![script([
            Op::SpinLock(lock),
            Op::Compute(1000 * NS),
            Op::SpinUnlock(lock),
        ])];
        if waiter {
            programs.push(script([
                Op::Compute(300 * NS),
                Op::SpinLock(lock),
                Op::SpinUnlock(lock),
            ]));
        }
        programs
    };
    let o = run_process(
        m,
        &table("fixed-256").unwrap(),
        lock,
        cpus,
        programs,
        window,
    );
    assert_eq!(o.metrics.locks.acquisitions, cpus.len() as u64);
    o.metrics.locks.hold_ps
}

#[test]
fn a_ticket_release_reads_the_word_back_from_the_waiter_that_took_it() {
    // spin_unlock of a ticket lock reads the word before it stores the next
    // ticket to serve; the queued lock's stores its locked byte blind. Alone,
    // the holder's read is a hit. A waiter's xadd during the hold takes the
    // line, so the release must fetch it back first: one transfer more. The
    // waiter, which took the lock by re-reading the word, releases it from
    // its own copy: a hit. A hold ends when the release's store commits, and
    // the ticket holder's store, behind its read, commits a cache access
    // later than the queued holder's, which asks for the line at once.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let transfer = m.transfer_ps(1, 0);
    let extra =
        |waiter| hold_ps(&m, LockKind::Ticket, waiter) - hold_ps(&m, LockKind::Queued, waiter);
    assert_eq!(extra(false), m.l1_ps, "the holder's own line: a hit");
    assert_eq!(
        extra(true),
        transfer + 2 * m.l1_ps,
        "the line back from the waiter, the store behind it, then the waiter's hit"
    );
}

#[test]
fn a_qspinlock_matches_a_ticket_lock_at_two_threads_and_beats_it_beyond() {
    // One lock word, a 20 ns critical section, on average 200 ns between
    // acquires, one thread per core on one socket. The time between
    // acquires is drawn (0 to 400 ns): with a fixed one two threads fall
    // into lockstep, each arriving just as the other releases, and the
    // comparison is of that one phase, not of the locks. The ticket lock's
    // spinners re-read serially (`icx_with_serial_rereads`): with the
    // shipped profile's pipelined re-reads the two locks stay within 15 %
    // of each other from 2 to 32 threads (reports/qspinlock-vs-ticket).
    let m = icx_with_serial_rereads();
    let window = RunWindow {
        warmup: MS / 50,
        duration: MS / 5,
        stop: None,
    };
    let rate = |lock: LockKind, threads: u32| {
        let cpus: Vec<u32> = (0..threads).collect();
        let o = run_lock_loops(
            &m,
            lock,
            &cpus,
            20 * NS,
            Think::Uniform(0..=400 * NS),
            1,
            window,
        );
        o.metrics.locks.acquisitions as f64
    };
    let ratio = |threads| rate(LockKind::Queued, threads) / rate(LockKind::Ticket, threads);
    let ratios = [2, 3, 8, 32].map(ratio);
    // Two threads: the pending bit hands the lock on as a ticket does.
    // Three: the queued lock gains on the ticket lock, since a third
    // arrival that finds the pending waiter's hand-over to locked in
    // progress waits for it to settle and takes the pending bit rather
    // than queue (queued_spin_lock_slowpath's _Q_PENDING_VAL wait), while
    // the ticket lock's third spinner adds a re-read to every hand-off; but
    // not yet by the ticket lock's collapse, which the counts beyond show.
    assert!(
        (0.8..1.25).contains(&ratios[0]) && ratios[1] >= ratios[0] && ratios[1] < 1.5,
        "qspinlock/ticket at 2, 3, 8, 32 threads: {ratios:?}"
    );
    assert!(ratios[2] > 1.5, "{ratios:?}");
    assert!(ratios[3] > 2.0 * ratios[2], "{ratios:?}");
}

/// Plays a fixed list of ops, then exits.
struct Script(std::collections::VecDeque<Op>);
impl Program for Script {
    fn next_op(&mut self) -> Op {
        self.0.pop_front().unwrap_or(Op::Exit)
    }
}

/// A program that runs `ops` in order, then exits.
fn script(ops: impl IntoIterator<Item = Op>) -> Box<dyn Program> {
    Box::new(Script(ops.into_iter().collect()))
}

#[test]
fn a_store_retires_at_once_and_a_locked_rmw_waits_for_its_drain() {
    // CPU 32 (the other socket) dirties a word; a microsecond later CPU 0
    // stores to it, then makes a locked RMW on a line of its own. The clock
    // is read around each.
    let run = |store_buffer: u32| {
        let mut spec = machine("icx-2s").unwrap();
        spec.core.store_buffer = store_buffer;
        let m = Machine::new(spec).unwrap();
        let window = RunWindow {
            warmup: 0,
            duration: MS / 100,
            stop: None,
        };
        let programs = |word: &dyn Fn(u64) -> Mem| {
            let (shared, own) = (word(0), word(256));
            vec![
                Box::new(Script(
                    [
                        Op::Access(own, AccessKind::Write),
                        Op::Sleep(1000 * NS),
                        Op::Clock,
                        Op::Access(shared, AccessKind::Write),
                        Op::Clock,
                        Op::Access(own, AccessKind::Rmw),
                        Op::Clock,
                    ]
                    .into(),
                )) as Box<dyn Program>,
                Box::new(Script([Op::Access(shared, AccessKind::Write)].into())),
            ]
        };
        let o = run_on_plain_table(&m, &[0, 32], programs, window);
        let t = &o.timeline.clock_reads[0];
        (t[1] - t[0], t[2] - t[1], m)
    };
    let (store, rmw, m) = run(72);
    let transfer = m.transfer_ps(32, 0);
    assert_eq!(store, m.l1_ps, "the store retires into the buffer");
    assert!(
        rmw >= transfer,
        "the RMW waits for the store's line: {rmw} ps, a transfer is {transfer} ps"
    );
    let (store, rmw, m) = run(0);
    assert!(
        store >= transfer,
        "without a buffer the store waits: {store}"
    );
    assert_eq!(
        rmw,
        m.l1_ps + m.rmw_ps,
        "and the RMW finds nothing to drain"
    );
}

#[test]
fn a_queued_lock_heads_prefetch_of_its_successors_node_counts_as_no_store() {
    // Five tasks take one queued lock once each, 100 ns apart, holding it
    // 2 us: the first holds it, the second pends, the third heads the MCS
    // queue, the fourth and fifth (on the other socket) queue behind it.
    // Made head, the fourth prefetches the fifth's node for write. The
    // window leaves room for every release (the last about 10.5 us in).
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: MS / 10,
        stop: None,
    };
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let lock = LockRef::new(0, word(0));
        (1..=5)
            .map(|k| {
                script([
                    Op::Compute(k * 100 * NS),
                    Op::SpinLock(lock),
                    Op::Compute(2000 * NS),
                    Op::SpinUnlock(lock),
                ])
            })
            .collect()
    };
    let o = run_on_plain_table(&m, &[0, 1, 2, 3, 32], programs, window);
    assert_eq!(o.metrics.stale_acquisitions, 0);
    // Every store and atomic of the protocol, and nothing for the prefetch:
    // the fast path's cmpxchg and the release (1: 2); the cmpxchg,
    // fetch_set_pending, clear_pending_set_locked and the release (2: 4);
    // the cmpxchg, xchg_tail, set_locked, the hand-on and the release (3:
    // 5); the cmpxchg, xchg_tail, its link, set_locked, the hand-on and the
    // release (4: 6); the cmpxchg, xchg_tail, its link, the last waiter's
    // cmpxchg and the release (5: 5).
    assert_eq!(o.directory.totals.stores, 22);
}

#[test]
fn a_queued_lock_on_a_weakly_ordered_core_does_not_wait_for_the_stores_before_it() {
    // CPU 40 dirties a word; a microsecond later CPU 0 stores to it (a
    // transfer it must wait for to commit), then takes an uncontended
    // spinlock on a line of its own, the clock read around the lock.
    let run = |profile: &str, model: MemoryModel, lock: LockKind| {
        let mut spec = machine(profile).unwrap();
        spec.core.memory_model = model;
        let m = Machine::new(spec).unwrap();
        let window = RunWindow {
            warmup: 0,
            duration: MS / 100,
            stop: None,
        };
        let programs = |word: &dyn Fn(u64) -> Mem| {
            let (shared, lock) = (word(0), word(256));
            let lock = LockRef::new(0, lock);
            vec![
                Box::new(Script(
                    [
                        Op::Access(lock.word(), AccessKind::Write),
                        Op::Sleep(1000 * NS),
                        Op::Access(shared, AccessKind::Write),
                        Op::Clock,
                        Op::SpinLock(lock),
                        Op::Clock,
                    ]
                    .into(),
                )) as Box<dyn Program>,
                Box::new(Script([Op::Access(shared, AccessKind::Write)].into())),
            ]
        };
        let design = table("aligned-3.14").unwrap();
        let o = run_process(&m, &design, lock, &[0, 40], programs, window);
        let t = &o.timeline.clock_reads[0];
        (t[1] - t[0], m)
    };
    let (acquire, m) = run("graviton2-64", MemoryModel::Weak, LockKind::Queued);
    let transfer = m.transfer_ps(40, 0);
    assert_eq!(
        acquire,
        m.l1_ps + m.rmw_ps,
        "the acquire cmpxchg takes the lock while the store drains"
    );
    let (full, _) = run("graviton2-64", MemoryModel::Weak, LockKind::Ticket);
    assert!(
        full >= transfer,
        "the ticket lock's fully ordered fetch_add waits for the store: {full} ps"
    );
    let (tso, _) = run("graviton2-64", MemoryModel::Tso, LockKind::Queued);
    assert!(
        tso >= transfer,
        "under total store order every locked RMW waits: {tso} ps"
    );
}

#[test]
fn a_store_that_waits_at_its_line_waits_in_the_store_buffer_not_in_its_task() {
    // CPU 1 takes a word Modified on the other socket (a transfer that holds the line's
    // server), and CPU 0 stores to the word while it does. CPU 0's store
    // waits at the line in its buffer: the task goes on at once, and only
    // its locked RMW (on a line of its own) waits for the store to drain.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: MS / 100,
        stop: None,
    };
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let (shared, own) = (word(0), word(256));
        vec![
            script(vec![
                Op::Access(own, AccessKind::Write),
                Op::Sleep(1020 * NS),
                Op::Clock,
                Op::Access(shared, AccessKind::Write),
                Op::Clock,
                Op::Access(own, AccessKind::Rmw),
                Op::Clock,
            ]),
            script(vec![
                Op::Sleep(1000 * NS),
                Op::Access(shared, AccessKind::Write),
            ]),
            script(vec![Op::Access(shared, AccessKind::Write)]),
        ]
    };
    let o = run_process(
        &m,
        &table("aligned-3.14").unwrap(),
        LockKind::Queued,
        &[0, 1, 32],
        programs,
        window,
    );
    let t = &o.timeline.clock_reads[0];
    let (store, rmw) = (t[1] - t[0], t[2] - t[1]);
    assert_eq!(store, m.l1_ps, "the store retires into the buffer");
    // The drain waits for CPU 1's transfer to free the server, then CPU
    // 0's own from CPU 1.
    let own_transfer = m.transfer_ps(1, 0);
    assert!(
        rmw > own_transfer + m.rmw_ps,
        "the RMW waits for the store's grant and transfer: {rmw} ps, a transfer is {own_transfer} ps"
    );
}

/// What CPU 2 reads of word B while CPU 0 changes it with `op` behind an
/// older store that waits at its busy line (CPU 1 is taking that line from
/// the other socket): the (issue time, value) of each of CPU 2's loads,
/// and when CPU 0's locked RMW after both, which waits for the drain, ends.
fn reads_behind_a_held_store(op: AtomicOp) -> (Vec<(u64, u32)>, u64) {
    use std::sync::{Arc, Mutex};
    struct Poller {
        word: UserWord,
        plan: std::collections::VecDeque<Op>,
        issued: u64,
        seen: Arc<Mutex<Vec<(u64, u32)>>>,
    }
    impl Program for Poller {
        fn next_op(&mut self) -> Op {
            self.plan
                .pop_front()
                .unwrap_or(Op::Atomic(self.word, AtomicOp::Load))
        }
        fn op_returned(&mut self, done: futexsim::task::Done) {
            // Each load issues as the op before it returns, and is served then.
            if self.issued > 0 {
                self.seen
                    .lock()
                    .unwrap()
                    .push((self.issued, done.ret as u32));
            }
            self.issued = done.now;
        }
    }
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: 3000 * NS,
        stop: None,
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let drained = Arc::new(Mutex::new(0));
    struct Clocked(std::collections::VecDeque<Op>, Arc<Mutex<u64>>);
    impl Program for Clocked {
        fn next_op(&mut self) -> Op {
            self.0.pop_front().unwrap_or(Op::Exit)
        }
        fn op_returned(&mut self, done: futexsim::task::Done) {
            *self.1.lock().unwrap() = done.now;
        }
    }
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let (a, b, own) = (word(0), word(256), word(512));
        let b = UserWord {
            mem: b,
            kind: KeyKind::Private,
        };
        vec![
            Box::new(Clocked(
                [
                    Op::Access(b.mem, AccessKind::Write),
                    Op::Access(own, AccessKind::Write),
                    Op::Compute(1020 * NS),
                    Op::Access(a, AccessKind::Write),
                    Op::Atomic(b, op),
                    Op::Access(own, AccessKind::Rmw),
                ]
                .into(),
                drained.clone(),
            )) as Box<dyn Program>,
            script(vec![
                Op::Compute(1000 * NS),
                Op::Access(a, AccessKind::Write),
            ]),
            Box::new(Poller {
                word: b,
                plan: [Op::Compute(1025 * NS)].into(),
                issued: 0,
                seen: seen.clone(),
            }),
            script(vec![Op::Access(a, AccessKind::Write)]),
        ]
    };
    run_process(
        &m,
        &table("aligned-3.14").unwrap(),
        LockKind::Queued,
        &[0, 1, 2, 32],
        programs,
        window,
    );
    let seen = seen.lock().unwrap().clone();
    let drained = *drained.lock().unwrap();
    (seen, drained)
}

#[test]
fn a_user_atomic_held_behind_an_older_store_is_not_seen_before_it_commits() {
    for op in [AtomicOp::Store(1), AtomicOp::Add(1)] {
        let (seen, drained) = reads_behind_a_held_store(op);
        assert!(
            drained > 1100 * NS,
            "{op:?}: the drain ends at {drained} ps"
        );
        let early: Vec<_> = seen.iter().filter(|&&(at, _)| at < 1090 * NS).collect();
        assert!(!early.is_empty(), "{op:?}: CPU 2 read early: {seen:?}");
        assert!(
            early.iter().all(|&&(_, v)| v == 0),
            "{op:?}: a read served before the store commits shows it: {seen:?}"
        );
        // Every read served once the drain is over shows the new value,
        // and none before the old one again.
        let first_new = seen.iter().position(|&(_, v)| v == 1);
        let Some(first_new) = first_new else {
            panic!("{op:?}: the value never shows: {seen:?}");
        };
        assert!(seen[first_new..].iter().all(|&(_, v)| v == 1), "{seen:?}");
        assert!(
            seen.iter().all(|&(at, v)| at < drained || v == 1),
            "{seen:?}"
        );
    }
}

/// One writer stores 1, 2, 3 ... to a word, each store behind a store to a
/// line another CPU keeps busy (so some wait in the buffer), and reads the
/// word back after each; readers on other CPUs and sockets load it in a
/// loop (CPU 33 keeps the other line busy). The values each task saw, in
/// order.
fn values_seen(cpus: [u32; 3], gaps_ns: [u64; 3], stores: u32) -> Vec<Vec<u32>> {
    use std::sync::{Arc, Mutex};
    struct Seen {
        plan: std::collections::VecDeque<Op>,
        loading: bool,
        seen: Arc<Mutex<Vec<u32>>>,
    }
    impl Program for Seen {
        fn next_op(&mut self) -> Op {
            let op = self.plan.pop_front().unwrap_or(Op::Exit);
            self.loading = matches!(op, Op::Atomic(_, AtomicOp::Load));
            op
        }
        fn op_returned(&mut self, done: futexsim::task::Done) {
            if self.loading {
                self.seen.lock().unwrap().push(done.ret as u32);
            }
        }
    }
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: MS,
        stop: None,
    };
    let seen: Vec<_> = (0..3).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let (w, busy) = (word(0), word(256));
        let w = UserWord {
            mem: w,
            kind: KeyKind::Private,
        };
        let load = Op::Atomic(w, AtomicOp::Load);
        let writer: std::collections::VecDeque<Op> = (1..=stores)
            .flat_map(|i| {
                [
                    Op::Access(busy, AccessKind::Write),
                    Op::Atomic(w, AtomicOp::Store(i)),
                    load,
                    Op::Compute(gaps_ns[0] * NS),
                ]
            })
            .collect();
        let reader = |gap: u64| -> std::collections::VecDeque<Op> {
            (0..2 * stores)
                .flat_map(|_| [load, Op::Compute(gap * NS)])
                .collect()
        };
        let hog: Vec<Op> = (0..4 * stores)
            .flat_map(|_| [Op::Access(busy, AccessKind::Write), Op::Compute(20 * NS)])
            .collect();
        vec![
            Box::new(Seen {
                plan: writer,
                loading: false,
                seen: seen[0].clone(),
            }) as Box<dyn Program>,
            Box::new(Seen {
                plan: reader(gaps_ns[1]),
                loading: false,
                seen: seen[1].clone(),
            }),
            Box::new(Seen {
                plan: reader(gaps_ns[2]),
                loading: false,
                seen: seen[2].clone(),
            }),
            Box::new(Script(hog.into())),
        ]
    };
    run_on_plain_table(&m, &[cpus[0], cpus[1], cpus[2], 33], programs, window);
    seen.iter().map(|s| s.lock().unwrap().clone()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Coherence of one word through the store buffer: the writer reads
    /// back what it stored last (forwarded from its buffer while the store
    /// waits there), and no reader ever sees an older value after a newer
    /// one, whatever the CPUs and the gaps.
    #[test]
    fn each_task_sees_a_words_stores_in_order_and_its_own_at_once(
        writer in 0u32..4,
        readers in (4u32..32, 34u32..64),
        gaps in (0u64..200, 0u64..200, 0u64..200),
    ) {
        const STORES: u32 = 40;
        let seen = values_seen([writer, readers.0, readers.1], [gaps.0, gaps.1, gaps.2], STORES);
        let own: Vec<u32> = (1..=STORES).collect();
        prop_assert_eq!(&seen[0], &own, "the writer's read-backs");
        for reader in &seen[1..] {
            prop_assert!(reader.windows(2).all(|p| p[0] <= p[1]), "{:?}", reader);
            prop_assert!(reader.iter().all(|&v| v <= STORES), "{:?}", reader);
        }
        prop_assert!(seen[1..].iter().any(|r| r.iter().any(|&v| v > 0)), "{:?}", seen);
    }
}

#[test]
fn smt_siblings_that_both_compute_share_the_cores_throughput() {
    struct Work;
    impl Program for Work {
        fn next_op(&mut self) -> Op {
            Op::Compute(1000 * NS)
        }
    }
    struct Sleep;
    impl Program for Sleep {
        fn next_op(&mut self) -> Op {
            Op::Sleep(1000 * NS)
        }
    }
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let factor = m.spec.core.smt_throughput;
    let sibling = m.sibling_of(0).unwrap();
    assert_eq!(m.core_of(sibling), m.core_of(0));
    let window = RunWindow {
        warmup: MS / 100,
        duration: MS / 10,
        stop: None,
    };
    // The work CPU 0 gets done beside `beside` on `cpu`.
    let work = |cpu: u32, beside: fn() -> Box<dyn Program>| {
        let programs = |_: &dyn Fn(u64) -> Mem| vec![Box::new(Work) as Box<dyn Program>, beside()];
        let o = run_on_plain_table(&m, &[0, cpu], programs, window);
        o.metrics.ops_per_task[0] as f64
    };
    let busy = || Box::new(Work) as Box<dyn Program>;
    let asleep = || Box::new(Sleep) as Box<dyn Program>;
    let alone = work(1, busy);
    let shared = work(sibling, busy);
    assert!(
        (shared / alone / (factor / 2.0) - 1.0).abs() < 0.02,
        "beside a computing sibling: {shared} of {alone}; the profile says {}",
        factor / 2.0
    );
    // A sibling that sleeps leaves the core's execution to the other.
    assert_eq!(work(sibling, asleep), alone);
}

/// One wake-up every 50 us from CPU 0 of a task asleep on `wakee_cpu`: the
/// mean time the waker's FUTEX_WAKE takes, and the mean time from the
/// wake's start until the wakee runs again, in ps.
fn wake_up_times(m: &Machine, wakee_cpu: u32) -> (u64, u64) {
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Times {
        wake_started: Vec<u64>,
        wake_took: Vec<u64>,
        woken_at: Vec<u64>,
    }
    struct Waiter(Mem, Arc<Mutex<Times>>);
    impl Program for Waiter {
        fn next_op(&mut self) -> Op {
            Op::Futex(FutexOp::Wait {
                uaddr: self.0,
                val: 0,
                kind: KeyKind::Private,
            })
        }
        fn op_returned(&mut self, done: futexsim::task::Done) {
            self.1.lock().unwrap().woken_at.push(done.now);
        }
    }
    struct Waker(Mem, bool, Arc<Mutex<Times>>);
    impl Program for Waker {
        fn next_op(&mut self) -> Op {
            self.1 = !self.1;
            if self.1 {
                Op::Sleep(50_000_000)
            } else {
                Op::Futex(FutexOp::Wake {
                    uaddr: self.0,
                    nr: 1,
                    kind: KeyKind::Private,
                })
            }
        }
        fn op_returned(&mut self, done: futexsim::task::Done) {
            let mut t = self.2.lock().unwrap();
            if self.1 {
                t.wake_started.push(done.now);
            } else if let Some(&start) = t.wake_started.last() {
                t.wake_took.push(done.now - start);
            }
        }
    }
    let times = Arc::new(Mutex::new(Times::default()));
    let programs = |word: &dyn Fn(u64) -> Mem| {
        vec![
            Box::new(Waker(word(0), false, times.clone())) as Box<dyn Program>,
            Box::new(Waiter(word(0), times.clone())),
        ]
    };
    let window = RunWindow {
        warmup: 0,
        duration: MS,
        stop: None,
    };
    run_on_plain_table(m, &[0, wakee_cpu], programs, window);
    let t = times.lock().unwrap();
    let n = t.wake_took.len().min(t.woken_at.len());
    assert!(n > 10, "{n} wake-ups");
    let mean = |v: &mut dyn Iterator<Item = u64>| v.sum::<u64>() / n as u64;
    let took = mean(&mut t.wake_took.iter().take(n).copied());
    let latency = mean(&mut (0..n).map(|i| t.woken_at[i].saturating_sub(t.wake_started[i])));
    (took, latency)
}

#[test]
fn a_wake_up_takes_longer_when_the_wakee_is_idle_on_another_socket() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let other_socket = (0..m.cpus()).find(|&c| m.place(c).socket == 1).unwrap();
    let same_cpu = wake_up_times(&m, 0);
    let same_socket = wake_up_times(&m, 1);
    let remote = wake_up_times(&m, other_socket);
    // The waker sends an IPI only to another CPU, and the runqueue lock
    // and task_struct lines come from further away on the other socket.
    assert!(same_cpu.0 < same_socket.0, "{same_cpu:?} {same_socket:?}");
    assert!(same_socket.0 < remote.0, "{same_socket:?} {remote:?}");
    // The wakee on another CPU, idle and polling (icx-2s's mwait idle),
    // waits for no IPI but for its exit from idle.
    let k = &m.sched;
    assert!(k.idle_polls);
    assert!(same_socket.1 >= same_cpu.0 + k.idle_exit, "{same_socket:?}");
    assert!(remote.1 > same_socket.1, "{same_socket:?} {remote:?}");
}

/// icx-2s with its scheduler's section changed by `change`.
fn icx_with(change: impl Fn(&mut futexsim::machine::SchedulerSpec)) -> Machine {
    let mut spec = machine("icx-2s").unwrap();
    change(&mut spec.scheduler);
    Machine::new(spec).unwrap()
}

#[test]
fn an_idle_cpu_that_polls_is_woken_without_an_ipi() {
    let polling = icx_with(|s| s.idle_polls = true);
    let halting = icx_with(|s| s.idle_polls = false);
    let (polled, halted) = (wake_up_times(&polling, 1), wake_up_times(&halting, 1));
    let k = &halting.sched;
    // Halted, the wakee waits for the IPI's delivery; polling, it does
    // not. (The waker's side differs by the send against the polling
    // CPU's cmpxchg: the_waker_sets_a_polling_idle_cpus_need_resched_flag...)
    assert!(halted.1 >= polled.1 + k.ipi, "{polled:?} {halted:?}");
}

#[test]
fn the_waker_pays_the_ipis_send_to_a_cpu_that_does_not_poll() {
    let cheap = icx_with(|s| {
        s.idle_polls = false;
        s.ipi_send = 100.0;
    });
    let dear = icx_with(|s| {
        s.idle_polls = false;
        s.ipi_send = 700.0;
    });
    let (cheap_took, dear_took) = (wake_up_times(&cheap, 1).0, wake_up_times(&dear, 1).0);
    // 600 ns more a send, each wake-up sending one.
    let more = dear_took.abs_diff(cheap_took + 600_000);
    assert!(more < 10_000, "{cheap_took} {dear_took}");
}

#[test]
fn a_wake_up_across_llcs_is_queued_on_the_target_without_its_runqueue_lock() {
    let queued = icx_with(|s| s.ttwu_queue = true);
    let locked = icx_with(|s| s.ttwu_queue = false);
    let other_socket = (0..queued.cpus())
        .find(|&c| queued.place(c).socket == 1)
        .unwrap();
    assert_ne!(queued.llc_of(0), queued.llc_of(other_socket));
    let by_list = wake_up_times(&queued, other_socket).0;
    let by_lock = wake_up_times(&locked, other_socket).0;
    // The waker takes no remote lock, but stores `ttwu_pending`, links the
    // wakee onto the target's list (a read and a cmpxchg) and reads and
    // sets the polling idle task's flags (a read and a cmpxchg): more of
    // the target's lines than the lock's, so on an uncontended lock the
    // queued wake-up costs the waker more; it pays off where wakers would
    // contend for the target's lock, which this run does not have.
    assert!(
        by_list > by_lock,
        "queued {by_list} ps, locked {by_lock} ps"
    );
}

/// A task that runs `ops` in order, then computes 1 ms at a time for good.
struct Ops {
    ops: Vec<Op>,
    at: usize,
    affinity: Affinity,
}
impl Program for Ops {
    fn next_op(&mut self) -> Op {
        self.at += 1;
        self.ops
            .get(self.at - 1)
            .copied()
            .unwrap_or(Op::Compute(MS))
    }
    fn affinity(&self) -> Affinity {
        self.affinity
    }
}

/// A wakee that is free to move sleeps on CPU 1, where a hog then computes
/// in 1 ms steps, as do `more_hogs` more on CPUs 2 on; a waker on CPU 0,
/// busy too, wakes it 50 us in. The time from the waker's clock read
/// before FUTEX_WAKE until the wakee's after it returns, in ps, on icx-2s
/// with `outstanding_misses` (its own 12 when None).
fn wake_latency_beside_hogs(
    placement: TaskPlacement,
    more_hogs: u32,
    outstanding_misses: Option<u32>,
) -> u64 {
    let mut spec = machine("icx-2s").unwrap();
    spec.scheduler.placement = placement;
    if let Some(misses) = outstanding_misses {
        spec.core.outstanding_misses = misses;
    }
    let m = Machine::new(spec).unwrap();
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let (wait, wake) = (
            FutexOp::Wait {
                uaddr: word(0),
                val: 0,
                kind: KeyKind::Private,
            },
            FutexOp::Wake {
                uaddr: word(0),
                nr: 1,
                kind: KeyKind::Private,
            },
        );
        let task = |ops: Vec<Op>, affinity| {
            Box::new(Ops {
                ops,
                at: 0,
                affinity,
            }) as Box<dyn Program>
        };
        let hogs = (0..=more_hogs).map(|_| task(Vec::new(), Affinity::Pinned));
        [
            task(
                vec![Op::Compute(MS / 20), Op::Clock, Op::Futex(wake)],
                Affinity::Pinned,
            ),
            task(
                vec![Op::Futex(wait), Op::Clock, Op::Exit],
                Affinity::CpusFrom(0),
            ),
        ]
        .into_iter()
        .chain(hogs)
        .collect()
    };
    let window = RunWindow {
        warmup: 0,
        duration: 5 * MS,
        stop: None,
    };
    let cpus: Vec<u32> = [0, 1].into_iter().chain(1..=1 + more_hogs).collect();
    let o = run_on_plain_table(&m, &cpus, programs, window);
    let reads = &o.timeline.clock_reads;
    reads[1][0] - reads[0][0]
}

fn wake_latency_beside_a_hog(placement: TaskPlacement) -> u64 {
    wake_latency_beside_hogs(placement, 0, None)
}

#[test]
fn a_waker_on_a_busy_cpu_places_the_wakee_on_an_idle_cpu_of_its_llc() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    assert_eq!(m.llc_of(1), m.llc_of(2), "CPU 2 is idle beside CPU 1");
    let placed = wake_latency_beside_a_hog(TaskPlacement::Placed);
    let pinned = wake_latency_beside_a_hog(TaskPlacement::Pinned);
    // Placed, the wakee runs on an idle CPU after the wake's accesses and
    // a shallow idle exit (the CPU polls: no IPI); pinned, it waits behind the hog's 1 ms
    // compute step on its own CPU.
    let k = &m.sched;
    assert!(placed >= k.idle_exit, "{placed}");
    assert!(placed < 20_000_000, "placed: {placed} ps");
    assert!(pinned > MS / 2, "pinned: {pinned} ps");
}

#[test]
fn a_pinned_workload_runs_the_same_placed_or_not() {
    let scenario = |placement| {
        let mut spec = machine("milan-2s").unwrap();
        spec.scheduler.placement = placement;
        perf_hash_64_futexes(spec, "v6.16", 300)
    };
    let record = |placement| scenario(placement).simulate().unwrap().0;
    let (pinned, placed) = (record(TaskPlacement::Pinned), record(TaskPlacement::Placed));
    assert!(pinned.ops > 0);
    assert_eq!(
        serde_json::to_string(&pinned).unwrap(),
        serde_json::to_string(&placed).unwrap(),
        "perf bench futex hash pins every thread"
    );
}

#[test]
fn outstanding_misses_change_a_wake_up_whose_placement_reads_busy_runqueues_at_once() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    assert_eq!(
        m.llc_of(1),
        m.llc_of(9),
        "the scan from CPU 1 passes CPUs 2 to 8 first"
    );
    // wake_affine reads CPU 1's and CPU 0's runqueues; select_idle_sibling
    // then scans from its target past the 8 busy CPUs to the first idle
    // one. Each group's reads overlap up to the core's misses in flight.
    let latency = |misses| wake_latency_beside_hogs(TaskPlacement::Placed, 7, Some(misses));
    let (one, two, twelve) = (latency(1), latency(2), latency(12));
    assert!(one > two && two > twelve, "{one} {two} {twelve} ps");
    // Eight runqueue misses one after another, against about one.
    assert!(one - twelve > 4 * m.llc_ps, "{one} against {twelve} ps");
}

#[test]
fn outstanding_misses_change_nothing_where_every_load_waits_for_the_one_before() {
    // perf bench futex hash: its only load that nothing waits for at once
    // is futex_wait's read of the user word, one an op; every other read
    // follows a locked RMW or gives the next access its address.
    let record = |misses| {
        let mut spec = machine("milan-2s").unwrap();
        spec.core.outstanding_misses = misses;
        perf_hash_64_futexes(spec, "private-6.17", 48)
            .simulate()
            .unwrap()
            .0
    };
    let (one, many) = (record(1), record(24));
    assert!(one.ops > 0);
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&many).unwrap()
    );
}

#[test]
fn the_tick_cuts_a_long_compute_step_and_its_remainder_runs_script() {
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let step = 20 * MS;
    let programs = |_: &dyn Fn(u64) -> Mem| {
        let task = |ops: Vec<Op>| {
            Box::new(Ops {
                ops,
                at: 0,
                affinity: Affinity::Pinned,
            }) as Box<dyn Program>
        };
        vec![
            task(vec![Op::Compute(step), Op::Clock, Op::Exit]),
            task(vec![Op::Clock]),
        ]
    };
    let window = RunWindow {
        warmup: 0,
        duration: 60 * MS,
        stop: None,
    };
    let o = run_on_plain_table(&m, &[0, 0], programs, window);
    let reads = &o.timeline.clock_reads;
    let (long_done, other_first) = (reads[0][0], reads[1][0]);
    // The second task runs at the first tick past the first one's slice,
    // not after its 20 ms step; the step's remainder is not lost: it ends
    // once it has had 20 ms of the CPU, the other task's turns between,
    // which alternate with its own (the last cut may leave it a sliver).
    let k = &m.sched;
    let first_cut = k.slice.div_ceil(k.tick) * k.tick;
    assert!(
        (first_cut..first_cut + MS / 100).contains(&other_first),
        "{other_first}"
    );
    assert!(long_done > step + 2 * k.slice, "{long_done}");
    assert!(long_done < 2 * step + k.tick, "{long_done}");
}

/// A thread that adds to one shared word back to back, forever.
struct Increment(Mem);
impl Program for Increment {
    fn next_op(&mut self) -> Op {
        let word = UserWord {
            mem: self.0,
            kind: KeyKind::Private,
        };
        Op::Atomic(word, AtomicOp::Add(1))
    }
}

/// ns between increments when `cpus` add to one word through the engine.
fn increment_ns(m: &Machine, cpus: &[u32]) -> f64 {
    let window = RunWindow {
        warmup: MS / 1000,
        duration: MS / 100,
        stop: None,
    };
    let programs = |word: &dyn Fn(u64) -> Mem| {
        cpus.iter()
            .map(|_| Box::new(Increment(word(0))) as Box<dyn Program>)
            .collect()
    };
    let design = table("fixed-256").unwrap();
    let o = run_process(m, &design, LockKind::Queued, cpus, programs, window);
    window.duration as f64 / 1000.0 / total_ops(&o) as f64
}

#[test]
fn contended_increments_wait_for_their_grant_as_the_directory_arbitrates() {
    // The engine parks each increment that finds the line busy until the line's turn grants it, so what it
    // runs is what the directory's own probe predicts, on one socket and
    // across two, and a socket that keeps the line for a batch of grants
    // crosses less and runs faster.
    let with_batch = |batch| {
        let mut spec = machine("icx-2s").unwrap();
        spec.coherence.local_batch = Some(batch);
        Machine::new(spec).unwrap()
    };
    let m = with_batch(0);
    let other = (1..m.cpus()).find(|&c| m.llc_of(c) != m.llc_of(0)).unwrap();
    let one_socket = [0, 1, 2, 3];
    let both = [0, 1, other, other + 1];
    for cpus in [&one_socket, &both] {
        let engine = increment_ns(&m, cpus);
        let probe = contended_rmw_ns(&m, cpus, 400);
        assert!(
            (engine / probe - 1.0).abs() < 0.05,
            "{cpus:?}: {engine:.1} ns an increment in the engine, {probe:.1} in the probe"
        );
    }
    let local = increment_ns(&m, &one_socket);
    let across = increment_ns(&m, &both);
    assert!(
        across > 1.3 * local,
        "{across:.1} ns across sockets, {local:.1} on one"
    );
    let crossing_each = increment_ns(&with_batch(1), &both);
    let batched = increment_ns(&with_batch(2), &both);
    assert!(
        batched < crossing_each,
        "a batch of 2: {batched:.1} ns, of 1: {crossing_each:.1}"
    );
}

/// A `Script` that keeps what each user atomic returned.
struct Recorded {
    script: Script,
    returned: std::sync::Arc<std::sync::Mutex<Vec<i64>>>,
    atomic: bool,
}
impl Program for Recorded {
    fn next_op(&mut self) -> Op {
        let op = self.script.next_op();
        self.atomic = matches!(op, Op::Atomic(..));
        op
    }
    fn op_returned(&mut self, done: futexsim::task::Done) {
        if self.atomic {
            if let Ok(mut r) = self.returned.lock() {
                r.push(done.ret);
            }
        }
    }
}

#[test]
fn relaxed_adds_on_a_weakly_ordered_core_run_while_it_holds_the_line_and_none_is_lost() {
    // Two CPUs each add 1 to one counter 400 times with relaxed adds whose
    // result nothing uses; each reads the counter at once after its adds,
    // then again once both are surely done.
    const ADDS: usize = 400;
    let run = |model: MemoryModel| {
        let mut spec = machine("graviton2-64").unwrap();
        spec.core.memory_model = model;
        let m = Machine::new(spec).unwrap();
        let window = RunWindow {
            warmup: 0,
            duration: MS / 10,
            stop: None,
        };
        let returned: Vec<_> = (0..2)
            .map(|_| std::sync::Arc::new(std::sync::Mutex::new(Vec::new())))
            .collect();
        let programs = |word: &dyn Fn(u64) -> Mem| {
            let counter = UserWord {
                mem: word(0),
                kind: KeyKind::Private,
            };
            returned
                .iter()
                .map(|r| {
                    let mut ops: std::collections::VecDeque<Op> =
                        std::iter::repeat_n(Op::RelaxedAtomic(counter, AtomicOp::Add(1)), ADDS)
                            .collect();
                    ops.push_back(Op::Atomic(counter, AtomicOp::Load));
                    ops.push_back(Op::Sleep(MS / 100));
                    ops.push_back(Op::Atomic(counter, AtomicOp::Load));
                    Box::new(Recorded {
                        script: Script(ops),
                        returned: r.clone(),
                        atomic: false,
                    }) as Box<dyn Program>
                })
                .collect()
        };
        let o = run_on_plain_table(&m, &[0, 1], programs, window);
        let loads: Vec<Vec<i64>> = returned
            .iter()
            .map(|r| r.lock().map(|v| v.clone()).unwrap_or_default())
            .collect();
        (o.directory.totals.transfers(), loads)
    };
    let (runs, loads) = run(MemoryModel::Weak);
    for seen in &loads {
        assert!(
            seen[0] >= ADDS as i64,
            "its own adds are seen at once: {loads:?}"
        );
        assert_eq!(seen[1], 2 * ADDS as i64, "no add is lost: {loads:?}");
    }
    assert!(
        runs * 8 < 2 * ADDS as u64,
        "the line moves once for a run of adds: {runs} transfers"
    );
    // Under total store order every locked add is a full barrier: the line
    // moves at nearly every add.
    let (each, loads) = run(MemoryModel::Tso);
    assert_eq!(loads[0][1], 2 * ADDS as i64);
    assert!(
        each * 2 > 2 * ADDS as u64,
        "a locked add waits for its line each time: {each} transfers"
    );
}

#[test]
fn stores_to_a_line_an_older_store_waits_for_commit_with_its_grant() {
    // Eight CPUs on two sockets each store to one word 400 times, 2 ns of
    // compute apart: a CPU's stores pile up in its buffer while its oldest
    // waits at the line. A store that finds an older one of its CPU waiting
    // there rides with it: the one ownership request brings the line for
    // every store to it in the buffer, so the line moves about once a run
    // of stores, not once a store (each asking on its own, queued between
    // the other CPUs' requests, the line moved nearly every store).
    const CPUS: [u32; 8] = [0, 1, 2, 3, 32, 33, 34, 35];
    const STORES: u64 = 400;
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: MS / 10,
        stop: None,
    };
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let shared = word(0);
        CPUS.iter()
            .map(|_| {
                script(
                    (0..STORES)
                        .flat_map(|_| [Op::Access(shared, AccessKind::Write), Op::Compute(2 * NS)]),
                )
            })
            .collect()
    };
    let o = run_on_plain_table(&m, &CPUS, programs, window);
    let transfers = o.directory.totals.transfers();
    let stores = STORES * CPUS.len() as u64;
    assert!(
        transfers >= CPUS.len() as u64 - 1,
        "every CPU takes the line"
    );
    assert!(
        transfers * 10 < stores,
        "the line moves once for a run of stores: {transfers} transfers for {stores} stores"
    );
}

#[test]
fn a_store_whose_line_was_taken_while_it_waited_asks_for_it_again() {
    // CPU 0 owns line Y. At 1020 ns it stores to X, whose server is busy
    // with CPU 1 taking X from the other socket, so the store waits in the
    // buffer; its next store, to Y, hits but must commit after it. CPU 3
    // takes Y at 1030 ns, before X's grant. When the X store commits, the Y
    // store behind it no longer has its line: it asks for Y again, and Y
    // ends in CPU 0's cache, not CPU 3's.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: 0,
        duration: MS / 100,
        stop: None,
    };
    let y_line = std::cell::Cell::new(None);
    let programs = |word: &dyn Fn(u64) -> Mem| {
        let (x, y, own) = (word(0), word(256), word(512));
        y_line.set(Some(y.line));
        vec![
            script(vec![
                Op::Access(y, AccessKind::Write),
                Op::Access(own, AccessKind::Write),
                Op::Sleep(1020 * NS),
                Op::Access(x, AccessKind::Write),
                Op::Access(y, AccessKind::Write),
                // The locked RMW waits for both stores to commit.
                Op::Access(own, AccessKind::Rmw),
            ]),
            script(vec![Op::Sleep(1000 * NS), Op::Access(x, AccessKind::Write)]),
            script(vec![Op::Access(x, AccessKind::Write)]),
            script(vec![Op::Sleep(1030 * NS), Op::Access(y, AccessKind::Write)]),
        ]
    };
    let o = run_on_plain_table(&m, &[0, 1, 32, 3], programs, window);
    let Some(y) = y_line.get() else {
        panic!("the programs were written")
    };
    assert!(
        o.directory.owned_by(&m, 0, y),
        "the store to Y commits in CPU 0's cache after CPU 3 took the line"
    );
    assert!(!o.directory.owned_by(&m, 3, y));
}

#[test]
fn a_failed_wait_holds_the_bucket_lock_until_its_release_commits_behind_the_words_read() {
    // futex_wait reads the word under the lock; on the path that fails,
    // the era before 6.16 releases the lock at once (its `waiters` drops
    // after spin_unlock), a plain store that retires while the read is in
    // flight and commits behind it. The hold ends at the commit, so it
    // covers the read (here a hit), never 0.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let window = RunWindow {
        warmup: MS / 100,
        duration: MS / 100,
        stop: None,
    };
    for era in ["aligned-3.14", "v6.17"] {
        let o = run_waits(
            &m,
            &table(era).unwrap(),
            LockKind::Queued,
            &[(0, 0)],
            window,
        );
        let locks = &o.metrics.locks;
        assert!(locks.acquisitions > 0);
        let hold = locks.hold_ps / locks.acquisitions;
        assert!(hold >= m.l1_ps, "{era}: held {hold} ps an acquisition");
    }
}

#[test]
fn a_waker_decides_on_the_waiters_count_its_line_served_not_the_one_at_the_reads_completion() {
    // The waker on the other socket reads `waiters` 10 ns before the
    // waiter's futex_hb_waiters_inc reaches the line: the line serves the
    // read first, so the count it returns is 0 and FUTEX_WAKE returns
    // without the bucket lock, though the waiter is counted long before
    // the read's data arrives.
    let m = Machine::new(machine("icx-2s").unwrap()).unwrap();
    let programs = |word: &dyn Fn(u64) -> Mem| {
        vec![
            script([
                Op::Compute(10_000),
                Op::Futex(FutexOp::Wait {
                    uaddr: word(0),
                    val: 0,
                    kind: KeyKind::Private,
                }),
            ]),
            script([Op::Futex(FutexOp::Wake {
                uaddr: word(0),
                nr: 1,
                kind: KeyKind::Private,
            })]),
        ]
    };
    let window = RunWindow {
        warmup: 0,
        duration: MS / 100,
        stop: None,
    };
    let o = run_on_plain_table(&m, &[0, 64], programs, window);
    assert_eq!(o.metrics.ops_per_task[1], 1, "the wake completed");
    assert_eq!(
        o.metrics.locks.acquisitions, 1,
        "only the waiter took the bucket lock"
    );
    assert_eq!(o.asleep_at_end, 1, "the wake found nobody to wake");
}

#[test]
fn the_waker_sets_a_polling_idle_cpus_need_resched_flag_with_a_cmpxchg_on_its_idle_tasks_line() {
    // With the IPI free, a halting target costs the waker only
    // set_nr_if_polling's read of flags nobody wrote; a polling one also
    // its cmpxchg of the line the target wrote when it last left its
    // polling loop.
    let free_ipi = |polls: bool| {
        icx_with(|s| {
            s.idle_polls = polls;
            s.ipi_send = 0.0;
            s.ipi = 0.0;
        })
    };
    let polled = wake_up_times(&free_ipi(true), 1).0;
    let halted = wake_up_times(&free_ipi(false), 1).0;
    assert!(polled > halted, "polling {polled} ps, halting {halted} ps");
}

#[test]
fn an_idle_cpu_woken_by_an_ipi_runs_its_handler_before_the_wakee() {
    let handler = |ns: f64| {
        icx_with(|s| {
            s.idle_polls = false;
            s.ipi_handler = ns;
        })
    };
    let (short, long) = (
        wake_up_times(&handler(500.0), 1),
        wake_up_times(&handler(1500.0), 1),
    );
    // The waker does not wait for the handler; the wakee runs 1 us later.
    assert_eq!(short.0, long.0);
    let later = (long.1 - short.1).abs_diff(1_000_000);
    assert!(later < 10_000, "{short:?} {long:?}");
}

#[test]
fn a_queued_wake_up_leaves_the_target_its_wake_list_and_its_runqueue_lock_before_the_wakee_runs() {
    let queued = icx_with(|s| s.ttwu_queue = true);
    let locked = icx_with(|s| s.ttwu_queue = false);
    let (by_list, by_lock) = (wake_up_times(&queued, 1), wake_up_times(&locked, 1));
    // After the waker is done, the target of a queued wake-up still takes
    // the list the waker wrote (an xchg), the runqueue line the waker
    // wrote `ttwu_pending` in (its lock) and the wakee's first line the
    // waker linked (TASK_RUNNING): three lines from the waker's core.
    let after = |t: (u64, u64)| t.1 - t.0;
    assert!(
        after(by_list) >= after(by_lock) + 2 * queued.llc_ps,
        "queued {by_list:?}, locked {by_lock:?}"
    );
}
