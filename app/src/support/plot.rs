//! Figures the CLI writes, drawn with plotters: a run's centre-of-mass path and body
//! snapshots over the terrain, time series, tracks and paths seen from above, and contour
//! plots of a figure over a grid of two inputs. Every figure has a
//! title, axis titles with units, a legend when it shows more than one thing, and equal axes
//! where it draws geometry. Each is written as PNG (plotters' bitmap backend, encoded with
//! png) and as SVG beside it, through `PendingFile`; text uses the embedded DejaVu Sans, so
//! no system fonts are needed.

use crate::support::output::PendingFile;
use nalgebra::Vector3;
use plotters::coord::Shift;
use plotters::prelude::*;
use softgen_runtime::{PlaneOfMotion, Terrain};
use std::path::Path;
use std::sync::OnceLock;

/// The font every figure's text is set in, compiled into the binary.
const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Registers [`FONT`] with plotters once per process.
fn font_ready() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the embedded font could not be loaded".into())
    }
}

/// One named line of a figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Its legend entry.
    pub name: String,
    /// Its colour (RGB).
    pub colour: [u8; 3],
    /// Its points (x, y).
    pub points: Vec<(f64, f64)>,
}

/// A figure that can draw itself on any plotters backend.
trait Figure {
    /// Image size in pixels.
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Writes `figure` to `path` (PNG) and to `path` with the extension `svg`, each only once
/// drawn in full.
fn save<F: Figure>(figure: &F, path: &Path) -> Result<(), String> {
    font_ready()?;
    let (width, height) = figure.size();
    let mut pixels = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        figure.draw(&root)?;
        root.present().map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let (pending, file) = PendingFile::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| format!("{}: {e}", path.display()))?;
    writer.write_image_data(&pixels).map_err(|e| format!("{}: {e}", path.display()))?;
    writer.finish().map_err(|e| format!("{}: {e}", path.display()))?;
    pending.commit()?;

    let svg_path = path.with_extension("svg");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        figure.draw(&root)?;
        root.present().map_err(|e| format!("{}: {e}", svg_path.display()))?;
    }
    let (pending, file) = PendingFile::create(&svg_path)?;
    use std::io::Write;
    let mut writer = std::io::BufWriter::new(file);
    writer
        .write_all(svg.as_bytes())
        .and_then(|_| writer.flush())
        .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    drop(writer);
    pending.commit()
}

fn rgb(colour: [u8; 3]) -> RGBColor {
    RGBColor(colour[0], colour[1], colour[2])
}

fn drawing_error<E: std::fmt::Display>(e: E) -> String {
    format!("drawing the figure: {e}")
}

const TITLE_HEIGHT: u32 = 44;
const MARGIN: u32 = 12;
const X_LABEL_AREA: u32 = 56;
const Y_LABEL_AREA: u32 = 84;
const SHADE_LIGHT: [f64; 3] = [170.0, 200.0, 255.0];
const SHADE_DARK: [f64; 3] = [10.0, 40.0, 150.0];
const PATH_RED: [u8; 3] = [220, 30, 30];
const GROUND: [u8; 3] = [230, 210, 180];
const GROUND_EDGE: [u8; 3] = [170, 120, 70];

/// Light to dark blue as `f` goes 0 to 1: earlier to later snapshots.
fn shade(f: f64) -> RGBColor {
    let c = |k: usize| (SHADE_LIGHT[k] + f * (SHADE_DARK[k] - SHADE_LIGHT[k])) as u8;
    RGBColor(c(0), c(1), c(2))
}

/// The bounds of `points`, or None when there are none or some are not finite.
fn bounds<'a>(points: impl Iterator<Item = &'a (f64, f64)>) -> Option<[f64; 4]> {
    let mut b = [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY];
    let mut any = false;
    for (x, y) in points {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        any = true;
        b = [b[0].min(*x), b[1].max(*x), b[2].min(*y), b[3].max(*y)];
    }
    any.then_some(b)
}

