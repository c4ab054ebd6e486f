//! Table designs: everything that decides where a futex key lands, what the
//! bucket it lands in looks like in memory, and which accesses each op's path
//! makes around it (docs/kernel-facts.md §2-4). Each preset is one kernel
//! state, named by its release or commit (docs/eras.md), or one proposal that
//! was never merged; the older descriptive names stay as aliases. Every field
//! can be overridden from TOML.

use super::key::{KeyOrder, WordSize};
use crate::expr::{Expr, ExprError};
use crate::hash::HashForm;
use crate::machine::{LockKind, Platform};
use serde::{Deserialize, Serialize};

/// The fields of `struct futex_hash_bucket` the simulator tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldName {
    /// atomic_t counted by futex_wait (3.14+) so futex_wake can skip the lock.
    Waiters,
    /// The bucket's spinlock.
    Lock,
    /// The plist of queued `futex_q`s.
    Chain,
    /// Back-pointer to the private hash (6.16+ with CONFIG_FUTEX_PRIVATE_HASH).
    Priv,
}

impl FieldName {
    pub const ALL: [FieldName; 4] = [
        FieldName::Waiters,
        FieldName::Lock,
        FieldName::Chain,
        FieldName::Priv,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            FieldName::Waiters => "waiters",
            FieldName::Lock => "lock",
            FieldName::Chain => "chain",
            FieldName::Priv => "priv",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub name: FieldName,
    pub offset: u32,
    pub size: u32,
}

/// One bucket's size and where each field sits in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BucketLayout {
    pub size: u32,
    pub fields: Vec<Field>,
}

impl BucketLayout {
    pub fn field(&self, name: FieldName) -> Option<Field> {
        self.fields.iter().copied().find(|f| f.name == name)
    }

    /// Every field inside the bucket, none overlapping, the lock present.
    pub fn validate(&self) -> Result<(), DesignError> {
        if self.size == 0 {
            return Err(DesignError::EmptyBucket);
        }
        for (i, f) in self.fields.iter().enumerate() {
            if f.size == 0
                || f.offset
                    .checked_add(f.size)
                    .is_none_or(|end| end > self.size)
            {
                return Err(DesignError::FieldOutside {
                    field: *f,
                    bucket: self.size,
                });
            }
            for g in &self.fields[..i] {
                if g.name == f.name {
                    return Err(DesignError::FieldTwice(f.name));
                }
                if f.offset < g.offset + g.size && g.offset < f.offset + f.size {
                    return Err(DesignError::FieldsOverlap(g.name, f.name));
                }
            }
        }
        if self.field(FieldName::Lock).is_none() {
            return Err(DesignError::NoLock);
        }
        Ok(())
    }
}

/// Where the global table's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// One array on the boot node (a static array, or an early allocation).
    BootNode,
    /// One array whose pages are spread round-robin over the nodes (vmalloc with hashdist).
    Interleaved,
    /// One array per node, on that node; a key's node comes from its hash (6.16+).
    PerNode,
}

/// How a private hash is kept alive across a futex op (docs/kernel-facts.md §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefcountMode {
    /// Immutable table, or one pointer in mm (2009): nothing per op.
    None,
    /// 6.16-rc rcuref: an atomic get and put on the header line at every op.
    Shared,
    /// 6.17: a per-CPU counter in steady state, no shared line.
    PerCpu,
}

/// A table per process for its private futexes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateHash {
    /// Slots per process; `threads` is that process's thread count.
    pub slots: Expr,
    pub key_order: KeyOrder,
    /// Bytes before `queues[]` in the same allocation (6.17: one 64-byte line).
    pub header_bytes: u32,
    pub refcount: RefcountMode,
    /// Processes with fewer threads keep using the global table (6.17 allocates
    /// on the first pthread_create, so a single-threaded process has none).
    pub min_threads: u32,
    /// How futex_hash finds the table and the bucket's way back to it.
    #[serde(default)]
    pub lookup: PrivateLookup,
    /// The 6.16 release candidates' FH_FLAG_IMMUTABLE (63e8595c060a, removed
    /// by 760e6f7befba): get and put read `fph->immutable` first, and an
    /// immutable table takes no reference.
    #[serde(default)]
    pub immutable_flag: bool,
    /// Whether `futex_hash_allocate_default` grows the table as threads are
    /// created (bd54df5ea7ca); without it the first size stays.
    #[serde(default)]
    pub grows: bool,
}

