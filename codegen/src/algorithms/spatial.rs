//! Spatial vector algebra (Featherstone) on DAG nodes, in world coordinates with Plücker
//! vectors about the world origin: motion vectors [w; v] (v is the velocity of the body point
//! at the origin), force vectors [n; f] (n the moment about the origin), and rigid-body
//! inertias in the compact form (mass, first moment h = m c, rotational inertia about the
//! origin). Every operation builds DAG nodes, so constants, zeros and ones fold as it goes.
//! A soft section sums its slices in its base frame with the same algebra; the transforms
//! here carry those sums to the world.

use crate::dag::{Dag, NodeId};

pub type Vec3 = [NodeId; 3];
pub type Mat3 = [[NodeId; 3]; 3];

/// A spatial motion vector: angular part `w`, linear part `v`.
#[derive(Clone, Copy, Debug)]
pub struct Motion {
    pub w: Vec3,
    pub v: Vec3,
}

/// A spatial force vector: moment `n` about the origin, force `f`.
#[derive(Clone, Copy, Debug)]
pub struct Force {
    pub n: Vec3,
    pub f: Vec3,
}

/// A rigid-body (or composite) inertia about the world origin: mass `m`, first moment
/// `h = m c`, rotational inertia `i` about the origin (symmetric).
#[derive(Clone, Copy, Debug)]
pub struct Inertia {
    pub m: NodeId,
    pub h: Vec3,
    pub i: Mat3,
}

/// The time derivative of an inertia as its body moves: mass constant, `hd` = dh/dt (the
/// body's linear momentum), `id` = d(i)/dt (symmetric).
#[derive(Clone, Copy, Debug)]
pub struct InertiaRate {
    pub hd: Vec3,
    pub id: Mat3,
}

impl Dag {
    pub fn zero3(&mut self) -> Vec3 {
        let z = self.number(0.0);
        [z, z, z]
    }

    pub fn constant3(&mut self, v: [f64; 3]) -> Vec3 {
        [self.number(v[0]), self.number(v[1]), self.number(v[2])]
    }

    pub fn add3(&mut self, a: &Vec3, b: &Vec3) -> Vec3 {
        [self.add2(a[0], b[0]), self.add2(a[1], b[1]), self.add2(a[2], b[2])]
    }

    pub fn sub3(&mut self, a: &Vec3, b: &Vec3) -> Vec3 {
        [self.sub(a[0], b[0]), self.sub(a[1], b[1]), self.sub(a[2], b[2])]
    }

    pub fn scale3(&mut self, a: &Vec3, s: NodeId) -> Vec3 {
        [self.mul2(a[0], s), self.mul2(a[1], s), self.mul2(a[2], s)]
    }

    pub fn dot3(&mut self, a: &Vec3, b: &Vec3) -> NodeId {
        let terms = (0..3).map(|k| self.mul2(a[k], b[k])).collect();
        self.add(terms)
    }

    pub fn cross3(&mut self, a: &Vec3, b: &Vec3) -> Vec3 {
        let mut component = |i: usize, j: usize| {
            let first = self.mul2(a[i], b[j]);
            let second = self.mul2(a[j], b[i]);
            self.sub(first, second)
        };
        [component(1, 2), component(2, 0), component(0, 1)]
    }

    pub fn mat_vec3(&mut self, m: &Mat3, v: &Vec3) -> Vec3 {
        [self.dot3(&m[0], v), self.dot3(&m[1], v), self.dot3(&m[2], v)]
    }

