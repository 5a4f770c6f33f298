//! The contact forces on the closed-loop system apart from the per-point path in
//! `generalized_force`: robots served frame by frame (soft skins), the floor's equal shares,
//! each point's contact through the face of a stair's step it entered, and the normal forces
//! obstacles exert, which the admittance controller reads.

use super::{ContactReport, Simulation};
use crate::environment::contact_frame::{frame_generalized_force, point_velocity, point_wrench};
use crate::environment::terrain::{SurfaceContact, Terrain};
use crate::robot::model::{Model, ParamSet, CONTACT_CHUNK};
use nalgebra::{SMatrix, SVector, Vector3, Vector6};

/// The contact segment being summed (frames that share their columns outside their own
/// coordinates): those columns, its twist, and the wrench of its frames so far (with its
/// normal part when reporting).
struct Segment<const N: usize> {
    index: usize,
    columns: SMatrix<f64, 6, N>,
    twist: Vector6<f64>,
    wrench: Vector6<f64>,
    normal_wrench: Vector6<f64>,
}

impl<R: Model<N, C>, const N: usize, const C: usize> Simulation<R, N, C> {
    /// Contact through the frames carrying the points (soft robots' skin rings), frame by
    /// frame: the frame's points are placed (without a report, only when the terrain can reach
    /// the ball about its origin that holds them, so rings in the air cost their origin
    /// alone); for a frame with a point in touch, its own columns (its section's coordinates)
    /// and its twist once, then per point its velocity from the twist and its force into the
    /// frame's wrench. The wrench reaches the frame's own coordinates through its own columns
    /// and is added to its segment's; the columns every frame of a segment shares, and the
    /// segment's twist, are built once per segment, and its wrench reaches those coordinates
    /// once.
    pub(super) fn frame_contact_force(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        mut force: SVector<f64, N>,
        mut report: Option<&mut ContactReport<N, C>>,
    ) -> SVector<f64, N> {
        let mut positions = [Vector3::zeros(); C];
        // A report lists every point's position.
        let place_all = report.is_some();
        if place_all {
            R::contact_positions_into(q, &self.params, cache, &mut positions);
        }
        let mut segment = Segment {
            index: usize::MAX,
            columns: SMatrix::zeros(),
            twist: Vector6::zeros(),
            wrench: Vector6::zeros(),
            normal_wrench: Vector6::zeros(),
        };
        // A chunk's frames (neighbouring skin rings) are placed, and their own columns built,
        // together in SIMD lanes: once for the chunk, when the first of them needs it.
        let mut placed_chunk = usize::MAX;
        let mut own_chunk = usize::MAX;
        let mut owns = [SMatrix::<f64, 6, 3>::zeros(); CONTACT_CHUNK];
        let mut axes = [Vector3::zeros(); CONTACT_CHUNK];
        let mut centre = Vector3::zeros();
        for frame in 0..R::CONTACT_FRAME_START.len().saturating_sub(1) {
            let chunk = R::contact_frame_chunk(frame);
            if !place_all {
                match &self.onsets {
                    // With located onsets only armed points carry force: a frame without
                    // one is skipped unplaced, and one with one is most likely in touch.
                    Some(onsets) if !onsets.armed_in_frame.is_empty() => {
                        if onsets.armed_in_frame[frame] == 0 {
                            continue;
                        }
                    }
                    _ => {
                        let radius = R::contact_frame_sphere(frame, q, &self.params, cache, &mut centre);
                        if !self.config.terrain.may_touch(&centre, radius) {
                            continue;
                        }
                    }
                }
                self.place_chunk_of(frame, q, cache, &mut placed_chunk, &mut positions);
            }
            let (first, count) = R::CONTACT_FRAME_OWN[frame];
            let lane = frame - chunk;
            let (first, count) = (first as usize, count as usize);
            // Total wrench on the frame, and its normal part when reporting.
            let mut wrench = Vector6::zeros();
            let mut normal_wrench = Vector6::zeros();
            let mut twist = Vector6::zeros();
            let mut touching = false;
            for index in R::CONTACT_FRAME_START[frame] as usize..R::CONTACT_FRAME_START[frame + 1] as usize {
                // A report shows what a step from this state would see: every point in touch.
                if !place_all && !self.armed(index) {
                    continue;
                }
                let Some(contact) = self.contact_of(index, &positions[index]) else { continue };
                if !touching {
                    let index = R::CONTACT_FRAME_SEGMENT[frame] as usize;
                    if index != segment.index {
                        self.flush_segment(&segment, &mut force, report.as_deref_mut());
                        segment.index = index;
                        R::contact_segment_into(index, q, &self.params, cache, &mut segment.columns);
                        segment.twist = segment.columns * qd;
                        segment.wrench = Vector6::zeros();
                        segment.normal_wrench = Vector6::zeros();
                    }
                    if chunk != own_chunk {
                        R::contact_chunk_own_into(chunk, q, &self.params, cache, &mut owns, &mut axes);
                        own_chunk = chunk;
                    }
                    twist = segment.twist;
                    for c in 0..count {
                        twist += owns[lane].column(c) * qd[first + c];
                    }
                    touching = true;
                }
                let velocity = point_velocity(&twist, &positions[index]);
                let sample = self.config.contact.force(&contact, &velocity, &axes[lane]);
                if sample.normal_force == 0.0 {
                    continue;
                }
                let total = sample.total();
                wrench += point_wrench(&total, &positions[index]);
                if let Some(r) = report.as_deref_mut() {
                    normal_wrench += point_wrench(&sample.normal, &positions[index]);
                    r.forces[index] = total;
                    r.active += 1;
                    r.max_depth = r.max_depth.max(contact.depth);
                }
            }
            if touching {
                let own = &owns[lane];
                for c in 0..count {
                    force[first + c] += own.column(c).dot(&wrench);
                }
                segment.wrench += wrench;
                if let Some(r) = report.as_deref_mut() {
                    for c in 0..count {
                        let normal = own.column(c).dot(&normal_wrench);
                        r.normal_generalized[first + c] += normal;
                        r.friction_generalized[first + c] += own.column(c).dot(&wrench) - normal;
                    }
                    segment.normal_wrench += normal_wrench;
                }
            }
        }
        self.flush_segment(&segment, &mut force, report.as_deref_mut());
        if self.meets_edges() {
            // The chords need both their points, which frames out of reach left unplaced.
            if !place_all {
                R::contact_positions_into(q, &self.params, cache, &mut positions);
            }
            self.edge_contact_force(q, qd, cache, &positions, &mut force, report.as_deref_mut(), None);
        }
        if let Some(r) = report {
            r.positions = positions;
        }
        force
    }

