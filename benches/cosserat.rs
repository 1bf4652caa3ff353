//! One dynamic Cosserat step (h = 1 ms) of a falling nylon 2-0 suture (L = 0.15 m, clamped at one
//! end, gravity), taken from a mid-fall state: Newton capped at 3 iterations, PD at 10
//! local/global iterations, N = 50, 100, 200. Run: `cargo bench --bench cosserat`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use suture::math::{Mat3, Vec3};
use suture::rod::params::{NYLON, shear_from_poisson, usp_radius};
use suture::rod::{
    CosseratRod, Drive, DynamicParams, DynamicRod, EndCondition, EndTarget, Method, RodParams,
    SolverConfig,
};

fn falling(n: usize, method: Method, iterations: usize) -> (CosseratRod, Drive) {
    // Nylon 2-0 from the library's presets.
    let p = RodParams {
        radius: usp_radius("2-0").expect("USP 2-0"),
        youngs_modulus: NYLON.youngs_modulus,
        shear_modulus: shear_from_poisson(NYLON.youngs_modulus, NYLON.poisson_ratio),
        density: NYLON.density,
    };
    let frame = Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()]);
    let config = SolverConfig {
        method,
        max_iterations: iterations,
        ..Default::default()
    };
    let mut rod = CosseratRod::straight(
        DynamicParams::new(&p, 0.15, n),
        (EndCondition::Clamped, EndCondition::Free),
        config,
        Vec3::zeros(),
        frame,
    );
    let t = EndTarget {
        position: Vec3::zeros(),
        rotation: rod.q[0],
    };
    let d = Drive {
        start: t,
        end: t,
        gravity: Vec3::new(0.0, -9.81, 0.0),
        start_force: Vec3::zeros(),
        start_torque: Vec3::zeros(),
        end_force: Vec3::zeros(),
        end_torque: Vec3::zeros(),
    };
    // 50 ms into the fall: moving, bending, far from rest.
    for _ in 0..50 {
        rod.step(1e-3, &d).expect("setup step");
    }
    (rod, d)
}

fn steps(c: &mut Criterion) {
    for (name, method, iterations) in [
        ("cosserat_newton_step_3it", Method::Newton, 3),
        ("cosserat_pd_step_10it", Method::Pd, 10),
    ] {
        let mut g = c.benchmark_group(name);
        for n in [50, 100, 200] {
            let (rod, d) = falling(n, method, iterations);
            // Step one rod repeatedly from the same state (restored by copying the state
            // vectors, not the solver's buffers): as in the simulator, the solver's memory
            // stays warm. (Cloning the whole rod per iteration measured cold caches: +30 %.)
            let mut r = rod.clone();
            g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| {
                    r.x.copy_from_slice(&rod.x);
                    r.v.copy_from_slice(&rod.v);
                    r.q.copy_from_slice(&rod.q);
                    r.omega.copy_from_slice(&rod.omega);
                    r.held_frames = rod.held_frames;
                    black_box(r.step(1e-3, &d).expect("step"))
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, steps);
criterion_main!(benches);