    pub fn mat_mul3(&mut self, a: &Mat3, b: &Mat3) -> Mat3 {
        let mut out = [[0; 3]; 3];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, entry) in row.iter_mut().enumerate() {
                let column = [b[0][j], b[1][j], b[2][j]];
                *entry = self.dot3(&a[i], &column);
            }
        }
        out
    }

    pub fn add_mat3(&mut self, a: &Mat3, b: &Mat3) -> Mat3 {
        let mut out = [[0; 3]; 3];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, entry) in row.iter_mut().enumerate() {
                *entry = self.add2(a[i][j], b[i][j]);
            }
        }
        out
    }

    pub fn column3(m: &Mat3, j: usize) -> Vec3 {
        [m[0][j], m[1][j], m[2][j]]
    }

    pub fn pin3(&mut self, v: Vec3, name: &str) -> Vec3 {
        let axes = ["x", "y", "z"];
        [0, 1, 2].map(|k| self.pin_named(v[k], format!("{name}_{}", axes[k])))
    }

    pub fn pin_mat3(&mut self, m: Mat3, name: &str) -> Mat3 {
        let mut out = m;
        for (i, row) in out.iter_mut().enumerate() {
            for (j, entry) in row.iter_mut().enumerate() {
                *entry = self.pin_named(*entry, format!("{name}_{i}{j}"));
            }
        }
        out
    }

    /// Pins both halves of a motion vector under `name` (`name_w_x`, ..., `name_v_z`).
    pub fn pin_motion(&mut self, m: Motion, name: &str) -> Motion {
        Motion { w: self.pin3(m.w, &format!("{name}_w")), v: self.pin3(m.v, &format!("{name}_v")) }
    }

    pub fn pin_force(&mut self, f: Force, name: &str) -> Force {
        Force { n: self.pin3(f.n, &format!("{name}_n")), f: self.pin3(f.f, &format!("{name}_f")) }
    }

    pub fn pin_inertia(&mut self, i: Inertia, name: &str) -> Inertia {
        Inertia {
            m: self.pin_named(i.m, format!("{name}_m")),
            h: self.pin3(i.h, &format!("{name}_h")),
            i: self.pin_symmetric3(i.i, &format!("{name}_i")),
        }
    }

    /// Pins the upper triangle of a symmetric matrix and mirrors it.
    pub fn pin_symmetric3(&mut self, m: Mat3, name: &str) -> Mat3 {
        let mut out = m;
        for i in 0..3 {
            for j in i..3 {
                out[i][j] = self.pin_named(m[i][j], format!("{name}_{i}{j}"));
                out[j][i] = out[i][j];
            }
        }
        out
    }

    pub fn zero_motion(&mut self) -> Motion {
        Motion { w: self.zero3(), v: self.zero3() }
    }

    pub fn zero_force(&mut self) -> Force {
        Force { n: self.zero3(), f: self.zero3() }
    }

    pub fn add_motion(&mut self, a: &Motion, b: &Motion) -> Motion {
        Motion { w: self.add3(&a.w, &b.w), v: self.add3(&a.v, &b.v) }
    }

    pub fn scale_motion(&mut self, a: &Motion, s: NodeId) -> Motion {
        Motion { w: self.scale3(&a.w, s), v: self.scale3(&a.v, s) }
    }

    pub fn add_force(&mut self, a: &Force, b: &Force) -> Force {
        Force { n: self.add3(&a.n, &b.n), f: self.add3(&a.f, &b.f) }
    }

    pub fn sub_force(&mut self, a: &Force, b: &Force) -> Force {
        Force { n: self.sub3(&a.n, &b.n), f: self.sub3(&a.f, &b.f) }
    }

    pub fn scale_force(&mut self, a: &Force, s: NodeId) -> Force {
        Force { n: self.scale3(&a.n, s), f: self.scale3(&a.f, s) }
    }

    /// The power pairing f . m = n . w + f . v.
    pub fn force_dot_motion(&mut self, f: &Force, m: &Motion) -> NodeId {
        let angular = self.dot3(&f.n, &m.w);
        let linear = self.dot3(&f.f, &m.v);
        self.add2(angular, linear)
    }

    /// Motion cross product a x b = [wa x wb; wa x vb + va x wb].
    pub fn motion_cross(&mut self, a: &Motion, b: &Motion) -> Motion {
        let w = self.cross3(&a.w, &b.w);
        let first = self.cross3(&a.w, &b.v);
        let second = self.cross3(&a.v, &b.w);
        Motion { w, v: self.add3(&first, &second) }
    }

    /// Force cross product a x* f = [wa x n + va x f; wa x f].
    pub fn force_cross(&mut self, a: &Motion, f: &Force) -> Force {
        let first = self.cross3(&a.w, &f.n);
        let second = self.cross3(&a.v, &f.f);
        Force { n: self.add3(&first, &second), f: self.cross3(&a.w, &f.f) }
    }

    /// The inertia times a motion: [i w + h x v; m v - h x w].
    pub fn inertia_times(&mut self, inertia: &Inertia, m: &Motion) -> Force {
        let iw = self.mat_vec3(&inertia.i, &m.w);
        let hv = self.cross3(&inertia.h, &m.v);
        let mv = self.scale3(&m.v, inertia.m);
        let hw = self.cross3(&inertia.h, &m.w);
        Force { n: self.add3(&iw, &hv), f: self.sub3(&mv, &hw) }
    }

    /// The inertia's rate times a motion: [id w + hd x v; -hd x w].
    pub fn inertia_rate_times(&mut self, rate: &InertiaRate, m: &Motion) -> Force {
        let iw = self.mat_vec3(&rate.id, &m.w);
        let hv = self.cross3(&rate.hd, &m.v);
        let hw = self.cross3(&rate.hd, &m.w);
        let z = self.zero3();
        Force { n: self.add3(&iw, &hv), f: self.sub3(&z, &hw) }
    }

    pub fn add_inertia(&mut self, a: &Inertia, b: &Inertia) -> Inertia {
        Inertia { m: self.add2(a.m, b.m), h: self.add3(&a.h, &b.h), i: self.add_mat3(&a.i, &b.i) }
    }

    pub fn add_inertia_rate(&mut self, a: &InertiaRate, b: &InertiaRate) -> InertiaRate {
        InertiaRate { hd: self.add3(&a.hd, &b.hd), id: self.add_mat3(&a.id, &b.id) }
    }

    pub fn pin_inertia_rate(&mut self, r: InertiaRate, name: &str) -> InertiaRate {
        InertiaRate { hd: self.pin3(r.hd, &format!("{name}_hd")), id: self.pin_symmetric3(r.id, &format!("{name}_id")) }
    }

    /// A body's inertia about the world origin from its mass, world centre of mass `c` and
    /// world rotational inertia about the centre of mass `ic`: i = ic + m (|c|^2 1 - c c').
    pub fn body_inertia(&mut self, m: NodeId, c: &Vec3, ic: &Mat3) -> Inertia {
        let h = self.scale3(c, m);
        let cc = self.dot3(c, c);
        let mut i = [[0; 3]; 3];
        for a in 0..3 {
            for b in a..3 {
                let outer = self.mul2(c[a], c[b]);
                let parallel = if a == b { self.sub(cc, outer) } else { self.neg(outer) };
                let shifted = self.mul2(m, parallel);
                i[a][b] = self.add2(ic[a][b], shifted);
                i[b][a] = i[a][b];
            }
        }
        Inertia { m, h, i }
    }

    /// R' v: a vector's world coordinates into a frame with world rotation `rotation`.
    pub fn transpose_vec3(&mut self, rotation: &Mat3, v: &Vec3) -> Vec3 {
        [0, 1, 2].map(|a| {
            let column = Dag::column3(rotation, a);
            self.dot3(&column, v)
        })
    }

    /// A world motion vector in the coordinates of a frame at world pose (`rotation`,
    /// `position`): about the frame's origin, in its axes.
    pub fn motion_to_frame(&mut self, rotation: &Mat3, position: &Vec3, m: &Motion) -> Motion {
        let w = self.transpose_vec3(rotation, &m.w);
        let carried = self.cross3(position, &m.w);
        let v = self.sub3(&m.v, &carried);
        Motion { w, v: self.transpose_vec3(rotation, &v) }
    }

    /// A force vector given in the coordinates of a frame at world pose (`rotation`,
    /// `position`), in world coordinates.
    pub fn force_to_world(&mut self, rotation: &Mat3, position: &Vec3, f: &Force) -> Force {
        let force = self.mat_vec3(rotation, &f.f);
        let moment = self.mat_vec3(rotation, &f.n);
        let carried = self.cross3(position, &force);
        Force { n: self.add3(&moment, &carried), f: force }
    }

    /// An inertia given in the coordinates of a frame at world pose (`rotation`, `position`),
    /// in world coordinates: rotated (h' = R h, i' = R i R'), then carried to the world origin
    /// (h = h' + m p, i = i' + (m |p|^2 + 2 p . h') 1 - m p p' - h' p' - p h'').
    pub fn inertia_to_world(&mut self, rotation: &Mat3, position: &Vec3, inertia: &Inertia) -> Inertia {
        let m = inertia.m;
        let turned = self.mat_vec3(rotation, &inertia.h);
        let rotated = self.mat_mul3(rotation, &inertia.i);
        let moved = self.scale3(position, m);
        let h = self.add3(&turned, &moved);
        let pp = self.dot3(position, position);
        let ph = self.dot3(position, &turned);
        let two = self.number(2.0);
        let diagonal = {
            let a = self.mul2(m, pp);
            let b = self.mul2(two, ph);
            self.add2(a, b)
        };
        let mut i = [[0; 3]; 3];
        for a in 0..3 {
            for b in a..3 {
                let row = rotated[a];
                let column = [rotation[b][0], rotation[b][1], rotation[b][2]];
                let rotated_entry = self.dot3(&row, &column);
                let mpp = {
                    let outer = self.mul2(position[a], position[b]);
                    self.mul2(m, outer)
                };
                let hp = self.mul2(turned[a], position[b]);
                let ph_ab = self.mul2(position[a], turned[b]);
                let mut terms = vec![rotated_entry];
                if a == b {
                    terms.push(diagonal);
                }
                let sum = self.add(terms);
                let off = self.add(vec![mpp, hp, ph_ab]);
                i[a][b] = self.sub(sum, off);
                i[b][a] = i[a][b];
            }
        }
        Inertia { m, h, i }
    }

    /// The rate of a body's inertia about the world origin, moving with angular velocity `w`
    /// and centre-of-mass velocity `cd`: hd = m cd, and
    /// d(i)/dt = W ic - ic W + m (2 (c . cd) 1 - cd c' - c cd') with W the skew matrix of w.
    pub fn body_inertia_rate(&mut self, m: NodeId, c: &Vec3, cd: &Vec3, w: &Vec3, ic: &Mat3) -> InertiaRate {
        let hd = self.scale3(cd, m);
        let ccd = self.dot3(c, cd);
        let two_ccd = {
            let two = self.number(2.0);
            self.mul2(two, ccd)
        };
        // W ic: row a of W is (w x e_a)' rotated; compute (W ic)[a][b] = (w x ic[:, b])[a].
        let mut w_ic = [[0; 3]; 3];
        for b in 0..3 {
            let column = Dag::column3(ic, b);
            let rotated = self.cross3(w, &column);
            for a in 0..3 {
                w_ic[a][b] = rotated[a];
            }
        }
        let mut id = [[0; 3]; 3];
        for a in 0..3 {
            for b in a..3 {
                // (ic W)[a][b] = -(W ic)[b][a] since ic is symmetric and W skew.
                let spin = self.add2(w_ic[a][b], w_ic[b][a]);
                let first = self.mul2(cd[a], c[b]);
                let second = self.mul2(c[a], cd[b]);
                let outer = self.add2(first, second);
                let parallel = if a == b { self.sub(two_ccd, outer) } else { self.neg(outer) };
                let shifted = self.mul2(m, parallel);
                id[a][b] = self.add2(spin, shifted);
                id[b][a] = id[a][b];
            }
        }
        InertiaRate { hd, id }
    }
}

