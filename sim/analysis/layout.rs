//! Static layout analysis, no timing: hash a benchmark's real futex keys into
//! a table design as the kernel would, and count how the keys crowd buckets
//! and how occupied buckets crowd cache lines, beside what a perfectly
//! uniform hash would give (docs/references.md §4).

use super::balls_into_bins::{expected_load_histogram, expected_max_load, Bins};
use crate::kernel::futex_hash::{Bucket, FutexHash, ProcessInfo, SetSlots, TableSel};
use crate::kernel::key::KeyError;
use crate::kernel::table::{DesignError, FieldName, SizingVars, TableDesign};
use crate::limits::{MAX_ANALYSIS_KEYS, MAX_ANALYSIS_SLOTS};
use crate::machine::{Platform, PlatformError};
use crate::memory::MemoryMap;
use crate::prefetch::prefetch;
use crate::record::{ExpectedLoadCount, LoadCount, LoadRecord, UniformLoad};
use crate::workload::futex_words::{FutexWords, PlacedKey};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Why a layout cannot be analysed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// More keys than one analysis holds in memory and time.
    #[error("{keys} keys is more than the {MAX_ANALYSIS_KEYS} the layout analysis takes")]
    TooManyKeys { keys: u64 },
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// The design does not validate, or sizes no valid table here.
    #[error("design '{design}': {error}")]
    Design { design: String, error: DesignError },
    #[error("design '{design}': {error}")]
    Key { design: String, error: KeyError },
    #[error("design '{design}' has {slots} bucket slots here, more than the {MAX_ANALYSIS_SLOTS} the layout analysis takes")]
    TooManySlots { design: String, slots: u64 },
    /// A key names a process the analysis was not given.
    #[error("a key names process {process} of {processes}")]
    StrayKey { process: u32, processes: usize },
}

/// How many lines of the bucket arrays hold a given number of lock words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LockCount {
    pub locks: u64,
    pub lines: u64,
}

/// Expected counts below this many buckets are left out of the histogram
/// unless a measured load falls there.
const NEGLIGIBLE_BUCKETS: f64 = 0.01;

/// The same figures for m keys thrown uniformly into each instance's n
/// buckets, m being the keys the real hash put in that instance.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize)]
pub struct Expected {
    /// Approximate: bucket loads taken as independent (see balls_into_bins).
    pub max_load: f64,
    /// Keys over expected occupied buckets (a ratio of expectations).
    pub mean_load_nonempty: f64,
    pub keys_sharing_bucket: f64,
    pub keys_sharing_bucket_sd: f64,
    pub fraction_sharing_bucket: f64,
    pub colliding_pairs: f64,
    pub colliding_pairs_sd: f64,
    pub line_sharing_bucket_pairs: f64,
    pub keys_on_shared_lines: f64,
    pub fraction_on_shared_lines: f64,
}

/// One of the most loaded buckets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BucketLoad {
    /// "global", "node N" (per-node tables) or "process N" (its private hash).
    pub table: String,
    pub index: u32,
    pub load: u64,
}

/// How many of the most loaded buckets a report names.
pub const BUSIEST_BUCKETS: usize = 5;

/// What one design does with one set of keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayoutReport {
    pub design: String,
    pub era: String,
    /// Slots of one global table instance.
    pub slots_per_instance: u64,
    /// Global instances: 1, or one per node.
    pub instances: usize,
    /// Private hash slots of each process; 0 where it uses the global table.
    pub private_slots_per_process: Vec<u64>,
    /// Bytes of all bucket arrays and private-hash headers.
    pub table_bytes: u64,
    pub keys: u64,
    /// Slots of every instance the keys can reach: all global instances if
    /// any key went global, and each private hash that got keys.
    pub reachable_buckets: u64,
    pub load_histogram: Vec<LoadCount>,
    /// The uniform-hash histogram, load by load, over the measured loads and
    /// every load a uniform hash gives non-negligibly often.
    pub expected_load_histogram: Vec<ExpectedLoadCount>,
    /// Most loaded first; ties in table and index order.
    pub busiest_buckets: Vec<BucketLoad>,
    pub max_load: u64,
    pub mean_load_nonempty: f64,
    /// Keys in buckets holding two or more keys.
    pub keys_sharing_bucket: u64,
    pub fraction_sharing_bucket: f64,
    /// Sum over buckets of C(load, 2).
    pub colliding_pairs: u64,
    /// Pairs of distinct occupied buckets whose lock words share a line.
    pub line_sharing_bucket_pairs: u64,
    /// Keys whose bucket (any of its fields) touches a line holding another
    /// occupied bucket's lock word: the keys exposed to false sharing.
    pub keys_on_shared_lines: u64,
    pub fraction_on_shared_lines: f64,
    /// Lines of the reachable bucket arrays by lock words on them.
    pub lock_words_per_line: Vec<LockCount>,
    pub expected: Expected,
}