/// How a private key reaches its table, and how the op gets back to it to
/// drop its reference (docs/eras.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrivateLookup {
    /// `__futex_hash_private` reads `fph->hash_mask` from the header line,
    /// and nothing more (7c4f75a21f: the table lives as long as the mm).
    #[default]
    Mask,
    /// As `mask`, then futex_hash reads `hb->priv` back from the bucket to
    /// take the reference, and futex_hash_put reads it again to drop it
    /// (bd54df5ea7ca to 6.17).
    BucketPriv,
    /// As `mask`, the reference taken and dropped on the table found through
    /// the mm: no bucket holds a way back (a734d9fca84e).
    Direct,
}

/// How get_futex_key pins the object a shared key names while the op runs,
/// beyond the page reference get_user_pages_fast takes and drops in every era.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SharedKeyPins {
    /// Before 4.6: the page is locked while the key is built, and the key
    /// holds mm_count (mmgrab) or i_count (ihold) until the op ends.
    LockPageAndRefs,
    /// 4.6 (65d8fc777f6d dropped lock_page) to 5.5: mm_count or i_count held
    /// for the op.
    Refs,
    /// 5.7+: nothing (8019ad13ef7f dropped ihold in 5.6, 222993395ed3 mmgrab in 5.7).
    #[default]
    PageOnly,
}

/// Where the era puts the full barrier (B) of the futex ordering comment
/// (11d4616bd07f): the one that orders a waker's store to the futex word
/// before its read of `waiters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WakeBarrier {
    /// No waiter count to order (before 3.14).
    None,
    /// 3.14 to 5.6: get_futex_key_refs' explicit smp_mb() for a private key
    /// (a shared key's ihold or mmgrab implies it), so in every op's key.
    InKeyRefs,
    /// 5.7 on, with get_futex_key_refs gone: futex_hb_waiters_pending's
    /// smp_mb() before futex_wake reads `waiters`.
    #[default]
    BeforeWaitersRead,
}

/// The accesses of an op's path that are not the table's own, as the era's
/// code makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpPath {
    /// futex_q_unlock drops `waiters` before releasing the bucket lock
    /// (fe00e88d217a, 6.16 merge window), not after it.
    #[serde(default)]
    pub waiters_dec_before_unlock: bool,
    #[serde(default)]
    pub shared_key: SharedKeyPins,
    #[serde(default)]
    pub wake_barrier: WakeBarrier,
}

/// A complete table design.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDesign {
    pub name: String,
    /// The kernel or proposal this design stands for.
    pub era: String,
    pub hash: HashForm,
    pub key_order: KeyOrder,
    #[serde(default)]
    pub word_size: WordSize,
    /// Slots of one global table instance (per node with `per-node` placement).
    pub slots: Expr,
    pub bucket: BucketLayout,
    /// Alignment of the bucket array's start.
    pub align: u64,
    /// Where the array starts within its alignment unit (the 2.6.29 static
    /// array's offset inside a cache line was never measured).
    #[serde(default)]
    pub base_offset: u64,
    pub placement: Placement,
    #[serde(default)]
    pub private: Option<PrivateHash>,
    /// The era's spinlock; the machine's when absent.
    #[serde(default)]
    pub lock: Option<LockKind>,
    #[serde(default)]
    pub path: OpPath,
    /// A design no kernel can run, asked for on purpose: the checks that a
    /// kernel could run it are waived, and its name must say "hypothetical"
    /// so every table, chart and selector shows it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hypothetical: bool,
}

/// Variables a sizing rule may name.
pub const SIZING_VARIABLES: [&str; 7] = [
    "cpus",
    "possible_cpus",
    "nodes",
    "threads",
    "processes",
    "futexes",
    "node_slots",
];

/// The values of the sizing variables for one scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SizingVars {
    pub cpus: u64,
    pub possible_cpus: u64,
    pub nodes: u64,
    /// Threads of the process being sized (all threads for a global table).
    pub threads: u64,
    pub processes: u64,
    pub futexes: u64,
    /// Slots of one global table instance (known once the global table is sized).
    pub node_slots: u64,
}

