//! 3D animation pages of runs: a run's samples (a CSV of t, the coordinates and the contact
//! forces, as every command writes) become frames at a fixed display rate, posed by the
//! robot's generated drawing kernels, written with three.js into one self-contained HTML
//! file that opens from disk with no server and no network.

use super::output::PendingFile;
use softgen_runtime::nalgebra::{Rotation3, SVector, UnitQuaternion, Vector3};
use softgen_runtime::{BodyGeometry, FramePose, Model, ParamSet, PlaneOfMotion, Terrain};
use std::io::Write;
use std::path::Path;

/// Frames per second of simulated time the page holds (and plays at speed 1).
pub const DISPLAY_RATE: f64 = 60.0;

const TEMPLATE: &str = include_str!("../../../assets/view/view.html");
const VIEWER: &str = include_str!("../../../assets/view/view.js");
/// three.js and its orbit controls, bundled from the npm packages by assets/three/bundle.sh.
const THREE: &str = include_str!("../../../assets/three/three.iife.min.js");

/// What a page shows besides the samples: its title, a line under it, and the terrain and
/// parameters the run had.
pub struct ViewSetup<'a> {
    /// The page's title.
    pub title: &'a str,
    /// The line under it.
    pub summary: &'a str,
    /// The run's terrain (None: the robot's spec default).
    pub terrain: Option<Terrain>,
    /// Parameter overrides by name, as the run had them.
    pub params: &'a [(String, f64)],
}

/// The page (HTML) of the run whose CSV text is `text` (read from `csv`), for robot `R`,
/// and its number of frames. The CSV's columns named after the robot's coordinates give the
/// poses, `<point>_fx`, `_fy`, `_fz` the contact forces (points with a non-zero force are
/// drawn touching), a column named after a thruster its thrust, and every other column
/// (centre of mass, commands, pressures) is a series for the side panel.
pub fn page_from_csv<R: Model<N, C>, const N: usize, const C: usize>(
    text: &str,
    csv: &Path,
    setup: &ViewSetup,
) -> Result<(String, usize), String> {
    let table = CsvTable::parse(text).map_err(|e| format!("{}: {e}", csv.display()))?;
    PageWriter { table: &table, csv, setup }.page::<R, N, C>()
}

/// Writes `html` to `page`, replacing an earlier page only once it is whole.
pub fn write_page(page: &Path, html: &str) -> Result<(), String> {
    let (pending, mut file) = PendingFile::create(page)?;
    file.write_all(html.as_bytes()).map_err(|e| format!("{}: {e}", page.display()))?;
    drop(file);
    pending.commit()
}

/// A CSV of numbers: its header and rows.
pub struct CsvTable {
    /// The header's column names.
    pub columns: Vec<String>,
    /// The rows, each as many numbers as there are columns.
    pub rows: Vec<Vec<f64>>,
}

impl CsvTable {
    /// Parses `text`; errors name the line and column (the caller adds the file).
    pub fn parse(text: &str) -> Result<CsvTable, String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or("empty file: no header")?;
        let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
        let mut rows = Vec::new();
        for (index, line) in lines {
            let row = line
                .split(',')
                .enumerate()
                .map(|(k, v)| {
                    v.trim().parse::<f64>().map_err(|_| {
                        let column = columns.get(k).map_or("past the header", |c| c.as_str());
                        format!("line {}, column `{column}`: `{}` is not a number", index + 1, v.trim())
                    })
                })
                .collect::<Result<Vec<f64>, String>>()?;
            if row.len() != columns.len() {
                return Err(format!("line {}: {} values for {} columns", index + 1, row.len(), columns.len()));
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err("no samples after the header".into());
        }
        Ok(CsvTable { columns, rows })
    }

    /// The index of the column named `name`, if there is one.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

struct PageWriter<'a> {
    table: &'a CsvTable,
    csv: &'a Path,
    setup: &'a ViewSetup<'a>,
}

