//! A kernel's own layout of its futex hash, read from its BTF (the type
//! information a kernel built with CONFIG_DEBUG_INFO_BTF carries, in
//! /sys/kernel/btf/vmlinux and in the .BTF section of its vmlinux), and the
//! table design that layout makes. Only `futexsim design from-btf` reads a
//! BTF; no run does.

use super::table::{BucketLayout, DesignError, Field, FieldName};
use btfparse::{Offset, Readable, TypeInformation, TypeVariant};
use object::{Object, ObjectSection};

pub const BUCKET_STRUCT: &str = "futex_hash_bucket";
pub const PRIVATE_HASH_STRUCT: &str = "futex_private_hash";
/// The flexible array of buckets that ends `struct futex_private_hash`:
/// what comes before it is the header.
pub const QUEUES_MEMBER: &str = "queues";

/// How deep a chain of typedefs, qualifiers and nested structs is followed:
/// a kernel's are a few levels; a damaged BTF could loop.
const MAX_TYPE_DEPTH: usize = 64;

/// One member of a struct, as the BTF lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its C name; anonymous members are named `(anonymous)`.
    pub name: String,
    /// Its C type as a declaration spells it (`spinlock_t`, `struct plist_head`).
    pub c_type: String,
    pub offset: u32,
    pub size: u32,
}

/// A struct's size, the alignment its members need, and its members in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    pub name: &'static str,
    pub size: u32,
    /// The largest alignment a member needs. An alignment the struct is
    /// given on top (`____cacheline_aligned_in_smp`) is not in BTF; it shows
    /// only as padding in `size`.
    pub member_align: u32,
    pub members: Vec<Member>,
}

impl Member {
    /// The member as its struct declares it: `void *mm`, `struct
    /// futex_hash_bucket queues[]`.
    pub fn declaration(&self) -> String {
        let (base, array) = self
            .c_type
            .split_at(self.c_type.find('[').unwrap_or(self.c_type.len()));
        let gap = if base.ends_with('*') { "" } else { " " };
        format!("{base}{gap}{}{array}", self.name)
    }
}

impl StructLayout {
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    fn member_names(&self) -> String {
        let names: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
        if names.is_empty() {
            "no members".into()
        } else {
            names.join(", ")
        }
    }
}

/// What a kernel's BTF says of its futex hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLayout {
    pub bucket: StructLayout,
    /// None for a kernel without a private hash (before 6.16, or built
    /// without CONFIG_FUTEX_PRIVATE_HASH, which 6.16 has depend on BROKEN).
    pub private_hash: Option<StructLayout>,
}

/// Why a file gives no futex hash layout; each says what was read and what
/// was expected, and the caller names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BtfError {
    #[error("is neither raw BTF (it begins with bytes {start}, not BTF's magic 0xeb9f) nor an ELF file; expected /sys/kernel/btf/vmlinux, a raw BTF file or a vmlinux")]
    NotBtf { start: String },
    #[error("is an ELF file without a .BTF section; expected a vmlinux built with CONFIG_DEBUG_INFO_BTF=y")]
    NoBtfSection,
    #[error("is an ELF file that does not read: {0}")]
    Elf(String),
    #[error("holds BTF that does not read: {0}")]
    Damaged(String),
    #[error("holds no struct {name} among its {types} types; expected the BTF of a kernel with futexes (CONFIG_FUTEX)")]
    NoStruct { name: &'static str, types: usize },
    #[error("struct {BUCKET_STRUCT} has {members} and no member `lock`; expected the bucket's spinlock, which every futex op takes")]
    NoLock { members: String },
    #[error("struct {PRIVATE_HASH_STRUCT} has {members} and no `{QUEUES_MEMBER}[]`; expected its buckets to follow its header")]
    NoQueues { members: String },
    #[error("member `{member}` of struct {name} is a bit field; expected whole bytes")]
    BitField { name: &'static str, member: String },
    #[error("member `{member}` of struct {name}: {reason}")]
    Member {
        name: &'static str,
        member: String,
        reason: String,
    },
    #[error("struct {BUCKET_STRUCT} makes no bucket futexsim can lay out: {0}")]
    Bucket(DesignError),
}

/// The futex hash layout in `bytes`: raw BTF (/sys/kernel/btf/vmlinux), or
/// an ELF file whose .BTF section holds it (a vmlinux).
pub fn read_kernel_layout(bytes: &[u8]) -> Result<KernelLayout, BtfError> {
    let btf = btf_bytes(bytes)?;
    let types = TypeInformation::new(&BtfBytes(btf)).map_err(|e| BtfError::Damaged(said(&e)))?;
    let bucket = struct_layout(&types, BUCKET_STRUCT)?.ok_or(BtfError::NoStruct {
        name: BUCKET_STRUCT,
        types: types.get().len(),
    })?;
    Ok(KernelLayout {
        bucket,
        private_hash: struct_layout(&types, PRIVATE_HASH_STRUCT)?,
    })
}

/// The BTF in `bytes`, told apart by its first bytes.
fn btf_bytes(bytes: &[u8]) -> Result<&[u8], BtfError> {
    match bytes {
        // BTF's magic 0xeB9F, in either byte order.
        [0x9f, 0xeb, ..] | [0xeb, 0x9f, ..] => Ok(bytes),
        [0x7f, b'E', b'L', b'F', ..] => {
            let elf = object::File::parse(bytes).map_err(|e| BtfError::Elf(e.to_string()))?;
            let section = elf.section_by_name(".BTF").ok_or(BtfError::NoBtfSection)?;
            section.data().map_err(|e| BtfError::Elf(e.to_string()))
        }
        _ => Err(BtfError::NotBtf {
            start: bytes
                .iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" "),
        }),
    }
}

