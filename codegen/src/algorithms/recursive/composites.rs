//! The backward pass, child to parent: composite inertias, their rates and composite
//! momenta; and the whole-robot quantities from the root's composites.

// The passes' types and imports, shared by their files.
use super::*;

/// Child to parent: the composite of every subtree that has a body (None for links with no
/// body below them), and for soft sections the composite of what hangs from the tip.
pub(super) fn composites(
    dag: &mut Dag,
    links: &[Link],
    states: &[LinkState],
) -> (Vec<Option<Composite>>, Vec<Option<Composite>>) {
    let mut composites: Vec<Option<Composite>> = vec![None; links.len()];
    let mut beyond: Vec<Option<Composite>> = vec![None; links.len()];
    let sum = |dag: &mut Dag, a: Option<Composite>, b: &Composite| match a {
        None => *b,
        Some(other) => Composite {
            inertia: dag.add_inertia(&other.inertia, &b.inertia),
            force: dag.add_force(&other.force, &b.force),
            momentum: dag.add_force(&other.momentum, &b.momentum),
            rate: dag.add_inertia_rate(&other.rate, &b.rate),
        },
    };
    let mut own: Vec<Option<Composite>> = Vec::with_capacity(states.len());
    for s in states {
        let mut slices: Option<Composite> = None;
        if let Some(section) = &s.section {
            // Momentum and inertia rate (diagnostics, Christoffel C) from the world slices;
            // inertia and force as the section sums them, in its base frame.
            for slice in &section.slices {
                let b = &slice.body;
                slices = Some(sum(
                    dag,
                    slices,
                    &Composite { inertia: b.inertia, force: b.force, momentum: b.momentum, rate: b.rate },
                ));
            }
            slices = slices.map(|c| Composite { inertia: section.slices_inertia, force: section.slices_force, ..c });
        }
        own.push(match &s.body {
            Some(b) => Some(Composite { inertia: b.inertia, force: b.force, momentum: b.momentum, rate: b.rate }),
            None => slices,
        });
    }
    for index in (0..links.len()).rev() {
        let name = &links[index].name;
        if let Some(tip) = beyond[index].take() {
            beyond[index] = Some(Composite {
                inertia: dag.pin_inertia(tip.inertia, &format!("{name}_tip_composite_inertia")),
                force: dag.pin_force(tip.force, &format!("{name}_tip_composite_force")),
                momentum: dag.pin_force(tip.momentum, &format!("{name}_tip_composite_momentum")),
                rate: dag.pin_inertia_rate(tip.rate, &format!("{name}_tip_composite_rate")),
            });
        }
        let Some(total) = own[index].take() else { continue };
        let composite = Composite {
            inertia: dag.pin_inertia(total.inertia, &format!("{name}_composite_inertia")),
            force: dag.pin_force(total.force, &format!("{name}_composite_force")),
            momentum: dag.pin_force(total.momentum, &format!("{name}_composite_momentum")),
            rate: dag.pin_inertia_rate(total.rate, &format!("{name}_composite_rate")),
        };
        composites[index] = Some(composite);
        if let Some(p) = links[index].parent {
            own[p] = Some(sum(dag, own[p].take(), &composite));
            if links[p].section.is_some() {
                beyond[p] = Some(sum(dag, beyond[p].take(), &composite));
            }
        }
    }
    (composites, beyond)
}

/// Whole-robot quantities from the root composites: mass, centre of mass, momentum, and the
/// potential energy (gravity's added to the other potential energies).
pub(super) fn whole_robot(
    dag: &mut Dag,
    tree: &Tree,
    composites: &[Option<Composite>],
    mut elastic_energy: Vec<NodeId>,
) -> WholeRobot {
    let (links, gravity) = (tree.links, tree.gravity);
    let roots: Vec<usize> = (0..links.len()).filter(|&i| links[i].parent.is_none()).collect();
    let mut total = dag.number(0.0);
    let mut first_moment = dag.zero3();
    let mut momentum = dag.zero_force();
    for &r in &roots {
        if let Some(c) = composites[r] {
            total = dag.add2(total, c.inertia.m);
            first_moment = dag.add3(&first_moment, &c.inertia.h);
            momentum = dag.add_force(&momentum, &c.momentum);
        }
    }
    let potential_energy = dag.mul2(gravity, first_moment[2]);
    elastic_energy.push(potential_energy);
    let potential_energy = dag.add(elastic_energy);
    let inverse_total = dag.powi(total, -1);
    let center_of_mass = dag.scale3(&first_moment, inverse_total);

    WholeRobot { total_mass: total, center_of_mass, momentum, potential_energy }
}
