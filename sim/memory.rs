//! Memory: everything the simulator touches has an address. Regions are
//! allocations (a bucket array, a private hash, a heap of futex words, a set
//! of stacks) with a home node; every coherence line inside them gets a dense
//! id so the directory is a flat array.
//!
//! Addresses are those of one address space unless a caller lays regions
//! out in another (`MemoryMap::in_space`): a mix of workloads lays each of
//! its groups out in its own, so that two groups' processes, whose user
//! addresses are drawn alike, never share a line (sim/workload/mix.rs).

use std::collections::BTreeMap;

pub type LineId = u32;
pub type RegionId = u32;

/// Which address space a region's address is in: 0 unless a caller lays
/// regions out in another (`MemoryMap::in_space`). Regions of different
/// spaces never share a line, whatever their addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AddressSpace(pub u32);

pub const PAGE_SHIFT: u32 = 12;
/// x86-64's base page. The futex code always works with base pages, even on
/// huge mappings; a machine's page size is its profile's (64 KiB on ppc64le).
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;

/// A byte the simulator can access: its address and the line holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    pub addr: u64,
    pub line: LineId,
}

/// Which node's memory holds a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    Node(u32),
    /// Pages spread round-robin over `nodes` nodes (vmalloc with hashdist).
    Interleaved {
        nodes: u32,
    },
}

#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub base: u64,
    pub len: u64,
    pub home: Home,
    pub space: AddressSpace,
    first_line: LineId,
    lines: u32,
}

#[derive(Clone, Debug)]
pub struct MemoryMap {
    line_shift: u32,
    regions: Vec<Region>,
    lines: u32,
    /// First and last address line number of each region, by its space and
    /// first: finds an overlap in O(log n), so a map of thousands of stacks
    /// builds fast.
    spans: BTreeMap<(AddressSpace, u64), u64>,
    /// The space regions are added in now (`in_space`).
    space: AddressSpace,
}

impl Region {
    /// The id of the region's first line (ids are dense, region after region).
    pub fn first_line(&self) -> LineId {
        self.first_line
    }

    /// How many coherence lines the region spans.
    pub fn line_count(&self) -> u32 {
        self.lines
    }
}

impl MemoryMap {
    pub fn new(line_size: u64) -> MemoryMap {
        MemoryMap {
            line_shift: line_size.trailing_zeros(),
            regions: Vec::new(),
            lines: 0,
            spans: BTreeMap::new(),
            space: AddressSpace::default(),
        }
    }

    /// Runs `lay_out` with every region it adds, and every `is_free` it
    /// asks, in `space`; then goes back to the space it was in.
    pub fn in_space<R>(
        &mut self,
        space: AddressSpace,
        lay_out: impl FnOnce(&mut MemoryMap) -> R,
    ) -> R {
        let outer = std::mem::replace(&mut self.space, space);
        let laid_out = lay_out(self);
        self.space = outer;
        laid_out
    }

    pub fn line_size(&self) -> u64 {
        1 << self.line_shift
    }

    /// Whether a region at `base` of `len` bytes would share no line with
    /// the regions laid out so far in the current space.
    pub fn is_free(&self, base: u64, len: u64) -> bool {
        let (first, last) = self.line_span(base, len);
        self.spans
            .range((self.space, 0)..=(self.space, last))
            .next_back()
            .is_none_or(|(_, &end)| end < first)
    }

    fn line_span(&self, base: u64, len: u64) -> (u64, u64) {
        (
            base >> self.line_shift,
            (base + len.max(1) - 1) >> self.line_shift,
        )
    }

    /// Adds a region; the caller keeps regions from sharing a line.
    pub fn add(&mut self, name: impl Into<String>, base: u64, len: u64, home: Home) -> RegionId {
        let free = self.is_free(base, len);
        let (first, last) = self.line_span(base, len);
        let region = Region {
            name: name.into(),
            base,
            len,
            home,
            space: self.space,
            first_line: self.lines,
            lines: (last - first + 1) as u32,
        };
        assert!(
            free,
            "region '{}' shares a line with another region",
            region.name
        );
        self.spans.insert((self.space, first), last);
        self.lines += region.lines;
        self.regions.push(region);
        (self.regions.len() - 1) as RegionId
    }

    pub fn lines(&self) -> u32 {
        self.lines
    }

    pub fn region(&self, id: RegionId) -> &Region {
        &self.regions[id as usize]
    }

    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The line holding `addr` inside a known region: the hot path.
    #[inline]
    pub fn line_in(&self, region: RegionId, addr: u64) -> LineId {
        let r = &self.regions[region as usize];
        debug_assert!(
            addr >= r.base && addr < r.base + r.len.max(1),
            "{addr:#x} outside '{}'",
            r.name
        );
        r.first_line + ((addr >> self.line_shift) - (r.base >> self.line_shift)) as LineId
    }

