//! The likely cause of a failed run (`likely_cause`) on a generated robot: a contact spring
//! or damper too fast for the step is named with its value and option, a contact force over
//! 10^4 weights is named with its point and time, the step is named where the contact is the
//! spec's own, and a robot whose contact the step resolves gets no blame (adaptive steps
//! neither, unless a force says so).

use softgen_generated::SnakePedalWave;
use softgen_runtime::{likely_cause, ContactLaw, LargestContactForce, Model};

type Robot = SnakePedalWave;

fn law(stiffness: f64, damping: f64) -> ContactLaw {
    ContactLaw { stiffness, damping, ..Robot::ENVIRONMENT.contact_law() }
}

#[test]
fn names_the_contact_input_a_fixed_step_cannot_follow() {
    let params = <Robot as Model<_, _>>::Params::default();
    let quiet = LargestContactForce::default();
    let env = Robot::ENVIRONMENT;
    // The spec's own contact at the default 1 ms step: nothing to blame.
    assert_eq!(
        likely_cause::<Robot, _, _>(&params, &law(env.contact_stiffness, env.contact_damping), Some(1e-3), &quiet),
        None
    );
    // The threshold: on m = total mass / points, h sqrt(k/m) = 2.8.
    let point_mass = Robot::total_mass(&params) / Robot::CONTACT_POINTS.len() as f64;
    let h = 1e-3;
    let k_limit = (2.8 / h) * (2.8 / h) * point_mass;
    assert_eq!(likely_cause::<Robot, _, _>(&params, &law(0.9 * k_limit, 0.0), Some(h), &quiet), None);
    let stiff = likely_cause::<Robot, _, _>(&params, &law(1.1 * k_limit, 0.0), Some(h), &quiet).expect("blamed");
    // The spec's own contact at a step too long for it: the step is named, not the contact.
    let long_step = 100.0 * h;
    let step =
        likely_cause::<Robot, _, _>(&params, &law(env.contact_stiffness, env.contact_damping), Some(long_step), &quiet)
            .expect("blamed");
    assert!(step.contains("the step (0.1 s) is the likely cause") && !step.contains("--contact-"), "{step}");
    assert!(
        stiff.contains("contact stiffness") && stiff.contains("--contact-stiffness") && stiff.contains("rings"),
        "{stiff}"
    );
    // A damper past h c / m = 2.8 is blamed, with its own option.
    let c_limit = 2.8 / h * point_mass;
    let damped = likely_cause::<Robot, _, _>(&params, &law(env.contact_stiffness, 1.1 * c_limit), Some(h), &quiet)
        .expect("blamed");
    assert!(damped.contains("contact damping") && damped.contains("--contact-damping"), "{damped}");
    assert_eq!(likely_cause::<Robot, _, _>(&params, &law(env.contact_stiffness, 0.9 * c_limit), Some(h), &quiet), None);
    // An adaptive integrator has no step to outrun.
    assert_eq!(likely_cause::<Robot, _, _>(&params, &law(1e10, 1e8), None, &quiet), None);
}

#[test]
fn names_the_point_and_time_of_an_implausible_contact_force() {
    let params = <Robot as Model<_, _>>::Params::default();
    let weight = Robot::total_mass(&params) * 9.80665;
    let env = Robot::ENVIRONMENT;
    // A contact law the user changed (the spec's own, with no step to blame, gets none).
    let contact = law(2.0 * env.contact_stiffness, 2.0 * env.contact_damping);
    let point = Robot::CONTACT_POINTS.len() - 1;
    let plausible = LargestContactForce { force: 0.9e4 * weight, point, time: 0.25 };
    assert_eq!(likely_cause::<Robot, _, _>(&params, &contact, None, &plausible), None);
    let implausible = LargestContactForce { force: 1.1e4 * weight, point, time: 0.25 };
    let spec_law = law(env.contact_stiffness, env.contact_damping);
    assert_eq!(likely_cause::<Robot, _, _>(&params, &spec_law, None, &implausible), None);
    let message = likely_cause::<Robot, _, _>(&params, &contact, None, &implausible).expect("blamed");
    let name = Robot::CONTACT_POINTS[point].name;
    assert!(message.contains(&format!("`{name}`")) && message.contains("t = 0.25 s"), "{message}");
    // No step to judge by: the faster of the spring (sqrt(k/m)) and the damper (c/m) on the
    // mass one point carries is blamed.
    let point_mass = Robot::total_mass(&params) / Robot::CONTACT_POINTS.len() as f64;
    let damper_faster = contact.damping / point_mass > (contact.stiffness / point_mass).sqrt();
    let blamed = if damper_faster { "the contact damping" } else { "the contact stiffness" };
    assert!(message.contains(blamed), "{message}");
}
