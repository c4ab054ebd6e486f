//! `futexsim design from-btf`: the bucket layout of a kernel someone built
//! (or the running one), read from its BTF, written as a `[[table]]` a
//! config takes, so that a layout patch can be simulated on machines its
//! author does not have.

use crate::cli::{check_signed_toml_out, write_signed_toml, CliError};
use clap::{Args, Subcommand};
use futexsim::config::Config;
use futexsim::echo::echo;
use futexsim::files::TOML_SIGNATURE;
use futexsim::kernel::btf::{
    self, BtfDesign, KernelLayout, StructLayout, PRIVATE_HASH_STRUCT, QUEUES_MEMBER,
};
use std::io::Write;
use std::path::PathBuf;

/// Where the running kernel publishes its BTF.
const RUNNING_KERNEL_BTF: &str = "/sys/kernel/btf/vmlinux";

/// The cache line the kernel aligns a bucket to (`____cacheline_aligned_in_smp`
/// on x86-64 and arm64).
const CACHE_LINE: u32 = 64;

#[derive(Args, Debug)]
pub struct DesignArgs {
    #[command(subcommand)]
    command: DesignCommand,
}

#[derive(Subcommand, Debug)]
enum DesignCommand {
    /// Read `struct futex_hash_bucket` and `struct futex_private_hash` from a
    /// kernel's BTF and write the `[[table]]` they make.
    FromBtf(FromBtfArgs),
}

#[derive(Args, Debug)]
struct FromBtfArgs {
    /// A vmlinux with a .BTF section, or a raw BTF file; the running
    /// kernel's /sys/kernel/btf/vmlinux when left out.
    vmlinux: Option<PathBuf>,
    /// The design's name: `linux-RELEASE` for the running kernel, the
    /// file's name for a file.
    #[arg(long)]
    name: Option<String>,
    /// Write the design to this file instead of printing it.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: &DesignArgs, out: &mut impl Write) -> Result<(), CliError> {
    let DesignCommand::FromBtf(args) = &args.command;
    if let Some(path) = &args.out {
        check_signed_toml_out(path)?;
    }
    let (path, kernel) = match &args.vmlinux {
        Some(path) => (path.clone(), None),
        None => (
            PathBuf::from(RUNNING_KERNEL_BTF),
            Some(futexsim::host::kernel_release()),
        ),
    };
    let file = path.display().to_string();
    let bytes = futexsim::files::read(&path, futexsim::limits::KERNEL_IMAGE_CAP).map_err(|e| {
        let hint = if kernel.is_some() && e.is_not_found() {
            "; the running kernel has no BTF (CONFIG_DEBUG_INFO_BTF): name a vmlinux"
        } else {
            ""
        };
        CliError::Input(format!("{file}: cannot read it: {}{hint}", e.reason()))
    })?;
    let located = |e: btf::BtfError| CliError::Input(format!("{file}: {e}"));
    let layout = btf::read_kernel_layout(&bytes).map_err(located)?;
    let design = layout.design().map_err(located)?;
    let (origin, default_name) = match &kernel {
        Some(Some(release)) => (
            format!("Linux {} ({file})", echo(release)),
            format!("linux-{release}"),
        ),
        Some(None) => ("the running kernel".to_string(), "running-kernel".into()),
        None => (
            file.clone(),
            path.file_name()
                .map_or("from-btf".into(), |n| n.to_string_lossy().into_owned()),
        ),
    };
    let name = args.name.clone().unwrap_or(default_name);
    let entry = table_entry(&design, &layout, &name, &origin);
    // What is written must load as a config's table: a design that would
    // not is refused here, never left behind. A config needs a machine;
    // which one does not matter to a table.
    let config = format!("[machine]\npreset = \"icx-2s\"\n\n{entry}");
    Config::parse("design", "design", &config, &[]).map_err(|e| {
        CliError::Input(format!(
            "the design read from {file} does not load as a [[table]] (a name it cannot take is changed with --name): {e}"
        ))
    })?;
    match &args.out {
        None => write!(out, "{entry}")?,
        Some(path) => {
            write_signed_toml(path, &TOML_SIGNATURE.sign(&entry))?;
            writeln!(
                out,
                "{}: preset {}, a {}-byte bucket{}",
                echo(&name),
                design.era.preset,
                design.bucket.size,
                design.header_bytes.map_or(String::new(), |h| format!(
                    ", a {h}-byte private hash header"
                ))
            )?;
            writeln!(out, "design: {}", path.display())?;
        }
    }
    Ok(())
}

