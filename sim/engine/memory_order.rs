//! What one core has in flight, and how its SMT sibling slows it: the
//! store buffer, the outstanding loads, the shared execution. A plain
//! store retires at once and drains in order in the background; a locked
//! RMW waits for the drain. Independent loads overlap up to the core's
//! outstanding-miss limit, and a step that depends on them waits. Without
//! these an op that adds a line to its path pays the line's whole miss in
//! sequence, which real cores do not.
//!
//! A drained store is served by the directory when it is issued (its
//! ownership request goes out at once, as a core's RFO for a store in its
//! buffer does) and becomes visible in order: spinners on its line wake
//! when it commits, after every older store and every older load (TSO
//! keeps a store behind earlier loads). The directory serves requests in
//! the order they are made, so a read by another CPU made after the store
//! returns its value, and a read made before does not: causality holds.

use super::{Engine, Redo};
use crate::coherence::{AccessKind, Class};
use crate::machine::{Machine, Ps};
use crate::memory::Mem;

/// One CPU's accesses in flight and the compute it runs.
pub(super) struct CpuOrder {
    /// When each of the last `store_buffer` stores commits, as a ring: a
    /// store that finds its slot not yet drained waits for it.
    commits: Box<[Ps]>,
    next_store: usize,
    /// When the youngest store commits: every later one commits after it.
    committed_by: Ps,
    /// When each outstanding miss completes (free once past).
    misses: Box<[Ps]>,
    /// When the last issued load completes: a dependent step waits for it.
    loads_done: Ps,
    /// When the compute the CPU runs ends: its sibling's compute stretches
    /// while the two overlap.
    computing_until: Ps,
    /// Compute time owed: a step that ran while the sibling started
    /// computing was slowed after it was timed.
    owed: Ps,
}

impl CpuOrder {
    pub(super) fn new(m: &Machine) -> CpuOrder {
        CpuOrder {
            commits: vec![0; m.store_buffer as usize].into_boxed_slice(),
            next_store: 0,
            committed_by: 0,
            misses: vec![0; m.outstanding_misses as usize].into_boxed_slice(),
            loads_done: 0,
            computing_until: 0,
            owed: 0,
        }
    }
}

/// How a plain store went.
pub(super) struct Stored {
    /// When the task goes on.
    pub at: Ps,
    /// Whether it goes on in this event (no wait worth one).
    pub at_once: bool,
}

impl Engine<'_> {
    #[inline]
    fn order_of(&mut self, task: u32) -> &mut CpuOrder {
        let cpu = self.tasks[task as usize].cpu as usize;
        &mut self.order[cpu]
    }

    /// When the loads the task issued and has not awaited complete, if
    /// after `now`: a step that depends on them waits until then.
    #[inline]
    pub(super) fn loads_pending(&mut self, task: u32, now: Ps) -> Option<Ps> {
        let done = self.order_of(task).loads_done;
        (done > now).then_some(done)
    }

    /// When a locked RMW (or a fence) may start, if after `now`: once the
    /// store buffer has drained and the outstanding loads are in.
    #[inline]
    pub(super) fn fence_pending(&mut self, task: u32, now: Ps) -> Option<Ps> {
        let o = self.order_of(task);
        let ready = o.committed_by.max(o.loads_done);
        (ready > now).then_some(ready)
    }

    /// A plain store: it retires into the store buffer and the task goes
    /// on; the line is asked for now and the value is visible, spinners
    /// woken, when it commits in order. Without a store buffer the task
    /// waits for the line. None when the line's request waits for its
    /// grant: the task waits with it (its commit, and every later one, is
    /// known only then).
    #[inline]
    pub(super) fn store(&mut self, task: u32, now: Ps, mem: Mem) -> Option<Stored> {
        let cpu = self.tasks[task as usize].cpu;
        let out = self.ask(task, now, mem, AccessKind::Write)?;
        let l1 = self.m.l1_ps;
        let o = &mut self.order[cpu as usize];
        if o.commits.is_empty() {
            self.wake_spinners(mem.line, out.done);
            return Some(Stored {
                at: out.done,
                at_once: out.class == Class::L1Hit,
            });
        }
        // A full buffer holds the store until its oldest entry drains.
        let slot = &mut o.commits[o.next_store];
        let retire = now.max(*slot) + l1;
        let commit = out.done.max(o.committed_by).max(o.loads_done);
        *slot = commit;
        o.committed_by = commit;
        // A compare, not a modulo: a division would cost more than the rest of the store.
        o.next_store += 1;
        if o.next_store == o.commits.len() {
            o.next_store = 0;
        }
        self.wake_spinners(mem.line, commit);
        Some(Stored {
            at: retire,
            at_once: retire <= now + l1,
        })
    }

    /// Issues a load the next steps do not depend on: it takes a free
    /// miss slot (or waits for the first to free: the time it may issue,
    /// as Err) and completes in the background; false when it waits at its
    /// line for a grant (the task waits with it).
    pub(super) fn issue_load(&mut self, task: u32, now: Ps, mem: Mem) -> Result<bool, Ps> {
        let cpu = self.tasks[task as usize].cpu;
        let o = &self.order[cpu as usize];
        let (slot, free_at) = o
            .misses
            .iter()
            .enumerate()
            .min_by_key(|&(_, &done)| done)
            .map_or((0, 0), |(i, &done)| (i, done));
        if free_at > now {
            return Err(free_at);
        }
        let Some(out) = self.request(task, now, mem, AccessKind::Read) else {
            // It waits at its line; the step runs again once granted.
            self.park(task, Redo::Step);
            return Ok(false);
        };
        let o = &mut self.order[cpu as usize];
        if out.class != Class::L1Hit {
            o.misses[slot] = out.done;
        }
        o.loads_done = o.loads_done.max(out.done);
        Ok(true)
    }

    /// When a compute step of `work` that starts at `now` ends. While the
    /// CPU's SMT sibling computes, the two share the core's execution and
    /// the step runs at the profile's share; past the sibling's step, at
    /// full speed. The sibling's step, timed when it started alone, was
    /// slowed over the overlap as well: it owes that time, and its next
    /// compute step pays it. A sibling that sleeps, idles or spins (pause
    /// hands the core's execution to the other thread; a spinner waiting
    /// on its line's miss is stalled) does not count as busy.
    pub(super) fn compute_end(&mut self, task: u32, now: Ps, work: Ps) -> Ps {
        let cpu = self.tasks[task as usize].cpu as usize;
        let stretch = self.m.smt_stretch_permille;
        let work = work + std::mem::take(&mut self.order[cpu].owed);
        let sibling = self
            .siblings
            .get(cpu)
            .and_then(|&s| self.order.get_mut(s as usize));
        let end = match sibling {
            Some(sib) if sib.computing_until > now && stretch > 1000 => {
                let shared = sib.computing_until - now;
                let stretched = work * stretch / 1000;
                let (end, overlap) = if stretched <= shared {
                    (now + stretched, stretched)
                } else {
                    // The work done while shared, then the rest alone.
                    (sib.computing_until + work - shared * 1000 / stretch, shared)
                };
                let owed = overlap - overlap * 1000 / stretch;
                sib.owed += owed;
                sib.computing_until += owed;
                end
            }
            _ => now + work,
        };
        self.order[cpu].computing_until = end;
        end
    }

    /// The CPU's compute step was cut at `now` (the tick preempted it).
    pub(super) fn compute_cut(&mut self, cpu: u32, now: Ps) {
        let o = &mut self.order[cpu as usize];
        o.computing_until = o.computing_until.min(now);
    }
}