/// The bytes btfparse reads from: a slice in memory.
struct BtfBytes<'a>(&'a [u8]);

impl Readable for BtfBytes<'_> {
    fn read(&self, offset: u64, buffer: &mut [u8]) -> btfparse::Result<()> {
        let start = usize::try_from(offset).ok();
        let bytes = start
            .and_then(|start| self.0.get(start..start.checked_add(buffer.len())?))
            .ok_or_else(|| {
                btfparse::Error::new(
                    btfparse::ErrorKind::InvalidOffset,
                    &format!(
                        "{} bytes at offset {offset} lie past its end ({} bytes)",
                        buffer.len(),
                        self.0.len()
                    ),
                )
            })?;
        buffer.copy_from_slice(bytes);
        Ok(())
    }
}

fn said(e: &btfparse::Error) -> String {
    format!("{} ({:?})", e.message(), e.kind())
}

/// The struct named `name`, None when the BTF has none (a declaration
/// alone, `struct x;`, is none).
fn struct_layout(
    types: &TypeInformation,
    name: &'static str,
) -> Result<Option<StructLayout>, BtfError> {
    let found = types.get().values().find_map(|t| match t {
        TypeVariant::Struct(s) if s.name().as_deref() == Some(name) => Some(s),
        _ => None,
    });
    let Some(found) = found else {
        return Ok(None);
    };
    let mut members = Vec::new();
    let mut member_align = 1;
    for m in found.member_list() {
        let member = m.name().unwrap_or_else(|| "(anonymous)".into());
        let offset = match m.offset() {
            Offset::ByteOffset(offset) => offset,
            Offset::BitOffsetAndSize(..) => return Err(BtfError::BitField { name, member }),
        };
        let bad = |reason: String| BtfError::Member {
            name,
            member: member.clone(),
            reason,
        };
        let size = types
            .size_of(m.tid())
            .map_err(|e| bad(said(&e)))
            .and_then(|size| u32::try_from(size).map_err(|_| bad(format!("{size} bytes"))))?;
        member_align = member_align.max(alignment(types, m.tid(), 0).map_err(bad)?);
        members.push(Member {
            c_type: c_type(types, m.tid(), 0),
            name: member,
            offset,
            size,
        });
    }
    let size = u32::try_from(*found.size())
        .map_err(|_| BtfError::Damaged(format!("struct {name} is {} bytes", found.size())))?;
    Ok(Some(StructLayout {
        name,
        size,
        member_align,
        members,
    }))
}

