//! `softgen view`: an existing run's CSV as a 3D animation page that opens from disk.

use super::simulate::DEFAULTS;
use super::values::parse_sets;
use clap::Args;
use softgen::{write_view_from_csv, TerrainName, ViewSetup};
use softgen_runtime::Terrain;
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
    #[arg(long, value_enum, default_value_t = TerrainName::Spec)]
    terrain: TerrainName,
    /// Stair face position along x (m).
    #[arg(long, default_value_t = DEFAULTS.stair_position)]
    stair_position: f64,
    /// Stair height (m).
    #[arg(long, default_value_t = DEFAULTS.stair_height)]
    stair_height: f64,
    /// Pipe inner diameter (m).
    #[arg(long, default_value_t = DEFAULTS.pipe_diameter)]
    pipe_diameter: f64,
    /// Parameters the run had, by name (repeatable), so the bodies are drawn as it had them.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// The page's title (default: the robot and the CSV's name).
    #[arg(long)]
    title: Option<String>,
}

pub(crate) fn view(args: ViewArgs) -> Result<ExitCode, String> {
    let params = parse_sets(&args.set)?;
    let terrain = match args.terrain {
        TerrainName::Spec => None,
        TerrainName::None => Some(Terrain::None),
        TerrainName::Flat => Some(Terrain::Flat { height: 0.0 }),
        TerrainName::Stair => Some(Terrain::Stair { position: args.stair_position, height: args.stair_height }),
        TerrainName::Pipe => Some(Terrain::Pipe { diameter: args.pipe_diameter }),
        TerrainName::Floor => Some(Terrain::Floor),
    };
    if let Some(t) = terrain {
        t.validate()?;
    }
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