impl PageWriter<'_> {
    fn page<R: Model<N, C>, const N: usize, const C: usize>(self) -> Result<(String, usize), String> {
        let (table, csv) = (self.table, self.csv.display());
        let mut params = R::Params::default();
        for (name, value) in self.setup.params {
            params.set(name, *value).map_err(|e| e.to_string())?;
        }
        params.check().map_err(|e| format!("parameters: {e}"))?;
        let time = table.column("t").ok_or_else(|| format!("{csv}: no column `t`"))?;
        let coordinates = R::COORDINATES
            .iter()
            .map(|c| {
                table.column(c.name).ok_or_else(|| {
                    format!(
                        "{csv}: no column `{}`, a coordinate of `{}`: is this a run of that robot?",
                        c.name,
                        R::NAME
                    )
                })
            })
            .collect::<Result<Vec<usize>, String>>()?;
        let forces: Vec<Option<[usize; 3]>> = R::CONTACT_POINTS
            .iter()
            .map(|p| {
                let axis = |a: &str| table.column(&format!("{}_{a}", p.name));
                Some([axis("fx")?, axis("fy")?, axis("fz")?])
            })
            .collect();
        let thrust_columns: Vec<Option<usize>> = R::THRUSTERS.iter().map(|t| table.column(t.name)).collect();
        let force_columns: Vec<usize> = forces.iter().flatten().flatten().copied().collect();
        let series: Vec<usize> =
            (0..table.columns.len()).filter(|k| *k != time && !force_columns.contains(k)).collect();
        let unit = |name: &str| -> &'static str {
            match R::COORDINATES.iter().find(|c| c.name == name) {
                Some(c) => c.kind.unit(),
                None if name.starts_with("com_") => "m",
                None => "",
            }
        };

        let terrain = self.setup.terrain.unwrap_or(R::ENVIRONMENT.terrain);
        let mut recorder = Recorder::<R, N, C>::new(params.clone(), terrain);
        // The first row in each 1/60 s of simulated time, and the last row.
        let mut shown: Option<(i64, f64)> = None;
        let last = table.rows.len() - 1;
        for (index, row) in table.rows.iter().enumerate() {
            let t = row[time];
            if !t.is_finite() {
                return Err(format!("{csv}: row {} has t = {t}", index + 2));
            }
            let slot = (t * DISPLAY_RATE + 1e-6).floor() as i64;
            let wanted = match shown {
                None => true,
                Some((previous, at)) => slot > previous || (index == last && t > at),
            };
            if !wanted {
                continue;
            }
            shown = Some((slot, t));
            let q = SVector::<f64, N>::from_fn(|i, _| row[coordinates[i]]);
            if q.iter().any(|v| !v.is_finite()) {
                return Err(format!("{csv}: row {} (t = {t} s) has a coordinate that is not finite", index + 2));
            }
            // A point without force columns is in touch where the terrain says it is.
            let point_forces: Vec<Option<Vector3<f64>>> =
                forces.iter().map(|f| f.map(|[x, y, z]| Vector3::new(row[x], row[y], row[z]))).collect();
            let thrusts: Vec<f64> = thrust_columns.iter().map(|c| c.map_or(0.0, |c| row[c])).collect();
            let values: Vec<f64> = series.iter().map(|&k| row[k]).collect();
            recorder.record(t, &q, &point_forces, &thrusts, &values);
        }
        let names = series.iter().map(|&k| (table.columns[k].clone(), unit(&table.columns[k]).to_string())).collect();
        let html = recorder.page(self.setup.title, self.setup.summary, terrain, names)?;
        Ok((html, recorder.times.len()))
    }
}

