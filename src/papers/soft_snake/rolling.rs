//! The soft snake's experiments (000_a2f8bdeafcf4372f, section IV-C): dropped from 0.6 m,
//! settled on the carpet, then planar or spatial rolling driven by pressures through the
//! muscles' length-to-pressure map under a ceiling; integrated with ROS34PW2 on the
//! Jacobian assembled from generated pieces.

use super::gait::{PneumaticMuscles, RollingGait};
use nalgebra::{SVector, Vector3};
use softgen_generated::soft_snake::{
    centre_line_into, section_geometry, Params, CENTRE_LINE_POINTS, CONTACTS, DOF, SECTIONS, SOFT_SECTIONS,
};
use softgen_generated::SoftSnake;
use softgen_runtime::{
    FrictionAnisotropy, IntegrationError, Integrator, JointPd, Model, ParamSet, Rosenbrock34, SectionGeometry,
    Simulation, SimulationConfig, State, SystemJacobian, Tolerances,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Which rolling gait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rolling {
    /// All sections bend in one plane (phase shift 0).
    Planar,
    /// Adjacent sections' planes shifted by pi / 3.
    Spatial,
}

impl Rolling {
    /// The gait's name in file names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Rolling::Planar => "planar",
            Rolling::Spatial => "spatial",
        }
    }

    /// The travelling velocities (V_x, V_y, cm/s) Table I reports for this gait: the
    /// paper's model's, then the prototype's.
    pub fn table_one(self) -> ((f64, f64), (f64, f64)) {
        match self {
            Rolling::Planar => ((3.51, 9.39), (3.31, 9.01)),
            Rolling::Spatial => ((0.67, 7.77), (0.61, 7.12)),
        }
    }
}

/// A drop-then-roll run.
#[derive(Clone, Debug)]
pub struct RollingRun {
    /// The rolling gait: planar or spatial.
    pub rolling: Rolling,
    /// Time to fall and settle before the gait starts (s).
    pub settle: f64,
    /// Gait time (s).
    pub duration: f64,
    /// Turns of the bending plane per second (Hz).
    pub frequency: f64,
    /// Pressure ceiling (bar).
    pub ceiling: f64,
    /// Bend of every section (rad); `None`: the largest the ceiling allows (2.25 rad at
    /// 3 bar, which coils the body so that it spins in place).
    pub bend: Option<f64>,
    /// Friction regularisation (m/s).
    pub regularisation: f64,
    /// Friction coefficients along and across the direction `friction_anisotropy` names,
    /// and that direction; `None` keeps the spec's (0.6 along the body, 0.2 across).
    pub friction_along: Option<f64>,
    /// See `friction_along`.
    pub friction_across: Option<f64>,
    /// See `friction_along`.
    pub friction_anisotropy: Option<FrictionAnisotropy>,
    /// ROS34PW2 relative tolerance.
    pub tolerance: f64,
    /// Pressure update period (s).
    pub control_period: f64,
    /// Accepted ROS34PW2 steps between Jacobians.
    pub jacobian_every: usize,
    /// Which Jacobian ROS34PW2 gets: the stiff part (a W-method's) or the exact one.
    pub jacobian: SystemJacobian,
    /// Absolute tolerance as a fraction of the relative one.
    pub absolute_fraction: f64,
    /// Touchdowns located to this depth (m): a step that takes a point deeper ends at its
    /// touchdown instead (`Simulation::locate_contact_onsets`); `None` meets each touchdown
    /// inside a step.
    pub contact_onset_tolerance: Option<f64>,
    /// The carpet's normal damping d (N s/m) and Hunt-Crossley dissipation h (s/m)
    /// (`ContactLaw`); `None` keeps the spec's (eq 18, d = 130 N s/m, h = 0).
    pub contact_damping: Option<f64>,
    /// See `contact_damping`.
    pub contact_dissipation: Option<f64>,
    /// The robot's parameters.
    pub params: Params,
    /// Set non-zero (a signal's number) to end the run at the next control period.
    pub stop: Option<Arc<AtomicUsize>>,
}

