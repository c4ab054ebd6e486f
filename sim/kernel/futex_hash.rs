//! A table design realized on one machine for one workload: its instances in
//! memory, each process's private hash as its life left it (allocated at the
//! first thread creation, grown by the era's rule at each later one, or set
//! by prctl), and `futex_hash`, which maps a key to its bucket as the kernel
//! of that design would.

use super::key::{FutexKey, HashInput};
use super::table::{eval_slots, DesignError, FieldName, Placement, SizingVars, TableDesign};
use crate::address_map::{KERNEL_BSS_FUTEX_QUEUES, VMALLOC_TABLES};
use crate::coherence::MappedSpan;
use crate::expr::Expr;
use crate::limits::MAX_TABLE_BYTES;
use crate::machine::tlb::{KernelMapping, Translation};
use crate::memory::{Arena, Home, MemoryMap, RegionId};

/// The largest allocation the page allocator (and so kmalloc) makes: order
/// MAX_PAGE_ORDER (10) of 4 KiB pages. A larger one is vmalloc'd: by
/// alloc_large_system_hash, by 6.16's futex_init, and by kvzalloc's
/// fallback.
const LARGEST_PAGE_ALLOCATION: u64 = 4 << 20;

/// The kernel mapping the era's allocator puts a table of `len` bytes in
/// (docs/eras.md, "The tables' mappings"): a static array is in the kernel
/// image's .bss; a private hash is kvzalloc'd (6.16+; 2009's proposal
/// kmalloc'd its 256 buckets); a global table comes from
/// alloc_large_system_hash, which vmallocs it a base page at a time with
/// hashdist (64-bit NUMA kernels) so its pages interleave over the nodes,
/// and takes it from the page allocator otherwise; 6.16's per-node tables
/// from alloc_pages_exact_nid, or vmalloc_huge_node beyond it.
fn mapping_of(placement: Placement, in_bss: bool, private: bool, len: u64) -> KernelMapping {
    match placement {
        _ if private => page_allocator_or(len, KernelMapping::VmallocHuge),
        _ if in_bss => KernelMapping::Image,
        Placement::Interleaved => KernelMapping::Vmalloc,
        Placement::BootNode | Placement::PerNode => {
            page_allocator_or(len, KernelMapping::VmallocHuge)
        }
    }
}

/// Where the era's allocator puts a table of `len` bytes whose pages come
/// from the page allocator when they fit it, and from `larger` otherwise.
fn page_allocator_or(len: u64, larger: KernelMapping) -> KernelMapping {
    if len <= LARGEST_PAGE_ALLOCATION {
        KernelMapping::DirectMap
    } else {
        larger
    }
}

/// One bucket array in memory.
#[derive(Clone, Debug)]
pub struct TableInstance {
    /// Address of bucket 0.
    pub base: u64,
    /// Address of the header line (refcount, mask) of a private hash.
    pub header: Option<u64>,
    pub slots: u64,
    pub region: RegionId,
}

/// Which table a bucket belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableSel {
    /// The global table, or its instance on one node.
    Global(u32),
    /// A process's private hash: the table it ends with.
    Private(u32),
    /// A smaller private hash a process used before it grew (threads
    /// created while the run goes on): its `generation`-th table.
    Outgrown { process: u32, generation: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bucket {
    pub table: TableSel,
    pub index: u32,
}

/// What futex_hash found for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashed {
    pub hash: u32,
    pub bucket: Bucket,
}

/// Per-process facts the tables are sized and placed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    pub threads: u64,
    /// Node of the process's first thread: where its private hash is allocated.
    pub node: u32,
    /// What the process asked with prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS)
    /// before creating its threads; None: nothing.
    pub set_slots: Option<SetSlots>,
    /// Whether its threads are created while the run goes on: then every
    /// table its growth passes through is laid out, not only the last.
    pub created_in_run: bool,
}

impl ProcessInfo {
    /// A process that leaves its private hash to the kernel's default.
    pub fn new(threads: u64, node: u32) -> ProcessInfo {
        ProcessInfo {
            threads,
            node,
            set_slots: None,
            created_in_run: false,
        }
    }
}

