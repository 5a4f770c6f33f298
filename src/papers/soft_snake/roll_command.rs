//! `softgen roll`, the command this paper adds: the soft snake's drop and rolling runs with
//! their settings on the command line, registered in [`PaperCommand`](crate::papers::PaperCommand).

use super::{run_rolling, write_rolling_outputs, write_rolling_view, Rolling, RollingRun};
use crate::signals::{failed, stop_flag, stopped_by_signal};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The rolling gait `softgen roll` runs.
#[derive(Clone, Copy, ValueEnum)]
pub enum RollingName {
    /// All sections bend in one plane, which turns about the body axis.
    Planar,
    /// Adjacent sections' bending planes shifted by pi / 3.
    Spatial,
}

/// `softgen roll`'s arguments: the gait, the run's length and the settings a run varies.
// The fields' doc comments are the command's help, where `<gait>` is a placeholder, not HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Args)]
pub struct RollArgs {
    #[arg(value_enum, default_value = "spatial")]
    gait: RollingName,
    /// Gait time after the drop (s).
    #[arg(long, default_value_t = 15.0)]
    duration: f64,
    /// Time to fall from 0.6 m and settle before the gait (s).
    #[arg(long, default_value_t = 2.0)]
    settle: f64,
    /// Turns of the bending plane per second (Hz).
    #[arg(long, default_value_t = 0.5)]
    frequency: f64,
    /// Pressure ceiling (bar).
    #[arg(long, default_value_t = 3.0)]
    ceiling: f64,
    /// Bend of every section (rad); "max" for the largest the ceiling allows.
    #[arg(long, default_value = "0.4")]
    bend: String,
    /// Radius of the skin and of the sections' slices (m); the spec's is 0.02, the paper
    /// prints none. A log roll without slip travels 2 pi r f.
    #[arg(long)]
    skin_radius: Option<f64>,
    /// Friction coefficient along the direction --anisotropy names (spec: 0.6 along the
    /// body axis).
    #[arg(long)]
    friction_along: Option<f64>,
    /// Friction coefficient across it (spec: 0.2).
    #[arg(long)]
    friction_across: Option<f64>,
    /// The friction's direction: along each section's axis (`body-axis`, the spec's), along
    /// world x (`world-axis`), or `isotropic` (--friction-along everywhere).
    #[arg(long, value_enum)]
    anisotropy: Option<crate::AnisotropyName>,
    /// The carpet's normal damping d (N s/m; spec: 130, the paper's eq 3).
    #[arg(long)]
    contact_damping: Option<f64>,
    /// Hunt-Crossley contact dissipation h (s/m; spec: 0): a damper k h depth depth_rate
    /// that grows from zero with the depth (with --contact-damping 0, a normal force
    /// continuous at touchdown).
    #[arg(long)]
    contact_dissipation: Option<f64>,
    /// Locate each touchdown to this depth (m; 0 meets touchdowns inside steps).
    #[arg(long, default_value_t = 1e-6)]
    contact_onset_tolerance: f64,
    /// Relative tolerance of the ROS34PW2 integrator.
    #[arg(long, default_value_t = 1e-3)]
    tolerance: f64,
    /// The Jacobian ROS34PW2 gets: `stiff` (its stiff part, a W-method's) or `exact`.
    #[arg(long, default_value = "stiff")]
    jacobian: softgen_runtime::SystemJacobian,
    /// Output folder.
    #[arg(long, default_value = "out")]
    output: PathBuf,
    /// Also write soft_snake_<gait>_rolling.view.html: the run as a 3D animation page.
    #[arg(long)]
    view: bool,
}