/// Image size and data ranges for geometry drawn at one scale on both axes: the plotting
/// area's aspect matches the ranges', its height kept within reason by widening the range
/// of the other axis.
fn equal_axes([x0, x1, y0, y1]: [f64; 4], width: u32) -> ((u32, u32), [f64; 4]) {
    let pad = 0.05 * (x1 - x0).max(y1 - y0).max(0.1);
    let (mut x0, mut x1, mut y0, mut y1) = (x0 - pad, x1 + pad, y0 - pad, y1 + pad);
    let plot_width = f64::from(width - 2 * MARGIN - Y_LABEL_AREA);
    let (min_height, max_height) = (260.0, 900.0);
    let mut plot_height = plot_width * (y1 - y0) / (x1 - x0);
    if plot_height > max_height {
        plot_height = max_height;
        let (centre, half) = (0.5 * (x0 + x1), 0.5 * (y1 - y0) * plot_width / plot_height);
        (x0, x1) = (centre - half, centre + half);
    } else if plot_height < min_height {
        plot_height = min_height;
        let (centre, half) = (0.5 * (y0 + y1), 0.5 * (x1 - x0) * plot_height / plot_width);
        (y0, y1) = (centre - half, centre + half);
    }
    let height = plot_height.round() as u32 + TITLE_HEIGHT + 2 * MARGIN + X_LABEL_AREA;
    ((width, height), [x0, x1, y0, y1])
}

type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// A chart over `[x0, x1, y0, y1]` on `body` with its grid, tick labels and axis titles.
fn chart_on<'a, DB: DrawingBackend>(
    body: &'a DrawingArea<DB, Shift>,
    [x0, x1, y0, y1]: [f64; 4],
    (x_title, y_title): (&str, &str),
) -> Result<Chart<'a, DB>, String> {
    let mut chart = ChartBuilder::on(body)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(drawing_error)?;
    chart
        .configure_mesh()
        .x_desc(x_title)
        .y_desc(y_title)
        .axis_desc_style((FAMILY, 18))
        .label_style((FAMILY, 15))
        .light_line_style(RGBColor(246, 246, 246))
        .draw()
        .map_err(drawing_error)?;
    Ok(chart)
}

/// The legend of every labelled series, top right.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>) -> Result<(), String> {
    chart
        .configure_series_labels()
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(drawing_error)
}

/// Body outlines at their times, light to dark blue (the first and last named in the legend,
/// which so gives the time scale of the shading), and the centre-of-mass path in red.
fn bodies_and_path<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    bodies: &[(f64, Vec<(f64, f64)>)],
    com: &[(f64, f64)],
    width: u32,
) -> Result<(), String> {
    let count = bodies.len();
    for (i, (t, body)) in bodies.iter().enumerate() {
        let colour = shade(i as f64 / (count.max(2) - 1) as f64);
        let drawn = chart
            .draw_series(LineSeries::new(body.iter().copied(), colour.stroke_width(width)))
            .map_err(drawing_error)?;
        if i == 0 || i + 1 == count {
            drawn
                .label(format!("body at t = {t:.1} s"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(width)));
        }
    }
    chart
        .draw_series(LineSeries::new(com.iter().copied(), rgb(PATH_RED).stroke_width(2)))
        .map_err(drawing_error)?
        .label("centre of mass")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], rgb(PATH_RED).stroke_width(2)));
    Ok(())
}

/// The title across the top; returns the area below it.
fn titled<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<DrawingArea<DB, Shift>, String> {
    root.fill(&WHITE).map_err(drawing_error)?;
    let (top, body) = root.split_vertically(TITLE_HEIGHT);
    let (width, _) = top.dim_in_pixel();
    let style = TextStyle::from((FAMILY, 24).into_font()).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    ));
    top.draw(&Text::new(title.to_string(), (width as i32 / 2, TITLE_HEIGHT as i32 / 2 + 4), style))
        .map_err(drawing_error)?;
    Ok(body)
}

/// What the figure of a run shows, in world coordinates.
pub struct RunView<'a> {
    /// The robot's name.
    pub robot: &'a str,
    /// Simulated time (s).
    pub simulated: f64,
    /// The terrain drawn.
    pub terrain: Terrain,
    /// The plane the robot moves in, which sets the view.
    pub plane: PlaneOfMotion,
    /// The centre of mass over time: (t, position).
    pub com_path: &'a [(f64, Vector3<f64>)],
    /// The body's drawing points at a few times: (t, points).
    pub snapshots: &'a [(f64, Vec<Vector3<f64>>)],
}

