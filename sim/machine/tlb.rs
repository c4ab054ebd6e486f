//! The address translation a core pays on its way to a table's memory: the
//! profile's `[tlb]` (each level's entries per page size, the second-level
//! TLB's hit latency, the page walker's own steps) and which page size the
//! kernel maps each kind of allocation with; and the profile's
//! `[background]`, the rest of the kernel and the user program, which keep
//! part of each LLC and of each TLB for themselves. The TLB's state (which
//! pages each core holds) is the coherence directory's (sim/coherence/tlb.rs);
//! what it costs is here.

use super::{ns_to_ps, Ps};
use serde::{Deserialize, Serialize};

/// A page size the kernel maps memory with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageSize {
    /// The kernel's base page (`topology.page_size`: 4 KiB, 64 KiB on ppc64le).
    #[serde(rename = "base")]
    Base,
    #[serde(rename = "2m")]
    Huge2M,
    #[serde(rename = "1g")]
    Huge1G,
}

impl PageSize {
    pub const ALL: [PageSize; 3] = [PageSize::Base, PageSize::Huge2M, PageSize::Huge1G];

    /// Its place in a per-size array.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The kind of kernel mapping an allocation lies in: which one decides its
/// page size on a machine (`TlbSpec`), which one the era's allocator
/// gives is the kernel's to say (sim/kernel/futex_hash.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelMapping {
    /// The kernel image: a static array in .bss.
    Image,
    /// The direct (linear) map: the page allocator's and kmalloc's memory.
    DirectMap,
    /// vmalloc's area, mapped a base page at a time.
    Vmalloc,
    /// vmalloc_huge and kvmalloc's vmalloc fallback (VM_ALLOW_HUGE_VMAP):
    /// huge pages where the architecture selects HAVE_ARCH_HUGE_VMALLOC.
    VmallocHuge,
}

/// `[tlb]`: one core's data TLBs, what a miss in them costs, and the page
/// size of each kind of kernel mapping. Entries are per page size; a level
/// with 0 entries for a size does not hold that size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbSpec {
    /// First-level data TLB entries for base, 2 MiB and 1 GiB pages.
    pub l1_base: u32,
    pub l1_2m: u32,
    pub l1_1g: u32,
    /// Its associativity (the entries when fully associative).
    pub l1_ways: u32,
    /// Second-level (shared, STLB) TLB entries for each page size.
    pub stlb_base: u32,
    pub stlb_2m: u32,
    pub stlb_1g: u32,
    pub stlb_ways: u32,
    /// What a first-level miss that hits the second level adds, in ns.
    pub stlb_hit: f64,
    /// The page walker's own steps before it reads the leaf entry, in ns:
    /// the upper levels, which its paging-structure caches mostly hold. The
    /// leaf entry itself is a read through the cache hierarchy.
    pub walk: f64,
    /// The page size of the kernel image (a static table in .bss), of the
    /// direct map (kmalloc, the page allocator) and of vmalloc_huge.
    pub image: PageSize,
    pub direct_map: PageSize,
    pub vmalloc_huge: PageSize,
}

/// `[background]`: what the rest of the kernel and the user program keep
/// in use beside the modelled accesses, competing with them for each LLC
/// and each TLB. Nothing, when absent: a benchmark alone on its machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackgroundSpec {
    /// MiB of each LLC domain the background keeps: the modelled lines
    /// share what is left.
    pub llc_mib: f64,
    /// The share (0 to 1) of each TLB's ways the background keeps in each
    /// set; the modelled pages keep at least one way.
    pub tlb_share: f64,
}

/// One TLB level's shape for one page size, the background's ways taken out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlbShape {
    pub sets: u32,
    /// The ways the modelled pages may use (0: the level holds no such page).
    pub ways: u32,
}

/// The translation costs and shapes, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// By `PageSize::index`.
    pub l1: [TlbShape; 3],
    pub stlb: [TlbShape; 3],
    pub stlb_hit_ps: Ps,
    pub walk_ps: Ps,
    image: PageSize,
    direct_map: PageSize,
    vmalloc_huge: PageSize,
    base_shift: u32,
}

