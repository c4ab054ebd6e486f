//! `futexsim hash`: the kernel's jhash and jhash2 on given input, and where
//! one futex key lands in a table design, down to the cache line of each
//! field of its bucket.

use super::{parse_u32, parse_u64, CliError};
use clap::builder::PossibleValuesParser;
use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use futexsim::hash::HashForm;
use futexsim::kernel::futex_hash::{FutexHash, ProcessInfo, TableSel};
use futexsim::kernel::key::{get_futex_key, FutexNode, KeyKind, KeySource, WordSize};
use futexsim::kernel::table::{preset, title, Placement, SizingVars, PRESET_NAMES};
use futexsim::limits::MAX_ANALYSIS_TASKS;
use futexsim::machine::Platform;
use futexsim::memory::MemoryMap;
use serde::Serialize;
use std::io::Write;

#[derive(Args)]
pub struct HashArgs {
    #[command(subcommand)]
    function: HashFunction,
}

#[derive(Subcommand)]
enum HashFunction {
    /// jhash2 over 32-bit words; prints 0x%08x.
    Jhash2 {
        #[command(flatten)]
        form: FormArgs,
        /// The words, decimal or 0x hex.
        #[arg(value_parser = parse_u32)]
        words: Vec<u32>,
    },
    /// jhash over bytes; prints 0x%08x.
    Jhash {
        #[command(flatten)]
        form: FormArgs,
        #[command(flatten)]
        input: ByteInput,
    },
    /// Build a futex key and find its bucket in a table design.
    Futex(FutexArgs),
}

#[derive(Args)]
struct FormArgs {
    /// lookup3 (kernels >= 2.6.37/38) or lookup2 (<= 2.6.36).
    #[arg(long, default_value = "lookup3")]
    form: HashForm,
    #[arg(long, default_value = "0", value_parser = parse_u32)]
    initval: u32,
}

/// Bytes given as hex digits, e.g. 41424344 or 0x41424344.
#[derive(Clone, Debug)]
struct HexBytes(Vec<u8>);

/// Hex digits that are not whole bytes; clap prints it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum HexError {
    #[error("'{0}' has an odd number of hex digits")]
    OddDigits(String),
    #[error("'{0}' is not a string of hex bytes")]
    NotHex(String),
}

fn parse_hex_bytes(text: &str) -> Result<HexBytes, HexError> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if !digits.len().is_multiple_of(2) {
        return Err(HexError::OddDigits(text.to_string()));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            digits
                .get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| HexError::NotHex(text.to_string()))
        })
        .collect::<Result<_, _>>()
        .map(HexBytes)
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct ByteInput {
    /// The bytes in hex.
    #[arg(long, value_parser = parse_hex_bytes)]
    hex: Option<HexBytes>,
    /// The bytes of a UTF-8 string.
    #[arg(long)]
    text: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Bits {
    #[value(name = "64")]
    Bits64,
    #[value(name = "32")]
    Bits32,
}

#[derive(Args)]
#[command(group(ArgGroup::new("kind").args(["private", "shared_anon", "shared_file"])))]
pub struct FutexArgs {
    /// Table design preset.
    #[arg(long, value_parser = PossibleValuesParser::new(PRESET_NAMES))]
    table: String,
    /// User address of the futex word.
    #[arg(long, value_parser = parse_u64)]
    uaddr: u64,
    /// A private futex (FUTEX_PRIVATE_FLAG): the default.
    #[arg(long)]
    private: bool,
    /// A shared futex on an anonymous page.
    #[arg(long)]
    shared_anon: bool,
    /// A shared futex on a file or shmem page.
    #[arg(long, requires_all = ["inode_seq", "pgoff"])]
    shared_file: bool,
    /// The mm_struct address (private and shared-anon keys).
    #[arg(long, value_parser = parse_u64, default_value = "0xffff888100abc000", conflicts_with = "shared_file")]
    mm: u64,
    /// The inode's sequence number (or inode pointer before 5.6).
    #[arg(long, value_parser = parse_u64, requires = "shared_file")]
    inode_seq: Option<u64>,
    /// Page index of the futex in its file.
    #[arg(long, value_parser = parse_u64, requires = "shared_file")]
    pgoff: Option<u64>,
    #[arg(long, value_parser = parse_u64, default_value = "8")]
    cpus: u64,
    #[arg(long, value_parser = parse_u32, default_value = "1")]
    nodes: u32,
    /// Threads of the process (sizes a private hash); default: --cpus.
    #[arg(long, value_parser = parse_u32)]
    threads: Option<u32>,
    /// The kernel's word size.
    #[arg(long, value_enum, default_value = "64")]
    bits: Bits,
    /// The kernel's base page in bytes (65536 on ppc64le).
    #[arg(long, value_parser = parse_u64, default_value = "4096")]
    page_size: u64,
    /// A FUTEX2_NUMA private futex whose word holds this node (-1,
    /// FUTEX_NO_NODE, is the current node: node 0 here).
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["shared_anon", "shared_file"])]
    numa_node: Option<i64>,
    #[arg(long)]
    json: bool,
}

