//! The whole spec in order, one step each: the module's name, parameters, gravity, base,
//! the body tree (names, parents, cycles, parent-first order), coordinates, bodies, contact
//! points, markers, environment, water, actuators, gaits and the controller's coordinates.
//! `robot` runs the steps in the order their errors are reported.

// The validator's types, helpers and imports, shared by its files.
use super::*;

/// The bodies as a tree: what `body_tree` finds and the later steps read.
struct BodyTree {
    /// A body's index in the spec by its name.
    index_of: BTreeMap<String, usize>,
    /// The base body's index in the spec.
    root: usize,
    /// Each body's parent, by index in the spec.
    parent_of: Vec<Option<usize>>,
    /// The spec's indices, parent first (breadth-first from the root, children in file order).
    order: Vec<usize>,
    /// A body's index in the robot (its place in `order`) by its index in the spec.
    new_index: BTreeMap<usize, usize>,
}

impl BodyTree {
    /// The robot's index of spec body `o`'s parent.
    fn parent(&self, o: usize) -> Option<usize> {
        self.parent_of[o].and_then(|p| self.new_index.get(&p).copied())
    }
}

/// The actuators, sorted by kind: what `actuators` finds and the gaits read.
struct Actuators {
    /// Coordinates driven by a joint torque.
    actuated: Vec<usize>,
    valves: Vec<Valve>,
    muscles: Vec<MuscleBank>,
    thrusters: Vec<Thruster>,
    /// The smallest of the joint torques' limits (infinite without one).
    torque_limit: f64,
}

impl Validator {
    /// Validates the whole spec: each step reports its errors, in the order of the spec's
    /// sections; a step whose errors leave nothing for the next to check stops here.
    pub(super) fn robot(&mut self, spec: &Spec) -> Option<Robot> {
        let name = self.module_name(spec)?;
        let (mut parameters, declared) = self.declared_parameters(spec);
        let mut auto: Vec<Parameter> = Vec::new();
        // Environment first: gravity is a parameter of the dynamics.
        let environment = spec.environment.as_ref();
        let gravity = self.gravity(environment);
        // `load` has filled the base in (from [import] where there is one) or refused the spec.
        let spec_base = spec.base.as_ref()?;
        let (base_kind, plane, normal) = self.base_plane(spec_base);
        let tree = self.body_tree(spec, spec_base.get_ref())?;
        let mut coordinates = self.base_coordinates(spec, spec_base, &tree, base_kind, plane);
        let mut bodies: Vec<Body> = Vec::new();
        for &o in &tree.order {
            let body = self.body(spec, o, &tree, normal, &mut coordinates, &mut parameters, &mut auto);
            bodies.extend(body);
        }
        self.count_contact_points(spec)?;
        let (contact_points, contact_names) = self.contact_points(spec, &tree, normal, &mut parameters, &mut auto);
        let markers = self.markers(spec, &tree.index_of, &tree.new_index, &contact_names, normal, &parameters);
        let env = self.environment_defaults(environment, plane, &parameters);
        // Gravity is a runtime parameter of G.
        if parameters.contains_key("gravity") {
            self.error(0..0, "parameters.gravity", "`gravity` is set in [environment]");
        }
        parameters.insert("gravity".into(), gravity);
        let water = self.water(spec, &bodies, &mut parameters, &mut auto);
        let actuators =
            self.actuators(spec, &tree, &bodies, &mut coordinates, &contact_names, normal, &mut parameters, &mut auto);
        let (gait, valve_gait) = self.gaits(spec, &actuators, &parameters);

        let controller_coordinates = spec.controller_coordinates.as_ref().and_then(|c| {
            self.controller_coordinates(c, base_kind, coordinates.len(), actuators.actuated.len(), &contact_points)
        });

        let mut all_parameters = declared;
        all_parameters.extend(auto);
        all_parameters.push(Parameter {
            name: "gravity".into(),
            default: gravity,
            doc: "Gravitational acceleration along -z (m/s^2).".into(),
        });
        Some(Robot {
            name,
            description: spec.description.get_ref().trim().to_string(),
            spec_path: self.path.clone(),
            urdf: spec.import.as_ref().map(|i| i.get_ref().urdf.get_ref().clone()),
            regenerate: IN_TREE_COMMAND.into(),
            base: base_kind,
            plane,
            parameters: all_parameters,
            coordinates,
            bodies,
            contact_points,
            markers,
            actuated: actuators.actuated,
            environment: env,
            gait,
            valves: actuators.valves,
            valve_gait,
            muscles: actuators.muscles,
            rules: std::mem::take(&mut self.rules),
            water,
            thrusters: actuators.thrusters,
            controller_coordinates,
        })
    }