/// The frames of a page as they are sampled: times, centre of mass, every drawing frame's
/// pose, the contacts in touch with their forces, thrusts and the panel's series.
struct Recorder<R: Model<N, C>, const N: usize, const C: usize> {
    params: R::Params,
    terrain: Terrain,
    times: Vec<f32>,
    com: Vec<f32>,
    /// Per sample and drawing frame: position, then the rotation as a quaternion (x, y, z, w).
    poses: Vec<f32>,
    /// Per contact in touch: point index, position, force.
    contacts: Vec<f32>,
    /// Where each sample's contacts start in `contacts` (in contacts), and the end.
    contact_offsets: Vec<usize>,
    thrusts: Vec<f32>,
    values: Vec<f32>,
    frames: Vec<FramePose>,
    /// The first sample's frames and contact points, which size the rigid bodies.
    first: Option<(Vec<FramePose>, Vec<Vector3<f64>>)>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Recorder<R, N, C> {
    fn new(params: R::Params, terrain: Terrain) -> Self {
        Recorder {
            params,
            terrain,
            times: Vec::new(),
            com: Vec::new(),
            poses: Vec::new(),
            contacts: Vec::new(),
            contact_offsets: vec![0],
            thrusts: Vec::new(),
            values: Vec::new(),
            frames: vec![FramePose::default(); R::DRAWING_FRAMES],
            first: None,
        }
    }

    /// One frame: `forces` per contact point, None where the run did not record it (the
    /// point is then in touch where it is inside the terrain, drawn without a force).
    fn record(
        &mut self,
        t: f64,
        q: &SVector<f64, N>,
        forces: &[Option<Vector3<f64>>],
        thrusts: &[f64],
        values: &[f64],
    ) {
        let p = &self.params;
        let cache = R::cache(q, p);
        R::drawing_frames_into(q, p, &cache, &mut self.frames);
        let mut points = [Vector3::zeros(); C];
        R::contact_positions_into(q, p, &cache, &mut points);
        if self.first.is_none() {
            self.first = Some((self.frames.clone(), points.to_vec()));
        }
        self.times.push(t as f32);
        self.com.extend(R::center_of_mass(q, p, &cache).iter().map(|&v| v as f32));
        for frame in &self.frames {
            let rotation = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(frame.rotation));
            let [x, y, z, w] = [rotation.i, rotation.j, rotation.k, rotation.w];
            self.poses.extend(frame.position.iter().map(|&v| v as f32));
            self.poses.extend([x, y, z, w].map(|v| v as f32));
        }
        let mut touching = 0;
        for (index, (point, force)) in points.iter().zip(forces).enumerate() {
            let (touching_now, force) = match force {
                Some(force) => (force.norm() > 0.0, *force),
                None => (self.terrain.contact(point).is_some(), Vector3::zeros()),
            };
            if touching_now {
                self.contacts.push(index as f32);
                self.contacts.extend(point.iter().chain(force.iter()).map(|&v| v as f32));
                touching += 1;
            }
        }
        self.contact_offsets.push(self.contact_offsets[self.contact_offsets.len() - 1] + touching);
        self.thrusts.extend(thrusts.iter().map(|&v| v as f32));
        self.values.extend(values.iter().map(|&v| v as f32));
    }