/// An articulated-body inertia: a symmetric 6 x 6 map from motion [w; v] to force [n; f].
/// Unlike a rigid-body inertia it has no compact form (the articulated-body algorithm's
/// rank-one updates break the rigid-body structure), but its structural zeros still fold.
#[derive(Clone, Copy, Debug)]
pub struct Articulated {
    pub e: [[NodeId; 6]; 6],
}

fn motion_array(m: &Motion) -> [NodeId; 6] {
    [m.w[0], m.w[1], m.w[2], m.v[0], m.v[1], m.v[2]]
}

fn force_array(f: &Force) -> [NodeId; 6] {
    [f.n[0], f.n[1], f.n[2], f.f[0], f.f[1], f.f[2]]
}

fn force_from(a: [NodeId; 6]) -> Force {
    Force { n: [a[0], a[1], a[2]], f: [a[3], a[4], a[5]] }
}

impl Dag {
    /// The 6 x 6 matrix of a rigid-body inertia: [[i, [h]], [[h]', m 1]].
    pub fn articulated_from(&mut self, inertia: &Inertia) -> Articulated {
        let z = self.number(0.0);
        let h = inertia.h;
        let minus = |dag: &mut Dag, x: NodeId| dag.neg(x);
        // [h] = [[0, -hz, hy], [hz, 0, -hx], [-hy, hx, 0]].
        let skew = [[z, minus(self, h[2]), h[1]], [h[2], z, minus(self, h[0])], [minus(self, h[1]), h[0], z]];
        let mut e = [[z; 6]; 6];
        for a in 0..3 {
            for b in 0..3 {
                e[a][b] = inertia.i[a][b];
                e[a][b + 3] = skew[a][b];
                e[b + 3][a] = skew[a][b];
            }
            e[a + 3][a + 3] = inertia.m;
        }
        Articulated { e }
    }

