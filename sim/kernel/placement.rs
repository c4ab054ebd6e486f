//! Where the kernel objects a futex op touches beside the table sit, in
//! the areas of sim/address_map.rs: each task's futex_q on its kernel
//! stack, each CPU's per-CPU area, each task's cached `futex_pi_state`,
//! and what a shared key pins (struct pages, mm_count, i_count).

use super::core::{first_task_and_count, TaskInfo};
use crate::address_map::{
    KERNEL_STACKS, KERNEL_STACK_BYTES, KEY_OBJECTS, PERCPU, PERCPU_STRIDE, PI_STATE_BYTES,
    PI_STATE_SLABS, VMEMMAP,
};
use crate::memory::{Arena, Home, Mem, MemoryMap, RegionId};

/// `sizeof(struct page)` on x86-64: one line.
pub(super) const STRUCT_PAGE_BYTES: u64 = 64;

/// The kernel objects of a run's futex system, laid out.
pub(super) struct KernelObjects {
    /// Each task's futex_q, on its kernel stack.
    pub(super) futex_q: Vec<Mem>,
    /// Each CPU's per-CPU area: its region and base.
    pub(super) percpu: Vec<(RegionId, u64)>,
    /// Each task's cached `futex_pi_state`.
    pub(super) pi_state_cache: Vec<Mem>,
    pub(super) pins: KeyObjects,
}

/// The objects a shared key's path touches beside the bucket: each user
/// region's `struct page`s, each process's `mm_struct` line holding
/// mm_count, and the shared file's inode line holding i_count. futexsim
/// places them in an area of its own: only which line each is matters.
pub(super) struct KeyObjects {
    pub(super) page_size: u64,
    /// For each region a futex word may be in: its struct page array's region and base.
    pub(super) struct_pages: Vec<Option<(RegionId, u64)>>,
    pub(super) mm_count: Vec<Mem>,
    pub(super) inode_count: Mem,
}

impl KernelObjects {
    /// Adds each task's kernel stack, each CPU's per-CPU area, each task's
    /// `futex_pi_state` and the objects shared keys pin to `memory`; the
    /// struct pages are those of every region but the futex `tables`.
    pub(super) fn place(
        tasks: &[TaskInfo],
        mms: &[u64],
        cpu_nodes: &[u32],
        page_size: u64,
        tables: &[RegionId],
        memory: &mut MemoryMap,
    ) -> KernelObjects {
        let mut stacks = Arena::new(KERNEL_STACKS.base);
        let futex_q = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                // futex_wait's futex_q sits a little below the top of the stack.
                let top =
                    stacks.alloc(KERNEL_STACK_BYTES, KERNEL_STACK_BYTES, 0) + KERNEL_STACK_BYTES;
                let addr = top - 0x200;
                let region = memory.add(
                    format!("task {i} kernel stack"),
                    addr,
                    64,
                    Home::Node(cpu_nodes[t.cpu as usize]),
                );
                Mem {
                    addr,
                    line: memory.line_in(region, addr),
                }
            })
            .collect();
        let mut percpu_arena = Arena::new(PERCPU.base);
        let percpu = cpu_nodes
            .iter()
            .enumerate()
            .map(|(cpu, &node)| {
                let base = percpu_arena.alloc(PERCPU_STRIDE, 64, 0);
                (
                    memory.add(
                        format!("cpu {cpu} per-cpu"),
                        base,
                        PERCPU_STRIDE,
                        Home::Node(node),
                    ),
                    base,
                )
            })
            .collect();
        KernelObjects {
            futex_q,
            percpu,
            pi_state_cache: pi_state_objects(tasks, cpu_nodes, memory),
            pins: KeyObjects::new(tasks, mms, cpu_nodes, page_size, tables, memory),
        }
    }
}

/// Each task's cached `futex_pi_state`, a kmalloc object on its CPU's node.
fn pi_state_objects(tasks: &[TaskInfo], cpu_nodes: &[u32], memory: &mut MemoryMap) -> Vec<Mem> {
    let nodes = cpu_nodes.iter().max().map_or(1, |&n| n + 1);
    let mut per_node = vec![0u64; nodes as usize];
    let slots: Vec<(u32, u64)> = tasks
        .iter()
        .map(|t| {
            let node = cpu_nodes[t.cpu as usize];
            let slot = per_node[node as usize];
            per_node[node as usize] += 1;
            (node, slot)
        })
        .collect();
    let mut slabs = Arena::new(PI_STATE_SLABS.base);
    let regions: Vec<Option<(RegionId, u64)>> = per_node
        .iter()
        .enumerate()
        .map(|(node, &count)| {
            (count > 0).then(|| {
                let base = slabs.alloc(count * PI_STATE_BYTES, 1, 0);
                let region = memory.add(
                    format!("node {node} futex_pi_state cache"),
                    base,
                    count * PI_STATE_BYTES,
                    Home::Node(node as u32),
                );
                (region, base)
            })
        })
        .collect();
    slots
        .into_iter()
        .map(|(node, slot)| {
            let (region, base) = regions[node as usize].expect("a node with tasks has a region");
            let addr = base + slot * PI_STATE_BYTES;
            Mem {
                addr,
                line: memory.line_in(region, addr),
            }
        })
        .collect()
}

