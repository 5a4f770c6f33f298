//! The rules a robot's parameters keep (positive masses, rigid-body inertias, non-negative
//! gravity, ...) and the physical range of each kind of value, checked by the generated `Params::check` whenever values are changed at
//! run time, with the same wording the spec validator uses for the spec's own values.

use crate::quantities::physical_ranges::{range_of_field, readable};
use std::fmt::Write;

/// What a value (or group of values) of the spec must satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    /// One value, > 0.
    Positive,
    /// One value, >= 0.
    NonNegative,
    /// [ixx, iyy, izz, ixy, ixz, iyz] about a centre of mass: a rigid body's inertia.
    RigidInertia,
    /// Three principal moments: a rigid body's.
    PrincipalMoments,
    /// Values of any sign within their field's physical range (an origin, a centre of mass,
    /// a length computed from parameters).
    InRange,
}

/// Whether [ixx, iyy, izz, ixy, ixz, iyz] about the centre of mass can belong to a rigid
/// body: J = tr(I)/2 1 - I (the body's second moment of mass, sum m r r') must be positive
/// semidefinite. That holds exactly when I is positive semidefinite and every principal
/// moment is at most the sum of the other two.
pub fn physical_inertia(i: [f64; 6]) -> Result<(), String> {
    let [xx, yy, zz, xy, xz, yz] = i;
    if !i.iter().all(|v| v.is_finite()) {
        return Err(format!("[{xx}, {yy}, {zz}, {xy}, {xz}, {yz}] must be finite"));
    }
    let half_trace = (xx + yy + zz) / 2.0;
    let j = [[half_trace - xx, -xy, -xz], [-xy, half_trace - yy, -yz], [-xz, -yz, half_trace - zz]];
    // Positive semidefinite: every principal minor >= 0 (to rounding).
    let scale = xx.abs().max(yy.abs()).max(zz.abs()).max(f64::MIN_POSITIVE);
    let tolerance = 1e-12 * scale;
    let minor2 = |a: usize, b: usize| j[a][a] * j[b][b] - j[a][b] * j[a][b];
    let determinant = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[1][2])
        - j[0][1] * (j[0][1] * j[2][2] - j[1][2] * j[0][2])
        + j[0][2] * (j[0][1] * j[1][2] - j[1][1] * j[0][2]);
    let ok = (0..3).all(|a| j[a][a] >= -tolerance)
        && minor2(0, 1) >= -tolerance * scale
        && minor2(0, 2) >= -tolerance * scale
        && minor2(1, 2) >= -tolerance * scale
        && determinant >= -tolerance * scale * scale;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "[{xx}, {yy}, {zz}, {xy}, {xz}, {yz}] is not the inertia of a rigid body: it must be positive semidefinite, \
             with each principal moment at most the sum of the other two"
        ))
    }
}

