//! Where a counted op's time goes: each stretch of the op's simulated time,
//! from its start to its end, charged to what the task waited on during it
//! (a step's access and how the directory served it, a compute step, a lock
//! another task held, sleep...). Kept only when a run's options ask for it
//! (`RunOptions::explain`). The engine is generic over what it tells
//! (`Attribute`): a run that does not ask runs the engine built for
//! `Unattributed`, whose every call compiles to nothing, so its event loop
//! is the one it was before attribution existed; the one branch is the
//! scenario's choice of engine.
//!
//! The accounting telescopes: each task keeps the instant up to which its
//! op's time is charged and what it has waited on since. A step's start,
//! a compute step's parts, a lock's acquisition and the op's end each
//! charge the stretch since that instant and say what the task waits on
//! next, so an op's parts sum to its latency to the picosecond, and each
//! op checks that they do (`unbalanced_ops`).
//!
//! A plain store retires into the store buffer and commits in the
//! background: the task does not wait for it, so its transfer is not the
//! op's time. Only a step that must wait for the buffer (a fence, a locked
//! RMW, a full buffer) is charged for it, as that step's wait before it is
//! issued (`Served::Ordering`).

use crate::coherence::Class;
use crate::kernel::script::{Cost, Step};
use crate::machine::Ps;
use crate::symbol::Symbol;
use crate::task::Op;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a stretch of an op's time was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Syscall entry and exit (half of the profile's syscall cost each,
    /// the era's mitigations included).
    Syscall,
    /// get_futex_key's work on the key, apart from its accesses.
    Key,
    /// jhash2 of the key.
    Hash,
    /// schedule() on the way to sleep.
    Schedule,
    /// Fixed work: a workload's user-space compute, or kernel work it
    /// stands for.
    Work,
    /// One memory access of the script.
    Access,
    /// Loads issued earlier, waited for (at a join, or the op's end).
    LoadsInFlight,
    /// A spinlock's acquiring atomic, the lock free.
    Lock,
    /// A spinlock another task held: spinning, or queued in the slow path.
    LockWait,
    /// A spinlock's release.
    Unlock,
    /// Asleep (futex_wait, a workload's wait or sleep) until woken.
    Sleep,
    /// A user-space spin on a word.
    Spin,
    /// The wake-up's IPI to the wakee's CPU (ttwu_do_activate).
    WakeUp,
    /// The CPU not the task's alone: compute stretched by its SMT sibling
    /// or cut by the tick, or the task preempted at the op's return.
    CpuShared,
    /// Steps that take no time of their own (decisions, return values).
    Other,
}

impl Part {
    /// How the part reads in a report.
    pub const fn name(self) -> &'static str {
        match self {
            Part::Syscall => "syscall entry/exit",
            Part::Key => "futex key",
            Part::Hash => "jhash2",
            Part::Schedule => "schedule",
            Part::Work => "work",
            Part::Access => "access",
            Part::LoadsInFlight => "loads in flight",
            Part::Lock => "lock",
            Part::LockWait => "lock wait",
            Part::Unlock => "unlock",
            Part::Sleep => "sleep",
            Part::Spin => "spin",
            Part::WakeUp => "wake-up IPI",
            Part::CpuShared => "CPU shared",
            Part::Other => "other",
        }
    }

    /// The part a compute step's cost is.
    fn of_cost(cost: Cost) -> Part {
        match cost {
            Cost::SyscallHalf => Part::Syscall,
            Cost::FutexKeyPrivate | Cost::FutexKeyShared => Part::Key,
            Cost::Jhash2 => Part::Hash,
            Cost::Schedule => Part::Schedule,
            Cost::Ps(_) => Part::Work,
        }
    }

    /// What a task waits on from an op's start until its first step runs:
    /// the whole op, for the ops that have no steps of their own.
    pub(super) fn before_steps(op: &Op) -> Part {
        match op {
            Op::WaitEvent(..) | Op::Sleep(_) => Part::Sleep,
            Op::SpinUntil(..) => Part::Spin,
            _ => Part::Other,
        }
    }
}

