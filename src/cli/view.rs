//! `softgen view`: an existing run's CSV as a 3D animation page that opens from disk.

use super::simulate::TerrainArgs;
use super::values::parse_sets;
use clap::Args;
use softgen::{write_view_from_csv, RunSettings, ViewSetup};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Clone)]
pub(crate) struct ViewArgs {
    /// The run's CSV (from simulate, roll, experiment run or run): t, the robot's
    /// coordinates by name, and optionally `<point>_fx/_fy/_fz` contact forces.
    csv: PathBuf,
    /// The robot the run is of.
    #[arg(long)]
    robot: String,
    /// The page to write (default: the CSV's path with .view.html for .csv).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The terrain to draw (default: the robot's spec's).
    #[command(flatten)]
    terrain: TerrainArgs,
    /// Parameters the run had, by name (repeatable), so the bodies are drawn as it had them.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// The page's title (default: the robot and the CSV's name).
    #[arg(long)]
    title: Option<String>,
}

pub(crate) fn view(args: ViewArgs) -> Result<ExitCode, String> {
    let params = parse_sets(&args.set)?;
    // The terrain as `simulate` resolves the same flags.
    let settings = RunSettings {
        terrain: args.terrain.terrain,
        stair_position: args.terrain.stair_position,
        stair_height: args.terrain.stair_height,
        pipe_diameter: args.terrain.pipe_diameter,
        ..RunSettings::DEFAULT
    };
    let terrain = softgen::robot(&args.robot)?.scenario(&settings)?.scenario.terrain.terrain();
    let page = args.out.clone().unwrap_or_else(|| args.csv.with_extension("view.html"));
    let file =
        args.csv.file_name().map_or_else(|| args.csv.display().to_string(), |f| f.to_string_lossy().into_owned());
    let title = args.title.clone().unwrap_or_else(|| format!("{} ({file})", args.robot));
    let summary = format!("softgen view {file}");
    let setup = ViewSetup { title: &title, summary: &summary, terrain, params: &params };
    let frames = write_view_from_csv(&args.csv, &args.robot, &setup, &page)?;
    println!("view           {} ({frames} frames)", page.display());
    Ok(ExitCode::SUCCESS)
}
