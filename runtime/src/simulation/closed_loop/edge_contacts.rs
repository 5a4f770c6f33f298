//! A stair's top edge pressing on the chords between neighbouring contact points of one
//! rigid body: a link lying across the edge, which points 5 cm apart leave unsupported there.
//! Which chords a model has, the side of the edge each came from, their forces and the
//! forces' Jacobian.

use super::{ContactReport, Simulation};
use crate::environment::terrain::{ChordContact, StepFace, Terrain};
use crate::robot::model::Model;
use nalgebra::{SMatrix, SVector, Vector3};

/// The pairs of neighbouring contact points (in the spec's order) that one rigid body
/// carries, as chords along the body's surface: both on the same frame, or the second on a
/// child frame at the joint that moves it (where the body before the joint carries it too).
/// The second is taken to sit on the joint when its Jacobian has no part along the
/// coordinates its frame adds, at the spec's initial position and two other states. Points
/// on different limbs, or on soft sections' rings at different arc lengths, form no chord.
pub(super) fn rigid_chords<R: Model<N, C>, const N: usize, const C: usize>(params: &R::Params) -> Vec<(usize, usize)> {
    if C < 2 || R::CONTACT_POINT_FRAME.len() != C || R::INITIAL_POSITION.len() != N {
        return Vec::new();
    }
    let initial = SVector::<f64, N>::from_column_slice(R::INITIAL_POSITION);
    // Away from the initial position too, so that a point that sits on a joint's axis only
    // in the straight pose (where a revolute joint's column is zero by accident) is no chord.
    let states: [SVector<f64, N>; 3] = std::array::from_fn(|k| {
        initial + SVector::<f64, N>::from_fn(|j, _| 0.3 * k as f64 * (1.7 * (j + 1) as f64 + k as f64).sin())
    });
    let mut jacobians = [SMatrix::<f64, 3, N>::zeros(); 3];
    let mut chords = Vec::new();
    for first in 0..C - 1 {
        let second = first + 1;
        let (frame, next) = (R::CONTACT_POINT_FRAME[first] as usize, R::CONTACT_POINT_FRAME[second] as usize);
        if frame == next {
            chords.push((first, second));
            continue;
        }
        let (path, next_path) = (R::CONTACT_FRAME_PATH[frame], R::CONTACT_FRAME_PATH[next]);
        if next_path.len() <= path.len() || !path.iter().all(|c| next_path.contains(c)) {
            continue;
        }
        for (state, jacobian) in states.iter().zip(jacobians.iter_mut()) {
            let cache = R::cache(state, params);
            R::contact_jacobian_into(second, state, params, &cache, jacobian);
        }
        let on_joint = next_path.iter().filter(|c| !path.contains(c)).all(|&c| {
            jacobians.iter().all(|jacobian| {
                let scale = 1.0 + jacobian.amax();
                jacobian.column(c as usize).amax() <= 1e-12 * scale
            })
        });
        if on_joint {
            chords.push((first, second));
        }
    }
    chords
}

impl<R: Model<N, C>, const N: usize, const C: usize> Simulation<R, N, C> {
    /// Whether the terrain has an edge that may press on the model's chords.
    #[inline]
    pub(in crate::simulation) fn meets_edges(&self) -> bool {
        matches!(self.config.terrain, Terrain::Stair { .. }) && !self.chords.is_empty()
    }

    /// For each chord the edge does not press on at the points' `positions`, the side of
    /// the edge it comes from ([`Terrain::chord_over_edge`], with the faces its points
    /// entered the step through); a chord it presses on keeps the side it came from. Before
    /// the points' own faces are remembered: a point sunk into the top that slides back over
    /// the edge hands its support on to the chord it then forms with the edge.
    pub(super) fn remember_chord_sides(&mut self, positions: &[Vector3<f64>; C]) {
        let terrain = self.config.terrain;
        for (&(a, b), over) in self.chords.iter().zip(self.chord_over.iter_mut()) {
            if terrain.edge_contact(&positions[a], &positions[b], *over).is_none() {
                *over = terrain.chord_over_edge(&positions[a], &positions[b], [self.entered[a], self.entered[b]]);
            }
        }
    }