/// How an access was served, as perf c2c names the classes (the
/// directory's own `Class`); or that it was not served yet: waiting behind
/// the task's own earlier accesses (the store buffer's drain, loads in
/// flight), or queued at its busy line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Served {
    Ordering,
    Queued,
    /// Written as the class alone ("L1Hit"), as before it was wrapped.
    #[serde(untagged)]
    By(Class),
}

impl Served {
    /// How the outcome reads in a report.
    pub const fn name(self) -> &'static str {
        match self {
            Served::Ordering => "ordering",
            Served::Queued => "queued at line",
            Served::By(Class::L1Hit) => "L1 hit",
            Served::By(Class::LclHit) => "LLC hit",
            Served::By(Class::RmtHit) => "remote hit",
            Served::By(Class::LclHitm) => "local HITM",
            Served::By(Class::RmtHitm) => "remote HITM",
            Served::By(Class::DramLcl) => "local DRAM",
            Served::By(Class::DramRmt) => "remote DRAM",
        }
    }
}

/// What one stretch of an op's time is charged to: the part, the function
/// that made the access, how it was served and the byte it touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Charge {
    pub part: Part,
    pub by: Option<Symbol>,
    pub served: Option<Served>,
    pub addr: Option<u64>,
}

impl Charge {
    const fn of(part: Part) -> Charge {
        Charge {
            part,
            by: None,
            served: None,
            addr: None,
        }
    }

    /// An access of `addr` by `by`, not served yet.
    const fn access(part: Part, by: Symbol, addr: u64) -> Charge {
        Charge {
            part,
            by: Some(by),
            served: Some(Served::Ordering),
            addr: Some(addr),
        }
    }

    /// What a task waits on once `step` starts; `atomic` is the address
    /// of the op's user atomic, for `Step::Atomic`.
    fn of_step(step: &Step, atomic: Option<u64>) -> Charge {
        match *step {
            Step::Compute(_) => Charge::of(Part::CpuShared),
            Step::Access(a) => Charge::access(Part::Access, a.by, a.mem().addr),
            Step::RelaxedRmw(t) | Step::AcquireRmw(t) | Step::Load(t) => {
                Charge::access(Part::Access, t.by, t.mem().addr)
            }
            Step::WaitersInc(w) => {
                Charge::access(Part::Access, Symbol::FutexHbWaitersInc, w.mem().addr)
            }
            Step::WaitersRead(w) => {
                Charge::access(Part::Access, Symbol::FutexHbWaitersPending, w.mem().addr)
            }
            Step::Atomic => Charge {
                addr: atomic,
                ..Charge::access(Part::Access, Symbol::Workload, 0)
            },
            Step::Lock(lock) => Charge::access(Part::Lock, Symbol::RawSpinLock, lock.word().addr),
            Step::Unlock(lock) => {
                Charge::access(Part::Unlock, Symbol::RawSpinUnlock, lock.word().addr)
            }
            Step::Block => Charge::of(Part::Sleep),
            Step::Activate(_) => Charge {
                by: Some(Symbol::TtwuDoActivate),
                ..Charge::of(Part::WakeUp)
            },
            Step::Join | Step::OpDone => Charge::of(Part::LoadsInFlight),
            Step::Decide(_) | Step::Wake(_) | Step::Returns(_) => Charge::of(Part::Other),
        }
    }
}

/// One task's op in flight, as charged so far.
struct Account {
    /// The instant up to which the op's time is charged.
    since: Ps,
    /// What the task has waited on since then.
    on: Charge,
    /// Whether `on` is a load that nothing waits for yet.
    on_load: bool,
    /// The last load issued, with how it was served: what a wait for the
    /// loads in flight waits on.
    last_load: Option<Charge>,
    /// The op's stretches so far, a run of the same charge as one.
    parts: Vec<(Charge, Ps)>,
}

/// A charge's time and how many stretches it took, over the counted ops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Total {
    pub ps: u64,
    pub count: u64,
}

