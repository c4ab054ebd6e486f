//! The one tolerance every validation case is judged by: a predicted ratio
//! within a factor of the published one (1.5, or 2 where the published ratio
//! is below 0.1 or above 10, since small and large ratios rest on a small
//! figure measured with a large relative error), on the same side of 1; or,
//! for a published range, inside that range widened by 1.5x at both ends.

use serde::{Deserialize, Serialize};

/// What was published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Published {
    /// A ratio between two designs or settings on one machine (or a figure
    /// from a closed form), compared by factor and direction.
    Ratio(f64),
    /// A figure measured from `.0` to `.1` over repeated runs.
    Range(f64, f64),
}

/// A published ratio this close to 1 says "no change": any predicted ratio
/// within the factor agrees with it, on either side.
const NO_CHANGE: f64 = 1.05;
const RANGE_WIDENING: f64 = 1.5;

impl Published {
    /// The allowed factor between predicted and published.
    pub fn factor(&self) -> f64 {
        match *self {
            Published::Ratio(r) if !(0.1..=10.0).contains(&r) => 2.0,
            _ => RANGE_WIDENING,
        }
    }

    /// How the tolerance reads in a report.
    pub fn tolerance(&self) -> String {
        match *self {
            Published::Ratio(r) if r.max(1.0 / r) < NO_CHANGE => {
                format!("within {}x", self.factor())
            }
            Published::Ratio(_) => format!("within {}x, same side of 1", self.factor()),
            Published::Range(lo, hi) => format!(
                "in [{}, {}]",
                short(lo / RANGE_WIDENING),
                short(hi * RANGE_WIDENING)
            ),
        }
    }

    pub fn judge(&self, predicted: f64) -> Verdict {
        if !predicted.is_finite() || predicted <= 0.0 {
            return Verdict::Fail(format!("predicted {predicted} is not a positive figure"));
        }
        match *self {
            Published::Ratio(published) => {
                let factor = self.factor();
                let off = (predicted / published).max(published / predicted);
                if off > factor {
                    Verdict::Fail(format!("off by {}x", short(off)))
                } else if published.max(1.0 / published) >= NO_CHANGE
                    && (published > 1.0) != (predicted > 1.0)
                {
                    Verdict::Fail("opposite direction".into())
                } else {
                    Verdict::Pass
                }
            }
            Published::Range(lo, hi) => {
                let (lo, hi) = (lo / RANGE_WIDENING, hi * RANGE_WIDENING);
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
            Published::Ratio(r) => write!(f, "{}", short(r)),
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

    #[test]
    fn ratios_within_one_and_a_half_pass_beyond_fail() {
        let p = Published::Ratio(0.5);
        assert!(p.judge(0.34).passed());
        assert!(p.judge(0.74).passed());
        assert!(!p.judge(0.32).passed());
        assert!(!p.judge(0.76).passed());
    }

    #[test]
    fn small_and_large_ratios_get_a_factor_of_two() {
        let small = Published::Ratio(0.017);
        assert_eq!(small.factor(), 2.0);
        assert!(small.judge(0.0087).passed());
        assert!(small.judge(0.033).passed());
        assert!(!small.judge(0.0084).passed());
        assert!(!small.judge(0.035).passed());
        let large = Published::Ratio(20.0);
        assert!(large.judge(39.0).passed());
        assert!(!large.judge(41.0).passed());
        assert_eq!(Published::Ratio(0.1).factor(), 1.5);
    }

    #[test]
    fn a_prediction_on_the_other_side_of_one_fails() {
        let p = Published::Ratio(1.3);
        assert!(p.judge(1.1).passed());
        assert_eq!(p.judge(0.95), Verdict::Fail("opposite direction".into()));
        assert!(!Published::Ratio(0.89).judge(1.02).passed());
    }

    #[test]
    fn a_published_no_change_accepts_either_side() {
        let p = Published::Ratio(1.003);
        assert!(p.judge(0.8).passed());
        assert!(p.judge(1.2).passed());
        assert!(!p.judge(0.6).passed());
    }

    #[test]
    fn a_range_is_widened_by_one_and_a_half() {
        let p = Published::Range(0.08, 0.44);
        assert!(p.judge(0.054).passed());
        assert!(p.judge(0.65).passed());
        assert!(!p.judge(0.05).passed());
        assert!(!p.judge(0.67).passed());
        assert!(!p.judge(0.0).passed());
    }

    #[test]
    fn short_keeps_four_significant_figures() {
        assert_eq!(short(0.0645123), "0.06451");
        assert_eq!(short(1.96612), "1.966");
        assert_eq!(short(2192405.0), "2192405");
    }
}