/// Draws a run: the terrain, body snapshots (light to dark blue as time passes) and the
/// centre-of-mass path (red), in the plane of motion (x-z, or x-y seen from above), at one
/// scale on both axes. Writes `path` (PNG) and the SVG beside it.
pub fn plot_run(run: &RunView, path: &Path) -> Result<(), String> {
    save(&RunFigure::new(run)?, path)
}

struct RunFigure {
    title: String,
    axes: (&'static str, &'static str),
    size: (u32, u32),
    ranges: [f64; 4],
    terrain: Terrain,
    plane: PlaneOfMotion,
    com: Vec<(f64, f64)>,
    snapshots: Vec<(f64, Vec<(f64, f64)>)>,
}

impl RunFigure {
    fn new(summary: &RunView) -> Result<RunFigure, String> {
        let project = |v: &Vector3<f64>| match summary.plane {
            PlaneOfMotion::Xz => (v.x, v.z),
            PlaneOfMotion::Xy | PlaneOfMotion::Spatial => (v.x, v.y),
        };
        let com: Vec<(f64, f64)> = summary.com_path.iter().map(|(_, c)| project(c)).collect();
        let snapshots: Vec<(f64, Vec<(f64, f64)>)> =
            summary.snapshots.iter().map(|(t, s)| (*t, s.iter().map(project).collect())).collect();
        let points = com.iter().chain(snapshots.iter().flat_map(|(_, s)| s.iter()));
        let Some([x0, mut x1, mut y0, mut y1]) = bounds(points) else {
            return Err("nothing to plot: the run produced no samples, or positions that are not finite".into());
        };
        // The terrain near the robot, so the reader sees what it stands on.
        match (summary.terrain, summary.plane) {
            (Terrain::Pipe { diameter }, PlaneOfMotion::Xy) => {
                y0 = y0.min(-diameter / 2.0);
                y1 = y1.max(diameter / 2.0);
            }
            (Terrain::Stair { position, height }, PlaneOfMotion::Xz) if position - x1 < 1.0 && x0 - position < 1.0 => {
                x1 = x1.max(position + 0.1);
                y1 = y1.max(height);
                y0 = y0.min(0.0);
            }
            (Terrain::Flat { height }, PlaneOfMotion::Xz) if (height - y0).abs() < 1.0 => y0 = y0.min(height),
            _ => {}
        }
        let (size, ranges) = equal_axes([x0, x1, y0, y1], 1400);
        let view = match summary.plane {
            PlaneOfMotion::Xz => "side view",
            _ => "seen from above",
        };
        Ok(RunFigure {
            title: format!("{}: centre of mass and body over {:.1} s ({view})", summary.robot, summary.simulated),
            axes: match summary.plane {
                PlaneOfMotion::Xz => ("x (m)", "z (m)"),
                _ => ("x (m)", "y (m)"),
            },
            size,
            ranges,
            terrain: summary.terrain,
            plane: summary.plane,
            com,
            snapshots,
        })
    }
}

