//! Contact points: counted first, then laid out as points on rigid bodies and skin grids on
//! soft sections, each named.

// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// Counts the contact points before any grid is laid out: a grid's ring and point counts
    /// are checked here first, so that an absurd one is named, not only the sum.
    pub(super) fn count_contact_points(&mut self, spec: &Spec) -> Option<()> {
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
    pub(super) fn contact_points(
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
}
