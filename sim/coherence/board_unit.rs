//! The coherence unit between boards, where it is larger than a line.
//! ScaleMP's vSMP Foundation keeps the boards of one system image coherent
//! in software, a page at a time (docs/references.md, vSMP): a board that
//! touches a line of a page another board holds fetches the whole page over
//! the interconnect, and a write takes the page from every other board. So
//! two boards writing different lines of one page falsely share it, as two
//! cores writing different words of one line do. This module knows which
//! lines make up a unit; the directory moves them (`Directory::move_unit`).

use crate::memory::{AddressSpace, LineId, MemoryMap};

/// The lines of one region: its first line's id, and its first line's
/// number (its address over the line size) in its address space.
#[derive(Clone, Copy, Debug)]
struct Span {
    first_id: LineId,
    space: AddressSpace,
    first_number: u64,
    lines: u32,
}

/// Which lines share a coherence unit between boards. Regions share no
/// line but may share a unit (a page may hold several small regions), so
/// a unit's lines are found by address across regions.
#[derive(Clone, Debug)]
pub(super) struct BoardUnits {
    /// log2 of the lines in a unit.
    lines_shift: u32,
    /// Every region's lines, in id order.
    by_id: Vec<Span>,
    /// Indices of `by_id`, in address order within each address space.
    by_address: Vec<u32>,
}

impl BoardUnits {
    /// The units of `memory`'s lines, `1 << lines_shift` lines each.
    pub(super) fn new(memory: &MemoryMap, lines_shift: u32) -> BoardUnits {
        let line_shift = memory.line_size().trailing_zeros();
        let by_id: Vec<Span> = memory
            .regions()
            .iter()
            .map(|r| Span {
                first_id: r.first_line(),
                space: r.space,
                first_number: r.base >> line_shift,
                lines: r.line_count(),
            })
            .collect();
        let mut by_address: Vec<u32> = (0..by_id.len() as u32).collect();
        by_address.sort_by_key(|&i| (by_id[i as usize].space, by_id[i as usize].first_number));
        BoardUnits {
            lines_shift,
            by_id,
            by_address,
        }
    }

    /// Every line of `line`'s unit but `line` itself, into `out` (emptied
    /// first), in address order.
    pub(super) fn others(&self, line: LineId, out: &mut Vec<LineId>) {
        out.clear();
        let at = self.by_id.partition_point(|s| s.first_id + s.lines <= line);
        let Some(span) = self.by_id.get(at) else {
            return;
        };
        let number = span.first_number + u64::from(line - span.first_id);
        let first = number >> self.lines_shift << self.lines_shift;
        let last = first + (1 << self.lines_shift) - 1;
        let space = span.space;
        let start = self.by_address.partition_point(|&i| {
            let s = &self.by_id[i as usize];
            (s.space, s.first_number + u64::from(s.lines)) <= (space, first)
        });
        for &i in &self.by_address[start..] {
            let s = &self.by_id[i as usize];
            if (s.space, s.first_number) > (space, last) {
                break;
            }
            let end = s.first_number + u64::from(s.lines) - 1;
            for n in s.first_number.max(first)..=end.min(last) {
                if n != number {
                    out.push(s.first_id + (n - s.first_number) as LineId);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Home;

    #[test]
    fn a_units_lines_are_found_across_the_regions_that_share_its_page() {
        let mut mem = MemoryMap::new(64);
        // Two small regions in one page, a third in the next page.
        mem.add("a", 0x1000, 128, Home::Node(0));
        mem.add("b", 0x1f80, 64, Home::Node(0));
        mem.add("c", 0x2000, 64, Home::Node(0));
        let units = BoardUnits::new(&mem, 6);
        let mut out = Vec::new();
        units.others(0, &mut out);
        assert_eq!(out, [1, 2]);
        units.others(2, &mut out);
        assert_eq!(out, [0, 1]);
        units.others(3, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
