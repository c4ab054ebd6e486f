//! An axis's ticks in human units: where the ticks go (round steps on a
//! linear axis, 1-2-5 per decade on a log one) and how each is written,
//! the unit (ns, µs, ms; k, M, G) and the decimals chosen from the axis's
//! magnitude and step, so that no two ticks read the same.
//!
//! The charts hand these ticks to plotters as the axis's key points, so the
//! labels a chart shows are exactly the ones chosen and tested here.

use super::summary::group_thousands;

/// What an axis measures, which decides the units its numbers take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A count or a rate: 850, 12k, 3.5M, 1.2G.
    Count,
    /// A time in nanoseconds: 850 ns, 12 µs, 3.5 ms, 1.2 s.
    Nanoseconds,
    /// A share or a per-op figure: decimals alone (0.0004, 2.5).
    Plain,
}

/// A power-of-a-thousand unit: its size and its written suffix.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Unit {
    size: f64,
    suffix: &'static str,
}

impl Quantity {
    /// The unit a value of `magnitude` is written in: the largest whose
    /// size is at most the magnitude.
    fn unit(self, magnitude: f64) -> Unit {
        let units: &[(f64, &'static str)] = match self {
            Quantity::Count => &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")],
            Quantity::Nanoseconds => &[(1e9, " s"), (1e6, " ms"), (1e3, " µs"), (1.0, " ns")],
            Quantity::Plain => &[(1.0, "")],
        };
        let (size, suffix) = units
            .iter()
            .copied()
            .find(|&(size, _)| magnitude.abs() >= size)
            .unwrap_or(units[units.len() - 1]);
        Unit { size, suffix }
    }

    /// A measured value to four significant digits in its own unit:
    /// "1.235M", "85.25 ns", "0.0001234".
    pub fn show(self, v: f64) -> String {
        let unit = self.unit(v);
        format!("{}{}", significant(v / unit.size, 4), unit.suffix)
    }

    /// A mean and the half width of its interval, both in the mean's unit
    /// and to the mean's decimals: "1.235M ± 0.046M".
    pub fn show_with_half_width(self, mean: f64, half_width: f64) -> String {
        let unit = self.unit(mean);
        let decimals = significant_decimals(mean / unit.size, 4);
        format!(
            "{:.*}{s} ± {:.*}{s}",
            decimals,
            mean / unit.size,
            decimals,
            half_width / unit.size,
            s = unit.suffix
        )
    }
}

/// Decimals that give `digits` significant digits to `v`.
pub fn significant_decimals(v: f64, digits: i32) -> usize {
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    (digits - 1 - v.abs().log10().floor() as i32).clamp(0, 12) as usize
}

fn significant(v: f64, digits: i32) -> String {
    format!("{v:.*}", significant_decimals(v, digits))
}

/// The ticks of one axis and the way each is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub values: Vec<f64>,
    /// One unit for the whole axis (linear), or None where each tick takes
    /// its own (log: 100k, 1M, 10M).
    unit: Option<Unit>,
    decimals: usize,
    quantity: Quantity,
}

/// About how many intervals a linear axis is cut into.
const LINEAR_INTERVALS: f64 = 6.0;

/// A round step, 1, 2 or 5 times a power of ten, with that power.
fn round_step(raw: f64) -> (f64, i32) {
    let power = raw.log10().floor() as i32;
    let magnitude = 10f64.powi(power);
    let mantissa = raw / magnitude;
    match mantissa {
        m if m <= 1.0 => (magnitude, power),
        m if m <= 2.0 => (2.0 * magnitude, power),
        m if m <= 5.0 => (5.0 * magnitude, power),
        _ => (10.0 * magnitude, power + 1),
    }
}

impl Ticks {
    /// Ticks from `lo` to `hi` at a round step, about six intervals, all in
    /// the unit of the larger end, with the decimals the step needs.
    pub fn linear(lo: f64, hi: f64, quantity: Quantity) -> Ticks {
        let span = hi - lo;
        let raw = span / LINEAR_INTERVALS;
        if !(span > 0.0 && raw.is_normal()) {
            let unit = quantity.unit(lo);
            let scaled = lo / unit.size;
            return Ticks {
                values: vec![lo],
                unit: Some(unit),
                decimals: if scaled.fract() == 0.0 {
                    0
                } else {
                    significant_decimals(scaled, 4)
                },
                quantity,
            };
        }
        let (step, power) = round_step(raw);
        let first = (lo / step - 1e-9).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        let values: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let unit = quantity.unit(lo.abs().max(hi.abs()));
        // The step is m * 10^power, m 1, 2 or 5: in a unit of 10^(3u) it
        // needs 3u - power decimals, and every tick is a multiple of it.
        let unit_power = unit.size.log10().round() as i32;
        Ticks {
            values,
            unit: Some(unit),
            decimals: (unit_power - power).max(0) as usize,
            quantity,
        }
    }

