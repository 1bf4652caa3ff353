//! One Newton step of the overhand knot (scenes/knot_overhand.toml: the IMC thesis rod, L = 1 m,
//! r = 1.6 mm, E = 0.18 MPa, 301 nodes, IMC self-contact, chord steps as the scene asks) at
//! dt = 1 ms and 0.5 ms, from 1 s into the scene (the ends start pulling). Thesis: 5–7 ms per
//! 0.5 ms step, 2.2–3.2 iterations.
//! Also the same scene with the Projective Dynamics solver (20 iterations per step,
//! self-contact as projections) at dt = 1 ms.
//! Run: `cargo bench --bench knots`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use suture::scene::{self, Overrides};
use suture::sim::RodModel;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("knot_overhand_step_n300");
    g.sample_size(20);
    for dt in [1e-3, 5e-4] {
        let mut sc = scene::load("scenes/knot_overhand.toml", Overrides::default())
            .expect("scenes/knot_overhand.toml");
        if let RodModel::Cosserat { dt: d, .. } = &mut sc.world.rods[0].model {
            *d = dt;
        }
        sc.world.advance_to(1.0).expect("relax");
        let mut t = 1.0;
        g.bench_function(format!("dt {} ms", dt * 1e3), |b| {
            b.iter(|| {
                t += dt;
                black_box(sc.world.advance_to(t).expect("step"))
            })
        });
    }
    let text = std::fs::read_to_string("scenes/knot_overhand.toml")
        .expect("scenes/knot_overhand.toml")
        // Chord steps are Newton's: the option is left out.
        .replace("chord = true", "")
        .replace(
            "model = \"cosserat\"",
            "model = \"cosserat\"\nsolver = \"pd\"\niterations = 20",
        );
    let mut sc = scene::parse("knot_overhand (pd)", &text, Overrides::default()).expect("pd");
    sc.world.advance_to(1.0).expect("relax");
    let mut t = 1.0;
    g.bench_function("pd 20 iterations, dt 1 ms", |b| {
        b.iter(|| {
            t += 1e-3;
            black_box(sc.world.advance_to(t).expect("step"))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
