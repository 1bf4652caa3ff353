//! Pai 2002 two-sweep (one backward + one forward sweep) at N = 50…400, and a posed-end
//! shooting solve at N = 100 (needle moved 1 mm and turned 0.01 rad from the last solution).
//! Run: `cargo bench --bench strands`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use suture::math::{Mat3, Vec3, exp_so3};
use suture::rod::{Strands, StrandsConfig, StrandsProblem, Tip};

/// Nylon 2-0, 10 cm, clamped horizontally, under its weight and a tip load.
fn suture(n: usize) -> Strands {
    let ei = 7.952e-7;
    Strands::new(
        0.1,
        n,
        Vec3::new(ei, ei, ei / 1.4),
        Vec3::zeros(),
        StrandsConfig::default(),
    )
}

fn base() -> Mat3 {
    Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()])
}

fn two_sweep(c: &mut Criterion) {
    let mut g = c.benchmark_group("strands_two_sweep");
    for n in [50, 100, 200, 400] {
        let mut rod = suture(n);
        let tip_rot = exp_so3(&Vec3::new(0.0, 0.0, -0.6)) * base();
        let force = Vec3::new(0.0, -8e-5, 0.0);
        let weight = Vec3::new(0.0, -7.9e-4, 0.0);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                black_box(rod.two_sweep(
                    &base(),
                    &Vec3::zeros(),
                    black_box(&tip_rot),
                    &force,
                    &Vec3::zeros(),
                    &weight,
                ))
            })
        });
    }
    g.finish();
}

fn posed_shooting(c: &mut Criterion) {
    let n = 100;
    let mut rod = suture(n);
    let prob = |t: f64| StrandsProblem {
        base_rotation: base(),
        base_position: Vec3::zeros(),
        tip: Tip::Clamped {
            rotation: exp_so3(&Vec3::new(0.0, 0.2 + t, 0.3)) * base(),
            position: Vec3::new(0.07 + 0.1 * t, 0.02, 0.01),
        },
        tip_force: Vec3::zeros(),
        tip_torque: Vec3::zeros(),
        distributed_force: Vec3::new(0.0, -7.9e-4, 0.0),
    };
    rod.solve(&prob(0.0)).expect("bench setup converges");
    let mut flip = false;
    c.bench_function("strands_posed_shooting_n100", |b| {
        b.iter(|| {
            // Alternate between two needle poses 1 mm / 0.01 rad apart: a haptic-tick update.
            flip = !flip;
            let p = prob(if flip { 0.01 } else { 0.0 });
            black_box(rod.solve(&p).expect("converges"))
        })
    });
}

/// One haptic tick of the quasi-static coupling (docs/derivations/cosserat.md §C.6, sim::tool::StrandsCoupling): a
/// 5 cm nylon 2-0 cantilever (N = 20, the run test's suture), k = 19.7 N/m (a 20 g tool at
/// 5 Hz), the device holding the tip 5 mm up and circling ±1 mm at 2 rad/s.
fn coupled_tick(c: &mut Criterion) {
    let ei = 7.952e-7;
    let mut rod = Strands::new(
        0.05,
        20,
        Vec3::new(ei, ei, ei / 1.4),
        Vec3::new(0.0, 20.0, 0.0),
        StrandsConfig::default(),
    );
    rod.set_rest_pose(&base(), &Vec3::zeros());
    let tip0 = rod.positions()[20];
    let prob = StrandsProblem {
        base_rotation: base(),
        base_position: Vec3::zeros(),
        tip: Tip::Free,
        tip_force: Vec3::zeros(),
        tip_torque: Vec3::zeros(),
        distributed_force: Vec3::zeros(),
    };
    let k = 0.02 * (2.0 * std::f64::consts::PI * 5.0f64).powi(2);
    let mut cp = suture::sim::tool::StrandsCoupling::new(k, 0.0, tip0);
    let centre = tip0 + Vec3::new(-0.001, 0.005, 0.0);
    // Bring the device there over 800 ticks, as the run test's stylus does.
    for i in 1..=800 {
        let s = i as f64 / 800.0;
        let p = tip0 + (centre - tip0) * s;
        // A refused tick keeps the last state (as in the loop); counted below.
        let _ = cp.solve(&mut rod, &prob, &p, &Vec3::zeros(), 1e-3);
    }
    let mut t = 0.0f64;
    c.bench_function("strands_coupled_tick_n20", |b| {
        b.iter(|| {
            t += 1e-3;
            let p = centre
                + Vec3::new(
                    0.0,
                    0.001 * (2.0 * t).sin(),
                    0.001 * (2.0 * t).cos() - 0.001,
                );
            black_box(cp.solve(&mut rod, &prob, &p, &Vec3::zeros(), 1e-3).is_ok())
        })
    });
}

criterion_group!(benches, two_sweep, posed_shooting, coupled_tick);
criterion_main!(benches);
