//! The instrument tie's physics step (issue #23's second goal: ≤ 0.4 ms mean): ten 1 ms steps
//! of scenes/instrument_tie.toml (a 60-element nylon 3-0 suture with self-contact and the
//! skin, two needle drivers' jaws and shafts as contact capsules, the needle held, the
//! deformable pad) in three phases of examples/tie_script.rs's first throw: the long end
//! wrapped round the right driver's closed jaws (4.0 s), the driver backing out with the tail
//! so the wraps slide off its tip (6.9 s), and the hands crossed pulling the throw down, its
//! strands pressing on each other (8.0 s). Each phase steps on from the same state every
//! iteration (cloned outside the timing), with the plan's targets.
//! The second group does the same on scenes/instrument_tie_fresh.toml in three phases of the
//! square's second throw, as it is pulled tight.
//! Run: `cargo bench --bench instrument_tie` (the plans take about 10 s and 1 min to make
//! first, and stepping to the second group's phases another minute).

#[path = "../examples/tie_script.rs"]
#[allow(dead_code)]
mod tie_script;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tie_script::{Eye, Knot};

/// Steps per timed iteration.
const STEPS: u64 = 10;

fn bench(c: &mut Criterion) {
    phases(
        c,
        "instrument_tie_10_steps_1ms",
        "scenes/instrument_tie.toml",
        1,
        &[
            ("wrapped on the jaws", 4.0),
            ("wraps sliding off the tip", 6.9),
            ("throw pulled down", 8.0),
        ],
    );
    // The square's second throw on the fresh wound (110 elements), where the knot is pulled
    // tight: the hands laying it down (20.0 s, the step der-imc.md §F9 traced), pulling
    // hardest (23.3 s, the run's costliest second) and holding it laid (25.0 s).
    phases(
        c,
        "instrument_tie_fresh_square_10_steps_1ms",
        "scenes/instrument_tie_fresh.toml",
        2,
        &[
            ("second throw laid down", 20.0),
            ("square pulled tight", 23.3),
            ("square held laid", 25.0),
        ],
    );
}

/// Bench ten steps from each of `at`'s times [s] of the scripted square's first `throws`
/// throws on the scene at `path`.
fn phases(c: &mut Criterion, group: &str, path: &str, throws: usize, at: &[(&str, f64)]) {
    let sc = tie_script::scene_at(path);
    let (right, left) = tie_script::plans_upto(&sc, Knot::Square, &mut Eye::new(&sc), throws);
    let mut world = sc.world.clone();
    let mut tools = tie_script::start_tools(&sc, &world);
    let h = world.dt().expect("a dynamic scene");
    let mut g = c.benchmark_group(group);
    g.sample_size(30);
    g.throughput(Throughput::Elements(STEPS));
    for &(name, at) in at {
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