impl Translation {
    /// `[tlb]` with `[background]`'s share of the ways taken out; the
    /// kernel's base page is `page_size` bytes.
    pub fn resolve(
        spec: &TlbSpec,
        background: &BackgroundSpec,
        page_size: u64,
    ) -> Result<Translation, String> {
        if !(0.0..=1.0).contains(&background.tlb_share) {
            return Err(format!(
                "background.tlb_share = {} must be a share from 0 to 1",
                background.tlb_share
            ));
        }
        for (what, ns) in [("tlb.stlb_hit", spec.stlb_hit), ("tlb.walk", spec.walk)] {
            if !ns.is_finite() || !(0.0..=crate::limits::MAX_NS).contains(&ns) {
                return Err(format!(
                    "{what} = {ns} must be a time in ns from 0 to {}",
                    crate::limits::MAX_NS
                ));
            }
        }
        let shape = |level: &str, entries: u32, ways: u32| -> Result<TlbShape, String> {
            if entries == 0 {
                return Ok(TlbShape { sets: 1, ways: 0 });
            }
            if entries > MAX_TLB_ENTRIES {
                return Err(format!(
                    "tlb.{level} = {entries} must be at most {MAX_TLB_ENTRIES}"
                ));
            }
            // Entries that fill no whole set (a range's end) are rounded
            // down to whole sets.
            let ways = ways.clamp(1, entries.min(MAX_TLB_WAYS));
            let kept = (f64::from(ways) * background.tlb_share).round() as u32;
            Ok(TlbShape {
                sets: entries / ways,
                ways: ways.saturating_sub(kept).max(1),
            })
        };
        Ok(Translation {
            l1: [
                shape("l1_base", spec.l1_base, spec.l1_ways)?,
                shape("l1_2m", spec.l1_2m, spec.l1_ways)?,
                shape("l1_1g", spec.l1_1g, spec.l1_ways)?,
            ],
            stlb: [
                shape("stlb_base", spec.stlb_base, spec.stlb_ways)?,
                shape("stlb_2m", spec.stlb_2m, spec.stlb_ways)?,
                shape("stlb_1g", spec.stlb_1g, spec.stlb_ways)?,
            ],
            stlb_hit_ps: ns_to_ps(spec.stlb_hit),
            walk_ps: ns_to_ps(spec.walk),
            image: spec.image,
            direct_map: spec.direct_map,
            vmalloc_huge: spec.vmalloc_huge,
            base_shift: page_size.trailing_zeros(),
        })
    }

    /// The page size a kind of kernel mapping has on this machine.
    pub fn page_of(&self, mapping: KernelMapping) -> PageSize {
        match mapping {
            KernelMapping::Image => self.image,
            KernelMapping::DirectMap => self.direct_map,
            KernelMapping::Vmalloc => PageSize::Base,
            KernelMapping::VmallocHuge => self.vmalloc_huge,
        }
    }

    /// log2 of a page size's bytes.
    pub fn shift(&self, page: PageSize) -> u32 {
        match page {
            PageSize::Base => self.base_shift,
            PageSize::Huge2M => 21,
            PageSize::Huge1G => 30,
        }
    }
}

/// The most ways a TLB level is modelled with (a set names its ways in a
/// byte): a fully associative level with more entries is modelled with
/// this many ways per set.
pub const MAX_TLB_WAYS: u32 = 255;

/// The most entries one TLB level may have for one page size: ten times
/// the largest shipped (Zen 4's 3072-entry L2 DTLB), so a core's arrays
/// stay small.
pub const MAX_TLB_ENTRIES: u32 = 32768;

#[cfg(test)]
mod tests {
    use super::*;

    fn skylake() -> TlbSpec {
        TlbSpec {
            l1_base: 64,
            l1_2m: 32,
            l1_1g: 4,
            l1_ways: 4,
            stlb_base: 1536,
            stlb_2m: 1536,
            stlb_1g: 16,
            stlb_ways: 12,
            stlb_hit: 3.5,
            walk: 8.0,
            image: PageSize::Huge2M,
            direct_map: PageSize::Huge1G,
            vmalloc_huge: PageSize::Base,
        }
    }

    #[test]
    fn the_background_takes_its_share_of_each_sets_ways_and_leaves_one() {
        let alone = Translation::resolve(&skylake(), &BackgroundSpec::default(), 4096).unwrap();
        assert_eq!(
            alone.stlb[0],
            TlbShape {
                sets: 128,
                ways: 12
            }
        );
        assert_eq!(alone.l1[2], TlbShape { sets: 1, ways: 4 });
        let half = BackgroundSpec {
            llc_mib: 0.0,
            tlb_share: 0.5,
        };
        let shared = Translation::resolve(&skylake(), &half, 4096).unwrap();
        assert_eq!(shared.stlb[0], TlbShape { sets: 128, ways: 6 });
        let all = BackgroundSpec {
            llc_mib: 0.0,
            tlb_share: 1.0,
        };
        let crowded = Translation::resolve(&skylake(), &all, 4096).unwrap();
        assert_eq!(crowded.l1[0].ways, 1);
    }

    #[test]
    fn each_kind_of_mapping_has_its_machines_page_size() {
        let t = Translation::resolve(&skylake(), &BackgroundSpec::default(), 65536).unwrap();
        assert_eq!(t.page_of(KernelMapping::Vmalloc), PageSize::Base);
        assert_eq!(t.page_of(KernelMapping::VmallocHuge), PageSize::Base);
        assert_eq!(t.page_of(KernelMapping::DirectMap), PageSize::Huge1G);
        assert_eq!(t.shift(PageSize::Base), 16);
        assert_eq!(t.shift(t.page_of(KernelMapping::Image)), 21);
    }

    #[test]
    fn entries_are_rounded_down_to_whole_sets_and_capped() {
        let mut spec = skylake();
        spec.stlb_base = 1000;
        let t = Translation::resolve(&spec, &BackgroundSpec::default(), 4096).unwrap();
        assert_eq!(t.stlb[0], TlbShape { sets: 83, ways: 12 });
        spec.stlb_base = MAX_TLB_ENTRIES + 1;
        let err = Translation::resolve(&spec, &BackgroundSpec::default(), 4096).unwrap_err();
        assert!(err.contains("tlb.stlb_base"), "{err}");
    }
}