/// Runs `softgen roll`: the drop, then the rolling gait; writes the run's CSV and figures
/// (and its view page with `--view`) and prints the travelling velocity beside Table I's.
pub fn roll(args: RollArgs) -> Result<ExitCode, String> {
    let stop = stop_flag()?;
    let rolling = match args.gait {
        RollingName::Planar => Rolling::Planar,
        RollingName::Spatial => Rolling::Spatial,
    };
    let mut run = RollingRun::new(rolling);
    run.stop = Some(Arc::clone(&stop));
    run.duration = args.duration;
    run.settle = args.settle;
    run.frequency = args.frequency;
    run.ceiling = args.ceiling;
    softgen_runtime::physical_ranges::RELATIVE_TOLERANCE.check("--tolerance", args.tolerance)?;
    run.tolerance = args.tolerance;
    run.jacobian = args.jacobian;
    if let Some(radius) = args.skin_radius {
        use softgen_runtime::ParamSet;
        run.params.set("skin_radius", radius).map_err(|e| format!("--skin-radius: {e}"))?;
        run.params.check().map_err(|e| format!("--skin-radius {radius}: {e}"))?;
    }
    run.friction_along = args.friction_along;
    run.friction_across = args.friction_across;
    run.friction_anisotropy = args.anisotropy.map(|a| a.anisotropy());
    run.contact_damping = args.contact_damping;
    run.contact_dissipation = args.contact_dissipation;
    run.contact_onset_tolerance = match args.contact_onset_tolerance {
        0.0 => None,
        tolerance => Some(tolerance),
    };
    run.bend = match args.bend.as_str() {
        "max" => None,
        text => Some(text.parse::<f64>().map_err(|_| format!("--bend: expected radians or \"max\", got `{text}`"))?),
    };
    let name = rolling.name();
    let progress = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
    progress.set_style(ProgressStyle::with_template("{bar:40} {msg}").map_err(|e| e.to_string())?);
    let end = run.settle + run.duration;
    let summary = run_rolling(&run, |s| {
        progress.set_position((1000.0 * s.t / end.max(1e-9)) as u64);
        progress.set_message(format!("t = {:.1} s", s.t));
    })?;
    progress.finish_and_clear();
    // A run stopped by a signal keeps what it did; one that failed replaces nothing.
    let failed = failed(&stop, summary.error.as_ref());
    let csv_path = write_rolling_outputs(&summary, name, &args.output, failed)?;
    let ((paper_x, paper_y), _) = rolling.table_one();
    // Where the run ended (the end time unless it stopped early).
    let simulated = summary.samples.last().map_or(0.0, |s| s.t);
    println!(
        "{name} rolling, {} s at {} Hz, {} bar ceiling, bend {:.3} rad per section, skin radius {} m",
        run.duration, run.frequency, run.ceiling, summary.bend, run.params.skin_radius
    );
    match summary.velocity_cm_s {
        Some((vx, vy)) => println!("travelling velocity  V_x = {vx:.2} cm/s, V_y = {vy:.2} cm/s (paper's model, Table I: {paper_x}, {paper_y})"),
        None => println!(
            "travelling velocity  not measured: it is fitted after the gait's ramp, from t = {:.1} s, and the run ended at t = {simulated:.1} s",
            summary.window_start
        ),
    }
    println!(
        "integration          {} right-hand sides, {} Jacobians, {} steps ({} rejected), {:.2} s wall for {:.1} s simulated ({:.2}x real time)",
        summary.evaluations,
        summary.jacobians,
        summary.accepted,
        summary.rejected,
        summary.wall_seconds,
        simulated,
        simulated / summary.wall_seconds.max(1e-9)
    );
    if failed {
        println!("outputs              none replaced; the run up to its failure is in {}", csv_path.display());
    } else {
        println!(
            "outputs              {} and .position, .orientation, .lengths, .track (.png and .svg)",
            csv_path.display()
        );
    }
    if args.view {
        let (page, frames) = write_rolling_view(&csv_path, name, &run, &summary)?;
        println!("view                 {} ({frames} frames)", page.display());
    }
    if let Some(code) = summary.error.as_ref().and_then(|e| stopped_by_signal(&stop, e)) {
        return Ok(code);
    }
    match summary.error {
        Some(e) => Err(format!(
            "the run stopped early: {e} (earlier outputs kept; this run up to then is in {})",
            csv_path.display()
        )),
        None => Ok(ExitCode::SUCCESS),
    }
}
