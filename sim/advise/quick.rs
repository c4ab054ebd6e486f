//! A question asked on the command line: `futexsim advise --machine icx-2s
//! --workload perf-hash --at threads=32 --baseline private-6.17 --vary
//! private.slots --value 16 --value 64 --within-best 5`. The flags are
//! written out as the TOML question they stand for, which is then read as
//! any question file is: every check a question file gets, the flags get,
//! and an error is located in that text, which `futexsim advise` shows
//! beside it (and `--print-question` prints, to keep and edit).

use super::search::Order;
use crate::files::hash_hex;
use std::fmt;
use toml::{Table, Value};

/// What the flags say, each as the question file says it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuickQuestion {
    /// Shipped machine names or profile paths (`--machine`, repeatable).
    pub machines: Vec<String>,
    /// `NAME[,KEY=VALUE...]`: a workload and its options (`--workload`).
    pub workload: String,
    /// `KEY=VALUE[,KEY=VALUE...]`: the points (`--at`, repeatable).
    pub at: Vec<String>,
    /// The baseline's preset (`--baseline`).
    pub baseline: String,
    /// The family's base preset (`--base`): the baseline's when absent.
    pub base: Option<String>,
    /// The varied parameter's dotted path in a `[[table]]` (`--vary`).
    pub parameter: String,
    /// `[LABEL:]VALUE`: the family's values in order (`--value`,
    /// repeatable); a value without a label is labelled `NAME=VALUE`, NAME
    /// the parameter's last part (`slots=64`): a design's name must not
    /// read as a number.
    pub values: Vec<String>,
    pub order: Option<Order>,
    pub within_best_pct: Option<f64>,
    pub slower_than_baseline_pct: Option<f64>,
    pub max_bytes_per_process: Option<u64>,
    /// The figure compared (`--figure`); ops/s when absent.
    pub figure: Option<String>,
    pub duration_us: Option<u64>,
    pub warmup_us: Option<u64>,
    /// `[run] half_width_pct` (`--half-width-pct`): a run stops once its
    /// throughput's batch-means interval is this tight; the question's
    /// default (`question::DEFAULT_HALF_WIDTH_PCT`) when absent.
    pub half_width_pct: Option<f64>,
}

/// A flag whose text is not of the form it takes.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{flag} {text:?}: {expected}")]
pub struct FlagError {
    pub flag: &'static str,
    pub text: String,
    pub expected: &'static str,
}

/// A flag's value as TOML reads it (a number, a boolean), else as text:
/// `threads=32` is the number 32, `test=futex1` the string "futex1".
fn value_of(text: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::from(text))
}

/// `KEY=VALUE` pairs separated by commas, into a table in their order.
fn pairs(flag: &'static str, text: &str, into: &mut Table) -> Result<(), FlagError> {
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(FlagError {
                flag,
                text: text.into(),
                expected: "KEY=VALUE pairs separated by commas",
            });
        };
        into.insert(key.trim().into(), value_of(value.trim()));
    }
    Ok(())
}

