//! The deformable tissue pad (src/tissue.rs): implicit Euler of the linear lattice settles on
//! the static solution, never gains energy, maps material points both ways, and closes its
//! incision when its cut edges are pulled together.

use suture::math::Vec3;
use suture::tissue::{MaterialPoint, Tissue, TissueGeometry, TissueParams};

fn pad(damping: f64) -> Tissue {
    Tissue::new(
        TissueGeometry {
            center: Vec3::new(0.0, -0.005, 0.0),
            size: Vec3::new(0.08, 0.01, 0.05),
            gap: 0.003,
        },
        TissueParams {
            youngs_modulus: 50e3,
            density: 1000.0,
            mass_damping: damping,
            stiffness_damping: 0.0,
            spacing: 0.005,
        },
    )
}

/// A constant point load on the top: the damped implicit steps settle on the static
/// displacement F/k from the lattice stiffness (an independent dense solve).
#[test]
fn point_load_settles_on_the_static_solution() {
    let mut t = pad(200.0);
    let (x, z) = (-0.011, 0.004);
    let k = t.indentation_stiffness(x, z);
    let m = MaterialPoint {
        half: 0,
        rest: Vec3::new(x, t.top(), z),
    };
    let f = 0.5;
    for _ in 0..3000 {
        t.apply_force(&m, &Vec3::new(0.0, -f, 0.0));
        t.step(1e-3);
    }
    let uy = t.displacement(&m).y;
    println!(
        "indentation stiffness {k:.1} N/m; {f} N → {:.4} mm (static {:.4} mm)",
        uy * 1e3,
        -f / k * 1e3
    );
    assert!((uy + f / k).abs() < 1e-6 * (f / k), "{uy} vs {}", -f / k);
    // The elastic energy at rest equals the work of the load: ½ F u.
    let e = t.elastic_energy();
    assert!((e - 0.5 * f * f / k).abs() < 1e-6 * e, "{e}");
}

/// Undamped free vibration: implicit Euler on a linear system never gains energy, and loses
/// some every step.
#[test]
fn free_vibration_never_gains_energy() {
    let mut t = pad(0.0);
    let m = MaterialPoint {
        half: 1,
        rest: Vec3::new(0.012, t.top(), -0.006),
    };
    for _ in 0..20 {
        t.apply_force(&m, &Vec3::new(0.3, -1.0, 0.2));
        t.step(1e-3);
    }
    let mut last = t.elastic_energy() + t.kinetic_energy();
    assert!(last > 0.0);
    for _ in 0..500 {
        t.step(1e-3);
        let e = t.elastic_energy() + t.kinetic_energy();
        assert!(e <= last * (1.0 + 1e-12), "energy rose: {last} → {e}");
        last = e;
    }
    assert!(t.is_finite());
}

/// `locate` inverts `position` for points inside the deformed pad (to 1 µm at strains of a
/// few %), and finds nothing in the incision or above the skin.
#[test]
fn locate_inverts_position() {
    let mut t = pad(50.0);
    for (x, f) in [
        (-0.002, Vec3::new(0.8, -0.6, 0.1)),
        (0.003, Vec3::new(-0.8, -0.3, 0.0)),
    ] {
        let half = usize::from(x > 0.0);
        let m = MaterialPoint {
            half,
            rest: Vec3::new(x, t.top(), 0.0),
        };
        for _ in 0..200 {
            t.apply_force(&m, &f);
            t.step(1e-3);
        }
    }
    println!("largest displacement {:.3} mm", t.max_displacement() * 1e3);
    assert!(t.max_displacement() > 1e-3);
    let mut worst = 0.0f64;
    for i in 0..200 {
        let s = i as f64 / 200.0;
        let half = i % 2;
        let (x0, x1) = t.half_x_range(half);
        let rest = Vec3::new(
            x0 + (x1 - x0) * (0.05 + 0.9 * s),
            t.top() - 0.009 * ((i * 7 % 13) as f64 / 13.0) - 0.0003,
            -0.024 + 0.048 * ((i * 11 % 17) as f64 / 17.0),
        );
        let m = MaterialPoint { half, rest };
        let p = t.position(&m);
        let found = t.locate(&p).expect("inside");
        assert_eq!(found.half, half);
        worst = worst.max((found.rest - rest).norm());
    }
    println!("locate error ≤ {:.2e} m", worst);
    assert!(worst < 1e-6);
    // A point midway between the cut faces (far from the loads, where the cut stays open).
    let z = 0.024;
    let (_, a1) = t.half_x_range(0);
    let (b0, _) = t.half_x_range(1);
    let y = t.top() - 0.003;
    let pa = t.position(&MaterialPoint {
        half: 0,
        rest: Vec3::new(a1, y, z),
    });
    let pb = t.position(&MaterialPoint {
        half: 1,
        rest: Vec3::new(b0, y, z),
    });
    assert!(pb.x - pa.x > 1e-3, "cut closed at z = {z}");
    assert!(t.locate(&((pa + pb) / 2.0)).is_none());
    assert!(t.locate(&Vec3::new(-0.02, t.top() + 0.003, 0.0)).is_none());
}

