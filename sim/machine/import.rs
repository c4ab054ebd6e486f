//! Measurements users already have, read into a machine profile: the CSV
//! matrix of nviennot/core-to-core-latency (`--csv`) and the output of Intel
//! MLC (`--c2c_latency`, `--latency_matrix`, or a plain run that holds both).
//!
//! Each file sets the fields it measures; the rest come from a base profile,
//! and the profile's source says which is which. A line that does not read
//! as the tool writes it is an error at its line and column.
//!
//! core-to-core-latency prints the mean one-way latency of CPU i and CPU j,
//! in ns, at row i and column j for i > j, and leaves the other cells empty;
//! its CPUs are the kernel's CPU ids in order. The matrix gives the latency
//! of each distance; the topology it is read against (sockets, nodes, SMT
//! threads) is what lscpu says, given by the user, and the last-level cache
//! groups are found in it: cores of a node that are markedly closer to
//! each other than to the rest of the node.

use super::{MachineSpec, RemoteSpec, TopologySpec};
use crate::echo::echo;
use std::fmt;

/// A mistake in an input file, at its 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ImportError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

fn at(line: usize, column: usize, message: impl Into<String>) -> ImportError {
    ImportError {
        line,
        column,
        message: message.into(),
    }
}

/// The topology the user gives beside a core-to-core matrix: what lscpu
/// says and a latency matrix cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub sockets: u32,
    pub nodes_per_socket: u32,
    pub threads_per_core: u32,
}

/// One input file, read.
#[derive(Clone, Debug, PartialEq)]
pub enum Measurement {
    /// A core-to-core-latency matrix, made symmetric: `ns[i * cpus + j]`.
    CoreToCore { cpus: usize, ns: Vec<f64> },
    /// An MLC output: the sections it holds.
    Mlc {
        c2c: Option<MlcC2c>,
        idle: Option<Vec<Vec<f64>>>,
    },
}

/// MLC's `--c2c_latency`: within a socket, and between nodes (or sockets)
/// with the line homed in the writer's and in the reader's.
#[derive(Clone, Debug, PartialEq)]
pub struct MlcC2c {
    pub local_hit: f64,
    pub local_hitm: f64,
    pub remote_writer_homed: Option<Vec<Vec<Option<f64>>>>,
    pub remote_reader_homed: Option<Vec<Vec<Option<f64>>>>,
}

/// Which tool wrote a file, told by its text: MLC says its name and its
/// sections; anything else is read as a core-to-core CSV.
pub fn read(text: &str) -> Result<Measurement, ImportError> {
    let is_mlc = text.contains("Memory Latency Checker")
        || text.contains("Measuring cache-to-cache")
        || text.contains("Measuring idle latencies");
    if is_mlc {
        read_mlc(text)
    } else {
        read_csv(text)
    }
}

fn read_csv(text: &str) -> Result<Measurement, ImportError> {
    let rows: Vec<(usize, Vec<Option<f64>>)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let mut column = 1;
            let cells = line
                .split(',')
                .map(|cell| {
                    let here = column;
                    column += cell.len() + 1;
                    let trimmed = cell.trim();
                    if trimmed.is_empty() {
                        return Ok(None);
                    }
                    match trimmed.parse::<f64>() {
                        Ok(ns) if ns.is_finite() && ns > 0.0 => Ok(Some(ns)),
                        _ => Err(at(
                            i + 1,
                            here,
                            format!(
                                "'{}': expected a latency in ns (a positive number) or an \
                                 empty cell, as core-to-core-latency --csv writes",
                                echo(trimmed)
                            ),
                        )),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((i + 1, cells))
        })
        .collect::<Result<_, _>>()?;
    let cpus = rows.len();
    if cpus < 2 {
        return Err(at(
            rows.first().map_or(1, |r| r.0),
            1,
            "expected a core-to-core-latency matrix of at least 2 CPUs (one row per CPU)",
        ));
    }
    if let Some((line, cells)) = rows.iter().find(|(_, cells)| cells.len() != cpus) {
        return Err(at(
            *line,
            1,
            format!(
                "{} cells: expected {cpus}, one per CPU, as the file has {cpus} rows",
                cells.len()
            ),
        ));
    }
    let mut ns = vec![0.0; cpus * cpus];
    for i in 0..cpus {
        for j in 0..i {
            let measured: Vec<f64> = [rows[i].1[j], rows[j].1[i]].into_iter().flatten().collect();
            if measured.is_empty() {
                return Err(at(
                    rows[i].0,
                    1,
                    format!("CPUs {i} and {j}: expected a latency at row {i}, column {j}"),
                ));
            }
            let mean = measured.iter().sum::<f64>() / measured.len() as f64;
            ns[i * cpus + j] = mean;
            ns[j * cpus + i] = mean;
        }
    }
    Ok(Measurement::CoreToCore { cpus, ns })
}

/// A latency as the tools print it: a finite number of ns above 0. A
/// zero or a negative figure is no measurement (a failed run, a column
/// read as another), and would give a machine whose every step is free.
fn latency(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|ns| ns.is_finite() && *ns > 0.0)
}

