//! `softgen simulate` (the default command): one robot simulated to CSV and a figure.

use super::values::parse_sets;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use softgen::signals::{failed, stop_flag, stopped_by_signal};
use softgen::{
    run_scenario, write_view_from_csv, AdmittanceForceChoice, AnisotropyName, CoordinatesChoice, IntegratorName,
    JacobianName, RunSettings, TerrainName, ViewSetup,
};
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
/// The defaults of a run's settings: the flags of `simulate` show the sweep file's defaults.
pub(crate) const DEFAULTS: RunSettings = RunSettings::DEFAULT;

#[derive(Args, Clone)]
pub(crate) struct SimulateArgs {
    /// Robot to simulate.
    #[arg(long, default_value = softgen::papers::DEFAULT_ROBOT)]
    robot: String,
    /// Simulated time (s).
    #[arg(long, default_value_t = DEFAULTS.duration)]
    duration: f64,
    #[arg(long, value_enum, default_value_t = DEFAULTS.integrator)]
    integrator: IntegratorName,
    /// Step of fixed-step integrators, and controller/sample period (s).
    #[arg(long, default_value_t = DEFAULTS.dt)]
    dt: f64,
    /// Relative tolerance of dopri5 and ros34 (default: 1e-6 for dopri5, 1e-3 for ros34).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance of dopri5 and ros34 (default: 1e-8 for dopri5, 1e-4 for ros34).
    #[arg(long)]
    atol: Option<f64>,
    /// The Jacobian ros34 gets: its stiff part, or the exact Jacobian of the simulated system.
    #[arg(long, value_enum, default_value_t = DEFAULTS.jacobian)]
    jacobian: JacobianName,
    #[command(flatten)]
    terrain: TerrainArgs,
    /// Gait amplitude A (rad); serpenoid gaits only.
    #[arg(long)]
    amplitude: Option<f64>,
    /// Gait temporal frequency omega (rad/s); for a valve wave 2 pi f.
    #[arg(long)]
    temporal_frequency: Option<f64>,
    /// Gait spatial frequency eta (rad); for a valve wave the delay beta_i / i.
    #[arg(long, allow_hyphen_values = true)]
    spatial_frequency: Option<f64>,
    /// Gait joint offset (rad); for a valve wave eq 13's phi (0 straight, 0.4 turns).
    #[arg(long, allow_hyphen_values = true)]
    offset: Option<f64>,
    /// Gait fade-in time (s); 0 starts the full wave at once.
    #[arg(long, default_value_t = DEFAULTS.ramp)]
    ramp: f64,
    /// No gait: passive joints.
    #[arg(long)]
    passive: bool,
    /// Adapt the spatial frequencies with the admittance controller (eqs 22-24).
    #[arg(long)]
    admittance: bool,
    #[arg(long, default_value_t = DEFAULTS.admittance_inertia)]
    admittance_inertia: f64,
    #[arg(long, default_value_t = DEFAULTS.admittance_damping)]
    admittance_damping: f64,
    #[arg(long, default_value_t = DEFAULTS.admittance_stiffness)]
    admittance_stiffness: f64,
    /// k_Pi of eq 24.
    #[arg(long, default_value_t = DEFAULTS.admittance_gain)]
    admittance_gain: f64,
    /// The coordinates the admittance controller reads the contact force in: the spec's
    /// `[controller_coordinates]` (the paper's), or the model's own.
    #[arg(long, value_enum, default_value_t = CoordinatesChoice::Spec)]
    admittance_coordinates: CoordinatesChoice,
    /// Which contacts' normal forces drive the admittance controller: obstacles' only (a
    /// stair's step, a pipe's wall; the paper's eq 23), or all, the ground's included.
    #[arg(long, value_enum, default_value_t = AdmittanceForceChoice::Obstacles)]
    admittance_force: AdmittanceForceChoice,
    /// Contact spring constant k (N/m).
    #[arg(long)]
    contact_stiffness: Option<f64>,
    /// Contact damping d (N s/m).
    #[arg(long)]
    contact_damping: Option<f64>,
    /// Hunt-Crossley contact dissipation h (s/m): a damper k h depth depth_rate that grows
    /// from zero with the depth (with --contact-damping 0, a force continuous at touchdown).
    #[arg(long)]
    contact_dissipation: Option<f64>,
    /// Friction coefficient (along the body, or isotropic).
    #[arg(long)]
    friction: Option<f64>,
    /// Friction coefficient across the body.
    #[arg(long)]
    friction_across: Option<f64>,
    /// Directions of the two friction coefficients (default: the spec's).
    #[arg(long, value_enum)]
    anisotropy: Option<AnisotropyName>,
    /// Regularised friction velocity scale (m/s); 0 = exact Coulomb sign.
    #[arg(long)]
    friction_regularisation: Option<f64>,
    /// Set a model parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Output directory for <robot>.csv, <robot>.png and <robot>.svg.
    #[arg(long, default_value = "out")]
    output: PathBuf,
    /// Write every k-th sample to the CSV.
    #[arg(long, default_value_t = 5)]
    csv_every: usize,
    /// Skip the PNG plot.
    #[arg(long)]
    no_plot: bool,
    /// Also write <robot>.view.html: the run as a 3D animation page that opens from disk.
    #[arg(long)]
    view: bool,
}

