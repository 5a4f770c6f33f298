//! Sampling-based model-predictive planning shared by the planners that sample (the gait
//! sampler and the valve sampler): MPPI over three bounded parameters, its seedable
//! generator, and the settings every sampler checks.

use nalgebra::Vector2;

/// Most rollouts per plan.
pub const MAX_SAMPLES: usize = 4096;
/// Most model steps per plan (rollouts x horizon / step): 32 rollouts of 1 s at 2 ms are
/// 16,000 and take about 20 ms; 1e7 would take seconds.
pub const MAX_PLAN_STEPS: f64 = 1e7;

/// The settings every sampling planner shares, checked: rollouts per plan, rollout length
/// and step (and the plan's model steps within [`MAX_PLAN_STEPS`]), temperature, terminal
/// heading weight, goal.
pub(crate) fn validate_sampling(
    samples: usize,
    (horizon, step): (f64, f64),
    temperature: f64,
    heading_weight: f64,
    goal: Vector2<f64>,
) -> Result<(), String> {
    if !(2..=MAX_SAMPLES).contains(&samples) {
        return Err(format!("planner samples must be in 2..={MAX_SAMPLES}, got {samples}"));
    }
    if !(horizon.is_finite() && horizon > 0.0) {
        return Err(format!("planner horizon must be > 0 s, got {horizon}"));
    }
    if !(step.is_finite() && step > 0.0 && step <= horizon) {
        return Err(format!("planner step must be in (0, horizon], got {step}"));
    }
    let steps = horizon / step;
    if steps * samples as f64 > MAX_PLAN_STEPS {
        return Err(format!(
            "a plan of {samples} rollouts x {steps:.3e} steps (horizon / step) is more than {MAX_PLAN_STEPS:.0e} model steps: it could not re-plan in time"
        ));
    }
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(format!("planner temperature must be > 0, got {temperature}"));
    }
    if !(heading_weight.is_finite() && heading_weight >= 0.0) {
        return Err(format!("planner heading weight must be finite and >= 0, got {heading_weight}"));
    }
    if !(goal.x.is_finite() && goal.y.is_finite()) {
        return Err(format!("goal must be finite, got ({}, {})", goal.x, goal.y));
    }
    Ok(())
}

/// A sampled planner's three parameters, checked: each perturbation's standard deviation
/// finite and >= 0, each bound finite and min <= max.
pub(crate) fn validate_parameters(
    names: [&str; 3],
    (noise, min, max): ([f64; 3], [f64; 3], [f64; 3]),
) -> Result<(), String> {
    for i in 0..3 {
        if !(noise[i].is_finite() && noise[i] >= 0.0) {
            return Err(format!("planner noise of the {} must be finite and >= 0, got {}", names[i], noise[i]));
        }
        if !(min[i].is_finite() && max[i].is_finite() && min[i] <= max[i]) {
            return Err(format!("planner bounds of the {}: [{}, {}] is not an interval", names[i], min[i], max[i]));
        }
    }
    Ok(())
}

/// SplitMix64: a small, fast, seedable generator; the planner needs no more.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// MPPI over three bounded parameters, shared by the planners that sample: each plan rolls
/// out the current mean and perturbations of it (normal, clamped to the bounds) and moves the
/// mean to their cost-weighted average, the weights exp(-(cost - best) / lambda) with lambda
/// the temperature times the costs' spread.
#[derive(Clone, Debug)]
pub(crate) struct ParameterSampler {
    pub(crate) noise: [f64; 3],
    pub(crate) min: [f64; 3],
    pub(crate) max: [f64; 3],
    pub(crate) temperature: f64,
    /// The parameters the last plan chose.
    pub(crate) mean: [f64; 3],
    rng: SplitMix64,
    candidates: Vec<[f64; 3]>,
    costs: Vec<f64>,
}

/// What one sampled plan found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SampledPlan {
    /// Cost of the best rollout.
    pub(crate) best_cost: f64,
    /// Cost of the rollout of the previous mean.
    pub(crate) nominal_cost: f64,
    /// Rollouts that failed or cost a non-finite amount; they get no weight.
    pub(crate) failed: usize,
}

impl ParameterSampler {
    /// A sampler of `samples` rollouts a plan whose first mean is `initial`, clamped.
    pub(crate) fn new(
        samples: usize,
        (noise, min, max): ([f64; 3], [f64; 3], [f64; 3]),
        temperature: f64,
        seed: u64,
        initial: [f64; 3],
    ) -> Self {
        let mut sampler = ParameterSampler {
            noise,
            min,
            max,
            temperature,
            mean: initial,
            rng: SplitMix64(seed),
            candidates: vec![[0.0; 3]; samples],
            costs: vec![0.0; samples],
        };
        sampler.mean = sampler.clamp(initial);
        sampler
    }

    pub(crate) fn clamp(&self, p: [f64; 3]) -> [f64; 3] {
        std::array::from_fn(|i| p[i].clamp(self.min[i], self.max[i]))
    }

    /// One plan: the mean and its perturbations rolled out by `rollout`, the mean moved to
    /// their cost-weighted average (kept where every rollout failed).
    pub(crate) fn plan<E>(&mut self, mut rollout: impl FnMut([f64; 3]) -> Result<f64, E>) -> SampledPlan {
        let mean = self.mean;
        let samples = self.candidates.len();
        self.candidates[0] = mean;
        for k in 1..samples {
            let perturbed: [f64; 3] = std::array::from_fn(|i| mean[i] + self.noise[i] * self.rng.normal());
            self.candidates[k] = self.clamp(perturbed);
        }
        let mut failed = 0;
        for k in 0..samples {
            self.costs[k] = match rollout(self.candidates[k]) {
                Ok(cost) if cost.is_finite() => cost,
                _ => {
                    failed += 1;
                    f64::INFINITY
                }
            };
        }
        let finite = self.costs.iter().filter(|c| c.is_finite());
        let best = finite.clone().fold(f64::INFINITY, |a, &b| a.min(b));
        let count = finite.clone().count();
        let nominal_cost = self.costs[0];
        if count > 0 {
            let average = finite.sum::<f64>() / count as f64;
            // Temperature scaled by the spread, so the weighting does not depend on the
            // cost's units or on how far the goal still is.
            let lambda = self.temperature * (average - best).max(1e-12);
            let mut total = 0.0;
            let mut weighted = [0.0; 3];
            for (candidate, cost) in self.candidates.iter().zip(&self.costs) {
                if !cost.is_finite() {
                    continue;
                }
                let w = (-(cost - best) / lambda).exp();
                total += w;
                for i in 0..3 {
                    weighted[i] += w * candidate[i];
                }
            }
            self.mean = self.clamp(std::array::from_fn(|i| weighted[i] / total));
        }
        SampledPlan { best_cost: best, nominal_cost, failed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_samples_have_unit_variance() {
        let mut rng = SplitMix64(7);
        let n = 100_000;
        let samples: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let variance = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((variance - 1.0).abs() < 0.02, "{variance}");
    }
}