    /// The points before the step's face at the end of a chord the edge presses on enter
    /// the step through its top: a link lying on the edge that slides forward takes its
    /// rear point onto the top at the depth the edge held it, the edge's support handed on
    /// to the point. After the points' own faces are remembered.
    pub(super) fn points_under_edge_enter_the_top(&mut self, positions: &[Vector3<f64>; C]) {
        let terrain = self.config.terrain;
        let Terrain::Stair { position, .. } = terrain else { return };
        for (&(a, b), &over) in self.chords.iter().zip(&self.chord_over) {
            if terrain.edge_contact(&positions[a], &positions[b], over).is_some() {
                let front = if positions[a].x < position { a } else { b };
                self.entered[front] = Some(StepFace::Top);
            }
        }
    }

    /// The chords the edge touches with the points at `positions`, each with the edge's
    /// contact on it and the Jacobian and axis at the edge's place on it: (1 - s) and s of
    /// its two points' Jacobians, exact on a rigid body.
    fn chords_at_edge<'a>(
        &'a self,
        q: &'a SVector<f64, N>,
        cache: &'a R::Cache,
        positions: &'a [Vector3<f64>; C],
    ) -> impl Iterator<Item = ChordAtEdge<N>> + 'a {
        let terrain = self.config.terrain;
        self.chords.iter().zip(&self.chord_over).enumerate().filter_map(move |(chord, (&(a, b), &over))| {
            let edge = terrain.edge_contact(&positions[a], &positions[b], over)?;
            let (mut first, mut second) = (SMatrix::<f64, 3, N>::zeros(), SMatrix::<f64, 3, N>::zeros());
            R::contact_jacobian_into(a, q, &self.params, cache, &mut first);
            R::contact_jacobian_into(b, q, &self.params, cache, &mut second);
            let jacobian = first * (1.0 - edge.along) + second * edge.along;
            let axis = (positions[b] - positions[a]).normalize();
            Some(ChordAtEdge { chord, edge, jacobian, axis })
        })
    }

    /// The edge's forces on the chords at (q, qd), with the points at `positions`: each at
    /// its place along the chord, with the velocity and Jacobian the two points' give there
    /// ((1 - s) and s of theirs, exact on a rigid body), added to `force` through that
    /// Jacobian. With a report, into its normal and friction parts, its obstacles' part and
    /// its deepest penetration; with `velocity_force`, J' (df/dv) J added to it. How many
    /// chords it presses on.
    // Out of line and cold, so that off a stair the right-hand side pays one test for it.
    // (What kept the flat-ground contact force as fast as before was inlining the contact
    // law's force and the terrain's contact, which its call had pushed out of the loop.)
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::simulation) fn edge_contact_force(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        positions: &[Vector3<f64>; C],
        force: &mut SVector<f64, N>,
        mut report: Option<&mut ContactReport<N, C>>,
        mut velocity_force: Option<&mut SMatrix<f64, N, N>>,
    ) -> usize {
        if !self.meets_edges() {
            return 0;
        }
        let mut pressed = 0;
        for ChordAtEdge { chord, edge, jacobian, axis } in self.chords_at_edge(q, cache, positions) {
            let velocity = jacobian * qd;
            let sample = self.config.contact.force(&edge.contact, &velocity, &axis);
            if sample.normal_force == 0.0 {
                continue;
            }
            pressed += 1;
            *force += jacobian.tr_mul(&sample.total());
            if let Some(velocity_force) = velocity_force.as_deref_mut() {
                let slopes = self.config.contact.force_slopes(&edge.contact, &velocity, &axis).by_velocity();
                *velocity_force += jacobian.tr_mul(&(slopes * jacobian));
            }
            if let Some(r) = report.as_deref_mut() {
                let normal = jacobian.tr_mul(&sample.normal);
                r.normal_generalized += normal;
                r.friction_generalized += jacobian.tr_mul(&sample.friction);
                r.edge_normal_generalized += normal;
                r.edge_forces[chord] = sample.total();
                r.edges_pressed += 1;
                r.max_depth = r.max_depth.max(edge.contact.depth);
            }
        }
        pressed
    }

    /// The edge's forces' part of the contact Jacobian at (q, qd), added to the two
    /// matrices, and with `contact_force` their generalized force, added to it: by the rates
    /// J' (df/dv) J per chord, by the coordinates by central differences of the chords'
    /// generalized force (a few chords at a time, only while the edge presses on one; their
    /// geometry's tangent, through the two points' Jacobians' own, is not worth its code).
    pub(in crate::simulation) fn edge_contact_jacobian(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        position_force: &mut SMatrix<f64, N, N>,
        velocity_force: &mut SMatrix<f64, N, N>,
        contact_force: Option<&mut SVector<f64, N>>,
    ) {
        if !self.meets_edges() {
            return;
        }
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(q, &self.params, cache, &mut positions);
        let mut force = SVector::<f64, N>::zeros();
        if self.edge_contact_force(q, qd, cache, &positions, &mut force, None, Some(velocity_force)) == 0 {
            return;
        }
        if let Some(contact_force) = contact_force {
            *contact_force += force;
        }
        let force_at = |q: &SVector<f64, N>| {
            let cache = R::cache(q, &self.params);
            let mut positions = [Vector3::zeros(); C];
            R::contact_positions_into(q, &self.params, &cache, &mut positions);
            let mut force = SVector::<f64, N>::zeros();
            self.edge_contact_force(q, qd, &cache, &positions, &mut force, None, None);
            force
        };
        for j in 0..N {
            // Central differences: error of order h^2 against rounding of order 1e-16 / h.
            let step = 1e-6 * (1.0 + q[j].abs());
            let (mut plus, mut minus) = (*q, *q);
            plus[j] += step;
            minus[j] -= step;
            let column = (force_at(&plus) - force_at(&minus)) / (2.0 * step);
            position_force.set_column(j, &(position_force.column(j) + column));
        }
    }

    /// The stiff part of the edge's forces' Jacobian at (q, qd), added to the two matrices:
    /// per pressed chord J' (df/dv) J and J' (df/dp) J, the edge's normal held still (as the
    /// points' stiff part holds their surfaces').
    pub(in crate::simulation) fn edge_contact_stiffness(
        &self,
        q: &SVector<f64, N>,
        qd: &SVector<f64, N>,
        cache: &R::Cache,
        position_force: &mut SMatrix<f64, N, N>,
        velocity_force: &mut SMatrix<f64, N, N>,
    ) {
        if !self.meets_edges() {
            return;
        }
        let mut positions = [Vector3::zeros(); C];
        R::contact_positions_into(q, &self.params, cache, &mut positions);
        for ChordAtEdge { edge, jacobian, axis, .. } in self.chords_at_edge(q, cache, &positions) {
            let (by_velocity, by_position) =
                self.config.contact.force_derivatives(&edge.contact, &(jacobian * qd), &axis);
            *velocity_force += jacobian.tr_mul(&(by_velocity * jacobian));
            *position_force += jacobian.tr_mul(&(by_position * jacobian));
        }
    }
}

/// A chord the edge touches ([`Simulation::chords_at_edge`]).
struct ChordAtEdge<const N: usize> {
    /// Its index in the simulation's chords.
    chord: usize,
    edge: ChordContact,
    /// Its velocity's Jacobian at the edge's place on it.
    jacobian: SMatrix<f64, 3, N>,
    /// The unit vector from its first point to its second.
    axis: Vector3<f64>,
}