    /// A segment's wrench into the generalized force through its shared columns (and the
    /// report's normal and friction parts); nothing before the first segment.
    #[inline]
    fn flush_segment(
        &self,
        segment: &Segment<N>,
        force: &mut SVector<f64, N>,
        report: Option<&mut ContactReport<N, C>>,
    ) {
        if segment.index == usize::MAX {
            return;
        }
        *force += frame_generalized_force(&segment.columns, &segment.wrench);
        if let Some(r) = report {
            let normal = frame_generalized_force(&segment.columns, &segment.normal_wrench);
            r.normal_generalized += normal;
            r.friction_generalized +=
                frame_generalized_force(&segment.columns, &(segment.wrench - segment.normal_wrench));
        }
    }

    /// The floor: every point carries an equal share of the weight; friction only.
    pub(super) fn floor_force(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        positions: [Vector3<f64>; C],
        mut force: SVector<f64, N>,
        report: Option<&mut ContactReport<N, C>>,
    ) -> SVector<f64, N> {
        let gravity = self.gravity_index.map_or(0.0, |i| self.params.get(i));
        let load = R::total_mass(&self.params) * gravity / C as f64;
        let mut velocities = [Vector3::zeros(); C];
        let mut axes = [Vector3::zeros(); C];
        R::contact_velocities_into(q, qd, &self.params, cache, &mut velocities);
        R::contact_axes_into(q, &self.params, cache, &mut axes);
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        let mut friction_total = SVector::<f64, N>::zeros();
        let mut forces = [Vector3::zeros(); C];
        for index in 0..C {
            let sample = self.config.contact.with_normal_force(load, &Vector3::z(), &velocities[index], &axes[index]);
            R::contact_jacobian_into(index, q, &self.params, cache, &mut jacobian);
            let generalized = jacobian.tr_mul(&sample.friction);
            force += generalized;
            friction_total += generalized;
            forces[index] = sample.total();
        }
        if let Some(r) = report {
            r.positions = positions;
            r.forces = forces;
            r.friction_generalized = friction_total;
            r.active = C;
        }
        force
    }

    /// The contact of point `index` at `position`: inside a stair's step, through the face
    /// it entered.
    #[inline]
    pub(in crate::simulation) fn contact_of(&self, index: usize, position: &Vector3<f64>) -> Option<SurfaceContact> {
        self.config.terrain.contact_entered(position, self.entered[index])
    }

    /// On a stair, for each contact point outside the step at `q`: the face it would enter
    /// the step through (a point inside keeps the face it entered); and for each chord, the
    /// side of the edge it comes from. Nothing elsewhere, and no placing of points.
    pub(super) fn remember_step_sides(&mut self, q: &SVector<f64, N>) {
        if !matches!(self.config.terrain, Terrain::Stair { .. }) || C == 0 {
            return;
        }
        let cache = R::cache(q, &self.params);
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(q, &self.params, &cache, &mut positions);
        self.remember_chord_sides(&positions);
        for (entered, position) in self.entered.iter_mut().zip(&positions) {
            if self.config.terrain.contact(position).is_none() {
                *entered = self.config.terrain.entry_face(position);
            }
        }
        self.points_under_edge_enter_the_top(&positions);
    }

    /// The generalized force of the normal contact forces that obstacles exert
    /// ([`Terrain::is_obstacle`]), from a report of the state `q`: each touching point's
    /// force projected on its surface's normal (friction lies in the surface), through its
    /// Jacobian, and the stair's edge's on the chords.
    pub(super) fn obstacle_normal_generalized(
        &self,
        q: &SVector<f64, N>,
        cache: &R::Cache,
        report: &ContactReport<N, C>,
    ) -> SVector<f64, N> {
        let mut generalized = report.edge_normal_generalized;
        let mut jacobian = SMatrix::<f64, 3, N>::zeros();
        for (index, (position, force)) in report.positions.iter().zip(&report.forces).enumerate() {
            if *force == Vector3::zeros() || !self.config.terrain.is_obstacle(position) {
                continue;
            }
            let Some(contact) = self.contact_of(index, position) else { continue };
            R::contact_jacobian_into(index, q, &self.params, cache, &mut jacobian);
            generalized += jacobian.tr_mul(&(contact.normal * contact.normal.dot(force)));
        }
        generalized
    }
}