impl SizingVars {
    /// The variables of a run of `threads` threads in `processes`
    /// processes using `futexes` futex words, on `platform`; the global
    /// table is not sized yet.
    pub fn new(platform: &Platform, threads: u64, processes: u64, futexes: u64) -> SizingVars {
        SizingVars {
            cpus: platform.cpus,
            possible_cpus: platform.possible_cpus,
            nodes: platform.nodes.into(),
            threads,
            processes,
            futexes,
            node_slots: 0,
        }
    }

    /// The variables a process's private hash is sized with: its own
    /// threads, and the global table's slots per instance.
    pub fn for_process(&self, threads: u64, node_slots: u64) -> SizingVars {
        SizingVars {
            threads,
            node_slots,
            ..*self
        }
    }

    pub fn get(&self, name: &str) -> Option<u64> {
        Some(match name {
            "cpus" => self.cpus,
            "possible_cpus" => self.possible_cpus,
            "nodes" => self.nodes,
            "threads" => self.threads,
            "processes" => self.processes,
            "futexes" => self.futexes,
            "node_slots" => self.node_slots,
            _ => return None,
        })
    }
}

/// Evaluates a sizing rule; a table's slot count must be a power of two
/// because the kernel masks the hash.
pub fn eval_slots(rule: &Expr, vars: &SizingVars) -> Result<u64, DesignError> {
    let slots = rule
        .eval(&|name| vars.get(name))
        .map_err(|error| DesignError::Rule {
            rule: rule.to_string(),
            error,
        })?;
    // The kernel masks a 32-bit hash: more slots than that are never used.
    if slots > 1 << 32 {
        return Err(DesignError::BeyondHash {
            rule: rule.to_string(),
            slots,
        });
    }
    if !slots.is_power_of_two() {
        return Err(DesignError::NotPowerOfTwo {
            rule: rule.to_string(),
            slots,
        });
    }
    Ok(slots)
}

/// What makes a table design unbuildable, on any machine or on this one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DesignError {
    #[error("bucket size must be at least 1 byte")]
    EmptyBucket,
    #[error(
        "field '{}' at offset {} size {} lies outside the {bucket}-byte bucket",
        field.name.as_str(),
        field.offset,
        field.size
    )]
    FieldOutside { field: Field, bucket: u32 },
    #[error("field '{}' is listed twice", .0.as_str())]
    FieldTwice(FieldName),
    #[error("fields '{}' and '{}' overlap", .0.as_str(), .1.as_str())]
    FieldsOverlap(FieldName, FieldName),
    #[error("a bucket needs a 'lock' field")]
    NoLock,
    #[error("align = {0} must be a power of two")]
    Align(u64),
    #[error("base_offset = {base_offset} must be below align = {align}")]
    BaseOffset { base_offset: u64, align: u64 },
    #[error(
        "a reference-counted private hash needs a header (header_bytes > 0) to hold the count"
    )]
    RefcountWithoutHeader,
    /// A sizing rule names an unknown variable, or fails to evaluate.
    #[error("sizing rule '{rule}': {error}")]
    Rule { rule: String, error: ExprError },
    #[error(
        "sizing rule '{rule}' gives {slots} slots, more than the 2^32 a 32-bit hash can reach"
    )]
    BeyondHash { rule: String, slots: u64 },
    #[error("sizing rule '{rule}' gives {slots} slots; the kernel masks the hash, so it must be a power of two (wrap it in roundup_pow_of_two)")]
    NotPowerOfTwo { rule: String, slots: u64 },
    #[error("its tables take {bytes} bytes or more, beyond the {limit} futexsim lays out")]
    TooLarge { bytes: u64, limit: u64 },
    #[error(
        "no kernel runs this design: a private hash without a reference count (refcount = \"none\") \
         cannot grow, since futex_hash_allocate replaces a table only once the ops counted on it \
         are done (bd54df5ea7ca); a table set by prctl never grows either. Give private.grows = \
         false, or hypothetical = true and a name that says \"hypothetical\" to ask anyway"
    )]
    UncountedTableGrows,
    #[error(
        "no kernel runs this design: FH_FLAG_IMMUTABLE (immutable_flag) was removed \
         (760e6f7befba) in the release that brought the per-CPU reference count (56180dd20c19). \
         Give immutable_flag = false, refcount = \"shared\" (the 6.16 release candidates), or \
         hypothetical = true and a name that says \"hypothetical\" to ask anyway"
    )]
    ImmutableFlagWithPerCpuCount,
    #[error(
        "hypothetical = true: the design's name must say \"hypothetical\", so every table, chart \
         and selector shows that no kernel runs it"
    )]
    HypotheticalUnnamed,
}

