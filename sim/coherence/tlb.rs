//! Which pages of the mapped tables each core's TLBs hold: the one place
//! the translation's state lives (its costs are the machine's,
//! `machine::tlb::Translation`). A core's first-level TLB and its second
//! level (STLB) are set-associative arrays per page size, filled
//! round-robin (a pseudo-LRU's cheapest stand-in: a page reused within a
//! set's ways stays, a stream of more pages than that does not); the background's ways are left out of each set. A page
//! neither level holds is walked: the walk reads the page's leaf entry, one
//! line of the page table per 8 entries (a line per 32 KiB of 4 KiB pages),
//! through the cache hierarchy. Only the regions given as `MappedSpan`s are
//! translated (the futex tables): the other accesses' few pages are the
//! background's.

use crate::machine::tlb::{PageSize, TlbShape, Translation};
use crate::memory::LineId;
use std::ops::Range;

/// Lines of the directory that lie in pages of one size, and their
/// addresses: consecutive regions with the same mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedSpan {
    pub lines: Range<LineId>,
    pub addrs: Range<u64>,
    pub page: PageSize,
}

/// What translating an access found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Translated {
    /// The first-level TLB held the page: nothing to add.
    L1,
    /// The second level held it.
    Stlb,
    /// Neither: the walker reads this line of the page table.
    Walk(LineId),
}

/// One span, resolved.
#[derive(Clone, Debug)]
struct Span {
    lines: Range<LineId>,
    size: usize,
    shift: u32,
    /// The first leaf-entry line of the span's pages (counted from the
    /// area's base) and its directory line.
    first_entry_line: u64,
    entry_lines_at: LineId,
}

/// One TLB level for one page size, every core's sets side by side. A
/// tag is the page's number from the area's base plus one; 0 is an empty
/// way. A set is filled round-robin (first in, first out: no hit moves
/// anything, so a hit costs a scan and no writes), and remembers the way
/// it last hit or filled, which it checks first.
#[derive(Clone, Debug)]
struct Level {
    sets: u32,
    ways: u32,
    tags: Vec<u32>,
    /// Per core and set: the way last hit or filled, and the next to fill.
    ways_at: Vec<[u8; 2]>,
}

impl Level {
    fn new(shape: TlbShape, cores: usize) -> Level {
        let sets = shape.sets as usize * cores;
        Level {
            sets: shape.sets,
            ways: shape.ways,
            tags: vec![0; sets * shape.ways as usize],
            ways_at: vec![[0, 0]; sets],
        }
    }

    /// Whether the core's level held `tag`; where it did not, it does now,
    /// in the set's next way to fill.
    #[inline]
    fn touch(&mut self, core: usize, tag: u32) -> bool {
        if self.ways == 0 {
            return false;
        }
        let ways = self.ways as usize;
        let set = core * self.sets as usize + (tag % self.sets) as usize;
        let [last, next] = &mut self.ways_at[set];
        let tags = &mut self.tags[set * ways..(set + 1) * ways];
        if tags[usize::from(*last)] == tag {
            return true;
        }
        if let Some(way) = tags.iter().position(|&t| t == tag) {
            *last = way as u8;
            return true;
        }
        tags[usize::from(*next)] = tag;
        *last = *next;
        *next = if usize::from(*next) + 1 == ways {
            0
        } else {
            *next + 1
        };
        false
    }
}

/// Every core's TLBs over the mapped spans.
#[derive(Clone, Debug)]
pub(super) struct Tlbs {
    first_line: LineId,
    lines: u32,
    spans: Vec<Span>,
    /// The addresses' base: tags and leaf-entry lines count from it.
    base: u64,
    /// Per page size: the first level and the second, where a span uses it.
    levels: [Option<(Level, Level)>; 3],
    /// log2 of the leaf entries one line holds.
    entries_shift: u32,
    /// Per core, the 4 KiB frame of its latest translated access: an access
    /// in the same one is in the same page, which its first level still
    /// holds (only its own translations fill it), so it needs no lookup.
    latest: Vec<u64>,
    entry_lines: u32,
}