impl QuickQuestion {
    /// The question file these flags stand for.
    pub fn to_toml(&self) -> Result<String, FlagError> {
        let mut doc = Table::new();
        doc.insert("question".into(), Value::from(self.to_string()));
        doc.insert(
            "machines".into(),
            Value::Array(
                self.machines
                    .iter()
                    .map(|m| Value::from(m.as_str()))
                    .collect(),
            ),
        );
        if let Some(figure) = &self.figure {
            doc.insert("figure".into(), Value::from(figure.as_str()));
        }
        let mut run = Table::new();
        for (key, us) in [
            ("duration_us", self.duration_us),
            ("warmup_us", self.warmup_us),
        ] {
            if let Some(us) = us {
                run.insert(
                    key.into(),
                    Value::Integer(us.try_into().unwrap_or(i64::MAX)),
                );
            }
        }
        if let Some(pct) = self.half_width_pct {
            run.insert("half_width_pct".into(), Value::from(pct));
        }
        if !run.is_empty() {
            doc.insert("run".into(), Value::Table(run));
        }
        let (name, options) = self
            .workload
            .split_once(',')
            .unwrap_or((self.workload.as_str(), ""));
        let mut workload = Table::from_iter([("name".to_string(), Value::from(name.trim()))]);
        pairs("--workload", options, &mut workload)?;
        doc.insert(
            "workload".into(),
            Value::Array(vec![Value::Table(workload)]),
        );
        let mut points = Vec::new();
        for at in &self.at {
            let mut point = Table::new();
            pairs("--at", at, &mut point)?;
            points.push(Value::Table(point));
        }
        doc.insert("point".into(), Value::Array(points));
        let preset = |p: &str| Table::from_iter([("preset".to_string(), Value::from(p))]);
        let mut baseline = preset(&self.baseline);
        baseline.insert("name".into(), Value::from("baseline"));
        doc.insert("baseline".into(), Value::Table(baseline));
        let short = self.parameter.rsplit('.').next().unwrap_or("");
        let values = self
            .values
            .iter()
            .map(|v| {
                let (label, value) = match v.split_once(':') {
                    Some((label, value)) => (label.trim().to_string(), value),
                    None => (format!("{short}={}", v.trim()), v.as_str()),
                };
                Value::Table(Table::from_iter([
                    ("label".to_string(), Value::from(label)),
                    ("value".to_string(), value_of(value.trim())),
                ]))
            })
            .collect();
        let order = match self.order.unwrap_or(Order::Monotone) {
            Order::Monotone => "monotone",
            Order::Unordered => "unordered",
        };
        doc.insert(
            "family".into(),
            Value::Table(Table::from_iter([
                (
                    "base".to_string(),
                    Value::Table(preset(self.base.as_deref().unwrap_or(&self.baseline))),
                ),
                (
                    "parameter".to_string(),
                    Value::from(self.parameter.as_str()),
                ),
                ("order".to_string(), Value::from(order)),
                ("values".to_string(), Value::Array(values)),
            ])),
        );
        let mut target = Table::new();
        if let Some(pct) = self.within_best_pct {
            target.insert("within_best_pct".into(), Value::from(pct));
        }
        if let Some(pct) = self.slower_than_baseline_pct {
            target.insert("slower_than_baseline_pct".into(), Value::from(pct));
        }
        if let Some(bytes) = self.max_bytes_per_process {
            target.insert(
                "max_bytes_per_process".into(),
                Value::Integer(bytes.try_into().unwrap_or(i64::MAX)),
            );
        }
        doc.insert("target".into(), Value::Table(target));
        toml::to_string(&doc).map_err(|_| FlagError {
            flag: "--value",
            text: self.values.join(" "),
            expected: "values TOML can hold",
        })
    }

    /// What the question's store and campaigns are named after: the same
    /// flags name the same store, so asking again reuses its runs.
    pub fn name(text: &str) -> String {
        format!("flags-{}", &hash_hex(text.as_bytes())[..12])
    }
}