impl RollingRun {
    /// The paper's experiment: 3 bar, 0.5 Hz, 15 s, after a 2 s drop from 0.6 m.
    pub fn new(rolling: Rolling) -> Self {
        RollingRun {
            rolling,
            settle: 2.0,
            duration: 15.0,
            frequency: 0.5,
            ceiling: 3.0,
            // 0.4 rad per section rolls in both gaits (a sweep: 0.2-0.4 rad roll, 1 rad and
            // more curl the body into a C whose local roll directions cancel).
            bend: Some(0.4),
            regularisation: 0.01,
            friction_along: None,
            friction_across: None,
            friction_anisotropy: None,
            tolerance: 1e-3,
            control_period: 0.01,
            // W-method: a lagged Jacobian keeps the order; measured fastest at 20 steps.
            jacobian_every: 20,
            // Measured against the exact Jacobian (README, "The simulated system's Jacobian").
            jacobian: SystemJacobian::Stiff,
            // Absolute tolerance 1e-4 (m, rad and their rates) at the default 1e-3.
            absolute_fraction: 1e-1,
            // 1 um, against 0.2 mm of penetration at rest on the carpet. Measured (right-hand
            // sides, roll planar): 1e-5 m 89,049, 1e-6 m 97,832, 1e-7 m 104,589; the
            // velocities are those of unlocated touchdowns to the printed digit.
            contact_onset_tolerance: Some(1e-6),
            contact_damping: None,
            contact_dissipation: None,
            params: Params::default(),
            stop: None,
        }
    }
}

