//! The instrument tie's physics step (issue #23's second goal: ≤ 0.4 ms mean): ten 1 ms steps
//! of scenes/instrument_tie.toml (a 60-element nylon 3-0 suture with self-contact and the
//! skin, two needle drivers' jaws and shafts as contact capsules, the needle held, the
//! deformable pad) in three phases of examples/tie_script.rs's first throw: the long end
//! wrapped round the right driver's closed jaws (4.0 s), the driver backing out with the tail
//! so the wraps slide off its tip (6.9 s), and the hands crossed pulling the throw down, its
//! strands pressing on each other (8.0 s). Each phase steps on from the same state every
//! iteration (cloned outside the timing), with the plan's targets.
//! Run: `cargo bench --bench instrument_tie` (the plan takes about 10 s to make first).

#[path = "../examples/tie_script.rs"]
#[allow(dead_code)]
mod tie_script;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tie_script::{Eye, Knot};

/// Steps per timed iteration.
const STEPS: u64 = 10;

fn bench(c: &mut Criterion) {
    let sc = tie_script::scene_at("scenes/instrument_tie.toml");
    let (right, left) = tie_script::plans_upto(&sc, Knot::Square, &mut Eye::new(&sc), 1);
    let mut world = sc.world.clone();
    let mut tools = tie_script::start_tools(&sc, &world);
    let h = world.dt().expect("a dynamic scene");
    let mut g = c.benchmark_group("instrument_tie_10_steps_1ms");
    g.sample_size(30);
    g.throughput(Throughput::Elements(STEPS));
    for (name, at) in [
        ("wrapped on the jaws", 4.0),
        ("wraps sliding off the tip", 6.9),
        ("throw pulled down", 8.0),
    ] {
        while world.time + 0.5 * h < at {
            let t = world.time + h;
            let out = world.step(
                &mut tools,
                &[Some(right.target(t)), Some(left.target(t))],
                h,
            );
            assert!(out.error.is_none(), "step: {:?}", out.error);
        }
        // The phase's Newton iterations (what its cost scales with), printed once.
        let (mut w, mut tl) = (world.clone(), tools.clone());
        let mut iterations = 0;
        for _ in 0..STEPS {
            let t = w.time + h;
            let targets = [Some(right.target(t)), Some(left.target(t))];
            iterations += w.step(&mut tl, &targets, h).iterations;
        }
        eprintln!(
            "{name} ({at} s): {:.1} Newton iterations a step",
            iterations as f64 / STEPS as f64
        );
        g.bench_function(name, |b| {
            b.iter_batched(
                || (world.clone(), tools.clone()),
                |(mut w, mut tl)| {
                    for _ in 0..STEPS {
                        let t = w.time + h;
                        let targets = [Some(right.target(t)), Some(left.target(t))];
                        black_box(w.step(&mut tl, &targets, h));
                    }
                    w
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