impl KeyObjects {
    /// Lays out the struct pages of every region a futex word may be in
    /// (one 64-byte struct per page, on the page's node): each the workload
    /// placed, not the futex tables; and the mm_count and i_count lines.
    fn new(
        tasks: &[TaskInfo],
        mms: &[u64],
        cpu_nodes: &[u32],
        page_size: u64,
        tables: &[RegionId],
        memory: &mut MemoryMap,
    ) -> KeyObjects {
        let mut vmemmap = Arena::new(VMEMMAP.base);
        // Looked up once a region: a design with a table per process has
        // as many tables as processes.
        let mut tables = tables.to_vec();
        tables.sort_unstable();
        let user: Vec<(usize, u64, u64, Home, String)> = memory
            .regions()
            .iter()
            .enumerate()
            .filter(|&(i, _)| tables.binary_search(&(i as RegionId)).is_err())
            .map(|(i, r)| (i, r.base, r.len, r.home, r.name.clone()))
            .collect();
        let mut struct_pages = vec![None; memory.regions().len()];
        for (i, base, len, home, name) in user {
            let pages = (base + len.max(1) - 1) / page_size - base / page_size + 1;
            let start = vmemmap.alloc(pages * STRUCT_PAGE_BYTES, 64, 0);
            let region = memory.add(
                format!("struct pages of {name}"),
                start,
                pages * STRUCT_PAGE_BYTES,
                home,
            );
            struct_pages[i] = Some((region, start));
        }
        let mut objects = Arena::new(KEY_OBJECTS.base);
        let mut line = |name: String, node: u32, memory: &mut MemoryMap| {
            let addr = objects.alloc(64, 64, 0);
            let region = memory.add(name, addr, 64, Home::Node(node));
            Mem {
                addr,
                line: memory.line_in(region, addr),
            }
        };
        let mm_count = first_task_and_count(tasks.iter().map(|t| t.process), mms.len())
            .into_iter()
            .enumerate()
            .map(|(p, (first, _))| {
                let node = first.map_or(0, |t| cpu_nodes[tasks[t].cpu as usize]);
                line(format!("process {p} mm_struct (mm_count)"), node, memory)
            })
            .collect();
        let inode_count = line("shared file inode (i_count)".into(), 0, memory);
        KeyObjects {
            page_size,
            struct_pages,
            mm_count,
            inode_count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pi_state_objects, TaskInfo, PI_STATE_SLABS};
    use crate::limits::MAX_NODES;
    use crate::memory::MemoryMap;

    /// With a task on every node Linux supports, each node's cached
    /// `futex_pi_state` objects stay in the area the address map gives them,
    /// and no two nodes' objects share a page.
    #[test]
    fn every_node_s_slab_stays_in_its_area() {
        let cpu_nodes: Vec<u32> = (0..MAX_NODES).flat_map(|n| [n, n]).collect();
        let tasks: Vec<TaskInfo> = (0..cpu_nodes.len() as u32)
            .map(|cpu| TaskInfo { process: 0, cpu })
            .collect();
        let mut memory = MemoryMap::new(64);
        let objects = pi_state_objects(&tasks, &cpu_nodes, &mut memory);
        assert_eq!(objects.len(), tasks.len());
        let mut pages: Vec<(u64, u32)> = Vec::new();
        for (object, task) in objects.iter().zip(&tasks) {
            assert!(
                (PI_STATE_SLABS.base..PI_STATE_SLABS.end()).contains(&object.addr),
                "{:#x}",
                object.addr
            );
            pages.push((object.addr >> 12, cpu_nodes[task.cpu as usize]));
        }
        pages.sort_unstable();
        pages.dedup();
        for pair in pages.windows(2) {
            assert!(pair[0].0 != pair[1].0, "nodes {pair:?} share a page");
        }
    }
}
