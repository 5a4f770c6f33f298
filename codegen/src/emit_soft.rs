//! Emission for chains of constant-curvature soft sections: the robot's constants (sections
//! built from its parameters, Gauss-Legendre nodes, the skin grid) and a `Model` impl over
//! the runtime's `SoftChain`, monomorphised for this robot's section and coordinate counts.
//!
//! Why not full symbolic expansion: every slice of a soft section is a body whose pose
//! depends on all coordinates before it, and the integral over each section has no closed
//! form, so expanded expressions for M and the Christoffel symbols would swell past any
//! useful size. The chain is instead composed numerically section by section, with the
//! constant-curvature kinematics in closed, singularity-free form and exact derivatives
//! from dual numbers.

use crate::emit::{camel, doc, float, shared, Shared};
use crate::expr::{Expr, Number};
use crate::model::Robot;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use softgen_runtime::gauss_legendre;

/// A spec expression as Rust over `p.<parameter>`.
pub(crate) fn expression(e: &Expr) -> TokenStream {
    match e {
        Expr::Num(Number::Rational(n, d)) => float(*n as f64 / *d as f64),
        Expr::Num(Number::Float(v)) => float(*v),
        Expr::Sym(s) if s == "pi" => quote!(std::f64::consts::PI),
        Expr::Sym(s) => {
            let f = format_ident!("{}", s);
            quote!(p.#f)
        }
        Expr::Add(terms) => {
            let t = terms.iter().map(expression);
            quote!((0.0 #(+ #t)*))
        }
        Expr::Mul(factors) => {
            let f = factors.iter().map(expression);
            quote!((1.0 #(* #f)*))
        }
        Expr::Pow(base, exponent) => {
            let b = expression(base);
            match exponent.as_ref() {
                Expr::Num(Number::Rational(n, 1)) => {
                    let n = *n as i32;
                    quote!(f64::powi(#b, #n))
                }
                other => {
                    let x = expression(other);
                    quote!(f64::powf(#b, #x))
                }
            }
        }
        Expr::Call(name, args) => {
            let f = format_ident!("{}", name);
            let a = args.iter().map(expression);
            quote!(f64::#f(#(#a),*))
        }
    }
}

/// Rotation matrix of [roll, pitch, yaw] (Rz(yaw) Ry(pitch) Rx(roll)), row-major.
pub(crate) fn rotation(rpy: [f64; 3]) -> [[f64; 3]; 3] {
    let (sr, cr) = rpy[0].sin_cos();
    let (sp, cp) = rpy[1].sin_cos();
    let (sy, cy) = rpy[2].sin_cos();
    let clean = |v: f64| if v.abs() < 1e-15 { 0.0 } else { v };
    let m = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ];
    m.map(|row| row.map(clean))
}

pub fn emit_soft(robot: &Robot) -> Result<TokenStream, String> {
    let sections: Vec<_> = robot.bodies.iter().filter_map(|b| b.section.as_ref().map(|s| (b, s))).collect();
    let k = sections.len();
    let n = robot.coordinates.len();
    let c = robot.contact_points.len();
    let floating = match robot.base {
        crate::spec::BaseKind::Spatial => true,
        crate::spec::BaseKind::Fixed => false,
        crate::spec::BaseKind::Planar => return Err("soft sections need a spatial or fixed base".into()),
    };
    let order = sections[0].1.quadrature;
    if sections.iter().any(|(_, s)| s.quadrature != order) {
        return Err("every soft section of a robot must use the same quadrature order".into());
    }
    let rule = gauss_legendre(order);
    let nodes = rule.iter().map(|(x, w)| {
        let (x, w) = (float(*x), float(*w));
        quote!((#x, #w),)
    });
    let section_items = sections.iter().map(|(body, s)| {
        let (l0, r, rd, ks, ds, m) = (
            expression(&s.rest_length),
            expression(&s.actuator_radius),
            expression(&s.disc_radius),
            expression(&s.stiffness),
            expression(&s.damping),
            expression(&body.mass),
        );
        let angles = s.actuator_angles.iter().map(expression);
        let mount = rotation(body.rotation).map(|row| {
            let row = row.map(float);
            quote!([#(#row),*])
        });
        quote! {
            SoftSection {
                geometry: SectionGeometry { rest_length: #l0, actuator_radius: #r, actuator_angles: [#(#angles),*] },
                mass: #m,
                disc_radius: #rd,
                stiffness: #ks,
                damping: #ds,
                mount: [#(#mount),*],
            },
        }
    });
    let section_index = |body: usize| sections.iter().position(|(b, _)| std::ptr::eq(*b, &robot.bodies[body])).unwrap_or(0);
    let mut radii: Vec<Expr> = Vec::new();
    let mut skin = Vec::new();
    for point in &robot.contact_points {
        let Some(placement) = &point.skin else {
            return Err(format!("contact point `{}` is not on the skin of a soft section", point.name));
        };
        let radius = match radii.iter().position(|r| *r == placement.radius) {
            Some(i) => i,
            None => {
                radii.push(placement.radius.clone());
                radii.len() - 1
            }
        };
        let (sec, xi, angle, radius) = (
            Literal::usize_unsuffixed(section_index(point.body)),
            float(placement.xi),
            float(placement.angle),
            Literal::usize_unsuffixed(radius),
        );
        let (sin, cos) = placement.angle.sin_cos();
        let (cos, sin) = (float(cos), float(sin));
        skin.push(quote!(SkinPoint { section: #sec, xi: #xi, angle: #angle, cos_angle: #cos, sin_angle: #sin, radius: #radius },));
    }
    let radius_values = radii.iter().map(expression);
    let radius_count = Literal::usize_unsuffixed(radii.len().max(1));
    let radius_values: Vec<TokenStream> = if radii.is_empty() { vec![quote!(0.0)] } else { radius_values.collect() };
    let Shared { params, constants } = shared(robot);
    let robot_type = format_ident!("{}", camel(&robot.name));
    let (n_lit, c_lit, k_lit, order_lit) =
        (Literal::usize_unsuffixed(n), Literal::usize_unsuffixed(c), Literal::usize_unsuffixed(k), Literal::usize_unsuffixed(order));
    let model_doc = doc(&format!(
        "{}\n\n{n} generalized coordinates ({} base, 3 per soft section), {c} skin contact points, {k} soft sections integrated with {order}-node Gauss-Legendre quadrature.",
        robot.description,
        if floating { 6 } else { 0 }
    ));
    let tokens = quote! {
        use nalgebra::{SMatrix, SVector, Vector3};
        use softgen_runtime::{
            ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, FrameJacobian, FrictionAnisotropy, GaitDefaults, Model,
            ParamSet, PlaneOfMotion, SectionGeometry, SkinPoint, SoftChain, SoftSection, Terrain,
        };

        /// Number of generalized coordinates.
        pub const DOF: usize = #n_lit;
        /// Number of contact points.
        pub const CONTACTS: usize = #c_lit;
        /// Number of soft sections.
        pub const SECTIONS: usize = #k_lit;

        /// Gauss-Legendre nodes and weights on [0, 1] over each section.
        pub const QUADRATURE: [(f64, f64); #order_lit] = [#(#nodes)*];

        /// The skin contact points: section, position along it, angle about its axis, and
        /// which skin radius (see [`skin_radii`]).
        pub const SKIN: [SkinPoint; CONTACTS] = [#(#skin)*];

        #params

        /// The soft sections with this parameter set.
        #[inline]
        pub fn chain(p: &Params) -> SoftChain<'static, SECTIONS> {
            SoftChain { sections: [#(#section_items)*], floating: #floating, gravity: p.gravity, quadrature: &QUADRATURE }
        }

        /// Skin radii of the contact grids (m).
        #[inline]
        pub fn skin_radii(p: &Params) -> [f64; #radius_count] {
            let _ = p;
            [#(#radius_values),*]
        }

        /// The base frame of every section with its Jacobian, computed once per state.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Cache {
            pub frames: [FrameJacobian<f64, DOF>; SECTIONS],
        }

        #[inline]
        fn array(v: &SVector<f64, DOF>) -> [f64; DOF] {
            std::array::from_fn(|i| v[i])
        }

        #model_doc
        #[derive(Clone, Copy, Debug, Default)]
        pub struct #robot_type;

        impl Model<DOF, CONTACTS> for #robot_type {
            type Params = Params;
            type Cache = Cache;
            #constants

            fn cache(q: &SVector<f64, DOF>, p: &Params) -> Cache {
                Cache { frames: chain(p).section_frames(&array(q)) }
            }
            fn mass_matrix_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) {
                let m = chain(p).mass_matrix(&array(q), &k.frames);
                *out = SMatrix::from_fn(|i, j| m[i][j]);
            }
            fn coriolis_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) {
                *out = SVector::from(chain(p).coriolis_force(&array(q), &array(qd), &k.frames));
            }
            fn coriolis_matrix_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, _k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) {
                let c = chain(p).coriolis_matrix(&array(q), &array(qd));
                *out = SMatrix::from_fn(|i, j| c[i][j]);
            }
            fn gravity_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) {
                *out = SVector::from(chain(p).gravity_force(&array(q), &k.frames));
            }
            fn dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, m: &mut SMatrix<f64, DOF, DOF>, c: &mut SVector<f64, DOF>, g: &mut SVector<f64, DOF>) {
                let (mass, coriolis, gravity) = chain(p).dynamics(&array(q), &array(qd), &k.frames);
                *m = SMatrix::from_fn(|i, j| mass[i][j]);
                *c = SVector::from(coriolis);
                *g = SVector::from(gravity);
            }
            fn damping_into(qd: &SVector<f64, DOF>, p: &Params, out: &mut SVector<f64, DOF>) {
                *out = SVector::from(chain(p).damping_force(&array(qd)));
            }
            fn elastic_stiffness_into(_q: &SVector<f64, DOF>, p: &Params, out: &mut SMatrix<f64, DOF, DOF>) {
                *out = SMatrix::from_diagonal(&SVector::from(chain(p).elastic_stiffness::<DOF>()));
            }
            fn potential_energy(q: &SVector<f64, DOF>, p: &Params, _k: &Cache) -> f64 {
                chain(p).potential_energy(&array(q))
            }
            fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                chain(p).skin_positions_into(&array(q), &k.frames, &SKIN, &skin_radii(p), out);
            }
            fn contact_velocities_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, _k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                chain(p).skin_velocities_into(&array(q), &array(qd), &SKIN, &skin_radii(p), out);
            }
            fn contact_axes_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
                chain(p).skin_axes_into(&array(q), &k.frames, &SKIN, out);
            }
            fn contact_jacobian_into(index: usize, q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, 3, DOF>) {
                *out = SMatrix::zeros();
                if let Some(point) = SKIN.get(index) {
                    let jacobian = chain(p).skin_jacobian(&array(q), &k.frames, point, skin_radii(p)[point.radius]);
                    for j in 0..DOF {
                        for i in 0..3 {
                            out[(i, j)] = jacobian[j][i];
                        }
                    }
                }
            }
            fn contact_kinematics_into(indices: &[usize], q: &SVector<f64, DOF>, p: &Params, k: &Cache, jacobians: &mut [SMatrix<f64, 3, DOF>], axes: &mut [Vector3<f64>]) {
                chain(p).skin_kinematics_into(&array(q), &k.frames, &SKIN, &skin_radii(p), indices, jacobians, axes);
            }
            fn center_of_mass(q: &SVector<f64, DOF>, p: &Params, _k: &Cache) -> Vector3<f64> {
                Vector3::from(chain(p).center_of_mass(&array(q)))
            }
            fn total_mass(p: &Params) -> f64 {
                chain(p).total_mass()
            }
            fn linear_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, _k: &Cache) -> Vector3<f64> {
                Vector3::from(chain(p).momenta(&array(q), &array(qd)).0)
            }
            fn angular_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, _k: &Cache) -> Vector3<f64> {
                Vector3::from(chain(p).momenta(&array(q), &array(qd)).1)
            }
        }
    };
    Ok(tokens)
}