    pub fn zero_articulated(&mut self) -> Articulated {
        let z = self.number(0.0);
        Articulated { e: [[z; 6]; 6] }
    }

    pub fn add_articulated(&mut self, a: &Articulated, b: &Articulated) -> Articulated {
        let mut e = a.e;
        for r in 0..6 {
            for c in r..6 {
                e[r][c] = self.add2(a.e[r][c], b.e[r][c]);
                e[c][r] = e[r][c];
            }
        }
        Articulated { e }
    }

    pub fn articulated_times(&mut self, a: &Articulated, m: &Motion) -> Force {
        let x = motion_array(m);
        let mut out = [0; 6];
        for (r, entry) in out.iter_mut().enumerate() {
            let terms = (0..6).map(|c| self.mul2(a.e[r][c], x[c])).collect();
            *entry = self.add(terms);
        }
        force_from(out)
    }

    /// a - u u' / d, with `inverse` = 1 / d.
    pub fn articulated_reduce(&mut self, a: &Articulated, u: &Force, inverse: NodeId) -> Articulated {
        let x = force_array(u);
        let mut e = a.e;
        for r in 0..6 {
            for c in r..6 {
                let outer = self.mul(vec![x[r], x[c], inverse]);
                e[r][c] = self.sub(a.e[r][c], outer);
                e[c][r] = e[r][c];
            }
        }
        Articulated { e }
    }

    pub fn pin_articulated(&mut self, a: Articulated, name: &str) -> Articulated {
        let mut e = a.e;
        for r in 0..6 {
            for c in r..6 {
                e[r][c] = self.pin_named(a.e[r][c], format!("{name}_{r}{c}"));
                e[c][r] = e[r][c];
            }
        }
        Articulated { e }
    }
}