/// The words of `line` with the 1-based column (in characters) each starts at.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (column, (byte, c)) in line.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((column + 1, byte)),
            (true, Some((col, from))) => {
                out.push((col, &line[from..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((col, from)) = start {
        out.push((col, &line[from..]));
    }
    out
}

/// The number at the end of `line` after `label`.
fn labelled(lines: &[&str], label: &str) -> Result<Option<f64>, ImportError> {
    let Some((i, line)) = lines.iter().enumerate().find(|(_, l)| l.contains(label)) else {
        return Ok(None);
    };
    let (column, value) = words(line).last().copied().unwrap_or((1, ""));
    latency(value).map(Some).ok_or_else(|| {
        at(
            i + 1,
            column,
            format!(
                "'{}': expected a latency in ns above 0 after '{label}'",
                echo(value)
            ),
        )
    })
}

/// An MLC node matrix: after the line at `title`, a line naming the
/// columns' kind, a header of node numbers, then one row per node of its
/// number and a value (`-` where MLC measures nothing) per column.
fn mlc_matrix(lines: &[&str], title: usize) -> Result<Vec<Vec<Option<f64>>>, ImportError> {
    let header = (title + 1..lines.len())
        .find(|&i| {
            let tokens: Vec<&str> = lines[i].split_whitespace().collect();
            tokens.len() > 2
                && tokens
                    .iter()
                    .rev()
                    .take(1)
                    .all(|t| t.parse::<u32>().is_ok())
        })
        .filter(|&i| i <= title + 3)
        .ok_or_else(|| {
            at(
                title + 2,
                1,
                "expected a matrix header (`Numa node  0  1 ...`) after this line",
            )
        })?;
    let columns: Vec<&str> = lines[header]
        .split_whitespace()
        .rev()
        .take_while(|t| t.parse::<u32>().is_ok())
        .collect();
    let nodes = columns.len();
    let mut rows = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(header + 1) {
        let placed = words(line);
        let tokens: Vec<&str> = placed.iter().map(|(_, t)| *t).collect();
        if tokens.first().and_then(|t| t.parse::<u32>().ok()) != Some(rows.len() as u32) {
            break;
        }
        if tokens.len() != nodes + 1 {
            return Err(at(
                i + 1,
                1,
                format!(
                    "{} values: expected {nodes}, one per node of the header",
                    tokens.len() - 1
                ),
            ));
        }
        let row = placed[1..]
            .iter()
            .map(|&(column, t)| match t {
                "-" => Ok(None),
                t => latency(t).map(Some).ok_or_else(|| {
                    at(
                        i + 1,
                        column,
                        format!("'{}': expected a latency in ns above 0, or '-'", echo(t)),
                    )
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(row);
    }
    if rows.len() != nodes {
        return Err(at(
            header + 2 + rows.len(),
            1,
            format!(
                "{} rows: expected {nodes}, one per node of the header (a memory-only node \
                 has no row, and futexsim models only nodes with CPUs)",
                rows.len()
            ),
        ));
    }
    Ok(rows)
}

fn read_mlc(text: &str) -> Result<Measurement, ImportError> {
    let lines: Vec<&str> = text.lines().collect();
    let find = |needle: &str| lines.iter().position(|l| l.contains(needle));
    let idle = match find("Measuring idle latencies") {
        None => None,
        Some(title) => {
            let rows = mlc_matrix(&lines, title)?;
            let full = rows
                .into_iter()
                .enumerate()
                .map(|(i, row)| {
                    row.into_iter()
                        .collect::<Option<Vec<f64>>>()
                        .ok_or_else(|| at(title + 4 + i, 1, "expected a latency for every node"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(full)
        }
    };
    let c2c = match find("Measuring cache-to-cache") {
        None => None,
        Some(title) => {
            let after = &lines[title..];
            let shift = |e: ImportError| ImportError {
                line: e.line + title,
                ..e
            };
            let missing = |what: &str| {
                at(
                    title + 1,
                    1,
                    format!("expected a '{what}' line after 'Measuring cache-to-cache'"),
                )
            };
            let local_hit = labelled(after, "Local Socket L2->L2 HIT ")
                .map_err(shift)?
                .ok_or_else(|| missing("Local Socket L2->L2 HIT  latency"))?;
            let local_hitm = labelled(after, "Local Socket L2->L2 HITM")
                .map_err(shift)?
                .ok_or_else(|| missing("Local Socket L2->L2 HITM latency"))?;
            let remote = |homed: &str| -> Result<_, ImportError> {
                match find(homed) {
                    None => Ok(None),
                    Some(t) => mlc_matrix(&lines, t).map(Some),
                }
            };
            Some(MlcC2c {
                local_hit,
                local_hitm,
                remote_writer_homed: remote("homed in writer socket")?,
                remote_reader_homed: remote("homed in reader socket")?,
            })
        }
    };
    if c2c.is_none() && idle.is_none() {
        return Err(at(
            1,
            1,
            "an MLC output without its results: expected the output of mlc --c2c_latency, \
             mlc --latency_matrix, or a plain mlc run",
        ));
    }
    Ok(Measurement::Mlc { c2c, idle })
}

/// An input's figures do not fit the machine they are read against.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MismatchError(String);

/// What each input set, for the profile's source.
struct Provenance(Vec<String>);

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// Lays `measurement` (read from `file`) over `spec`: the fields it
/// measures replaced, and a line on where they came from.
pub fn apply(
    spec: &mut MachineSpec,
    measurement: &Measurement,
    file: &str,
    shape: Shape,
) -> Result<String, MismatchError> {
    match measurement {
        Measurement::CoreToCore { cpus, ns } => apply_matrix(spec, *cpus, ns, file, shape),
        Measurement::Mlc { c2c, idle } => {
            let mut said = Provenance(Vec::new());
            let nodes = spec.topology.sockets * spec.topology.nodes_per_socket;
            let fits = |n: usize, what: &str| {
                if n == nodes as usize {
                    Ok(())
                } else {
                    Err(MismatchError(format!(
                        "{file}: the {what} has {n} nodes, the machine {nodes} \
                         ({} sockets x {} nodes); import a core-to-core matrix first or \
                         give --base a profile of {n} nodes",
                        spec.topology.sockets, spec.topology.nodes_per_socket
                    )))
                }
            };
            if let Some(c2c) = c2c {
                spec.latency.llc = c2c.local_hitm;
                spec.latency.node = c2c.local_hitm;
                let mut line = format!(
                    "{file} (MLC --c2c_latency): local L2->L2 HITM {} ns (HIT {}) sets llc and node",
                    c2c.local_hitm, c2c.local_hit
                );
                let homed: Vec<&Vec<Vec<Option<f64>>>> =
                    [&c2c.remote_writer_homed, &c2c.remote_reader_homed]
                        .into_iter()
                        .flatten()
                        .collect();
                if let Some(first) = homed.first() {
                    fits(first.len(), "remote HITM matrix")?;
                    if homed.iter().any(|m| m.len() != first.len()) {
                        return Err(MismatchError(format!(
                            "{file}: the two remote HITM matrices differ in size"
                        )));
                    }
                    // A line that bounces between two sockets is homed on one
                    // of them: half its transfers find it homed at the writer,
                    // half at the reader.
                    let n = first.len();
                    let matrix = (0..n)
                        .map(|w| {
                            (0..n)
                                .map(|r| {
                                    let values: Vec<f64> =
                                        homed.iter().filter_map(|m| m[w][r]).collect();
                                    if w == r || values.is_empty() {
                                        // MLC measures no pair within a socket here.
                                        if w == r {
                                            0.0
                                        } else {
                                            c2c.local_hitm
                                        }
                                    } else {
                                        tenth(values.iter().sum::<f64>() / values.len() as f64)
                                    }
                                })
                                .collect()
                        })
                        .collect();
                    spec.latency.remote = RemoteSpec::Matrix(matrix);
                    line.push_str(if homed.len() == 2 {
                        "; remote L2->L2 HITM, the mean of the writer-homed and reader-homed \
                         matrices, sets remote"
                    } else {
                        "; the remote L2->L2 HITM matrix sets remote"
                    });
                }
                said.0.push(line);
            }
            if let Some(idle) = idle {
                fits(idle.len(), "idle latency matrix")?;
                let n = idle.len();
                spec.latency.dram_local = tenth((0..n).map(|i| idle[i][i]).sum::<f64>() / n as f64);
                spec.latency.dram_remote = Some(RemoteSpec::Matrix(idle.clone()));
                said.0.push(format!(
                    "{file} (MLC --latency_matrix): idle latency {:.1} ns local (the mean of the \
                     diagonal) and the node matrix set dram_local and dram_remote",
                    spec.latency.dram_local
                ));
            }
            Ok(said.to_string())
        }
    }
}

/// Figures in an order no machine has, though a machine could have each:
/// one warning each, for the user to check the import against lscpu.
/// `siblings_from_a_matrix`: the SMT figure was read from a core-to-core
/// matrix, whose CPU numbering decides which CPUs are siblings.
pub fn implausible(spec: &MachineSpec, siblings_from_a_matrix: bool) -> Vec<String> {
    let l = &spec.latency;
    let mut said = Vec::new();
    if spec.topology.threads_per_core > 1 && l.smt > l.llc {
        let mut line = format!(
            "SMT siblings ({} ns) come out slower than cores sharing a last-level cache \
             ({} ns), though siblings share every cache",
            l.smt, l.llc
        );
        if siblings_from_a_matrix {
            line.push_str(
                "; the matrix may number each core's threads side by side (CPUs 0 and 1 on \
                 one core), while --threads-per-core reads siblings as Linux numbers them: \
                 a thread of every core first, then the siblings (CPU c and c + cores; \
                 lscpu -e shows the numbering)",
            );
        }
        said.push(line);
    }
    if let Some(nearest) = l
        .remote
        .between_nodes()
        .into_iter()
        .min_by(f64::total_cmp)
        .filter(|&r| r < l.node)
    {
        said.push(format!(
            "cores of two nodes ({nearest} ns) come out closer than cores of one node ({} ns); \
             check --sockets and --nodes-per-socket against lscpu",
            l.node
        ));
    }
    said
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

/// Rounded to 0.1 ns, the precision the tools print.
fn tenth(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

/// Two latencies this far apart (consecutive in sorted order) separate
/// levels of the hierarchy: cores within a cache and across it differ by
/// 3-5x on the machines measured, noise within a level by a few percent.
const LEVEL_GAP: f64 = 1.25;

/// The cores per last-level cache within a node: the finest grouping of
/// the node's cores, contiguous and of equal size, that a gap in the
/// latencies separates; the whole node when none does.
fn cores_per_llc(
    core_ns: impl Fn(usize, usize) -> f64,
    cores_per_node: usize,
    nodes: usize,
) -> usize {
    let mut within: Vec<f64> = (0..nodes)
        .flat_map(|n| {
            let base = n * cores_per_node;
            (0..cores_per_node).flat_map(move |a| (0..a).map(move |b| (base + a, base + b)))
        })
        .map(|(a, b)| core_ns(a, b))
        .collect();
    within.sort_by(f64::total_cmp);
    for pair in within.windows(2) {
        if pair[1] < pair[0] * LEVEL_GAP {
            continue;
        }
        let threshold = (pair[0] * pair[1]).sqrt();
        // Contiguous groups of `size` cores, every pair in a group below the
        // threshold and every pair across groups of one node above it.
        let fits = |size: usize| {
            (0..nodes * cores_per_node).all(|a| {
                let node = a / cores_per_node;
                (node * cores_per_node..a)
                    .all(|b| (a / size == b / size) == (core_ns(a, b) < threshold))
            })
        };
        if let Some(size) = (1..cores_per_node)
            .filter(|s| cores_per_node.is_multiple_of(*s))
            .find(|&s| fits(s))
        {
            return size;
        }
    }
    cores_per_node
}

fn apply_matrix(
    spec: &mut MachineSpec,
    cpus: usize,
    ns: &[f64],
    file: &str,
    shape: Shape,
) -> Result<String, MismatchError> {
    let Shape {
        sockets,
        nodes_per_socket,
        threads_per_core,
    } = shape;
    let per_core = threads_per_core as usize;
    let nodes = (sockets * nodes_per_socket) as usize;
    if sockets == 0
        || nodes_per_socket == 0
        || threads_per_core == 0
        || !cpus.is_multiple_of(nodes * per_core)
    {
        return Err(MismatchError(format!(
            "{file}: {cpus} CPUs do not divide into {sockets} sockets x {nodes_per_socket} nodes \
             x {threads_per_core} threads per core (give --sockets, --nodes-per-socket and \
             --threads-per-core as lscpu says)"
        )));
    }
    let cores = cpus / per_core;
    let cores_per_socket = cores / sockets as usize;
    let cores_per_node = cores_per_socket / nodes_per_socket as usize;
    // Linux numbers one thread of every core first, then the siblings.
    let core = |cpu: usize| cpu % cores;
    let node = |cpu: usize| core(cpu) / cores_per_node;
    let d = |a: usize, b: usize| ns[a * cpus + b];
    let llc_size = cores_per_llc(d, cores_per_node, nodes);
    let llc = |cpu: usize| core(cpu) / llc_size;
    let pairs = || (0..cpus).flat_map(|a| (0..a).map(move |b| (a, b)));
    let class = |keep: &dyn Fn(usize, usize) -> bool| {
        let mut v: Vec<f64> = pairs()
            .filter(|&(a, b)| keep(a, b))
            .map(|(a, b)| d(a, b))
            .collect();
        median(&mut v).map(tenth)
    };
    let smt = class(&|a, b| core(a) == core(b));
    let in_llc = class(&|a, b| core(a) != core(b) && llc(a) == llc(b));
    let in_node = class(&|a, b| llc(a) != llc(b) && node(a) == node(b));
    let remote: Vec<Vec<f64>> = (0..nodes)
        .map(|x| {
            (0..nodes)
                .map(|y| {
                    if x == y {
                        0.0
                    } else {
                        class(&|a, b| (node(a), node(b)) == (x, y) || (node(a), node(b)) == (y, x))
                            .unwrap_or(0.0)
                    }
                })
                .collect()
        })
        .collect();
    let base_smt = spec.latency.smt;
    spec.topology = TopologySpec {
        sockets,
        nodes_per_socket,
        cores_per_socket: cores_per_socket as u32,
        threads_per_core,
        cores_per_llc: llc_size as u32,
        sockets_per_board: None,
        numa_fake: 1,
        possible_cpus: None,
        nr_cpus: None,
        page_size: spec.topology.page_size,
    };
    spec.latency.smt = smt.unwrap_or(base_smt);
    // A one-core cache has no pair within it: the node's figure serves.
    spec.latency.llc = in_llc.or(in_node).unwrap_or(spec.latency.llc);
    spec.latency.node = in_node.unwrap_or(spec.latency.llc);
    spec.latency.remote = RemoteSpec::Matrix(remote);
    if spec
        .latency
        .dram_remote
        .as_ref()
        .is_some_and(|m| !matches!(m, RemoteSpec::Matrix(rows) if rows.len() == nodes))
    {
        spec.latency.dram_remote = None;
    }
    spec.latency.board = None;
    Ok(format!(
        "{file} (core-to-core-latency, {cpus} CPUs read as {sockets} sockets x {cores_per_socket} \
         cores x {threads_per_core} threads, nodes_per_socket = {nodes_per_socket}): medians per \
         distance set smt {}, llc {} ({llc_size} cores per cache, found in the matrix), node {}, \
         and the node-to-node remote matrix",
        smt.map_or(format!("(no siblings: {base_smt} from the base)"), |v| v
            .to_string()),
        spec.latency.llc,
        spec.latency.node,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix as core-to-core-latency writes it: row i holds columns j < i.
    fn csv(cpus: usize, ns: impl Fn(usize, usize) -> f64) -> String {
        (0..cpus)
            .map(|i| {
                (0..cpus)
                    .map(|j| {
                        if j < i {
                            ns(i, j).to_string()
                        } else {
                            String::new()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
                    + "\n"
            })
            .collect()
    }

    #[test]
    fn a_lower_triangle_reads_as_a_symmetric_matrix() {
        let text = csv(3, |i, j| (10 * i + j) as f64);
        let Measurement::CoreToCore { cpus, ns } = read(&text).unwrap() else {
            panic!("a CSV")
        };
        assert_eq!(cpus, 3);
        assert_eq!((ns[3], ns[1], ns[7], ns[5]), (10.0, 10.0, 21.0, 21.0));
    }

    #[test]
    fn a_cell_that_is_not_a_latency_is_placed() {
        let text = ",,\n12.5,,\n13.0,x1,\n";
        assert_eq!(read(text).unwrap_err().line, 3);
        assert_eq!(read(text).unwrap_err().column, 6);
        assert!(read(",,\n12.5,\n")
            .unwrap_err()
            .message
            .contains("expected 2"));
    }

    #[test]
    fn caches_are_found_where_the_latencies_jump() {
        // Two nodes of 8 cores, caches of 4: 20 ns within, 90 across, 200 between nodes.
        let ns = |a: usize, b: usize| {
            if a / 8 != b / 8 {
                200.0
            } else if a / 4 == b / 4 {
                20.0 + (a + b) as f64 * 0.1
            } else {
                90.0
            }
        };
        assert_eq!(cores_per_llc(ns, 8, 2), 4);
        assert_eq!(cores_per_llc(|_, _| 45.0, 8, 2), 8);
    }
}
