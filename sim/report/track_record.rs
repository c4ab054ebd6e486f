//! The suite's track record, set beside a prediction: for a report's design,
//! the validation cases nearest to it (the same benchmark, the same kind of
//! table, a machine of the same class) and how far the model was from their
//! published figures. A prediction is worth what the model did on cases like
//! it.
//!
//! `futexsim validate` writes the record of every model case
//! (reports/validation/track-record.toml) and the binary embeds it, so a
//! report reads it without running the suite; a test checks the embedded
//! record against a fresh run of the suite, so a model change that moves a
//! case cannot leave it stale. The record's types live here, with the
//! report that reads them; sim/validate makes the record from its outcomes.

use super::summary::{figure, Cell};
use crate::record::RunRecord;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The record as `futexsim validate` last wrote it into the tree.
const EMBEDDED: &str = include_str!("../../reports/validation/track-record.toml");

/// Where `futexsim validate` writes the record, in its output directory.
pub const FILE_NAME: &str = "track-record.toml";

/// What a table is, as far as which cases are like it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// One global table (fixed or sized).
    Global,
    /// One global table per node (6.16 on).
    PerNode,
    /// A private hash per process beside a global table.
    Private,
}

/// The machine, by how many nodes its memory is spread over: what decides
/// how far a line travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MachineClass {
    OneNode,
    TwoNodes,
    MoreNodes,
}

/// What makes two runs alike for the track record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Likeness {
    pub benchmark: String,
    pub table: TableKind,
    pub machine: MachineClass,
}

impl Likeness {
    pub fn of(record: &RunRecord) -> Likeness {
        let table = if !record.table.private_hashes.is_empty() {
            TableKind::Private
        } else if record.table.instances > 1 {
            TableKind::PerNode
        } else {
            TableKind::Global
        };
        let machine = match record.nodes {
            0 | 1 => MachineClass::OneNode,
            2 => MachineClass::TwoNodes,
            _ => MachineClass::MoreNodes,
        };
        Likeness {
            benchmark: record.workload.benchmark().to_string(),
            table,
            machine,
        }
    }

    /// How alike two runs are: the benchmark counts most, then the table,
    /// then the machine; 0 when nothing is shared.
    fn score(&self, other: &Likeness) -> u32 {
        4 * u32::from(self.benchmark == other.benchmark)
            + 2 * u32::from(self.table == other.table)
            + u32::from(self.machine == other.machine)
    }

    /// What two runs share, as a reader reads it.
    pub fn shared(&self, other: &Likeness) -> String {
        let mut shared = Vec::new();
        if self.benchmark == other.benchmark {
            shared.push("benchmark");
        }
        if self.table == other.table {
            shared.push("table kind");
        }
        if self.machine == other.machine {
            shared.push("machine class");
        }
        shared.join(", ")
    }
}

/// One model case as the suite last judged it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseRecord {
    pub case: String,
    #[serde(flatten)]
    pub likeness: Likeness,
    /// The factor between predicted and published.
    pub error: f64,
    pub passed: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackRecord {
    #[serde(default)]
    pub case: Vec<CaseRecord>,
}

impl TrackRecord {
    /// The record compiled into this binary.
    pub fn embedded() -> Result<TrackRecord, toml::de::Error> {
        toml::from_str(EMBEDDED)
    }

    /// The record as `futexsim validate` writes it (unsigned).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        let body = toml::to_string(self)?;
        Ok(format!(
            "# The validation suite's model cases as `futexsim validate` last judged them: what\n\
             # each is like and the factor between its prediction and its published figure.\n\
             # futexsim embeds this file and sets the nearest cases beside a report's designs.\n\n\
             {body}"
        ))
    }

    /// Up to `n` cases nearest to `like`, nearest first (the suite's order
    /// among equals); none that shares nothing with it.
    pub fn nearest(&self, like: &Likeness, n: usize) -> Vec<&CaseRecord> {
        let mut scored: Vec<(u32, usize, &CaseRecord)> = self
            .case
            .iter()
            .enumerate()
            .map(|(i, c)| (like.score(&c.likeness), i, c))
            .filter(|(score, ..)| *score > 0)
            .collect();
        scored.sort_by_key(|&(score, i, _)| (std::cmp::Reverse(score), i));
        scored.into_iter().take(n).map(|(.., c)| c).collect()
    }
}