/// What the engine tells of a task's time, at each point where it
/// advances: an op begins, a step starts, the directory serves a request,
/// a compute step runs, a lock is taken, an op returns or is measured.
pub trait Attribute {
    /// The task's op begins at `now`, waiting on `part` until its first
    /// step: afresh when each op is measured, else (an iteration of ops
    /// measured as one) after the stretch since the last op.
    fn op_begins(&mut self, task: u32, now: Ps, afresh: bool, part: Part);
    /// A step of the task's script starts at `now`; `atomic` is the
    /// address of the op's user atomic.
    fn step_starts(&mut self, task: u32, now: Ps, step: &Step, atomic: Option<u64>);
    /// The directory answered the task's request as `served`.
    fn served(&mut self, task: u32, served: Served);
    /// A compute step (and those right after it) runs from the stretch's
    /// start: each of `costs`, priced as `price` says, is charged in turn,
    /// and whatever the step takes beyond them is the CPU's, shared.
    fn computed(&mut self, task: u32, costs: &[Step], price: impl Fn(Cost) -> Ps);
    /// The task took the lock it asked for at `at`; `contended` when it
    /// waited for another holder, so that the wait, not the atomic, is
    /// what its stretch was spent on.
    fn acquired(&mut self, task: u32, at: Ps, contended: bool);
    /// The task's op returned at `now`; until its next op begins, the task
    /// waits for its CPU.
    fn op_returned(&mut self, task: u32, now: Ps);
    /// What the task measures (an op, or an iteration) ended at `now`,
    /// begun at `start`: its parts are checked against its latency and,
    /// when `counted`, kept.
    fn measured(&mut self, task: u32, now: Ps, start: Ps, counted: bool);
    /// What the run found, if it attributed anything.
    fn finish(self) -> Option<Breakdown>;
}

/// A run that keeps no attribution: every call is nothing.
pub struct Unattributed;

impl Attribute for Unattributed {
    #[inline(always)]
    fn op_begins(&mut self, _: u32, _: Ps, _: bool, _: Part) {}
    #[inline(always)]
    fn step_starts(&mut self, _: u32, _: Ps, _: &Step, _: Option<u64>) {}
    #[inline(always)]
    fn served(&mut self, _: u32, _: Served) {}
    #[inline(always)]
    fn computed(&mut self, _: u32, _: &[Step], _: impl Fn(Cost) -> Ps) {}
    #[inline(always)]
    fn acquired(&mut self, _: u32, _: Ps, _: bool) {}
    #[inline(always)]
    fn op_returned(&mut self, _: u32, _: Ps) {}
    #[inline(always)]
    fn measured(&mut self, _: u32, _: Ps, _: Ps, _: bool) {}
    fn finish(self) -> Option<Breakdown> {
        None
    }
}

/// The run's attribution: every task's op in flight, and the totals of
/// the counted ops.
pub struct Attribution {
    accounts: Vec<Account>,
    totals: BTreeMap<Charge, Total>,
    ops: u64,
    latency_ps: u64,
    unbalanced_ops: u64,
}

/// What a run's attribution found, by charge (each access by its address).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// The counted ops.
    pub ops: u64,
    /// Their latencies summed: the charges' times sum to it.
    pub latency_ps: u64,
    /// Counted ops whose parts did not sum to their latency: none, unless
    /// the accounting has a hole.
    pub unbalanced_ops: u64,
    pub charges: Vec<(Charge, Total)>,
}

impl Attribution {
    pub(super) fn new(tasks: usize) -> Attribution {
        let account = || Account {
            since: 0,
            on: Charge::of(Part::Other),
            on_load: false,
            last_load: None,
            parts: Vec::new(),
        };
        Attribution {
            accounts: (0..tasks).map(|_| account()).collect(),
            totals: BTreeMap::new(),
            ops: 0,
            latency_ps: 0,
            unbalanced_ops: 0,
        }
    }

    /// Charges the task's stretch up to `now` to what it waited on.
    fn close(&mut self, task: u32, now: Ps) {
        let a = &mut self.accounts[task as usize];
        // An instant before `since` is already charged: a spinner acts on
        // the lock word as the directory served it, which can be before a
        // stretch charged since. Moving `since` back would charge that
        // stretch twice.
        if now > a.since {
            add(&mut a.parts, a.on, now - a.since);
            a.since = now;
        }
    }

