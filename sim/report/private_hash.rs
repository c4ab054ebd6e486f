//! report.md's section on private hashes: the slots each process's table
//! ended with once its threads were created, how many resizes that took, and
//! whether the kernel's default or the process's prctl set it, so a reader
//! sees which table a figure was measured on (perf bench prints the same
//! with "Futex hashing: N hash buckets").

use super::summary::Cell;
use crate::kernel::futex_hash::SlotsSetBy;
use std::fmt::Write;

/// One row per process of each point and design that has a private hash,
/// from the first repetition (every repetition creates its threads alike).
pub fn section(md: &mut String, cells: &[Cell]) {
    let rows: Vec<String> = cells
        .iter()
        .filter_map(|c| Some((c, c.runs.first()?)))
        .flat_map(|(c, r)| {
            r.table
                .private_hashes
                .iter()
                .enumerate()
                .map(move |(p, life)| {
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
                    format!(
                        "| {} | {} | {p} | {} | {} | {set_by}{global} |",
                        c.label, c.design, life.slots, life.resizes
                    )
                })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Private hashes\n");
    let _ = writeln!(
        md,
        "The slots each process's private hash ended with (0: the global table), and the resizes on the way: every thread is created before the first futex op, as the benchmarks do.\n"
    );
    let _ = writeln!(
        md,
        "| point | design | process | slots | resizes | set by |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---|");
    for row in rows {
        let _ = writeln!(md, "{row}");
    }
    md.push('\n');
}
