//! Seed intervals: a figure's mean over a cell's repetitions with its
//! two-sided Student-t confidence interval, and the flag for a cell whose
//! seeds split into two groups that no such interval describes.
//!
//! Each repetition runs the same scenario with its own seed, so the
//! per-seed values are independent draws of one figure; with n of them, the
//! interval is mean ± t(1 - alpha/2, n - 1) · s / sqrt(n), s the sample
//! standard deviation (n - 1 in its denominator). One repetition has no
//! spread to estimate and so no interval. The t quantile is statrs's
//! inverse of the Student-t distribution function.
//!
//! The interval assumes the seeds scatter around one centre. A run can
//! instead settle into one of two regimes (a lock convoy that forms on
//! some seeds and not on others), and then its seeds fall into two groups:
//! their mean is a value no seed showed, and the interval is a width
//! neither group has. [`is_bimodal`] flags such a cell by the rule stated
//! in [`BIMODAL_RULE`], so that a report lists its seeds instead of
//! averaging them silently.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The confidence of every seed interval a report prints: 95 %.
pub const CONFIDENCE: f64 = 0.95;

/// The smallest gap between two groups of seeds, as a share of the cell's
/// mean, that can split it: 20 %, ten times the noise threshold a
/// comparison applies, so that seeds scattered by a few percent are never
/// taken for two regimes.
pub const BIMODAL_GAP: f64 = 0.20;

/// How many times wider than either group's own range the gap between the
/// groups must be: two groups, not one spread-out cloud.
pub const BIMODAL_SEPARATION: f64 = 2.0;

/// The rule in one line, as reports and `futexsim diff` state it.
pub const BIMODAL_RULE: &str = "bimodal: the seeds' values, sorted, have a gap between \
     neighbours of at least 20 % of their mean and at least twice the range of the values on \
     either side of it (two groups, which a t-interval around one mean does not describe)";

/// A figure's mean over repetitions and its seed interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeedInterval {
    pub mean: f64,
    /// The interval's lower and upper ends; None with one repetition.
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub repetitions: usize,
    /// The seeds split into two groups ([`is_bimodal`]).
    pub bimodal: bool,
}

impl SeedInterval {
    /// The mean of `values` and its two-sided `confidence` t-interval; None
    /// without values.
    pub fn of(values: &[f64], confidence: f64) -> Option<SeedInterval> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let half_width = (n > 1).then(|| {
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t_quantile(confidence, n - 1) * (variance / n as f64).sqrt()
        });
        Some(SeedInterval {
            mean,
            low: half_width.map(|h| mean - h),
            high: half_width.map(|h| mean + h),
            repetitions: n,
            bimodal: is_bimodal(values),
        })
    }

    /// Half the interval's width; None with one repetition.
    pub fn half_width(&self) -> Option<f64> {
        Some((self.high? - self.low?) / 2.0)
    }

    /// "1,234 ± 56" with `show` for both numbers, the mean alone without
    /// an interval, and " bimodal" after a flagged cell.
    pub fn show(&self, show: impl Fn(f64) -> String) -> String {
        let interval = self
            .half_width()
            .map_or(String::new(), |h| format!(" ± {}", show(h)));
        format!("{}{interval}{}", show(self.mean), self.flag())
    }

    /// "4.458 (3.101..5.815)": a ratio with its interval's ends, three
    /// decimals; the mean alone without an interval; " bimodal" after a
    /// flagged cell.
    pub fn show_range(&self) -> String {
        let interval = match (self.low, self.high) {
            (Some(low), Some(high)) => format!(" ({low:.3}..{high:.3})"),
            _ => String::new(),
        };
        format!("{:.3}{interval}{}", self.mean, self.flag())
    }

    fn flag(&self) -> &'static str {
        if self.bimodal {
            " bimodal"
        } else {
            ""
        }
    }
}

/// The `confidence` two-sided quantile of Student's t with `df` degrees of
/// freedom: t(1 - (1 - confidence)/2, df).
pub fn t_quantile(confidence: f64, df: usize) -> f64 {
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(t) => t.inverse_cdf(1.0 - (1.0 - confidence) / 2.0),
        // Only df = 0 is refused, and no interval asks for it.
        Err(_) => f64::NAN,
    }
}