/// A terrain by name and its dimensions, as `simulate` and `view` take them.
#[derive(Args, Clone)]
pub(crate) struct TerrainArgs {
    #[arg(long, value_enum, default_value_t = DEFAULTS.terrain)]
    pub(crate) terrain: TerrainName,
    /// Stair face position along x (m).
    #[arg(long, default_value_t = DEFAULTS.stair_position)]
    pub(crate) stair_position: f64,
    /// Stair height (m).
    #[arg(long, default_value_t = DEFAULTS.stair_height)]
    pub(crate) stair_height: f64,
    /// Pipe inner diameter (m).
    #[arg(long, default_value_t = DEFAULTS.pipe_diameter)]
    pub(crate) pipe_diameter: f64,
}

impl SimulateArgs {
    /// The run settings these flags give (a sweep file gives the same by key).
    fn settings(&self) -> Result<RunSettings, String> {
        let mut params = std::collections::BTreeMap::new();
        for (name, value) in parse_sets(&self.set)? {
            params.insert(name, value);
        }
        Ok(RunSettings {
            duration: self.duration,
            integrator: self.integrator,
            dt: self.dt,
            rtol: self.rtol,
            atol: self.atol,
            jacobian: self.jacobian,
            terrain: self.terrain.terrain,
            stair_position: self.terrain.stair_position,
            stair_height: self.terrain.stair_height,
            pipe_diameter: self.terrain.pipe_diameter,
            amplitude: self.amplitude,
            temporal_frequency: self.temporal_frequency,
            spatial_frequency: self.spatial_frequency,
            offset: self.offset,
            ramp: self.ramp,
            passive: self.passive,
            admittance: self.admittance,
            admittance_inertia: self.admittance_inertia,
            admittance_damping: self.admittance_damping,
            admittance_stiffness: self.admittance_stiffness,
            admittance_gain: self.admittance_gain,
            admittance_coordinates: self.admittance_coordinates,
            admittance_force: self.admittance_force,
            contact_stiffness: self.contact_stiffness,
            contact_damping: self.contact_damping,
            contact_dissipation: self.contact_dissipation,
            friction: self.friction,
            friction_across: self.friction_across,
            anisotropy: self.anisotropy,
            friction_regularisation: self.friction_regularisation,
            params,
        })
    }
}

