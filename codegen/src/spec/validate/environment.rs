//! `[environment]`: contact, friction and terrain.

// The validator's types, helpers and imports, shared by its files.
use super::*;

impl Validator {
    /// `[environment]`'s contact, friction and terrain.
    pub(super) fn environment_defaults(
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
}