fn layout(size: u32, fields: &[(FieldName, u32, u32)]) -> BucketLayout {
    BucketLayout {
        size,
        fields: fields
            .iter()
            .map(|&(name, offset, size)| Field { name, offset, size })
            .collect(),
    }
}

fn rule(src: &str) -> Expr {
    Expr::parse(src).expect("preset sizing rules parse")
}

/// 2.6.2x-2.6.38: lock, 4 bytes of padding, then a two-list plist_head; 40 bytes, packed.
fn packed_40() -> BucketLayout {
    layout(40, &[(FieldName::Lock, 0, 4), (FieldName::Chain, 8, 32)])
}

/// 3.14+: waiters, lock and chain in one cache-aligned 64-byte bucket.
fn aligned_64() -> BucketLayout {
    layout(
        64,
        &[
            (FieldName::Waiters, 0, 4),
            (FieldName::Lock, 4, 4),
            (FieldName::Chain, 8, 16),
        ],
    )
}

const PER_NODE_SLOTS: &str = "roundup_pow_of_two(max(4, 256 * possible_cpus / nodes))";
/// `futex_hash_allocate_default` (bd54df5ea7ca): 4 slots a thread, the
/// threads capped at the online CPUs, within [16, one global table].
const DEFAULT_PRIVATE_SLOTS: &str =
    "clamp(roundup_pow_of_two(4 * min(threads, cpus)), 16, node_slots)";

/// The kernel states, oldest first: each a release or a commit (docs/eras.md).
pub const ERA_NAMES: [&str; 9] = [
    "v2.6.29",
    "v3.14",
    "v4.6",
    "v5.7",
    "7c4f75a21f",
    "v6.16-rc1",
    "v6.16",
    "v6.17",
    "a734d9fca84e",
];

/// Proposals posted and never merged.
pub const PROPOSAL_NAMES: [&str; 2] = ["dumazet-2009", "private-2009"];

/// The descriptive names earlier configs use, and the kernel state each is.
pub const ALIASES: [(&str, &str); 6] = [
    ("fixed-256", "v2.6.29"),
    ("aligned-3.14", "v3.14"),
    ("private-7c4f75a21f", "7c4f75a21f"),
    ("numa-6.16", "v6.16"),
    ("private-6.16rc", "v6.16-rc1"),
    ("private-6.17", "v6.17"),
];

/// Every name `preset` answers: eras, proposals, aliases.
pub const PRESET_NAMES: [&str; ERA_NAMES.len() + PROPOSAL_NAMES.len() + ALIASES.len()] =
    preset_names();

/// The three lists above, one after another (a const array cannot be
/// concatenated otherwise).
const fn preset_names<const N: usize>() -> [&'static str; N] {
    let mut names = [""; N];
    let mut i = 0;
    while i < ERA_NAMES.len() {
        names[i] = ERA_NAMES[i];
        i += 1;
    }
    let mut j = 0;
    while j < PROPOSAL_NAMES.len() {
        names[i + j] = PROPOSAL_NAMES[j];
        j += 1;
    }
    let mut k = 0;
    while k < ALIASES.len() {
        names[i + j + k] = ALIASES[k].0;
        k += 1;
    }
    names
}

/// 6.16+ with CONFIG_FUTEX_PRIVATE_HASH: `priv` after the chain.
fn aligned_64_priv() -> BucketLayout {
    layout(
        64,
        &[
            (FieldName::Waiters, 0, 4),
            (FieldName::Lock, 4, 4),
            (FieldName::Chain, 8, 16),
            (FieldName::Priv, 24, 8),
        ],
    )
}

/// The kernel state or proposal `name` names, an alias answering with its
/// era's design under the alias's name (so a record keeps the name its
/// config wrote).
pub fn preset(name: &str) -> Option<TableDesign> {
    let era = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |&(_, era)| era);
    let mut design = era_design(era)?;
    design.name = name.into();
    Some(design)
}

