//! Rust emission: derived expressions become straight-line, allocation-free functions on
//! fixed-size nalgebra types, built as tokens with quote and formatted with prettyplease.
//! `emit` puts a module together; each file here emits one concern of it.

mod cache;
mod contact;
mod drawing;
mod dynamics;
mod expression;
mod kernels;
mod limb_lanes;
mod loops;
mod markers;
mod mass_solve;
mod names;
mod points;
mod sections;
mod shapes;
mod shared;
mod thrusters;
mod water;

pub use names::camel;

use crate::algorithms::spatial::Articulated;
use crate::dag::equations::{Equations, InverseDynamicsDerivatives};
use crate::dag::{Dag, Function, Input, Node, NodeId};
use crate::model::{CoordinateKind, Robot, Rule, SectionKind, TerrainDefault};
use crate::spec::expr::{Expr, Number};
use crate::spec::Anisotropy;
use cache::{call_statements, StateCache};
use contact::{contact_frame_tangents, contact_frames};
use drawing::drawing;
use dynamics::*;
use expression::*;
use kernels::{per_point, Kernels};
use limb_lanes::{Groups, LimbLanes, WIDTH};
use loops::*;
use markers::markers;
use mass_solve::mass_matrix_solve;
use names::identifier;
use points::{contact_axis, contact_point_kernels};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use sections::soft_sections;
use shared::{shared, Shared};
use std::collections::{BTreeMap, HashMap, HashSet};
use thrusters::thrusters;
use water::water;

