//! The Stumpff functions c_0 .. c_8, the entire functions in which every constant-curvature
//! section's pose and its derivatives are written, so that generated soft-robot code is finite
//! and smooth through the straight pose.
//!
//! c_k(s) = sum_j (-s)^j / (2j + k)!; with u = sqrt(s): c_0 = cos u, c_1 = sin u / u,
//! c_2 = (1 - cos u) / u^2, c_3 = (u - sin u) / u^3. They satisfy c_k = 1 / k! - s c_(k+2) and
//! close under differentiation: dc_k / ds = (k c_(k+2) - c_(k+1)) / 2, which is how codegen
//! differentiates a section's pose symbolically without ever dividing by its curvature.

/// Below this s the two highest functions come from their series and the rest by the
/// recurrence downward (stable there); above it from sin and cos and the recurrence upward,
/// which divides the error of c_1 by s three times on the way to c_7 (5e-14 of c_7 at the
/// switch). Generated equations use c_1 .. c_6, their derivatives c_7 and c_8.
const SERIES_BELOW: f64 = 2.25;
/// Terms of the series: the ninth of c_6 at s = 2.25 is below 1e-20 of its first.
const SERIES_TERMS: usize = 9;

/// How many functions one call evaluates: c_0 .. c_8.
pub const STUMPFF_FUNCTIONS: usize = 9;

/// 1 / k! for k = 0 .. 8.
const INVERSE_FACTORIALS: [f64; STUMPFF_FUNCTIONS] =
    [1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0];

/// The coefficients (-1)^j / (2j + k)! of c_k's series for j = 0 .. SERIES_TERMS - 1, as
/// constants, so that the series is a plain Horner polynomial in s: one multiply and one add
/// per term (the form with each term's ratio to the last took three operations per term and
/// a dependency chain half again as long; measured: the Stumpff functions are 3 % of rolling
/// the soft snake, 48 calls per cache).
const fn coefficients(k: usize) -> [f64; SERIES_TERMS] {
    let mut out = [0.0; SERIES_TERMS];
    // 1 / k!, then each next term's ratio: exact in f64 up to the factorials involved here
    // but for the last bit of the highest ones.
    let mut term = INVERSE_FACTORIALS[k];
    let mut j = 0;
    while j < SERIES_TERMS {
        out[j] = term;
        let n = (2 * j + k + 2) as f64;
        term = -term / (n * (n - 1.0));
        j += 1;
    }
    out
}
const COEFFICIENTS_7: [f64; SERIES_TERMS] = coefficients(7);
const COEFFICIENTS_8: [f64; SERIES_TERMS] = coefficients(8);

/// c_k(s) by its series, Horner from the highest term.
#[inline]
fn series(coefficients: &[f64; SERIES_TERMS], s: f64) -> f64 {
    let mut sum = coefficients[SERIES_TERMS - 1];
    for &coefficient in coefficients[..SERIES_TERMS - 1].iter().rev() {
        sum = sum * s + coefficient;
    }
    sum
}

/// [c_0(s), .., c_8(s)] for s >= 0 (s = theta^2 for a bending angle theta).
#[inline]
pub fn stumpff(s: f64) -> [f64; STUMPFF_FUNCTIONS] {
    let mut c = [0.0; STUMPFF_FUNCTIONS];
    if s < SERIES_BELOW {
        c[8] = series(&COEFFICIENTS_8, s);
        c[7] = series(&COEFFICIENTS_7, s);
        for k in (0..7).rev() {
            c[k] = INVERSE_FACTORIALS[k] - s * c[k + 2];
        }
    } else {
        let u = s.sqrt();
        let (sin, cos) = u.sin_cos();
        c[0] = cos;
        c[1] = sin / u;
        for k in 0..7 {
            c[k + 2] = (INVERSE_FACTORIALS[k] - c[k]) / s;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The series summed in extended steps (many terms, no recurrence).
    fn reference(k: usize, s: f64) -> f64 {
        let mut term = INVERSE_FACTORIALS[k];
        let mut sum = 0.0;
        for j in 0..60 {
            sum += term;
            let n = (2 * j + k + 2) as f64;
            term *= -s / (n * (n - 1.0));
        }
        sum
    }

    #[test]
    fn closed_forms_of_the_first_four() {
        // Away from 0, where the closed forms do not cancel (1 - cos u as 2 sin^2(u / 2)).
        for s in [0.5, 3.9, 4.0, 4.1, 9.0, 30.0] {
            let c = stumpff(s);
            let u: f64 = f64::sqrt(s);
            let exact = [u.cos(), u.sin() / u, 2.0 * (u / 2.0).sin().powi(2) / s, (u - u.sin()) / (s * u)];
            for k in 0..4 {
                assert!(
                    (c[k] - exact[k]).abs() < 1e-14 * exact[k].abs().max(1e-3),
                    "c{k}({s}) = {} vs {}",
                    c[k],
                    exact[k]
                );
            }
        }
        assert_eq!(stumpff(0.0), INVERSE_FACTORIALS);
    }

    #[test]
    fn every_function_matches_its_series_on_both_sides_of_the_switch() {
        for s in [0.0, 1e-8, 0.3, 1.0, 2.249_999, 2.25, 2.250_001, 4.0, 6.0, 9.0, 16.0] {
            let c = stumpff(s);
            for k in 0..STUMPFF_FUNCTIONS {
                let r = reference(k, s);
                assert!((c[k] - r).abs() <= 1e-13 * r.abs() + 1e-17, "c{k}({s}) = {:e} vs {:e}", c[k], r);
            }
        }
    }

    #[test]
    fn derivative_identity_holds() {
        // dc_k/ds = (k c_(k+2) - c_(k+1)) / 2, against central differences.
        for s in [0.2, 2.0, 4.0, 7.5] {
            let h = 1e-5;
            let (up, down, at) = (stumpff(s + h), stumpff(s - h), stumpff(s));
            for k in 0..7 {
                let numeric = (up[k] - down[k]) / (2.0 * h);
                let identity = (k as f64 * at[k + 2] - at[k + 1]) / 2.0;
                assert!((numeric - identity).abs() < 1e-9, "c{k}'({s}): {numeric} vs {identity}");
            }
        }
    }
}