    /// The region holding a line.
    pub fn region_of_line(&self, line: LineId) -> RegionId {
        self.regions
            .partition_point(|r| r.first_line + r.lines <= line) as RegionId
    }

    /// The first byte address of a line.
    pub fn line_addr(&self, line: LineId) -> u64 {
        let r = &self.regions[self.region_of_line(line) as usize];
        ((r.base >> self.line_shift) + u64::from(line - r.first_line)) << self.line_shift
    }

    /// The node whose memory holds a line.
    pub fn home_of_line(&self, line: LineId) -> u32 {
        let r = &self.regions[self.region_of_line(line) as usize];
        self.home_in(r, line - r.first_line)
    }

    /// The home node of every line, in line order.
    pub fn line_homes(&self) -> impl Iterator<Item = u32> + '_ {
        self.regions
            .iter()
            .flat_map(move |r| (0..r.lines).map(move |i| self.home_in(r, i)))
    }

    /// The home of the `index`th line of region `r`.
    fn home_in(&self, r: &Region, index: u32) -> u32 {
        match r.home {
            Home::Node(n) => n,
            Home::Interleaved { nodes } => {
                let addr = ((r.base >> self.line_shift) + u64::from(index)) << self.line_shift;
                ((addr >> PAGE_SHIFT) % u64::from(nodes)) as u32
            }
        }
    }
}

/// Hands out addresses in one area of the address space, keeping a page of
/// distance between allocations so that no two share a line at any granularity
/// up to a page.
#[derive(Clone, Debug)]
pub struct Arena {
    next: u64,
}

impl Arena {
    pub fn new(start: u64) -> Arena {
        Arena { next: start }
    }

    /// The first address the next allocation may take.
    pub fn next_free(&self) -> u64 {
        self.next
    }

    /// An address congruent to `offset` modulo `align`.
    pub fn alloc(&mut self, len: u64, align: u64, offset: u64) -> u64 {
        let page = 1u64 << PAGE_SHIFT;
        let base = self.next.next_multiple_of(align.max(page)) + offset;
        self.next = (base + len).next_multiple_of(page) + page;
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_dense_and_homes_follow_placement() {
        let mut m = MemoryMap::new(64);
        let a = m.add("a", 0x1000, 128, Home::Node(1));
        let b = m.add(
            "b",
            0x10_0000 + 32,
            3 * 4096,
            Home::Interleaved { nodes: 2 },
        );
        assert_eq!(m.lines(), 2 + 193);
        assert_eq!(m.line_in(a, 0x1040), 1);
        assert_eq!(m.line_in(b, 0x10_0000 + 32), 2);
        assert_eq!(m.line_in(b, 0x10_0040), 3);
        assert_eq!(m.home_of_line(1), 1);
        assert_eq!(m.line_addr(3), 0x10_0040);
        assert_eq!(m.home_of_line(m.line_in(b, 0x10_1000)), 1);
        assert_eq!(m.home_of_line(m.line_in(b, 0x10_2000)), 0);
        assert_eq!(m.region_of_line(194), b);
        let homes: Vec<u32> = m.line_homes().collect();
        assert_eq!(homes.len(), m.lines() as usize);
        for (line, &home) in homes.iter().enumerate() {
            assert_eq!(home, m.home_of_line(line as LineId));
        }
    }

    #[test]
    #[should_panic(expected = "shares a line")]
    fn overlapping_regions_are_a_defect() {
        let mut m = MemoryMap::new(64);
        m.add("a", 0x1000, 40, Home::Node(0));
        m.add("b", 0x1028, 40, Home::Node(0));
    }

    /// Two regions at one address are two allocations where each is in a
    /// space of its own: their lines are apart, and each space still
    /// refuses a region that shares a line with one of its own.
    #[test]
    fn regions_at_one_address_in_two_spaces_share_no_line() {
        let mut m = MemoryMap::new(64);
        let a = m.add("a", 0x1000, 64, Home::Node(0));
        let b = m.in_space(AddressSpace(1), |m| {
            assert!(m.is_free(0x1000, 64));
            let b = m.add("b", 0x1000, 64, Home::Node(1));
            assert!(!m.is_free(0x1020, 8));
            b
        });
        assert_ne!(m.line_in(a, 0x1000), m.line_in(b, 0x1000));
        assert_eq!(m.region(b).space, AddressSpace(1));
        // Back in the first space, its own region is there again.
        assert!(!m.is_free(0x1000, 4));
        assert_eq!(m.home_of_line(m.line_in(b, 0x1000)), 1);
    }

    #[test]
    fn arena_keeps_allocations_a_page_apart_with_offsets() {
        let mut arena = Arena::new(0x10_0000);
        let a = arena.alloc(100, 32, 32);
        let b = arena.alloc(10, 64, 0);
        assert_eq!(a % 4096, 32);
        assert!(b >= a + 100 + 4096 - 32 && b.is_multiple_of(4096));
    }
}