/// The alignment the C ABI gives type `tid`: a scalar's own size, an
/// array's element's, a struct's largest member's.
fn alignment(types: &TypeInformation, tid: u32, depth: usize) -> Result<u32, String> {
    if depth > MAX_TYPE_DEPTH {
        return Err(format!(
            "its type nests deeper than {MAX_TYPE_DEPTH} levels"
        ));
    }
    let size_of = |tid: u32| {
        types
            .size_of(tid)
            .map_err(|e| said(&e))
            .and_then(|size| u32::try_from(size).map_err(|_| format!("{size} bytes")))
    };
    let inner = |tid: u32| alignment(types, tid, depth + 1);
    let members = |list: &btfparse::MemberList| {
        list.iter()
            .try_fold(1, |align, m| Ok::<u32, String>(align.max(inner(m.tid())?)))
    };
    match types.from_id(tid) {
        Some(TypeVariant::Int(_) | TypeVariant::Enum(_) | TypeVariant::Enum64(_))
        | Some(TypeVariant::Float(_) | TypeVariant::Ptr(_)) => size_of(tid),
        Some(TypeVariant::Array(a)) => inner(*a.element_tid()),
        Some(TypeVariant::Struct(s)) => members(s.member_list()),
        Some(TypeVariant::Union(u)) => members(u.member_list()),
        Some(TypeVariant::Typedef(t)) => inner(*t.tid()),
        Some(TypeVariant::Const(t)) => inner(*t.tid()),
        Some(TypeVariant::Volatile(t)) => inner(*t.tid()),
        Some(TypeVariant::Restrict(t)) => inner(*t.tid()),
        Some(TypeVariant::TypeTag(t)) => inner(*t.tid()),
        Some(other) => Err(format!("its type {other:?} has no alignment")),
        None => Err(format!("its type id {tid} is not in the BTF")),
    }
}

/// Type `tid` as a C declaration spells it.
fn c_type(types: &TypeInformation, tid: u32, depth: usize) -> String {
    if depth > MAX_TYPE_DEPTH {
        return "...".into();
    }
    let inner = |tid: u32| c_type(types, tid, depth + 1);
    let named = |keyword: &str, name: &Option<String>| match name {
        Some(name) => format!("{keyword} {name}"),
        None => format!("{keyword} {{...}}"),
    };
    match types.from_id(tid) {
        Some(TypeVariant::Void) => "void".into(),
        Some(TypeVariant::Int(t)) => t.name().clone().unwrap_or_default(),
        Some(TypeVariant::Float(t)) => t.name().clone().unwrap_or_default(),
        Some(TypeVariant::Typedef(t)) => t.name().clone().unwrap_or_default(),
        Some(TypeVariant::Struct(t)) => named("struct", t.name()),
        Some(TypeVariant::Union(t)) => named("union", t.name()),
        Some(TypeVariant::Enum(t)) => named("enum", t.name()),
        Some(TypeVariant::Enum64(t)) => named("enum", t.name()),
        Some(TypeVariant::Ptr(t)) => format!("{} *", inner(*t.tid())),
        Some(TypeVariant::Const(t)) => format!("const {}", inner(*t.tid())),
        Some(TypeVariant::Volatile(t)) => format!("volatile {}", inner(*t.tid())),
        Some(TypeVariant::Restrict(t)) => format!("{} restrict", inner(*t.tid())),
        Some(TypeVariant::TypeTag(t)) => inner(*t.tid()),
        Some(TypeVariant::Array(t)) => match t.element_count() {
            0 => format!("{}[]", inner(*t.element_tid())),
            n => format!("{}[{n}]", inner(*t.element_tid())),
        },
        Some(TypeVariant::FuncProto(_)) => "function".into(),
        Some(_) | None => format!("type #{tid}"),
    }
}

/// The era presets a layout read from BTF can belong to, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EraChoice {
    /// A `[[table]]` preset (sim/kernel/table.rs).
    pub preset: &'static str,
    pub reason: &'static str,
}

/// The table design a kernel's layout makes: its bucket, the header of its
/// private hash, and the era preset the rest of the design comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfDesign {
    pub bucket: BucketLayout,
    /// The bytes of `struct futex_private_hash` before `queues[]`.
    pub header_bytes: Option<u32>,
    pub era: EraChoice,
    /// Bucket members futexsim does not model: their bytes stay in the
    /// bucket's size, nothing reads or writes them.
    pub unmodelled: Vec<Member>,
}