pub(crate) fn simulate(args: SimulateArgs) -> Result<ExitCode, String> {
    let stop = stop_flag()?;
    let settings = args.settings()?;
    let resolved = softgen::robot(&args.robot)?.scenario(&settings)?;
    for note in &resolved.notes {
        eprintln!("note: {note}");
    }
    let integrator = resolved.integrator;
    let mut s = resolved.scenario;
    s.stop = Some(Arc::clone(&stop));
    s.csv_every = args.csv_every;

    std::fs::create_dir_all(&args.output).map_err(|e| format!("{}: {e}", args.output.display()))?;
    let csv_path = args.output.join(format!("{}.csv", args.robot));
    // Written beside the target and renamed once the run has produced it, so a rejected run
    // (bad parameter, bad robot, a state that fails at t = 0) never clobbers earlier outputs.
    let (pending_csv, file) = softgen::PendingFile::create(&csv_path)?;
    let mut csv = BufWriter::new(file);

    let bar = ProgressBar::with_draw_target(Some((s.duration * 1000.0) as u64), ProgressDrawTarget::hidden());
    bar.set_style(ProgressStyle::with_template("{bar:40} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let start = Instant::now();
    let mut shown = false;
    let mut progress = |t: f64| {
        if !shown && start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        bar.set_position((t * 1000.0) as u64);
        if shown {
            bar.set_message(format!("{t:.2} / {:.2} s simulated", s.duration));
        }
    };
    let result = run_scenario(&s, Some(&mut csv), &mut progress);
    bar.finish_and_clear();
    std::io::Write::flush(&mut csv).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    drop(csv);
    let summary = result?;
    // A run stopped by a signal keeps what it did; one that failed replaces nothing, and what
    // it wrote is kept beside the earlier outputs for finding out why.
    let failed = failed(&stop, summary.error.as_ref());
    let csv_path = if failed { pending_csv.keep_as_failed()? } else { pending_csv.commit().map(|()| csv_path)? };

    let start_com = summary.com_start();
    let end_com = summary.com_end();
    println!("robot          {}", summary.robot);
    println!("terrain        {}", summary.terrain);
    println!(
        "simulated      {:.3} s in {:.3} s wall ({:.0}x real time)",
        summary.simulated,
        summary.wall_seconds,
        summary.simulated / summary.wall_seconds.max(1e-9)
    );
    println!("rhs calls      {}", summary.evaluations);
    println!(
        "CoM            ({:.4}, {:.4}, {:.4}) -> ({:.4}, {:.4}, {:.4}) m",
        start_com.x, start_com.y, start_com.z, end_com.x, end_com.y, end_com.z
    );
    if summary.simulated > 0.0 {
        println!("mean velocity  {:.2} cm/s along x", 100.0 * (end_com.x - start_com.x) / summary.simulated);
    }
    println!("max depth      {:.2} mm", summary.max_depth * 1000.0);
    println!("csv            {}", csv_path.display());
    if !args.no_plot && !failed {
        let png = args.output.join(format!("{}.png", args.robot));
        summary.plot(&png)?;
        println!("plot           {} (and .svg)", png.display());
    }
    if args.view {
        let page = args.output.join(format!("{}.view.html", args.robot));
        let title = format!("{}, terrain: {}", summary.robot, summary.terrain);
        let line = format!("{:.2} s simulated; softgen simulate", summary.simulated);
        let setup = ViewSetup { title: &title, summary: &line, terrain: Some(summary.terrain), params: &s.params };
        let frames = write_view_from_csv(&csv_path, &args.robot, &setup, &page)?;
        println!("view           {} ({frames} frames)", page.display());
    }
    if let Some(e) = summary.error {
        if let Some(code) = stopped_by_signal(&stop, &e) {
            return Ok(code);
        }
        let hint = if let Some(cause) = &summary.likely_cause {
            format!("; {cause}")
        } else if matches!(integrator, IntegratorName::Rk4 | IntegratorName::Euler) {
            "; a fixed-step explicit integrator is unstable on stiff robots (soft sections, stiff contact): try --integrator ros34".to_string()
        } else {
            String::new()
        };
        return Err(format!(
            "the run stopped early: {e} (earlier outputs kept; this run up to then is in {}){hint}",
            csv_path.display()
        ));
    }
    Ok(ExitCode::SUCCESS)
}