/// Cases shown per design.
const NEAREST: usize = 3;

pub fn section(md: &mut String, designs: &[String], cells: &[Cell]) {
    let _ = writeln!(md, "## Track record\n");
    let record = match TrackRecord::embedded() {
        Ok(record) => record,
        Err(e) => {
            let _ = writeln!(
                md,
                "The validation record compiled into futexsim does not read: {e}\n"
            );
            return;
        }
    };
    let _ = writeln!(
        md,
        "The validation cases most like each design's runs (the same benchmark first, then the \
         same kind of table, then a machine with as many nodes), and the factor between the \
         model's prediction and the published figure in each: a prediction here is worth what \
         the model did on cases like it (`futexsim validate`, reports/validation/report.md).\n"
    );
    let _ = writeln!(
        md,
        "| design | its runs | nearest validation cases: shared, error, verdict |\n|---|---|---|"
    );
    for design in designs {
        let Some(run) = cells
            .iter()
            .find(|c| c.design == design)
            .and_then(|c| c.runs.first())
        else {
            continue;
        };
        let like = Likeness::of(run);
        let nearest: Vec<String> = record
            .nearest(&like, NEAREST)
            .into_iter()
            .map(|c| {
                format!(
                    "{} ({}): {}x, {}",
                    c.case,
                    like.shared(&c.likeness),
                    figure(c.error),
                    if c.passed { "pass" } else { "**fail**" }
                )
            })
            .collect();
        let _ = writeln!(
            md,
            "| {design} | {} | {} |",
            describe(&like),
            if nearest.is_empty() {
                "none alike".to_string()
            } else {
                nearest.join("; ")
            }
        );
    }
    let _ = writeln!(md);
}

fn describe(like: &Likeness) -> String {
    let table = match like.table {
        TableKind::Global => "global table",
        TableKind::PerNode => "per-node tables",
        TableKind::Private => "private hashes",
    };
    let machine = match like.machine {
        MachineClass::OneNode => "one node",
        MachineClass::TwoNodes => "two nodes",
        MachineClass::MoreNodes => "more than two nodes",
    };
    format!("{}, {table}, {machine}", like.benchmark)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, benchmark: &str, table: TableKind, machine: MachineClass) -> CaseRecord {
        CaseRecord {
            case: name.into(),
            likeness: Likeness {
                benchmark: benchmark.into(),
                table,
                machine,
            },
            error: 1.5,
            passed: true,
        }
    }

    #[test]
    fn the_nearest_cases_share_the_benchmark_first_then_the_table_then_the_machine() {
        use MachineClass::*;
        use TableKind::*;
        let record = TrackRecord {
            case: vec![
                case(
                    "other bench, same table and machine",
                    "schbench",
                    Private,
                    TwoNodes,
                ),
                case(
                    "same bench, other table",
                    "perf bench futex hash",
                    Global,
                    TwoNodes,
                ),
                case("nothing shared", "time_exit", PerNode, MoreNodes),
                case(
                    "same bench and table",
                    "perf bench futex hash",
                    Private,
                    OneNode,
                ),
            ],
        };
        let like = Likeness {
            benchmark: "perf bench futex hash".into(),
            table: Private,
            machine: TwoNodes,
        };
        let names: Vec<&str> = record
            .nearest(&like, 5)
            .iter()
            .map(|c| c.case.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "same bench and table",
                "same bench, other table",
                "other bench, same table and machine"
            ]
        );
        assert_eq!(record.nearest(&like, 1).len(), 1);
    }

    #[test]
    fn the_record_reads_back_what_it_writes() {
        let record = TrackRecord {
            case: vec![case(
                "a",
                "perf bench futex hash",
                TableKind::PerNode,
                MachineClass::MoreNodes,
            )],
        };
        let text = record.to_toml().unwrap();
        assert_eq!(toml::from_str::<TrackRecord>(&text).unwrap(), record);
    }

    #[test]
    fn the_embedded_record_parses() {
        TrackRecord::embedded().unwrap();
    }
}