/// The `[[table]]` as a config writes it, under comments that name the
/// kernel, each member's C declaration and the field it became, and why
/// the preset was chosen.
fn table_entry(design: &BtfDesign, layout: &KernelLayout, name: &str, origin: &str) -> String {
    let mut text = String::new();
    let mut line = |s: String| {
        text.push_str(&s);
        text.push('\n');
    };
    line(format!(
        "# The futex hash of {origin}, as its BTF lays it out: futexsim design from-btf."
    ));
    line("# A [[table]] for a config (docs/config.md).".into());
    describe_struct(&mut line, &layout.bucket, "");
    for member in &layout.bucket.members {
        let became = if design.unmodelled.contains(member) {
            "not modelled (its bytes stay in the bucket's size; nothing reads or writes them)"
                .to_string()
        } else {
            format!("field `{}`", member.name)
        };
        line(format!(
            "#   {}: offset {}, {} -> {became}",
            echo(&member.declaration()),
            member.offset,
            bytes(member.size)
        ));
    }
    match (&layout.private_hash, design.header_bytes) {
        (Some(fph), Some(header)) => {
            describe_struct(
                &mut line,
                fph,
                &format!("; {header} bytes before {QUEUES_MEMBER}[] (header_bytes)"),
            );
            for member in &fph.members {
                line(format!(
                    "#   {}: offset {}, {}",
                    echo(&member.declaration()),
                    member.offset,
                    bytes(member.size)
                ));
            }
        }
        _ => line(format!(
            "# No struct {PRIVATE_HASH_STRUCT}: this kernel has no private hash; the preset's stays as it is."
        )),
    }
    line(format!(
        "# preset \"{}\": {}.",
        design.era.preset, design.era.reason
    ));
    line("[[table]]".into());
    line(format!("preset = \"{}\"", design.era.preset));
    line(format!("name = {}", toml::Value::from(name)));
    line(format!(
        "bucket = {{ size = {}, fields = [",
        design.bucket.size
    ));
    for field in &design.bucket.fields {
        line(format!(
            "  {{ name = \"{}\", offset = {}, size = {} }},",
            field.name.as_str(),
            field.offset,
            field.size
        ));
    }
    line("] }".into());
    if let Some(header) = design.header_bytes {
        line(format!("private = {{ header_bytes = {header} }}"));
    }
    text
}

/// A struct's size and alignment, and the padding an alignment set on the
/// struct leaves (BTF records that alignment only as this padding).
fn describe_struct(line: &mut impl FnMut(String), layout: &StructLayout, more: &str) {
    let used = layout
        .members
        .iter()
        .map(|m| m.offset + m.size)
        .max()
        .unwrap_or(0)
        .next_multiple_of(layout.member_align);
    let padding = if layout.size > used && layout.size.is_multiple_of(CACHE_LINE) {
        format!(
            ", padded from {used} to a multiple of the {CACHE_LINE}-byte line (____cacheline_aligned_in_smp)"
        )
    } else {
        String::new()
    };
    line(format!(
        "# struct {}: {} bytes, its members aligned to {}{padding}{more}:",
        layout.name, layout.size, layout.member_align
    ));
}

fn bytes(n: u32) -> String {
    match n {
        1 => "1 byte".into(),
        n => format!("{n} bytes"),
    }
}