impl Figure for RunFigure {
    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = titled(root, &self.title)?;
        let [x0, x1, y0, y1] = self.ranges;
        let mut chart = chart_on(&body, [x0, x1, y0, y1], (self.axes.0, self.axes.1))?;
        let ground = rgb(GROUND).filled();
        let edge = rgb(GROUND_EDGE).stroke_width(2);
        let legend_ground = |name: &str| -> (String, RGBColor) { (name.to_string(), rgb(GROUND)) };
        let terrain_label = match (self.terrain, self.plane) {
            (Terrain::Flat { height }, PlaneOfMotion::Xz) => {
                chart
                    .draw_series([Rectangle::new([(x0, y0), (x1, height.clamp(y0, y1))], ground)])
                    .map_err(drawing_error)?;
                Some(legend_ground("ground"))
            }
            (Terrain::Stair { position, height }, PlaneOfMotion::Xz) => {
                chart
                    .draw_series([
                        Rectangle::new([(x0, y0), (x1, 0.0_f64.clamp(y0, y1))], ground),
                        Rectangle::new([(position.clamp(x0, x1), y0), (x1, height.clamp(y0, y1))], ground),
                    ])
                    .map_err(drawing_error)?;
                let outline = [(x0, 0.0), (position, 0.0), (position, height), (x1, height)]
                    .map(|(x, y): (f64, f64)| (x.clamp(x0, x1), y.clamp(y0, y1)));
                chart.draw_series(LineSeries::new(outline, edge)).map_err(drawing_error)?;
                Some(legend_ground("stair"))
            }
            (Terrain::Pipe { diameter }, PlaneOfMotion::Xy) => {
                let r = diameter / 2.0;
                chart
                    .draw_series(LineSeries::new([(x0, r), (x1, r)], rgb(GROUND_EDGE).stroke_width(3)))
                    .map_err(drawing_error)?;
                chart
                    .draw_series(LineSeries::new([(x0, -r), (x1, -r)], rgb(GROUND_EDGE).stroke_width(3)))
                    .map_err(drawing_error)?;
                Some(legend_ground("pipe walls"))
            }
            _ => None,
        };
        if let Some((name, colour)) = terrain_label {
            // The legend entry of the terrain drawn above.
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
                .map_err(drawing_error)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], colour.filled()));
        }
        bodies_and_path(&mut chart, &self.snapshots, &self.com, 3)?;
        legend(&mut chart)
    }
}

/// Time series on one panel: time (s) along x, `y_label` (with its unit) along y, one
/// legend entry per series. Writes `path` (PNG) and the SVG beside it.
pub fn plot_time_series(title: &str, y_label: &str, series: &[Series], path: &Path) -> Result<(), String> {
    let Some([t0, t1, mut v0, mut v1]) = bounds(series.iter().flat_map(|s| s.points.iter())) else {
        return Err("nothing to plot: no samples, or samples that are not finite".into());
    };
    if !(t1 > t0) {
        return Err("nothing to plot: fewer than two samples".into());
    }
    if !(v1 > v0) {
        v0 -= 0.5;
        v1 += 0.5;
    }
    let pad = 0.05 * (v1 - v0);
    save(&TimeSeries { title, y_label, series, ranges: [t0, t1, v0 - pad, v1 + pad] }, path)
}

struct TimeSeries<'a> {
    title: &'a str,
    y_label: &'a str,
    series: &'a [Series],
    ranges: [f64; 4],
}

impl Figure for TimeSeries<'_> {
    fn size(&self) -> (u32, u32) {
        (1500, 620)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = titled(root, self.title)?;
        let [t0, t1, v0, v1] = self.ranges;
        let mut chart = chart_on(&body, [t0, t1, v0, v1], ("time (s)", self.y_label))?;
        for s in self.series {
            let colour = rgb(s.colour);
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))
                .map_err(drawing_error)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        }
        if self.series.len() > 1 {
            legend(&mut chart)?;
        }
        Ok(())
    }
}

/// A track seen from above at one scale on both axes: `outlines` (light to dark blue as
/// time passes, from `times`) and the centre-of-mass path in red. Writes `path` (PNG) and the
/// SVG beside it.
pub fn plot_track(
    title: &str,
    outlines: &[(f64, Vec<(f64, f64)>)],
    com: &[(f64, f64)],
    path: &Path,
) -> Result<(), String> {
    let Some(b) = bounds(outlines.iter().flat_map(|(_, o)| o.iter()).chain(com.iter())) else {
        return Err("nothing to plot: no samples, or samples that are not finite".into());
    };
    let (size, ranges) = equal_axes(b, 1200);
    save(&Track { title, outlines, com, size, ranges }, path)
}

struct Track<'a> {
    title: &'a str,
    outlines: &'a [(f64, Vec<(f64, f64)>)],
    com: &'a [(f64, f64)],
    size: (u32, u32),
    ranges: [f64; 4],
}

impl Figure for Track<'_> {
    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = titled(root, self.title)?;
        let [x0, x1, y0, y1] = self.ranges;
        let mut chart = chart_on(&body, [x0, x1, y0, y1], ("x (m)", "y (m)"))?;
        bodies_and_path(&mut chart, self.outlines, self.com, 2)?;
        legend(&mut chart)
    }
}