/// PR_FUTEX_HASH_SET_SLOTS as perf bench's `-b N` (and `-I`) issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetSlots {
    /// 0 switches the process to the global hash for good.
    pub slots: u64,
    /// FH_FLAG_IMMUTABLE (6.16-rc only).
    pub immutable: bool,
}

/// How a process's private hash came to its final size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlotsSetBy {
    /// No private hash: the design has none, or the process has too few threads.
    NoPrivateHash,
    /// futex_hash_allocate_default at each thread creation.
    ThreadCreation,
    /// PR_FUTEX_HASH_SET_SLOTS; 0 slots is the global hash.
    Prctl,
    /// PR_FUTEX_HASH_SET_SLOTS with FH_FLAG_IMMUTABLE.
    PrctlImmutable,
}

/// A process's private hash at the end of its threads' creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrivateLife {
    /// Slots it ended with; 0 for the global hash.
    pub slots: u64,
    /// Times a larger table replaced the one in use.
    pub resizes: u32,
    pub set_by: SlotsSetBy,
    /// What the resizes cost where threads were created while the run went
    /// on (then `slots` and `resizes` are what the run reached); None where
    /// every thread existed before it began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_run: Option<ResizesInRun>,
}

/// The private hash's resizes a run went through (sim/kernel/resize.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResizesInRun {
    /// Larger tables the growth allocated.
    pub allocated: u32,
    /// Of them, the ones published (the old table drained and rehashed).
    pub published: u32,
    /// Queued futex_qs futex_rehash_private moved from an old table to a new.
    pub moved: u64,
    /// Simulated ns from each allocation to its table's publication (or to
    /// the run's end where it never was): the drain included.
    pub resize_ns: u64,
}

/// One table of a private hash's growth: the creation that allocated it
/// (the 0-based index of the thread created, the threads then existing
/// being one more) and its slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation {
    pub created_by: u64,
    pub slots: u64,
}

/// Every table futex_hash_allocate_default allocates over `threads`
/// thread creations, the first at the first creation; a later one only
/// where the rule gives more slots than the table in use.
/// futex_hash_allocate_default (bd54df5ea7ca) sizes by the threads the
/// process has at that creation, the new one not yet counted (the main
/// thread and the k - 1 created before it at the k-th); an era without
/// growth keeps the first size.
pub fn growth_steps(
    rule: &Expr,
    vars: &SizingVars,
    threads: u64,
    grows: bool,
) -> Result<Vec<Generation>, DesignError> {
    let first = eval_slots(rule, &vars.for_process(1, vars.node_slots))?;
    let mut steps = vec![Generation {
        created_by: 0,
        slots: first,
    }];
    if !grows {
        return Ok(steps);
    }
    for existing in 2..=threads {
        let want = eval_slots(rule, &vars.for_process(existing, vars.node_slots))?;
        if want > steps.last().map_or(0, |g| g.slots) {
            steps.push(Generation {
                created_by: existing - 1,
                slots: want,
            });
        }
    }
    Ok(steps)
}

#[derive(Clone, Debug)]
pub struct FutexHash {
    pub design: TableDesign,
    pub global: Vec<TableInstance>,
    pub private: Vec<Option<TableInstance>>,
    /// Each process's tables before its last, oldest first: laid out only
    /// where its threads are created while the run goes on.
    pub outgrown: Vec<Vec<TableInstance>>,
    /// Each process's growth, where the kernel's default sized its table.
    pub growth: Vec<Vec<Generation>>,
    /// Each process's private hash header (address, region): also where a
    /// SET_SLOTS 0 table keeps its zero mask and nothing else.
    headers: Vec<Option<(u64, RegionId)>>,
    /// Every table region, in the order laid out, and the kernel mapping
    /// its era's allocator gives it.
    mappings: Vec<(RegionId, KernelMapping)>,
    /// How each process's private hash ended.
    pub lives: Vec<PrivateLife>,
    /// ilog2 of one global instance's slots: the node is taken from the bits above.
    global_shift: u32,
    /// Each field's offset in a bucket, by `FieldName`: an op's every step
    /// names a field, and the design lists its fields in any order.
    field_offsets: [Option<u32>; FieldName::ALL.len()],
}

