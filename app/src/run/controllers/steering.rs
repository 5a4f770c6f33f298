//! The one loop every planner's controller runs: a [`Steering`] driven period by period
//! beside its planner's thread, the state sensed for it, the last safe commands held after
//! an estimator fault, and the task's report.

use crate::run::estimation::EstimatorReport;
use crate::run::request::{MpcReport, RunReport};
use crate::run::sensing::{RunDevice, Sensing};
use crate::run::session::Run;
use nalgebra::SVector;
use softgen_runtime::{
    run_hardware, ActuatorCommand, EmulatingPlant, LoopConfig, Model, OutputChain, PlannerStats, Steering,
    SteeringLink, SteeringPhase, STOP_FINISHED,
};
use std::sync::atomic::Ordering;

/// A steered task's goal (in the ground plane; its height for robots that move in space)
/// and how far from it the robot started (m): what a steered run's report measures against.
pub(crate) struct SteeredTask {
    pub(crate) goal: nalgebra::Vector2<f64>,
    pub(crate) goal_height: Option<f64>,
    pub(crate) start_distance: f64,
}

/// A steered run, ended: the run's report, the plant's last coordinates (on the plant), the
/// estimator's report (where the state was estimated) and the task's.
pub(crate) struct SteeredRun<const N: usize> {
    pub(crate) run: RunReport,
    pub(crate) end: Option<SVector<f64, N>>,
    estimator: Option<EstimatorReport>,
    report: MpcReport,
}

impl<const N: usize> SteeredRun<N> {
    /// The run's report with its closing lines printed: the planner's and the goal's, then
    /// the estimator's where the state was estimated.
    pub(crate) fn report(self) -> RunReport {
        let mut run = self.run;
        self.report.print();
        if let Some(estimator_report) = self.estimator {
            println!("{}", estimator_report.line());
            run.estimator = Some(estimator_report);
        }
        run.mpc = Some(self.report);
        run
    }
}

impl Run<'_> {
    /// The real-time loop driving `steering` with its planner beside it in its own thread
    /// (`plan`, which returns once the link's `stop` is set), every controller's the same
    /// way: each period the state `sensing` gives (the plant's, or the estimator's) goes to
    /// the link for the planner, `steering` computes the commands, and after an estimator
    /// fault the last safe commands are held. The run ends when the task is finished, when
    /// the loop stops, or as a controller error when the planner thread stops early.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn steer<R: Model<N, C>, P: EmulatingPlant<R, N, C>, S: Steering<N>, const N: usize, const C: usize>(
        &self,
        loop_config: &LoopConfig,
        chain: &mut OutputChain,
        (mut device, mut sensing): (RunDevice<P>, Sensing<R, N, C>),
        link: &SteeringLink<N, S::Snapshot, S::Plan>,
        plan: impl FnOnce() -> PlannerStats + Send,
        steering: &mut S,
        task: SteeredTask,
    ) -> Result<SteeredRun<N>, String> {
        let period = 1.0 / loop_config.rate_hz;
        let stop = &*self.stop;
        let (outcome, safe, planner) = std::thread::scope(|scope| {
            let planner_thread = scope.spawn(plan);
            let controller = |t: f64, commands: &mut [ActuatorCommand]| -> Result<(), String> {
                if planner_thread.is_finished() {
                    return Err("the planner thread stopped".into());
                }
                let phase = match sensing.sense(t, &link.measured)? {
                    // An estimator fault: the last safe commands, held.
                    Some(held) => {
                        steering.hold(held, commands);
                        steering.progress().phase
                    }
                    None => {
                        let phase = steering.command(link, t, commands)?;
                        sensing.sent(commands, period)?;
                        phase
                    }
                };
                if let SteeringPhase::Finished { .. } = phase {
                    stop.store(STOP_FINISHED, Ordering::Relaxed);
                }
                Ok(())
            };
            let (outcome, safe) = run_hardware(loop_config, chain, &mut device, stop, controller);
            link.stop.store(true, Ordering::Relaxed);
            let planner = planner_thread.join().map_err(|_| "the planner thread panicked".to_string());
            (outcome, safe, planner)
        });
        let planner = planner?;
        let (run, end, estimator) = sensing.finish(device, outcome, safe, chain)?;
        let progress = steering.progress();
        let report = MpcReport {
            goal: task.goal,
            goal_height: task.goal_height,
            planner,
            plans_applied: progress.plans_applied,
            arrived_at: progress.phase.arrived_at(),
            held: matches!(progress.phase, SteeringPhase::Finished { .. }),
            final_distance: progress.distance,
            start_distance: task.start_distance,
        };
        Ok(SteeredRun { run, end, estimator, report })
    }
}