/// A quantity over a grid of two inputs, as a contour plot: filled colour bands (blue low to
/// yellow high, bilinear between grid points), labelled contour lines, the grid points as
/// dots, and a colour bar with `value_label`'s unit. `values[j][i]` is at (`xs[i]`, `ys[j]`);
/// non-finite values are left blank. Writes `path` (PNG) and the SVG beside it.
pub fn plot_contour(
    title: &str,
    axes: (&str, &str),
    value_label: &str,
    xs: &[f64],
    ys: &[f64],
    values: &[Vec<f64>],
    path: &Path,
) -> Result<(), String> {
    if xs.len() < 2 || ys.len() < 2 || values.len() != ys.len() || values.iter().any(|row| row.len() != xs.len()) {
        return Err(format!("a contour plot needs a grid of at least 2 x 2 values, got {} x {}", xs.len(), ys.len()));
    }
    let finite: Vec<f64> = values.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    let (mut low, mut high) =
        finite.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
    if finite.is_empty() {
        return Err("nothing to plot: no finite values".into());
    }
    if !(high > low) {
        low -= 0.5;
        high += 0.5;
    }
    save(&Contour { title, axes, value_label, xs, ys, values, range: (low, high) }, path)
}

struct Contour<'a> {
    title: &'a str,
    axes: (&'a str, &'a str),
    value_label: &'a str,
    xs: &'a [f64],
    ys: &'a [f64],
    values: &'a [Vec<f64>],
    range: (f64, f64),
}

/// Dark blue through teal to yellow as `f` goes 0 to 1.
fn colour_map(f: f64) -> RGBColor {
    const STOPS: [[f64; 3]; 4] =
        [[40.0, 30.0, 120.0], [30.0, 120.0, 160.0], [80.0, 190.0, 110.0], [250.0, 230.0, 40.0]];
    let f = f.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let k = (f.floor() as usize).min(STOPS.len() - 2);
    let u = f - k as f64;
    let c = |i: usize| (STOPS[k][i] + u * (STOPS[k + 1][i] - STOPS[k][i])) as u8;
    RGBColor(c(0), c(1), c(2))
}

impl Contour<'_> {
    /// Bilinear value at (x, y) inside the grid.
    fn at(&self, x: f64, y: f64) -> f64 {
        let cell = |v: f64, grid: &[f64]| {
            let k = grid.windows(2).position(|w| v <= w[1]).unwrap_or(grid.len() - 2);
            (k, ((v - grid[k]) / (grid[k + 1] - grid[k])).clamp(0.0, 1.0))
        };
        let (i, u) = cell(x, self.xs);
        let (j, w) = cell(y, self.ys);
        let v = &self.values;
        (1.0 - w) * ((1.0 - u) * v[j][i] + u * v[j][i + 1]) + w * ((1.0 - u) * v[j + 1][i] + u * v[j + 1][i + 1])
    }

    /// Contour segments at `level` by marching squares over the grid cells.
    fn segments(&self, level: f64) -> Vec<[(f64, f64); 2]> {
        let mut out = Vec::new();
        for j in 0..self.ys.len() - 1 {
            for i in 0..self.xs.len() - 1 {
                let corners = [
                    (self.xs[i], self.ys[j], self.values[j][i]),
                    (self.xs[i + 1], self.ys[j], self.values[j][i + 1]),
                    (self.xs[i + 1], self.ys[j + 1], self.values[j + 1][i + 1]),
                    (self.xs[i], self.ys[j + 1], self.values[j + 1][i]),
                ];
                if corners.iter().any(|c| !c.2.is_finite()) {
                    continue;
                }
                let mut crossings = Vec::new();
                for e in 0..4 {
                    let (a, b) = (corners[e], corners[(e + 1) % 4]);
                    if (a.2 < level) != (b.2 < level) {
                        let u = (level - a.2) / (b.2 - a.2);
                        crossings.push((a.0 + u * (b.0 - a.0), a.1 + u * (b.1 - a.1)));
                    }
                }
                for pair in crossings.chunks_exact(2) {
                    out.push([pair[0], pair[1]]);
                }
            }
        }
        out
    }
}