    /// Ticks on a log axis from `lo` to `hi`, both powers of ten: every
    /// power of ten, and 2 and 5 times each where the axis spans fewer
    /// than three decades; each tick in its own unit.
    pub fn log(lo: f64, hi: f64, quantity: Quantity) -> Ticks {
        let (first, last) = (lo.log10().round() as i32, hi.log10().round() as i32);
        let mantissas: &[f64] = if last - first < 3 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let values = (first..=last)
            .flat_map(|power| mantissas.iter().map(move |m| m * 10f64.powi(power)))
            .filter(|&v| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9))
            .collect();
        Ticks {
            values,
            unit: None,
            decimals: 0,
            quantity,
        }
    }

    /// Ticks at whole numbers from `lo` to `hi`, written whole: the round
    /// step of [`Ticks::linear`] where it is whole, else every whole number
    /// (a span under six).
    pub fn whole(lo: f64, hi: f64) -> Ticks {
        let linear = Ticks::linear(lo, hi, Quantity::Count);
        if linear.values.iter().all(|v| v.fract() == 0.0) {
            return Ticks::at_whole_numbers(linear.values);
        }
        Ticks::at_whole_numbers(
            (lo.ceil() as i64..=hi.floor() as i64)
                .map(|v| v as f64)
                .collect(),
        )
    }

    /// Ticks at the given places, written as whole numbers (thread counts,
    /// rows whose label is looked up by their place).
    pub fn at_whole_numbers(values: Vec<f64>) -> Ticks {
        Ticks {
            values,
            unit: Some(Unit {
                size: 1.0,
                suffix: "",
            }),
            decimals: 0,
            quantity: Quantity::Count,
        }
    }

    /// A tick as the axis writes it.
    pub fn label(&self, v: f64) -> String {
        match self.unit {
            Some(unit) => {
                let text = format!("{:.*}", self.decimals, v / unit.size);
                // -0.0 rounds to "-0"; a tick at zero reads "0".
                let text = if text
                    .trim_start_matches('-')
                    .trim_matches(['0', '.'])
                    .is_empty()
                {
                    "0".to_string()
                } else {
                    text
                };
                format!(
                    "{}{}",
                    group_thousands(&text),
                    if text == "0" { "" } else { unit.suffix }
                )
            }
            // A log tick is one significant digit times a power of ten.
            None => {
                let unit = self.quantity.unit(v);
                format!("{}{}", significant(v / unit.size, 1), unit.suffix)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tick's label, in order.
    fn labels(ticks: Ticks) -> Vec<String> {
        ticks.values.iter().map(|&v| ticks.label(v)).collect()
    }

    fn distinct(labels: &[String]) -> bool {
        let mut sorted = labels.to_vec();
        sorted.sort();
        sorted.dedup();
        sorted.len() == labels.len()
    }

    #[test]
    fn ticks_of_tiny_values_are_distinct_and_not_all_zero() {
        let tiny = labels(Ticks::linear(0.0001, 0.0009, Quantity::Plain));
        assert!(tiny.len() >= 3, "{tiny:?}");
        assert!(distinct(&tiny), "{tiny:?}");
        assert_eq!(tiny, ["0.0002", "0.0004", "0.0006", "0.0008"]);
        let from_zero = labels(Ticks::linear(0.0, 0.0009, Quantity::Plain));
        assert!(distinct(&from_zero), "{from_zero:?}");
        assert_eq!(from_zero[0], "0");
    }

    #[test]
    fn rates_take_k_and_m_by_their_magnitude() {
        assert_eq!(
            labels(Ticks::linear(0.0, 3_000_000.0, Quantity::Count)),
            ["0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M", "3.0M"]
        );
        assert_eq!(
            labels(Ticks::linear(0.0, 12_000.0, Quantity::Count)),
            ["0", "2k", "4k", "6k", "8k", "10k", "12k"]
        );
        assert_eq!(
            labels(Ticks::log(1e4, 1e7, Quantity::Count)),
            ["10k", "100k", "1M", "10M"]
        );
        assert_eq!(
            labels(Ticks::log(1e5, 1e6, Quantity::Count)),
            ["100k", "200k", "500k", "1M"]
        );
    }

    #[test]
    fn times_take_ns_us_or_ms_by_their_magnitude() {
        assert_eq!(
            labels(Ticks::linear(0.0, 60.0, Quantity::Nanoseconds)),
            ["0", "10 ns", "20 ns", "30 ns", "40 ns", "50 ns", "60 ns"]
        );
        assert_eq!(
            labels(Ticks::linear(0.0, 3_000.0, Quantity::Nanoseconds)),
            ["0", "0.5 µs", "1.0 µs", "1.5 µs", "2.0 µs", "2.5 µs", "3.0 µs"]
        );
        assert_eq!(Quantity::Nanoseconds.show(4_560_000.0), "4.560 ms");
    }

    #[test]
    fn every_range_gives_distinct_labels() {
        for quantity in [Quantity::Count, Quantity::Nanoseconds, Quantity::Plain] {
            for power in -12..12 {
                for top in [1.0, 1.3, 2.7, 4.9, 7.5, 9.99] {
                    let hi = top * 10f64.powi(power);
                    for lo in [0.0, hi / 9.0, hi * 0.98] {
                        let labels = labels(Ticks::linear(lo, hi, quantity));
                        assert!(distinct(&labels), "{lo}..{hi}: {labels:?}");
                        assert!(labels.len() >= 2, "{lo}..{hi}: {labels:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn whole_ticks_are_whole_and_grouped_in_thousands() {
        assert_eq!(labels(Ticks::whole(0.0, 3.0)), ["0", "1", "2", "3"]);
        assert_eq!(
            labels(Ticks::whole(1_900.0, 2_200.0)),
            ["1,900", "1,950", "2,000", "2,050", "2,100", "2,150", "2,200"]
        );
    }

    #[test]
    fn an_empty_range_has_one_tick() {
        assert_eq!(labels(Ticks::linear(5.0, 5.0, Quantity::Plain)), ["5"]);
    }

    #[test]
    fn a_mean_and_its_half_width_share_the_means_unit() {
        assert_eq!(
            Quantity::Count.show_with_half_width(1_234_567.0, 45_678.0),
            "1.235M ± 0.046M"
        );
        assert_eq!(
            Quantity::Nanoseconds.show_with_half_width(85.25, 3.0),
            "85.25 ns ± 3.00 ns"
        );
    }
}
