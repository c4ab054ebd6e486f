//! One result against another: the ratio of a metric between two sets of
//! repetitions, its spread, and whether the change is inside the noise.
//!
//! The rule, futexsim's paired-ratio rule: repetitions are paired by index
//! (repetition i of both sides ran with the same seed), the ratio of each
//! pair is taken, and the change is the mean of those ratios. Its spread is
//! the largest distance of one pair's ratio from that mean. A change is
//! within the noise when |mean - 1| < max(NOISE_THRESHOLD, spread). It is
//! not criterion's rule (a 1 % noise threshold and a significance test over
//! many samples): a campaign has a few repetitions, not a sample.

/// Relative changes below this are never reported as real (2 %).
pub const NOISE_THRESHOLD: f64 = 0.02;

/// The rule in one line, as reports and `futexsim diff` state it.
pub const NOISE_RULE: &str = "paired-ratio rule: within noise when |B/A - 1| is under 2 % or \
     under the spread of the repetitions' paired ratios (futexsim's own rule, not criterion's \
     1 % with a significance test)";

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// What a change means for a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Improved,
    Regressed,
    WithinNoise,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within noise",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// Mean over repetitions of new / old.
    pub ratio: f64,
    pub min: f64,
    pub max: f64,
    pub within_noise: bool,
}

impl Change {
    /// `new` against `old`, paired by repetition; None without a pair or
    /// with a zero `old` that `new` left (a pair equal to each other, zeros
    /// included, has not changed: its ratio is 1).
    pub fn between(old: &[f64], new: &[f64]) -> Option<Change> {
        let ratios: Vec<f64> = old
            .iter()
            .zip(new)
            .map(|(o, n)| match (o == n, *o != 0.0) {
                (true, _) => Some(1.0),
                (false, true) => Some(n / o),
                (false, false) => None,
            })
            .collect::<Option<_>>()?;
        if ratios.is_empty() {
            return None;
        }
        let ratio = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread = (max - ratio).max(ratio - min);
        Some(Change {
            ratio,
            min,
            max,
            within_noise: (ratio - 1.0).abs() < NOISE_THRESHOLD.max(spread),
        })
    }

    /// Improved or regressed for a figure that is better `better`, unless
    /// the change is within the noise.
    pub fn verdict(&self, better: Better) -> Verdict {
        match (self.within_noise, self.ratio > 1.0, better) {
            (true, _, _) => Verdict::WithinNoise,
            (false, true, Better::Higher) | (false, false, Better::Lower) => Verdict::Improved,
            _ => Verdict::Regressed,
        }
    }

    /// "1.234 (1.201..1.260)", and " within noise" when it is.
    pub fn describe(&self) -> String {
        let noise = if self.within_noise {
            ", within noise"
        } else {
            ""
        };
        format!(
            "{:.3} ({:.3}..{:.3}){noise}",
            self.ratio, self.min, self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_change_is_reported() {
        let c = Change::between(&[100.0, 110.0], &[150.0, 165.0]).unwrap();
        assert!((c.ratio - 1.5).abs() < 1e-12);
        assert!(!c.within_noise);
        assert_eq!(c.describe(), "1.500 (1.500..1.500)");
    }

    #[test]
    fn small_or_unsteady_changes_are_noise() {
        // 1.5 % is under the threshold.
        assert!(Change::between(&[100.0], &[101.5]).unwrap().within_noise);
        // 5 % on average, but the repetitions range from 0.9 to 1.2.
        let c = Change::between(&[100.0, 100.0], &[90.0, 120.0]).unwrap();
        assert!((c.ratio - 1.05).abs() < 1e-12);
        assert!(c.within_noise);
        assert!(c.describe().ends_with("within noise"));
        // 5 % with repetitions agreeing to within 1 %.
        assert!(
            !Change::between(&[100.0, 100.0], &[104.0, 106.0])
                .unwrap()
                .within_noise
        );
    }

    #[test]
    fn a_change_improves_or_regresses_by_the_figure_s_direction() {
        let faster = Change::between(&[100.0], &[150.0]).unwrap();
        assert_eq!(faster.verdict(Better::Higher), Verdict::Improved);
        assert_eq!(faster.verdict(Better::Lower), Verdict::Regressed);
        let slower = Change::between(&[100.0], &[50.0]).unwrap();
        assert_eq!(slower.verdict(Better::Higher), Verdict::Regressed);
        assert_eq!(slower.verdict(Better::Lower), Verdict::Improved);
        let same = Change::between(&[100.0], &[101.0]).unwrap();
        assert_eq!(same.verdict(Better::Lower), Verdict::WithinNoise);
    }

    #[test]
    fn nothing_to_compare() {
        assert_eq!(Change::between(&[], &[]), None);
        assert_eq!(Change::between(&[0.0], &[1.0]), None);
    }

    #[test]
    fn a_figure_zero_on_both_sides_did_not_change() {
        let c = Change::between(&[0.0, 2.0], &[0.0, 2.0]).unwrap();
        assert_eq!((c.ratio, c.min, c.max), (1.0, 1.0, 1.0));
        assert_eq!(c.verdict(Better::Lower), Verdict::WithinNoise);
    }
}