fn era_design(name: &str) -> Option<TableDesign> {
    let v2_6_29 = TableDesign {
        name: name.into(),
        era: "v2.6.29: static futex_queues[256] of packed 40-byte buckets, lookup2 jhash2 of (word, ptr), ticket spinlock; a shared key locks its page and holds mm_count or i_count".into(),
        hash: HashForm::Lookup2,
        key_order: KeyOrder::WordPtr,
        word_size: WordSize::Bits64,
        slots: rule("256"),
        bucket: packed_40(),
        // Large static arrays get 32-byte alignment from the x86-64 ABI, not 64.
        align: 32,
        base_offset: 0,
        placement: Placement::BootNode,
        private: None,
        lock: Some(LockKind::Ticket),
        path: OpPath {
            waiters_dec_before_unlock: false,
            shared_key: SharedKeyPins::LockPageAndRefs,
            wake_barrier: WakeBarrier::None,
        },
        hypothetical: false,
    };
    let v3_14 = TableDesign {
        era: "v3.14: roundup_pow_of_two(256 x possible CPUs) cache-aligned buckets with a waiter count, lookup3, ticket spinlock; shared keys as 2.6.29".into(),
        hash: HashForm::Lookup3,
        slots: rule("roundup_pow_of_two(256 * possible_cpus)"),
        bucket: aligned_64(),
        align: 4096,
        placement: Placement::Interleaved,
        path: OpPath {
            wake_barrier: WakeBarrier::InKeyRefs,
            ..v2_6_29.path
        },
        ..v2_6_29.clone()
    };
    let v5_7 = TableDesign {
        era: "v5.7: 3.14's table under qspinlock, the key hashed from its start (ptr, word; 8d67743653dc), a shared key pins nothing but the page get_user_pages_fast takes".into(),
        key_order: KeyOrder::PtrWord,
        lock: Some(LockKind::Queued),
        path: OpPath {
            waiters_dec_before_unlock: false,
            shared_key: SharedKeyPins::PageOnly,
            wake_barrier: WakeBarrier::BeforeWaitersRead,
        },
        ..v3_14.clone()
    };
    let v6_16 = TableDesign {
        era: "v6.16: one table per node, node from the hash or the FUTEX2_NUMA word, waiters dropped before the unlock (fe00e88d217a); the private hash depends on BROKEN (9a57c3773152)".into(),
        slots: rule(PER_NODE_SLOTS),
        placement: Placement::PerNode,
        path: OpPath {
            waiters_dec_before_unlock: true,
            ..v5_7.path
        },
        ..v5_7.clone()
    };
    let v6_17 = TableDesign {
        era: "v6.17: per-node global table; a private hash per process from the first pthread_create, grown by futex_hash_allocate_default, reached back through hb->priv, per-CPU reference counting (56180dd20c19)".into(),
        bucket: aligned_64_priv(),
        private: Some(PrivateHash {
            slots: rule(DEFAULT_PRIVATE_SLOTS),
            key_order: KeyOrder::Address,
            header_bytes: 64,
            refcount: RefcountMode::PerCpu,
            min_threads: 2,
            lookup: PrivateLookup::BucketPriv,
            immutable_flag: false,
            grows: true,
        }),
        ..v6_16.clone()
    };
    let private_617 = v6_17.private.clone().expect("6.17 has a private hash");
    Some(match name {
        "v2.6.29" => v2_6_29,
        "dumazet-2009" => TableDesign {
            era: "2009 proposal (not merged): roundup_pow_of_two(possible CPUs) x 256 slots, vmalloc'd".into(),
            slots: rule("roundup_pow_of_two(possible_cpus) * 256"),
            align: 4096,
            placement: Placement::Interleaved,
            ..v2_6_29
        },
        "private-2009" => TableDesign {
            era: "2009 proposal (Thirumalai): 256 slots per process for private futexes, one pointer in mm".into(),
            private: Some(PrivateHash {
                slots: rule("256"),
                key_order: KeyOrder::WordPtr,
                header_bytes: 0,
                refcount: RefcountMode::None,
                min_threads: 1,
                lookup: PrivateLookup::Mask,
                immutable_flag: false,
                grows: false,
            }),
            ..v2_6_29
        },
        "v3.14" => v3_14,
        "v4.6" => TableDesign {
            era: "v4.6: 3.14's table under qspinlock (4.2); a shared key no longer locks its page (65d8fc777f6d) but still holds mm_count or i_count".into(),
            lock: Some(LockKind::Queued),
            path: OpPath {
                shared_key: SharedKeyPins::Refs,
                ..v3_14.path
            },
            ..v3_14
        },
        "v5.7" => v5_7,
        // 80367ad01d93 gave the fph a header (hash_mask, mm, custom; queues[]
        // behind it) and hb->priv, kept alive by the mm alone (futex_hash_get
        // and put empty, futex_hash nothing but __futex_hash); 7c4f75a21f63
        // allocates 16 slots at the first pthread_create. fe00e88d217a came
        // before both; FUTEX2_NUMA and the rcuref (bd54df5ea7ca) after.
        "7c4f75a21f" => TableDesign {
            era: "7c4f75a21f (6.16 merge window): a 16-slot private hash at the first pthread_create, kept by the mm, no reference per op; 5.7's global table".into(),
            bucket: aligned_64_priv(),
            path: v6_16.path,
            private: Some(PrivateHash {
                slots: rule("16"),
                refcount: RefcountMode::None,
                lookup: PrivateLookup::Mask,
                grows: false,
                ..private_617
            }),
            ..v5_7
        },
        "v6.16" => v6_16,
        "v6.16-rc1" => TableDesign {
            era: "v6.16-rc1: per-node global table, a growing private hash with an rcuref on its header line at every op (bd54df5ea7ca), FH_FLAG_IMMUTABLE (63e8595c060a)".into(),
            private: Some(PrivateHash {
                refcount: RefcountMode::Shared,
                immutable_flag: true,
                ..private_617
            }),
            ..v6_17
        },
        "v6.17" => v6_17,
        "a734d9fca84e" => TableDesign {
            era: "a734d9fca84e (2026): as 6.17, with hb->priv gone from the bucket".into(),
            bucket: aligned_64(),
            private: Some(PrivateHash {
                lookup: PrivateLookup::Direct,
                ..private_617
            }),
            ..v6_17
        },
        _ => return None,
    })
}

