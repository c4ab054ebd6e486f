//! The tolerances a validation case is judged by, one per kind of figure:
//!
//! - a ratio between two runs of the model (a design against another, one
//!   setting against another, on one machine) passes within a factor of the
//!   published ratio (1.5, or 2 where the published ratio is below 0.1 or
//!   above 10, since such ratios rest on a small figure measured with a large
//!   relative error) and on the same side of 1; a published "no change"
//!   (within 5 % of 1) passes only if the prediction is within 10 % of 1;
//! - an absolute figure (ops/s, a latency) predicted on the case's machine
//!   profile passes within a factor of 2, the profile's latencies being those
//!   of the machine or of a similar part;
//! - a closed form (balls into bins, a Markov model) passes within 1.5x,
//!   without any rule about 1 and with no wider factor for large or small
//!   figures: it is computed, not measured.
//!
//! A published range passes widened by the kind's factor at both ends. The
//! error of a prediction is the factor between it and the published figure
//! (1 inside a range), so errors of ratios and of absolute figures compare.

use serde::{Deserialize, Serialize};

/// What kind of figure a case compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judged {
    /// A figure a closed form gives for the model's own inputs.
    ClosedForm,
    /// A measured ratio between two runs on one machine.
    Ratio,
    /// A measured figure in its own unit, on the case's machine.
    Absolute,
}

/// What was published.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Published {
    Value(f64),
    /// A figure measured from `.0` to `.1` over repeated runs.
    Range(f64, f64),
}

/// A published ratio this close to 1 says "no change".
const NO_CHANGE: f64 = 1.05;
/// A prediction of "no change" must be this close to 1.
const NO_CHANGE_PREDICTED: f64 = 0.10;
const FACTOR: f64 = 1.5;
const FACTOR_EXTREME: f64 = 2.0;
const FACTOR_ABSOLUTE: f64 = 2.0;

/// The factor between two positive figures, at least 1.
pub fn factor_between(a: f64, b: f64) -> f64 {
    (a / b).max(b / a)
}

impl Published {
    /// Whether a published ratio says "no change".
    fn no_change(&self, judged: Judged) -> bool {
        matches!((judged, *self), (Judged::Ratio, Published::Value(r)) if factor_between(r, 1.0) < NO_CHANGE)
    }

    /// The allowed factor between predicted and published.
    pub fn factor(&self, judged: Judged) -> f64 {
        match (judged, *self) {
            (Judged::Absolute, _) => FACTOR_ABSOLUTE,
            (Judged::Ratio, Published::Value(r)) if !(0.1..=10.0).contains(&r) => FACTOR_EXTREME,
            _ => FACTOR,
        }
    }

    /// How the tolerance reads in a report.
    pub fn tolerance(&self, judged: Judged) -> String {
        let factor = self.factor(judged);
        match *self {
            Published::Value(_) if self.no_change(judged) => {
                format!("no change: within {}% of 1", NO_CHANGE_PREDICTED * 100.0)
            }
            Published::Value(_) if judged == Judged::Ratio => {
                format!("within {factor}x, same side of 1")
            }
            Published::Value(_) => format!("within {factor}x"),
            Published::Range(lo, hi) => {
                format!("in [{}, {}]", short(lo / factor), short(hi * factor))
            }
        }
    }

    /// The factor between the prediction and the published figure; 1 inside
    /// a published range.
    pub fn error(&self, predicted: f64) -> f64 {
        match *self {
            Published::Value(p) => factor_between(predicted, p),
            Published::Range(lo, _) if predicted < lo => lo / predicted,
            Published::Range(_, hi) if predicted > hi => predicted / hi,
            Published::Range(..) => 1.0,
        }
    }

    pub fn judge(&self, judged: Judged, predicted: f64) -> Verdict {
        if !predicted.is_finite() || predicted <= 0.0 {
            return Verdict::Fail(format!("predicted {predicted} is not a positive figure"));
        }
        let factor = self.factor(judged);
        match *self {
            Published::Value(_) if self.no_change(judged) => {
                let off = (predicted - 1.0).abs();
                if off > NO_CHANGE_PREDICTED {
                    Verdict::Fail(format!(
                        "published no change, predicted {}% off 1",
                        short(off * 100.0)
                    ))
                } else {
                    Verdict::Pass
                }
            }
            Published::Value(published) => {
                let off = factor_between(predicted, published);
                if off > factor {
                    Verdict::Fail(format!("off by {}x", short(off)))
                } else if judged == Judged::Ratio && (published > 1.0) != (predicted > 1.0) {
                    Verdict::Fail("opposite direction".into())
                } else {
                    Verdict::Pass
                }
            }
            Published::Range(lo, hi) => {
                let (lo, hi) = (lo / factor, hi * factor);
                if predicted < lo {
                    Verdict::Fail(format!("{}x below the range", short(lo / predicted)))
                } else if predicted > hi {
                    Verdict::Fail(format!("{}x above the range", short(predicted / hi)))
                } else {
                    Verdict::Pass
                }
            }
        }
    }
}

