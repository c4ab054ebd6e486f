//! Calibrated intervals: does the interval futexsim states around a
//! prediction hold the published figure as often as it claims?
//!
//! A model case's stated interval joins its two uncertainties. Its config
//! runs as it is (the nominal run) and once per sample of its machine
//! profile's plausible ranges (the samples `futexsim run --sensitivity`
//! takes, sim/sensitivity/); in each, the case's figure has its 95 % seed
//! interval. The stated interval runs from the lowest of those intervals'
//! lower ends to the highest of their upper ends: whatever the unmeasured
//! parameters are within their ranges, the seed interval at the true values
//! lies inside it, so it claims at least the seed interval's 95 %. Its
//! model part, the least and greatest of the samples' means, is shown apart.
//!
//! Coverage is the share of model cases whose published figure lies inside
//! (a published range: overlaps). A share lower than 95 % by more than
//! chance is itself a failing result: the intervals are narrower than the
//! model's real error, and a reader trusting them would be misled. "By more
//! than chance" is a one-sided binomial test: with n cases each covered
//! with probability 0.95, the probability of covering as few as were
//! covered is below [`SIGNIFICANCE`].

use super::verdict::{Judged, Published};
use super::Outcome;
use crate::report::interval::{SeedInterval, CONFIDENCE};
use serde::Serialize;
use statrs::distribution::{Binomial, DiscreteCDF};

/// How the stated interval is formed and coverage judged, as the
/// validation report states it.
pub const RULE: &str = "A model case's stated interval joins its seed interval and its model \
     interval: the config runs as it is and once per sample of its machine profile's plausible \
     ranges (the samples `futexsim run --sensitivity` takes), and the interval runs from the \
     lowest to the highest end of the case figure's 95 % seed intervals over all of them, so it \
     claims at least 95 %. The model part (the least and greatest of the samples' means) is \
     shown apart. Coverage is the share of model cases whose published figure lies inside (a \
     published range: meets it); it fails when so few would be covered by chance with \
     probability under 5 % (a one-sided binomial test at the stated 95 %): then the intervals \
     are narrower than the model's error, and no interval futexsim states should be read as \
     its confidence.";

/// The level below which too few covered cases fail the coverage: 5 %, the
/// significance level of every other test futexsim states.
pub const SIGNIFICANCE: f64 = 0.05;

/// A model case's stated interval: seed and model together.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StatedInterval {
    pub low: f64,
    pub high: f64,
    /// The least and greatest of the figure's means over the nominal run
    /// and the samples; None where no parameter of the profile varies.
    pub model: Option<(f64, f64)>,
}

impl StatedInterval {
    /// The interval around the nominal run's prediction and the samples':
    /// each one's seed interval, or its mean where it has none (one
    /// repetition); the samples' means for the model part.
    pub fn of(nominal: &SeedInterval, samples: &[SeedInterval]) -> StatedInterval {
        let all = || std::iter::once(nominal).chain(samples);
        let least = |values: &mut dyn Iterator<Item = f64>| values.fold(f64::INFINITY, f64::min);
        let greatest =
            |values: &mut dyn Iterator<Item = f64>| values.fold(f64::NEG_INFINITY, f64::max);
        StatedInterval {
            low: least(&mut all().map(|s| s.low.unwrap_or(s.mean))),
            high: greatest(&mut all().map(|s| s.high.unwrap_or(s.mean))),
            model: (!samples.is_empty()).then(|| {
                (
                    least(&mut all().map(|s| s.mean)),
                    greatest(&mut all().map(|s| s.mean)),
                )
            }),
        }
    }

    /// Whether the published figure lies inside (a published range: meets
    /// it anywhere).
    pub fn covers(&self, published: Published) -> bool {
        match published {
            Published::Value(v) => self.low <= v && v <= self.high,
            Published::Range(lo, hi) => self.low <= hi && lo <= self.high,
        }
    }
}

/// How often the model cases' stated intervals hold their published figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Coverage {
    pub covered: usize,
    pub cases: usize,
    /// What each interval claims: the seed interval's confidence.
    pub stated: f64,
    /// The probability of covering as few as `covered` of `cases` if each
    /// interval held its figure with probability `stated`.
    pub p_value: f64,
}