impl KernelLayout {
    /// The design this layout makes. The kernel names the bucket's fields
    /// as the model does (`waiters`, `lock`, `chain`, `priv`), so a member
    /// is a field by its name.
    pub fn design(&self) -> Result<BtfDesign, BtfError> {
        let mut fields = Vec::new();
        let mut unmodelled = Vec::new();
        for member in &self.bucket.members {
            match FieldName::ALL
                .into_iter()
                .find(|f| f.as_str() == member.name)
            {
                Some(name) => fields.push(Field {
                    name,
                    offset: member.offset,
                    size: member.size,
                }),
                None => unmodelled.push(member.clone()),
            }
        }
        let bucket = BucketLayout {
            size: self.bucket.size,
            fields,
        };
        if bucket.field(FieldName::Lock).is_none() {
            return Err(BtfError::NoLock {
                members: self.bucket.member_names(),
            });
        }
        bucket.validate().map_err(BtfError::Bucket)?;
        let header_bytes = match &self.private_hash {
            Some(fph) => Some(
                fph.member(QUEUES_MEMBER)
                    .ok_or_else(|| BtfError::NoQueues {
                        members: fph.member_names(),
                    })?
                    .offset,
            ),
            None => None,
        };
        Ok(BtfDesign {
            era: era_of(&bucket, self.private_hash.is_some()),
            bucket,
            header_bytes,
            unmodelled,
        })
    }
}

