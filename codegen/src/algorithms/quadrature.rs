//! Gauss-Legendre quadrature on [0, 1]: the nodes where a soft section's slices sit and
//! their weights (the share of the section's mass each carries).

/// Gauss-Legendre nodes and weights on [0, 1] (Newton on the Legendre polynomial).
pub fn gauss_legendre(order: usize) -> Vec<(f64, f64)> {
    let n = order;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut derivative = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let (p, pm1) = if n == 0 {
                (1.0, 0.0)
            } else if n == 1 {
                (x, 1.0)
            } else {
                (p1, p0)
            };
            derivative = n as f64 * (x * p - pm1) / (x * x - 1.0);
            let step = p / derivative;
            x -= step;
            if step.abs() < 1e-16 {
                break;
            }
        }
        let weight = 2.0 / ((1.0 - x * x) * derivative * derivative);
        out.push((0.5 * (1.0 - x), 0.5 * weight));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::gauss_legendre;

    #[test]
    fn integrates_polynomials_of_degree_2n_minus_1_exactly() {
        for n in 1..=12 {
            let rule = gauss_legendre(n);
            assert_eq!(rule.len(), n);
            assert!((rule.iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-14);
            for degree in 0..2 * n {
                let integral: f64 = rule.iter().map(|(x, w)| w * x.powi(degree as i32)).sum();
                assert!(
                    (integral - 1.0 / (degree as f64 + 1.0)).abs() < 1e-14,
                    "order {n}, degree {degree}: {integral}"
                );
            }
            assert!(rule.windows(2).all(|p| p[0].0 < p[1].0) && rule.iter().all(|(x, _)| (0.0..=1.0).contains(x)));
        }
    }
}
