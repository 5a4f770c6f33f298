//! PNG plot of a run: the centre-of-mass path and body snapshots over time in the plane of
//! motion, with the terrain and a labelled grid. A small self-contained rasteriser, so no
//! system fonts or graphics libraries are needed.

use crate::scenario::RunSummary;
use nalgebra::Vector3;
use softgen_runtime::{PlaneOfMotion, Terrain};
use std::path::Path;

/// An RGB image with world-to-pixel mapping.
pub struct Canvas {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<[u8; 3]>,
    origin: (f64, f64),
    scale: f64,
}

/// 3x5 glyphs for tick labels: digits, minus and point.
fn glyph(c: char) -> Option<[u8; 5]> {
    Some(match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b001, 0b001, 0b001],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        '-' => [0b000, 0b000, 0b111, 0b000, 0b000],
        '.' => [0b000, 0b000, 0b000, 0b000, 0b010],
        _ => return None,
    })
}

impl Canvas {
    /// A white canvas showing the world box [x0, x1] x [y0, y1] at equal scale.
    pub fn new(x0: f64, x1: f64, y0: f64, y1: f64, max_width: usize, max_height: usize) -> Canvas {
        let margin = 40.0;
        let span_x = (x1 - x0).max(1e-6);
        let span_y = (y1 - y0).max(1e-6);
        let scale = ((max_width as f64 - 2.0 * margin) / span_x).min((max_height as f64 - 2.0 * margin) / span_y);
        let width = (span_x * scale + 2.0 * margin).ceil() as usize;
        let height = (span_y * scale + 2.0 * margin).ceil() as usize;
        Canvas {
            width,
            height,
            pixels: vec![[255, 255, 255]; width * height],
            origin: (x0 - margin / scale, y1 + margin / scale),
            scale,
        }
    }

    pub fn to_pixel(&self, x: f64, y: f64) -> (f64, f64) {
        ((x - self.origin.0) * self.scale, (self.origin.1 - y) * self.scale)
    }

    fn put(&mut self, px: i64, py: i64, color: [u8; 3]) {
        if px >= 0 && py >= 0 && (px as usize) < self.width && (py as usize) < self.height {
            self.pixels[py as usize * self.width + px as usize] = color;
        }
    }