impl Coverage {
    /// The coverage of the model cases that have a stated interval; None
    /// when none has (validate run without its samples).
    pub fn of(outcomes: &[Outcome]) -> Option<Coverage> {
        let judged: Vec<bool> = outcomes
            .iter()
            .filter(|o| matches!(o.judged, Judged::Ratio | Judged::Absolute))
            .filter_map(|o| Some(o.interval?.covers(o.published)))
            .collect();
        if judged.is_empty() {
            return None;
        }
        let covered = judged.iter().filter(|c| **c).count();
        Some(Coverage {
            covered,
            cases: judged.len(),
            stated: CONFIDENCE,
            p_value: at_most(covered, judged.len(), CONFIDENCE),
        })
    }

    /// The share covered, in percent.
    pub fn percent(&self) -> f64 {
        100.0 * self.covered as f64 / self.cases as f64
    }

    /// Whether the share covered is consistent with the stated level.
    pub fn passed(&self) -> bool {
        self.p_value >= SIGNIFICANCE
    }

    /// `coverage 31 % (15 of 48 inside their stated 95 % intervals; FAIL: ...)`.
    pub fn headline(&self) -> String {
        let verdict = if self.passed() {
            "consistent with the stated level".to_string()
        } else {
            format!(
                "FAIL: so few would be covered by chance with probability {}, below {:.0} %: \
                 the intervals are narrower than the model's error",
                p_value_text(self.p_value),
                100.0 * SIGNIFICANCE
            )
        };
        format!(
            "coverage {:.0} % ({} of {} published figures inside their stated {:.0} % \
             intervals; {verdict})",
            self.percent(),
            self.covered,
            self.cases,
            100.0 * self.stated
        )
    }
}

/// P(X <= k) for X ~ Binomial(n, p).
fn at_most(k: usize, n: usize, p: f64) -> f64 {
    match Binomial::new(p, n as u64) {
        Ok(binomial) => binomial.cdf(k as u64),
        // Only p outside [0, 1] is refused, and CONFIDENCE is inside.
        Err(_) => f64::NAN,
    }
}

fn p_value_text(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds(values: &[f64]) -> SeedInterval {
        SeedInterval::of(values, CONFIDENCE).unwrap()
    }

    #[test]
    fn the_stated_interval_spans_every_samples_seed_interval_and_the_model_part_their_means() {
        let nominal = seeds(&[1.0, 1.1, 0.9]);
        let low = seeds(&[0.7, 0.72, 0.68]);
        let high = seeds(&[1.5, 1.6, 1.4]);
        let stated = StatedInterval::of(&nominal, &[low, high]);
        assert_eq!(stated.low, low.low.unwrap());
        assert_eq!(stated.high, high.high.unwrap());
        assert_eq!(stated.model, Some((low.mean, high.mean)));
        assert!(stated.covers(Published::Value(1.55)));
        assert!(!stated.covers(Published::Value(0.5)));
        assert!(stated.covers(Published::Range(0.1, 0.66)));
        assert!(!stated.covers(Published::Range(2.0, 3.0)));
    }

    #[test]
    fn without_samples_the_stated_interval_is_the_seed_interval_and_has_no_model_part() {
        let nominal = seeds(&[1.0, 1.2]);
        let stated = StatedInterval::of(&nominal, &[]);
        assert_eq!(
            (stated.low, stated.high),
            (nominal.low.unwrap(), nominal.high.unwrap())
        );
        assert_eq!(stated.model, None);
        // One repetition: no seed interval, the mean alone.
        let single = StatedInterval::of(&seeds(&[2.0]), &[]);
        assert_eq!((single.low, single.high), (2.0, 2.0));
    }

    #[test]
    fn the_binomial_tail_matches_a_hand_computed_case() {
        // n = 3, p = 0.95: P(X <= 1) = 0.05^3 + 3 * 0.95 * 0.05^2 = 0.00725.
        assert!((at_most(1, 3, 0.95) - 0.00725).abs() < 1e-12);
        assert!((at_most(3, 3, 0.95) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn coverage_far_below_its_stated_level_fails_and_near_it_passes() {
        let coverage = |covered, cases| Coverage {
            covered,
            cases,
            stated: CONFIDENCE,
            p_value: at_most(covered, cases, CONFIDENCE),
        };
        // 40 % of 20 at a stated 95 %: no chance.
        assert!(!coverage(8, 20).passed());
        assert!(coverage(8, 20).headline().contains("coverage 40 %"));
        assert!(coverage(8, 20).headline().contains("FAIL"));
        // 18 of 20 (90 %) happens by chance about a quarter of the time.
        assert!(coverage(18, 20).passed());
    }
}