impl std::fmt::Display for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match *self {
            Published::Value(r) => write!(f, "{}", short(r)),
            Published::Range(lo, hi) => write!(f, "{}-{}", short(lo), short(hi)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Verdict {
    Pass,
    /// Why it fails.
    Fail(String),
}

impl Verdict {
    pub fn passed(&self) -> bool {
        *self == Verdict::Pass
    }
}

/// Four significant figures: enough to compare, short enough to read.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATIO: Judged = Judged::Ratio;

    #[test]
    fn ratios_within_one_and_a_half_pass_beyond_fail() {
        let p = Published::Value(0.5);
        assert!(p.judge(RATIO, 0.34).passed());
        assert!(p.judge(RATIO, 0.74).passed());
        assert!(!p.judge(RATIO, 0.32).passed());
        assert!(!p.judge(RATIO, 0.76).passed());
    }

    #[test]
    fn small_and_large_ratios_get_a_factor_of_two() {
        let small = Published::Value(0.017);
        assert_eq!(small.factor(RATIO), 2.0);
        assert!(small.judge(RATIO, 0.0087).passed());
        assert!(small.judge(RATIO, 0.033).passed());
        assert!(!small.judge(RATIO, 0.0084).passed());
        assert!(!small.judge(RATIO, 0.035).passed());
        let large = Published::Value(20.0);
        assert!(large.judge(RATIO, 39.0).passed());
        assert!(!large.judge(RATIO, 41.0).passed());
        assert_eq!(Published::Value(0.1).factor(RATIO), 1.5);
    }

    #[test]
    fn a_ratio_on_the_other_side_of_one_fails() {
        let p = Published::Value(1.3);
        assert!(p.judge(RATIO, 1.1).passed());
        assert_eq!(
            p.judge(RATIO, 0.95),
            Verdict::Fail("opposite direction".into())
        );
        assert!(!Published::Value(0.89).judge(RATIO, 1.02).passed());
    }

    #[test]
    fn a_published_no_change_needs_a_prediction_within_ten_percent_of_one() {
        let p = Published::Value(1.03);
        assert!(p.judge(RATIO, 0.91).passed());
        assert!(p.judge(RATIO, 1.09).passed());
        assert!(!p.judge(RATIO, 0.89).passed());
        assert!(!p.judge(RATIO, 1.11).passed());
        assert!(Published::Value(0.96).judge(RATIO, 1.05).passed());
        assert!(p.tolerance(RATIO).starts_with("no change"));
        // Only a ratio can say "no change": a count near 1 is judged by factor.
        assert!(Published::Value(1.0)
            .judge(Judged::ClosedForm, 1.4)
            .passed());
    }

    #[test]
    fn the_side_of_one_binds_only_ratios() {
        let p = Published::Value(8.0);
        assert!(p.judge(Judged::ClosedForm, 9.0).passed());
        // A large count is computed, not measured: no wider factor.
        assert_eq!(Published::Value(32736.0).factor(Judged::ClosedForm), 1.5);
        assert!(Published::Value(1.2)
            .judge(Judged::ClosedForm, 0.9)
            .passed());
        assert!(Published::Value(1.2).judge(Judged::Absolute, 0.9).passed());
        assert!(!Published::Value(1.2).judge(RATIO, 0.9).passed());
    }

    #[test]
    fn absolute_figures_pass_within_two() {
        let p = Published::Value(3_000_000.0);
        assert_eq!(p.factor(Judged::Absolute), 2.0);
        assert!(p.judge(Judged::Absolute, 1_510_000.0).passed());
        assert!(p.judge(Judged::Absolute, 5_990_000.0).passed());
        assert!(!p.judge(Judged::Absolute, 1_490_000.0).passed());
        assert!(!p.judge(Judged::Absolute, 6_100_000.0).passed());
        assert_eq!(p.tolerance(Judged::Absolute), "within 2x");
    }

    #[test]
    fn a_range_is_widened_by_the_kinds_factor() {
        let p = Published::Range(0.08, 0.44);
        assert!(p.judge(RATIO, 0.054).passed());
        assert!(p.judge(RATIO, 0.65).passed());
        assert!(!p.judge(RATIO, 0.05).passed());
        assert!(!p.judge(RATIO, 0.67).passed());
        assert!(!p.judge(RATIO, 0.0).passed());
        assert!(p.judge(Judged::Absolute, 0.041).passed());
        assert!(!p.judge(Judged::Absolute, 0.039).passed());
        assert!(p.judge(Judged::Absolute, 0.87).passed());
        assert!(!p.judge(Judged::Absolute, 0.89).passed());
    }

    #[test]
    fn the_error_is_the_factor_off_and_one_inside_a_range() {
        assert_eq!(Published::Value(2.0).error(1.0), 2.0);
        assert_eq!(Published::Value(2.0).error(4.0), 2.0);
        assert_eq!(Published::Range(1.0, 2.0).error(1.5), 1.0);
        assert_eq!(Published::Range(1.0, 2.0).error(0.5), 2.0);
        assert_eq!(Published::Range(1.0, 2.0).error(6.0), 3.0);
    }

    #[test]
    fn short_keeps_four_significant_figures() {
        assert_eq!(short(0.0645123), "0.06451");
        assert_eq!(short(1.96612), "1.966");
        assert_eq!(short(2192405.0), "2192405");
    }
}