    /// The rigid bodies' boxes, in each body's frame: reaching its frame's origin, its
    /// children's origins, its contact points and thruster points at the first sample, as
    /// thick as its radius (or a fifth of its length when its spec gives no radius).
    fn bodies(&self) -> Vec<serde_json::Value> {
        let mut geometry = vec![BodyGeometry::default(); R::BODIES.len()];
        R::drawing_geometry_into(&self.params, &mut geometry);
        let (frames, points) = self.first.clone().unwrap_or_default();
        let robot_size = {
            let (mut low, mut high) = (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY));
            for v in frames.iter().map(|f| &f.position).chain(&points) {
                low = low.inf(v);
                high = high.sup(v);
            }
            if low.x.is_finite() {
                (high - low).norm().max(0.05)
            } else {
                0.05
            }
        };
        R::BODIES
            .iter()
            .enumerate()
            .map(|(index, body)| {
                let geometry = geometry[index];
                let chambers =
                    geometry.chambers.map(|(radius, angles)| serde_json::json!({ "radius": radius, "angles": angles }));
                let mut centre = [0.0; 3];
                let mut half = [0.0; 3];
                if body.section.is_none() && body.first_frame < frames.len() {
                    let frame = &frames[body.first_frame];
                    let local = |p: &Vector3<f64>| frame.rotation.transpose() * (p - frame.position);
                    let mut reached = vec![Vector3::zeros()];
                    for child in R::BODIES.iter().filter(|b| b.parent == Some(index)) {
                        reached.push(local(&frames[child.first_frame].position));
                    }
                    for (point, info) in points.iter().zip(R::CONTACT_POINTS) {
                        if info.body == body.name {
                            reached.push(local(point));
                        }
                    }
                    for (&frame_index, thruster) in R::THRUSTER_DRAWING_FRAMES.iter().zip(R::THRUSTERS) {
                        if thruster.body == body.name && frame_index < frames.len() {
                            reached.push(local(&frames[frame_index].position));
                        }
                    }
                    let low = reached.iter().fold(Vector3::repeat(f64::INFINITY), |a, v| a.inf(v));
                    let high = reached.iter().fold(Vector3::repeat(f64::NEG_INFINITY), |a, v| a.sup(v));
                    let length = (high - low).max();
                    let thickness = if geometry.radius > 0.0 {
                        2.0 * geometry.radius
                    } else if length > 0.0 {
                        (0.2 * length).max(0.01 * robot_size)
                    } else {
                        0.06 * robot_size
                    };
                    for a in 0..3 {
                        centre[a] = 0.5 * (low[a] + high[a]);
                        half[a] = (0.5 * (high[a] - low[a])).max(0.5 * thickness);
                    }
                }
                serde_json::json!({
                    "name": body.name,
                    "parent": body.parent,
                    "section": body.section,
                    "first_frame": body.first_frame,
                    "frames": body.frames,
                    "radius": if geometry.radius > 0.0 { geometry.radius } else { 0.02 * robot_size },
                    "chambers": chambers,
                    "centre": centre,
                    "half_extents": half,
                })
            })
            .collect()
    }

    /// The page: the template with the run's data, three.js and the viewer filled in.
    fn page(
        &self,
        title: &str,
        summary: &str,
        terrain: Terrain,
        series: Vec<(String, String)>,
    ) -> Result<String, String> {
        let terrain = match terrain {
            Terrain::None => serde_json::json!({ "kind": "none" }),
            Terrain::Flat { height } => serde_json::json!({ "kind": "flat", "height": height }),
            Terrain::Stair { position, height } => {
                serde_json::json!({ "kind": "stair", "position": position, "height": height })
            }
            Terrain::Pipe { diameter } => serde_json::json!({ "kind": "pipe", "diameter": diameter }),
            Terrain::Floor => serde_json::json!({ "kind": "floor" }),
        };
        let plane = match R::PLANE {
            PlaneOfMotion::Xz => "xz",
            PlaneOfMotion::Xy => "xy",
            PlaneOfMotion::Spatial => "spatial",
        };
        let thrusters: Vec<serde_json::Value> = R::THRUSTERS
            .iter()
            .zip(R::THRUSTER_DRAWING_FRAMES)
            .map(|(t, frame)| serde_json::json!({ "name": t.name, "frame": frame, "direction": t.direction }))
            .collect();
        let series: Vec<serde_json::Value> =
            series.into_iter().map(|(name, unit)| serde_json::json!({ "name": name, "unit": unit })).collect();
        let data = serde_json::json!({
            "robot": R::NAME,
            "title": title,
            "summary": summary,
            "plane": plane,
            "terrain": terrain,
            "water": R::IN_WATER,
            "mass": R::total_mass(&self.params),
            "bodies": self.bodies(),
            "thrusters": thrusters,
            "points": R::CONTACT_POINTS.iter().map(|p| p.name).collect::<Vec<_>>(),
            "frame_count": R::DRAWING_FRAMES,
            "times": base64_floats(&self.times),
            "com": base64_floats(&self.com),
            "poses": base64_floats(&self.poses),
            "contacts": base64_floats(&self.contacts),
            "contact_offsets": self.contact_offsets,
            "thrusts": base64_floats(&self.thrusts),
            "series": series,
            "series_values": base64_floats(&self.values),
        });
        // `</` inside a script element would end it; JSON may spell it `<\/`.
        let data = data.to_string().replace("</", "<\\/");
        for (name, script) in [("three.js", THREE), ("the viewer", VIEWER)] {
            if script.contains("</script") {
                return Err(format!("{name} contains `</script`, which cannot be embedded as it is"));
            }
        }
        // Filled last to first, so no part's text is searched for the next marker.
        let (before_viewer, after_viewer) =
            TEMPLATE.split_once("/*VIEWER*/").ok_or("view template without /*VIEWER*/")?;
        let (before_three, after_three) =
            before_viewer.split_once("/*THREE*/").ok_or("view template without /*THREE*/")?;
        let (before_run, after_run) = before_three.split_once("/*RUN*/").ok_or("view template without /*RUN*/")?;
        Ok([before_run, &data, after_run, THREE, after_three, VIEWER, after_viewer].concat())
    }
}

/// Little-endian f32s in base64 (RFC 4648, with padding), as the page's Float32Arrays read
/// them.
fn base64_floats(values: &[f32]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_little_endian_base64() {
        // 1.0f32 is 00 00 80 3f, -2.5f32 is 00 00 20 c0: whole and padded groups.
        assert_eq!(base64_floats(&[]), "");
        assert_eq!(base64_floats(&[1.0]), "AACAPw==");
        assert_eq!(base64_floats(&[1.0, -2.5]), "AACAPwAAIMA=");
    }

    #[test]
    fn a_csv_with_a_bad_number_is_refused_by_line_and_column() {
        let error = CsvTable::parse("t,q0\n0,1\n0.1,x\n").err().unwrap_or_default();
        assert!(error.contains("line 3") && error.contains("`q0`") && error.contains("`x`"), "{error}");
        let error = CsvTable::parse("t,q0\n0,1,2\n").err().unwrap_or_default();
        assert!(error.contains("3 values for 2 columns"), "{error}");
        assert!(CsvTable::parse("").is_err() && CsvTable::parse("t,q0\n").is_err());
    }
}