    fn waits_on(&mut self, task: u32, on: Charge, on_load: bool) {
        let a = &mut self.accounts[task as usize];
        a.on = on;
        a.on_load = on_load;
    }
}

impl Attribute for Attribution {
    fn op_begins(&mut self, task: u32, now: Ps, afresh: bool, part: Part) {
        if afresh {
            let a = &mut self.accounts[task as usize];
            a.parts.clear();
            a.since = now;
        } else {
            self.close(task, now);
        }
        self.waits_on(task, Charge::of(part), false);
    }

    fn step_starts(&mut self, task: u32, now: Ps, step: &Step, atomic: Option<u64>) {
        self.close(task, now);
        let mut on = Charge::of_step(step, atomic);
        if on.part == Part::LoadsInFlight {
            if let Some(load) = self.accounts[task as usize].last_load {
                on = Charge {
                    part: Part::LoadsInFlight,
                    ..load
                };
            }
        }
        self.waits_on(task, on, matches!(step, Step::Load(_)));
    }

    fn served(&mut self, task: u32, served: Served) {
        let a = &mut self.accounts[task as usize];
        if a.on.served.is_some() {
            a.on.served = Some(served);
            if a.on_load {
                a.last_load = Some(a.on);
            }
        }
    }

    fn computed(&mut self, task: u32, costs: &[Step], price: impl Fn(Cost) -> Ps) {
        let a = &mut self.accounts[task as usize];
        for step in costs {
            if let Step::Compute(cost) = *step {
                let ps = price(cost);
                add(&mut a.parts, Charge::of(Part::of_cost(cost)), ps);
                a.since += ps;
            }
        }
        a.on = Charge::of(Part::CpuShared);
    }

    fn acquired(&mut self, task: u32, at: Ps, contended: bool) {
        if contended {
            let a = &mut self.accounts[task as usize];
            a.on.part = Part::LockWait;
            a.on.served = None;
        }
        self.close(task, at);
        let a = &mut self.accounts[task as usize];
        a.on = Charge {
            part: Part::Lock,
            served: None,
            ..a.on
        };
    }

    fn op_returned(&mut self, task: u32, now: Ps) {
        self.close(task, now);
        self.waits_on(task, Charge::of(Part::CpuShared), false);
    }

    fn measured(&mut self, task: u32, now: Ps, start: Ps, counted: bool) {
        self.op_returned(task, now);
        let a = &mut self.accounts[task as usize];
        if counted {
            let latency = now - start;
            let charged: Ps = a.parts.iter().map(|(_, ps)| ps).sum();
            self.ops += 1;
            self.latency_ps += latency;
            self.unbalanced_ops += u64::from(charged != latency);
            for &(charge, ps) in &a.parts {
                let total = self.totals.entry(charge).or_default();
                total.ps += ps;
                total.count += 1;
            }
        }
        a.parts.clear();
    }

    fn finish(self) -> Option<Breakdown> {
        Some(Breakdown {
            ops: self.ops,
            latency_ps: self.latency_ps,
            unbalanced_ops: self.unbalanced_ops,
            charges: self.totals.into_iter().collect(),
        })
    }
}

/// Adds `ps` of `charge` to an op's stretches: a run of the same charge
/// (a step that ran again) is one.
fn add(parts: &mut Vec<(Charge, Ps)>, charge: Charge, ps: Ps) {
    if ps == 0 {
        return;
    }
    match parts.last_mut() {
        Some((last, sum)) if *last == charge => *sum += ps,
        _ => parts.push((charge, ps)),
    }
}

/// Where a run's counted ops spent their time, each access named by the
/// field it touched: the record's form of a [`Breakdown`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeSpent {
    pub ops: u64,
    /// The ops' latencies summed, in picoseconds: the rows' `ps` sum to it.
    pub latency_ps: u64,
    /// Counted ops whose parts did not sum to their latency (none).
    pub unbalanced_ops: u64,
    /// The rows, the most time first.
    pub rows: Vec<TimeRow>,
}