/// Counts `bytes` more of tables, refusing a design whose tables overflow
/// [`MAX_TABLE_BYTES`].
fn add_table_bytes(total: &mut u64, bytes: u64) -> Result<(), DesignError> {
    *total = total.saturating_add(bytes);
    if *total > MAX_TABLE_BYTES {
        return Err(DesignError::TooLarge {
            bytes: *total,
            limit: MAX_TABLE_BYTES,
        });
    }
    Ok(())
}

impl FutexHash {
    /// Sizes and places every table instance, adding each to `memory`.
    pub fn build(
        design: &TableDesign,
        vars: SizingVars,
        processes: &[ProcessInfo],
        nodes: u32,
        memory: &mut MemoryMap,
    ) -> Result<FutexHash, DesignError> {
        let global_slots = eval_slots(&design.slots, &vars)?;
        let bucket = u64::from(design.bucket.size);
        let global_count = match design.placement {
            Placement::PerNode => u64::from(nodes),
            _ => 1,
        };
        let mut table_bytes = 0;
        add_table_bytes(&mut table_bytes, global_count * global_slots * bucket)?;
        let mut statics = Arena::new(KERNEL_BSS_FUTEX_QUEUES.base);
        let mut dynamic = Arena::new(VMALLOC_TABLES.base);
        let mut mappings = Vec::new();
        let mut instance = |name: String,
                            slots: u64,
                            header_bytes: u64,
                            home: Home,
                            arena_is_static: bool,
                            private: bool| {
            let len = header_bytes + slots * bucket;
            let arena = if arena_is_static {
                &mut statics
            } else {
                &mut dynamic
            };
            let start = arena.alloc(len, design.align, design.base_offset);
            let region = memory.add(name, start, len, home);
            mappings.push((
                region,
                mapping_of(design.placement, arena_is_static, private, len),
            ));
            TableInstance {
                base: start + header_bytes,
                header: (header_bytes > 0).then_some(start),
                slots,
                region,
            }
        };
        let global = match design.placement {
            Placement::BootNode => {
                vec![instance(
                    "futex_queues".into(),
                    global_slots,
                    0,
                    Home::Node(0),
                    design.align < 4096,
                    false,
                )]
            }
            Placement::Interleaved => {
                vec![instance(
                    "futex_queues".into(),
                    global_slots,
                    0,
                    Home::Interleaved { nodes },
                    false,
                    false,
                )]
            }
            Placement::PerNode => (0..nodes)
                .map(|n| {
                    instance(
                        format!("futex_queues[node {n}]"),
                        global_slots,
                        0,
                        Home::Node(n),
                        false,
                        false,
                    )
                })
                .collect(),
        };
        let mut private = Vec::with_capacity(processes.len());
        let mut headers = Vec::with_capacity(processes.len());
        let mut lives = Vec::with_capacity(processes.len());
        let mut growth = Vec::with_capacity(processes.len());
        for (p, info) in processes.iter().enumerate() {
            let none = PrivateLife {
                slots: 0,
                resizes: 0,
                set_by: SlotsSetBy::NoPrivateHash,
                in_run: None,
            };
            let Some(ph) = &design.private else {
                private.push(None);
                headers.push(None);
                lives.push(none);
                growth.push(Vec::new());
                continue;
            };
            let (life, steps) = match info.set_slots {
                Some(SetSlots { slots, immutable }) => (
                    PrivateLife {
                        slots,
                        resizes: 0,
                        set_by: if immutable {
                            SlotsSetBy::PrctlImmutable
                        } else {
                            SlotsSetBy::Prctl
                        },
                        in_run: None,
                    },
                    Vec::new(),
                ),
                None if info.threads >= u64::from(ph.min_threads) => {
                    let v = vars.for_process(info.threads, global_slots);
                    let steps = growth_steps(&ph.slots, &v, info.threads, ph.grows)?;
                    let life = PrivateLife {
                        slots: steps.last().map_or(0, |g| g.slots),
                        resizes: steps.len().saturating_sub(1) as u32,
                        set_by: SlotsSetBy::ThreadCreation,
                        in_run: None,
                    };
                    (life, steps)
                }
                None => (none, Vec::new()),
            };
            let header = u64::from(ph.header_bytes);
            let table = (life.set_by != SlotsSetBy::NoPrivateHash).then(|| {
                let name = format!("process {p} private hash");
                instance(name, life.slots, header, Home::Node(info.node), false, true)
            });
            if table.is_some() {
                add_table_bytes(&mut table_bytes, header + life.slots * bucket)?;
            }
            headers.push(table.as_ref().and_then(|t| t.header.map(|h| (h, t.region))));
            private.push(table.filter(|t| t.slots > 0));
            lives.push(life);
            growth.push(steps);
        }
        // The tables a growth in the run passes through, after every final
        // one, so a run whose threads all exist from the start lays out
        // exactly what it always did.
        let mut outgrown = Vec::with_capacity(processes.len());
        for (p, info) in processes.iter().enumerate() {
            let header = design
                .private
                .as_ref()
                .map_or(0, |ph| u64::from(ph.header_bytes));
            let earlier = match growth[p].split_last() {
                Some((_, earlier)) if info.created_in_run => earlier,
                _ => &[],
            };
            let mut tables = Vec::with_capacity(earlier.len());
            for (g, generation) in earlier.iter().enumerate() {
                add_table_bytes(&mut table_bytes, header + generation.slots * bucket)?;
                let name = format!("process {p} private hash, table {g}");
                tables.push(instance(
                    name,
                    generation.slots,
                    header,
                    Home::Node(info.node),
                    false,
                    true,
                ));
            }
            outgrown.push(tables);
        }
        // Laid out a page apart, tables within the byte limit can still
        // run into the kernel stacks: one table per node on a large machine;
        // and a static table larger than any era's into the page wait table
        // after it in .bss.
        for (arena, area) in [
            (&statics, KERNEL_BSS_FUTEX_QUEUES),
            (&dynamic, VMALLOC_TABLES),
        ] {
            let laid_out = arena.next_free() - area.base;
            if laid_out > area.extent {
                return Err(DesignError::TooLarge {
                    bytes: laid_out,
                    limit: area.extent,
                });
            }
        }
        Ok(FutexHash {
            design: design.clone(),
            global,
            private,
            outgrown,
            growth,
            headers,
            mappings,
            lives,
            global_shift: global_slots.trailing_zeros(),
            field_offsets: FieldName::ALL.map(|f| design.bucket.field(f).map(|f| f.offset)),
        })
    }

