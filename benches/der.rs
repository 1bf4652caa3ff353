//! Discrete Elastic Rods (issue #8). One implicit DER step (h = 1 ms, Newton to convergence) of
//! a falling nylon 2-0 suture (L = 0.15 m, clamped at one end, gravity) from a mid-fall state,
//! at 100, 200 and 301 nodes; and the sag-free rest-shape optimisation of a 0.3 m nylon J
//! (Takahashi–Batty 2025) at 200 nodes. Run: `cargo bench --bench der`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use suture::math::{Mat3, Vec3, rotation_from_matrix};
use suture::rod::der::{DerRod, SagFreeOptions, rest_shape};
use suture::rod::params::{NYLON, shear_from_poisson, usp_radius};
use suture::rod::{
    Drive, DynamicParams, DynamicRod, EndCondition, EndTarget, RodParams, SolverConfig,
};

fn nylon() -> RodParams {
    RodParams {
        radius: usp_radius("2-0").expect("USP 2-0"),
        youngs_modulus: NYLON.youngs_modulus,
        shear_modulus: shear_from_poisson(NYLON.youngs_modulus, NYLON.poisson_ratio),
        density: NYLON.density,
    }
}

fn drive(rod: &DerRod) -> Drive {
    let x = rod.positions();
    let t = EndTarget {
        position: x[0],
        rotation: rotation_from_matrix(&rod.frame(0)),
    };
    Drive {
        start: t,
        end: t,
        gravity: Vec3::new(0.0, -9.81, 0.0),
        start_force: Vec3::zeros(),
        start_torque: Vec3::zeros(),
        end_force: Vec3::zeros(),
        end_torque: Vec3::zeros(),
    }
}

fn falling(nodes: usize) -> (DerRod, Drive) {
    let frame = Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()]);
    let mut rod = DerRod::straight(
        DynamicParams::new(&nylon(), 0.15, nodes - 1),
        (EndCondition::Clamped, EndCondition::Free),
        SolverConfig::default(),
        Vec3::zeros(),
        frame,
    );
    let d = drive(&rod);
    // 50 ms into the fall: moving, bending, far from rest.
    for _ in 0..50 {
        rod.step(1e-3, &d).expect("setup step");
    }
    (rod, d)
}

fn j_shape(nodes: usize) -> DerRod {
    let (len, rb) = (0.3, 0.02);
    let run = 0.3 * len;
    let arc = 0.5 * std::f64::consts::PI * rb;
    let n = nodes - 1;
    let x: Vec<Vec3> = (0..=n)
        .map(|i| {
            let s = len * i as f64 / n as f64;
            if s <= run {
                Vec3::new(s, 0.0, 0.0)
            } else if s <= run + arc {
                let a = (s - run) / rb;
                Vec3::new(run + rb * a.sin(), -rb * (1.0 - a.cos()), 0.0)
            } else {
                Vec3::new(run + rb, -rb - (s - run - arc), 0.0)
            }
        })
        .collect();
    DerRod::from_centerline(
        DynamicParams::new(&nylon(), len, n),
        (EndCondition::Clamped, EndCondition::Free),
        SolverConfig::default(),
        x,
        &Vec3::z(),
    )
}

fn steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("der_step");
    for nodes in [100, 200, 301] {
        let (rod, d) = falling(nodes);
        let mut r = rod.clone();
        let rep = r.clone().step(1e-3, &d).expect("step");
        println!(
            "der_step/{nodes}: {} Newton iterations, converged {}",
            rep.iterations, rep.converged
        );
        g.bench_with_input(BenchmarkId::from_parameter(nodes), &nodes, |b, _| {
            b.iter(|| {
                r.copy_state_from(&rod);
                black_box(r.step(1e-3, &d).expect("step"))
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("sagfree_optimise");
    for nodes in [100, 200] {
        let rod = j_shape(nodes);
        let d = drive(&rod);
        let rep = rest_shape::optimize(&mut rod.clone(), &d, &SagFreeOptions::default())
            .expect("optimises");
        println!("sagfree_optimise/{nodes}: {rep:?}");
        g.bench_with_input(BenchmarkId::from_parameter(nodes), &nodes, |b, _| {
            b.iter(|| {
                let mut r = rod.clone();
                black_box(
                    rest_shape::optimize(&mut r, &d, &SagFreeOptions::default())
                        .expect("optimises"),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, steps);
criterion_main!(benches);