impl Tlbs {
    /// The TLBs of `cores` cores over `spans` (in line order), whose leaf
    /// entries take directory lines from `first_free_line` on; lines of
    /// `line_shift` bits hold 8-byte entries.
    pub(super) fn new(
        t: &Translation,
        spans: &[MappedSpan],
        cores: usize,
        first_free_line: LineId,
        line_shift: u32,
    ) -> Tlbs {
        let base = spans
            .iter()
            .map(|s| s.addrs.start)
            .min()
            .map_or(0, |a| a & !((1 << 30) - 1));
        let entries_shift = line_shift - 3;
        let mut levels: [Option<(Level, Level)>; 3] = [None, None, None];
        let mut resolved = Vec::with_capacity(spans.len());
        let mut next = first_free_line;
        for s in spans {
            let size = s.page.index();
            let shift = t.shift(s.page);
            levels[size].get_or_insert_with(|| {
                (
                    Level::new(t.l1[size], cores),
                    Level::new(t.stlb[size], cores),
                )
            });
            let first_entry_line = (s.addrs.start - base) >> (shift + entries_shift);
            let last_entry_line =
                (s.addrs.end.max(s.addrs.start + 1) - 1 - base) >> (shift + entries_shift);
            resolved.push(Span {
                lines: s.lines.clone(),
                size,
                shift,
                first_entry_line,
                entry_lines_at: next,
            });
            next += (last_entry_line - first_entry_line + 1) as LineId;
        }
        let first_line = spans.first().map_or(0, |s| s.lines.start);
        Tlbs {
            first_line,
            lines: spans.last().map_or(0, |s| s.lines.end - first_line),
            spans: resolved,
            base,
            levels,
            entries_shift,
            entry_lines: next - first_free_line,
            latest: vec![u64::MAX; cores],
        }
    }

    /// The directory lines the page tables' leaf entries take.
    pub(super) fn entry_lines(&self) -> u32 {
        self.entry_lines
    }

    /// Whether `line` lies in the mapped tables' lines.
    #[inline(always)]
    pub(super) fn maps(&self, line: LineId) -> bool {
        line.wrapping_sub(self.first_line) < self.lines
    }

    /// Translates `core`'s access to `addr` in `line`: None for a line no
    /// span maps.
    #[inline]
    pub(super) fn translate(&mut self, core: usize, line: LineId, addr: u64) -> Option<Translated> {
        let frame = addr >> 12;
        if std::mem::replace(&mut self.latest[core], frame) == frame {
            return Some(Translated::L1);
        }
        let span = self.spans.iter().find(|s| s.lines.contains(&line))?;
        let (l1, stlb) = self.levels[span.size].as_mut()?;
        let page = (addr - self.base) >> span.shift;
        let tag = page as u32 + 1;
        if l1.touch(core, tag) {
            return Some(Translated::L1);
        }
        if stlb.touch(core, tag) {
            return Some(Translated::Stlb);
        }
        let entry_line = (addr - self.base) >> (span.shift + self.entries_shift);
        Some(Translated::Walk(
            span.entry_lines_at + (entry_line - span.first_entry_line) as LineId,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_its_ways_pages_and_refills_the_oldest_first() {
        let mut level = Level::new(TlbShape { sets: 1, ways: 2 }, 2);
        assert!(!level.touch(0, 1));
        assert!(!level.touch(0, 2));
        assert!(level.touch(0, 1));
        assert!(level.touch(0, 2));
        // 3 takes the way of 1, the first filled; 4 the way of 2.
        assert!(!level.touch(0, 3));
        assert!(!level.touch(0, 1));
        assert!(level.touch(0, 3));
        assert!(!level.touch(0, 2));
        // Another core's TLB is its own.
        assert!(!level.touch(1, 3));
    }

    #[test]
    fn sets_are_chosen_by_page_so_neighbouring_pages_do_not_evict_each_other() {
        let mut level = Level::new(TlbShape { sets: 4, ways: 1 }, 1);
        for page in 1..=4 {
            assert!(!level.touch(0, page));
        }
        for page in 1..=4 {
            assert!(level.touch(0, page));
        }
        assert!(!level.touch(0, 5));
        assert!(!level.touch(0, 1));
    }

    #[test]
    fn an_access_in_the_page_just_translated_is_a_first_level_hit() {
        let t = Translation::resolve(
            &crate::machine::presets::preset("icx-2s")
                .unwrap()
                .tlb
                .unwrap(),
            &Default::default(),
            4096,
        )
        .unwrap();
        let span = MappedSpan {
            lines: 0..1024,
            addrs: 0x1000_0000..0x1001_0000,
            page: PageSize::Base,
        };
        let mut tlbs = Tlbs::new(&t, &[span], 2, 1024, 6);
        assert!(matches!(
            tlbs.translate(0, 0, 0x1000_0000),
            Some(Translated::Walk(1024))
        ));
        assert_eq!(tlbs.translate(0, 1, 0x1000_0040), Some(Translated::L1));
        assert!(matches!(
            tlbs.translate(1, 1, 0x1000_0040),
            Some(Translated::Walk(1024))
        ));
        // Sixteen pages are 64 KiB: two lines of leaf entries.
        assert_eq!(tlbs.entry_lines(), 2);
        assert_eq!(
            tlbs.translate(0, 1023, 0x1000_ffc0),
            Some(Translated::Walk(1025))
        );
    }

    #[test]
    fn a_level_without_entries_for_a_size_holds_nothing() {
        let mut level = Level::new(TlbShape { sets: 1, ways: 0 }, 1);
        assert!(!level.touch(0, 1));
        assert!(!level.touch(0, 1));
    }
}
