//! The spec loader in process: the corpus's base specs load with the sizes they should have,
//! numbers near the ends of f64 convert exactly, and every committed spec validates. The bad
//! specs are in tests/corpus/specs.toml (run by spec_corpus.rs). Validation does not call
//! symbolica, so these run in parallel.

use softgen_codegen::load;
use std::path::{Path, PathBuf};

fn corpus_file(name: &str) -> (String, String) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    (name.to_string(), std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn the_corpus_bases_load() {
    let (name, text) = corpus_file("two_links.toml");
    assert_eq!(load(&name, &text).unwrap().coordinates.len(), 4, "3 planar base + 1 joint");
    let (name, text) = corpus_file("free_body.toml");
    assert_eq!(load(&name, &text).unwrap().coordinates.len(), 6);
    let (name, text) = corpus_file("two_soft_sections.toml");
    let robot = load(&name, &text).unwrap();
    assert_eq!(robot.coordinates.len(), 12, "6 base + 3 per section");
    assert_eq!(robot.contact_points.len(), 30, "5 rings of 6");
}

#[test]
fn long_mantissas_near_1e40_convert_exactly() {
    for number in ["1.2345678901234567e40", "-9.876543210987654e38", "1.7976931348623157e308", "4.9e-324"] {
        let value: f64 = number.parse().unwrap();
        assert_eq!(softgen_codegen::parse_expression(number).unwrap().evaluate(&Default::default()).unwrap(), value);
    }
}

#[test]
fn every_seed_spec_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for entry in std::fs::read_dir(root.join("model-specs")).unwrap() {
        let path = entry.unwrap().path();
        if softgen_codegen::is_spec_file(&path) {
            let text = std::fs::read_to_string(&path).unwrap();
            load(&path.to_string_lossy(), &text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
