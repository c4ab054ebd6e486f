//! report.md's section on private hashes: the slots each process's table
//! ended with once its threads were created, how many resizes that took, and
//! whether the kernel's default or the process's prctl set it, so a reader
//! sees which table a figure was measured on (perf bench prints the same
//! with "Futex hashing: N hash buckets"). Where threads were created while
//! the run went on, it also gives what the resizes cost in the run.

use super::summary::Cell;
use crate::kernel::futex_hash::{PrivateLife, SlotsSetBy};
use std::fmt::Write;

/// One row per process of each point and design that has a private hash,
/// from the first repetition (every repetition creates its threads alike).
pub fn section(md: &mut String, cells: &[Cell]) {
    let lives: Vec<(&Cell, usize, PrivateLife)> = cells
        .iter()
        .filter_map(|c| Some((c, c.runs.first()?)))
        .flat_map(|(c, r)| {
            r.table
                .private_hashes
                .iter()
                .enumerate()
                .map(move |(p, life)| (c, p, *life))
        })
        .collect();
    if lives.is_empty() {
        return;
    }
    let in_run = lives.iter().any(|(_, _, l)| l.in_run.is_some());
    let _ = writeln!(md, "## Private hashes\n");
    if in_run {
        let _ = writeln!(
            md,
            "The slots each process's private hash ended with (0: the global table) and the resizes on the way. Where threads were created while the run went on (`create_every_ns`), the slots and resizes are those the run reached, and the last columns give the larger tables published of those allocated (one waits until no op holds the old table), the queued futex_qs the rehash moved, and the time from each allocation to its publication, the drain included (sim/kernel/resize.rs); `-` where every thread was created before the first futex op, as the benchmarks do.\n"
        );
        let _ = writeln!(
            md,
            "| point | design | process | slots | resizes | set by | published | moved | resize time (us) |"
        );
        let _ = writeln!(md, "|---|---|---:|---:|---:|---|---:|---:|---:|");
    } else {
        let _ = writeln!(
            md,
            "The slots each process's private hash ended with (0: the global table), and the resizes on the way: every thread is created before the first futex op, as the benchmarks do.\n"
        );
        let _ = writeln!(
            md,
            "| point | design | process | slots | resizes | set by |"
        );
        let _ = writeln!(md, "|---|---|---:|---:|---:|---|");
    }
    for (c, p, life) in lives {
        let set_by = match life.set_by {
            SlotsSetBy::NoPrivateHash => "none (global table)",
            SlotsSetBy::ThreadCreation => "the kernel, at each thread creation",
            SlotsSetBy::Prctl => "PR_FUTEX_HASH_SET_SLOTS",
            SlotsSetBy::PrctlImmutable => "PR_FUTEX_HASH_SET_SLOTS, immutable",
        };
        // SET_SLOTS 0 leaves a table of no slots: the global hash.
        let global = match (life.slots, life.set_by) {
            (0, SlotsSetBy::Prctl | SlotsSetBy::PrctlImmutable) => " (global hash)",
            _ => "",
        };
        let _ = write!(
            md,
            "| {} | {} | {p} | {} | {} | {set_by}{global} |",
            c.label, c.design, life.slots, life.resizes
        );
        match (in_run, life.in_run) {
            (false, _) => {}
            (true, None) => md.push_str(" - | - | - |"),
            (true, Some(r)) => {
                let _ = write!(
                    md,
                    " {} of {} | {} | {:.1} |",
                    r.published,
                    r.allocated,
                    r.moved,
                    r.resize_ns as f64 / 1000.0
                );
            }
        }
        md.push('\n');
    }
    md.push('\n');
}
