//! The simulated address space: every area futexsim places objects in,
//! named once with its base and its extent (how far it reaches at the caps
//! of sim/limits.rs), on the x86-64 kernel map with 4-level paging.
//!
//! Each object a run lays out becomes a region of the run's `MemoryMap`,
//! which refuses two regions that share a line; the tests below show that
//! no two areas can overlap whatever size of config futexsim accepts, so
//! that refusal never fires on a config the checks let through. Areas of
//! addresses a futex key is made of but no line is given to (the mm_struct
//! slab pages, the shared file's inode) sit in the direct map beside the
//! others, as slab pages do.
//!
//! Moving a base changes the addresses every report names and, where an
//! address is hashed, the results: bases are kept as first chosen.

use crate::limits::{MAX_CPUS, MAX_NODES, MAX_RUN_TASKS};

/// A range of simulated addresses set aside for one kind of object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub name: &'static str,
    pub base: u64,
    /// Bytes from `base` the area's objects may reach at the caps.
    pub extent: u64,
    /// Whether its objects get lines (regions of the run's memory map);
    /// false where its addresses only name things in a futex key.
    pub has_lines: bool,
}

impl Area {
    /// The first address past the area.
    pub const fn end(&self) -> u64 {
        self.base + self.extent
    }

    /// Whether the area shares an address with `other`.
    pub const fn overlaps(&self, other: &Area) -> bool {
        self.base < other.end() && other.base < self.end()
    }
}

const PAGE: u64 = 4096;

/// What `count` allocations of `len` bytes aligned to `align` take of a
/// `memory::Arena`: each starts on its alignment (a page at least), and the
/// next starts a page past the last page it touches.
const fn arena_bytes(count: u64, len: u64, align: u64) -> u64 {
    let align = if align > PAGE { align } else { PAGE };
    count * (len.next_multiple_of(PAGE) + PAGE).next_multiple_of(align)
}

/// A kernel stack: 16 KiB, aligned to its size (THREAD_SIZE on x86-64).
pub const KERNEL_STACK_BYTES: u64 = 16 << 10;
/// A CPU's slice of the per-CPU area that futexsim models: the MCS nodes
/// and the futex reference count.
pub const PERCPU_STRIDE: u64 = 256;
/// A cached `futex_pi_state`: a kmalloc-128 object.
pub const PI_STATE_BYTES: u64 = 128;
/// A task_struct's slot in its slab (a task_struct is 9-10 KiB on x86-64).
pub const TASK_STRUCT_STRIDE: u64 = 16 << 10;
/// A page wait table: the largest era's is 2^12 slots of 24 bytes.
pub const PAGE_WAIT_TABLE_BYTES: u64 = 1 << 17;

// The kernel image's .bss, from its start: the static `futex_queues`, then,
// 4 MiB in, v4.11's page wait table.

/// Static futex tables (`futex_queues[]` of the eras before 3.13, and any
/// design laid out cache-aligned on the boot node): up to the page wait table.
pub const KERNEL_BSS_FUTEX_QUEUES: Area = Area {
    name: "kernel .bss: static futex tables",
    base: 0xffff_ffff_8260_0000,
    extent: KERNEL_BSS_PAGE_WAIT.base - 0xffff_ffff_8260_0000,
    has_lines: true,
};
/// v4.11's page wait table, in the kernel image's .bss.
pub const KERNEL_BSS_PAGE_WAIT: Area = Area {
    name: "kernel .bss: page wait table",
    base: 0xffff_ffff_82a0_0000,
    extent: PAGE_WAIT_TABLE_BYTES,
    has_lines: true,
};

// The direct map of physical memory, from physical 0.