    /// The tables' regions as spans of one page size each on a machine
    /// that translates as `t` does, in line order: consecutive regions of
    /// one page size, laid out upwards, make one span (a static global
    /// table in .bss and the private tables after it in lines lie apart in
    /// addresses).
    pub fn mapped_spans(&self, memory: &MemoryMap, t: &Translation) -> Vec<MappedSpan> {
        let mut spans: Vec<MappedSpan> = Vec::with_capacity(self.mappings.len());
        for &(region, mapping) in &self.mappings {
            let r = memory.region(region);
            let lines = r.first_line()..r.first_line() + r.line_count();
            let page = t.page_of(mapping);
            match spans.last_mut() {
                Some(last)
                    if last.lines.end == lines.start
                        && last.page == page
                        && last.addrs.end <= r.base =>
                {
                    last.lines.end = lines.end;
                    last.addrs.end = r.base + r.len;
                }
                _ => spans.push(MappedSpan {
                    lines,
                    addrs: r.base..r.base + r.len,
                    page,
                }),
            }
        }
        spans
    }

    /// The words and initval jhash2 reads for `key`, and whether they go to
    /// the process's private hash: only a private key of a process that has
    /// one does (docs/kernel-facts.md §2.4).
    #[inline]
    pub fn hash_input(&self, key: &FutexKey, process: u32) -> (HashInput, bool) {
        let d = &self.design;
        if let (Some(ph), Some(Some(_))) = (&d.private, self.private.get(process as usize)) {
            if key.is_private() {
                return (key.hash_input(ph.key_order, d.word_size), true);
            }
        }
        (self.global_input(key), false)
    }