/// The era whose layout this is, from the fields the bucket has and
/// whether a private hash exists; the rest of the design (hash, lock, op
/// paths, sizing rules) is that era's.
fn era_of(bucket: &BucketLayout, private_hash: bool) -> EraChoice {
    let has = |name| bucket.field(name).is_some();
    if has(FieldName::Priv) {
        EraChoice {
            preset: "v6.17",
            reason: "the bucket holds `priv`, the way back to its private hash that 6.16 and 6.17 read at every op (bd54df5ea7ca until a734d9fca84e dropped it); v6.17 is the release of that era",
        }
    } else if private_hash {
        EraChoice {
            preset: "a734d9fca84e",
            reason: "a private hash (struct futex_private_hash) and a bucket without `priv`: the layout a734d9fca84e left, a private table found from its header alone",
        }
    } else if has(FieldName::Waiters) {
        EraChoice {
            preset: "v6.16",
            reason: "no private hash and a bucket with `waiters`: the global table of 3.14 to 6.16 (6.16's private hash depends on BROKEN); v6.16 is the latest of them, name v5.7, v4.6 or v3.14 for an older kernel's hash, lock and key",
        }
    } else {
        EraChoice {
            preset: "v2.6.29",
            reason: "a bucket without `waiters`: the bucket before 3.14 counted its waiters",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob of `types` (each kind's encoding, in id order from 1)
    /// over `strings`, little-endian, as the kernel lays one out.
    fn blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
        let type_len = (types.len() * 4) as u32;
        let mut out = Vec::new();
        out.extend_from_slice(&0xeb9fu16.to_le_bytes());
        out.extend_from_slice(&[1, 0]);
        for word in [24, 0, type_len, type_len, strings.len() as u32] {
            out.extend_from_slice(&u32::to_le_bytes(word));
        }
        for word in types {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(strings);
        out
    }

    const INT: u32 = 1 << 24;
    const ARRAY: u32 = 3 << 24;
    const STRUCT: u32 = 4 << 24;

    /// Strings at their offsets in [`STRINGS`].
    const STRINGS: &[u8] =
        b"\0int\0long\0futex_hash_bucket\0waiters\0lock\0chain\0priv\0spare\0futex_private_hash\0hash_mask\0queues\0";
    fn at(name: &str) -> u32 {
        let needle = format!("\0{name}\0");
        STRINGS
            .windows(needle.len())
            .position(|w| w == needle.as_bytes())
            .map(|i| i as u32 + 1)
            .unwrap()
    }

    /// Type 1 `int` (4 bytes), type 2 `long` (8 bytes), type 3 the bucket
    /// with `members` (name, type, byte offset), type 4 an array of buckets,
    /// type 5 the private hash with a 64-byte header.
    fn kernel(bucket_size: u32, members: &[(&str, u32, u32)]) -> Vec<u8> {
        let mut t = vec![at("int"), INT, 4, 32, at("long"), INT, 8, 64];
        t.extend([
            at("futex_hash_bucket"),
            STRUCT | members.len() as u32,
            bucket_size,
        ]);
        for &(name, tid, offset) in members {
            t.extend([at(name), tid, offset * 8]);
        }
        t.extend([0, ARRAY, 0, 3, 1, 0]);
        t.extend([at("futex_private_hash"), STRUCT | 2, 64]);
        t.extend([at("hash_mask"), 1, 0, at("queues"), 4, 64 * 8]);
        blob(&t, STRINGS)
    }

    #[test]
    fn a_bucket_with_priv_is_the_6_17_era_with_its_header_bytes() {
        let bytes = kernel(
            64,
            &[
                ("waiters", 1, 0),
                ("lock", 1, 4),
                ("chain", 2, 8),
                ("priv", 2, 24),
            ],
        );
        let layout = read_kernel_layout(&bytes).unwrap();
        assert_eq!(layout.bucket.member_align, 8);
        assert_eq!(layout.bucket.members[1].declaration(), "int lock");
        let queues = layout.private_hash.as_ref().unwrap().member("queues");
        assert_eq!(
            queues.map(Member::declaration).as_deref(),
            Some("struct futex_hash_bucket queues[]")
        );
        let design = layout.design().unwrap();
        assert_eq!(design.era.preset, "v6.17");
        assert_eq!(design.header_bytes, Some(64));
        assert_eq!(
            design.bucket.field(FieldName::Priv),
            Some(Field {
                name: FieldName::Priv,
                offset: 24,
                size: 8
            })
        );
        assert!(design.unmodelled.is_empty());
    }

    #[test]
    fn a_member_the_model_does_not_know_is_kept_aside_not_dropped() {
        let bytes = kernel(64, &[("lock", 1, 0), ("chain", 2, 8), ("spare", 2, 16)]);
        let design = read_kernel_layout(&bytes).unwrap().design().unwrap();
        assert_eq!(design.bucket.fields.len(), 2);
        assert_eq!(design.unmodelled.len(), 1);
        assert_eq!(design.unmodelled[0].name, "spare");
        assert_eq!(design.era.preset, "a734d9fca84e");
    }

    #[test]
    fn a_bucket_without_lock_is_refused_with_the_members_it_has() {
        let bytes = kernel(64, &[("waiters", 1, 0), ("chain", 2, 8)]);
        let error = read_kernel_layout(&bytes).unwrap().design().unwrap_err();
        assert_eq!(
            error,
            BtfError::NoLock {
                members: "waiters, chain".into()
            }
        );
        assert!(error.to_string().contains("no member `lock`"), "{error}");
    }

    #[test]
    fn a_btf_without_the_bucket_is_refused() {
        let bytes = blob(&[at("int"), INT, 4, 32], STRINGS);
        assert_eq!(
            read_kernel_layout(&bytes),
            Err(BtfError::NoStruct {
                name: BUCKET_STRUCT,
                types: 1
            })
        );
    }

    #[test]
    fn bytes_that_are_neither_btf_nor_elf_are_refused_with_their_start() {
        let error = read_kernel_layout(b"[run]\n").unwrap_err();
        assert_eq!(
            error,
            BtfError::NotBtf {
                start: "5b 72 75 6e".into()
            }
        );
    }

    #[test]
    fn a_truncated_btf_is_damaged_not_a_panic() {
        let bytes = kernel(64, &[("lock", 1, 0)]);
        let error = read_kernel_layout(&bytes[..bytes.len() - 20]).unwrap_err();
        assert!(matches!(error, BtfError::Damaged(_)), "{error:?}");
    }

    /// The running kernel's BTF, where this machine has one (CI's does); a
    /// 6.18 kernel's bucket is a734d9fca84e's: no `priv`.
    #[test]
    fn the_running_kernels_bucket_has_its_lock_waiters_and_chain() {
        let Ok(bytes) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            eprintln!("no /sys/kernel/btf/vmlinux here: nothing to read");
            return;
        };
        let layout = read_kernel_layout(&bytes).unwrap();
        let design = layout.design().unwrap();
        for name in [FieldName::Waiters, FieldName::Lock, FieldName::Chain] {
            assert!(design.bucket.field(name).is_some(), "{name:?} missing");
        }
        assert!(design.bucket.size >= 64, "{:?}", design.bucket);
        let release = crate::host::kernel_release().unwrap_or_default();
        if release.starts_with("6.18.") {
            assert_eq!(design.bucket.field(FieldName::Priv), None);
            assert_eq!(design.era.preset, "a734d9fca84e");
            // Without lock debugging, as distributions build it, the
            // bucket is one line and the header one more.
            if design.bucket.field(FieldName::Lock).map(|f| f.size) == Some(4) {
                assert_eq!(design.bucket.size, 64);
                assert_eq!(design.header_bytes, Some(64));
            }
        }
    }
}