/// Emits the generated module for one robot as tokens (formatted by [`format_module`]): the
/// state's cache, then each family of kernels from its own function, then the `Model`
/// implementation that names them all.
pub fn emit(robot: &Robot, equations: &Equations) -> Result<TokenStream, String> {
    let n = robot.coordinates.len();
    let c = robot.contact_points.len();
    let dag = &equations.dag;
    let params: Vec<Ident> = robot.parameters.iter().map(|p| format_ident!("{}", p.name)).collect();
    // Identical sections' nodes in SIMD lanes, for the cache kernel and the kernels reading it.
    let section_coordinates: Vec<(usize, usize, String)> = robot
        .bodies
        .iter()
        .filter_map(|b| b.section.as_ref().map(|s| (s.first_coordinate, s.coordinates, b.name.clone())))
        .collect();
    let limb_lanes = LimbLanes::new(dag, &section_coordinates);
    let state = StateCache::new(equations, &params, &limb_lanes)?;
    let kernels = Kernels {
        dag,
        params: &params,
        cache: &state.field_of,
        by_argument: &state.by_argument,
        limb_lanes: &limb_lanes,
        // Which nodes move with a derivative's direction, for the kernels that loop over
        // directions.
        moves: direction_dependence(dag),
    };
    let kernel = |outputs: &[(TokenStream, NodeId)]| kernels.kernel(outputs);
    let cache_items = state.items();
    let dynamics_fns = dynamics(&kernels, equations);
    let (forward_fn, forward_impl) = forward_dynamics(&kernels, equations, n);
    let (factor_fn, factor_impl) = articulated_factor(&kernels, equations);
    let (derivatives_fn, derivatives_impl) = inverse_dynamics_derivatives(&kernels, equations)?;
    let energy_and_positions_fns = energy_and_positions(&kernels, equations);
    // Soft robots serve points from their frame's motion instead (see `Equations::frame_motion`).
    let kernel_in_lanes =
        |outputs: &[(TokenStream, NodeId)], lanes: &LimbLanes| kernels.kernel_in_lanes(outputs, lanes);
    // A kernel serving several of one shape (`shapes.rs`) reads the values that differ;
    // without, it is `kernel`.
    let kernel_reading =
        |outputs: &[(TokenStream, NodeId)], values: &HashMap<NodeId, usize>| kernels.kernel_reading(outputs, values);
    let cache = &state.field_of;
    let (frame_fn, frame_impl) = contact_frames(equations, cache, &kernel, &kernel_reading, &kernel_in_lanes, &|id| {
        cache.get(&id).map(|field| field.to_string())
    })?;
    let loops = |groups: &[DirectionGroup], values: &HashMap<NodeId, usize>| kernels.loops(groups, values);
    let (frame_tangent_fn, frame_tangent_impl) = contact_frame_tangents(equations, cache, &kernel, &loops)?;
    let robot_type = format_ident!("{}", camel(&robot.name));
    let (point_fns, point_impl) = contact_point_kernels(&kernels, robot, equations);
    let (axis_fn, kinematics_impl) = contact_axis(&kernels, equations);
    let whole_robot_fns = whole_robot(&kernels, equations);

    let imports = runtime_imports(robot);
    let (soft_items, soft_impl) = soft_sections(robot, equations, &params, &kernel);
    let (water_items, water_impl) = water(equations, &params, &kernel);
    let (thruster_items, thruster_impl) = thrusters(robot, equations, &kernel);
    let (drawing_items, drawing_impl) = drawing(robot, equations, &kernel);
    let (marker_items, marker_impl) = markers(robot, equations, &kernel)?;
    let Shared { params: params_items, constants } = shared(robot);
    let description = &robot.description;
    let model_doc = doc(&format!("{description}\n\n{n} generalized coordinates, {c} contact points."));
    let n_lit = Literal::usize_unsuffixed(n);
    let c_lit = Literal::usize_unsuffixed(c);

    Ok(quote! {
        use softgen_runtime::nalgebra::{SMatrix, SVector, Vector3};
        #imports

        /// Number of generalized coordinates.
        pub const DOF: usize = #n_lit;
        /// Number of contact points.
        pub const CONTACTS: usize = #c_lit;

        #params_items

        #cache_items

        #dynamics_fns

        #forward_fn
        #factor_fn
        #derivatives_fn

        #energy_and_positions_fns

        #point_fns

        #axis_fn
        #frame_fn
        #frame_tangent_fn

        #whole_robot_fns

        #soft_items

        #water_items

        #thruster_items

        #drawing_items

        #marker_items

        #model_doc
        #[derive(Clone, Copy, Debug, Default)]
        pub struct #robot_type;

        impl Model<DOF, CONTACTS> for #robot_type {
            type Params = Params;
            type Cache = Cache;
            #constants

            fn cache(q: &SVector<f64, DOF>, p: &Params) -> Cache { cache(q, p) }
            fn mass_matrix_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) { mass_matrix_into(q, p, k, out) }
            fn coriolis_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { coriolis_into(q, qd, p, k, out) }
            fn coriolis_matrix_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SMatrix<f64, DOF, DOF>) { coriolis_matrix_into(q, qd, p, k, out) }
            fn gravity_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut SVector<f64, DOF>) { gravity_into(q, p, k, out) }
            fn dynamics_into(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache, m: &mut SMatrix<f64, DOF, DOF>, c: &mut SVector<f64, DOF>, g: &mut SVector<f64, DOF>) { dynamics_into(q, qd, p, k, m, c, g) }
            #forward_impl
            #factor_impl
            #derivatives_impl
            #soft_impl
            #water_impl
            #thruster_impl
            #drawing_impl
            #marker_impl
            fn potential_energy(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> f64 { potential_energy(q, p, k) }
            fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, k: &Cache, out: &mut [Vector3<f64>; CONTACTS]) { contact_positions_into(q, p, k, out) }
            #point_impl
            #kinematics_impl
            #frame_impl
            #frame_tangent_impl
            fn center_of_mass(q: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { center_of_mass(q, p, k) }
            fn total_mass(p: &Params) -> f64 { total_mass(p) }
            fn linear_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { linear_momentum(q, qd, p, k) }
            fn angular_momentum(q: &SVector<f64, DOF>, qd: &SVector<f64, DOF>, p: &Params, k: &Cache) -> Vector3<f64> { angular_momentum(q, qd, p, k) }
        }
    })
}
/// The `use` of the runtime's items the module names: a soft robot's sections' too.
fn runtime_imports(robot: &Robot) -> TokenStream {
    if robot.is_soft() {
        quote!(
            use softgen_runtime::{
                ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, FrictionAnisotropy, GaitDefaults,
                Model, ParamSet, PlaneOfMotion, SectionGeometry, SoftSectionInfo, Terrain,
            };
        )
    } else {
        quote!(
            use softgen_runtime::{
                ContactPointInfo, Coordinate, CoordinateKind, EnvironmentDefaults, FrictionAnisotropy, GaitDefaults,
                Model, ParamSet, PlaneOfMotion, Terrain,
            };
        )
    }
}
/// The potential energy and the contact points' positions.
fn energy_and_positions(kernels: &Kernels, equations: &Equations) -> TokenStream {
    let potential_body = kernels.kernel(&[(quote!(let energy), equations.potential_energy)]);
    let positions: Vec<Vec<NodeId>> = equations.contact_positions.iter().map(|v| v.to_vec()).collect();
    let positions_body = kernels.kernel(&per_point(&positions));
    quote! {
        /// Gravitational potential energy V(q).
        #[inline]
        #[allow(unused_variables)]
        pub fn potential_energy(q: &SVector<f64, DOF>, p: &Params, cache: &Cache) -> f64 {
            #potential_body
            energy
        }

        /// World positions of the contact points.
        #[inline]
        #[allow(unused_variables)]
        pub fn contact_positions_into(q: &SVector<f64, DOF>, p: &Params, cache: &Cache, out: &mut [Vector3<f64>; CONTACTS]) {
            #positions_body
        }
    }
}
/// Formats a generated module's tokens with prettyplease under the generated-file header.
pub fn format_module(robot: &Robot, tokens: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("emitted tokens do not parse as Rust: {e}"))?;
    let body = prettyplease::unparse(&file);
    // Text in a line comment cannot end the comment except through a line break, so every
    // control character becomes a space (validation already rejects them in descriptions).
    let one_line = |text: &str| text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let importing = robot.urdf.as_ref().map_or(String::new(), |u| format!(" (importing `{}`)", one_line(u)));
    // Names come from spec and URDF files (ANYmal's `LF_HIP`), so they need not be snake case.
    let header = format!(
        "//! {}\n//!\n//! Generated by softgen-codegen from `{}`{importing}: do not edit. Change the spec and run\n//! `{}` to regenerate.\n#![allow(clippy::all, unused_parens, non_snake_case)]\n\n",
        one_line(&robot.description),
        one_line(&robot.spec_path),
        one_line(&robot.regenerate)
    );
    Ok(header + body.as_str())
}
