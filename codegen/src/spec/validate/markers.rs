//! `[[markers]]`: named points a sensor tracks (motion-capture markers) that never touch
//! anything. A marker sits on a rigid body at a position in its frame, or on a soft section
//! at a fraction xi of its length and an angle and radius about its centre line, as a skin
//! contact point does; its name is unique among the markers and the contact points, since a
//! sensor names either.

// The validator's types, helpers and imports, shared by its files.
use super::*;

/// Most markers a robot declares: each adds a position and a Jacobian kernel.
pub const MAX_MARKERS: usize = 100;

impl Validator {
    pub(super) fn markers(
        &mut self,
        spec: &Spec,
        index_of: &BTreeMap<String, usize>,
        new_index: &BTreeMap<usize, usize>,
        contact_names: &BTreeSet<String>,
        normal: Option<[f64; 3]>,
        parameters: &BTreeMap<String, f64>,
    ) -> Vec<ContactPoint> {
        if spec.markers.len() > MAX_MARKERS {
            self.error(
                spec.markers[MAX_MARKERS].span(),
                "markers",
                format!("{} markers, more than the limit of {MAX_MARKERS} per robot", spec.markers.len()),
            );
            return Vec::new();
        }
        let zero = || Expr::Num(Number::Rational(0, 1));
        let mut names = BTreeSet::new();
        let mut markers = Vec::new();
        for (i, m) in spec.markers.iter().enumerate() {
            let m = m.get_ref();
            let name = m.name.get_ref();
            let field = format!("markers[{i}] ({name})");
            if !is_identifier(name) {
                self.error(
                    m.name.span(),
                    &format!("{field}.name"),
                    "must be an identifier (letters, digits, underscores; not starting with a digit)",
                );
                continue;
            }
            if contact_names.contains(name) {
                self.error(
                    m.name.span(),
                    &format!("{field}.name"),
                    format!(
                        "`{name}` is already a contact point's name; a sensor names either, so the names must differ"
                    ),
                );
                continue;
            }
            if !names.insert(name.clone()) {
                self.error(m.name.span(), &format!("{field}.name"), format!("duplicate marker name `{name}`"));
                continue;
            }
            let Some(&body) = index_of.get(m.body.get_ref()) else {
                self.error(m.body.span(), &format!("{field}.body"), format!("no body named `{}`", m.body.get_ref()));
                continue;
            };
            let soft = spec.bodies[body].get_ref().kind.get_ref() == &spec::BodyKind::ConstantCurvature;
            let model_body = new_index.get(&body).copied().unwrap_or(0);
            if !soft {
                for (key, given) in
                    [("xi", m.xi.is_some()), ("angle", m.angle.is_some()), ("radius", m.radius.is_some())]
                {
                    if given {
                        self.error(
                            m.body.span(),
                            &format!("{field}.{key}"),
                            format!("`{key}` places a marker on a soft section; on the rigid body `{}` give `position` in its frame", m.body.get_ref()),
                        );
                    }
                }
                let Some(position) = &m.position else {
                    self.error(
                        m.body.span(),
                        &format!("{field}.position"),
                        "missing: expected position = [x, y, z] in the body's frame (m)",
                    );
                    continue;
                };
                let position = self.vector(Some(position), &format!("{field}.position"), parameters);
                if planar_violation(&position, normal) {
                    self.error(
                        m.body.span(),
                        &format!("{field}.position"),
                        "in a planar robot markers must lie in the plane",
                    );
                    continue;
                }
                markers.push(ContactPoint { name: name.clone(), body: model_body, position, skin: None });
                continue;
            }
            if m.position.is_some() {
                self.error(
                    m.body.span(),
                    &format!("{field}.position"),
                    format!("`{}` is a soft section: place the marker by `xi` (0 at its base to 1 at its tip), `angle` and `radius`", m.body.get_ref()),
                );
                continue;
            }
            let Some(xi) = &m.xi else {
                self.error(
                    m.body.span(),
                    &format!("{field}.xi"),
                    "missing: expected xi, where along the section (0 at its base to 1 at its tip)",
                );
                continue;
            };
            let xi_value = *xi.get_ref();
            if !(0.0..=1.0).contains(&xi_value) {
                self.error(xi.span(), &format!("{field}.xi"), format!("must be in [0, 1], got {xi_value}"));
                continue;
            }
            let angle = m.angle.as_ref().map_or(0.0, |a| *a.get_ref());
            if !angle.is_finite() || angle.abs() > 2.0 * std::f64::consts::TAU {
                let span = m.angle.as_ref().map_or(m.body.span(), |a| a.span());
                self.error(span, &format!("{field}.angle"), format!("must be an angle within +-4 pi rad, got {angle}"));
                continue;
            }
            let radius = match &m.radius {
                None => zero(),
                Some(r) => {
                    let Some(radius) = self.value(r, &format!("{field}.radius"), parameters) else { continue };
                    match radius.evaluate(parameters) {
                        Ok(v) if v >= 0.0 => {}
                        Ok(v) => {
                            self.error(r.span(), &format!("{field}.radius"), format!("must be >= 0 m, got {v}"));
                            continue;
                        }
                        Err(e) => {
                            self.error(r.span(), &format!("{field}.radius"), e);
                            continue;
                        }
                    }
                    self.rule(&format!("{field}.radius"), Rule::NonNegative, vec![radius.clone()]);
                    radius
                }
            };
            markers.push(ContactPoint {
                name: name.clone(),
                body: model_body,
                position: [zero(), zero(), zero()],
                skin: Some(SkinPlacement { xi: xi_value, angle, radius }),
            });
        }
        markers
    }
}