/// Where one table instance's buckets and lock words fall on lines. Lines
/// are numbered by address / line size; no line holds two tables' bytes.
struct InstanceLines<'a> {
    hash: &'a FutexHash,
    table: TableSel,
    slots: u64,
    stride: u64,
    first_lock: u64,
    line_size: u64,
    /// Each field's first and last byte within the bucket, in offset order.
    field_bytes: Vec<(u64, u64)>,
}

impl<'a> InstanceLines<'a> {
    fn new(hash: &'a FutexHash, table: TableSel, line_size: u64) -> InstanceLines<'a> {
        let first_lock = hash
            .field_addr(Bucket { table, index: 0 }, FieldName::Lock)
            .expect("validated designs have a lock");
        let mut field_bytes: Vec<(u64, u64)> = hash
            .design
            .bucket
            .fields
            .iter()
            .map(|f| (f.offset.into(), u64::from(f.offset + f.size) - 1))
            .collect();
        field_bytes.sort_unstable();
        InstanceLines {
            hash,
            table,
            slots: hash.instance(table).slots,
            stride: hash.design.bucket.size.into(),
            first_lock,
            line_size,
            field_bytes,
        }
    }

    /// The first and last lines the bucket array covers.
    fn first_line(&self) -> u64 {
        self.hash.instance(self.table).base / self.line_size
    }

    fn last_line(&self) -> u64 {
        (self.hash.instance(self.table).base + self.slots * self.stride - 1) / self.line_size
    }

    fn lock_line(&self, index: u64) -> u64 {
        (self.first_lock + index * self.stride) / self.line_size
    }

    /// Lock words whose first byte lies on `line`.
    fn locks_on(&self, line: u64) -> u64 {
        // First bucket index whose lock address is >= addr.
        let first_at = |addr: u64| {
            addr.saturating_sub(self.first_lock)
                .div_ceil(self.stride)
                .min(self.slots)
        };
        first_at((line + 1) * self.line_size) - first_at(line * self.line_size)
    }

    /// The lines the fields of a bucket cover, in order, each once.
    fn lines_touched(&self, index: u64, lines: &mut Vec<u64>) {
        lines.clear();
        let bucket = self.hash.instance(self.table).base + index * self.stride;
        for &(first, last) in &self.field_bytes {
            let from = (bucket + first) / self.line_size;
            let to = (bucket + last) / self.line_size;
            // Fields come in offset order, so a line is repeated only as the
            // last one pushed.
            let from = match lines.last() {
                Some(&l) if l >= from => l + 1,
                _ => from,
            };
            lines.extend(from..=to);
        }
    }

    /// Lock words of other buckets on the lines a bucket touches.
    fn neighbour_locks(&self, index: u64, lines: &mut Vec<u64>) -> u64 {
        self.lines_touched(index, lines);
        lines.iter().map(|&l| self.locks_on(l)).sum::<u64>() - 1
    }

    /// Buckets by how many other buckets' lock words share their lines.
    fn neighbour_histogram(&self) -> BTreeMap<u64, u64> {
        let mut lines = Vec::new();
        self.tally(|index| Some(self.neighbour_locks(index, &mut lines)))
    }

    /// Lines of the bucket array by the lock words on them (0 included).
    fn lock_histogram(&self, into: &mut BTreeMap<u64, u64>) {
        // A line with locks is counted at its first lock's bucket.
        let first_on_line =
            |index: u64| index == 0 || self.lock_line(index - 1) != self.lock_line(index);
        let with_locks =
            self.tally(|index| first_on_line(index).then(|| self.locks_on(self.lock_line(index))));
        let lines_with_locks: u64 = with_locks.values().sum();
        for (locks, lines) in with_locks {
            *into.entry(locks).or_insert(0) += lines;
        }
        let empty = self.last_line() - self.first_line() + 1 - lines_with_locks;
        if empty > 0 {
            *into.entry(0).or_insert(0) += empty;
        }
    }

    /// How many buckets give each value of `value` (None: not counted).
    /// The layout repeats every `period` buckets, the least whole number of
    /// buckets that is also whole lines, so only buckets near the ends of
    /// the array, whose lines the array's ends cut, are looked at one by one;
    /// between them, one period is looked at and counted for all.
    fn tally(&self, mut value: impl FnMut(u64) -> Option<u64>) -> BTreeMap<u64, u64> {
        let mut counts = BTreeMap::new();
        let mut add = |index: u64, times: u64| {
            if let Some(v) = value(index) {
                *counts.entry(v).or_insert(0) += times;
            }
        };
        let period = lcm(self.stride, self.line_size) / self.stride;
        // Bucket 2 * period starts two periods (each at least a bucket and
        // a line) past the array's start, so none of its lines holds the
        // array's first byte or first lock; the same holds at the end.
        let edge = 2 * period;
        if self.slots <= 2 * edge + period {
            (0..self.slots).for_each(|index| add(index, 1));
            return counts;
        }
        for index in (0..edge).chain(self.slots - edge..self.slots) {
            add(index, 1);
        }
        // Slots are a power of two, and so is the period (the line size
        // over its gcd with the stride): the interior is whole periods.
        let periods = (self.slots - 2 * edge) / period;
        for offset in 0..period {
            add(edge + offset, periods);
        }
        counts
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Keys per bucket, counted densely: one array per table instance a key
/// reached, indexed by bucket.
struct TableLoads {
    /// Global instances first, then one entry per process (empty where no
    /// key reached its private hash).
    per_table: Vec<Vec<u32>>,
    global_instances: usize,
}

/// Counts keys into a [`TableLoads`] as they are handed over one by one.
/// Keys land on random buckets of arrays larger than the host's caches: a
/// batch of them is hashed, each count prefetched, and only then are the
/// counts added.
struct KeyCounter<'a> {
    hash: &'a FutexHash,
    processes: usize,
    loads: TableLoads,
    pending: Vec<Bucket>,
    /// The first key naming a process that does not exist.
    stray: Option<u32>,
}

impl<'a> KeyCounter<'a> {
    const BATCH: usize = 32;

    fn new(hash: &'a FutexHash, processes: usize) -> KeyCounter<'a> {
        let global_instances = hash.global.len();
        KeyCounter {
            hash,
            processes,
            loads: TableLoads {
                per_table: vec![Vec::new(); global_instances + hash.private.len()],
                global_instances,
            },
            pending: Vec::with_capacity(Self::BATCH),
            stray: None,
        }
    }

    #[inline]
    fn add(&mut self, k: PlacedKey) {
        if k.process as usize >= self.processes {
            self.stray.get_or_insert(k.process);
            return;
        }
        let bucket = self.hash.futex_hash(&k.key, k.process).bucket;
        let counts = self.loads.counts_mut(self.hash, bucket.table);
        prefetch(&counts[bucket.index as usize]);
        self.pending.push(bucket);
        if self.pending.len() == Self::BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for b in self.pending.drain(..) {
            self.loads.counts_mut(self.hash, b.table)[b.index as usize] += 1;
        }
    }

    fn finish(mut self) -> Result<TableLoads, LayoutError> {
        if let Some(process) = self.stray {
            return Err(LayoutError::StrayKey {
                process,
                processes: self.processes,
            });
        }
        self.flush();
        Ok(self.loads)
    }
}

impl TableLoads {
    /// A table's counts, allocated when its first key arrives.
    fn counts_mut(&mut self, hash: &FutexHash, table: TableSel) -> &mut Vec<u32> {
        let counts = &mut self.per_table[Self::slot(self.global_instances, table)];
        if counts.is_empty() {
            counts.resize(hash.instance(table).slots as usize, 0);
        }
        counts
    }

    fn slot(global_instances: usize, table: TableSel) -> usize {
        match table {
            TableSel::Global(n) => n as usize,
            // The analysis hashes into the tables a process ends with.
            TableSel::Private(p) | TableSel::Outgrown { process: p, .. } => {
                global_instances + p as usize
            }
        }
    }

    fn table_at(&self, slot: usize) -> TableSel {
        if slot < self.global_instances {
            TableSel::Global(slot as u32)
        } else {
            TableSel::Private((slot - self.global_instances) as u32)
        }
    }

    /// The tables any key reached, in order.
    fn tables(&self) -> impl Iterator<Item = TableSel> + '_ {
        (0..self.per_table.len())
            .filter(|&s| !self.per_table[s].is_empty())
            .map(|s| self.table_at(s))
    }

    fn keys_in(&self, table: TableSel) -> u64 {
        self.per_table[Self::slot(self.global_instances, table)]
            .iter()
            .map(|&n| u64::from(n))
            .sum()
    }

    /// (index, load) of the occupied buckets of one table, in index order.
    fn occupied_in(&self, table: TableSel) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.per_table[Self::slot(self.global_instances, table)]
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i as u64, u64::from(n)))
    }

    /// (bucket, load) of every occupied bucket, in table and index order.
    fn occupied(&self) -> impl Iterator<Item = (Bucket, u64)> + '_ {
        self.tables().flat_map(move |table| {
            self.occupied_in(table).map(move |(index, load)| {
                (
                    Bucket {
                        table,
                        index: index as u32,
                    },
                    load,
                )
            })
        })
    }

    /// The `n` most loaded buckets, most loaded first; ties in table and
    /// index order.
    fn busiest(&self, n: usize) -> Vec<(Bucket, u64)> {
        let mut top: Vec<(Bucket, u64)> = Vec::with_capacity(n + 1);
        for (bucket, load) in self.occupied() {
            if top.len() == n && top.last().is_some_and(|&(_, least)| load <= least) {
                continue;
            }
            // Buckets come in order, so an equal load stays behind.
            let at = top.partition_point(|&(_, l)| l >= load);
            top.insert(at, (bucket, load));
            top.truncate(n);
        }
        top
    }
}