impl Figure for Contour<'_> {
    fn size(&self) -> (u32, u32) {
        (1100, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = titled(root, self.title)?;
        let (width, _) = body.dim_in_pixel();
        let (main, bar) = body.split_horizontally(width - 170);
        let (x0, x1) = (self.xs[0], self.xs[self.xs.len() - 1]);
        let (y0, y1) = (self.ys[0], self.ys[self.ys.len() - 1]);
        let (low, high) = self.range;
        let mut chart = chart_on(&main, [x0, x1, y0, y1], self.axes)?;
        // Filled bands on a raster finer than the grid.
        let cells = 80;
        let mut rectangles = Vec::new();
        for a in 0..cells {
            for b in 0..cells {
                let (xa, xb) =
                    (x0 + (x1 - x0) * a as f64 / cells as f64, x0 + (x1 - x0) * (a + 1) as f64 / cells as f64);
                let (ya, yb) =
                    (y0 + (y1 - y0) * b as f64 / cells as f64, y0 + (y1 - y0) * (b + 1) as f64 / cells as f64);
                let v = self.at(0.5 * (xa + xb), 0.5 * (ya + yb));
                if v.is_finite() {
                    rectangles
                        .push(Rectangle::new([(xa, ya), (xb, yb)], colour_map((v - low) / (high - low)).filled()));
                }
            }
        }
        chart.draw_series(rectangles).map_err(drawing_error)?;
        // Eight contour lines, each labelled with its value at its middle segment, to three
        // significant figures of the range.
        let decimals = (2.0 - (high - low).log10().floor()).clamp(0.0, 6.0) as usize;
        for k in 1..8 {
            let level = low + (high - low) * k as f64 / 8.0;
            let segments = self.segments(level);
            chart
                .draw_series(segments.iter().map(|s| PathElement::new(s.to_vec(), BLACK.stroke_width(1))))
                .map_err(drawing_error)?;
            if let Some(s) = segments.get(segments.len() / 2) {
                let at = (0.5 * (s[0].0 + s[1].0), 0.5 * (s[0].1 + s[1].1));
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{level:.decimals$}"),
                        at,
                        (FAMILY, 13).into_font().color(&BLACK),
                    )))
                    .map_err(drawing_error)?;
            }
        }
        let dots = self.ys.iter().flat_map(|&y| self.xs.iter().map(move |&x| Circle::new((x, y), 2, BLACK.filled())));
        chart.draw_series(dots).map_err(drawing_error)?;
        // Colour bar.
        let mut scale = ChartBuilder::on(&bar)
            .margin(MARGIN)
            .margin_top(MARGIN + 8)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(0)
            .right_y_label_area_size(90)
            .build_cartesian_2d(0.0..1.0, low..high)
            .map_err(drawing_error)?;
        let steps = 100;
        scale
            .draw_series((0..steps).map(|k| {
                let (a, b) =
                    (low + (high - low) * k as f64 / steps as f64, low + (high - low) * (k + 1) as f64 / steps as f64);
                Rectangle::new([(0.0, a), (1.0, b)], colour_map((k as f64 + 0.5) / steps as f64).filled())
            }))
            .map_err(drawing_error)?;
        scale
            .configure_mesh()
            .disable_x_mesh()
            .disable_y_mesh()
            .disable_x_axis()
            .y_desc(self.value_label)
            .axis_desc_style((FAMILY, 16))
            .label_style((FAMILY, 14))
            .draw()
            .map_err(drawing_error)?;
        Ok(())
    }
}

/// Paths seen from above at one scale on both axes, one legend entry each (for instance two
/// models' centre-of-mass trajectories). Writes `path` (PNG) and the SVG beside it.
pub fn plot_paths(title: &str, series: &[Series], path: &Path) -> Result<(), String> {
    plot_paths_in(title, ("x (m)", "y (m)"), series, path)
}

/// Paths in any plane at one scale on both axes, with the axes' titles (units included):
/// the x-z plane seen from the side, or a projection of 3D paths.
pub fn plot_paths_in(title: &str, axes: (&str, &str), series: &[Series], path: &Path) -> Result<(), String> {
    let Some(b) = bounds(series.iter().flat_map(|s| s.points.iter())) else {
        return Err("nothing to plot: no samples, or samples that are not finite".into());
    };
    let (size, ranges) = equal_axes(b, 1200);
    save(&Paths { title, axes, series, size, ranges }, path)
}

