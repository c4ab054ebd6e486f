//! A table design realized on one machine for one workload: its instances in
//! memory, and `futex_hash`, which maps a key to its bucket as the kernel of
//! that design would.

use super::key::{FutexKey, HashInput, KeyOrder};
use super::table::{eval_slots, DesignError, FieldName, Placement, SizingVars, TableDesign};
use crate::memory::{Arena, Home, MemoryMap, RegionId};

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
    /// A process's private hash.
    Private(u32),
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
}

#[derive(Clone, Debug)]
pub struct FutexHash {
    pub design: TableDesign,
    pub global: Vec<TableInstance>,
    pub private: Vec<Option<TableInstance>>,
    /// ilog2 of one global instance's slots: the node is taken from the bits above.
    global_shift: u32,
}

/// The most bytes all of a design's tables may take together: far beyond
/// any kernel's (2^24 slots of 64-byte buckets), and well inside the
/// kernel address areas they are placed in.
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

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

/// Kernel virtual address areas: static .bss, and the vmalloc/direct map.
const KERNEL_STATIC: u64 = 0xffff_ffff_8260_0000;
const KERNEL_DYNAMIC: u64 = 0xffff_c900_0000_0000;

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
        let mut statics = Arena::new(KERNEL_STATIC);
        let mut dynamic = Arena::new(KERNEL_DYNAMIC);
        let mut instance =
            |name: String, slots: u64, header_bytes: u64, home: Home, arena_is_static: bool| {
                let len = header_bytes + slots * bucket;
                let arena = if arena_is_static {
                    &mut statics
                } else {
                    &mut dynamic
                };
                let start = arena.alloc(len, design.align, design.base_offset);
                let region = memory.add(name, start, len, home);
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
                )]
            }
            Placement::Interleaved => {
                vec![instance(
                    "futex_queues".into(),
                    global_slots,
                    0,
                    Home::Interleaved { nodes },
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
                    )
                })
                .collect(),
        };
        let private = processes
            .iter()
            .enumerate()
            .map(|(p, info)| match &design.private {
                Some(ph) if info.threads >= u64::from(ph.min_threads) => {
                    let v = vars.for_process(info.threads, global_slots);
                    let slots = eval_slots(&ph.slots, &v)?;
                    add_table_bytes(
                        &mut table_bytes,
                        u64::from(ph.header_bytes) + slots * bucket,
                    )?;
                    let name = format!("process {p} private hash");
                    Ok(Some(instance(
                        name,
                        slots,
                        u64::from(ph.header_bytes),
                        Home::Node(info.node),
                        false,
                    )))
                }
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>, DesignError>>()?;
        Ok(FutexHash {
            design: design.clone(),
            global,
            private,
            global_shift: global_slots.trailing_zeros(),
        })
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
        let order = if d.key_order == KeyOrder::Address {
            KeyOrder::PtrWord
        } else {
            d.key_order
        };
        (key.hash_input(order, d.word_size), false)
    }

    /// The kernel's futex_hash(): private hash first where the design and the
    /// key allow it, else the global table (and its node).
    #[inline]
    pub fn futex_hash(&self, key: &FutexKey, process: u32) -> Hashed {
        let (input, private) = self.hash_input(key, process);
        let hash = self.design.hash.jhash2(input.words(), input.initval);
        let table = if private {
            TableSel::Private(process)
        } else {
            TableSel::Global(match self.global.len() {
                1 => 0,
                n => ((u64::from(hash) >> self.global_shift) % n as u64) as u32,
            })
        };
        let index = (u64::from(hash) & (self.instance(table).slots - 1)) as u32;
        Hashed {
            hash,
            bucket: Bucket { table, index },
        }
    }

    pub fn instance(&self, table: TableSel) -> &TableInstance {
        match table {
            TableSel::Global(n) => &self.global[n as usize],
            TableSel::Private(p) => self.private[p as usize]
                .as_ref()
                .expect("process has a private hash"),
        }
    }

    pub fn bucket_addr(&self, b: Bucket) -> u64 {
        self.instance(b.table).base + u64::from(b.index) * u64::from(self.design.bucket.size)
    }

    /// Byte address of one field of a bucket, None if the design lacks it.
    #[inline]
    pub fn field_addr(&self, b: Bucket, field: FieldName) -> Option<u64> {
        let f = self.design.bucket.field(field)?;
        Some(self.bucket_addr(b) + u64::from(f.offset))
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
            .private
            .iter()
            .flatten()
            .map(|t| t.slots * size + header)
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
        let procs = [ProcessInfo { threads, node: 0 }];
        let h = FutexHash::build(&preset(name).unwrap(), vars, &procs, nodes, &mut memory).unwrap();
        (h, memory)
    }

    fn key(uaddr: u64) -> FutexKey {
        get_futex_key(uaddr, KeySource::Private { mm: MM }, WordSize::Bits64).unwrap()
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

    #[test]
    fn single_threaded_and_shared_keys_use_the_global_table() {
        let (h, _) = build("private-6.17", 32, 2, 1);
        assert!(matches!(
            h.futex_hash(&key(0x1000), 0).bucket.table,
            TableSel::Global(_)
        ));
        let (h, _) = build("private-6.17", 32, 2, 8);
        let shared =
            get_futex_key(0x1000, KeySource::SharedAnon { mm: MM }, WordSize::Bits64).unwrap();
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
                TableSel::Private(_) => unreachable!(),
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