    /// The words the global table hashes: in the design's order, even one
    /// that leaves the key's pointer out, so that keys of different
    /// processes at one address share a bucket as such a kernel made them.
    pub fn global_input(&self, key: &FutexKey) -> HashInput {
        key.hash_input(self.design.key_order, self.design.word_size)
    }

    /// Process `process`'s private hash header, where it has one.
    pub fn header_of(&self, process: u32) -> Option<(u64, RegionId)> {
        self.headers.get(process as usize).copied().flatten()
    }

    /// Whether the process made its private hash immutable (6.16-rc's -I).
    pub fn immutable(&self, process: u32) -> bool {
        self.lives
            .get(process as usize)
            .is_some_and(|l| l.set_by == SlotsSetBy::PrctlImmutable)
    }

    /// The kernel's futex_hash(): private hash first where the design and the
    /// key allow it, else the global table (and its node).
    #[inline]
    pub fn futex_hash(&self, key: &FutexKey, process: u32) -> Hashed {
        self.futex_hash_on(key, process, None)
    }

    /// futex_hash of a key that may carry a FUTEX2_NUMA node: such a key
    /// never uses the private hash and goes to its node's table; any other
    /// takes its node from the hash bits above the mask, modulo the nodes
    /// (`__futex_hash`; every node is possible here).
    #[inline]
    pub fn futex_hash_on(&self, key: &FutexKey, process: u32, node: Option<u32>) -> Hashed {
        let table = self.private[process as usize]
            .is_some()
            .then_some(TableSel::Private(process));
        self.futex_hash_in(key, node, table)
    }

    /// futex_hash with the process's private table in use named (None: it
    /// has none, or none yet): a process growing in the run hashes into
    /// the table published at that moment. Always inlined into the op's way
    /// in: as a call, its answer came back through memory, stored field by
    /// field and read as one 16-byte load the host cannot forward from its
    /// store buffer (a fifth of `begin`'s time in the 64-CPU benchmark).
    #[inline(always)]
    pub fn futex_hash_in(
        &self,
        key: &FutexKey,
        node: Option<u32>,
        in_use: Option<TableSel>,
    ) -> Hashed {
        let private = match (&self.design.private, in_use) {
            (Some(ph), Some(table)) if node.is_none() && key.is_private() => {
                Some((key.hash_input(ph.key_order, self.design.word_size), table))
            }
            _ => None,
        };
        let input = match &private {
            Some((input, _)) => *input,
            None => self.global_input(key),
        };
        let hash = self.design.hash.jhash2(input.words(), input.initval);
        let nodes = self.global.len() as u64;
        let table = match private {
            Some((_, table)) => table,
            None => TableSel::Global(match (node, nodes) {
                (_, 1) => 0,
                (Some(n), _) => (u64::from(n) % nodes) as u32,
                (None, _) => ((u64::from(hash) >> self.global_shift) % nodes) as u32,
            }),
        };
        let index = (u64::from(hash) & (self.instance(table).slots - 1)) as u32;
        Hashed {
            hash,
            bucket: Bucket { table, index },
        }
    }

    // Inlined: every op reaches its table through it, several times an op.
    #[inline(always)]
    pub fn instance(&self, table: TableSel) -> &TableInstance {
        match table {
            TableSel::Global(n) => &self.global[n as usize],
            TableSel::Private(p) => self.private[p as usize]
                .as_ref()
                .expect("process has a private hash"),
            TableSel::Outgrown {
                process,
                generation,
            } => &self.outgrown[process as usize][generation as usize],
        }
    }

    /// Process `process`'s `generation`-th table of its growth: an
    /// outgrown one, or the last.
    pub fn generation(&self, process: u32, generation: u32) -> TableSel {
        if (generation as usize) < self.outgrown[process as usize].len() {
            TableSel::Outgrown {
                process,
                generation,
            }
        } else {
            TableSel::Private(process)
        }
    }

    pub fn bucket_addr(&self, b: Bucket) -> u64 {
        self.instance(b.table).base + u64::from(b.index) * u64::from(self.design.bucket.size)
    }

    /// Byte address of one field of a bucket, None if the design lacks it.
    #[inline]
    pub fn field_addr(&self, b: Bucket, field: FieldName) -> Option<u64> {
        self.field_in(b, field).map(|(addr, _)| addr)
    }

