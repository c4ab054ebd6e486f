//! Gunther's Universal Scalability Law fitted to a scaling curve
//! (docs/references.md §4): X(N) = lambda N / (1 + alpha (N-1) + beta N (N-1)).
//! alpha is contention (serialization), beta coherency: the cost of lines
//! bouncing between caches, which grows with every pair of CPUs.

/// A fitted curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usl {
    /// Throughput of one CPU, in the unit of the fitted X.
    pub lambda: f64,
    pub alpha: f64,
    pub beta: f64,
    /// Coefficient of determination of the fit on X.
    pub r_squared: f64,
}

impl Usl {
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.alpha * (n - 1.0) + self.beta * n * (n - 1.0))
    }

    /// The N of peak throughput, sqrt((1 - alpha) / beta); None when the
    /// curve never turns down.
    pub fn peak(&self) -> Option<f64> {
        (self.beta > 0.0 && self.alpha < 1.0).then(|| ((1.0 - self.alpha) / self.beta).sqrt())
    }

    /// Why the fit does not describe the curve physically: a negative
    /// contention or coherency coefficient means the curve bends the other
    /// way (superlinear, or noise), and the fitted law does not apply.
    pub fn caveat(&self) -> Option<&'static str> {
        match (self.alpha < 0.0, self.beta < 0.0) {
            (true, true) => Some("negative alpha and beta: not the USL's shape"),
            (true, false) => Some("negative alpha: superlinear, not contention"),
            (false, true) => Some("negative beta: no coherency cost, not the USL's shape"),
            (false, false) => None,
        }
    }
}

/// Distinct N a fit needs: three parameters.
pub const MIN_POINTS: usize = 3;

/// Why a curve has no fit, as the report states it in the fit's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitFailure {
    /// Fewer than [`MIN_POINTS`] distinct thread counts.
    TooFewThreadCounts,
    /// A run with no throughput (or fewer than one thread): N/X is undefined.
    NoThroughput,
    /// The least-squares system is singular, or its solution gives a
    /// throughput of one CPU that is not positive.
    Degenerate,
}

impl std::fmt::Display for FitFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            FitFailure::TooFewThreadCounts => {
                write!(f, "not fitted: needs {MIN_POINTS} thread counts")
            }
            FitFailure::NoThroughput => write!(f, "fit failed: a run with no throughput"),
            FitFailure::Degenerate => {
                write!(f, "fit failed: degenerate (no positive one-CPU throughput)")
            }
        }
    }
}