/// One recorded sample.
#[derive(Clone, Debug)]
pub struct RollingSample {
    /// The sample's time (s).
    pub t: f64,
    /// The coordinates.
    pub q: SVector<f64, DOF>,
    /// The centre of mass (m).
    pub center_of_mass: Vector3<f64>,
    /// Points along the neutral axis (7 per section).
    pub neutral_axis: Vec<Vector3<f64>>,
    /// The nine muscles' pressures (bar).
    pub pressures: [f64; 9],
    /// Contact points touching the carpet.
    pub contacts: usize,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RollingSummary {
    /// The samples, in time order.
    pub samples: Vec<RollingSample>,
    /// Travelling velocity of the centre of mass, least squares over the gait after its
    /// ramp (cm/s); None when fewer than two samples follow the ramp (a run shorter than it).
    pub velocity_cm_s: Option<(f64, f64)>,
    /// When the gait's ramp ends and the velocity's window starts (s).
    pub window_start: f64,
    /// The sections' bend (rad).
    pub bend: f64,
    /// Right-hand sides evaluated.
    pub evaluations: usize,
    /// System Jacobians evaluated.
    pub jacobians: usize,
    /// Steps ROS34PW2 accepted and attempts it rejected.
    pub accepted: usize,
    /// See `accepted`.
    pub rejected: usize,
    /// Wall time of the run (s).
    pub wall_seconds: f64,
    /// The integration error that ended it early, if any.
    pub error: Option<IntegrationError>,
}

/// Cumulative roll of each section's mount about the body axis (the spec's rotations).
pub fn mount_rolls() -> [f64; SECTIONS] {
    let mut total = 0.0;
    std::array::from_fn(|i| {
        let m = SOFT_SECTIONS[i].mount;
        total += m[2][1].atan2(m[1][1]);
        total
    })
}

/// Every section's actuator geometry: the rolling gait drives three actuators per section.
pub fn geometries(p: &Params) -> Result<[SectionGeometry; SECTIONS], String> {
    let all = section_geometry(p);
    let mut out = [SectionGeometry { rest_length: 0.0, actuator_radius: 0.0, actuator_angles: [0.0; 3] }; SECTIONS];
    for (i, g) in all.iter().enumerate() {
        out[i] = g.ok_or_else(|| format!("soft section `{}` has no actuators to roll with", SOFT_SECTIONS[i].name))?;
    }
    Ok(out)
}

/// The soft snake on its carpet as `run` sets it (friction, control period), with no gait:
/// the caller sets the muscles' forces. Shared by the rolling runs and the rolling planner.
pub fn rolling_simulation(run: &RollingRun) -> Result<Simulation<SoftSnake, DOF, CONTACTS>, String> {
    let mut contact = SoftSnake::ENVIRONMENT.contact_law();
    contact.friction.regularisation = run.regularisation;
    contact.friction.along = run.friction_along.unwrap_or(contact.friction.along);
    contact.friction.across = run.friction_across.unwrap_or(contact.friction.across);
    contact.friction.anisotropy = run.friction_anisotropy.unwrap_or(contact.friction.anisotropy);
    contact.damping = run.contact_damping.unwrap_or(contact.damping);
    contact.dissipation = run.contact_dissipation.unwrap_or(contact.dissipation);
    run.params.check().map_err(|e| format!("parameters: {e}"))?;
    let config = SimulationConfig {
        contact,
        terrain: SoftSnake::ENVIRONMENT.terrain,
        gait: None,
        servo: JointPd { stiffness: 0.0, damping: 0.0, torque_limit: 0.0 },
        admittance: None,
        control_period: run.control_period,
    };
    Simulation::<SoftSnake, DOF, CONTACTS>::new(run.params.clone(), config)
}

/// The muscles' length-to-pressure-to-force map under `run`'s ceiling, checked against
/// their rating.
pub fn rolling_muscles(run: &RollingRun) -> Result<PneumaticMuscles, String> {
    let p = &run.params;
    let muscles = PneumaticMuscles {
        metres_per_bar: p.pma_metres_per_bar,
        area: p.pma_area,
        ceiling: run.ceiling,
        rated: p.pma_rated_pressure,
    };
    muscles.validate().map_err(|e| format!("{e} (`pma_rated_pressure` of the soft snake's spec)"))?;
    Ok(muscles)
}

/// The rolling runs' plant: the simulation with touchdowns located as `run` asks, and its
/// ROS34PW2 integrator at `run`'s tolerances and Jacobian.
pub fn rolling_plant(run: &RollingRun) -> Result<(Simulation<SoftSnake, DOF, CONTACTS>, Rosenbrock34<DOF>), String> {
    let mut sim = rolling_simulation(run)?;
    if let Some(tolerance) = run.contact_onset_tolerance {
        sim.locate_contact_onsets(tolerance)?;
    }
    sim.use_jacobian(run.jacobian);
    let mut ros = Rosenbrock34::<DOF>::new(Tolerances {
        absolute: run.tolerance * run.absolute_fraction,
        relative: run.tolerance,
    })
    .map_err(|e| e.to_string())?;
    ros.jacobian_every = run.jacobian_every.max(1);
    Ok((sim, ros))
}

/// Drops the snake on the carpet, lets it settle, then rolls it, calling `on_sample` with every
/// sample kept.
pub fn run_rolling(run: &RollingRun, mut on_sample: impl FnMut(&RollingSample)) -> Result<RollingSummary, String> {
    let p = run.params.clone();
    let muscles = rolling_muscles(run)?;
    let geometry = geometries(&p)?;
    let bend = run.bend.unwrap_or_else(|| muscles.largest_bend(&geometry[0]));
    let gait = RollingGait {
        frequency: run.frequency,
        bend,
        section_phase: if run.rolling == Rolling::Planar { 0.0 } else { std::f64::consts::FRAC_PI_3 },
        ramp: 1.0,
    };
    gait.validate()?;
    for (name, v) in [
        ("settle", run.settle),
        ("duration", run.duration),
        ("tolerance", run.tolerance),
        ("control period", run.control_period),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} must be finite and >= 0, got {v}"));
        }
    }
    if !(run.control_period > 0.0 && run.tolerance > 0.0) {
        return Err("control period and tolerance must be > 0".into());
    }
    softgen_app::check_periods(run.settle + run.duration, run.control_period)?;
    let (mut sim, mut ros) = rolling_plant(run)?;
    let rolls = mount_rolls();
    let mut x = State::new(SVector::from_iterator(SoftSnake::INITIAL_POSITION.iter().copied()), SVector::zeros());
    let mut t = 0.0;
    let end = run.settle + run.duration;
    let steps = (end / run.control_period).round() as usize;
    let sample_every = ((1.0 / 30.0) / run.control_period).round().max(1.0) as usize;
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut evaluations = 0;
    let mut error = None;
    // The gait's pressures at time `at` (zero before the gait starts) and their forces on
    // the length coordinates.
    let inputs = |at: f64| {
        let mut pressures = [0.0; 9];
        let mut forces = SVector::<f64, DOF>::zeros();
        if at >= run.settle {
            for i in 0..SECTIONS {
                let c0 = SOFT_SECTIONS[i].first_coordinate;
                let lengths = gait.lengths(at - run.settle, i, &geometry[i], rolls[i]);
                for j in 0..3 {
                    pressures[3 * i + j] = muscles.pressure(lengths[j]);
                    forces[c0 + j] = muscles.force(pressures[3 * i + j]);
                }
            }
        }
        (pressures, forces)
    };
    // The samples at the current period's start: each period's end sample starts the next.
    let mut now = inputs(t);
    for k in 0..=steps {
        let next = ((k + 1) as f64 * run.control_period).min(end);
        // The paper integrates the pressure trajectories as functions of time: the forces
        // ramp linearly between the samples at the period's ends (a first-order hold), so the
        // input is continuous, as the paper's and the regulators' is.
        let (pressures, forces) = now;
        if k < steps {
            now = inputs(next);
            sim.set_actuator_force_ramp(t, &forces, next, &now.1)?;
        }
        if k % sample_every == 0 || k == steps {
            let cache = SoftSnake::cache(&x.q, &p);
            let mut centre_line = [Vector3::zeros(); CENTRE_LINE_POINTS];
            centre_line_into(&x.q, &p, &cache, &mut centre_line);
            let neutral_axis = centre_line.to_vec();
            let sample = RollingSample {
                t,
                q: x.q,
                center_of_mass: SoftSnake::center_of_mass(&x.q, &p, &cache),
                neutral_axis,
                pressures,
                contacts: sim.report(t, &x).active,
            };
            on_sample(&sample);
            samples.push(sample);
        }
        if k == steps {
            break;
        }
        if let Some(signal) = run.stop.as_ref().map(|s| s.load(Ordering::Relaxed)).filter(|s| *s != 0) {
            error = Some(IntegrationError::Stopped { time: t, signal });
            break;
        }
        match ros.integrate_to(&mut sim, &mut t, &mut x, next) {
            Ok(n) => evaluations += n,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    // Least-squares slope of the centre of mass over the gait after its ramp.
    let window: Vec<&RollingSample> = samples.iter().filter(|s| s.t >= run.settle + gait.ramp).collect();
    let slope = |f: &dyn Fn(&RollingSample) -> f64| {
        let n = window.len() as f64;
        let mt = window.iter().map(|s| s.t).sum::<f64>() / n;
        let mv = window.iter().map(|s| f(s)).sum::<f64>() / n;
        let num: f64 = window.iter().map(|s| (s.t - mt) * (f(s) - mv)).sum();
        let den: f64 = window.iter().map(|s| (s.t - mt).powi(2)).sum();
        num / den
    };
    let velocity_cm_s =
        (window.len() >= 2).then(|| (100.0 * slope(&|s| s.center_of_mass.x), 100.0 * slope(&|s| s.center_of_mass.y)));
    let window_start = run.settle + gait.ramp;
    Ok(RollingSummary {
        samples,
        velocity_cm_s,
        window_start,
        bend,
        evaluations,
        jacobians: ros.jacobians,
        accepted: ros.accepted,
        rejected: ros.rejected,
        wall_seconds: start.elapsed().as_secs_f64(),
        error,
    })
}

/// Writes a rolling run's CSV (time, coordinates, centre of mass, contacts, pressures) and its
/// figures (base position and orientation, actuator lengths, the track from above) under
/// `output` as `soft_snake_<name>_rolling.*`; returns the CSV's path. A run that `failed`
/// leaves the earlier outputs as they were and only its CSV, as `<name>.failed.csv`.
pub fn write_rolling_outputs(
    summary: &RollingSummary,
    name: &str,
    output: &std::path::Path,
    failed: bool,
) -> Result<std::path::PathBuf, String> {
    use softgen_runtime::Model;
    use std::io::BufWriter;
    std::fs::create_dir_all(&output).map_err(|e| format!("{}: {e}", output.display()))?;
    let base = output.join(format!("soft_snake_{name}_rolling"));
    let csv_path = base.with_extension("csv");
    let (pending_csv, file) = softgen_app::PendingFile::create(&csv_path)?;
    let mut csv = BufWriter::new(file);
    use std::io::Write;
    let mut header = vec!["t".to_string()];
    header.extend(softgen_generated::soft_snake::SoftSnake::COORDINATES.iter().map(|c| c.name.to_string()));
    header.extend(["com_x", "com_y", "com_z", "contacts"].map(String::from));
    header.extend((0..9).map(|k| format!("pressure_{}_{}_bar", k / 3 + 1, k % 3 + 1)));
    writeln!(csv, "{}", header.join(",")).map_err(|e| e.to_string())?;
    for s in &summary.samples {
        let mut row = vec![format!("{}", s.t)];
        row.extend(s.q.iter().map(|v| format!("{v}")));
        row.extend([s.center_of_mass.x, s.center_of_mass.y, s.center_of_mass.z].map(|v| format!("{v}")));
        row.push(s.contacts.to_string());
        row.extend(s.pressures.iter().map(|v| format!("{v}")));
        writeln!(csv, "{}", row.join(",")).map_err(|e| e.to_string())?;
    }
    csv.flush().map_err(|e| e.to_string())?;
    drop(csv);
    if failed {
        return pending_csv.keep_as_failed();
    }
    pending_csv.commit()?;
    // Legends name the coordinates as the spec does; a section's three actuators share a hue.
    let coordinates = softgen_generated::soft_snake::SoftSnake::COORDINATES;
    let palette = [[220, 30, 30], [30, 140, 30], [30, 60, 220]];
    let section_palette = [
        [220, 30, 30],
        [240, 120, 90],
        [150, 20, 20],
        [30, 140, 30],
        [110, 200, 90],
        [20, 80, 20],
        [30, 60, 220],
        [100, 150, 250],
        [20, 30, 120],
    ];
    let series = |index: usize, colour: [u8; 3]| softgen_app::Series {
        name: coordinates[index].name.to_string(),
        colour,
        points: summary.samples.iter().map(|s| (s.t, s.q[index])).collect(),
    };
    let position: Vec<_> = (0..3).map(|i| series(i, palette[i])).collect();
    let orientation: Vec<_> = (0..3).map(|i| series(3 + i, palette[i])).collect();
    let lengths: Vec<_> = (0..9).map(|k| series(6 + k, section_palette[k])).collect();
    let title = |what: &str| format!("soft snake, {name} rolling: {what}");
    softgen_app::plot_time_series(
        &title("base position"),
        "position (m)",
        &position,
        &base.with_extension("position.png"),
    )?;
    softgen_app::plot_time_series(
        &title("base orientation"),
        "angle (rad)",
        &orientation,
        &base.with_extension("orientation.png"),
    )?;
    softgen_app::plot_time_series(
        &title("actuator length changes"),
        "length change (m)",
        &lengths,
        &base.with_extension("lengths.png"),
    )?;
    let every = (summary.samples.len() / 30).max(1);
    let outlines: Vec<(f64, Vec<(f64, f64)>)> = summary
        .samples
        .iter()
        .step_by(every)
        .map(|s| (s.t, s.neutral_axis.iter().map(|p| (p.x, p.y)).collect()))
        .collect();
    let com: Vec<(f64, f64)> = summary.samples.iter().map(|s| (s.center_of_mass.x, s.center_of_mass.y)).collect();
    softgen_app::plot_track(&title("track seen from above"), &outlines, &com, &base.with_extension("track.png"))?;
    Ok(csv_path)
}

/// The rolling run whose CSV is `csv` as a 3D view page beside it (`.view.html`); returns
/// the page's path and its number of frames.
pub fn write_rolling_view(
    csv: &std::path::Path,
    name: &str,
    run: &RollingRun,
    summary: &RollingSummary,
) -> Result<(std::path::PathBuf, usize), String> {
    let page = csv.with_extension("view.html");
    let title = format!("soft snake, {name} rolling");
    let line = format!(
        "{} s at {} Hz, {} bar ceiling, bend {:.3} rad per section; softgen roll",
        run.duration, run.frequency, run.ceiling, summary.bend
    );
    let setup = softgen_app::ViewSetup { title: &title, summary: &line, terrain: None, params: &[] };
    let frames = crate::write_view_from_csv(csv, SoftSnake::NAME, &setup, &page)?;
    Ok((page, frames))
}
