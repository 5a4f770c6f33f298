//! Soft sections: their materials, muscle banks and the section body with its coordinates.

// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// An extensible section's visco-hyperelastic material: the Yeoh coefficients and the
    /// silicone area (literals become parameters `<body>_yeoh_c10` .. and
    /// `<body>_material_<key>`), and the power-law viscosity when `consistency` is given.
    pub(super) fn material(
        &mut self,
        m: &Spanned<spec::MaterialSpec>,
        field: &str,
        body: &str,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> (Option<Elasticity>, Option<Viscosity>) {
        let material = m.get_ref();
        let field = format!("{field}.section.material");
        let values = material.yeoh.get_ref();
        if values.len() != 3 {
            self.error(
                material.yeoh.span(),
                &format!("{field}.yeoh"),
                format!("expected the three Yeoh coefficients [C10, C20, C30] (J/m^3), got {}", values.len()),
            );
            return (None, None);
        }
        let mut coefficients = Vec::new();
        for (k, v) in values.iter().enumerate() {
            let name = format!("c{}0", k + 1);
            let e = self.parameterised(
                v,
                &format!("{field}.yeoh[{k}]"),
                format!("{body}_yeoh_{name}"),
                format!("Yeoh coefficient C{}0 of the actuators of `{body}` (J/m^3).", k + 1),
                parameters,
                auto,
            );
            coefficients.push(e);
        }
        if let Some(Ok(c10)) = coefficients[0].as_ref().map(|e| e.evaluate(parameters)) {
            if !(c10 > 0.0) {
                self.error(
                    values[0].span(),
                    &format!("{field}.yeoh[0]"),
                    format!("C10 is half the small-strain shear modulus: must be > 0, got {c10}"),
                );
            }
        }
        if let Some(c10) = &coefficients[0] {
            self.rule(&format!("{field}.yeoh[0]"), Rule::Positive, vec![c10.clone()]);
        }
        let area = self.signed_parameter(
            &material.area,
            &format!("{field}.area"),
            format!("{body}_material_area"),
            format!("Silicone cross-section per actuator of `{body}` (m^2)."),
            true,
            parameters,
            auto,
        );
        let viscosity = match (&material.consistency, &material.power_index, &material.rate_scale) {
            (None, None, None) => None,
            (Some(consistency), Some(index), Some(scale)) => {
                let consistency = self.signed_parameter(
                    consistency,
                    &format!("{field}.consistency"),
                    format!("{body}_material_consistency"),
                    format!("Viscous consistency eta_0 of the actuators of `{body}` (Pa s^k)."),
                    false,
                    parameters,
                    auto,
                );
                let index = self.signed_parameter(
                    index,
                    &format!("{field}.power_index"),
                    format!("{body}_material_power_index"),
                    format!("Power-law index k of the actuators of `{body}`."),
                    true,
                    parameters,
                    auto,
                );
                let scale = self.signed_parameter(
                    scale,
                    &format!("{field}.rate_scale"),
                    format!("{body}_material_rate_scale"),
                    format!("Strain rate below which the viscosity of `{body}` stops growing (1/s)."),
                    true,
                    parameters,
                    auto,
                );
                match (consistency, index, scale, &area) {
                    (Some(consistency), Some(power_index), Some(rate_scale), Some(area)) => {
                        Some(Viscosity { area: area.clone(), consistency, power_index, rate_scale })
                    }
                    _ => None,
                }
            }
            _ => {
                self.error(m.span(), &field, "a viscous material needs `consistency` (eta_0, Pa s^k), `power_index` (k) and `rate_scale` (1/s, where the power law is regularised) together");
                None
            }
        };
        let coefficients: Option<Vec<Expr>> = coefficients.into_iter().collect();
        let elasticity = match (coefficients, area) {
            (Some(c), Some(area)) => c.try_into().ok().map(|coefficients| Elasticity::Yeoh { coefficients, area }),
            _ => None,
        };
        (elasticity, viscosity)
    }

    /// A positive (or, `strictly` false, non-negative) value of a muscle bank, a parameter
    /// `<body>_<key>` when it is a literal.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn muscle_value(
        &mut self,
        value: &Spanned<Value>,
        field: &str,
        body: &str,
        key: &str,
        doc: &str,
        strictly: bool,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Expr> {
        self.signed_parameter(
            value,
            &format!("{field}.{key}"),
            format!("{body}_muscle_{key}"),
            format!("{doc} of the muscles of `{body}`."),
            strictly,
            parameters,
            auto,
        )
    }

    /// Three pneumatic muscles along a soft section: an extensible section's own actuators,
    /// or muscles placed on an inextensible one by `radius` and `angles`.
    pub(super) fn muscle_bank(
        &mut self,
        a: &spec::Actuator,
        field: &str,
        body: &Body,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<MuscleBank> {
        let bname = body.name.clone();
        let Some(section) = &body.section else {
            self.error(
                a.joint.span(),
                &format!("{field}.joint"),
                format!("pneumatic muscles drive a soft section, and `{bname}` is rigid"),
            );
            return None;
        };
        if let Some(l) = &a.torque_limit {
            self.error(
                l.span(),
                &format!("{field}.torque_limit"),
                "pneumatic muscles are limited by `rated_pressure`; they have no torque limit",
            );
        }
        if let Some(r) = &a.response {
            self.error(
                r.span(),
                &format!("{field}.response"),
                "pneumatic muscles follow their pressure through `pressure_lag`; `response` is for solenoid valves",
            );
        }
        let placement = match &section.kind {
            SectionKind::Extensible { .. } => {
                for (given, key) in
                    [(a.radius.as_ref().map(|v| v.span()), "radius"), (a.angles.as_ref().map(|v| v.span()), "angles")]
                {
                    if let Some(span) = given {
                        self.error(span, &format!("{field}.{key}"), format!("the muscles of extensible section `{bname}` are its actuators: its `section` places them"));
                    }
                }
                None
            }
            SectionKind::Inextensible => {
                let radius = match &a.radius {
                    Some(r) => self.muscle_value(
                        r,
                        field,
                        &bname,
                        "radius",
                        "Distance from the neutral axis (m)",
                        true,
                        parameters,
                        auto,
                    ),
                    None => {
                        self.error(a.kind.span(), &format!("{field}.radius"), format!("missing: muscles on inextensible section `{bname}` need their distance from the neutral axis (m)"));
                        None
                    }
                };
                let angles = self.three_angles(a.angles.as_ref(), &format!("{field}.angles"), parameters);
                Some((radius?, angles?))
            }
            SectionKind::Planar { .. } => {
                self.error(a.joint.span(), &format!("{field}.joint"), format!("pneumatic muscles drive extensible or inextensible sections; `{bname}` is planar (drive it with a valve pair)"));
                return None;
            }
        };
        let required = |v: &Option<Spanned<Value>>| v.clone();
        let (Some(area), Some(rated)) = (required(&a.area), required(&a.rated_pressure)) else {
            self.error(
                a.kind.span(),
                field,
                "pneumatic muscles need `area` (m^2, force per pressure) and `rated_pressure` (bar)",
            );
            return None;
        };
        let area = self.muscle_value(
            &area,
            field,
            &bname,
            "area",
            "Effective area, force per pressure (m^2)",
            true,
            parameters,
            auto,
        );
        let rated_pressure = self.muscle_value(
            &rated,
            field,
            &bname,
            "rated_pressure",
            "Highest rated pressure (bar)",
            true,
            parameters,
            auto,
        );
        let pressure_lag = match &a.pressure_lag {
            Some(v) => self.muscle_value(
                v,
                field,
                &bname,
                "pressure_lag",
                "Time constant of the pressure lag (s)",
                false,
                parameters,
                auto,
            ),
            None => Some(Expr::Num(Number::Rational(0, 1))),
        };
        Some(MuscleBank {
            body: bname,
            first_coordinate: section.first_coordinate,
            coordinates: section.coordinates,
            placement,
            rest_length: section.rest_length.clone(),
            area: area?,
            rated_pressure: rated_pressure?,
            pressure_lag: pressure_lag?,
        })
    }

    /// Three actuators' angles about a section's centre line (rad) at `field`: as given, or
    /// 0, 2 pi / 3 and 4 pi / 3 without.
    fn three_angles(
        &mut self,
        angles: Option<&Spanned<Vec<Spanned<Value>>>>,
        field: &str,
        parameters: &BTreeMap<String, f64>,
    ) -> Option<[Expr; 3]> {
        match angles {
            None => {
                let third = |k: i128| Expr::Mul(vec![Expr::Num(Number::Rational(2 * k, 3)), Expr::Sym("pi".into())]);
                Some([Expr::Num(Number::Rational(0, 1)), third(1), third(2)])
            }
            Some(angles) if angles.get_ref().len() == 3 => {
                let parsed: Vec<Option<Expr>> = angles
                    .get_ref()
                    .iter()
                    .enumerate()
                    .map(|(j, v)| self.value(v, &format!("{field}[{j}]"), parameters))
                    .collect();
                parsed.into_iter().collect::<Option<Vec<Expr>>>().and_then(|v| v.try_into().ok())
            }
            Some(angles) => {
                self.error(angles.span(), field, format!("expected 3 angles, got {}", angles.get_ref().len()));
                None
            }
        }
    }

    /// A constant-curvature section: its coordinates (three actuator lengths, or two or one
    /// curvatures), geometry, slices and mount.
    pub(super) fn soft_body(
        &mut self,
        sb: &Spanned<spec::Body>,
        field: &str,
        context: &SoftContext,
        coordinates: &mut Vec<Coordinate>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Body> {
        let b = sb.get_ref();
        let bname = b.name.get_ref().clone();
        self.foreign_soft_fields(sb, field);
        let Some(section) = &b.section else {
            self.error(
                sb.span(),
                &format!("{field}.section"),
                "missing: soft sections need section = { model, rest_length, stiffness, damping, and disc_radius or the body's inertia }",
            );
            return None;
        };
        let s = section.get_ref();
        let model = *s.model.get_ref();
        if model != spec::SectionModel::Planar && context.normal.is_some() {
            self.error(
                s.model.span(),
                &format!("{field}.section.model"),
                "extensible and inextensible sections bend out of any plane: use model = \"planar\" in a planar robot, or give the robot a spatial or fixed base",
            );
        }
        let rest_length = self.section_value(
            &s.rest_length,
            field,
            &bname,
            "rest_length",
            "Unactuated length (m)",
            true,
            parameters,
            auto,
        );
        let (length_unit, stiffness_unit, damping_unit) = match model {
            spec::SectionModel::Extensible => ("m", "N/m", "N s/m"),
            _ => ("1/m", "N m^3", "N m^3 s"),
        };
        let (elasticity, viscosity) =
            self.section_elasticity(section, model, field, &bname, stiffness_unit, parameters, auto);
        let damping = self.section_value(
            &s.damping,
            field,
            &bname,
            "damping",
            &format!("Damping D of each coordinate ({damping_unit})"),
            false,
            parameters,
            auto,
        );
        let kind = self.section_kind(section, model, field, &bname, context, parameters, auto);
        let mass = self.parameterised(
            &b.mass,
            &format!("{field}.mass"),
            format!("{bname}_mass"),
            format!("Mass of `{bname}` (kg)."),
            parameters,
            auto,
        );
        if let Some(m) = &mass {
            self.rule(&format!("{field}.mass"), Rule::Positive, vec![m.clone()]);
            match m.evaluate(parameters) {
                Ok(v) if v > 0.0 => {}
                Ok(v) => self.error(b.mass.span(), &format!("{field}.mass"), format!("must be > 0 kg, got {v}")),
                Err(e) => self.error(b.mass.span(), &format!("{field}.mass"), e),
            }
        }
        let slice_inertia = self.slice_inertia(sb, section, mass.as_ref(), field, &bname, parameters, auto);
        let quadrature = match &s.quadrature {
            None => 8,
            Some(n) if (1..=32).contains(n.get_ref()) => *n.get_ref() as usize,
            Some(n) => {
                self.error(
                    n.span(),
                    &format!("{field}.section.quadrature"),
                    format!("must be in 1..=32 nodes, got {}", n.get_ref()),
                );
                8
            }
        };
        let count = model.coordinates();
        let mut initial = vec![0.0; count];
        if let Some(i) = &s.initial {
            if i.get_ref().len() != count {
                self.error(
                    i.span(),
                    &format!("{field}.section.initial"),
                    format!("expected {count} values ({length_unit}), got {}", i.get_ref().len()),
                );
            } else if i.get_ref().iter().any(|v| !v.is_finite()) {
                self.error(i.span(), &format!("{field}.section.initial"), "must be finite");
            } else {
                initial = i.get_ref().clone();
            }
        }
        let rotation = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
        if rotation.iter().any(|v| !v.is_finite()) {
            self.error(b.rotation.as_ref().map_or(0..0, |r| r.span()), &format!("{field}.rotation"), "must be finite");
        }
        let zero = || Expr::Num(Number::Rational(0, 1));
        let origin = match (&b.origin, context.parent) {
            (None, _) => Some([zero(), zero(), zero()]),
            (Some(o), None) => {
                self.error(
                    o[0].span(),
                    &format!("{field}.origin"),
                    "the base body's frame is the base; remove `origin`",
                );
                None
            }
            (Some(o), Some(_)) => Some(self.vector(Some(o), &format!("{field}.origin"), parameters)),
        };
        let first_coordinate = coordinates.len();
        section_coordinates(model, &bname, &initial, coordinates);
        let hull = match (&b.hydrodynamics, &rest_length) {
            (Some(h), Some(rest)) => self.hull(h, field, &bname, Some(rest), context.normal, parameters, auto),
            _ => None,
        };
        Some(Body {
            hull,
            name: bname,
            parent: context.parent,
            joint: None,
            origin: origin?,
            rotation,
            mass: mass?,
            center_of_mass: [zero(), zero(), zero()],
            inertia: Inertia::Full([zero(), zero(), zero(), zero(), zero(), zero()]),
            section: Some(SoftSection {
                kind: kind?,
                rest_length: rest_length?,
                slice_inertia: slice_inertia?,
                elasticity: elasticity?,
                damping: damping?,
                viscosity,
                quadrature,
                first_coordinate,
                coordinates: count,
            }),
        })
    }

    /// Reports the rigid-body fields a soft section has: a joint, its axis, a centre of mass
    /// and a joint's initial value.
    fn foreign_soft_fields(&mut self, sb: &Spanned<spec::Body>, field: &str) {
        let b = sb.get_ref();
        if let Some(j) = &b.joint {
            self.error(
                j.span(),
                &format!("{field}.joint"),
                "a soft section's coordinates are its own (actuator lengths or curvatures); remove `joint`",
            );
        }
        if b.axis.is_some() {
            self.error(sb.span(), &format!("{field}.axis"), "a soft section has no joint axis; remove `axis`");
        }
        if b.center_of_mass.is_some() {
            self.error(
                sb.span(),
                &format!("{field}.center_of_mass"),
                "a soft section's mass is spread along it; remove `center_of_mass`",
            );
        }
        if let Some(i) = &b.initial {
            self.error(
                i.span(),
                &format!("{field}.initial"),
                "give a soft section's initial coordinates as section.initial",
            );
        }
    }

    /// A section's elasticity, from its `material` (extensible sections) or its `stiffness`,
    /// and the material's viscosity.
    #[allow(clippy::too_many_arguments)]
    fn section_elasticity(
        &mut self,
        section: &Spanned<spec::SectionSpec>,
        model: spec::SectionModel,
        field: &str,
        bname: &str,
        stiffness_unit: &str,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> (Option<Elasticity>, Option<Viscosity>) {
        let s = section.get_ref();
        match (&s.material, &s.stiffness) {
            (Some(m), given) => {
                if let Some(k) = given {
                    self.error(
                        k.span(),
                        &format!("{field}.section.stiffness"),
                        "the section's `material` gives its elasticity; remove `stiffness`",
                    );
                }
                if model != spec::SectionModel::Extensible {
                    self.error(
                        m.span(),
                        &format!("{field}.section.material"),
                        "a material stretches actuators: only extensible sections take one (use `stiffness`)",
                    );
                    (None, None)
                } else {
                    self.material(m, field, &bname, parameters, auto)
                }
            }
            (None, Some(k)) => (
                self.section_value(
                    k,
                    field,
                    &bname,
                    "stiffness",
                    &format!("Elastic stiffness K of each coordinate ({stiffness_unit})"),
                    false,
                    parameters,
                    auto,
                )
                .map(Elasticity::Linear),
                None,
            ),
            (None, None) => {
                self.error(section.span(), &format!("{field}.section.stiffness"), format!("missing: the elastic stiffness K of each coordinate ({stiffness_unit}), or an extensible section's `material`"));
                (None, None)
            }
        }
    }

    /// A section's kind: an extensible section's actuators (radius and angles), or the
    /// curvatures of an inextensible or planar one.
    #[allow(clippy::too_many_arguments)]
    fn section_kind(
        &mut self,
        section: &Spanned<spec::SectionSpec>,
        model: spec::SectionModel,
        field: &str,
        bname: &str,
        context: &SoftContext,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<SectionKind> {
        let s = section.get_ref();
        match model {
            spec::SectionModel::Extensible => {
                let actuator_radius = match &s.actuator_radius {
                    Some(r) => self.section_value(
                        r,
                        field,
                        &bname,
                        "actuator_radius",
                        "Actuator distance from the neutral axis (m)",
                        true,
                        parameters,
                        auto,
                    ),
                    None => {
                        self.error(
                            section.span(),
                            &format!("{field}.section.actuator_radius"),
                            "missing: extensible sections need the actuators' distance from the neutral axis (m)",
                        );
                        None
                    }
                };
                let actuator_angles = self.three_angles(
                    s.actuator_angles.as_ref(),
                    &format!("{field}.section.actuator_angles"),
                    parameters,
                );
                match (actuator_radius, actuator_angles) {
                    (Some(actuator_radius), Some(actuator_angles)) => {
                        Some(SectionKind::Extensible { actuator_radius, actuator_angles })
                    }
                    _ => None,
                }
            }
            other => {
                for (given, key) in [
                    (s.actuator_radius.as_ref().map(|r| r.span()), "actuator_radius"),
                    (s.actuator_angles.as_ref().map(|a| a.span()), "actuator_angles"),
                ] {
                    if let Some(span) = given {
                        self.error(
                            span,
                            &format!("{field}.section.{key}"),
                            "only extensible sections have actuators; their coordinates are curvatures",
                        );
                    }
                }
                Some(match other {
                    spec::SectionModel::Inextensible => SectionKind::Inextensible,
                    _ => SectionKind::Planar { towards_z: context.normal.is_some_and(|n| n[2] == 0.0) },
                })
            }
        }
    }

    /// The slices' rotational inertia per unit mass: a thin disc of `section.disc_radius`, or
    /// the body's inertia stated for the whole section divided by its mass.
    #[allow(clippy::too_many_arguments)]
    fn slice_inertia(
        &mut self,
        sb: &Spanned<spec::Body>,
        section: &Spanned<spec::SectionSpec>,
        mass: Option<&Expr>,
        field: &str,
        bname: &str,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<[Expr; 3]> {
        let (b, s) = (sb.get_ref(), section.get_ref());
        // The slices' rotational inertia per unit mass: a thin disc, or stated for the whole
        // section.
        match (&s.disc_radius, &b.inertia) {
            (Some(r), None) => self
                .section_value(r, field, &bname, "disc_radius", "Slice disc radius (m)", false, parameters, auto)
                .map(|r| {
                    let squared = |f: i128| {
                        Expr::Mul(vec![
                            Expr::Num(Number::Rational(1, f)),
                            Expr::Pow(Box::new(r.clone()), Box::new(Expr::Num(Number::Rational(2, 1)))),
                        ])
                    };
                    [squared(2), squared(4), squared(4)]
                }),
            (None, Some(i)) => match i.get_ref() {
                spec::Inertia::Vector(values) if values.len() == 3 => {
                    let parsed: Vec<Option<Expr>> = values
                        .iter()
                        .enumerate()
                        .map(|(k, v)| {
                            self.value(&Spanned::new(i.span(), v.clone()), &format!("{field}.inertia[{k}]"), parameters)
                        })
                        .collect();
                    let parsed: Option<Vec<Expr>> = parsed.into_iter().collect();
                    match (parsed, mass) {
                        (Some(v), Some(m)) => {
                            self.rule(&format!("{field}.inertia"), Rule::PrincipalMoments, v.clone());
                            let numbers: Vec<f64> =
                                v.iter().map(|e| e.evaluate(parameters).unwrap_or(f64::NAN)).collect();
                            if let Err(message) = physical_inertia([numbers[0], numbers[1], numbers[2], 0.0, 0.0, 0.0])
                            {
                                self.error(
                                    i.span(),
                                    &format!("{field}.inertia"),
                                    format!("must be the slices' principal moments summed over the section: {message}"),
                                );
                                None
                            } else {
                                let per_mass = |e: &Expr| {
                                    Expr::Mul(vec![
                                        e.clone(),
                                        Expr::Pow(Box::new(m.clone()), Box::new(Expr::Num(Number::Rational(-1, 1)))),
                                    ])
                                };
                                Some([per_mass(&v[0]), per_mass(&v[1]), per_mass(&v[2])])
                            }
                        }
                        _ => None,
                    }
                }
                _ => {
                    self.error(i.span(), &format!("{field}.inertia"), "a soft section's inertia is its slices' principal moments summed over it: [ixx, iyy, izz] (kg m^2, x along the centre line)");
                    None
                }
            },
            (Some(r), Some(_)) => {
                self.error(
                    r.span(),
                    &format!("{field}.section.disc_radius"),
                    "give either section.disc_radius (thin-disc slices) or the body's inertia, not both",
                );
                None
            }
            (None, None) => {
                self.error(section.span(), &format!("{field}.section.disc_radius"), "missing: give section.disc_radius (thin-disc slices) or the body's inertia = [ixx, iyy, izz] (the slices' moments summed over the section)");
                None
            }
        }
    }
}

/// A section's coordinates, added to `coordinates`: three actuator lengths, two curvatures or
/// one, with their initial values.
fn section_coordinates(model: spec::SectionModel, bname: &str, initial: &[f64], coordinates: &mut Vec<Coordinate>) {
    for (j, value) in initial.iter().enumerate() {
        let (name, kind, meaning) = match model {
            spec::SectionModel::Extensible => (
                format!("{bname}_l{}", j + 1),
                CoordinateKind::ActuatorLength,
                format!("length change of actuator {} of soft section `{bname}` (m)", j + 1),
            ),
            spec::SectionModel::Inextensible => (
                format!("{bname}_curvature_{}", ["y", "z"][j]),
                CoordinateKind::Curvature,
                format!("curvature of soft section `{bname}` bending towards its +{} axis (1/m)", ["y", "z"][j]),
            ),
            spec::SectionModel::Planar => (
                format!("{bname}_curvature"),
                CoordinateKind::Curvature,
                format!("curvature of soft section `{bname}` in the plane of motion (1/m)"),
            ),
        };
        coordinates.push(Coordinate { name, kind, meaning, actuated: true, initial: *value });
    }
}