    /// The module's name (the spec file's stem), the number of bodies and the description.
    fn module_name(&mut self, spec: &Spec) -> Option<String> {
        let name = stem(&self.path);
        if !is_identifier(&name) {
            self.error(0..0, "", format!("the file name `{name}` must be a Rust identifier (letters, digits, _), since it names the generated module"));
        } else if RUST_KEYWORDS.contains(&name.as_str()) || RESERVED_MODULES.contains(&name.as_str()) {
            self.error(0..0, "", format!("the file name `{name}` cannot name the generated module: it is a Rust keyword or the generated crate's own `{name}.rs`; rename the spec"));
        }
        if spec.bodies.len() > MAX_BODIES {
            self.error(0..0, "bodies", format!("{} bodies, more than the limit of {MAX_BODIES}", spec.bodies.len()));
            return None;
        }
        let description = spec.description.get_ref();
        if description.trim().is_empty() {
            self.error(spec.description.span(), "description", "must not be empty");
        } else if description.chars().any(char::is_control) {
            // It is written into the generated file's header comment.
            self.error(
                spec.description.span(),
                "description",
                "must be one line of text, without newlines or other control characters",
            );
        }
        Some(name)
    }

    /// `[parameters]`: their values by name, and as the generated struct's fields.
    fn declared_parameters(&mut self, spec: &Spec) -> (BTreeMap<String, f64>, Vec<Parameter>) {
        let mut parameters: BTreeMap<String, f64> = BTreeMap::new();
        let mut declared = Vec::new();
        for (key, value) in &spec.parameters {
            let field = format!("parameters.{key}");
            if !is_identifier(key)
                || RESERVED.contains(&key.as_str())
                || expr::FUNCTIONS.contains(&key.as_str())
                || RUST_KEYWORDS.contains(&key.as_str())
            {
                self.error(
                    value.span(),
                    &field,
                    format!("`{key}` cannot be a parameter name: use letters, digits and _, starting with a letter, not a Rust keyword, and none of {}", RESERVED.join(", ")),
                );
                continue;
            }
            if key.starts_with('q') && key[1..].chars().all(|c| c.is_ascii_digit() || c == 'd') {
                self.error(value.span(), &field, format!("`{key}` is reserved for generalized coordinates"));
                continue;
            }
            if !value.get_ref().is_finite() {
                self.error(value.span(), &field, format!("expected a finite number, got {}", value.get_ref()));
                continue;
            }
            parameters.insert(key.clone(), *value.get_ref());
            declared.push(Parameter { name: key.clone(), default: *value.get_ref(), doc: String::new() });
        }
        (parameters, declared)
    }

    /// `environment.gravity`, 9.81 m/s^2 without one.
    fn gravity(&mut self, environment: Option<&Spanned<spec::Environment>>) -> f64 {
        let gravity = match environment.and_then(|e| e.get_ref().gravity.as_ref()) {
            Some(g) if g.get_ref().is_finite() && *g.get_ref() >= 0.0 => {
                if let Err(message) = softgen_runtime::physical_ranges::check_field("environment.gravity", *g.get_ref())
                {
                    self.error(g.span(), "environment.gravity", message);
                }
                *g.get_ref()
            }
            Some(g) => {
                self.error(
                    g.span(),
                    "environment.gravity",
                    format!("must be a finite number >= 0 (m/s^2, acting along -z), got {}", g.get_ref()),
                );
                0.0
            }
            None => 9.81,
        };
        self.rule("environment.gravity", Rule::NonNegative, vec![Expr::Sym("gravity".into())]);
        gravity
    }

    /// `[base]`: its kind, its plane, and the plane's normal for a planar base.
    fn base_plane(&mut self, spec_base: &Spanned<spec::Base>) -> (BaseKind, Option<Plane>, Option<[f64; 3]>) {
        let base = spec_base.get_ref();
        let base_kind = *base.kind.get_ref();
        let plane = base.plane.as_ref().map(|p| *p.get_ref());
        match (base_kind, plane) {
            (BaseKind::Planar, None) => {
                self.error(spec_base.span(), "base.plane", "a planar base needs `plane = \"xz\"` or `plane = \"xy\"`")
            }
            (BaseKind::Spatial, Some(_)) => {
                let p = base.plane.as_ref().map_or(0..0, |p| p.span());
                self.error(p, "base.plane", "a spatial base moves in 3D; remove `plane`")
            }
            _ => {}
        }
        let normal = plane.map(|p| match p {
            Plane::Xz => [0.0, -1.0, 0.0],
            Plane::Xy => [0.0, 0.0, 1.0],
        });
        (base_kind, plane, normal)
    }