struct Paths<'a> {
    title: &'a str,
    axes: (&'a str, &'a str),
    series: &'a [Series],
    size: (u32, u32),
    ranges: [f64; 4],
}

impl Figure for Paths<'_> {
    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = titled(root, self.title)?;
        let mut chart = chart_on(&body, self.ranges, self.axes)?;
        for s in self.series {
            let colour = rgb(s.colour);
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))
                .map_err(drawing_error)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        }
        legend(&mut chart)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_size(path: &Path) -> (u32, u32, Vec<u8>) {
        let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut data = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut data).unwrap();
        (info.width, info.height, data)
    }

    /// A time series figure in PNG and SVG: the SVG carries the title, both axis titles with
    /// units and every legend entry; the PNG is drawn (not blank).
    #[test]
    fn time_series_have_titles_units_and_a_legend() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("series.png");
        let series: Vec<Series> = ["base_x", "base_y"]
            .iter()
            .enumerate()
            .map(|(k, name)| Series {
                name: name.to_string(),
                colour: [200, 30 * k as u8, 30],
                points: (0..50).map(|i| (i as f64 * 0.1, (i as f64 * 0.1 + k as f64).sin())).collect(),
            })
            .collect();
        plot_time_series("soft snake: position", "position (m)", &series, &path).unwrap();
        let svg = std::fs::read_to_string(path.with_extension("svg")).unwrap();
        for text in ["soft snake: position", "time (s)", "position (m)", "base_x", "base_y"] {
            assert!(svg.contains(text), "the SVG lacks `{text}`");
        }
        let (width, height, data) = png_size(&path);
        assert_eq!((width, height), (1500, 620));
        let dark = data.chunks(3).filter(|p| p.iter().all(|v| *v < 100)).count();
        assert!(dark > 1000, "only {dark} dark pixels: is the text drawn?");
    }

    /// Geometry at one scale: a track 2 m wide and 0.5 m tall gives a plotting area with the
    /// same aspect, and lines to far or non-finite points are refused, not drawn.
    #[test]
    fn tracks_have_equal_axes() {
        let ((width, height), [x0, x1, y0, y1]) = equal_axes([0.0, 2.0, 0.0, 0.5], 1200);
        let plot_width = f64::from(width - 2 * MARGIN - Y_LABEL_AREA);
        let plot_height = f64::from(height - TITLE_HEIGHT - 2 * MARGIN - X_LABEL_AREA);
        let scale_x = plot_width / (x1 - x0);
        let scale_y = plot_height / (y1 - y0);
        assert!((scale_x / scale_y - 1.0).abs() < 0.01, "{scale_x} vs {scale_y} pixels per metre");
        // A thin straight track: the height floor widens the y range, not the scale.
        let ((w, h), [a0, a1, b0, b1]) = equal_axes([0.0, 3.0, 0.0, 0.0], 1200);
        let sx = f64::from(w - 2 * MARGIN - Y_LABEL_AREA) / (a1 - a0);
        let sy = f64::from(h - TITLE_HEIGHT - 2 * MARGIN - X_LABEL_AREA) / (b1 - b0);
        assert!((sx / sy - 1.0).abs() < 0.01, "{sx} vs {sy}");

        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("track.png");
        let outlines = vec![(0.0, vec![(0.0, 0.0), (0.3, 0.05)]), (1.0, vec![(0.5, 0.1), (0.8, 0.15)])];
        plot_track("soft snake: track", &outlines, &[(0.1, 0.0), (0.6, 0.1)], &path).unwrap();
        let svg = std::fs::read_to_string(path.with_extension("svg")).unwrap();
        for text in ["x (m)", "y (m)", "centre of mass", "body at t = 0.0 s", "body at t = 1.0 s"] {
            assert!(svg.contains(text), "the SVG lacks `{text}`");
        }
        let error = plot_track("t", &[(0.0, vec![(f64::NAN, 0.0)])], &[], &path).unwrap_err();
        assert!(error.contains("not finite"), "{error}");
    }
}
