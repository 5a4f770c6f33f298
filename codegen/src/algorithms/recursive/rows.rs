//! The equations' rows per coordinate from the composites: M (composite rigid body), C qd
//! (Newton-Euler at zero acceleration), the Christoffel C and G, and a section's elastic and
//! damping rows.

// The passes' types and imports, shared by their files.
use super::*;

/// M by the composite rigid body algorithm, C qd by Newton-Euler, G from composite inertias
/// and the Christoffel C in composite form, per joint; a section's rows from its slices and
/// what hangs from its tip (`section_pass.rs`), with its elasticity and damping.
pub(super) fn coordinate_rows(
    dag: &mut Dag,
    tree: &Tree,
    composites: &[Option<Composite>],
    beyond: &[Option<Composite>],
) -> Result<CoordinateRows, String> {
    let (n, zero) = (tree.coordinates(), tree.zero);
    let (links, states) = (tree.links, tree.states);
    let mut mass_matrix = vec![vec![zero; n]; n];
    let mut coriolis_factors: Vec<Option<(Force, Force)>> = vec![None; n];
    let mut coriolis = vec![zero; n];
    let mut coriolis_matrix = vec![vec![zero; n]; n];
    let mut gravity_force = vec![zero; n];
    let up = tree.up();
    let mut elastic_energy = Vec::new();
    let mut damping = vec![zero; n];
    let mut stiffness = vec![zero; n];
    let mut damping_slope = vec![zero; n];
    for (index, state) in states.iter().enumerate() {
        if let Some(section) = &state.section {
            let own = &section.frame.coordinates;
            let mut above = Vec::new();
            for &j in state.path.iter().filter(|j| !own.contains(j)) {
                let (s_j, sd_j) = tree.subspace(j)?;
                above.push((j, s_j, sd_j));
            }
            let rows = Rows {
                mass_matrix: &mut mass_matrix,
                coriolis: &mut coriolis,
                coriolis_matrix: &mut coriolis_matrix,
                gravity: &mut gravity_force,
            };
            section_rows(dag, section, beyond[index].as_ref(), &above, &up, rows);
            for (a, &k) in own.iter().enumerate() {
                let rate = dag.input(Input::Qd(k));
                damping[k] = dag.mul2(section.damping, rate);
                damping_slope[k] = section.damping;
                if let Some(viscosity) = &section.viscosity {
                    let (force, slope) = viscosity.force(dag, rate);
                    damping[k] = dag.add2(damping[k], force);
                    damping_slope[k] = dag.add2(damping_slope[k], slope);
                }
                stiffness[k] = section.elastic[a].stiffness;
                elastic_energy.push(section.elastic[a].energy);
            }
            continue;
        }
        let Some((i, s_i, sd_i)) = state.joint else { continue };
        let Some(composite) = composites[index] else { continue };
        let inertia = composite.inertia;
        let name = &links[index].name;
        let projected = dag.inertia_times(&inertia, &s_i);
        let projected = dag.pin_force(projected, &format!("{name}_projected_inertia"));
        for &j in &state.path {
            let (s_j, _) = tree.subspace(j)?;
            let entry = dag.force_dot_motion(&projected, &s_j);
            mass_matrix[i][j] = entry;
            mass_matrix[j][i] = entry;
        }
        coriolis[i] = dag.force_dot_motion(&composite.force, &s_i);
        let weight = dag.inertia_times(&inertia, &up);
        gravity_force[i] = dag.force_dot_motion(&weight, &s_i);

        // Christoffel C: B^c S = 1/2 (dI^c/dt S + S x* h^c), B^c' S = 1/2 (dI^c/dt S - S x* h^c).
        let half = dag.number(0.5);
        let turned = dag.inertia_rate_times(&composite.rate, &s_i);
        let carried = dag.force_cross(&s_i, &composite.momentum);
        let sum = dag.add_force(&turned, &carried);
        let difference = dag.sub_force(&turned, &carried);
        let b_s = dag.scale_force(&sum, half);
        let bt_s = dag.scale_force(&difference, half);
        let bt_s = dag.pin_force(bt_s, &format!("{name}_coriolis_row"));
        let inertia_sd = dag.inertia_times(&inertia, &sd_i);
        let column = dag.add_force(&inertia_sd, &b_s);
        let column = dag.pin_force(column, &format!("{name}_coriolis_column"));
        for &j in &state.path {
            let (s_j, sd_j) = tree.subspace(j)?;
            let from_rate = dag.force_dot_motion(&projected, &sd_j);
            let from_b = dag.force_dot_motion(&bt_s, &s_j);
            coriolis_matrix[i][j] = dag.add2(from_rate, from_b);
            if j != i {
                coriolis_matrix[j][i] = dag.force_dot_motion(&column, &s_j);
            }
        }
        coriolis_factors[i] = Some((bt_s, column));
    }

    Ok(CoordinateRows {
        mass_matrix,
        coriolis,
        coriolis_matrix,
        coriolis_factors,
        gravity: gravity_force,
        elastic_energy,
        damping,
        damping_slope,
        stiffness,
    })
}