/// The flags as a command line gives them: the question's own words.
impl fmt::Display for QuickQuestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "futexsim advise")?;
        for m in &self.machines {
            write!(f, " --machine {m}")?;
        }
        write!(f, " --workload {}", self.workload)?;
        for at in &self.at {
            write!(f, " --at {at}")?;
        }
        write!(f, " --baseline {}", self.baseline)?;
        if let Some(base) = &self.base {
            write!(f, " --base {base}")?;
        }
        write!(f, " --vary {}", self.parameter)?;
        for v in &self.values {
            write!(f, " --value '{v}'")?;
        }
        if self.order == Some(Order::Unordered) {
            write!(f, " --unordered")?;
        }
        if let Some(pct) = self.within_best_pct {
            write!(f, " --within-best {pct}")?;
        }
        if let Some(pct) = self.slower_than_baseline_pct {
            write!(f, " --slower-than-baseline {pct}")?;
        }
        if let Some(bytes) = self.max_bytes_per_process {
            write!(f, " --max-bytes-per-process {bytes}")?;
        }
        if let Some(figure) = &self.figure {
            write!(f, " --figure {figure}")?;
        }
        for (flag, us) in [
            ("--duration-us", self.duration_us),
            ("--warmup-us", self.warmup_us),
        ] {
            if let Some(us) = us {
                write!(f, " {flag} {us}")?;
            }
        }
        if let Some(pct) = self.half_width_pct {
            write!(f, " --half-width-pct {pct}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advise::question::Question;

    fn slots() -> QuickQuestion {
        QuickQuestion {
            machines: vec!["icx-2s".into()],
            workload: "perf-hash,futexes=64".into(),
            at: vec!["cpus=8,threads=8".into()],
            baseline: "private-6.17".into(),
            parameter: "private.slots".into(),
            values: vec!["16".into(), "K=4:roundup_pow_of_two(4 * threads)".into()],
            within_best_pct: Some(5.0),
            ..QuickQuestion::default()
        }
    }

    #[test]
    fn flags_read_as_the_question_file_they_stand_for() {
        let text = slots().to_toml().unwrap();
        let q = Question::parse("(flags)", &QuickQuestion::name(&text), &text).unwrap();
        assert_eq!(q.machines, vec!["icx-2s".to_string()]);
        assert_eq!(q.baseline_name, "baseline");
        let labels: Vec<&str> = q
            .family
            .candidates
            .iter()
            .map(|c| c.label.as_str())
            .collect();
        assert_eq!(labels, ["slots=16", "K=4"]);
        // A number is a number, an expression its text.
        assert_eq!(q.family.candidates[0].value, Value::Integer(16));
        assert_eq!(
            q.family.candidates[1].value,
            Value::from("roundup_pow_of_two(4 * threads)")
        );
        assert_eq!(q.family.order, Order::Monotone);
        assert_eq!(
            q.label(q.asked()[0]),
            "icx-2s, perf-hash, cpus=8, threads=8"
        );
        assert!(
            q.asks.starts_with("futexsim advise --machine icx-2s"),
            "{}",
            q.asks
        );
    }

    #[test]
    fn the_same_flags_name_the_same_store_and_other_flags_another() {
        let a = slots().to_toml().unwrap();
        assert_eq!(
            QuickQuestion::name(&a),
            QuickQuestion::name(&slots().to_toml().unwrap())
        );
        let mut other = slots();
        other.within_best_pct = Some(2.0);
        assert_ne!(
            QuickQuestion::name(&a),
            QuickQuestion::name(&other.to_toml().unwrap())
        );
    }

    /// `--half-width-pct` is the question file's `[run] half_width_pct`:
    /// every asked point's runs stop at that interval, not the default one.
    #[test]
    fn the_half_width_flag_sets_the_run_length_target_of_every_run() {
        let default = slots().to_toml().unwrap();
        let q = Question::parse("(flags)", &QuickQuestion::name(&default), &default).unwrap();
        assert_eq!(
            q.run_settings.half_width_pct,
            Some(crate::advise::question::DEFAULT_HALF_WIDTH_PCT)
        );
        let mut quick = slots();
        quick.half_width_pct = Some(5.0);
        let text = quick.to_toml().unwrap();
        let q = Question::parse("(flags)", &QuickQuestion::name(&text), &text).unwrap();
        assert_eq!(q.run_settings.half_width_pct, Some(5.0));
        assert!(q.asks.ends_with("--half-width-pct 5"), "{}", q.asks);
        assert_ne!(QuickQuestion::name(&text), QuickQuestion::name(&default));
    }

    #[test]
    fn a_point_not_of_key_value_pairs_is_refused_naming_the_flag() {
        let mut bad = slots();
        bad.at = vec!["cpus 8".into()];
        let e = bad.to_toml().unwrap_err();
        assert_eq!(e.flag, "--at");
        assert!(e.to_string().contains("KEY=VALUE"), "{e}");
    }

    #[test]
    fn a_question_the_config_refuses_is_located_in_the_text_the_flags_make() {
        let mut bad = slots();
        bad.machines = vec!["no-such-machine".into()];
        let text = bad.to_toml().unwrap();
        let e = Question::parse("(flags)", &QuickQuestion::name(&text), &text)
            .err()
            .unwrap();
        assert_eq!(e.file, "(flags)");
        let line = text.lines().nth(e.line - 1).unwrap();
        assert!(line.contains("no-such-machine"), "{line}: {e}");
    }
}