fn table_name(table: TableSel, global_instances: usize) -> String {
    match table {
        TableSel::Global(_) if global_instances == 1 => "global".into(),
        TableSel::Global(node) => format!("node {node}"),
        TableSel::Private(p) => format!("process {p}"),
        TableSel::Outgrown {
            process,
            generation,
        } => format!("process {process}, table {generation}"),
    }
}

fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// Hashes a workload's futex words into the design's tables, built for the
/// platform, and measures the layout. Designs analysed with the words of one
/// set-up see the same keys.
pub fn analyze(
    design: &TableDesign,
    platform: &Platform,
    words: &FutexWords,
) -> Result<LayoutReport, LayoutError> {
    analyze_set(design, platform, words, None)
}

/// [`analyze`] for processes that asked `set_slots` of PR_FUTEX_HASH
/// before creating their threads.
pub fn analyze_set(
    design: &TableDesign,
    platform: &Platform,
    words: &FutexWords,
    set_slots: Option<SetSlots>,
) -> Result<LayoutReport, LayoutError> {
    keys_fit(words)?;
    let processes = set_processes(words, set_slots);
    analyze_placed(design, platform, &processes, words.count(), |counter| {
        words
            .for_each_key(design.word_size, platform.page_size, |k| counter.add(k))
            .map_err(|error| LayoutError::Key {
                design: design.name.clone(),
                error,
            })
    })
}

