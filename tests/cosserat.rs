//! Dynamic Cosserat rod (Soler 2018 discretisation): statics against the elastica tables and the
//! STRANDS oracle, dynamics against analytic frequencies and conservation laws, and the
//! digest-cosserat Part D acceptance tests.

use suture::math::{Mat3, Quat, Vec3};
use suture::rod::{
    CosseratConfig, CosseratParams, CosseratRod, Drive, EndCondition, EndTarget, Integrator,
    Method, RodParams,
};

/// Nylon 2-0 (digest-cosserat C.1): r = 0.15 mm, E = 2 GPa, ν = 0.4, ρ = 1140 kg/m³.
fn nylon() -> RodParams {
    RodParams {
        radius: 0.15e-3,
        youngs_modulus: 2e9,
        shear_modulus: 2e9 / 2.8,
        density: 1140.0,
    }
}

/// Horizontal along +x, d1 = +y.
fn horizontal() -> Mat3 {
    Mat3::from_columns(&[Vec3::y(), Vec3::z(), Vec3::x()])
}

fn rod(
    p: &RodParams,
    length: f64,
    n: usize,
    ends: (EndCondition, EndCondition),
    config: CosseratConfig,
) -> CosseratRod {
    CosseratRod::straight(
        CosseratParams::new(p, length, n),
        ends,
        config,
        Vec3::zeros(),
        horizontal(),
    )
}

fn drive_for(r: &CosseratRod) -> Drive {
    let n = r.segments();
    let end = EndTarget {
        position: r.x[n],
        rotation: r.q[n - 1],
    };
    Drive {
        start: EndTarget {
            position: r.x[0],
            rotation: r.q[0],
        },
        end,
        gravity: Vec3::zeros(),
        start_force: Vec3::zeros(),
        start_torque: Vec3::zeros(),
        end_force: Vec3::zeros(),
        end_torque: Vec3::zeros(),
    }
}

const CANTILEVER: (EndCondition, EndCondition) = (EndCondition::Clamped, EndCondition::Free);

#[test]
fn static_tip_load_matches_elastica_table_d5() {
    // α = P L²/EI: (α, y/L, x/L) from digest-cosserat D.5.
    let p = nylon();
    let (l, n) = (0.1, 80);
    let ei = p.bending_stiffness();
    for (alpha, y_ref, x_ref) in [(1.0, 0.30172, 0.94357), (3.0, 0.60325, 0.74558)] {
        let mut r = rod(&p, l, n, CANTILEVER, CosseratConfig::default());
        let mut d = drive_for(&r);
        d.end_force = Vec3::new(0.0, -alpha * ei / (l * l), 0.0);
        let rep = r.equilibrate(&d).expect("converges");
        let tip = r.x[n];
        println!(
            "α {alpha}: y/L {:.5} x/L {:.5} ({rep:?})",
            -tip.y / l,
            tip.x / l
        );
        assert!(rep.converged, "{rep:?}");
        assert!(
            (-tip.y / l - y_ref).abs() < 0.01 * y_ref,
            "y/L {}",
            -tip.y / l
        );
        assert!(
            (tip.x / l - x_ref).abs() < 0.01 * x_ref,
            "x/L {}",
            tip.x / l
        );
    }
}

#[test]
fn static_self_weight_matches_heavy_elastica_table_d6() {
    // γ = q L³/EI = 5: y/L 0.49591, x/L 0.84666 (digest-cosserat D.6).
    let p = nylon();
    let n = 80;
    let q = p.linear_density() * 9.81;
    let l = (5.0 * p.bending_stiffness() / q).cbrt();
    let mut r = rod(&p, l, n, CANTILEVER, CosseratConfig::default());
    let mut d = drive_for(&r);
    d.gravity = Vec3::new(0.0, -9.81, 0.0);
    let rep = r.equilibrate(&d).expect("converges");
    let tip = r.x[n];
    println!(
        "γ 5, L = {l:.4} m: y/L {:.5} x/L {:.5} ({rep:?})",
        -tip.y / l,
        tip.x / l
    );
    assert!(rep.converged);
    assert!((-tip.y / l - 0.49591).abs() < 0.01 * 0.49591);
    assert!((tip.x / l - 0.84666).abs() < 0.01 * 0.84666);
}
