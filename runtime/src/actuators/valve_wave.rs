//! The travelling valve wave of 001_6780a70913e94322 (eq 13): valve pair i is in state
//! S_i = sign(sin(omega t + beta_i) + phi), +1 when the chamber bending one way is open,
//! -1 when its antagonist is.

/// Eq 13 over a robot's valve pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValveWave {
    /// omega = 2 pi f (rad/s): the paper's figures give f in Hz.
    pub temporal_frequency: f64,
    /// beta_i = delay * i for valve pair i = 1, 2, ... (the paper's 2 pi / (N - 1)).
    pub delay: f64,
    /// phi: 0 keeps both states equally long (straight line), non-zero turns.
    pub offset: f64,
}

impl ValveWave {
    /// State of valve pair `i` (0-based, so i = 0 is the paper's pair 1) at time t: +1 or -1
    /// (sign(0) is taken as +1, a set of measure zero).
    #[inline]
    pub fn state(&self, t: f64, i: usize) -> f64 {
        let beta = self.delay * (i + 1) as f64;
        if (self.temporal_frequency * t + beta).sin() + self.offset >= 0.0 {
            1.0
        } else {
            -1.0
        }
    }

    /// Period 2 pi / omega (s).
    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.temporal_frequency.abs()
    }

    /// Checks every setting finite and in its range.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in
            [("temporal frequency", self.temporal_frequency), ("delay", self.delay), ("offset", self.offset)]
        {
            if !v.is_finite() {
                return Err(format!("valve wave {name} must be finite, got {v}"));
            }
        }
        if self.temporal_frequency == 0.0 {
            return Err("valve wave temporal frequency must be non-zero".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{PI, TAU};

    fn fraction_open(wave: &ValveWave, i: usize) -> f64 {
        let samples = 200_000;
        let period = wave.period();
        (0..samples).filter(|k| wave.state(period * (*k as f64 + 0.5) / samples as f64, i) > 0.0).count() as f64
            / samples as f64
    }

    /// Seed notes T2: states are +-1, the period is 1/f, neighbours are a quarter period
    /// apart, and the open fraction is 1/2 at phi = 0 and 0.6310 at phi = 0.4.
    #[test]
    fn eq_13_timing() {
        let f = 1.5;
        let wave = ValveWave { temporal_frequency: TAU * f, delay: TAU / 4.0, offset: 0.0 };
        assert!((wave.period() - 1.0 / f).abs() < 1e-15);
        for k in 0..1000 {
            let t = 0.001 * k as f64;
            for i in 0..4 {
                let s = wave.state(t, i);
                assert!(s == 1.0 || s == -1.0);
                assert_eq!(s, wave.state(t + wave.period(), i), "periodic");
                // Pair i + 1 leads pair i by a quarter period (beta grows with i).
                if i < 3 {
                    assert_eq!(wave.state(t, i + 1), wave.state(t + wave.period() / 4.0, i), "t = {t}, i = {i}");
                }
            }
        }
        assert!((fraction_open(&wave, 0) - 0.5).abs() < 1e-3);
        let turning = ValveWave { offset: 0.4, ..wave };
        let expected = 0.5 + (0.4_f64).asin() / PI;
        assert!((expected - 0.6310).abs() < 1e-4);
        for i in 0..4 {
            assert!((fraction_open(&turning, i) - expected).abs() < 1e-3);
        }
    }

    #[test]
    fn bad_values_are_named() {
        let e = ValveWave { temporal_frequency: 0.0, delay: 1.0, offset: 0.0 }.validate().unwrap_err();
        assert!(e.contains("frequency"), "{e}");
        let e = ValveWave { temporal_frequency: 1.0, delay: f64::NAN, offset: 0.0 }.validate().unwrap_err();
        assert!(e.contains("delay"), "{e}");
    }
}