/// Everything `analyze_set` could refuse, found without counting a key:
/// too many keys, a key the kernel would refuse (`FutexWords::check_keys`)
/// or one of a process not there, and the platform, the design and its
/// tables here. A run asks this first, so that its analysis can go on
/// beside the event loop with nothing left to refuse after it.
pub fn check_set(
    design: &TableDesign,
    platform: &Platform,
    words: &FutexWords,
    set_slots: Option<SetSlots>,
) -> Result<(), LayoutError> {
    keys_fit(words)?;
    let processes = words.threads.len();
    if let Some(a) = words
        .arrays
        .iter()
        .find(|a| a.process as usize >= processes)
    {
        return Err(LayoutError::StrayKey {
            process: a.process,
            processes,
        });
    }
    words
        .check_keys(design.word_size, platform.page_size)
        .map_err(|error| LayoutError::Key {
            design: design.name.clone(),
            error,
        })?;
    tables(
        design,
        platform,
        &set_processes(words, set_slots),
        words.count(),
    )
    .map(|_| ())
}

/// Whether the analysis takes this many keys.
fn keys_fit(words: &FutexWords) -> Result<(), LayoutError> {
    let keys = words.count();
    if keys > MAX_ANALYSIS_KEYS {
        return Err(LayoutError::TooManyKeys { keys });
    }
    Ok(())
}

/// The processes of a workload's words, each starting on node 0:
/// placement does not change which bucket or line a key lands on.
fn set_processes(words: &FutexWords, set_slots: Option<SetSlots>) -> Vec<ProcessInfo> {
    words
        .threads
        .iter()
        .map(|&threads| ProcessInfo {
            set_slots,
            ..ProcessInfo::new(threads, 0)
        })
        .collect()
}

/// The layout of any set of keys, each naming one of `processes`.
pub fn analyze_keys(
    design: &TableDesign,
    platform: &Platform,
    processes: &[ProcessInfo],
    keys: &[PlacedKey],
) -> Result<LayoutReport, LayoutError> {
    analyze_placed(design, platform, processes, keys.len() as u64, |counter| {
        keys.iter().for_each(|&k| counter.add(k));
        Ok(())
    })
}

/// The tables `design` sizes for `processes` and `key_count` keys on
/// `platform`, all the analysis can count.
fn tables(
    design: &TableDesign,
    platform: &Platform,
    processes: &[ProcessInfo],
    key_count: u64,
) -> Result<FutexHash, LayoutError> {
    platform.validate()?;
    let design_error = |error: DesignError| LayoutError::Design {
        design: design.name.clone(),
        error,
    };
    design.validate().map_err(design_error)?;
    let vars = SizingVars::new(
        platform,
        processes.iter().map(|p| p.threads).sum(),
        processes.len() as u64,
        key_count,
    );
    let mut memory = MemoryMap::new(platform.line_size);
    let hash = FutexHash::build(design, vars, processes, platform.nodes, &mut memory)
        .map_err(design_error)?;
    let all_slots: u64 = hash
        .global
        .iter()
        .chain(hash.private.iter().flatten())
        .map(|t| t.slots)
        .sum();
    if all_slots > MAX_ANALYSIS_SLOTS {
        return Err(LayoutError::TooManySlots {
            design: design.name.clone(),
            slots: all_slots,
        });
    }
    Ok(hash)
}

