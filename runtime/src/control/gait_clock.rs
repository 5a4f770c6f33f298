//! The clock of a gait played a whole cycle at a time and decided once or several times a
//! cycle: when its cycles start and when its decisions fall. The loop's stride steering and
//! an offline stride task both time their strides by it, so they cannot drift apart.
//!
//! Decisions fall on the gait's clock: every cycle's start is one, and the others follow at
//! whole decision periods into the cycle. A stride chosen mid-cycle joins its cycle where
//! the clock is; it does not restart it.

/// A clock of gait cycles from `first_cycle`, decided every `decision_period`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaitClock {
    /// The first cycle's start (s).
    pub first_cycle: f64,
    /// One gait cycle (s).
    pub cycle: f64,
    /// How often the stride is decided (s): the cycle, or a whole fraction of it.
    pub decision_period: f64,
}

impl GaitClock {
    /// The clock, refused where the cycle is not a finite positive time or the decision
    /// period does not divide it into a whole number of decisions.
    pub fn new(first_cycle: f64, cycle: f64, decision_period: f64) -> Result<Self, String> {
        if !first_cycle.is_finite() {
            return Err(format!("the first cycle's start must be finite, got {first_cycle}"));
        }
        if !(cycle.is_finite() && cycle > 0.0) {
            return Err(format!("the gait cycle must be finite and > 0 s, got {cycle}"));
        }
        let decisions = (cycle / decision_period).round();
        if !(decision_period.is_finite()
            && decision_period > 0.0
            && decisions >= 1.0
            && (decisions * decision_period - cycle).abs() <= 1e-9 * cycle)
        {
            return Err(format!(
                "the decision period must be the {cycle} s gait cycle or a whole fraction of it, got {decision_period}"
            ));
        }
        Ok(GaitClock { first_cycle, cycle, decision_period })
    }

    /// Refuses a planner's lead (how long before a decision its plan begins) that is not
    /// within the decision period and shorter than the cycle: the plan must be back by its
    /// decision.
    pub fn check_lead(&self, lead: f64) -> Result<(), String> {
        if lead.is_finite() && lead > 0.0 && lead < self.cycle && lead <= self.decision_period {
            Ok(())
        } else {
            Err(format!(
                "the planner's lead must be in (0, {} s] (the decision period, and shorter than the {} s cycle), got {lead}",
                self.decision_period, self.cycle
            ))
        }
    }

    /// Decisions in a cycle.
    pub fn decisions_per_cycle(&self) -> u64 {
        (self.cycle / self.decision_period).round() as u64
    }

    /// Whether decisions come more than once a cycle.
    pub fn several_a_cycle(&self) -> bool {
        self.decisions_per_cycle() > 1
    }

    /// The `k`-th decision (s), counting from 0 at the first cycle's start.
    pub fn decision(&self, k: u64) -> f64 {
        let per_cycle = self.decisions_per_cycle();
        self.first_cycle + (k / per_cycle) as f64 * self.cycle + (k % per_cycle) as f64 * self.decision_period
    }

    /// The last start of a cycle at or before `t` (s).
    pub fn cycle_start(&self, t: f64) -> f64 {
        gait_cycle_start(self.first_cycle, self.cycle, t)
    }
}

/// The last start of a gait cycle at or before `t` (s), on the clock of cycles of `cycle` s
/// one of which started at `start`: where a stride chosen at `t` joins its cycle. The
/// nanosecond's margin keeps a `t` computed to land on a cycle's start on it.
pub fn gait_cycle_start(start: f64, cycle: f64, t: f64) -> f64 {
    start + cycle * ((t - start) / cycle + 1e-9).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_fall_on_every_cycle_start_and_whole_periods_into_it() {
        let clock = GaitClock::new(1.0, 1.0, 0.25).unwrap();
        assert_eq!(clock.decisions_per_cycle(), 4);
        assert!(clock.several_a_cycle());
        let decisions: Vec<f64> = (0..9).map(|k| clock.decision(k)).collect();
        assert_eq!(decisions, [1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0]);
        // At 50 Hz on a 1 s cycle the 100th decision is the next cycle's start exactly,
        // not 100 periods' rounding away from it.
        let fine = GaitClock::new(1.0, 1.0, 0.02).unwrap();
        assert_eq!(fine.decision(50), 2.0);
        assert_eq!(fine.decision(5000), 101.0);
        assert!(!GaitClock::new(0.0, 1.0, 1.0).unwrap().several_a_cycle());
    }

    #[test]
    fn cycle_start_is_the_last_start_at_or_before() {
        let clock = GaitClock::new(1.0, 1.0, 0.02).unwrap();
        for (t, start) in [(1.0, 1.0), (1.98, 1.0), (2.0, 2.0), (2.0 - 1e-12, 2.0), (3.5, 3.0), (0.5, 0.0)] {
            assert_eq!(clock.cycle_start(t), start, "t = {t}");
        }
        // Every decision's cycle start is the start of the cycle it falls in.
        for k in 0..500 {
            let decision = clock.decision(k);
            assert_eq!(clock.cycle_start(decision), 1.0 + (k / 50) as f64, "decision {k}");
        }
        assert_eq!(gait_cycle_start(0.5, 2.0, 4.4), 2.5);
    }

    #[test]
    fn refuses_periods_that_do_not_divide_the_cycle_and_leads_past_the_period() {
        for (first, cycle, period) in [
            (f64::NAN, 1.0, 0.5),
            (0.0, 0.0, 0.5),
            (0.0, f64::INFINITY, 0.5),
            (0.0, 1.0, 0.3),
            (0.0, 1.0, 2.0),
            (0.0, 1.0, 0.0),
            (0.0, 1.0, -0.5),
            (0.0, 1.0, f64::NAN),
        ] {
            let refused = GaitClock::new(first, cycle, period);
            assert!(refused.is_err(), "({first}, {cycle}, {period}) accepted");
        }
        let message = GaitClock::new(0.0, 1.0, 0.3).unwrap_err();
        assert!(message.contains("whole fraction") && message.contains("0.3"), "{message}");
        let clock = GaitClock::new(0.0, 1.0, 0.25).unwrap();
        assert!(clock.check_lead(0.25).is_ok() && clock.check_lead(0.01).is_ok());
        for lead in [0.0, -0.1, 0.26, f64::NAN] {
            assert!(clock.check_lead(lead).is_err(), "lead {lead} accepted");
        }
        // Deciding once a cycle, the lead must still be shorter than the cycle.
        assert!(GaitClock::new(0.0, 1.0, 1.0).unwrap().check_lead(1.0).is_err());
    }
}