/// v3.8's page wait tables, one per zone, from node 0's bootmem low in the
/// direct map; node n's is `ZONE_STRIDE` x n above. A run lays out only the
/// table of its first CPU's node, and CPU 0 is on node 0 on every machine
/// (sim/machine numbers nodes from CPU 0's), so the area is node 0's.
pub const ZONE_PAGE_WAIT: Area = Area {
    name: "direct map: zone page wait table",
    base: 0xffff_8880_7f00_0000,
    extent: PAGE_WAIT_TABLE_BYTES,
    has_lines: true,
};
pub const ZONE_STRIDE: u64 = 1 << 32;
/// The pages the mm_struct slab is drawn from: 60 GiB above physical 4 GiB
/// (sim/workload/user_memory.rs). Only a key's mm pointer comes from here;
/// the lines of an mm_struct futexsim models are in `KEY_OBJECTS` and
/// `MM_FUTEX_LINES`.
pub const MM_SLABS: Area = Area {
    name: "direct map: mm_struct slab pages",
    base: 0xffff_8881_0000_0000,
    extent: 60 << 30,
    has_lines: false,
};
/// The inode standing for the one file a workload's shared-file words are
/// mapped from: only a shared-file key's inode pointer.
pub const SHARED_FILE_INODE: Area = Area {
    name: "direct map: the shared file's inode",
    base: 0xffff_8881_4000_0000,
    extent: 64,
    has_lines: false,
};
/// Each CPU's per-CPU area.
pub const PERCPU: Area = Area {
    name: "direct map: per-CPU areas",
    base: 0xffff_8882_0000_0000,
    extent: arena_bytes(MAX_CPUS, PERCPU_STRIDE, 64),
    has_lines: true,
};
/// Each task's cached `futex_pi_state`, one slab area per node, the nodes'
/// one after another a page apart (sim/kernel/placement.rs).
pub const PI_STATE_SLABS: Area = Area {
    name: "direct map: futex_pi_state slabs",
    base: 0xffff_8883_0000_0000,
    extent: MAX_RUN_TASKS as u64 * PI_STATE_BYTES + MAX_NODES as u64 * 2 * PAGE,
    has_lines: true,
};
/// will-it-scale's process stack pages in process mode, one page a task:
/// the words share a virtual address, not a physical line.
pub const STACK_PAGES: Area = Area {
    name: "direct map: process stack pages",
    base: 0xffff_8884_0000_0000,
    extent: MAX_RUN_TASKS as u64 * PAGE,
    has_lines: true,
};
/// Kernel objects a workload program names (a lock, a struct page, a task
/// list), above the physical range the mm_struct slabs are drawn from. No
/// cap bounds how many a workload lays out; the room up to the runqueues
/// holds 2^27 objects of a line, more than any workload's caps allow.
pub const WORKLOAD_OBJECTS: Area = Area {
    name: "direct map: workload kernel objects",
    base: 0xffff_88a0_0000_0000,
    extent: RUNQUEUES.base - 0xffff_88a0_0000_0000,
    has_lines: true,
};
/// Each CPU's runqueue, a page apart, in a range of the direct map no
/// other kernel object of the model reaches.
pub const RUNQUEUES: Area = Area {
    name: "direct map: runqueues",
    base: 0xffff_8a00_0000_0000,
    extent: MAX_CPUS * PAGE,
    has_lines: true,
};
/// task_structs, from the task_struct slab.
pub const TASK_STRUCTS: Area = Area {
    name: "direct map: task_structs",
    base: 0xffff_8b00_0000_0000,
    extent: MAX_RUN_TASKS as u64 * TASK_STRUCT_STRIDE,
    has_lines: true,
};
/// The lines of a process's mm_struct and the shared file's inode that
/// hold mm_count and i_count, a line each.
pub const KEY_OBJECTS: Area = Area {
    name: "key objects: mm_count and i_count lines",
    base: 0xffff_a000_0000_0000,
    extent: arena_bytes(MAX_RUN_TASKS as u64 + 1, 64, 64),
    has_lines: true,
};
/// The line of a process's mm_struct holding its futex fields
/// (`futex_hash_lock`, `futex_phash`, `futex_atomic`).
pub const MM_FUTEX_LINES: Area = Area {
    name: "mm_struct futex lines",
    base: 0xffff_a100_0000_0000,
    extent: arena_bytes(MAX_RUN_TASKS as u64, 64, 64),
    has_lines: true,
};
/// vmalloc: the tables not in .bss, which end below the kernel stacks
/// (sim/kernel/futex_hash.rs refuses a design whose tables do not).
pub const VMALLOC_TABLES: Area = Area {
    name: "vmalloc: futex tables",
    base: 0xffff_c900_0000_0000,
    extent: KERNEL_STACKS.base - 0xffff_c900_0000_0000,
    has_lines: true,
};
/// Each task's kernel stack (vmalloc'd, as with CONFIG_VMAP_STACK).
pub const KERNEL_STACKS: Area = Area {
    name: "vmalloc: kernel stacks",
    base: 0xffff_c900_4000_0000,
    extent: arena_bytes(MAX_RUN_TASKS as u64, KERNEL_STACK_BYTES, KERNEL_STACK_BYTES),
    has_lines: true,
};
/// The vmemmap: the struct pages of the user regions futex words are in.
/// x86-64 gives it 1 TiB, a struct page of 64 bytes for each of 2^34 pages.
pub const VMEMMAP: Area = Area {
    name: "vmemmap: struct pages",
    base: 0xffff_ea00_0000_0000,
    extent: 1 << 40,
    has_lines: true,
};

// User space: each process's own, so processes' areas coincide; futexsim
// keeps one process's regions from sharing a line with another's where it
// draws them (user_memory::heap_start).

/// The pages below which a program's randomized base is drawn.
pub const RANDOMIZED_PAGES: u64 = 1 << 28;
/// A PIE program and its brk heap: a base randomized in the TiB above
/// 0x5500_0000_0000, the heap growing up from there.
pub const USER_PROGRAM: Area = Area {
    name: "user: program image and brk heap",
    base: 0x5500_0000_0000,
    extent: 2 * RANDOMIZED_PAGES * PAGE,
    has_lines: true,
};
/// The lowest mmap base: the base is randomized in the TiB above it, and
/// mappings (thread stacks, mmaps) go down from it, one below the other.
pub const MMAP_BASE: u64 = 0x7f00_0000_0000;
/// Top of the main thread's stack before randomization.
pub const STACK_TOP: u64 = 0x7fff_ffff_f000;
/// mmaps and stacks: from the lowest a run's mappings reach below the mmap
/// base to the top of user space.
pub const USER_MAPPINGS: Area = Area {
    name: "user: mmaps and stacks",
    base: 0x7000_0000_0000,
    extent: 0x1000_0000_0000,
    has_lines: true,
};