    /// Byte address of one field of a bucket and the region it lies in,
    /// None if the design lacks the field.
    #[inline]
    pub fn field_in(&self, b: Bucket, field: FieldName) -> Option<(u64, RegionId)> {
        let offset = self.field_offsets[field as usize]?;
        let t = self.instance(b.table);
        let bucket = t.base + u64::from(b.index) * u64::from(self.design.bucket.size);
        Some((bucket + u64::from(offset), t.region))
    }

    /// Which bucket and field a byte of a table belongs to (for reports).
    pub fn locate(&self, table: TableSel, addr: u64) -> Option<(u32, Option<FieldName>)> {
        let t = self.instance(table);
        let size = u64::from(self.design.bucket.size);
        if addr < t.base || addr >= t.base + t.slots * size {
            return None;
        }
        let index = ((addr - t.base) / size) as u32;
        let off = ((addr - t.base) % size) as u32;
        let field = self
            .design
            .bucket
            .fields
            .iter()
            .find(|f| off >= f.offset && off < f.offset + f.size);
        Some((index, field.map(|f| f.name)))
    }

    /// Bytes of every table: global instances plus each private hash.
    pub fn memory_bytes(&self) -> u64 {
        let size = u64::from(self.design.bucket.size);
        let header = self
            .design
            .private
            .as_ref()
            .map_or(0, |p| u64::from(p.header_bytes));
        let global: u64 = self.global.iter().map(|t| t.slots * size).sum();
        let private: u64 = self
            .lives
            .iter()
            .filter(|l| l.set_by != SlotsSetBy::NoPrivateHash)
            .map(|l| l.slots * size + header)
            .sum();
        global + private
    }