    /// The bodies' names and parents, with every body reaching the base body, and their
    /// parent-first order; `None` once any error is reported.
    fn body_tree(&mut self, spec: &Spec, base: &spec::Base) -> Option<BodyTree> {
        let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
        for (i, b) in spec.bodies.iter().enumerate() {
            let b = b.get_ref();
            let n = b.name.get_ref();
            if !is_identifier(n) {
                self.error(
                    b.name.span(),
                    &format!("{}.name", self.labels.body(i)),
                    format!("`{n}` must be an identifier (letters, digits, _)"),
                );
            }
            if n == "world" {
                self.error(b.name.span(), &format!("{}.name", self.labels.body(i)), "`world` is reserved");
            }
            if index_of.insert(n.clone(), i).is_some() {
                self.error(
                    b.name.span(),
                    &format!("{}.name", self.labels.body(i)),
                    format!("duplicate body name `{n}`"),
                );
            }
        }
        if spec.bodies.is_empty() {
            self.error(0..0, "bodies", "a robot needs at least one body ([[bodies]])");
            return None;
        }
        let root = match index_of.get(base.body.get_ref()) {
            Some(&r) => r,
            None => {
                self.error(base.body.span(), "base.body", format!("no body named `{}`", base.body.get_ref()));
                return None;
            }
        };
        let mut parent_of: Vec<Option<usize>> = vec![None; spec.bodies.len()];
        for (i, b) in spec.bodies.iter().enumerate() {
            let b = b.get_ref();
            let field = format!("{} ({})", self.labels.body(i), b.name.get_ref());
            match (&b.parent, i == root) {
                (Some(p), true) => {
                    self.error(p.span(), &format!("{field}.parent"), "the base body has no parent; remove `parent`")
                }
                (None, false) => self.error(
                    b.name.span(),
                    &format!("{field}.parent"),
                    format!("missing: every body but the base body `{}` needs a parent", base.body.get_ref()),
                ),
                (Some(p), false) => match index_of.get(p.get_ref()) {
                    Some(&pi) if pi == i => {
                        self.error(p.span(), &format!("{field}.parent"), "a body cannot be its own parent")
                    }
                    Some(&pi) => parent_of[i] = Some(pi),
                    None => self.error(
                        p.span(),
                        &format!("{field}.parent"),
                        format!("no body named `{}` (dangling parent)", p.get_ref()),
                    ),
                },
                (None, true) => {}
            }
        }
        // Cycle detection: every body must reach the root.
        for i in 0..spec.bodies.len() {
            let mut seen = BTreeSet::new();
            let mut at = i;
            while let Some(p) = parent_of[at] {
                if !seen.insert(at) {
                    let b = spec.bodies[i].get_ref();
                    self.error(
                        b.parent.as_ref().map_or(0..0, |p| p.span()),
                        &format!("{} ({}).parent", self.labels.body(i), b.name.get_ref()),
                        "the parent chain forms a cycle; bodies must form a tree rooted at the base body",
                    );
                    break;
                }
                at = p;
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        // Parent-first order (breadth-first from the root, children in file order).
        let mut order = vec![root];
        let mut k = 0;
        while k < order.len() {
            let at = order[k];
            for (i, p) in parent_of.iter().enumerate() {
                if *p == Some(at) {
                    order.push(i);
                }
            }
            k += 1;
        }
        let new_index: BTreeMap<usize, usize> = order.iter().enumerate().map(|(n, &o)| (o, n)).collect();
        Some(BodyTree { index_of, root, parent_of, order, new_index })
    }

    /// The base's coordinates, first of all, with their initial values.
    fn base_coordinates(
        &mut self,
        spec: &Spec,
        spec_base: &Spanned<spec::Base>,
        tree: &BodyTree,
        base_kind: BaseKind,
        plane: Option<Plane>,
    ) -> Vec<Coordinate> {
        let base = spec_base.get_ref();
        let mut coordinates = Vec::new();
        let initial = |i: usize| base.initial.get(i).map_or(0.0, |v| *v.get_ref());
        let base_coords: Vec<(&str, CoordinateKind, &str)> = match (base_kind, plane) {
            (BaseKind::Fixed, _) => vec![],
            (BaseKind::Planar, Some(Plane::Xz)) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("z", CoordinateKind::BaseTranslation, "base position along world z (up)"),
                ("pitch", CoordinateKind::BaseRotation, "base angle in the x-z plane, from +x towards +z"),
            ],
            (BaseKind::Planar, _) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("y", CoordinateKind::BaseTranslation, "base position along world y"),
                ("yaw", CoordinateKind::BaseRotation, "base angle in the x-y plane, from +x towards +y"),
            ],
            (BaseKind::Spatial, _) => vec![
                ("x", CoordinateKind::BaseTranslation, "base position along world x"),
                ("y", CoordinateKind::BaseTranslation, "base position along world y"),
                ("z", CoordinateKind::BaseTranslation, "base position along world z (up)"),
                ("yaw", CoordinateKind::BaseRotation, "base yaw alpha about world z (R = Rz Ry Rx)"),
                ("pitch", CoordinateKind::BaseRotation, "base pitch beta about the once-rotated y axis"),
                ("roll", CoordinateKind::BaseRotation, "base roll gamma about the body x axis"),
            ],
        };
        if !base.initial.is_empty() && base.initial.len() != base_coords.len() {
            self.error(
                spec_base.span(),
                "base.initial",
                format!(
                    "expected {} values ({}), got {}",
                    base_coords.len(),
                    base_coords.iter().map(|c| c.0).collect::<Vec<_>>().join(", "),
                    base.initial.len()
                ),
            );
        }
        for v in &base.initial {
            if !v.get_ref().is_finite() {
                self.error(v.span(), "base.initial", "values must be finite");
            }
        }
        let root_name = spec.bodies[tree.root].get_ref().name.get_ref().clone();
        for (i, (n, kind, meaning)) in base_coords.iter().enumerate() {
            coordinates.push(Coordinate {
                name: format!("base_{n}"),
                kind: *kind,
                meaning: format!("{meaning} (body `{root_name}`)"),
                actuated: false,
                initial: initial(i),
            });
        }
        coordinates
    }

