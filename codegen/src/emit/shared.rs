//! What every generated module has, rigid or soft: `Params` with its defaults and
//! `ParamSet`, and the constants of the `Model` impl.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// What every generated module has, rigid or soft: the `Params` struct with its defaults and
/// `ParamSet`, and the constants of the `Model` impl.
pub(crate) struct Shared {
    pub params: TokenStream,
    pub constants: TokenStream,
}

pub(crate) fn shared(robot: &Robot) -> Shared {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let name = &robot.name;
    let description = &robot.description;
    let coordinates = robot.coordinates.iter().map(|c| {
        let (nm, meaning, actuated) = (&c.name, &c.meaning, c.actuated);
        let kind = match c.kind {
            CoordinateKind::BaseTranslation => quote!(CoordinateKind::BaseTranslation),
            CoordinateKind::BaseRotation => quote!(CoordinateKind::BaseRotation),
            CoordinateKind::RevoluteJoint => quote!(CoordinateKind::RevoluteJoint),
            CoordinateKind::PrismaticJoint => quote!(CoordinateKind::PrismaticJoint),
            CoordinateKind::ActuatorLength => quote!(CoordinateKind::ActuatorLength),
            CoordinateKind::Curvature => quote!(CoordinateKind::Curvature),
        };
        quote!(Coordinate { name: #nm, kind: #kind, meaning: #meaning, actuated: #actuated },)
    });
    let initial = robot.coordinates.iter().map(|c| float(c.initial));
    let contact_infos = robot.contact_points.iter().map(|p| {
        let (nm, body) = (&p.name, &robot.bodies[p.body].name);
        quote!(ContactPointInfo { name: #nm, body: #body },)
    });
    let actuated = robot.actuated.iter().map(|&i| idx(i));
    let plane = match robot.plane {
        Some(crate::spec::Plane::Xz) => quote!(PlaneOfMotion::Xz),
        Some(crate::spec::Plane::Xy) => quote!(PlaneOfMotion::Xy),
        None => quote!(PlaneOfMotion::Spatial),
    };
    let environment = environment_constant(robot);
    let gait = gait_constant(robot);
    let controller_coordinates = controller_coordinates_constant(robot);
    let valves = valve_items(robot);
    let muscles = muscle_items(robot);
    let params = params_items(robot);
    let constants = quote! {
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;
            const COORDINATES: &'static [Coordinate] = &[#(#coordinates)*];
            const INITIAL_POSITION: &'static [f64] = &[#(#initial),*];
            const CONTACT_POINTS: &'static [ContactPointInfo] = &[#(#contact_infos)*];
            const ACTUATED: &'static [usize] = &[#(#actuated),*];
            const PLANE: PlaneOfMotion = #plane;
            #environment
            const GAIT: Option<GaitDefaults> = #gait;
            #controller_coordinates
            #valves
            #muscles
    };
    Shared { params, constants }
}

/// The `Params` struct with the spec's defaults, and its `ParamSet` with the spec's rules.
fn params_items(robot: &Robot) -> TokenStream {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let param_fields = robot.parameters.iter().map(|p| {
        let f = format_ident!("{}", p.name);
        let d = doc(if p.doc.is_empty() { "Declared in the spec's `[parameters]` table." } else { &p.doc });
        quote!(#d pub #f: f64,)
    });
    let param_defaults = robot.parameters.iter().map(|p| {
        let f = format_ident!("{}", p.name);
        let v = float(p.default);
        quote!(#f: #v,)
    });
    let param_names = robot.parameters.iter().map(|p| p.name.as_str());
    let param_get = robot.parameters.iter().enumerate().map(|(i, p)| {
        let f = format_ident!("{}", p.name);
        let li = idx(i);
        quote!(#li => self.#f,)
    });
    let param_set = robot.parameters.iter().enumerate().map(|(i, p)| {
        let f = format_ident!("{}", p.name);
        let li = idx(i);
        quote!(#li => self.#f = value,)
    });
    let check = parameter_checks(robot);
    quote! {
        /// Numeric parameters with the spec's defaults; change them at run time, no
        /// regeneration needed.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Params {
            #(#param_fields)*
        }

        impl Default for Params {
            fn default() -> Self {
                Params { #(#param_defaults)* }
            }
        }

        impl ParamSet for Params {
            fn names() -> &'static [&'static str] {
                &[#(#param_names),*]
            }
            fn get(&self, index: usize) -> f64 {
                match index {
                    #(#param_get)*
                    _ => f64::NAN,
                }
            }
            fn set_index(&mut self, index: usize, value: f64) {
                match index {
                    #(#param_set)*
                    _ => {}
                }
            }
            #check
        }

    }
}

/// `ParamSet::check`: the spec's rules on its values, checked again after run-time changes
/// (nothing without rules).
fn parameter_checks(robot: &Robot) -> TokenStream {
    let checks: Vec<TokenStream> = robot
        .rules
        .iter()
        .map(|r| {
            let field = &r.field;
            let kind = match r.rule {
                Rule::Positive => quote!(Positive),
                Rule::NonNegative => quote!(NonNegative),
                Rule::RigidInertia => quote!(RigidInertia),
                Rule::PrincipalMoments => quote!(PrincipalMoments),
                Rule::InRange => quote!(InRange),
            };
            let values = r.values.iter().map(spec_expression);
            let mut names: Vec<String> = r.values.iter().flat_map(|v| v.symbols()).filter(|s| s != "pi").collect();
            names.sort();
            names.dedup();
            let fields = names.iter().map(|n| format_ident!("{}", n));
            quote! {
                softgen_runtime::check_rule(#field, softgen_runtime::RuleKind::#kind, &[#(#values),*], &[#((#names, p.#fields)),*])?;
            }
        })
        .collect();
    if checks.is_empty() {
        quote!()
    } else {
        quote! {
            fn check(&self) -> Result<(), String> {
                let p = self;
                #(#checks)*
                Ok(())
            }
        }
    }
}

/// The `ENVIRONMENT` constant: contact, friction and terrain defaults.
fn environment_constant(robot: &Robot) -> TokenStream {
    let env = &robot.environment;
    let terrain = match env.terrain {
        TerrainDefault::None => quote!(Terrain::None),
        TerrainDefault::Flat { height } => {
            let h = float(height);
            quote!(Terrain::Flat { height: #h })
        }
        TerrainDefault::Stair { position, height } => {
            let (p, h) = (float(position), float(height));
            quote!(Terrain::Stair { position: #p, height: #h })
        }
        TerrainDefault::Pipe { diameter } => {
            let d = float(diameter);
            quote!(Terrain::Pipe { diameter: #d })
        }
        TerrainDefault::Floor => quote!(Terrain::Floor),
    };
    let anisotropy = match env.anisotropy {
        Anisotropy::Isotropic => quote!(FrictionAnisotropy::Isotropic),
        Anisotropy::BodyAxis => quote!(FrictionAnisotropy::BodyAxis),
        Anisotropy::WorldAxis => quote!(FrictionAnisotropy::WorldAxis),
    };
    let (ks, kd, kh, fa, fc, fr) = (
        float(env.contact_stiffness),
        float(env.contact_damping),
        float(env.contact_dissipation),
        float(env.friction_along),
        float(env.friction_across),
        float(env.friction_regularisation),
    );
    quote! {
            const ENVIRONMENT: EnvironmentDefaults = EnvironmentDefaults {
                contact_stiffness: #ks,
                contact_damping: #kd,
                contact_dissipation: #kh,
                friction_along: #fa,
                friction_across: #fc,
                friction_anisotropy: #anisotropy,
                friction_regularisation: #fr,
                terrain: #terrain,
            };
    }
}

/// The `GAIT` constant: the serpenoid gait's defaults, if the spec has one.
fn gait_constant(robot: &Robot) -> TokenStream {
    match &robot.gait {
        None => quote!(None),
        Some(g) => {
            let (a, w, e, o, s, d) = (
                float(g.amplitude),
                float(g.temporal_frequency),
                float(g.spatial_frequency),
                float(g.offset),
                float(g.stiffness),
                float(g.damping),
            );
            let l = if g.torque_limit.is_finite() { float(g.torque_limit) } else { quote!(f64::INFINITY) };
            quote!(Some(GaitDefaults {
                amplitude: #a, temporal_frequency: #w, spatial_frequency: #e, offset: #o,
                stiffness: #s, damping: #d, torque_limit: #l,
            }))
        }
    }
}

/// The coordinates controllers read forces in: only robots whose spec states them carry the
/// constant (the trait's default is the model's own).
fn controller_coordinates_constant(robot: &Robot) -> TokenStream {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    match robot.controller_coordinates {
        None => quote!(),
        Some(c) => {
            let sign = float(c.joint_sign);
            let (from, to) = (idx(c.heading.0), idx(c.heading.1));
            quote!(
                const CONTROLLER_COORDINATES: softgen_runtime::ForceCoordinates =
                    softgen_runtime::ForceCoordinates::PlanarChain { joint_sign: #sign, heading: (#from, #to) };
            )
        }
    }
}

/// Valve-driven coordinates, their responses and the valve wave: only robots with valves
/// carry them (the trait's defaults say "none").
fn valve_items(robot: &Robot) -> TokenStream {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    if robot.valves.is_empty() {
        quote!()
    } else {
        let coordinates = robot.valves.iter().map(|v| idx(v.coordinate));
        let arms = robot.valves.iter().enumerate().map(|(k, v)| {
            let k = idx(k);
            let gain = spec_expression(&v.gain);
            let constants: Vec<TokenStream> = v.time_constants.iter().map(spec_expression).collect();
            if let [tau1, tau2] = constants.as_slice() {
                quote!(#k => Some(softgen_runtime::ActuatorResponse::SecondOrder { time_constants: [#tau1, #tau2], gain: #gain }),)
            } else {
                let tau = &constants[0];
                quote!(#k => Some(softgen_runtime::ActuatorResponse::FirstOrder { time_constant: #tau, gain: #gain }),)
            }
        });
        let wave = match &robot.valve_gait {
            None => quote!(None),
            Some(g) => {
                let (w, d, o) = (float(g.temporal_frequency), float(g.delay), float(g.offset));
                quote!(Some(softgen_runtime::ValveWave { temporal_frequency: #w, delay: #d, offset: #o }))
            }
        };
        quote! {
            const VALVES: &'static [usize] = &[#(#coordinates),*];
            const VALVE_GAIT: Option<softgen_runtime::ValveWave> = #wave;
            fn valve_response(index: usize, p: &Params) -> Option<softgen_runtime::ActuatorResponse> {
                match index {
                    #(#arms)*
                    _ => None,
                }
            }
        }
    }
}

/// Pneumatic muscles: only robots with muscles carry them.
fn muscle_items(robot: &Robot) -> TokenStream {
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    if robot.muscles.is_empty() {
        quote!()
    } else {
        let mut infos = Vec::new();
        let mut arms = Vec::new();
        for (b, bank) in robot.muscles.iter().enumerate() {
            let (body, first, count) = (&bank.body, idx(bank.first_coordinate), idx(bank.coordinates));
            let (area, rated, lag) = (
                spec_expression(&bank.area),
                spec_expression(&bank.rated_pressure),
                spec_expression(&bank.pressure_lag),
            );
            for j in 0..3 {
                let name = format!("{body}_muscle{}", j + 1);
                infos.push(quote!(softgen_runtime::MuscleInfo { name: #name, body: #body, first_coordinate: #first, coordinates: #count },));
                let gradient = match &bank.placement {
                    None => {
                        let unit = (0..3).map(|k| float(if k == j { 1.0 } else { 0.0 }));
                        quote!([#(#unit),*])
                    }
                    Some((radius, angles)) => {
                        let (r, l0, psi) =
                            (spec_expression(radius), spec_expression(&bank.rest_length), spec_expression(&angles[j]));
                        quote!([-(#r) * (#l0) * f64::cos(#psi), -(#r) * (#l0) * f64::sin(#psi), 0.0])
                    }
                };
                let k = idx(3 * b + j);
                arms.push(quote!(#k => Some(softgen_runtime::Muscle { area: #area, rated_pressure: #rated, pressure_lag: #lag, gradient: #gradient }),));
            }
        }
        quote! {
            const MUSCLES: &'static [softgen_runtime::MuscleInfo] = &[#(#infos)*];
            fn muscle(index: usize, p: &Params) -> Option<softgen_runtime::Muscle> {
                match index {
                    #(#arms)*
                    _ => None,
                }
            }
        }
    }
}
