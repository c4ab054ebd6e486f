//! A run that ends once its throughput is known well enough, by the method
//! of non-overlapping batch means (Law and Kelton, "Simulation Modeling and
//! Analysis", 3rd ed., §9.5.3; Schmeiser, "Batch size effects in the
//! analysis of simulation output", Operations Research 30(3), 1982): the
//! counted window is cut into equal batches, the ops each batch completed
//! are taken as roughly independent samples of the throughput, and their
//! Student-t interval says how well the run's mean is known.
//!
//! The batch count stays fixed while the run grows: at each check the
//! window so far is cut into [`BATCHES`] batches, so a batch doubles in
//! length from one check to the next, which makes neighbouring batches
//! less correlated as the run goes on (the fixed-count procedure of Law
//! and Carson, "A sequential procedure for determining the length of a
//! steady-state simulation", Operations Research 27(5), 1979). The checks
//! are at 1/8, 1/4 and 1/2 of the window's duration, which is the most
//! the run takes. Everything is decided in simulated time from what the
//! run counted, so the same scenario stops at the same instant on any
//! host, with any number of threads.

use crate::machine::Ps;

/// Batches a check cuts the window so far into: Schmeiser's lower bound of
/// 10 to 30, where a batch is longest and so least correlated with the next.
pub const BATCHES: usize = 10;

/// Checks before the window's end, each at twice the length of the one
/// before: the first at 1/2^CHECKS of the duration.
pub const CHECKS: u32 = 3;

/// Student's t at 0.975 with BATCHES - 1 = 9 degrees of freedom: the 95 %
/// two-sided interval's factor (a test checks it against the report's
/// quantile).
pub const T_95_BATCHES: f64 = 2.262_157_162_740_991;

/// The stopping rule: the relative half-width of the throughput's 95 %
/// batch-means interval at which a run ends.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct BatchMeans {
    /// The half-width as a share of the mean (0.01 for 1 %).
    pub half_width: f64,
}

impl BatchMeans {
    /// The length of the shortest unit the counts are kept in, for a
    /// window of `duration`: a check's batches are whole numbers of them.
    /// None where the duration is too short to cut (under a picosecond each).
    pub fn unit(duration: Ps) -> Option<Ps> {
        let unit = duration / (BATCHES as u64) / (1 << CHECKS);
        (unit > 0).then_some(unit)
    }

    /// Whether a check is due after `units` units: at BATCHES, 2 x BATCHES,
    /// ... units, before the last (the window's end, where the run ends anyway).
    pub fn checks_at(units: usize) -> bool {
        (BATCHES..BATCHES << CHECKS).contains(&units)
            && units.is_multiple_of(BATCHES)
            && (units / BATCHES).is_power_of_two()
    }

    /// Whether the ops counted in each unit so far know the run's
    /// throughput well enough to stop.
    pub fn is_met(&self, per_unit: &[u64]) -> bool {
        relative_half_width(per_unit).is_some_and(|w| w <= self.half_width)
    }

    /// Whether a run whose units so far counted `per_unit` ends with the
    /// last of them: a check is due there and the rule is met.
    pub fn stops_after(&self, per_unit: &[u64]) -> bool {
        BatchMeans::checks_at(per_unit.len()) && self.is_met(per_unit)
    }
}

/// The 95 % batch-means interval's half-width over its mean, with the
/// units cut into [`BATCHES`] equal batches (units left over at the end
/// are not used); None where it has no meaning (fewer units than batches,
/// or nothing counted).
pub fn relative_half_width(per_unit: &[u64]) -> Option<f64> {
    let size = per_unit.len() / BATCHES;
    if size == 0 {
        return None;
    }
    let sums: Vec<f64> = per_unit
        .chunks_exact(size)
        .take(BATCHES)
        .map(|batch| batch.iter().sum::<u64>() as f64)
        .collect();
    let n = sums.len() as f64;
    let mean = sums.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let variance = sums.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(T_95_BATCHES * (variance / n).sqrt() / mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factor_is_student_s_t_at_nine_degrees_of_freedom() {
        let t = crate::report::interval::t_quantile(0.95, BATCHES - 1);
        assert!((t - T_95_BATCHES).abs() < 1e-9, "{t}");
    }

    #[test]
    fn checks_fall_at_each_doubling_before_the_window_s_end() {
        let due: Vec<usize> = (0..=BATCHES << CHECKS)
            .filter(|&u| BatchMeans::checks_at(u))
            .collect();
        assert_eq!(due, [10, 20, 40]);
    }

    #[test]
    fn the_half_width_is_the_hand_computed_batch_means_interval() {
        // Ten batches of two units each: sums 10, 12, 11, 13, 9 twice.
        // Mean 11; squared deviations 10 twice, so s² = 20 / 9; the
        // standard error sqrt(20 / 9 / 10) = 0.4714045; times t(0.975, 9) =
        // 2.2621572 gives 1.0663968, over the mean 0.0969452.
        let units = [5, 5, 6, 6, 5, 6, 7, 6, 4, 5].repeat(2);
        let w = relative_half_width(&units).unwrap();
        assert!((w - 0.096_945_2).abs() < 1e-6, "{w}");
        assert!(BatchMeans { half_width: 0.1 }.is_met(&units));
        assert!(!BatchMeans { half_width: 0.09 }.is_met(&units));
    }

    /// Units of a throughput of 100 ops with a known spread: a
    /// deterministic sequence of deviations of up to `spread` either side.
    fn noisy_units(spread: u64) -> Vec<u64> {
        let mut state = 12_345u64;
        (0..BATCHES << CHECKS)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                100 - spread + (state >> 33) % (2 * spread + 1)
            })
            .collect()
    }

    /// The units a run with `rule` counts before it ends, over `units`.
    fn run_length(rule: BatchMeans, units: &[u64]) -> usize {
        (1..=units.len())
            .find(|&n| rule.stops_after(&units[..n]))
            .unwrap_or(units.len())
    }

    #[test]
    fn a_figure_of_known_spread_stops_sooner_with_a_looser_target_and_never_past_the_window() {
        let units = noisy_units(40);
        let loose = run_length(BatchMeans { half_width: 0.125 }, &units);
        let middling = run_length(BatchMeans { half_width: 0.09 }, &units);
        let tight = run_length(BatchMeans { half_width: 0.001 }, &units);
        assert_eq!((loose, middling), (BATCHES, 4 * BATCHES));
        // Never met, the run takes its whole window and no more.
        assert_eq!(tight, BATCHES << CHECKS);
        // A steadier figure meets the same target sooner.
        let steadier = run_length(BatchMeans { half_width: 0.09 }, &noisy_units(10));
        assert!(steadier < middling, "{steadier} {middling}");
    }

    #[test]
    fn too_few_units_or_nothing_counted_never_stop_a_run() {
        let rule = BatchMeans { half_width: 0.5 };
        assert!(!rule.is_met(&[3; BATCHES - 1]));
        assert!(!rule.is_met(&[0; BATCHES]));
        assert_eq!(BatchMeans::unit(79), None);
        assert_eq!(BatchMeans::unit(80), Some(1));
    }
}