/// The first address past user space (TASK_SIZE_MAX with 47 bits), and the
/// first of the kernel's half.
pub const USER_SPACE_END: u64 = 0x8000_0000_0000;
pub const KERNEL_SPACE: u64 = 0xffff_8000_0000_0000;

/// Every area, kernel then user.
pub const AREAS: [Area; 18] = [
    KERNEL_BSS_FUTEX_QUEUES,
    KERNEL_BSS_PAGE_WAIT,
    ZONE_PAGE_WAIT,
    MM_SLABS,
    SHARED_FILE_INODE,
    PERCPU,
    PI_STATE_SLABS,
    STACK_PAGES,
    WORKLOAD_OBJECTS,
    RUNQUEUES,
    TASK_STRUCTS,
    KEY_OBJECTS,
    MM_FUTEX_LINES,
    VMALLOC_TABLES,
    KERNEL_STACKS,
    VMEMMAP,
    USER_PROGRAM,
    USER_MAPPINGS,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::page_wait::{self, PageWaitEra};
    use crate::limits::{MAX_PROGRAM_MEMORY, MAX_TABLE_BYTES};

    /// The pairs of areas that share an address, by name.
    fn overlapping(areas: &[Area]) -> Vec<(&'static str, &'static str)> {
        let mut pairs = Vec::new();
        for (i, a) in areas.iter().enumerate() {
            for b in &areas[i + 1..] {
                if a.overlaps(b) {
                    pairs.push((a.name, b.name));
                }
            }
        }
        pairs
    }

    /// The areas whose objects get lines: those the memory map refuses to overlap.
    fn with_lines(areas: &[Area]) -> Vec<Area> {
        areas.iter().copied().filter(|a| a.has_lines).collect()
    }

    #[test]
    fn no_two_areas_that_get_lines_can_overlap_at_the_caps() {
        assert_eq!(overlapping(&with_lines(&AREAS)), []);
    }

    #[test]
    fn the_overlap_check_finds_an_area_placed_inside_another() {
        let mut areas = AREAS.to_vec();
        areas.push(Area {
            name: "a second set of runqueues",
            base: RUNQUEUES.base + RUNQUEUES.extent - PAGE,
            extent: 2 * PAGE,
            has_lines: true,
        });
        assert_eq!(
            overlapping(&with_lines(&areas)),
            [("direct map: runqueues", "a second set of runqueues")]
        );
    }

    #[test]
    fn key_only_areas_lie_in_the_direct_map_and_clear_of_the_kernel_image() {
        for area in AREAS.iter().filter(|a| !a.has_lines) {
            assert!(area.base >= 0xffff_8880_0000_0000, "{}", area.name);
            assert!(area.end() <= WORKLOAD_OBJECTS.base, "{}", area.name);
        }
        const { assert!(MM_SLABS.base <= SHARED_FILE_INODE.base) };
    }

    #[test]
    fn every_area_stays_on_its_side_of_the_user_kernel_split() {
        for area in AREAS {
            if area.base < USER_SPACE_END {
                assert!(area.end() <= USER_SPACE_END, "{}", area.name);
            } else {
                assert!(area.base >= KERNEL_SPACE, "{}", area.name);
            }
        }
    }

    #[test]
    fn every_page_wait_table_fits_its_area() {
        for era in [PageWaitEra::V3_8, PageWaitEra::V4_11] {
            let design = page_wait::preset(era);
            let bytes = design.slots() * design.bucket_bytes + design.align;
            assert!(bytes <= PAGE_WAIT_TABLE_BYTES, "{}", design.name);
        }
    }

    #[test]
    fn the_largest_design_fits_the_vmalloc_area_before_the_stacks() {
        const { assert!(MAX_TABLE_BYTES <= VMALLOC_TABLES.extent) };
    }

    #[test]
    fn the_lowest_mapping_a_run_makes_stays_in_the_mappings_area() {
        // Every task a pthread with a default stack and guard page, below
        // the lowest mmap base, and the largest program memory below them.
        let stacks = u64::from(MAX_RUN_TASKS) * ((8 << 20) + PAGE);
        assert!(MMAP_BASE - stacks - MAX_PROGRAM_MEMORY >= USER_MAPPINGS.base);
        assert!(MMAP_BASE + RANDOMIZED_PAGES * PAGE <= USER_MAPPINGS.end());
        assert!(STACK_TOP < USER_MAPPINGS.end());
        assert_eq!(USER_MAPPINGS.end(), USER_SPACE_END);
    }
}