pub fn run(args: &HashArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.function {
        HashFunction::Jhash2 { form, words } => {
            writeln!(out, "{:#010x}", form.form.jhash2(words, form.initval))?
        }
        HashFunction::Jhash { form, input } => {
            // clap lets exactly one of the two through.
            let bytes = match (&input.hex, &input.text) {
                (Some(HexBytes(bytes)), _) => bytes.as_slice(),
                (None, text) => text.as_deref().unwrap_or_default().as_bytes(),
            };
            writeln!(out, "{:#010x}", form.form.jhash(bytes, form.initval))?
        }
        HashFunction::Futex(args) => {
            let placement = place_futex(args)?;
            if args.json {
                serde_json::to_writer_pretty(&mut *out, &placement)
                    .map_err(std::io::Error::from)?;
                writeln!(out)?;
            } else {
                write_placement(&placement, out)?;
            }
        }
    }
    Ok(())
}

/// Coherence line size the field report uses.
const LINE_SIZE: u64 = 64;

/// Where one field of the bucket lies. Addresses are hex strings: they do
/// not fit the 53 bits a JSON number keeps in most readers.
#[derive(Serialize)]
struct FieldPlace {
    name: &'static str,
    size: u32,
    address: String,
    line: String,
    offset_in_line: u64,
    /// Lines the field covers (2 when it straddles a line boundary).
    lines: u64,
}

#[derive(Serialize)]
struct FutexPlacement {
    design: String,
    era: String,
    kind: KeyKind,
    /// The key's pointer word: mm, or inode sequence number.
    ptr: String,
    /// Page-aligned address, or page index.
    word: String,
    offset: u32,
    form: HashForm,
    words: Vec<u32>,
    initval: u32,
    hash: u32,
    private_hash: bool,
    slots: u64,
    node: u32,
    bucket: u32,
    bucket_address: String,
    bucket_size: u32,
    line_size: u64,
    fields: Vec<FieldPlace>,
}

