//! Each perf c2c column futexsim prints carries perf c2c's definition
//! (tools/perf/util/mem-events.c and builtin-c2c.c): checked on a hand-made
//! sequence of accesses to one line of the directory, where the class of
//! every access is known in advance.

use futexsim::coherence::{AccessKind, Directory};
use futexsim::machine::{presets::preset, Machine};
use futexsim::memory::{Home, MemoryMap};
use futexsim::record::{CoherenceRecord, LineRecord, Occupant};
use futexsim::report::c2c;
use futexsim::symbol::Symbol;

/// On icx-2s, CPUs 0, 1 and 2 are three cores of node 0 and CPU 32 a core of node 1.
const NODE0_A: u32 = 0;
const NODE0_B: u32 = 1;
const NODE0_C: u32 = 2;
const NODE1: u32 = 32;
const LOCK: u64 = 0x1000;
const NEIGHBOUR: u64 = 0x1008;

struct Run {
    line: LineRecord,
    coherence: CoherenceRecord,
    directory: Directory,
}

/// The sequence, one access a microsecond so that none queues behind another:
///
/// 1. CPU 0 writes the lock word: the line comes from DRAM and is not yet
///    counted (a line's counts start when it first moves between caches).
/// 2. CPU 32 loads it: a load served from a line Modified on another node,
///    a remote HITM.
/// 3. CPU 2, which has no copy, writes the neighbouring word: a store that
///    must fetch the line, an L1 miss, and no HITM (the line was clean).
/// 4. CPU 1 does an RMW on the lock word: the line is Modified in CPU 2's
///    cache on the same node. A store, so an L1 miss and an RFO from
///    Modified, never a HITM.
/// 5. CPU 1 writes the lock word again: it owns the line, an L1 hit.
/// 6. CPU 0 loads the neighbour: Modified in CPU 1's cache, same node, a local HITM.
///    (CPU 0's copy went at step 3.)
/// 7. CPU 32 loads the lock word: clean copies only, on node 0, a remote hit.
fn run() -> Run {
    let m = Machine::new(preset("icx-2s").expect("icx-2s is a preset")).expect("a machine");
    assert_eq!(
        (m.node_of(NODE0_A), m.node_of(NODE0_B), m.node_of(NODE1)),
        (0, 0, 1)
    );
    let mut mem = MemoryMap::new(64);
    mem.add("x", 0x1000, 4096, Home::Node(0));
    let mut d = Directory::new(&mem, &m, &[]);
    let steps = [
        (NODE0_A, LOCK, AccessKind::Write),
        (NODE1, LOCK, AccessKind::Read),
        (NODE0_C, NEIGHBOUR, AccessKind::Write),
        (NODE0_B, LOCK, AccessKind::Rmw),
        (NODE0_B, LOCK, AccessKind::Write),
        (NODE0_A, NEIGHBOUR, AccessKind::Read),
        (NODE1, LOCK, AccessKind::Read),
    ];
    for (i, (cpu, addr, kind)) in steps.into_iter().enumerate() {
        let now = (i as u64 + 1) * 1_000_000;
        d.access(&m, cpu, now, 0, addr, kind, Symbol::Workload);
    }
    let stats = d.hottest_lines(1).pop().expect("the line moved");
    let line = LineRecord::from_stats(
        &stats,
        mem.line_addr(stats.line),
        mem.home_of_line(stats.line),
        "x".into(),
        |_| Occupant::Region("x".into()),
        |cpu| m.node_of(cpu),
    );
    let coherence = CoherenceRecord::from_totals(&d.totals, 1);
    Run {
        line,
        coherence,
        directory: d,
    }
}

#[test]
fn hitm_counts_loads_only() {
    let Run {
        line, coherence, ..
    } = run();
    // Steps 2 and 6; the RMW of step 4 found the line Modified too, but is a store.
    assert_eq!((line.rmt_hitm, line.lcl_hitm), (1, 1));
    assert_eq!((coherence.rmt_hitm, coherence.lcl_hitm), (1, 1));
    assert_eq!((line.lcl_rfo_modified, line.rmt_rfo_modified), (1, 0));
    assert_eq!(
        (coherence.lcl_rfo_modified, coherence.rmt_rfo_modified),
        (1, 0)
    );
    let lock = &line.offsets[0];
    assert_eq!(
        (lock.offset, lock.counts.rmt_hitm, lock.counts.lcl_hitm),
        (0, 1, 0)
    );
    assert_eq!(lock.counts.lcl_rfo_modified, 1);
}

