//! Hardware runs: controller -> safety filter -> channel map -> device, at a fixed rate,
//! with the safe state sent on every way out (end, fault, signal, panic).

use crate::hardware::actuation::{ActuatorCommand, Channel, DeviceValue};
use crate::hardware::device::Device;
use crate::hardware::realtime::{run_fixed_rate, LoopConfig, LoopOutcome};
use crate::hardware::safety::{SafetyFault, SafetyFilter, SafetyLimits};
use std::sync::atomic::AtomicUsize;

/// The channels of a run and the safety filter in front of them. Buffers are sized once
/// here, so `send` does not allocate.
pub struct OutputChain {
    /// Each actuator's output, in the actuators' order.
    pub channels: Vec<Channel>,
    /// The safety filter every command passes.
    pub filter: SafetyFilter,
    values: Vec<DeviceValue>,
    safe: Vec<DeviceValue>,
}

impl OutputChain {
    /// The chain of `channels` behind a filter with `limits`.
    pub fn new(channels: Vec<Channel>, limits: SafetyLimits) -> Result<Self, String> {
        let filter = SafetyFilter::new(limits, channels.len())?;
        let safe: Vec<DeviceValue> = channels.iter().filter_map(Channel::safe_value).collect();
        let values = Vec::with_capacity(channels.len());
        Ok(OutputChain { channels, filter, values, safe })
    }

    /// Filters `commands` (one per channel) and writes the resulting values to `device`.
    pub fn send(
        &mut self,
        device: &mut dyn Device,
        t: f64,
        dt: f64,
        commands: &[ActuatorCommand],
    ) -> Result<(), SafetyFault> {
        if commands.len() != self.channels.len() {
            return Err(SafetyFault::Controller(format!(
                "{} commands for {} channels",
                commands.len(),
                self.channels.len()
            )));
        }
        self.values.clear();
        for (i, (channel, command)) in self.channels.iter().zip(commands).enumerate() {
            // Muscle extensions become pressures first, so the ceiling applies in bar.
            let physical = match (channel, *command) {
                (Channel::PressureRegulator { extension: Some(map), .. }, ActuatorCommand::MuscleExtension(m)) => {
                    ActuatorCommand::Pressure(map.pressure(m))
                }
                (_, c) => c,
            };
            let safe = self.filter.apply(i, physical, dt)?;
            let value = channel.device_value(safe).map_err(|e| SafetyFault::Controller(e.0))?;
            self.values.push(value);
        }
        device.write(t, &self.values).map_err(|e| SafetyFault::Device(e.0))
    }

    /// Puts every output in its safe state and flushes the device.
    pub fn safe_state(&mut self, device: &mut dyn Device, t: f64) -> Result<(), SafetyFault> {
        let written = device.write(t, &self.safe);
        let flushed = device.flush();
        written.and(flushed).map_err(|e| SafetyFault::Device(e.0))
    }
}

/// Sends the safe state when dropped, so a panic in a controller still leaves the outputs safe.
struct SafeOnDrop<'a> {
    chain: &'a mut OutputChain,
    device: &'a mut dyn Device,
    time: f64,
    done: bool,
}

impl Drop for SafeOnDrop<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.chain.safe_state(self.device, self.time);
        }
    }
}

/// Runs `controller(t, commands)` at the configured rate through `chain` into `device`.
/// Whatever ends the run, the device receives the safe state last. Returns the loop's
/// statistics, the fault that ended it (if any), and a fault from sending the safe state.
pub fn run_hardware(
    config: &LoopConfig,
    chain: &mut OutputChain,
    device: &mut dyn Device,
    stop: &AtomicUsize,
    mut controller: impl FnMut(f64, &mut [ActuatorCommand]) -> Result<(), String>,
) -> (LoopOutcome, Result<(), SafetyFault>) {
    let dt = 1.0 / config.rate_hz;
    let mut commands = vec![ActuatorCommand::Valve(false); chain.channels.len()];
    let mut guard = SafeOnDrop { chain, device, time: 0.0, done: false };
    let outcome = run_fixed_rate(config, stop, |_, t| {
        // The safe state, if it comes, takes the next period's slot.
        guard.time = t + dt;
        controller(t, &mut commands).map_err(SafetyFault::Controller)?;
        guard.chain.send(guard.device, t, dt, &commands)
    });
    let safe = guard.chain.safe_state(guard.device, guard.time);
    guard.done = true;
    (outcome, safe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::actuation::PressureMap;
    use crate::hardware::device::DeviceError;

    #[derive(Default)]
    struct Log(Vec<(f64, Vec<DeviceValue>)>);
    impl Device for Log {
        fn name(&self) -> &str {
            "log"
        }
        fn write(&mut self, t: f64, values: &[DeviceValue]) -> Result<(), DeviceError> {
            self.0.push((t, values.to_vec()));
            if t > 0.0095 {
                return Err(DeviceError("board stopped answering".into()));
            }
            Ok(())
        }
    }

    fn chain() -> OutputChain {
        let regulator = |channel| Channel::PressureRegulator {
            channel,
            map: PressureMap::Linear { full_scale_bar: 5.0, volts_min: 0.0, volts_max: 10.0 },
            extension: None,
        };
        OutputChain::new(
            vec![regulator(0), regulator(1), Channel::Valve { line: 4, active_high: true }],
            SafetyLimits::default(),
        )
        .unwrap()
    }

    #[test]
    fn device_error_ends_the_run_in_the_safe_state() {
        let mut chain = chain();
        let mut device = Log::default();
        let config = LoopConfig { rate_hz: 1000.0, duration: 1.0, command_timeout: 1.0 };
        let stop = AtomicUsize::new(0);
        let (outcome, _) = run_hardware(&config, &mut chain, &mut device, &stop, |t, c| {
            c[0] = ActuatorCommand::Pressure(10.0 * t);
            c[1] = ActuatorCommand::Pressure(9.0);
            c[2] = ActuatorCommand::Valve(true);
            Ok(())
        });
        assert_eq!(outcome.fault, Some(SafetyFault::Device("board stopped answering".into())));
        let (_, last) = device.0.last().unwrap();
        assert_eq!(
            last,
            &vec![
                DeviceValue::Analog { channel: 0, volts: 0.0 },
                DeviceValue::Analog { channel: 1, volts: 0.0 },
                DeviceValue::Digital { line: 4, high: false }
            ]
        );
        // Never above 3 bar = 6 V on a 5 bar / 10 V regulator.
        assert!(device.0.iter().flat_map(|(_, v)| v).all(|v| v.number() <= 6.0 + 1e-12));
    }

    #[test]
    fn nan_from_the_controller_never_reaches_the_device() {
        let mut chain = chain();
        let mut device = Log::default();
        let config = LoopConfig { rate_hz: 1000.0, duration: 0.005, command_timeout: 1.0 };
        let stop = AtomicUsize::new(0);
        let (outcome, safe) = run_hardware(&config, &mut chain, &mut device, &stop, |t, c| {
            c[0] = ActuatorCommand::Pressure(if t > 0.002 { f64::NAN } else { 1.0 });
            c[1] = ActuatorCommand::Pressure(1.0);
            c[2] = ActuatorCommand::Valve(false);
            Ok(())
        });
        assert_eq!(outcome.fault, Some(SafetyFault::NonFinite { actuator: 0 }));
        assert!(safe.is_ok());
        assert!(device.0.iter().flat_map(|(_, v)| v).all(|v| v.number().is_finite()));
        assert_eq!(device.0.last().unwrap().1[0], DeviceValue::Analog { channel: 0, volts: 0.0 });
    }
}