/// Least-squares fit over (N, X) samples, X > 0. N/X is linear in the
/// parameters: N/X = a + b (N-1) + c N (N-1) with a = 1/lambda,
/// b = alpha/lambda, c = beta/lambda, so the fit is one linear least-squares
/// solve.
pub fn fit(samples: &[(f64, f64)]) -> Result<Usl, FitFailure> {
    let mut distinct: Vec<f64> = samples.iter().map(|s| s.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < MIN_POINTS {
        return Err(FitFailure::TooFewThreadCounts);
    }
    if samples.iter().any(|&(n, x)| n < 1.0 || x <= 0.0) {
        return Err(FitFailure::NoThroughput);
    }
    let basis = |n: f64| [1.0, n - 1.0, n * (n - 1.0)];
    // Columns differ by orders of magnitude (1 against N^2): scale each to
    // at most 1 so the normal equations stay well conditioned.
    let mut scale = [0.0f64; 3];
    for &(n, _) in samples {
        for (s, v) in scale.iter_mut().zip(basis(n)) {
            *s = s.max(v.abs());
        }
    }
    let mut normal = [[0.0f64; 4]; 3];
    for &(n, x) in samples {
        let row = basis(n);
        let y = n / x;
        for i in 0..3 {
            for j in 0..3 {
                normal[i][j] += row[i] / scale[i] * row[j] / scale[j];
            }
            normal[i][3] += row[i] / scale[i] * y;
        }
    }
    let mut solved = solve3(normal).ok_or(FitFailure::Degenerate)?;
    // Scaled terms a billion times smaller than the constant one are the
    // solve's rounding, not contention: a straight line has no peak.
    for i in 1..3 {
        if solved[i].abs() < 1e-9 * solved[0].abs() {
            solved[i] = 0.0;
        }
    }
    let [a, b, c] = [0, 1, 2].map(|i| solved[i] / scale[i]);
    if a <= 0.0 {
        return Err(FitFailure::Degenerate);
    }
    let usl = Usl {
        lambda: 1.0 / a,
        alpha: b / a,
        beta: c / a,
        r_squared: 0.0,
    };
    let mean = samples.iter().map(|s| s.1).sum::<f64>() / samples.len() as f64;
    let total: f64 = samples.iter().map(|s| (s.1 - mean).powi(2)).sum();
    let residual: f64 = samples
        .iter()
        .map(|&(n, x)| (x - usl.throughput(n)).powi(2))
        .sum();
    Ok(Usl {
        r_squared: if total > 0.0 {
            1.0 - residual / total
        } else {
            1.0
        },
        ..usl
    })
}

/// Gaussian elimination with partial pivoting on an augmented 3x4 system.
fn solve3(mut m: [[f64; 4]; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        for row in col + 1..3 {
            let f = m[row][col] / m[col][col];
            let pivot_row = m[col];
            for (value, above) in m[row].iter_mut().zip(pivot_row).skip(col) {
                *value -= f * above;
            }
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let known: f64 = (row + 1..3).map(|k| m[row][k] * x[k]).sum();
        x[row] = (m[row][3] - known) / m[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_the_parameters_of_an_exact_curve() {
        let truth = Usl {
            lambda: 2.5e6,
            alpha: 0.03,
            beta: 2e-4,
            r_squared: 1.0,
        };
        let samples: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
            .iter()
            .map(|&n| (n, truth.throughput(n)))
            .collect();
        let fit = fit(&samples).unwrap();
        assert!((fit.lambda / truth.lambda - 1.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.alpha - truth.alpha).abs() < 1e-9);
        assert!((fit.beta - truth.beta).abs() < 1e-12);
        assert!((fit.r_squared - 1.0).abs() < 1e-9);
        // sqrt(0.97 / 2e-4) ~ 69.6 CPUs.
        assert!((fit.peak().unwrap() - 69.64).abs() < 0.01);
    }

    #[test]
    fn linear_scaling_has_no_peak() {
        let samples: Vec<(f64, f64)> = (1..=6).map(|n| (n as f64, 1e6 * n as f64)).collect();
        let fit = fit(&samples).unwrap();
        assert!(fit.alpha.abs() < 1e-9 && fit.beta.abs() < 1e-12, "{fit:?}");
        assert_eq!(fit.peak(), None);
    }

    #[test]
    fn a_superlinear_curve_is_flagged_not_taken_for_contention() {
        // Throughput growing faster than N: the fit needs a negative alpha.
        let samples: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&n: &f64| (n, 1e6 * n.powf(1.3)))
            .collect();
        let fit = fit(&samples).unwrap();
        assert!(fit.alpha < 0.0 || fit.beta < 0.0, "{fit:?}");
        assert!(fit.caveat().unwrap().starts_with("negative"));
        let linear: Vec<(f64, f64)> = (1..=6).map(|n| (n as f64, 1e6 * n as f64)).collect();
        assert_eq!(super::fit(&linear).unwrap().caveat(), None);
    }

    #[test]
    fn a_curve_without_a_fit_says_why() {
        assert_eq!(
            fit(&[(2.0, 1.0), (4.0, 2.0), (4.0, 2.1)]),
            Err(FitFailure::TooFewThreadCounts)
        );
        assert_eq!(
            fit(&[(1.0, 1.0), (2.0, 0.0), (4.0, 2.0)]),
            Err(FitFailure::NoThroughput)
        );
        assert_eq!(
            FitFailure::TooFewThreadCounts.to_string(),
            "not fitted: needs 3 thread counts"
        );
    }
}