    /// A line between world points, `thickness` pixels wide.
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), color: [u8; 3], thickness: i64) {
        let (ax, ay) = self.to_pixel(a.0, a.1);
        let (bx, by) = self.to_pixel(b.0, b.1);
        // Clip to the canvas (with the line's thickness around it) before turning pixels into
        // integers: a point far off the canvas (a stair kilometres away) would otherwise
        // saturate to i64::MAX and overflow below.
        let Some(((ax, ay), (bx, by))) = self.clip((ax, ay), (bx, by), thickness as f64) else {
            return;
        };
        let steps = ((bx - ax).abs().max((by - ay).abs()).ceil() as i64).clamp(1, 100_000);
        for s in 0..=steps {
            let f = s as f64 / steps as f64;
            let (x, y) = ((ax + f * (bx - ax)).round() as i64, (ay + f * (by - ay)).round() as i64);
            for dx in 0..thickness {
                for dy in 0..thickness {
                    self.put(x + dx - thickness / 2, y + dy - thickness / 2, color);
                }
            }
        }
    }

    /// The part of the pixel segment a-b inside the canvas grown by `pad` pixels each side
    /// (Liang-Barsky), or None when none of it is (or an end is not finite).
    fn clip(&self, a: (f64, f64), b: (f64, f64), pad: f64) -> Option<((f64, f64), (f64, f64))> {
        if ![a.0, a.1, b.0, b.1].iter().all(|v| v.is_finite()) {
            return None;
        }
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
        let bounds = [
            (-dx, a.0 + pad),
            (dx, self.width as f64 + pad - a.0),
            (-dy, a.1 + pad),
            (dy, self.height as f64 + pad - a.1),
        ];
        for (p, q) in bounds {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
            }
        }
        (t0 <= t1).then(|| ((a.0 + t0 * dx, a.1 + t0 * dy), (a.0 + t1 * dx, a.1 + t1 * dy)))
    }

    /// Fills the world rectangle [x0, x1] x [y0, y1].
    pub fn fill(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, color: [u8; 3]) {
        let (px0, py1) = self.to_pixel(x0, y0);
        let (px1, py0) = self.to_pixel(x1, y1);
        for y in py0.max(0.0) as i64..py1.min(self.height as f64) as i64 {
            for x in px0.max(0.0) as i64..px1.min(self.width as f64) as i64 {
                self.put(x, y, color);
            }
        }
    }

    /// Text in the 3x5 font at pixel position, each font pixel `size` pixels.
    pub fn text(&mut self, px: i64, py: i64, text: &str, size: i64, color: [u8; 3]) {
        for (i, c) in text.chars().enumerate() {
            let Some(rows) = glyph(c) else { continue };
            for (r, bits) in rows.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        for dx in 0..size {
                            for dy in 0..size {
                                self.put(px + (i as i64 * 4 + col) * size + dx, py + r as i64 * size + dy, color);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Grid lines every `step` (world units) with numeric labels.
    pub fn grid(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, step: f64) {
        let grey = [225, 225, 225];
        let decimals = if step >= 1.0 { 0 } else { (-step.log10()).ceil() as usize };
        let mut x = (x0 / step).floor() * step;
        while x <= x1 + 1e-9 {
            self.line((x, y0), (x, y1), grey, 1);
            let (px, _) = self.to_pixel(x, y0);
            let label = format!("{x:.decimals$}");
            self.text(px as i64 - 4, self.height as i64 - 18, &label, 2, [90, 90, 90]);
            x += step;
        }
        let mut y = (y0 / step).floor() * step;
        while y <= y1 + 1e-9 {
            self.line((x0, y), (x1, y), grey, 1);
            let (_, py) = self.to_pixel(x0, y);
            let label = format!("{y:.decimals$}");
            self.text(2, py as i64 - 5, &label, 2, [90, 90, 90]);
            y += step;
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let (pending, file) = crate::output::PendingFile::create(path)?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| format!("{}: {e}", path.display()))?;
        let data: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        writer.write_image_data(&data).map_err(|e| format!("{}: {e}", path.display()))?;
        writer.finish().map_err(|e| format!("{}: {e}", path.display()))?;
        pending.commit()
    }
}

fn nice_step(span: f64) -> f64 {
    let raw = span / 8.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let m = raw / magnitude;
    magnitude * if m < 1.5 { 1.0 } else if m < 3.5 { 2.0 } else if m < 7.5 { 5.0 } else { 10.0 }
}

/// Draws a run: terrain (brown), body snapshots (light to dark blue as time passes) and the
/// centre-of-mass path (red), in the plane of motion (x-z, or x-y seen from above).
pub fn plot_run(summary: &RunSummary, path: &Path) -> Result<(), String> {
    let project = |v: &Vector3<f64>| match summary.plane {
        PlaneOfMotion::Xz => (v.x, v.z),
        PlaneOfMotion::Xy | PlaneOfMotion::Spatial => (v.x, v.y),
    };
    let mut points: Vec<(f64, f64)> = summary.com_path.iter().map(|(_, c)| project(c)).collect();
    for (_, snapshot) in &summary.snapshots {
        points.extend(snapshot.iter().map(project));
    }
    if points.is_empty() {
        return Err("nothing to plot: the run produced no samples".into());
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &points {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    match (summary.terrain, summary.plane) {
        (Terrain::Pipe { diameter }, PlaneOfMotion::Xy) => {
            y0 = y0.min(-diameter / 2.0);
            y1 = y1.max(diameter / 2.0);
        }
        (Terrain::Stair { position, height }, PlaneOfMotion::Xz) => {
            x1 = x1.max(position + 0.1);
            y1 = y1.max(height);
            y0 = y0.min(0.0);
        }
        (Terrain::Flat { height }, PlaneOfMotion::Xz) => y0 = y0.min(height),
        _ => {}
    }
    let pad = 0.05 * (x1 - x0).max(y1 - y0).max(0.1);
    let (x0, x1, y0, y1) = (x0 - pad, x1 + pad, y0 - pad, y1 + pad);
    let mut canvas = Canvas::new(x0, x1, y0, y1, 1400, 800);
    canvas.grid(x0, x1, y0, y1, nice_step((x1 - x0).max(y1 - y0)));
    let brown = [170, 120, 70];
    match (summary.terrain, summary.plane) {
        (Terrain::Flat { height }, PlaneOfMotion::Xz) => canvas.fill(x0, x1, y0, height, [230, 210, 180]),
        (Terrain::Stair { position, height }, PlaneOfMotion::Xz) => {
            canvas.fill(x0, x1, y0, 0.0, [230, 210, 180]);
            canvas.fill(position, x1, y0, height, [230, 210, 180]);
            canvas.line((x0, 0.0), (position, 0.0), brown, 2);
            canvas.line((position, 0.0), (position, height), brown, 2);
            canvas.line((position, height), (x1, height), brown, 2);
        }
        (Terrain::Pipe { diameter }, PlaneOfMotion::Xy) => {
            canvas.line((x0, diameter / 2.0), (x1, diameter / 2.0), brown, 3);
            canvas.line((x0, -diameter / 2.0), (x1, -diameter / 2.0), brown, 3);
        }
        _ => {}
    }
    let count = summary.snapshots.len().max(1);
    for (i, (_, snapshot)) in summary.snapshots.iter().enumerate() {
        let f = i as f64 / (count.max(2) - 1) as f64;
        let shade = |light: f64, dark: f64| (light + f * (dark - light)) as u8;
        let color = [shade(170.0, 10.0), shade(200.0, 40.0), shade(255.0, 150.0)];
        for pair in snapshot.windows(2) {
            canvas.line(project(&pair[0]), project(&pair[1]), color, 3);
        }
    }
    let com: Vec<(f64, f64)> = summary.com_path.iter().map(|(_, c)| project(c)).collect();
    for pair in com.windows(2) {
        canvas.line(pair[0], pair[1], [220, 30, 30], 2);
    }
    canvas.save(path)
}

/// Time series on one panel: `series` of (colour, points (t, value)), time along x, the
/// values scaled to the panel's height, with time ticks every second and value ticks.
pub fn plot_time_series(series: &[([u8; 3], Vec<(f64, f64)>)], path: &Path) -> Result<(), String> {
    let points = series.iter().flat_map(|(_, s)| s.iter());
    let (mut t0, mut t1, mut v0, mut v1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (t, v) in points {
        t0 = t0.min(*t);
        t1 = t1.max(*t);
        v0 = v0.min(*v);
        v1 = v1.max(*v);
    }
    if !(t1 > t0) {
        return Err("nothing to plot: fewer than two samples".into());
    }
    if !(v1 > v0) {
        v0 -= 0.5;
        v1 += 0.5;
    }
    // Normalised box: 3 units of time width per unit of height.
    let (width, height) = (3.0, 1.0);
    let x = |t: f64| (t - t0) / (t1 - t0) * width;
    let y = |v: f64| (v - v0) / (v1 - v0) * height;
    let mut canvas = Canvas::new(0.0, width, 0.0, height, 1500, 560);
    let grey = [225, 225, 225];
    let mut t = t0.ceil();
    while t <= t1 + 1e-9 {
        canvas.line((x(t), 0.0), (x(t), height), grey, 1);
        let (px, _) = canvas.to_pixel(x(t), 0.0);
        canvas.text(px as i64 - 4, canvas.height as i64 - 18, &format!("{t:.0}"), 2, [90, 90, 90]);
        t += 1.0;
    }
    let step = nice_step(v1 - v0) * 2.0;
    let decimals = if step >= 1.0 { 0 } else { (-step.log10()).ceil() as usize };
    let mut v = (v0 / step).ceil() * step;
    while v <= v1 + 1e-12 {
        canvas.line((0.0, y(v)), (width, y(v)), grey, 1);
        let (_, py) = canvas.to_pixel(0.0, y(v));
        canvas.text(2, py as i64 - 5, &format!("{v:.decimals$}"), 2, [90, 90, 90]);
        v += step;
    }
    for (color, points) in series {
        for pair in points.windows(2) {
            canvas.line((x(pair[0].0), y(pair[0].1)), (x(pair[1].0), y(pair[1].1)), *color, 2);
        }
    }
    canvas.save(path)
}

/// X-Y track seen from above: polylines (light to dark as time passes) and a path in red.
pub fn plot_track(polylines: &[Vec<(f64, f64)>], path_points: &[(f64, f64)], path: &Path) -> Result<(), String> {
    let all = polylines.iter().flatten().chain(path_points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if !(x1 >= x0) {
        return Err("nothing to plot".into());
    }
    let pad = 0.05 * (x1 - x0).max(y1 - y0).max(0.1);
    let (x0, x1, y0, y1) = (x0 - pad, x1 + pad, y0 - pad, y1 + pad);
    let mut canvas = Canvas::new(x0, x1, y0, y1, 1200, 900);
    canvas.grid(x0, x1, y0, y1, nice_step((x1 - x0).max(y1 - y0)));
    let count = polylines.len().max(2);
    for (i, line) in polylines.iter().enumerate() {
        let f = i as f64 / (count - 1) as f64;
        let shade = |light: f64, dark: f64| (light + f * (dark - light)) as u8;
        let color = [shade(170.0, 10.0), shade(200.0, 40.0), shade(255.0, 150.0)];
        for pair in line.windows(2) {
            canvas.line(pair[0], pair[1], color, 2);
        }
    }
    for pair in path_points.windows(2) {
        canvas.line(pair[0], pair[1], [220, 30, 30], 2);
    }
    canvas.save(path)
}

#[cfg(test)]
mod tests {
    use super::Canvas;

    /// A line whose far end lies light-years off the canvas draws its visible part and never
    /// overflows a pixel coordinate (debug builds check the arithmetic).
    #[test]
    fn lines_to_far_points_are_clipped() {
        let mut canvas = Canvas::new(0.0, 1.0, 0.0, 1.0, 200, 200);
        canvas.line((0.5, 0.5), (-1e241, 0.5), [0, 0, 0], 3);
        canvas.line((f64::NAN, 0.0), (0.5, 0.5), [0, 0, 0], 3);
        canvas.line((1e300, 1e300), (2e300, -1e300), [0, 0, 0], 3);
        let dark = canvas.pixels.iter().filter(|p| **p == [0, 0, 0]).count();
        // The visible half of the first line: from the centre to the left edge, 3 pixels wide.
        let (cx, _) = canvas.to_pixel(0.5, 0.5);
        assert!(dark as f64 >= 3.0 * cx, "only {dark} pixels drawn for a line {cx} pixels long");
        let (_, cy) = canvas.to_pixel(0.5, 0.5);
        let row = cy.round() as usize;
        assert_eq!(canvas.pixels[row * canvas.width + 1], [0, 0, 0], "the line reaches the left edge");
    }
}
