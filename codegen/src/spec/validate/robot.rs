//! The whole spec in order: `robot` runs the steps in the order their errors are reported
//! (the module's name, parameters, gravity, base, the body tree, coordinates, then the
//! steps in the other files: bodies, contact points, markers, environment, water,
//! actuators, gaits and the controller's coordinates).

// The validator's types, helpers and imports, shared by its files.
use super::*;

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
    pub(super) fn module_name(&mut self, spec: &Spec) -> Option<String> {
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
    pub(super) fn declared_parameters(&mut self, spec: &Spec) -> (BTreeMap<String, f64>, Vec<Parameter>) {
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
    pub(super) fn gravity(&mut self, environment: Option<&Spanned<spec::Environment>>) -> f64 {
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
    pub(super) fn base_plane(
        &mut self,
        spec_base: &Spanned<spec::Base>,
    ) -> (BaseKind, Option<Plane>, Option<[f64; 3]>) {
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
    pub(super) fn body_tree(&mut self, spec: &Spec, base: &spec::Base) -> Option<BodyTree> {
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
    pub(super) fn base_coordinates(
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
}
