//! Water on a swimming robot: its hulls, thrusters and the water's coefficients.
// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// A body's hull in water (`hydrodynamics`): its radius and, on rigid bodies, the
    /// cylinder's length, start and centre of buoyancy; a soft section's hull runs along its
    /// centre line at rest length (`section_length`). Literals become parameters
    /// `<body>_hull_<key>`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hull(
        &mut self,
        spec: &Spanned<spec::HydrodynamicsSpec>,
        field: &str,
        body: &str,
        section_length: Option<&Expr>,
        normal: Option<[f64; 3]>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Hull> {
        let h = spec.get_ref();
        let field = format!("{field}.hydrodynamics");
        let zero = || Expr::Num(Number::Rational(0, 1));
        if normal.is_some() {
            self.error(spec.span(), &field, "water acts in 3D (buoyancy up, drag across the hull): a swimming robot needs a spatial or fixed 3D base, not a planar one");
            return None;
        }
        let radius = self.signed_parameter(
            &h.radius,
            &format!("{field}.radius"),
            format!("{body}_hull_radius"),
            format!("Hull radius of `{body}` (m)."),
            true,
            parameters,
            auto,
        );
        if let Some(rest) = section_length {
            let extra = [
                (h.length.as_ref().map(|v| v.span()), "length"),
                (h.start.as_ref().map(|v| v.span()), "start"),
                (h.center_of_buoyancy.as_ref().map(|v| v[0].span()), "center_of_buoyancy"),
            ];
            for (span, key) in extra {
                if let Some(span) = span {
                    self.error(span, &format!("{field}.{key}"), "a soft section's hull runs along its centre line at rest length and is buoyant at each slice's centre; remove it");
                }
            }
            return Some(Hull {
                radius: radius?,
                length: rest.clone(),
                start: zero(),
                center_of_buoyancy: [zero(), zero(), zero()],
            });
        }
        let Some(length) = &h.length else {
            self.error(
                spec.span(),
                &format!("{field}.length"),
                "missing: a rigid body's hull needs the cylinder's length along its x axis (m)",
            );
            return None;
        };
        let length = self.signed_parameter(
            length,
            &format!("{field}.length"),
            format!("{body}_hull_length"),
            format!("Hull length of `{body}` along its x axis (m)."),
            true,
            parameters,
            auto,
        );
        let start = match &h.start {
            Some(v) => self.parameterised(
                v,
                &format!("{field}.start"),
                format!("{body}_hull_start"),
                format!("Where the hull of `{body}` starts along its x axis (m)."),
                parameters,
                auto,
            ),
            None => Some(zero()),
        };
        let (length, start) = (length?, start?);
        let center_of_buoyancy = match &h.center_of_buoyancy {
            Some(v) => self.vector(Some(v), &format!("{field}.center_of_buoyancy"), parameters),
            None => [
                Expr::Add(vec![start.clone(), Expr::Mul(vec![length.clone(), Expr::Num(Number::Rational(1, 2))])]),
                zero(),
                zero(),
            ],
        };
        Some(Hull { radius: radius?, length, start, center_of_buoyancy })
    }

    /// A thruster on a rigid body: its point of attack and unit direction in the body frame.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn thruster(
        &mut self,
        a: &spec::Actuator,
        field: &str,
        body: &Body,
        body_index: usize,
        default_name: String,
        normal: Option<[f64; 3]>,
        parameters: &BTreeMap<String, f64>,
    ) -> Option<Thruster> {
        if body.section.is_some() {
            self.error(
                a.joint.span(),
                &format!("{field}.joint"),
                format!("a thruster sits on a rigid body; `{}` is a soft section", body.name),
            );
            return None;
        }
        for (given, key) in [
            (a.torque_limit.as_ref().map(|v| v.span()), "torque_limit"),
            (a.response.as_ref().map(|v| v.span()), "response"),
        ] {
            if let Some(span) = given {
                self.error(
                    span,
                    &format!("{field}.{key}"),
                    "a thruster has no such field (its limit is the run configuration's `max_thrust`)",
                );
            }
        }
        let name = match &a.name {
            Some(n) if is_identifier(n.get_ref()) => n.get_ref().clone(),
            Some(n) => {
                self.error(
                    n.span(),
                    &format!("{field}.name"),
                    format!("`{}` must be an identifier (letters, digits, _)", n.get_ref()),
                );
                return None;
            }
            None => default_name,
        };
        let Some(position) = &a.position else {
            self.error(
                a.kind.span(),
                &format!("{field}.position"),
                "missing: a thruster needs its point of attack in the body frame (m)",
            );
            return None;
        };
        let position = self.vector(Some(position), &format!("{field}.position"), parameters);
        let Some(direction) = &a.direction else {
            self.error(
                a.kind.span(),
                &format!("{field}.direction"),
                "missing: a thruster needs the direction of its thrust in the body frame",
            );
            return None;
        };
        let d = *direction.get_ref();
        let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if !(length > 1e-9 && length.is_finite()) {
            self.error(direction.span(), &format!("{field}.direction"), "must be a non-zero finite vector");
            return None;
        }
        if let Some(n) = normal {
            if (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]).abs() > 1e-9 * length {
                self.error(
                    direction.span(),
                    &format!("{field}.direction"),
                    "in a planar robot a thruster must push in the plane",
                );
            }
            if planar_violation(&position, Some(n)) {
                self.error(
                    a.position.as_ref().map_or(a.kind.span(), |p| p[0].span()),
                    &format!("{field}.position"),
                    "in a planar robot the point of attack must lie in the plane",
                );
            }
        }
        Some(Thruster { name, body: body_index, position, direction: d.map(|x| x / length) })
    }

    /// One property of the water (`environment.water.<key>`), the parameter `name`: as
    /// written, or `name` itself when the spec declares it, or `name` with its default.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn water_value(
        &mut self,
        value: Option<&Spanned<Value>>,
        key: &str,
        name: &str,
        default: f64,
        doc: &str,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        let field = format!("environment.water.{key}");
        match value {
            Some(v) => self.signed_parameter(v, &field, name.to_string(), doc.to_string(), strictly, parameters, auto),
            None => {
                if !parameters.contains_key(name) {
                    parameters.insert(name.to_string(), default);
                    auto.push(Parameter { name: name.to_string(), default, doc: doc.to_string() });
                }
                let e = Expr::Sym(name.to_string());
                self.rule(&field, if strictly { Rule::Positive } else { Rule::NonNegative }, vec![e.clone()]);
                Some(e)
            }
        }
    }

    /// The water: its density and the hulls' coefficients, each a parameter; a hull needs
    /// water and water a hull.
    pub(super) fn water(
        &mut self,
        spec: &Spec,
        bodies: &[Body],
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Water> {
        let environment = spec.environment.as_ref();
        let in_water =
            environment.and_then(|e| e.get_ref().medium.as_ref()).is_some_and(|m| *m.get_ref() == spec::Medium::Water);
        let water_spec = environment.and_then(|e| e.get_ref().water.as_ref());
        let water = match (in_water, water_spec) {
            (true, w) => {
                let w = w.map(|w| w.get_ref());
                let mut value = |v: &mut Validator,
                                 pick: fn(&spec::WaterSpec) -> Option<&Spanned<Value>>,
                                 key: &str,
                                 name: &str,
                                 default: f64,
                                 doc: &str,
                                 strictly: bool| {
                    v.water_value(w.and_then(pick), key, name, default, doc, strictly, parameters, auto)
                };
                let density = value(
                    self,
                    |w| w.density.as_ref(),
                    "density",
                    "water_density",
                    1000.0,
                    "Density of the water rho (kg/m^3).",
                    true,
                );
                let added = value(
                    self,
                    |w| w.added_mass_coefficient.as_ref(),
                    "added_mass_coefficient",
                    "added_mass_coefficient",
                    1.0,
                    "Added mass across a hull per displaced mass C_a.",
                    false,
                );
                let surge = value(
                    self,
                    |w| w.surge_added_mass.as_ref(),
                    "surge_added_mass",
                    "surge_added_mass",
                    0.2,
                    "Added mass along a hull relative to across, alpha.",
                    false,
                );
                let drag = value(
                    self,
                    |w| w.drag_coefficient.as_ref(),
                    "drag_coefficient",
                    "drag_coefficient",
                    1.0,
                    "Cross-flow drag coefficient C_D.",
                    false,
                );
                let surge_drag = value(
                    self,
                    |w| w.surge_linear_drag.as_ref(),
                    "surge_linear_drag",
                    "surge_linear_drag",
                    0.2,
                    "Linear drag along a hull relative to across, beta.",
                    false,
                );
                let roll_drag = value(
                    self,
                    |w| w.roll_linear_drag.as_ref(),
                    "roll_linear_drag",
                    "roll_linear_drag",
                    0.5,
                    "Linear roll drag per rho pi R^3 L C_D V, Omega.",
                    false,
                );
                let speed = value(
                    self,
                    |w| w.reference_speed.as_ref(),
                    "reference_speed",
                    "reference_speed",
                    1.0,
                    "Reference speed V of the linear drag (m/s).",
                    false,
                );
                if !bodies.iter().any(|b| b.hull.is_some()) {
                    let span = environment.and_then(|e| e.get_ref().medium.as_ref()).map_or(0..0, |m| m.span());
                    self.error(
                        span,
                        "environment.medium",
                        "a robot in water needs at least one body with `hydrodynamics = { radius = ... }` (its hull)",
                    );
                }
                match (density, added, surge, drag, surge_drag, roll_drag, speed) {
                    (
                        Some(density),
                        Some(added_mass_coefficient),
                        Some(surge_added_mass),
                        Some(drag_coefficient),
                        Some(surge_linear_drag),
                        Some(roll_linear_drag),
                        Some(reference_speed),
                    ) => Some(Water {
                        density,
                        added_mass_coefficient,
                        surge_added_mass,
                        drag_coefficient,
                        surge_linear_drag,
                        roll_linear_drag,
                        reference_speed,
                    }),
                    _ => None,
                }
            }
            (false, Some(w)) => {
                self.error(w.span(), "environment.water", "water properties need `medium = \"water\"`");
                None
            }
            (false, None) => None,
        };
        if !in_water {
            for (i, b) in spec.bodies.iter().enumerate() {
                if let Some(h) = &b.get_ref().hydrodynamics {
                    self.error(
                        h.span(),
                        &format!("{} ({}).hydrodynamics", self.labels.body(i), b.get_ref().name.get_ref()),
                        "a hull acts only in water: set `medium = \"water\"` in [environment]",
                    );
                }
            }
        }
        water
    }
}
