//! One 1 ms step of the interrupted-stitch scene (scenes/interrupted_stitch.toml: a 60-segment
//! nylon 3-0 suture with skin contact, the rigid needle in its coupling, the deformable pad:
//! 2 × 99 lattice nodes, 594 unknowns) in three phases of a scripted stitch: the point pressing
//! on the skin (before puncture), the needle through both wound faces, and the suture through
//! all four holes being tightened. Budget: 1 ms (the 1 kHz physics loop).
//! Run: `cargo bench --bench suturing`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use suture::coupling::VirtualCoupling;
use suture::math::Vec3;
use suture::scene::{self, Overrides};
use suture::sim::needle::pose_on_circle;
use suture::sim::tool::ToolSpring;
use suture::sim::{Tool, World};

/// The stitch of tests/suturing.rs up to `t_end` [s]: the world and the coupling then.
fn stitch_to(t_end: f64) -> (World, Tool) {
    use std::f64::consts::PI;
    let sc = scene::load("scenes/interrupted_stitch.toml", Overrides::default()).expect("scene");
    let setup = sc.tools.first().copied().expect("tool");
    let mut world = sc.world;
    let (cp, _) = VirtualCoupling::new(
        setup.mass,
        setup.inertia,
        setup.frequency,
        setup.damping_ratio,
        setup.max_stiffness,
    );
    let mut spring = ToolSpring::new(setup.node, cp.k, cp.c);
    spring.kr = cp.kr;
    let mut tools = [Tool::new(0, spring)];
    let deg = PI / 180.0;
    let plan = [
        (0.0, 180.0 * deg, 0.004, Vec3::zeros()),
        (0.5, 180.0 * deg, 0.001, Vec3::zeros()),
        (3.5, 358.0 * deg, 0.001, Vec3::zeros()),
        (6.5, 548.0 * deg, 0.001, Vec3::zeros()),
        (8.0, 548.0 * deg, 0.001, Vec3::new(-0.012, 0.018, 0.0)),
    ];
    let pose = |t: f64| {
        let i = plan.partition_point(|p| p.0 <= t).clamp(1, plan.len() - 1);
        let (a, b) = (&plan[i - 1], &plan[i]);
        let s = ((t - a.0) / (b.0 - a.0)).clamp(0.0, 1.0);
        (
            a.1 + (b.1 - a.1) * s,
            a.2 + (b.2 - a.2) * s,
            a.3 + (b.3 - a.3) * s,
        )
    };
    let h = 1e-3;
    let mut regrasped = false;
    for k in 0..(t_end / h).round() as usize {
        let t = (k + 1) as f64 * h;
        let s = world.suturing.as_mut().expect("suturing");
        if !regrasped && t >= 3.5 {
            let tip = s.needle.tip();
            s.set_held(t, false, &tip);
            s.set_held(t, true, &tip);
            regrasped = true;
        }
        let (phi, cy, off) = pose(t);
        let (p, r) = pose_on_circle(
            &s.needle.shape,
            &Vec3::new(0.0, cy, 0.0),
            phi,
            s.needle.grip,
        );
        let spring = &mut tools[0].coupling;
        spring.target = p + off;
        spring.target_velocity = Vec3::zeros();
        spring.target_rotation = r;
        let out = world.step(&mut tools, &[None], h);
        assert!(out.error.is_none(), "step: {:?}", out.error);
    }
    let [tool] = tools;
    (world, tool)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("interrupted_stitch_step_1ms");
    g.sample_size(30);
    for (name, t) in [
        ("pressing on the skin", 1.5),
        ("needle through both wound faces", 3.0),
        ("suture through four holes, tightening", 7.5),
    ] {
        let (world, tool) = stitch_to(t);
        g.bench_function(name, |b| {
            b.iter_batched(
                || (world.clone(), [tool.clone()]),
                |(mut w, mut tools)| {
                    let out = w.step(&mut tools, &[None], 1e-3);
                    assert!(out.error.is_none(), "step: {:?}", out.error);
                    black_box(out)
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