impl TableDesign {
    pub fn validate(&self) -> Result<(), DesignError> {
        self.bucket.validate()?;
        if !self.align.is_power_of_two() {
            return Err(DesignError::Align(self.align));
        }
        if self.base_offset >= self.align {
            return Err(DesignError::BaseOffset {
                base_offset: self.base_offset,
                align: self.align,
            });
        }
        let rules = std::iter::once(&self.slots).chain(self.private.as_ref().map(|p| &p.slots));
        for rule in rules {
            rule.check_variables(&SIZING_VARIABLES)
                .map_err(|error| DesignError::Rule {
                    rule: rule.to_string(),
                    error,
                })?;
        }
        if self
            .private
            .as_ref()
            .is_some_and(|p| p.refcount != RefcountMode::None && p.header_bytes == 0)
        {
            return Err(DesignError::RefcountWithoutHeader);
        }
        if self.hypothetical {
            if !self.name.contains("hypothetical") {
                return Err(DesignError::HypotheticalUnnamed);
            }
            return Ok(());
        }
        self.check_a_kernel_runs_it()
    }

    /// Refuses combinations no kernel ever had, each with the commits that
    /// rule it out.
    fn check_a_kernel_runs_it(&self) -> Result<(), DesignError> {
        let Some(private) = &self.private else {
            return Ok(());
        };
        // A private hash is replaced only once no op holds the old one: the
        // rcuref (bd54df5ea7ca) and then the per-CPU count (56180dd20c19)
        // are how futex_hash_allocate knows. A table no op counts (6.16-rc's
        // FH_FLAG_IMMUTABLE, 7c4f75a21f's mm-held table) is never replaced.
        if private.refcount == RefcountMode::None && private.grows {
            return Err(DesignError::UncountedTableGrows);
        }
        // 760e6f7befba removed FH_FLAG_IMMUTABLE in the release that brought
        // the per-CPU reference.
        if private.immutable_flag && private.refcount == RefcountMode::PerCpu {
            return Err(DesignError::ImmutableFlagWithPerCpuCount);
        }
        Ok(())
    }

    pub fn lock_kind(&self, machine_default: LockKind) -> LockKind {
        self.lock.unwrap_or(machine_default)
    }
}