/// The layout of `key_count` keys, which `place` hands to the counter one
/// at a time.
fn analyze_placed(
    design: &TableDesign,
    platform: &Platform,
    processes: &[ProcessInfo],
    key_count: u64,
    place: impl FnOnce(&mut KeyCounter) -> Result<(), LayoutError>,
) -> Result<LayoutReport, LayoutError> {
    let hash = tables(design, platform, processes, key_count)?;
    let mut counter = KeyCounter::new(&hash, processes.len());
    place(&mut counter)?;
    let loads = counter.finish()?;
    let mut reachable: BTreeSet<TableSel> = loads.tables().collect();
    if reachable.iter().any(|t| matches!(t, TableSel::Global(_))) {
        reachable.extend((0..hash.global.len() as u32).map(TableSel::Global));
    }
    let lines: BTreeMap<TableSel, InstanceLines> = reachable
        .iter()
        .map(|&t| (t, InstanceLines::new(&hash, t, platform.line_size)))
        .collect();
    let reachable_buckets: u64 = lines.values().map(|l| l.slots).sum();

    let mut histogram: BTreeMap<u64, u64> = BTreeMap::new();
    let mut occupied = 0;
    for (_, load) in loads.occupied() {
        *histogram.entry(load).or_insert(0) += 1;
        occupied += 1;
    }
    let empty = reachable_buckets - occupied;
    if empty > 0 {
        histogram.insert(0, empty);
    }
    let keys_sharing_bucket: u64 = loads.occupied().map(|(_, l)| l).filter(|&l| l >= 2).sum();
    let (line_sharing_bucket_pairs, keys_on_shared_lines) = line_sharing(&loads, &lines);
    let instances: Vec<(Bins, &InstanceLines)> = lines
        .iter()
        .map(|(t, l)| {
            (
                Bins {
                    keys: loads.keys_in(*t),
                    buckets: l.slots,
                },
                l,
            )
        })
        .collect();
    let mut lock_histogram = BTreeMap::new();
    for (_, l) in &instances {
        l.lock_histogram(&mut lock_histogram);
    }
    let bins: Vec<Bins> = instances.iter().map(|(b, _)| *b).collect();
    let expected_histogram = expected_histogram_over(&bins, &histogram);

    Ok(LayoutReport {
        design: design.name.clone(),
        era: design.era.clone(),
        slots_per_instance: hash.global_slots(),
        instances: hash.global.len(),
        private_slots_per_process: hash
            .private
            .iter()
            .map(|t| t.as_ref().map_or(0, |t| t.slots))
            .collect(),
        table_bytes: hash.memory_bytes(),
        keys: key_count,
        reachable_buckets,
        load_histogram: histogram
            .into_iter()
            .map(|(load, buckets)| LoadCount { load, buckets })
            .collect(),
        expected_load_histogram: expected_histogram,
        busiest_buckets: loads
            .busiest(BUSIEST_BUCKETS)
            .into_iter()
            .map(|(b, load)| BucketLoad {
                table: table_name(b.table, hash.global.len()),
                index: b.index,
                load,
            })
            .collect(),
        max_load: loads.occupied().map(|(_, l)| l).max().unwrap_or(0),
        mean_load_nonempty: ratio(key_count as f64, occupied as f64),
        keys_sharing_bucket,
        fraction_sharing_bucket: ratio(keys_sharing_bucket as f64, key_count as f64),
        colliding_pairs: loads.occupied().map(|(_, l)| pairs(l)).sum(),
        line_sharing_bucket_pairs,
        keys_on_shared_lines,
        fraction_on_shared_lines: ratio(keys_on_shared_lines as f64, key_count as f64),
        lock_words_per_line: lock_histogram
            .into_iter()
            .map(|(locks, lines)| LockCount { locks, lines })
            .collect(),
        expected: expected_figures(&instances, key_count),
    })
}

/// The uniform-hash histogram from the smallest to the largest load that is
/// either measured or expected on at least `NEGLIGIBLE_BUCKETS` buckets.
fn expected_histogram_over(bins: &[Bins], measured: &BTreeMap<u64, u64>) -> Vec<ExpectedLoadCount> {
    let counts = expected_load_histogram(bins);
    let likely = || {
        counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c >= NEGLIGIBLE_BUCKETS)
            .map(|(k, _)| k as u64)
    };
    let lo = likely().chain(measured.keys().copied()).min();
    let hi = likely().chain(measured.keys().copied()).max();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Vec::new();
    };
    (lo..=hi)
        .map(|load| ExpectedLoadCount {
            load,
            buckets: counts.get(load as usize).copied().unwrap_or(0.0),
        })
        .collect()
}

