//! TLB reach: a futex table over more pages than a core's second-level TLB
//! holds pays page walks, and a bigger table costs what it costs.

use futexsim::expr::Expr;
use futexsim::kernel::table::preset as table;
use futexsim::machine::presets::preset;
use futexsim::machine::tlb::PageSize;
use futexsim::machine::MachineSpec;
use futexsim::record::RunRecord;
use futexsim::scenario::Scenario;
use futexsim::task::RunWindow;
use futexsim::workload::{perf_hash::PerfHash, WorkloadSpec};

const MS: u64 = 1_000_000_000;

/// One thread of perf bench futex hash over 4096 futexes on `machine`,
/// with `design` at `slots` buckets: about 2600 of the table's pages at
/// 16 MiB (more than Ice Lake's 2048-entry STLB holds), all 256 at 1 MiB.
/// 2 ms counted after 0.2 ms: each futex's bucket is visited several times.
fn one_thread(machine: MachineSpec, design: &str, slots: u64) -> Scenario {
    let mut design = table(design).unwrap();
    design.slots = Expr::parse(&slots.to_string()).unwrap();
    Scenario {
        machine,
        design,
        workload: WorkloadSpec::PerfHash(PerfHash {
            threads: Some(1),
            futexes: 4096,
            ..PerfHash::default()
        }),
        window: RunWindow {
            warmup: MS / 5,
            duration: 2 * MS,
            stop: None,
        },
        seed: 3,
    }
}

fn ops_per_sec(s: &Scenario) -> f64 {
    s.simulate().unwrap().0.ops_per_sec
}

fn icx(edit: impl FnOnce(&mut MachineSpec)) -> MachineSpec {
    let mut spec = preset("icx-2s").unwrap();
    edit(&mut spec);
    spec
}

#[test]
fn a_table_over_more_pages_than_the_stlb_holds_runs_slower_than_one_that_fits() {
    let fits = ops_per_sec(&one_thread(icx(|_| {}), "aligned-3.14", 1 << 14));
    let wide = ops_per_sec(&one_thread(icx(|_| {}), "aligned-3.14", 1 << 18));
    assert!(wide < fits * 0.97, "16 MiB: {wide} ops/s, 1 MiB: {fits}");
    // Without the TLBs the larger table is slower only by its colder
    // lines (about 3 %); the walks cost more than that again.
    let untranslated =
        |slots| ops_per_sec(&one_thread(icx(|s| s.tlb = None), "aligned-3.14", slots));
    let (small, large) = (untranslated(1 << 14), untranslated(1 << 18));
    assert!(
        wide / fits < large / small * 0.97,
        "translated {wide} / {fits}, untranslated {large} / {small}"
    );
}

#[test]
fn the_same_table_on_huge_pages_pays_no_walks() {
    // 6.16's per-node tables beyond 4 MiB are vmalloc_huge'd: base pages
    // on x86, 2 MiB pages where the architecture maps them so.
    let huge = |s: &mut MachineSpec| {
        if let Some(t) = s.tlb.as_mut() {
            t.vmalloc_huge = PageSize::Huge2M;
        }
    };
    let base_pages = ops_per_sec(&one_thread(icx(|_| {}), "numa-6.16", 1 << 18));
    let huge_pages = ops_per_sec(&one_thread(icx(huge), "numa-6.16", 1 << 18));
    let untranslated = ops_per_sec(&one_thread(icx(|s| s.tlb = None), "numa-6.16", 1 << 18));
    assert!(
        huge_pages > base_pages * 1.03,
        "2 MiB: {huge_pages}, base: {base_pages}"
    );
    assert!(
        (huge_pages / untranslated - 1.0).abs() < 0.01,
        "{huge_pages} against {untranslated}"
    );
}

#[test]
fn more_stlb_entries_change_a_run_over_a_wide_table() {
    let larger_stlb = |s: &mut MachineSpec| {
        if let Some(t) = s.tlb.as_mut() {
            t.stlb_base = 8192;
        }
    };
    let shipped = ops_per_sec(&one_thread(icx(|_| {}), "aligned-3.14", 1 << 18));
    let larger = ops_per_sec(&one_thread(icx(larger_stlb), "aligned-3.14", 1 << 18));
    assert!(larger > shipped, "8192 entries: {larger}, 2048: {shipped}");
}

#[test]
fn a_run_that_walks_pages_is_byte_identical_with_the_same_seed() {
    let s = one_thread(icx(|_| {}), "aligned-3.14", 1 << 18);
    let record = |s: &Scenario| -> String {
        let r: RunRecord = s.simulate().unwrap().0;
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(record(&s), record(&s));
}
