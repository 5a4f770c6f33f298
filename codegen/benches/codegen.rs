//! Criterion bench of code generation against robot size: the scaling fixtures (planar snakes
//! of 6, 12, 20 and 60 links), spec text to formatted module, every stage included.
//!
//! Symbolica allows one thread per user without a licence key; criterion runs benchmarks one
//! after another in this one thread. Run with `cargo bench -p softgen-codegen`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn codegen(c: &mut Criterion) {
    std::env::set_var("SYMBOLICA_HIDE_BANNER", "1");
    let mut group = c.benchmark_group("codegen");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    for links in softgen_codegen::SCALING_LINKS {
        let generated = softgen_codegen::generate_fixture(links).expect("the fixture generates");
        println!(
            "{}: {} coordinates, {} lines, {} bytes ({})",
            generated.robot.name,
            generated.robot.coordinates.len(),
            generated.lines(),
            generated.source.len(),
            generated.times
        );
        group.bench_function(format!("planar snake, {links} links ({} coordinates)", links + 2), |b| {
            b.iter(|| softgen_codegen::generate_fixture(links).expect("the fixture generates"))
        });
    }
    group.finish();
}

criterion_group!(benches, codegen);
criterion_main!(benches);