/// Pulling the two cut edges toward each other (as a tightened stitch does) narrows the
/// incision by the edges' displacements.
#[test]
fn pulling_the_edges_closes_the_gap() {
    let mut t = pad(200.0);
    let g0 = t.gap_at(0.0);
    assert!((g0 - 0.003).abs() < 1e-12);
    let (_, a1) = t.half_x_range(0);
    let (b0, _) = t.half_x_range(1);
    let ma = MaterialPoint {
        half: 0,
        rest: Vec3::new(a1 - 0.004, t.top() - 0.004, 0.0),
    };
    let mb = MaterialPoint {
        half: 1,
        rest: Vec3::new(b0 + 0.004, t.top() - 0.004, 0.0),
    };
    for _ in 0..2000 {
        t.apply_force(&ma, &Vec3::new(0.6, 0.0, 0.0));
        t.apply_force(&mb, &Vec3::new(-0.6, 0.0, 0.0));
        t.step(1e-3);
    }
    let g = t.gap_at(0.0);
    println!("gap {:.3} → {:.3} mm", g0 * 1e3, g * 1e3);
    assert!(g < g0 - 0.5e-3, "gap {g}");
    // Symmetric loads: symmetric response.
    let ua = t.displacement(&ma).x;
    let ub = t.displacement(&mb).x;
    assert!((ua + ub).abs() < 1e-9, "{ua} {ub}");
}

/// Point springs implicit in the step: a spring far stiffer than the light top nodes could
/// take explicitly (10⁶ N/m on 0.1 g) stays stable, and the point settles where the spring
/// and the lattice balance: `u = d k_s/(k_s + k)` with k the indentation stiffness, and the
/// reported force equals `k u`.
#[test]
fn implicit_point_spring_is_stable_and_balances_the_lattice() {
    use suture::tissue::PointSpring;
    for ks in [300.0, 1e6] {
        let mut t = pad(200.0);
        let (x, z) = (0.013, -0.002);
        let k = t.indentation_stiffness(x, z);
        let m = MaterialPoint {
            half: 1,
            rest: Vec3::new(x, t.top(), z),
        };
        let d = 1e-3;
        let stiff = nalgebra::Matrix3::from_diagonal(&Vec3::new(0.0, ks, 0.0));
        let mut f = Vec3::zeros();
        for _ in 0..3000 {
            let mut s = [PointSpring {
                point: m,
                target: Vec3::new(x, t.top() - d, z),
                stiffness: stiff,
            }];
            assert_eq!(t.step_with(1e-3, &mut s), 0);
            f = s[0].target;
        }
        assert!(t.is_finite());
        let uy = t.displacement(&m).y;
        let expect = -d * ks / (ks + k);
        println!(
            "k_s {ks:.0e}: u {:.5} mm (expected {:.5}), force {:.4} N",
            uy * 1e3,
            expect * 1e3,
            f.y
        );
        assert!((uy - expect).abs() < 1e-6 * d, "{uy} vs {expect}");
        assert!(
            (f.y - k * uy).abs() < 1e-5 * (k * d),
            "{} vs {}",
            f.y,
            k * uy
        );
    }
}