/// A design named for a reader: its name, then what it stands for, the
/// name once. A preset named for its era (`v6.17`) has an era that already
/// begins with that name.
pub fn title(name: &str, era: &str) -> String {
    match era
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(": "))
    {
        Some(_) => era.to_string(),
        None => format!("{name}: {era}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_design_named_for_its_era_is_titled_with_its_name_once() {
        assert_eq!(title("v6.17", "v6.17: per-node"), "v6.17: per-node");
        assert_eq!(
            title("aligned-3.14", "v3.14: aligned"),
            "aligned-3.14: v3.14: aligned"
        );
        assert_eq!(title("v6.1", "v6.17: per-node"), "v6.1: v6.17: per-node");
    }

    #[test]
    fn every_preset_is_valid_and_named_after_itself() {
        for name in PRESET_NAMES {
            let d = preset(name).unwrap();
            assert_eq!(d.name, name);
            d.validate().unwrap();
        }
        assert!(preset("fixed-512").is_none());
    }

    #[test]
    fn a_private_hash_no_op_counts_cannot_grow_unless_asked_as_a_hypothetical() {
        let mut d = preset("private-6.16rc").unwrap();
        let private = d.private.as_mut().unwrap();
        private.refcount = RefcountMode::None;
        assert_eq!(d.validate(), Err(DesignError::UncountedTableGrows));
        d.private.as_mut().unwrap().grows = false;
        assert_eq!(d.validate(), Ok(()));
        d.private.as_mut().unwrap().grows = true;
        d.hypothetical = true;
        assert_eq!(d.validate(), Err(DesignError::HypotheticalUnnamed));
        d.name = "immutable-growing-hypothetical".into();
        assert_eq!(d.validate(), Ok(()));
    }

    #[test]
    fn the_immutable_flag_beside_a_per_cpu_count_is_refused() {
        let mut d = preset("private-6.17").unwrap();
        d.private.as_mut().unwrap().immutable_flag = true;
        assert_eq!(d.validate(), Err(DesignError::ImmutableFlagWithPerCpuCount));
        // The 6.16 release candidates had the flag beside the shared rcuref.
        d.private.as_mut().unwrap().refcount = RefcountMode::Shared;
        assert_eq!(d.validate(), Ok(()));
    }

    #[test]
    fn kernel_sizing_examples() {
        let vars = |cpus: u64, nodes: u64, threads: u64| SizingVars {
            cpus,
            possible_cpus: cpus,
            nodes,
            threads,
            processes: 1,
            futexes: 1024 * threads,
            node_slots: 0,
        };
        let d = preset("aligned-3.14").unwrap();
        assert_eq!(eval_slots(&d.slots, &vars(80, 8, 80)), Ok(32768));
        let d = preset("numa-6.16").unwrap();
        assert_eq!(eval_slots(&d.slots, &vars(224, 4, 224)), Ok(16384));
        let d = preset("private-6.17").unwrap();
        let private = d.private.unwrap().slots;
        for (cpus, nodes, want) in [(32, 2, 128), (112, 2, 512), (144, 2, 1024), (256, 2, 1024)] {
            let mut v = vars(cpus, nodes, cpus);
            v.node_slots = eval_slots(&d.slots, &v).unwrap();
            assert_eq!(eval_slots(&private, &v), Ok(want), "{cpus} CPUs");
        }
        let mut v = vars(32, 2, 1);
        v.node_slots = 8192;
        assert_eq!(eval_slots(&private, &v), Ok(16));
        assert_eq!(
            eval_slots(&preset("dumazet-2009").unwrap().slots, &vars(24, 2, 1)),
            Ok(8192)
        );
    }

    #[test]
    fn layouts_are_rejected_when_fields_do_not_fit() {
        let mut d = preset("aligned-3.14").unwrap();
        d.bucket.fields.push(Field {
            name: FieldName::Priv,
            offset: 60,
            size: 8,
        });
        let outside = d.validate().unwrap_err();
        assert!(matches!(
            outside,
            DesignError::FieldOutside { bucket: 64, field } if field.offset == 60
        ));
        assert!(outside.to_string().contains("outside the 64-byte bucket"));
        let mut d = preset("aligned-3.14").unwrap();
        d.bucket.fields.push(Field {
            name: FieldName::Priv,
            offset: 6,
            size: 8,
        });
        assert_eq!(
            d.validate(),
            Err(DesignError::FieldsOverlap(FieldName::Lock, FieldName::Priv))
        );
        let rule = Expr::parse("3 * cpus").unwrap();
        let v = SizingVars {
            cpus: 4,
            ..Default::default()
        };
        assert_eq!(
            eval_slots(&rule, &v),
            Err(DesignError::NotPowerOfTwo {
                rule: "3 * cpus".into(),
                slots: 12
            })
        );
    }
}