/// Whether `values` split into two groups by [`BIMODAL_RULE`]: at their
/// widest gap between sorted neighbours, the gap is at least
/// [`BIMODAL_GAP`] of the mean's magnitude and at least
/// [`BIMODAL_SEPARATION`] times the range of each side. Two seeds are
/// split when they differ by the gap; one seed never is.
pub fn is_bimodal(values: &[f64]) -> bool {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.len() < 2 {
        return false;
    }
    sorted.sort_by(f64::total_cmp);
    let Some((at, gap)) = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return false;
    };
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    let (below, above) = sorted.split_at(at + 1);
    let range = |side: &[f64]| side[side.len() - 1] - side[0];
    gap > 0.0
        && gap >= BIMODAL_GAP * mean.abs()
        && gap >= BIMODAL_SEPARATION * range(below).max(range(above))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_the_hand_computed_t_interval() {
        // Five seeds: 10, 12, 11, 13, 9. Mean 55 / 5 = 11. Deviations -1, 1,
        // 0, 2, -2; squares 1 + 1 + 0 + 4 + 4 = 10; s² = 10 / 4 = 2.5, s =
        // 1.5811388; standard error s / sqrt(5) = 0.7071068. t(0.975, 4) =
        // 2.7764451 (tables give 2.776), so the half width is 2.7764451 x
        // 0.7071068 = 1.9632432 and the interval 9.0367568 .. 12.9632432.
        let i = SeedInterval::of(&[10.0, 12.0, 11.0, 13.0, 9.0], CONFIDENCE).unwrap();
        assert_eq!(i.mean, 11.0);
        assert!((i.low.unwrap() - 9.036_756_8).abs() < 1e-6, "{i:?}");
        assert!((i.high.unwrap() - 12.963_243_2).abs() < 1e-6, "{i:?}");
        assert_eq!(i.repetitions, 5);
        assert!(!i.bimodal);
        assert_eq!(i.show(|v| format!("{v:.2}")), "11.00 ± 1.96");
        assert_eq!(i.show_range(), "11.000 (9.037..12.963)");
    }

    #[test]
    fn t_quantiles_match_the_published_tables() {
        // NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2,
        // upper critical values of Student's t at 0.025 and 0.05.
        for (df, at_95, at_90) in [
            (1, 12.706, 6.314),
            (2, 4.303, 2.920),
            (4, 2.776, 2.132),
            (9, 2.262, 1.833),
            (30, 2.042, 1.697),
        ] {
            assert!((t_quantile(0.95, df) - at_95).abs() < 5e-4, "df {df}");
            assert!((t_quantile(0.90, df) - at_90).abs() < 5e-4, "df {df}");
        }
    }

    #[test]
    fn one_repetition_has_a_mean_and_no_interval() {
        let i = SeedInterval::of(&[42.0], CONFIDENCE).unwrap();
        assert_eq!((i.mean, i.low, i.high), (42.0, None, None));
        assert_eq!(i.show(|v| format!("{v}")), "42");
        assert_eq!(SeedInterval::of(&[], CONFIDENCE), None);
    }

    #[test]
    fn seeds_that_agree_exactly_have_an_interval_of_no_width() {
        let i = SeedInterval::of(&[3.0, 3.0, 3.0], CONFIDENCE).unwrap();
        assert_eq!((i.low, i.high), (Some(3.0), Some(3.0)));
    }

    #[test]
    fn two_groups_of_seeds_are_flagged_bimodal() {
        // The default config's fixed-256 at 64 CPUs: two seeds 2.5x apart.
        assert!(is_bimodal(&[287_891.0, 724_406.0]));
        // Two tight groups of five seeds.
        assert!(is_bimodal(&[100.0, 101.0, 102.0, 150.0, 151.0]));
        // One seed far from four that agree.
        assert!(is_bimodal(&[100.0, 100.5, 101.0, 101.5, 140.0]));
        let i = SeedInterval::of(&[287_891.0, 724_406.0], CONFIDENCE).unwrap();
        assert!(i.bimodal);
        assert!(i.show_range().ends_with(" bimodal"));
    }

    #[test]
    fn seeds_scattered_around_one_centre_are_not_bimodal() {
        // Within 20 % of the mean: no gap that matters.
        assert!(!is_bimodal(&[100.0, 118.0]));
        // Spread out evenly: the widest gap is no wider than the sides.
        assert!(!is_bimodal(&[100.0, 125.0, 150.0, 175.0, 200.0]));
        // A wide gap, but one side as wide as it.
        assert!(!is_bimodal(&[100.0, 140.0, 180.0, 240.0]));
        assert!(!is_bimodal(&[5.0]));
        assert!(!is_bimodal(&[0.0, 0.0, 0.0]));
    }
}