    /// Spec body `o`, a soft section or a rigid body, with its joint's coordinate and its
    /// parameters added; `None` (its errors reported) where it cannot be built.
    #[allow(clippy::too_many_arguments)]
    fn body(
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
    fn joint(
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
    fn fixed_rotation(&mut self, b: &spec::Body, field: &str, normal: Option<[f64; 3]>) -> [f64; 3] {
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
    fn rigid_inertia(
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

    /// Counts the contact points before any grid is laid out: a grid's ring and point counts
    /// are checked here first, so that an absurd one is named, not only the sum.
    fn count_contact_points(&mut self, spec: &Spec) -> Option<()> {
        let mut declared_points: i64 = 0;
        let mut largest: Option<(i64, Range<usize>)> = None;
        let mut bad_grid = false;
        for (i, c) in spec.contact_points.iter().enumerate() {
            let field = self.labels.contact_points(i);
            let cp = c.get_ref();
            let count = match &cp.grid {
                Some(g) if *cp.kind.get_ref() == spec::ContactKind::SkinGrid => {
                    let g = g.get_ref();
                    let (rings, around) = (*g.rings.get_ref(), *g.around.get_ref());
                    if !(1..=1000).contains(&rings) {
                        self.error(
                            g.rings.span(),
                            &format!("{field}.grid.rings"),
                            format!("must be in 1..=1000, got {rings}"),
                        );
                        bad_grid = true;
                    }
                    if !(1..=1000).contains(&around) {
                        self.error(
                            g.around.span(),
                            &format!("{field}.grid.around"),
                            format!("must be in 1..=1000, got {around}"),
                        );
                        bad_grid = true;
                    }
                    (rings.clamp(0, 1000) + i64::from(g.tip)) * around.clamp(0, 1000)
                }
                _ => cp.positions.len() as i64,
            };
            declared_points += count;
            if largest.as_ref().is_none_or(|(n, _)| count > *n) {
                largest = Some((count, c.span()));
            }
        }
        if bad_grid {
            return None;
        }
        if declared_points > MAX_CONTACT_POINTS {
            let span = largest.map_or(0..0, |(_, span)| span);
            self.error(span, "contact_points", format!("{declared_points} contact points, more than the limit of {MAX_CONTACT_POINTS} per robot (each adds code to every contact kernel)"));
            return None;
        }
        Some(())
    }

    /// `[[contact_points]]`: points on rigid bodies and skin grids on soft sections, and their
    /// names.
    fn contact_points(
        &mut self,
        spec: &Spec,
        tree: &BodyTree,
        normal: Option<[f64; 3]>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> (Vec<ContactPoint>, BTreeSet<String>) {
        let mut contact_points = Vec::new();
        let mut contact_names = BTreeSet::new();
        for (i, c) in spec.contact_points.iter().enumerate() {
            let c = c.get_ref();
            let field = self.labels.contact_points(i);
            let Some(&body) = tree.index_of.get(c.body.get_ref()) else {
                self.error(c.body.span(), &format!("{field}.body"), format!("no body named `{}`", c.body.get_ref()));
                continue;
            };
            let soft = spec.bodies[body].get_ref().kind.get_ref() == &spec::BodyKind::ConstantCurvature;
            if *c.kind.get_ref() == spec::ContactKind::SkinGrid {
                if !soft {
                    self.error(c.kind.span(), &format!("{field}.kind"), "skin grids go on soft sections (kind = \"constant_curvature\"); list \"points\" on rigid bodies");
                    continue;
                }
                if !c.positions.is_empty() || !c.names.is_empty() {
                    self.error(
                        c.body.span(),
                        &format!("{field}.positions"),
                        "a skin grid places its points itself; remove `positions` and `names`",
                    );
                }
                let Some(grid) = &c.grid else {
                    self.error(
                        c.body.span(),
                        &format!("{field}.grid"),
                        "missing: expected grid = { radius = ..., rings = ..., around = ... }",
                    );
                    continue;
                };
                let g = grid.get_ref();
                let radius = self.parameterised(
                    &g.radius,
                    &format!("{field}.grid.radius"),
                    format!("{}_skin_radius", c.body.get_ref()),
                    format!("Skin radius of `{}` (m).", c.body.get_ref()),
                    parameters,
                    auto,
                );
                if let Some(r) = &radius {
                    self.rule(&format!("{field}.grid.radius"), Rule::Positive, vec![r.clone()]);
                }
                if let Some(Ok(v)) = radius.as_ref().map(|r| r.evaluate(parameters)) {
                    if !(v > 0.0) {
                        self.error(g.radius.span(), &format!("{field}.grid.radius"), format!("must be > 0 m, got {v}"));
                    }
                }
                // Ring and point counts were checked (1..=1000) before the count above.
                let (rings, around) = (*g.rings.get_ref(), *g.around.get_ref());
                let Some(radius) = radius else { continue };
                let ring_count = rings + i64::from(g.tip);
                for k in 0..ring_count {
                    let xi = k as f64 / rings as f64;
                    for a in 0..around {
                        let name = format!("{}_skin_{k}_{a}", c.body.get_ref());
                        if !contact_names.insert(name.clone()) {
                            self.error(
                                c.body.span(),
                                &format!("{field}"),
                                format!("duplicate contact point name `{name}` (two grids on one section?)"),
                            );
                        }
                        let zero = || Expr::Num(Number::Rational(0, 1));
                        contact_points.push(ContactPoint {
                            name,
                            body: tree.new_index.get(&body).copied().unwrap_or(0),
                            position: [zero(), zero(), zero()],
                            skin: Some(SkinPlacement {
                                xi,
                                angle: std::f64::consts::TAU * a as f64 / around as f64,
                                radius: radius.clone(),
                            }),
                        });
                    }
                }
                continue;
            }
            if let Some(g) = &c.grid {
                self.error(g.span(), &format!("{field}.grid"), "`grid` belongs to kind = \"skin_grid\"");
            }
            if soft {
                self.error(
                    c.kind.span(),
                    &format!("{field}.kind"),
                    "soft sections take contact points as a skin grid (kind = \"skin_grid\")",
                );
                continue;
            }
            if c.positions.is_empty() {
                self.error(c.body.span(), &format!("{field}.positions"), "expected at least one position [x, y, z]");
            }
            if !c.names.is_empty() && c.names.len() != c.positions.len() {
                self.error(
                    c.body.span(),
                    &format!("{field}.names"),
                    format!("expected {} names (one per position), got {}", c.positions.len(), c.names.len()),
                );
            }
            for (k, p) in c.positions.iter().enumerate() {
                let position = self.vector(Some(p), &format!("{field}.positions[{k}]"), parameters);
                if planar_violation(&position, normal) {
                    self.error(
                        p[0].span(),
                        &format!("{field}.positions[{k}]"),
                        "in a planar robot contact points must lie in the plane",
                    );
                }
                let name = match c.names.get(k) {
                    Some(n) => n.get_ref().clone(),
                    None => format!("{}_{k}", c.body.get_ref()),
                };
                if !contact_names.insert(name.clone()) {
                    self.error(
                        c.body.span(),
                        &format!("{field}.names"),
                        format!("duplicate contact point name `{name}`"),
                    );
                }
                contact_points.push(ContactPoint {
                    name,
                    body: tree.new_index.get(&body).copied().unwrap_or(0),
                    position,
                    skin: None,
                });
            }
        }
        (contact_points, contact_names)
    }

    /// `[environment]`'s contact, friction and terrain.
    fn environment_defaults(
        &mut self,
        environment: Option<&Spanned<spec::Environment>>,
        plane: Option<Plane>,
        parameters: &BTreeMap<String, f64>,
    ) -> EnvironmentDefaults {
        let mut env = EnvironmentDefaults {
            terrain: TerrainDefault::None,
            contact_stiffness: 0.0,
            contact_damping: 0.0,
            contact_dissipation: 0.0,
            friction_along: 0.0,
            friction_across: 0.0,
            anisotropy: Anisotropy::Isotropic,
            friction_regularisation: 0.0,
        };
        if let Some(e) = environment {
            let e = e.get_ref();
            env.contact_stiffness =
                self.non_negative(e.contact_stiffness.as_ref(), 0.0, "environment.contact_stiffness", parameters);
            env.contact_damping =
                self.non_negative(e.contact_damping.as_ref(), 0.0, "environment.contact_damping", parameters);
            env.contact_dissipation =
                self.non_negative(e.contact_dissipation.as_ref(), 0.0, "environment.contact_dissipation", parameters);
            if let Some(f) = &e.friction {
                let f = f.get_ref();
                env.friction_along = self.non_negative(Some(&f.along), 0.0, "environment.friction.along", parameters);
                env.friction_across =
                    self.non_negative(f.across.as_ref(), env.friction_along, "environment.friction.across", parameters);
                env.friction_regularisation = self.non_negative(
                    f.regularisation.as_ref(),
                    0.0,
                    "environment.friction.regularisation",
                    parameters,
                );
                env.anisotropy = f.anisotropy.as_ref().map_or(Anisotropy::Isotropic, |a| *a.get_ref());
            }
            if let Some(t) = &e.terrain {
                let span = t.span();
                let t = t.get_ref();
                let need = |v: &mut Validator, value: &Option<Spanned<Value>>, what: &str| -> f64 {
                    match value {
                        Some(x) => v.number(x, &format!("environment.terrain.{what}"), parameters).unwrap_or(0.0),
                        None => {
                            v.error(
                                span.clone(),
                                &format!("environment.terrain.{what}"),
                                format!("missing: a {:?} terrain needs `{what}`", t.kind.get_ref()).to_lowercase(),
                            );
                            0.0
                        }
                    }
                };
                if matches!(t.kind.get_ref(), spec::TerrainKind::Flat | spec::TerrainKind::Stair)
                    && plane == Some(Plane::Xy)
                {
                    self.error(span.clone(), "environment.terrain.kind", "flat ground and the stair push along z, which a robot in the horizontal plane (`plane = \"xy\"`) cannot move along: use `kind = \"floor\"`");
                }
                env.terrain = match t.kind.get_ref() {
                    spec::TerrainKind::None => TerrainDefault::None,
                    spec::TerrainKind::Flat => TerrainDefault::Flat {
                        height: t
                            .height
                            .as_ref()
                            .and_then(|h| self.number(h, "environment.terrain.height", parameters))
                            .unwrap_or(0.0),
                    },
                    spec::TerrainKind::Stair => {
                        let position = need(self, &t.position, "position");
                        let height = need(self, &t.height, "height");
                        if height < 0.0 {
                            self.error(
                                span.clone(),
                                "environment.terrain.height",
                                format!("must be >= 0, got {height}"),
                            );
                        }
                        TerrainDefault::Stair { position, height }
                    }
                    spec::TerrainKind::Floor => {
                        if plane != Some(Plane::Xy) {
                            self.error(
                                span.clone(),
                                "environment.terrain.kind",
                                "the floor carries robots that move in the horizontal plane: it needs `plane = \"xy\"`",
                            );
                        }
                        TerrainDefault::Floor
                    }
                    spec::TerrainKind::Pipe => {
                        let diameter = need(self, &t.diameter, "diameter");
                        if diameter <= 0.0 {
                            self.error(
                                span.clone(),
                                "environment.terrain.diameter",
                                format!("must be > 0, got {diameter}"),
                            );
                        }
                        TerrainDefault::Pipe { diameter }
                    }
                };
            }
        }
        env
    }

    /// The water: its density and the hulls' coefficients, each a parameter; a hull needs
    /// water and water a hull.
    fn water(
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

    /// `[[actuators]]`: joint torques, valve pairs, muscle banks and thrusters, at most one
    /// driving each coordinate (which it marks actuated).
    #[allow(clippy::too_many_arguments)]
    fn actuators(
        &mut self,
        spec: &Spec,
        tree: &BodyTree,
        bodies: &[Body],
        coordinates: &mut [Coordinate],
        contact_names: &BTreeSet<String>,
        normal: Option<[f64; 3]>,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Actuators {
        let mut actuated = Vec::new();
        let mut valves = Vec::new();
        let mut muscles = Vec::new();
        let mut thrusters: Vec<Thruster> = Vec::new();
        let mut torque_limit = f64::INFINITY;
        for (i, a) in spec.actuators.iter().enumerate() {
            let a = a.get_ref();
            let field = self.labels.actuator(i);
            let kind = *a.kind.get_ref();
            self.foreign_actuator_fields(a, &field, kind);
            let Some(&bi) = tree.index_of.get(a.joint.get_ref()) else {
                self.error(a.joint.span(), &format!("{field}.joint"), format!("no body named `{}`", a.joint.get_ref()));
                continue;
            };
            // A body that failed validation is missing from `bodies` (its error is said), and
            // the indices past it no longer match: check actuators on a complete tree only.
            if bodies.len() != tree.order.len() {
                continue;
            }
            let Some(body) = tree.new_index.get(&bi).and_then(|&n| bodies.get(n)) else {
                continue;
            };
            if kind == spec::ActuatorKind::Thruster {
                let default_name = format!("thruster{}", thrusters.len() + 1);
                if let Some(thruster) =
                    self.thruster(a, &field, body, tree.new_index[&bi], default_name, normal, parameters)
                {
                    if thrusters.iter().any(|t: &Thruster| t.name == thruster.name)
                        || contact_names.contains(&thruster.name)
                    {
                        self.error(
                            a.name.as_ref().map_or(a.kind.span(), |n| n.span()),
                            &format!("{field}.name"),
                            format!("the name `{}` is taken", thruster.name),
                        );
                    } else {
                        thrusters.push(thruster);
                    }
                }
                continue;
            }
            if kind == spec::ActuatorKind::PneumaticMuscle {
                if let Some(bank) = self.muscle_bank(a, &field, body, parameters, auto) {
                    if muscles.iter().any(|m: &MuscleBank| m.body == bank.body) {
                        self.error(
                            a.joint.span(),
                            &format!("{field}.joint"),
                            format!("soft section `{}` already has its muscles", a.joint.get_ref()),
                        );
                    } else {
                        muscles.push(bank);
                    }
                }
                continue;
            }
            let coordinate = match (&body.joint, &body.section) {
                (Some(j), _) => j.coordinate,
                (None, Some(s)) if kind == spec::ActuatorKind::SolenoidValve && s.coordinates == 1 => {
                    Some(s.first_coordinate)
                }
                (None, Some(s)) if kind == spec::ActuatorKind::SolenoidValve => {
                    self.error(
                        a.joint.span(),
                        &format!("{field}.joint"),
                        format!(
                            "a valve pair drives one coordinate, and soft section `{}` has {}; use a planar section",
                            a.joint.get_ref(),
                            s.coordinates
                        ),
                    );
                    continue;
                }
                (None, _) => None,
            };
            let Some(coordinate) = coordinate else {
                self.error(
                    a.joint.span(),
                    &format!("{field}.joint"),
                    format!("body `{}` has no moving joint to drive", a.joint.get_ref()),
                );
                continue;
            };
            if actuated.contains(&coordinate) || valves.iter().any(|v: &Valve| v.coordinate == coordinate) {
                self.error(
                    a.joint.span(),
                    &format!("{field}.joint"),
                    format!("joint of `{}` already has an actuator", a.joint.get_ref()),
                );
                continue;
            }
            coordinates[coordinate].actuated = true;
            if kind == spec::ActuatorKind::SolenoidValve {
                let valve = self.valve(a, &field, coordinate, parameters, auto);
                valves.extend(valve);
                continue;
            }
            if let Some(r) = &a.response {
                self.error(
                    r.span(),
                    &format!("{field}.response"),
                    "only solenoid valves have a response; a joint torque acts directly",
                );
            }
            actuated.push(coordinate);
            if let Some(l) = &a.torque_limit {
                match self.number(l, &format!("{field}.torque_limit"), parameters) {
                    Some(v) if v > 0.0 => torque_limit = torque_limit.min(v),
                    Some(v) => self.error(l.span(), &format!("{field}.torque_limit"), format!("must be > 0, got {v}")),
                    None => {}
                }
            }
        }
        Actuators { actuated, valves, muscles, thrusters, torque_limit }
    }

    /// Reports the fields an actuator of another kind has: a thruster's on anything else, a
    /// muscle's on anything else.
    fn foreign_actuator_fields(&mut self, a: &spec::Actuator, field: &str, kind: spec::ActuatorKind) {
        if kind != spec::ActuatorKind::Thruster {
            for (given, key) in [
                (a.position.as_ref().map(|v| v[0].span()), "position"),
                (a.direction.as_ref().map(|v| v.span()), "direction"),
                (a.name.as_ref().map(|v| v.span()), "name"),
            ] {
                if let Some(span) = given {
                    self.error(span, &format!("{field}.{key}"), "only thrusters have this field");
                }
            }
        }
        if kind != spec::ActuatorKind::PneumaticMuscle {
            for (given, key) in [
                (a.radius.as_ref().map(|v| v.span()), "radius"),
                (a.angles.as_ref().map(|v| v.span()), "angles"),
                (a.area.as_ref().map(|v| v.span()), "area"),
                (a.rated_pressure.as_ref().map(|v| v.span()), "rated_pressure"),
                (a.pressure_lag.as_ref().map(|v| v.span()), "pressure_lag"),
            ] {
                if let Some(span) = given {
                    self.error(span, &format!("{field}.{key}"), "only pneumatic muscles have this field");
                }
            }
        }
    }

    /// A solenoid valve pair on `coordinate`: its response's time constants and gain, each
    /// a parameter; no torque limit.
    fn valve(
        &mut self,
        a: &spec::Actuator,
        field: &str,
        coordinate: usize,
        parameters: &mut BTreeMap<String, f64>,
        auto: &mut Vec<Parameter>,
    ) -> Option<Valve> {
        if let Some(l) = &a.torque_limit {
            self.error(
                l.span(),
                &format!("{field}.torque_limit"),
                "a valve pair sets its coordinate through `response`; it has no torque limit",
            );
        }
        let Some(response) = &a.response else {
            self.error(a.kind.span(), &format!("{field}.response"), "a solenoid valve needs `response = { time_constants = [tau1, tau2], gain = C0 }` (one time constant for a first-order response)");
            return None;
        };
        let r = response.get_ref();
        let bname = a.joint.get_ref().clone();
        let count = r.time_constants.get_ref().len();
        if !(1..=2).contains(&count) {
            self.error(
                r.time_constants.span(),
                &format!("{field}.response.time_constants"),
                format!("one (first order) or two (second order) time constants, got {count}"),
            );
            return None;
        }
        let mut time_constants = Vec::new();
        for (k, tc) in r.time_constants.get_ref().iter().enumerate() {
            let f = format!("{field}.response.time_constants[{k}]");
            let e = self.parameterised(
                tc,
                &f,
                format!("{bname}_time_constant_{}", k + 1),
                format!("Time constant {} of the valve response of `{bname}` (s).", k + 1),
                parameters,
                auto,
            );
            if let Some(e) = e {
                self.rule(&f, Rule::Positive, vec![e.clone()]);
                match e.evaluate(parameters) {
                    Ok(v) if v > 0.0 => {}
                    Ok(v) => self.error(tc.span(), &f, format!("must be > 0 s, got {v}")),
                    Err(err) => self.error(tc.span(), &f, err),
                }
                time_constants.push(e);
            }
        }
        let gain = self.parameterised(
            &r.gain,
            &format!("{field}.response.gain"),
            format!("{bname}_valve_gain"),
            format!("Steady state of `{bname}`'s coordinate per unit valve state."),
            parameters,
            auto,
        );
        let gain = gain?;
        (time_constants.len() == count).then_some(Valve { coordinate, time_constants, gain })
    }

    /// `[controller]`'s gains and `[gait]`: a serpenoid over the actuated joints or a
    /// travelling wave over the valves.
    fn gaits(
        &mut self,
        spec: &Spec,
        actuators: &Actuators,
        parameters: &BTreeMap<String, f64>,
    ) -> (Option<GaitDefaults>, Option<ValveGaitDefaults>) {
        // The servo gains are checked whether or not a gait uses them.
        let controller_gains = spec.controller.as_ref().map(|c| {
            let c = c.get_ref();
            (
                self.non_negative(Some(&c.stiffness), 0.0, "controller.stiffness", parameters),
                self.non_negative(Some(&c.damping), 0.0, "controller.damping", parameters),
            )
        });
        let mut gait = None;
        let mut valve_gait = None;
        if let Some(g) = &spec.gait {
            let gs = g.get_ref();
            let num = |v: &mut Validator, x: &Spanned<Value>, f: &str| v.number(x, f, parameters).unwrap_or(0.0);
            match *gs.kind.get_ref() {
                spec::GaitKind::Serpenoid if actuators.actuated.is_empty() => {
                    self.error(
                        g.span(),
                        "gait",
                        "a gait needs actuated joints ([[actuators]] of kind \"joint_torque\")",
                    );
                }
                spec::GaitKind::Serpenoid => {
                    let (stiffness, damping) = match controller_gains {
                        Some(gains) => gains,
                        None => {
                            self.error(
                                g.span(),
                                "controller",
                                "a gait is tracked by a [controller] (kind = \"joint_pd\"), which is missing",
                            );
                            (0.0, 0.0)
                        }
                    };
                    let amplitude = match &gs.amplitude {
                        Some(a) => num(self, a, "gait.amplitude"),
                        None => {
                            self.error(gs.kind.span(), "gait.amplitude", "a serpenoid gait needs `amplitude` (rad)");
                            0.0
                        }
                    };
                    gait = Some(GaitDefaults {
                        amplitude,
                        temporal_frequency: num(self, &gs.temporal_frequency, "gait.temporal_frequency"),
                        spatial_frequency: num(self, &gs.spatial_frequency, "gait.spatial_frequency"),
                        offset: gs.offset.as_ref().map_or(0.0, |o| num(self, o, "gait.offset")),
                        stiffness,
                        damping,
                        torque_limit: actuators.torque_limit,
                    });
                }
                spec::GaitKind::TravellingWaveValves if actuators.valves.is_empty() => {
                    self.error(
                        g.span(),
                        "gait",
                        "a travelling valve wave needs valves ([[actuators]] of kind \"solenoid_valve\")",
                    );
                }
                spec::GaitKind::TravellingWaveValves => {
                    if let Some(a) = &gs.amplitude {
                        self.error(
                            a.span(),
                            "gait.amplitude",
                            "a valve wave has no amplitude: the valves' `response.gain` sets it",
                        );
                    }
                    let temporal_frequency = num(self, &gs.temporal_frequency, "gait.temporal_frequency");
                    if temporal_frequency == 0.0 {
                        self.error(gs.temporal_frequency.span(), "gait.temporal_frequency", "must be non-zero (rad/s)");
                    }
                    valve_gait = Some(ValveGaitDefaults {
                        temporal_frequency,
                        delay: num(self, &gs.spatial_frequency, "gait.spatial_frequency"),
                        offset: gs.offset.as_ref().map_or(0.0, |o| num(self, o, "gait.offset")),
                    });
                }
                spec::GaitKind::Rolling => {
                    self.error(
                        gs.kind.span(),
                        "gait.kind",
                        "rolling gaits are not supported yet; use \"serpenoid\" or \"travelling_wave_valves\"",
                    );
                }
            }
        }
        (gait, valve_gait)
    }

    /// `[controller_coordinates]`: a planar chain's, on a planar base whose other
    /// coordinates are all actuated joints, with two heading points of one body.
    fn controller_coordinates(
        &mut self,
        spec: &Spanned<spec::ControllerCoordinates>,
        base: BaseKind,
        coordinates: usize,
        actuated: usize,
        contact_points: &[ContactPoint],
    ) -> Option<PlanarChainCoordinates> {
        let c = spec.get_ref();
        let sign = *c.joint_sign.get_ref();
        if sign != 1.0 && sign != -1.0 {
            self.error(
                c.joint_sign.span(),
                "controller_coordinates.joint_sign",
                format!("must be 1 or -1, got {sign}"),
            );
            return None;
        }
        if base != BaseKind::Planar || coordinates != actuated + 3 {
            self.error(
                spec.span(),
                "controller_coordinates",
                format!(
                    "a planar chain's coordinates replace a planar base's three; this robot has a {} base, {coordinates} coordinates and {actuated} actuated joints",
                    format!("{base:?}").to_lowercase()
                ),
            );
            return None;
        }
        let names = c.heading.get_ref();
        if names.len() != 2 {
            self.error(
                c.heading.span(),
                "controller_coordinates.heading",
                format!("needs two contact point names, got {}", names.len()),
            );
            return None;
        }
        let mut indices = [0usize; 2];
        for (k, name) in names.iter().enumerate() {
            match contact_points.iter().position(|p| p.name == *name.get_ref()) {
                Some(i) => indices[k] = i,
                None => {
                    self.error(
                        name.span(),
                        "controller_coordinates.heading",
                        format!("no contact point is named `{}`", name.get_ref()),
                    );
                    return None;
                }
            }
        }
        let (from, to) = (&contact_points[indices[0]], &contact_points[indices[1]]);
        if indices[0] == indices[1] || from.body != to.body || from.skin.is_some() || to.skin.is_some() {
            self.error(
                c.heading.span(),
                "controller_coordinates.heading",
                "needs two different points of one rigid body (their direction is the body's angle)",
            );
            return None;
        }
        Some(PlanarChainCoordinates { joint_sign: sign, heading: (indices[0], indices[1]) })
    }
}
