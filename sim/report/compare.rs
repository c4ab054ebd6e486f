//! One result against another: the paired ratio of a metric between two
//! sets of repetitions, its seed interval, and the test that says whether
//! the change is real.
//!
//! The paired ratio: repetitions are paired by index (repetition i of both
//! sides ran with the same seed), the ratio of each pair is taken, and the
//! ratio reported is the mean of those per-seed ratios, with the t-interval
//! over them (report::interval). It is the one ratio futexsim prints; the
//! ratio of the two means is not.
//!
//! The test states its two parameters as criterion does: a change is real
//! when the (1 - significance) interval of the paired ratio lies wholly
//! outside 1 ± the noise threshold. Its lying outside 1 at all is the
//! paired t-test's rejection of "no change" at that significance level;
//! its lying outside the band is criterion's "beyond the noise threshold".
//! A cell with one repetition has no interval and is not judged; a
//! bimodal one (its per-seed ratios split into two groups) is not judged
//! either: the interval does not describe it. The ratio's own seeds decide:
//! a design and its baseline that fall into the same regime on each seed
//! have a steady ratio however their rates split.

use super::interval::SeedInterval;
use serde::Serialize;

/// The test a comparison applies.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Test {
    /// Relative changes inside 1 ± this are never reported as real.
    pub noise_threshold: f64,
    /// The probability the test accepts of calling a change that is not
    /// there real; the interval's confidence is 1 - this.
    pub significance_level: f64,
}

impl Test {
    /// 2 % and 5 %: the noise threshold futexsim has always used (a
    /// simulation's runs differ only by their seeds, so twice criterion's
    /// 1 %, which has the jitter of a real machine to absorb, is the
    /// smallest change its few repetitions resolve), and criterion's
    /// significance level.
    pub const DEFAULT: Test = Test {
        noise_threshold: 0.02,
        significance_level: 0.05,
    };

    pub fn confidence(&self) -> f64 {
        1.0 - self.significance_level
    }

    /// The test in one line, as reports and `futexsim diff` state it.
    pub fn describe(&self) -> String {
        format!(
            "a change is real when the {}% t-interval of the paired ratio (mean of per-seed \
             ratios) lies wholly outside 1 ± {}% (significance level {}%, noise threshold {}%); \
             one repetition has no interval and is not judged, nor is a bimodal cell",
            percent(self.confidence()),
            percent(self.noise_threshold),
            percent(self.significance_level),
            percent(self.noise_threshold),
        )
    }
}

/// A share as a percentage without trailing zeros: 0.05 as "5", 0.025 as "2.5".
fn percent(share: f64) -> String {
    let text = format!("{:.4}", share * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub use crate::workload::lead::Better;

/// What a change means for a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    WithinNoise,
    /// One repetition: no interval to test.
    NoInterval,
    /// The seeds split into two groups: the interval does not describe them.
    Bimodal,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
            Verdict::NoInterval => "not judged: one repetition",
            Verdict::Bimodal => "not judged: bimodal",
        }
    }
}

/// Which side of the noise band the paired ratio's interval lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    WithinNoise,
    NoInterval,
    Bimodal,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The paired ratio new / old and its interval; `bimodal` when the
    /// per-seed ratios split into two groups.
    pub ratio: SeedInterval,
    pub direction: Direction,
}

impl Change {
    /// `new` against `old`, paired by repetition, judged by `test`; None
    /// without a pair or with a zero `old` that `new` left (a pair equal to
    /// each other, zeros included, has not changed: its ratio is 1).
    pub fn between(old: &[f64], new: &[f64], test: &Test) -> Option<Change> {
        let ratios: Vec<f64> = old
            .iter()
            .zip(new)
            .map(|(o, n)| match (o == n, *o != 0.0) {
                (true, _) => Some(1.0),
                (false, true) => Some(n / o),
                (false, false) => None,
            })
            .collect::<Option<_>>()?;
        let ratio = SeedInterval::of(&ratios, test.confidence())?;
        let direction = match (ratio.bimodal, ratio.low, ratio.high) {
            (true, _, _) => Direction::Bimodal,
            (false, Some(low), _) if low > 1.0 + test.noise_threshold => Direction::Up,
            (false, _, Some(high)) if high < 1.0 - test.noise_threshold => Direction::Down,
            (false, Some(_), Some(_)) => Direction::WithinNoise,
            _ => Direction::NoInterval,
        };
        Some(Change { ratio, direction })
    }

