//! A body of the tree: a soft section (`soft.rs`) or a rigid body with its joint, fixed
//! rotation, origin, mass, centre of mass, inertia and hull.

// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// Spec body `o`, a soft section or a rigid body, with its joint's coordinate and its
    /// parameters added; `None` (its errors reported) where it cannot be built.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn body(
        &mut self,
        spec: &Spec,
        o: usize,
        tree: &BodyTree,
        normal: Option<[f64; 3]>,
        coordinates: &mut Vec<Coordinate>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Body> {
        let sb = &spec.bodies[o];
        let b = sb.get_ref();
        let bname = b.name.get_ref().clone();
        let field = format!("{} ({bname})", self.labels.body(o));
        if *b.kind.get_ref() == spec::BodyKind::ConstantCurvature {
            let parent = tree.parent(o);
            let context = SoftContext { normal, parent };
            return self.soft_body(sb, &field, &context, coordinates, parameters, auto);
        }
        if let Some(s) = &b.section {
            self.error(
                s.span(),
                &format!("{field}.section"),
                "only kind = \"constant_curvature\" bodies take `section`",
            );
        }
        let Some(b_inertia) = &b.inertia else {
            self.error(sb.span(), &format!("{field}.inertia"), "missing: rigid bodies need an inertia");
            return None;
        };
        let joint = self.joint(spec, o, tree, &field, normal, coordinates);
        let rotation = self.fixed_rotation(b, &field, normal);
        if o == tree.root && b.origin.is_some() {
            self.error(
                sb.span(),
                &format!("{field}.origin"),
                "the base body's origin is its floating (or fixed) base position; remove `origin`",
            );
        }
        let origin = self.vector(b.origin.as_ref(), &format!("{field}.origin"), parameters);
        if planar_violation(&origin, normal) {
            let span = b.origin.as_ref().map_or(sb.span(), |o| o[0].span());
            self.error(
                span,
                &format!("{field}.origin"),
                "in a planar robot the origin must lie in the plane (zero along the plane normal)",
            );
        }
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
        let center_of_mass = self.vector(b.center_of_mass.as_ref(), &format!("{field}.center_of_mass"), parameters);
        if planar_violation(&center_of_mass, normal) {
            let span = b.center_of_mass.as_ref().map_or(sb.span(), |c| c[0].span());
            self.error(
                span,
                &format!("{field}.center_of_mass"),
                "in a planar robot the centre of mass must lie in the plane",
            );
        }
        let inertia = self.rigid_inertia(b_inertia, &field, &bname, normal, parameters, auto);
        let hull = b.hydrodynamics.as_ref().and_then(|h| self.hull(h, &field, &bname, None, normal, parameters, auto));
        Some(Body {
            name: bname,
            parent: tree.parent(o),
            joint,
            origin,
            rotation,
            mass: mass.unwrap_or(Expr::Num(Number::Rational(1, 1))),
            center_of_mass,
            inertia: inertia.unwrap_or(Inertia::Planar(Expr::Num(Number::Rational(0, 1)))),
            section: None,
            hull,
        })
    }

    /// A rigid body's joint (none for the base body) and its coordinate, added to
    /// `coordinates` unless the joint is fixed.
    pub(super) fn joint(
        &mut self,
        spec: &Spec,
        o: usize,
        tree: &BodyTree,
        field: &str,
        normal: Option<[f64; 3]>,
        coordinates: &mut Vec<Coordinate>,
    ) -> Option<Joint> {
        let sb = &spec.bodies[o];
        let b = sb.get_ref();
        let bname = b.name.get_ref();
        if o == tree.root {
            if let Some(j) = &b.joint {
                self.error(
                    j.span(),
                    &format!("{field}.joint"),
                    "the base body has no joint; its motion is set by [base]",
                );
            }
            None
        } else {
            let kind = match &b.joint {
                Some(j) => *j.get_ref(),
                None => {
                    self.error(
                        sb.span(),
                        &format!("{field}.joint"),
                        "missing: expected \"revolute\", \"prismatic\" or \"fixed\"",
                    );
                    JointKind::Fixed
                }
            };
            let axis = match (&b.axis, normal) {
                (Some(a), _) => {
                    let v = *a.get_ref();
                    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                    if !(len > 1e-9) || !len.is_finite() {
                        self.error(a.span(), &format!("{field}.axis"), "must be a non-zero finite vector");
                        [0.0, 0.0, 1.0]
                    } else {
                        let u = [v[0] / len, v[1] / len, v[2] / len];
                        if let Some(n) = normal {
                            let dot = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
                            if kind == JointKind::Revolute && (dot.abs() - 1.0).abs() > 1e-9 {
                                self.error(a.span(), &format!("{field}.axis"), format!("in a planar robot revolute axes must be the plane normal {n:?} (or its opposite)"));
                            }
                            // Frames of a planar robot only turn about the normal, so an
                            // axis in the plane of its body frame stays in the plane.
                            if kind == JointKind::Prismatic && dot.abs() > 1e-9 {
                                self.error(a.span(), &format!("{field}.axis"), format!("in a planar robot a prismatic joint must slide in the plane: its axis must be perpendicular to the plane normal {n:?}"));
                            }
                        }
                        u
                    }
                }
                (None, Some(n)) => {
                    if kind == JointKind::Prismatic {
                        self.error(
                            sb.span(),
                            &format!("{field}.axis"),
                            "missing: a prismatic joint of a planar robot needs its axis, a direction in the plane",
                        );
                    }
                    n
                }
                (None, None) => {
                    if kind != JointKind::Fixed {
                        self.error(
                            sb.span(),
                            &format!("{field}.axis"),
                            "missing: spatial robots must give each joint's axis",
                        );
                    }
                    [0.0, 0.0, 1.0]
                }
            };
            let coordinate = if kind == JointKind::Fixed {
                None
            } else {
                coordinates.push(Coordinate {
                    name: format!("{bname}_joint"),
                    kind: if kind == JointKind::Revolute {
                        CoordinateKind::RevoluteJoint
                    } else {
                        CoordinateKind::PrismaticJoint
                    },
                    meaning: format!(
                        "{} of `{bname}` relative to `{}`",
                        if kind == JointKind::Revolute { "angle" } else { "travel" },
                        spec.bodies[tree.parent_of[o].unwrap_or(tree.root)].get_ref().name.get_ref()
                    ),
                    actuated: false,
                    initial: b.initial.as_ref().map_or(0.0, |v| *v.get_ref()),
                });
                Some(coordinates.len() - 1)
            };
            if let Some(v) = &b.initial {
                if !v.get_ref().is_finite() {
                    self.error(v.span(), &format!("{field}.initial"), "must be finite");
                }
                if kind == JointKind::Fixed {
                    self.error(v.span(), &format!("{field}.initial"), "a fixed joint has no coordinate to initialise");
                }
            }
            Some(Joint { kind, axis, coordinate })
        }
    }

    /// A rigid body's fixed rotation `[roll, pitch, yaw]`, about the plane normal only in a
    /// planar robot.
    pub(super) fn fixed_rotation(&mut self, b: &spec::Body, field: &str, normal: Option<[f64; 3]>) -> [f64; 3] {
        let rotation = b.rotation.as_ref().map_or([0.0; 3], |r| *r.get_ref());
        if let Some(r) = &b.rotation {
            if r.get_ref().iter().any(|v| !v.is_finite()) {
                self.error(r.span(), &format!("{field}.rotation"), "must be finite");
            }
            if let Some(n) = normal {
                // In a planar robot only rotations about the plane normal keep it planar.
                let [roll, pitch, yaw] = *r.get_ref();
                let about_normal = if n[2] != 0.0 { roll == 0.0 && pitch == 0.0 } else { roll == 0.0 && yaw == 0.0 };
                if !about_normal {
                    self.error(
                        r.span(),
                        &format!("{field}.rotation"),
                        "in a planar robot a fixed rotation may only turn about the plane normal",
                    );
                }
            }
        }
        rotation
    }

    /// A rigid body's inertia about its centre of mass: the moment about the plane normal in
    /// a planar robot, the full tensor in a spatial one, each entry a parameter.
    pub(super) fn rigid_inertia(
        &mut self,
        b_inertia: &Spanned<spec::Inertia>,
        field: &str,
        bname: &str,
        normal: Option<[f64; 3]>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Inertia> {
        let inertia_field = format!("{field}.inertia");
        let inertia = match (b_inertia.get_ref(), normal) {
            (spec::Inertia::Scalar(v), Some(_)) => {
                let spanned = Spanned::new(b_inertia.span(), v.clone());
                self.parameterised(
                    &spanned,
                    &inertia_field,
                    format!("{bname}_inertia"),
                    format!("Inertia of `{bname}` about the plane normal through its centre of mass (kg m^2)."),
                    parameters,
                    auto,
                )
                .map(Inertia::Planar)
            }
            (spec::Inertia::Scalar(_), None) => {
                self.error(
                    b_inertia.span(),
                    &inertia_field,
                    "a spatial robot needs [ixx, iyy, izz] or [ixx, iyy, izz, ixy, ixz, iyz]",
                );
                None
            }
            (spec::Inertia::Vector(values), _) if values.len() == 3 || values.len() == 6 => {
                let names = ["xx", "yy", "zz", "xy", "xz", "yz"];
                let mut out: Vec<Expr> = Vec::new();
                for (i, v) in values.iter().enumerate() {
                    let spanned = Spanned::new(b_inertia.span(), v.clone());
                    if let Some(e) = self.parameterised(
                        &spanned,
                        &format!("{inertia_field}[{i}]"),
                        format!("{bname}_inertia_{}", names[i]),
                        format!("Inertia I{} of `{bname}` about its centre of mass, body frame (kg m^2).", names[i]),
                        parameters,
                        auto,
                    ) {
                        out.push(e);
                    }
                }
                while out.len() < 6 {
                    out.push(Expr::Num(Number::Rational(0, 1)));
                }
                let full: Option<[Expr; 6]> = out.try_into().ok();
                full.map(|full| match normal {
                    // Planar: only the moment about the plane normal matters.
                    Some(n) if n[2] != 0.0 => Inertia::Planar(full[2].clone()),
                    Some(_) => Inertia::Planar(full[1].clone()),
                    None => Inertia::Full(full),
                })
            }
            (spec::Inertia::Vector(values), _) => {
                self.error(
                    b_inertia.span(),
                    &inertia_field,
                    format!("expected 1, 3 or 6 values, got {}", values.len()),
                );
                None
            }
        };
        if let Some(i) = &inertia {
            match i {
                Inertia::Planar(e) => self.rule(&inertia_field, Rule::NonNegative, vec![e.clone()]),
                Inertia::Full(f) => self.rule(&inertia_field, Rule::RigidInertia, f.to_vec()),
            }
            let diagonal: Vec<&Expr> = match i {
                Inertia::Planar(e) => vec![e],
                Inertia::Full(f) => f[..3].iter().collect(),
            };
            let mut nonnegative = true;
            for e in diagonal {
                if let Ok(v) = e.evaluate(parameters) {
                    if v < 0.0 {
                        nonnegative = false;
                        self.error(
                            b_inertia.span(),
                            &inertia_field,
                            format!("moments of inertia must be >= 0, got {v}"),
                        );
                    }
                }
            }
            if let (Inertia::Full(f), true) = (i, nonnegative) {
                let values: Result<Vec<f64>, _> = f.iter().map(|e| e.evaluate(parameters)).collect();
                if let Ok(v) = values {
                    if let Err(message) = physical_inertia([v[0], v[1], v[2], v[3], v[4], v[5]]) {
                        self.error(b_inertia.span(), &inertia_field, message);
                    }
                }
            }
        }
        inertia
    }
}