/// One row of a run's time: a part, its function, how its access was
/// served and what it touched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeRow {
    pub part: Part,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<Symbol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<Served>,
    /// The field or region the access touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The time over every counted op, in picoseconds.
    pub ps: u64,
    /// Stretches over every counted op.
    pub count: u64,
    pub ns_per_op: f64,
    pub count_per_op: f64,
}

impl Breakdown {
    /// The record's form: each address named by `field`, the rows that
    /// then share every name summed.
    pub fn named(self, field: impl Fn(u64) -> String) -> TimeSpent {
        type Key = (Part, Option<Symbol>, Option<Served>, Option<String>);
        let mut rows: BTreeMap<Key, Total> = BTreeMap::new();
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        for (charge, total) in self.charges {
            let name = charge
                .addr
                .map(|addr| names.entry(addr).or_insert_with(|| field(addr)).clone());
            let row = rows
                .entry((charge.part, charge.by, charge.served, name))
                .or_default();
            row.ps += total.ps;
            row.count += total.count;
        }
        let per_op = self.ops.max(1) as f64;
        let mut rows: Vec<TimeRow> = rows
            .into_iter()
            .map(|((part, symbol, served, field), total)| TimeRow {
                part,
                symbol,
                served,
                field,
                ps: total.ps,
                count: total.count,
                ns_per_op: total.ps as f64 / 1000.0 / per_op,
                count_per_op: total.count as f64 / per_op,
            })
            .collect();
        // The most time first; the key orders ties, so the order is the run's own.
        rows.sort_by_key(|row| std::cmp::Reverse(row.ps));
        TimeSpent {
            ops: self.ops,
            latency_ps: self.latency_ps,
            unbalanced_ops: self.unbalanced_ops,
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compute(cost: Cost) -> Step {
        Step::Compute(cost)
    }

    #[test]
    fn an_op_s_compute_wait_and_end_sum_to_its_latency() {
        let mut a = Attribution::new(1);
        a.op_begins(0, 1_000, true, Part::Other);
        a.step_starts(0, 1_000, &compute(Cost::SyscallHalf), None);
        a.computed(
            0,
            &[compute(Cost::SyscallHalf), compute(Cost::Jhash2)],
            |c| {
                if c == Cost::Jhash2 {
                    30_000
                } else {
                    50_000
                }
            },
        );
        // The compute ended 5 ns late: its sibling's share.
        a.step_starts(0, 86_000, &Step::OpDone, None);
        a.measured(0, 86_000, 1_000, true);
        let b = a
            .finish()
            .expect("an attribution finishes with its breakdown");
        assert_eq!(b.ops, 1);
        assert_eq!(b.unbalanced_ops, 0);
        assert_eq!(b.latency_ps, 85_000);
        let of = |part| {
            b.charges
                .iter()
                .filter(|(c, _)| c.part == part)
                .map(|(_, t)| t.ps)
                .sum::<u64>()
        };
        assert_eq!(of(Part::Syscall), 50_000);
        assert_eq!(of(Part::Hash), 30_000);
        assert_eq!(of(Part::CpuShared), 5_000);
    }

    #[test]
    fn an_uncounted_op_leaves_no_time_and_the_next_starts_afresh() {
        let mut a = Attribution::new(1);
        a.op_begins(0, 0, true, Part::Sleep);
        a.measured(0, 7_000, 0, false);
        a.op_begins(0, 9_000, true, Part::Spin);
        a.measured(0, 10_000, 9_000, true);
        let b = a
            .finish()
            .expect("an attribution finishes with its breakdown");
        assert_eq!((b.ops, b.latency_ps, b.unbalanced_ops), (1, 1_000, 0));
        assert_eq!(b.charges.len(), 1);
        assert_eq!(b.charges[0].0.part, Part::Spin);
    }

    #[test]
    fn a_contended_lock_s_stretch_is_its_wait_and_an_uncontended_one_its_atomic() {
        let lock = crate::kernel::script::LockRef::new(0, crate::memory::Mem { addr: 64, line: 1 });
        let mut a = Attribution::new(2);
        for (task, contended) in [(0, true), (1, false)] {
            a.op_begins(task, 0, true, Part::Other);
            a.step_starts(task, 0, &Step::Lock(lock), None);
            a.served(task, Served::By(Class::LclHitm));
            a.acquired(task, 40_000, contended);
            a.measured(task, 40_000, 0, true);
        }
        let b = a
            .finish()
            .expect("an attribution finishes with its breakdown");
        let parts: Vec<(Part, Option<Served>)> =
            b.charges.iter().map(|(c, _)| (c.part, c.served)).collect();
        assert_eq!(
            parts,
            [
                (Part::Lock, Some(Served::By(Class::LclHitm))),
                (Part::LockWait, None)
            ]
        );
    }

    #[test]
    fn a_lock_acquired_as_of_an_instant_already_charged_charges_nothing_twice() {
        let lock = crate::kernel::script::LockRef::new(0, crate::memory::Mem { addr: 64, line: 1 });
        let mut a = Attribution::new(1);
        a.op_begins(0, 0, true, Part::Other);
        a.step_starts(0, 0, &Step::Lock(lock), None);
        a.step_starts(0, 30_000, &Step::Lock(lock), None);
        // The spinner acts on the word as served at 25 ns, before the
        // 30 ns its account has reached.
        a.acquired(0, 25_000, true);
        a.measured(0, 50_000, 0, true);
        let b = a
            .finish()
            .expect("an attribution finishes with its breakdown");
        assert_eq!((b.ops, b.latency_ps, b.unbalanced_ops), (1, 50_000, 0));
        assert_eq!(b.charges.iter().map(|(_, t)| t.ps).sum::<u64>(), 50_000);
    }

    #[test]
    fn a_wait_for_loads_in_flight_is_charged_to_the_last_load_as_served() {
        let mem = crate::memory::Mem { addr: 128, line: 2 };
        let mut a = Attribution::new(1);
        a.op_begins(0, 0, true, Part::Other);
        a.step_starts(0, 0, &Step::load(mem, Symbol::FutexHash), None);
        a.served(0, Served::By(Class::RmtHitm));
        a.step_starts(0, 1_000, &Step::Join, None);
        a.measured(0, 90_000, 0, true);
        let b = a
            .finish()
            .expect("an attribution finishes with its breakdown");
        let waited = b
            .charges
            .iter()
            .find(|(c, _)| c.part == Part::LoadsInFlight)
            .expect("the join waited");
        assert_eq!(waited.0.by, Some(Symbol::FutexHash));
        assert_eq!(waited.0.served, Some(Served::By(Class::RmtHitm)));
        assert_eq!(waited.0.addr, Some(128));
        assert_eq!(waited.1.ps, 89_000);
    }

    #[test]
    fn named_rows_merge_addresses_of_one_field_and_sort_by_time() {
        let at = |addr| Charge::access(Part::Access, Symbol::PlistAdd, addr);
        let breakdown = Breakdown {
            ops: 2,
            latency_ps: 10_000,
            unbalanced_ops: 0,
            charges: vec![
                (
                    at(0),
                    Total {
                        ps: 1_000,
                        count: 1,
                    },
                ),
                (
                    at(64),
                    Total {
                        ps: 2_000,
                        count: 1,
                    },
                ),
                (
                    Charge::of(Part::Syscall),
                    Total {
                        ps: 7_000,
                        count: 2,
                    },
                ),
            ],
        };
        let spent = breakdown.named(|_| "chain".to_string());
        assert_eq!(spent.rows.len(), 2);
        assert_eq!(spent.rows[0].part, Part::Syscall);
        assert_eq!(spent.rows[1].ps, 3_000);
        assert_eq!(spent.rows[1].count_per_op, 1.0);
        assert_eq!(spent.rows[1].field.as_deref(), Some("chain"));
        assert_eq!(
            spent.rows.iter().map(|r| r.ps).sum::<u64>(),
            spent.latency_ps
        );
    }
}