    /// Improved or regressed for a figure that is better `better`, unless
    /// the change is within the noise or not judged.
    pub fn verdict(&self, better: Better) -> Verdict {
        match (self.direction, better) {
            (Direction::Up, Better::Higher) | (Direction::Down, Better::Lower) => Verdict::Improved,
            (Direction::Up, Better::Lower) | (Direction::Down, Better::Higher) => {
                Verdict::Regressed
            }
            (Direction::WithinNoise, _) => Verdict::WithinNoise,
            (Direction::NoInterval, _) => Verdict::NoInterval,
            (Direction::Bimodal, _) => Verdict::Bimodal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(old: &[f64], new: &[f64]) -> Change {
        Change::between(old, new, &Test::DEFAULT).unwrap()
    }

    #[test]
    fn a_clear_change_is_reported() {
        let c = change(&[100.0, 110.0, 120.0], &[150.0, 165.0, 180.0]);
        assert!((c.ratio.mean - 1.5).abs() < 1e-12);
        assert_eq!(c.direction, Direction::Up);
        assert_eq!(c.ratio.show_range(), "1.500 (1.500..1.500)");
    }

    #[test]
    fn a_change_is_real_only_when_its_interval_clears_the_noise_band() {
        // Paired ratios 1.04, 1.06, 1.05: mean 1.05, s = 0.01, standard
        // error 0.01 / sqrt(3) = 0.0057735; t(0.975, 2) = 4.3027 gives a half
        // width of 0.024841, so the interval 1.0252 .. 1.0748 clears 1.02.
        let c = change(&[100.0, 100.0, 100.0], &[104.0, 106.0, 105.0]);
        assert_eq!(c.direction, Direction::Up);
        assert!((c.ratio.low.unwrap() - 1.025_159).abs() < 1e-5, "{c:?}");
        // The same ratios from two seeds: t(0.975, 1) = 12.706 widens the
        // interval to 0.923 .. 1.177, which holds 1: not a change.
        let two = change(&[100.0, 100.0], &[104.0, 106.0]);
        assert_eq!(two.direction, Direction::WithinNoise);
        // 1.5 % is under the threshold however steady.
        let steady = change(&[100.0, 100.0, 100.0], &[101.5, 101.5, 101.5]);
        assert_eq!(steady.direction, Direction::WithinNoise);
        // A wider noise threshold or a stricter level takes the change back.
        let wide = Test {
            noise_threshold: 0.03,
            ..Test::DEFAULT
        };
        let old = [100.0, 100.0, 100.0];
        let new = [104.0, 106.0, 105.0];
        let judged = |test: &Test| Change::between(&old, &new, test).unwrap().direction;
        assert_eq!(judged(&wide), Direction::WithinNoise);
        let strict = Test {
            significance_level: 0.01,
            ..Test::DEFAULT
        };
        assert_eq!(judged(&strict), Direction::WithinNoise);
    }

    #[test]
    fn a_change_improves_or_regresses_by_the_figure_s_direction() {
        let faster = change(&[100.0, 100.0], &[150.0, 150.0]);
        assert_eq!(faster.verdict(Better::Higher), Verdict::Improved);
        assert_eq!(faster.verdict(Better::Lower), Verdict::Regressed);
        let slower = change(&[100.0, 100.0], &[50.0, 50.0]);
        assert_eq!(slower.verdict(Better::Higher), Verdict::Regressed);
        assert_eq!(slower.verdict(Better::Lower), Verdict::Improved);
        let same = change(&[100.0, 100.0], &[101.0, 101.0]);
        assert_eq!(same.verdict(Better::Lower), Verdict::WithinNoise);
    }

    #[test]
    fn one_repetition_or_a_bimodal_side_is_not_judged() {
        let one = change(&[100.0], &[150.0]);
        assert_eq!(one.verdict(Better::Higher), Verdict::NoInterval);
        assert_eq!(one.ratio.show_range(), "1.500");
        // The baseline's seeds 2.5x apart, the design's steady: the
        // per-seed ratios 6.25 and 2.55 split.
        let split = change(&[287_891.0, 724_406.0], &[1_800_000.0, 1_850_000.0]);
        assert!(split.ratio.bimodal);
        assert_eq!(split.verdict(Better::Higher), Verdict::Bimodal);
    }

    #[test]
    fn nothing_to_compare() {
        assert_eq!(Change::between(&[], &[], &Test::DEFAULT), None);
        assert_eq!(Change::between(&[0.0], &[1.0], &Test::DEFAULT), None);
    }

    #[test]
    fn a_figure_zero_on_both_sides_did_not_change() {
        let c = change(&[0.0, 2.0], &[0.0, 2.0]);
        assert_eq!(
            (c.ratio.mean, c.ratio.low, c.ratio.high),
            (1.0, Some(1.0), Some(1.0))
        );
        assert_eq!(c.verdict(Better::Lower), Verdict::WithinNoise);
    }

    #[test]
    fn the_test_states_its_threshold_and_level() {
        let text = Test::DEFAULT.describe();
        assert!(text.contains("95% t-interval"), "{text}");
        assert!(text.contains("significance level 5%"), "{text}");
        assert!(text.contains("noise threshold 2%"), "{text}");
    }
}