    pub fn global_slots(&self) -> u64 {
        self.global[0].slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::key::{get_futex_key, KeySource, WordSize};
    use crate::kernel::table::preset;
    use crate::memory::PAGE_SIZE;

    const MM: u64 = 0xffff_8881_00ab_c000;

    fn build(name: &str, cpus: u64, nodes: u32, threads: u64) -> (FutexHash, MemoryMap) {
        let mut memory = MemoryMap::new(64);
        let vars = SizingVars {
            cpus,
            possible_cpus: cpus,
            nodes: nodes.into(),
            threads,
            processes: 1,
            futexes: threads * 1024,
            node_slots: 0,
        };
        let procs = [ProcessInfo::new(threads, 0)];
        let h = FutexHash::build(&preset(name).unwrap(), vars, &procs, nodes, &mut memory).unwrap();
        (h, memory)
    }

    fn key(uaddr: u64) -> FutexKey {
        get_futex_key(
            uaddr,
            KeySource::Private { mm: MM },
            WordSize::Bits64,
            PAGE_SIZE,
        )
        .unwrap()
    }

    #[test]
    fn derived_futex_vectors_land_in_their_buckets() {
        let (h, _) = build("fixed-256", 8, 1, 8);
        let got = h.futex_hash(&key(0x7f12_3456_7abc), 0);
        assert_eq!(got.hash, 0x9683_6945);
        assert_eq!(
            got.bucket,
            Bucket {
                table: TableSel::Global(0),
                index: 69
            }
        );
        // 5.6+ order with an 8192-slot table: 32 CPUs x 256.
        let (h, _) = build("numa-6.16", 32, 1, 1);
        let got = h.futex_hash(&key(0x7f12_3456_7abc), 0);
        assert_eq!((got.hash, got.bucket.index), (0x5e88_6637, 1591));
        // Private hash of 16 slots for a 2-thread process; 128 at 32 threads.
        let (h, _) = build("private-6.17", 32, 1, 2);
        let got = h.futex_hash(&key(0x7f12_3456_7abc), 0);
        assert_eq!(
            (got.hash, got.bucket),
            (
                0x5583_4d30,
                Bucket {
                    table: TableSel::Private(0),
                    index: 0
                }
            )
        );
        let (h, _) = build("private-6.17", 32, 1, 32);
        assert_eq!(h.futex_hash(&key(0x7f12_3456_7abc), 0).bucket.index, 48);
    }

    /// futex_hash_allocate_default at each of 32 thread creations on 32
    /// CPUs: 16 slots up to 4 threads, then 32, 64 and 128; 7c4f75a21f keeps
    /// its first 16; a prctl'd size stays, 0 being the global hash.
    #[test]
    fn private_hashes_grow_at_thread_creation_unless_set() {
        let (h, _) = build("v6.17", 32, 1, 32);
        assert_eq!(
            h.lives[0],
            PrivateLife {
                slots: 128,
                resizes: 3,
                set_by: SlotsSetBy::ThreadCreation,
                in_run: None,
            }
        );
        let (h, _) = build("7c4f75a21f", 32, 1, 32);
        assert_eq!((h.lives[0].slots, h.lives[0].resizes), (16, 0));
        let mut memory = MemoryMap::new(64);
        let vars = SizingVars {
            cpus: 32,
            possible_cpus: 32,
            nodes: 1,
            threads: 32,
            processes: 1,
            futexes: 32,
            node_slots: 0,
        };
        let set = |slots, immutable| ProcessInfo {
            set_slots: Some(SetSlots { slots, immutable }),
            ..ProcessInfo::new(32, 0)
        };
        let design = preset("v6.16-rc1").unwrap();
        let procs = [set(0, false), set(1024, true)];
        let h = FutexHash::build(&design, vars, &procs, 1, &mut memory).unwrap();
        assert!(h.private[0].is_none() && h.header_of(0).is_some());
        assert!(matches!(
            h.futex_hash(&key(0x1000), 0).bucket.table,
            TableSel::Global(0)
        ));
        assert_eq!(h.private[1].as_ref().map(|t| t.slots), Some(1024));
        assert!(h.immutable(1) && !h.immutable(0));
    }

    #[test]
    fn single_threaded_and_shared_keys_use_the_global_table() {
        let (h, _) = build("private-6.17", 32, 2, 1);
        assert!(matches!(
            h.futex_hash(&key(0x1000), 0).bucket.table,
            TableSel::Global(_)
        ));
        let (h, _) = build("private-6.17", 32, 2, 8);
        let shared = get_futex_key(
            0x1000,
            KeySource::SharedAnon { mm: MM },
            WordSize::Bits64,
            PAGE_SIZE,
        )
        .unwrap();
        assert!(matches!(
            h.futex_hash(&shared, 0).bucket.table,
            TableSel::Global(_)
        ));
    }

    #[test]
    fn packed_buckets_share_lines_and_aligned_ones_do_not() {
        let (h, memory) = build("fixed-256", 8, 1, 8);
        let line = |b| {
            memory.line_in(
                h.global[0].region,
                h.field_addr(b, FieldName::Lock).unwrap(),
            )
        };
        let b = |index| Bucket {
            table: TableSel::Global(0),
            index,
        };
        // 40-byte buckets from a line boundary: locks 0 and 1 at bytes 0 and 40.
        assert_eq!(line(b(0)), line(b(1)));
        assert_ne!(line(b(1)), line(b(2)));
        let (h, memory) = build("aligned-3.14", 8, 1, 8);
        let line = |b| {
            memory.line_in(
                h.global[0].region,
                h.field_addr(b, FieldName::Lock).unwrap(),
            )
        };
        assert_ne!(line(b(0)), line(b(1)));
        assert_eq!(
            h.locate(TableSel::Global(0), h.bucket_addr(b(3)) + 9),
            Some((3, Some(FieldName::Chain)))
        );
    }

    #[test]
    fn per_node_tables_spread_keys_over_nodes() {
        let (h, memory) = build("numa-6.16", 64, 4, 64);
        let mut per_node = [0u32; 4];
        for i in 0..4096u64 {
            match h.futex_hash(&key(0x7f00_0000_0000 + 4 * i), 0).bucket.table {
                TableSel::Global(n) => per_node[n as usize] += 1,
                TableSel::Private(_) | TableSel::Outgrown { .. } => unreachable!(),
            }
        }
        assert!(
            per_node.iter().all(|&c| (800..1250).contains(&c)),
            "{per_node:?}"
        );
        assert_eq!(
            memory.home_of_line(memory.line_in(h.global[2].region, h.global[2].base)),
            2
        );
    }
}
