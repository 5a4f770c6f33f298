//! Actuators (joint torques, valve pairs, muscle banks, thrusters), the gaits that drive
//! them and the controller's coordinates.

// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// `[[actuators]]`: joint torques, valve pairs, muscle banks and thrusters, at most one
    /// driving each coordinate (which it marks actuated).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn actuators(
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
    pub(super) fn foreign_actuator_fields(&mut self, a: &spec::Actuator, field: &str, kind: spec::ActuatorKind) {
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
    pub(super) fn valve(
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
    pub(super) fn gaits(
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
    pub(super) fn controller_coordinates(
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