/// Measured line sharing among occupied buckets: pairs of them with lock
/// words on one line, and the keys of those whose fields touch a line with
/// another one's lock word.
fn line_sharing(loads: &TableLoads, lines: &BTreeMap<TableSel, InstanceLines>) -> (u64, u64) {
    let (mut bucket_pairs, mut keys) = (0, 0);
    let mut touched = Vec::new();
    for (&table, l) in lines {
        // Occupied buckets' lock words on each line of the array, lines
        // counted from the array's first.
        let first_line = l.first_line();
        let mut occupied_locks = vec![0u64; (l.last_line() - first_line + 1) as usize];
        for (index, _) in loads.occupied_in(table) {
            occupied_locks[(l.lock_line(index) - first_line) as usize] += 1;
        }
        bucket_pairs += occupied_locks.iter().map(|&n| pairs(n)).sum::<u64>();
        for (index, load) in loads.occupied_in(table) {
            l.lines_touched(index, &mut touched);
            let locks: u64 = touched
                .iter()
                .map(|&line| occupied_locks[(line - first_line) as usize])
                .sum();
            // The bucket's own lock is one of them.
            if locks > 1 {
                keys += load;
            }
        }
    }
    (bucket_pairs, keys)
}

/// The uniform-hash figures, instance by instance and summed; the maximum
/// is over all instances together.
fn expected_figures(instances: &[(Bins, &InstanceLines)], keys: u64) -> Expected {
    let mut e = Expected {
        max_load: expected_max_load(&instances.iter().map(|(b, _)| *b).collect::<Vec<_>>()),
        ..Expected::default()
    };
    let (mut occupied, mut sharing_var, mut pairs_var) = (0.0, 0.0, 0.0);
    for (b, l) in instances {
        occupied += b.occupied();
        e.keys_sharing_bucket += b.keys as f64 * b.fraction_sharing();
        sharing_var += b.keys_sharing_variance();
        e.colliding_pairs += b.colliding_pairs();
        pairs_var += b.colliding_pairs_variance();
        if b.keys == 0 {
            continue;
        }
        let mut lock_lines = BTreeMap::new();
        l.lock_histogram(&mut lock_lines);
        let lock_pairs: u64 = lock_lines.iter().map(|(&locks, &n)| n * pairs(locks)).sum();
        if lock_pairs > 0 {
            e.line_sharing_bucket_pairs += lock_pairs as f64 * b.both_occupied();
        }
        // Buckets differ only in how many other locks their lines hold.
        e.keys_on_shared_lines += l
            .neighbour_histogram()
            .iter()
            .map(|(&others, &n)| n as f64 * b.keys_beside_occupied(others))
            .sum::<f64>();
    }
    let keys = keys as f64;
    e.mean_load_nonempty = ratio(keys, occupied);
    e.fraction_sharing_bucket = ratio(e.keys_sharing_bucket, keys);
    e.fraction_on_shared_lines = ratio(e.keys_on_shared_lines, keys);
    e.keys_sharing_bucket_sd = sharing_var.sqrt();
    e.colliding_pairs_sd = pairs_var.sqrt();
    e
}