/// Checks one rule on `values` (evaluated from the current parameters) of the spec's
/// `field`; the error names the field and the parameters it was computed from.
pub fn check_rule(field: &str, kind: RuleKind, values: &[f64], parameters: &[(&str, f64)]) -> Result<(), String> {
    let first = values.first().copied().unwrap_or(f64::NAN);
    let problem = match kind {
        RuleKind::Positive if !(first > 0.0 && first.is_finite()) => Some(format!("must be > 0, got {first}")),
        RuleKind::NonNegative if !(first >= 0.0 && first.is_finite()) => Some(format!("must be >= 0, got {first}")),
        RuleKind::RigidInertia => match values {
            [a, b, c, d, e, f] => physical_inertia([*a, *b, *c, *d, *e, *f]).err(),
            _ => Some(format!("expected 6 values, got {}", values.len())),
        },
        RuleKind::PrincipalMoments => match values {
            [a, b, c] => physical_inertia([*a, *b, *c, 0.0, 0.0, 0.0]).err(),
            _ => Some(format!("expected 3 values, got {}", values.len())),
        },
        _ => None,
    };
    // Past its sign, a value must be one a robot could have (a mass of 1e308 kg is a slip).
    let problem = problem.or_else(|| {
        let range = range_of_field(field)?;
        // A negative value of a field whose range starts at 0 is left to its sign rule (a
        // range-only rule has none: the spec's own wording, such as an axis length, decides).
        let unsigned = kind == RuleKind::InRange && range.low == 0.0;
        values.iter().find_map(|v| if unsigned && *v < 0.0 { None } else { range.problem(*v) })
    });
    let Some(problem) = problem else { return Ok(()) };
    let mut message = format!("`{field}` {problem}");
    if !parameters.is_empty() {
        message.push_str(" (from ");
        for (k, (name, value)) in parameters.iter().enumerate() {
            let _ = write!(message, "{}{name} = {}", if k > 0 { ", " } else { "" }, readable(*value));
        }
        message.push(')');
    }
    Err(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (kind, values, expected error fragment or None when accepted), on a mass field.
    const CASES: &[(RuleKind, &[f64], Option<&str>)] = &[
        (RuleKind::Positive, &[0.1], None),
        (RuleKind::Positive, &[0.0], Some("must be > 0, got 0")),
        (RuleKind::Positive, &[-1.0], Some("must be > 0, got -1")),
        (RuleKind::Positive, &[f64::INFINITY], Some("must be > 0")),
        (RuleKind::Positive, &[f64::NAN], Some("must be > 0")),
        (RuleKind::NonNegative, &[0.0], None),
        (RuleKind::NonNegative, &[-9.81], Some("must be >= 0, got -9.81")),
        (RuleKind::RigidInertia, &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], None),
        (RuleKind::RigidInertia, &[1.0, 1.0, 3.0, 0.0, 0.0, 0.0], Some("not the inertia of a rigid body")),
        (RuleKind::RigidInertia, &[1.0, 1.0, 1.0, 2.0, 0.0, 0.0], Some("not the inertia of a rigid body")),
        (RuleKind::RigidInertia, &[1.0, 1.0, f64::NAN, 0.0, 0.0, 0.0], Some("must be finite")),
        (RuleKind::PrincipalMoments, &[2.0, 1.0, 1.0], None),
        (RuleKind::PrincipalMoments, &[-1.0, 1.0, 1.0], Some("not the inertia of a rigid body")),
        (RuleKind::Positive, &[1e308], Some("= 1e308 kg is outside the physical range of a mass")),
        (RuleKind::RigidInertia, &[1e300, 1e300, 1e300, 0.0, 0.0, 0.0], Some("is outside the physical range")),
        // A range-only rule: any value in range passes, a negative one of a range starting
        // at 0 is left to the sign rules.
        (RuleKind::InRange, &[5.0], None),
        (RuleKind::InRange, &[-5.0], None),
        (RuleKind::InRange, &[2e5], Some("= 2e5 kg is outside the physical range of a mass")),
        (RuleKind::InRange, &[f64::NAN], Some("outside the physical range")),
    ];

    #[test]
    fn range_only_rules_check_values_of_either_sign_against_their_fields_range() {
        let origin = "bodies[1] (link2).origin[0] (x)";
        assert_eq!(check_rule(origin, RuleKind::InRange, &[-0.1], &[("link_length", -0.1)]), Ok(()));
        let message = check_rule(origin, RuleKind::InRange, &[1e300], &[("link_length", 1e300)]).unwrap_err();
        assert!(
            message.starts_with("`bodies[1] (link2).origin[0] (x)` = 1e300 m is outside the physical range of a position, -1000 to 1000 m")
                && message.ends_with("(from link_length = 1e300)"),
            "{message}"
        );
        assert!(check_rule(origin, RuleKind::InRange, &[-2e3], &[]).is_err());
        // A field without a range passes.
        assert_eq!(check_rule("bodies[0].name", RuleKind::InRange, &[1e300], &[]), Ok(()));
    }

    #[test]
    fn rules_accept_and_reject_as_stated() {
        for (kind, values, expected) in CASES {
            let result = check_rule("bodies[0].mass", *kind, values, &[("link_mass", values[0])]);
            match (expected, result) {
                (None, Ok(())) => {}
                (Some(fragment), Err(message)) => {
                    assert!(message.contains(fragment), "{kind:?} {values:?}: `{message}` lacks `{fragment}`");
                    assert!(message.starts_with("`bodies[0].mass`") && message.contains("link_mass ="), "{message}");
                }
                (expected, result) => panic!("{kind:?} {values:?}: expected {expected:?}, got {result:?}"),
            }
        }
    }
}