#[test]
fn the_other_load_classes_count_loads_only() {
    let Run { line, .. } = run();
    assert_eq!((line.loads, line.stores), (3, 3));
    // Step 7; the store of step 3 also got a clean copy, and is not a load hit.
    assert_eq!((line.rmt_hit, line.lcl_hit), (1, 0));
    assert_eq!((line.dram_lcl, line.dram_rmt), (0, 0));
    assert_eq!(line.load_l1_hit(), 0);
}

#[test]
fn stores_are_l1_hits_or_misses() {
    let Run { line, .. } = run();
    // Step 5 hit; steps 3 and 4 missed.
    assert_eq!((line.store_l1_hit, line.store_l1_miss), (1, 2));
    let [lock, neighbour] = &line.offsets[..] else {
        panic!("two offsets: {:?}", line.offsets)
    };
    assert_eq!(
        (
            lock.counts.store_l1_hit,
            lock.counts.store_l1_miss,
            lock.counts.stores
        ),
        (1, 1, 2)
    );
    assert_eq!(
        (
            neighbour.offset,
            neighbour.counts.store_l1_hit,
            neighbour.counts.store_l1_miss
        ),
        (8, 0, 1)
    );
    // Total records: loads plus stores.
    assert_eq!(lock.counts.loads + lock.counts.stores, 4);
    assert_eq!(neighbour.counts.loads + neighbour.counts.stores, 2);
}

#[test]
fn pareto_columns_each_sum_to_100_over_the_line() {
    let Run { line, .. } = run();
    let shares = c2c::pareto_shares(&line);
    assert_eq!(shares.len(), 2);
    let sum = |f: fn(&c2c::ParetoShares) -> f64| shares.iter().map(f).sum::<f64>();
    for (name, total) in [
        ("RmtHitm", sum(|s| s.rmt_hitm)),
        ("LclHitm", sum(|s| s.lcl_hitm)),
        ("L1 Hit", sum(|s| s.store_l1_hit)),
        ("L1 Miss", sum(|s| s.store_l1_miss)),
    ] {
        assert!((total - 100.0).abs() < 1e-9, "{name} sums to {total}");
    }
    // The lock word took the remote HITM and the store hit, the neighbour
    // the local HITM; each took one of the two store misses.
    assert_eq!(shares[0].rmt_hitm, 100.0);
    assert_eq!(shares[1].lcl_hitm, 100.0);
    assert_eq!(shares[0].store_l1_hit, 100.0);
    assert_eq!(
        (shares[0].store_l1_miss, shares[1].store_l1_miss),
        (50.0, 50.0)
    );
}

#[test]
fn tot_hitm_is_the_line_s_share_of_every_hitm() {
    let Run {
        line, coherence, ..
    } = run();
    assert_eq!(c2c::tot_hitm_percent(&line, &coherence), 100.0);
    let half = CoherenceRecord {
        rmt_hitm: coherence.rmt_hitm + 2,
        ..coherence
    };
    assert_eq!(c2c::tot_hitm_percent(&line, &half), 50.0);
}

#[test]
fn node_and_cpu_cnt_name_who_accessed_the_offset() {
    let Run { line, .. } = run();
    // The line's memory is on node 0 (perf's Node of the data address).
    assert_eq!(line.node, 0);
    let lock = &line.offsets[0];
    // CPUs 32 and 1 touched the lock word once it was counted; CPU 0 only before.
    assert_eq!(
        (lock.counts.cpu_count, lock.counts.nodes.as_slice()),
        (2, &[0, 1][..])
    );
    assert_eq!(c2c::nodes(&lock.counts), " 0  1");
    // CPUs 2 and 0 touched the neighbour, both on node 0.
    let neighbour = &line.offsets[1];
    assert_eq!(
        (
            neighbour.counts.cpu_count,
            neighbour.counts.nodes.as_slice()
        ),
        (2, &[0][..])
    );
}

#[test]
fn the_hitm_matrix_counts_loads_only() {
    let Run { directory, .. } = run();
    let t = &directory.totals;
    // Step 2: node 1 from node 0; step 6: node 0 from node 0; not step 4's RMW.
    assert_eq!((t.hitm_between(1, 0), t.hitm_between(0, 0)), (1, 1));
    assert_eq!(t.hitm_nodes.iter().sum::<u64>(), 2);
}

#[test]
fn the_classes_partition_every_access() {
    let Run { coherence: c, .. } = run();
    let classes = c.l1_hit
        + c.lcl_hit
        + c.rmt_hit
        + c.lcl_hitm
        + c.rmt_hitm
        + c.lcl_rfo_modified
        + c.rmt_rfo_modified
        + c.dram_lcl
        + c.dram_rmt;
    assert_eq!(classes, c.loads + c.stores);
    assert_eq!((c.loads, c.stores), (3, 4));
}