/// The record of a layout analysis, as a run's result carries it. Kept
/// here, beside what it reads, so that the record imports no analysis.
impl LoadRecord {
    pub fn from_layout(r: &LayoutReport) -> LoadRecord {
        let e = &r.expected;
        LoadRecord {
            keys: r.keys,
            buckets: r.reachable_buckets,
            max_load: r.max_load,
            mean_load: r.mean_load_nonempty,
            keys_sharing_bucket: r.keys_sharing_bucket,
            keys_sharing_line: r.keys_on_shared_lines,
            colliding_pairs: r.colliding_pairs,
            histogram: r.load_histogram.clone(),
            uniform: UniformLoad {
                max_load: e.max_load,
                mean_load: e.mean_load_nonempty,
                keys_sharing_bucket: e.keys_sharing_bucket,
                keys_sharing_bucket_sd: e.keys_sharing_bucket_sd,
                keys_sharing_line: e.keys_on_shared_lines,
                colliding_pairs: e.colliding_pairs,
                colliding_pairs_sd: e.colliding_pairs_sd,
                histogram: r.expected_load_histogram.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::population::KeyPopulation;
    use crate::kernel::key::{get_futex_key, KeySource, WordSize};
    use crate::kernel::table::preset;

    /// The words of perf bench futex hash's set-up for `seed`.
    fn perf_hash(threads: u32, seed: u64) -> FutexWords {
        KeyPopulation::PerfHash {
            threads,
            futexes: 1024,
            shared: false,
        }
        .place(seed)
    }

    fn lock_lines(r: &LayoutReport) -> Vec<(u64, u64)> {
        r.lock_words_per_line
            .iter()
            .map(|c| (c.locks, c.lines))
            .collect()
    }

    /// `tally` looks at the array's ends and one period between them: it
    /// must give what looking at every bucket gives, for any bucket size,
    /// line size, start offset and length.
    #[test]
    fn the_periodic_tally_counts_every_bucket() {
        use crate::expr::Expr;
        for name in crate::kernel::table::PRESET_NAMES {
            for base_offset in [0, 8, 24, 40] {
                for slots in [1, 4, 16, 64, 1024] {
                    for line_size in [16, 32, 64, 128, 256] {
                        let mut d = preset(name).unwrap();
                        d.private = None;
                        d.placement = crate::kernel::table::Placement::BootNode;
                        d.base_offset = base_offset;
                        d.slots = Expr::parse(&slots.to_string()).unwrap();
                        let platform = Platform {
                            line_size,
                            ..Platform::uniform(4, 1)
                        };
                        let vars = SizingVars::new(&platform, 4, 1, 4);
                        let procs = [ProcessInfo::new(4, 0)];
                        let mut memory = MemoryMap::new(line_size);
                        let hash = FutexHash::build(&d, vars, &procs, 1, &mut memory).unwrap();
                        let l = InstanceLines::new(&hash, TableSel::Global(0), line_size);
                        let mut lines = Vec::new();
                        let mut every = BTreeMap::new();
                        for index in 0..l.slots {
                            *every
                                .entry(l.neighbour_locks(index, &mut lines))
                                .or_insert(0) += 1;
                        }
                        let case = format!(
                            "{name}, offset {base_offset}, {slots} slots, line {line_size}"
                        );
                        assert_eq!(l.neighbour_histogram(), every, "{case}");
                        // Every line of the array, walked lock by lock.
                        let mut by_lines = BTreeMap::new();
                        for line in l.first_line()..=l.last_line() {
                            *by_lines.entry(l.locks_on(line)).or_insert(0) += 1;
                        }
                        let mut tallied = BTreeMap::new();
                        l.lock_histogram(&mut tallied);
                        assert_eq!(tallied, by_lines, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_uniform_table_matches_balls_into_bins() {
        let d = preset("aligned-3.14").unwrap();
        let r = analyze(&d, &Platform::uniform(32, 1), &perf_hash(32, 1)).unwrap();
        assert_eq!((r.keys, r.reachable_buckets), (32_768, 8192));
        let e = r.expected;
        // C(32768, 2) / 8192 and 1 - (1 - 1/8192)^32767 ~ 1 - e^-4.
        assert!((e.colliding_pairs - 65_534.0).abs() < 1e-6);
        assert!((e.fraction_sharing_bucket - (1.0 - (-4.0f64).exp())).abs() < 1e-4);
        // A good hash of distinct keys behaves as m uniform throws, so the
        // measured counts are one draw of those random variables: allow four
        // standard deviations (a uniform hash passes with probability
        // 0.99994). The deviations are exact (balls_into_bins): about 256
        // pairs, and about 21 keys for keys sharing a bucket.
        assert!((e.colliding_pairs_sd - 256.0).abs() < 1.0);
        assert!((e.keys_sharing_bucket_sd - 21.4).abs() < 0.5);
        let z_pairs = (r.colliding_pairs as f64 - e.colliding_pairs) / e.colliding_pairs_sd;
        let z_sharing =
            (r.keys_sharing_bucket as f64 - e.keys_sharing_bucket) / e.keys_sharing_bucket_sd;
        assert!(z_pairs.abs() < 4.0, "colliding pairs z = {z_pairs}");
        assert!(z_sharing.abs() < 4.0, "keys sharing z = {z_sharing}");
        assert!((r.max_load as f64 - e.max_load).abs() < 4.0);
        // One lock per line: no two buckets share a line.
        assert_eq!(lock_lines(&r), [(1, 8192)]);
        assert_eq!(r.line_sharing_bucket_pairs, 0);
        assert_eq!(r.keys_on_shared_lines, 0);
        assert_eq!(e.line_sharing_bucket_pairs, 0.0);
        assert_eq!(r.table_bytes, 8192 * 64);
        // Loads 0 to 12 or so are all likely at 4 keys per bucket, and the
        // expected histogram covers every measured load.
        let expected_buckets: f64 = r.expected_load_histogram.iter().map(|c| c.buckets).sum();
        assert!(
            (expected_buckets - 8192.0).abs() < 0.1,
            "{expected_buckets}"
        );
        assert_eq!(r.expected_load_histogram[0].load, 0);
        let loads: Vec<u64> = r.expected_load_histogram.iter().map(|c| c.load).collect();
        assert!(r.load_histogram.iter().all(|c| loads.contains(&c.load)));
        assert!(loads.windows(2).all(|w| w[1] == w[0] + 1));
    }

    #[test]
    fn packed_buckets_put_two_locks_on_some_lines() {
        let d = preset("fixed-256").unwrap();
        let r = analyze(&d, &Platform::uniform(32, 1), &perf_hash(32, 1)).unwrap();
        // 40-byte buckets from a line boundary: every 5 lines hold 8 locks as
        // 2, 2, 1, 2, 1.
        assert_eq!(lock_lines(&r), [(1, 64), (2, 96)]);
        // 128 keys per bucket on average: every bucket is occupied, so every
        // two-lock line is a pair.
        assert_eq!(r.line_sharing_bucket_pairs, 96);
        assert!((r.expected.line_sharing_bucket_pairs - 96.0).abs() < 1e-6);
        // Every bucket but the last of each 8 (bytes 280-319 of the period,
        // alone on its line) touches another bucket's lock: the keys of 224
        // buckets, 28672 expected. For a uniform hash the measured count is
        // Bin(32768, 224/256), sd 60: allow four.
        let e = r.expected.keys_on_shared_lines;
        assert!((e - 28_672.0).abs() < 1e-6, "{e}");
        assert!((r.keys_on_shared_lines as f64 - e).abs() < 4.0 * 60.0);
        assert_eq!(r.fraction_sharing_bucket, 1.0);
        assert_eq!(r.table_bytes, 256 * 40);
    }

    #[test]
    fn the_example_key_lands_in_its_derived_bucket() {
        // docs/kernel-facts.md §1.5: mm 0xffff888100abc000, uaddr 0x7f1234567abc.
        let key = get_futex_key(
            0x7f12_3456_7abc,
            KeySource::Private {
                mm: 0xffff_8881_00ab_c000,
            },
            WordSize::Bits64,
            4096,
        )
        .unwrap();
        let keys = [PlacedKey { key, process: 0 }];
        let procs = [ProcessInfo::new(8, 0)];
        for (name, cpus, index) in [("fixed-256", 8, 69), ("numa-6.16", 32, 1591)] {
            let d = preset(name).unwrap();
            let r = analyze_keys(&d, &Platform::uniform(cpus, 1), &procs, &keys).unwrap();
            assert_eq!(
                r.busiest_buckets,
                [BucketLoad {
                    table: "global".into(),
                    index,
                    load: 1
                }],
                "{name}"
            );
        }
    }

    #[test]
    fn keys_spread_over_node_tables_and_private_hashes() {
        let d = preset("numa-6.16").unwrap();
        let r = analyze(&d, &Platform::uniform(64, 4), &perf_hash(64, 3)).unwrap();
        assert_eq!((r.instances, r.slots_per_instance), (4, 4096));
        assert_eq!(r.reachable_buckets, 4 * 4096);
        let d = preset("private-6.17").unwrap();
        let r = analyze(&d, &Platform::uniform(32, 1), &perf_hash(32, 3)).unwrap();
        assert_eq!(r.private_slots_per_process, [128]);
        assert_eq!(r.reachable_buckets, 128);
        assert_eq!(r.table_bytes, 8192 * 64 + 64 + 128 * 64);
        // Forked single-threaded tasks never get a 6.17 private hash, and the
        // 2009 proposal gives each its own table with one key in it.
        let forks = KeyPopulation::WillItScale {
            tasks: 16,
            process_mode: true,
            shared: false,
        }
        .place(3);
        let r = analyze(&d, &Platform::uniform(32, 1), &forks).unwrap();
        assert_eq!(r.private_slots_per_process, [0; 16]);
        let d = preset("private-2009").unwrap();
        let r = analyze(&d, &Platform::uniform(32, 1), &forks).unwrap();
        assert_eq!(r.private_slots_per_process, [256; 16]);
        assert_eq!(
            (r.reachable_buckets, r.max_load, r.colliding_pairs),
            (16 * 256, 1, 0)
        );
        assert_eq!(r.expected.colliding_pairs, 0.0);
        assert!((r.expected.max_load - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_key_of_a_process_not_given_is_refused() {
        let d = preset("aligned-3.14").unwrap();
        let procs = [ProcessInfo::new(1, 0)];
        let mm = 0xffff_8881_00ab_c000;
        let key = get_futex_key(0x1000, KeySource::Private { mm }, WordSize::Bits64, 4096).unwrap();
        let stray = [PlacedKey { key, process: 1 }];
        let err = analyze_keys(&d, &Platform::uniform(4, 1), &procs, &stray).unwrap_err();
        assert_eq!(
            err,
            LayoutError::StrayKey {
                process: 1,
                processes: 1
            }
        );
        assert_eq!(err.to_string(), "a key names process 1 of 1");
    }

    #[test]
    fn bad_platforms_are_rejected() {
        let d = preset("aligned-3.14").unwrap();
        for (p, why) in [
            (Platform::uniform(0, 1), PlatformError::Cpus(0)),
            (Platform::uniform(8, 0), PlatformError::Nodes(0)),
            (
                Platform {
                    line_size: 96,
                    page_size: 4096,
                    ..Platform::uniform(8, 1)
                },
                PlatformError::LineSize(96),
            ),
        ] {
            let err = analyze(&d, &p, &perf_hash(8, 0)).unwrap_err();
            assert_eq!(err, LayoutError::Platform(why));
        }
    }
}