fn place_futex(args: &FutexArgs) -> Result<FutexPlacement, CliError> {
    let input = |e: String| CliError::Input(e);
    let threads = args.threads.map_or(args.cpus, u64::from);
    let platform = Platform {
        cpus: args.cpus,
        possible_cpus: args.cpus,
        nodes: args.nodes,
        line_size: LINE_SIZE,
        page_size: args.page_size,
    };
    platform.validate().map_err(|e| input(e.to_string()))?;
    if !(1..=u64::from(MAX_ANALYSIS_TASKS)).contains(&threads) {
        return Err(input(format!(
            "threads = {threads}: must be from 1 to {MAX_ANALYSIS_TASKS}"
        )));
    }
    let mut design =
        preset(&args.table).ok_or_else(|| input(format!("no table preset '{}'", args.table)))?;
    design.word_size = match args.bits {
        Bits::Bits64 => WordSize::Bits64,
        Bits::Bits32 => WordSize::Bits32,
    };
    let source = match (args.shared_anon, args.shared_file) {
        (true, _) => KeySource::SharedAnon { mm: args.mm },
        (_, true) => KeySource::SharedFile {
            inode: args.inode_seq.unwrap_or_default(),
            pgoff: args.pgoff.unwrap_or_default(),
        },
        _ => KeySource::Private { mm: args.mm },
    };
    let key = get_futex_key(args.uaddr, source, design.word_size, args.page_size)
        .map_err(|e| input(e.to_string()))?;
    let vars = SizingVars::new(&platform, threads, 1, 1);
    let mut memory = MemoryMap::new(LINE_SIZE);
    let process = ProcessInfo::new(threads, 0);
    let tables = FutexHash::build(&design, vars, &[process], args.nodes, &mut memory)
        .map_err(|e| input(e.to_string()))?;
    let numa = match args.numa_node {
        None => None,
        Some(-1) => Some(FutexNode::NoNode),
        Some(n) if (0..i64::from(args.nodes)).contains(&n) => Some(FutexNode::Node(n as u32)),
        Some(n) => {
            return Err(input(format!(
                "--numa-node {n}: must be -1 (FUTEX_NO_NODE) or a node below --nodes {} (the kernel returns EINVAL)",
                args.nodes
            )))
        }
    };
    if numa.is_some() && design.placement != Placement::PerNode {
        return Err(input(format!(
            "table '{}' has no FUTEX2_NUMA: it came with the per-node table (v6.16 on)",
            design.name
        )));
    }
    let node_of_word = numa.map(|n| match n {
        FutexNode::NoNode => 0,
        FutexNode::Node(n) => n,
    });
    let (hashed_words, private_hash) = match node_of_word {
        Some(_) => (tables.global_input(&key), false),
        None => tables.hash_input(&key, 0),
    };
    let hashed = tables.futex_hash_on(&key, 0, node_of_word);
    let node = match hashed.bucket.table {
        TableSel::Global(node) => node,
        TableSel::Private(_) | TableSel::Outgrown { .. } => process.node,
    };
    let fields = design
        .bucket
        .fields
        .iter()
        .map(|f| {
            let address = tables
                .field_addr(hashed.bucket, f.name)
                .expect("the field is the design's");
            let last = address + u64::from(f.size) - 1;
            FieldPlace {
                name: f.name.as_str(),
                size: f.size,
                address: format!("{address:#x}"),
                line: format!("{:#x}", address - address % LINE_SIZE),
                offset_in_line: address % LINE_SIZE,
                lines: last / LINE_SIZE - address / LINE_SIZE + 1,
            }
        })
        .collect();
    Ok(FutexPlacement {
        design: design.name.clone(),
        era: design.era.clone(),
        kind: numa.map_or(source.kind(), KeyKind::PrivateNuma),
        ptr: format!("{:#x}", key.ptr),
        word: format!("{:#x}", key.word),
        offset: key.offset,
        form: design.hash,
        words: hashed_words.words().to_vec(),
        initval: hashed_words.initval,
        hash: hashed.hash,
        private_hash,
        slots: tables.instance(hashed.bucket.table).slots,
        node,
        bucket: hashed.bucket.index,
        bucket_address: format!("{:#x}", tables.bucket_addr(hashed.bucket)),
        bucket_size: design.bucket.size,
        line_size: LINE_SIZE,
        fields,
    })
}

fn write_placement(p: &FutexPlacement, out: &mut dyn Write) -> std::io::Result<()> {
    let kind = match p.kind {
        KeyKind::Private => "private",
        KeyKind::SharedAnon => "shared, anonymous page",
        KeyKind::SharedFile => "shared, file page",
        KeyKind::PrivateNuma(_) => "private, FUTEX2_NUMA",
    };
    let words: Vec<String> = p.words.iter().map(|w| format!("{w:#010x}")).collect();
    let table = if p.private_hash {
        "the process's private hash"
    } else {
        "the global hash"
    };
    writeln!(out, "design   {}", title(&p.design, &p.era))?;
    writeln!(
        out,
        "key      {kind}: ptr {}, word {}, offset {:#x}",
        p.ptr, p.word, p.offset
    )?;
    writeln!(out, "words    {} ({} jhash2)", words.join(" "), p.form)?;
    writeln!(out, "initval  {:#010x}", p.initval)?;
    writeln!(out, "hash     {:#010x}", p.hash)?;
    writeln!(out, "table    {table}, node {}, {} slots", p.node, p.slots)?;
    writeln!(
        out,
        "bucket   {} at {} ({}-byte buckets, {}-byte lines)",
        p.bucket, p.bucket_address, p.bucket_size, p.line_size
    )?;
    writeln!(out)?;
    writeln!(out, "| field | size | address | line | offset in line |")?;
    writeln!(out, "|---|---:|---|---|---:|")?;
    for f in &p.fields {
        let straddles = if f.lines > 1 {
            format!(" (spans {} lines)", f.lines)
        } else {
            String::new()
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {}{straddles} |",
            f.name, f.size, f.address, f.line, f.offset_in_line
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_bytes() {
        assert_eq!(parse_hex_bytes("0x4142").unwrap().0, b"AB");
        assert_eq!(parse_hex_bytes("").unwrap().0, b"");
        assert_eq!(
            parse_hex_bytes("414").unwrap_err(),
            HexError::OddDigits("414".into())
        );
        assert_eq!(
            parse_hex_bytes("4g").unwrap_err(),
            HexError::NotHex("4g".into())
        );
        assert_eq!(
            parse_hex_bytes("é1").unwrap_err(),
            HexError::OddDigits("é1".into())
        );
        assert_eq!(
            parse_hex_bytes("éé").unwrap_err(),
            HexError::NotHex("éé".into())
        );
    }
}
