//! An isotropic rod's answer cannot depend on how the scene is turned nor on its reference
//! normal (issue #26). For every model, the same problems are solved turned by twelve rotations
//! (the identity, the eight that take the load to ±x, ±y, ±z along and across the rod, among
//! them four half-turns, and three generic ones) with three reference normals each; the shapes,
//! turned back, must match the unturned one with normal +y.
//!
//! Before the fix in `Strands::solve` (the continuation restarted from a stale tip frame),
//! STRANDS failed outright on the tip-load problem for every half-turn with normal +z.

use suture::math::{Mat3, Vec3, exp_so3};
use suture::scene::{self, Overrides};
use suture::sim::{RodModel, RodReport};

const L: f64 = 0.5; // [m]
const R: f64 = 0.004; // [m]
const E: f64 = 2.0e6; // [Pa]

fn ei() -> f64 {
    E * std::f64::consts::PI * R.powi(4) / 4.0
}

/// The twelve rotations, body to world.
fn rotations() -> Vec<Mat3> {
    let (x, y, z) = (Vec3::x(), Vec3::y(), Vec3::z());
    let m = |a: Vec3, b: Vec3, c: Vec3| Mat3::from_columns(&[a, b, c]);
    vec![
        Mat3::identity(),
        m(x, -y, -z), // Rx(π): load to +z
        m(x, z, -y),  // Rx(π/2): load to +y
        m(x, -z, y),  // Rx(-π/2): load to -y
        m(-z, y, x),  // Ry(π/2): load to -x, along the rod (now along -z)
        m(z, y, -x),  // Ry(-π/2): load to +x
        m(-x, -y, z), // Rz(π): rod along -x
        m(z, -y, x),  // half-turn about x + z: rod along +z, load to -x
        m(y, x, -z),  // half-turn about x + y: rod along +y, load to +z
        exp_so3(&(Vec3::new(0.3, -0.8, 0.52).normalize() * 2.0)),
        exp_so3(&(Vec3::new(1.0, 2.0, 3.0).normalize() * 2.9)),
        exp_so3(&(Vec3::new(-0.7, 0.1, 0.4).normalize() * 1.1)),
    ]
}

/// Reference normals of the unturned rod (along +x): +y, +z (the failing case of the issue)
/// and one 37° from +y.
fn normals() -> [Vec3; 3] {
    let a = 37f64.to_radians();
    [Vec3::y(), Vec3::z(), Vec3::new(0.0, a.cos(), a.sin())]
}

fn v(a: &Vec3) -> String {
    format!("[{:e}, {:e}, {:e}]", a.x, a.y, a.z)
}

/// Clamped at the origin along `q e_x` with `normal`, tip force `f` [N] and gravity `g`
/// [m/s²] (with `density` [kg/m³]), solved quasi-statically by `model` with `elements`: the
/// node positions.
#[allow(clippy::too_many_arguments)]
fn solve(
    model: &str,
    elements: usize,
    q: &Mat3,
    normal: &Vec3,
    f: &Vec3,
    g: &Vec3,
    density: f64,
) -> Vec<Vec3> {
    let text = format!(
        "version = 1\nduration = 0.0\ngravity = {}\nquasi_static = true\n\n[solver]\nmodel = \"{model}\"\nelements = {elements}\n\n[[rods]]\nradius = {R:e}\nyoungs_modulus = {E:e}\npoisson_ratio = 0.5\ndensity = {density:e}\ncenterline = [[0.0, 0.0, 0.0], {}]\nnormal = {}\nstart = \"clamped\"\nend = \"free\"\n\n[[rods.loads]]\nat = \"end\"\nforce = {}\n",
        v(&(q * g)),
        v(&(q * Vec3::x() * L)),
        v(&(q * normal)),
        v(&(q * f)),
    );
    let mut sc = scene::parse("orientation.toml", &text, Overrides::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let rep = sc
        .world
        .advance_to(0.0)
        .unwrap_or_else(|e| panic!("{model}, turned by {q}, normal {normal:?}: {e}"));
    if let RodReport::Cosserat { last, .. } = &rep.rods[0] {
        assert!(last.converged, "{model}, turned by {q}: {last:?}");
    }
    assert!(matches!(
        (&sc.world.rods[0].model, model),
        (RodModel::Strands(_), "strands")
            | (RodModel::Cosserat { .. }, "cosserat")
            | (RodModel::Der { .. }, "der")
    ));
    // Turned back.
    sc.world.rods[0]
        .positions()
        .iter()
        .map(|p| q.transpose() * p)
        .collect()
}

/// Largest distance between corresponding nodes of the turned solutions and the reference
/// (unturned, normal +y), over L.
fn spread(model: &str, elements: usize, f: &Vec3, g: &Vec3, density: f64) -> f64 {
    let reference = solve(
        model,
        elements,
        &Mat3::identity(),
        &Vec3::y(),
        f,
        g,
        density,
    );
    let tip = reference[elements];
    // The problem is not trivial: the tip moves by a good fraction of L.
    assert!(
        (tip - Vec3::x() * L).norm() > 0.1 * L,
        "{model}: tip {tip:?}"
    );
    let mut worst: f64 = 0.0;
    for q in rotations() {
        for n in normals() {
            let x = solve(model, elements, &q, &n, f, g, density);
            let d = x
                .iter()
                .zip(&reference)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            worst = worst.max(d / L);
        }
    }
    worst
}

/// Tip load α = P L²/EI along -z (the case: STRANDS failed at α = 2, 3 and 5).
fn tip_load(model: &str, elements: usize, alpha: f64) -> f64 {
    let f = -Vec3::z() * (alpha * ei() / (L * L));
    let s = spread(model, elements, &f, &Vec3::zeros(), 1000.0);
    println!("{model}: tip load α = {alpha}: largest node distance {s:.2e} L");
    s
}

/// Self-weight γ = ρ A g L³/EI = 3 along -z, no tip load.
fn heavy(model: &str, elements: usize) -> f64 {
    let g = 9.81;
    let area = std::f64::consts::PI * R * R;
    let density = 3.0 * ei() / (area * g * L.powi(3));
    let s = spread(model, elements, &Vec3::zeros(), &(-Vec3::z() * g), density);
    println!("{model}: self-weight γ = 3: largest node distance {s:.2e} L");
    s
}

// Tolerances: about 3× the largest spread measured (printed by each test), over L. They are
// at the rounding level of each solver: STRANDS and DER meet their tolerances at rounding; the
// Cosserat rod's Newton stops at a residual whose position error its stiff stretch-shear
// (EA L²/EI = 6e4 here) magnifies, 3.5e-13 L with 40 elements, 5.4e-11 L with 80. A real
// dependence on orientation is O(1): STRANDS failed to solve at all before the fix.

#[test]
fn strands_shape_does_not_depend_on_orientation_or_normal() {
    // Measured: 8.8e-16, 1.05e-15, 1.04e-15 L (α = 2, 3, 5); 8.4e-16 L (self-weight).
    for alpha in [2.0, 3.0, 5.0] {
        let s = tip_load("strands", 80, alpha);
        assert!(s < 3e-15, "α = {alpha}: {s:e} L");
    }
    let s = heavy("strands", 80);
    assert!(s < 3e-15, "{s:e} L");
}

#[test]
fn cosserat_shape_does_not_depend_on_orientation_or_normal() {
    // Measured: 3.5e-11, 5.4e-11, 2.6e-11 L (α = 2, 3, 5); 2.6e-13 L (self-weight).
    for alpha in [2.0, 3.0, 5.0] {
        let s = tip_load("cosserat", 80, alpha);
        assert!(s < 1.5e-10, "α = {alpha}: {s:e} L");
    }
    let s = heavy("cosserat", 80);
    assert!(s < 8e-13, "{s:e} L");
}

#[test]
fn der_shape_does_not_depend_on_orientation_or_normal() {
    // Measured: 2.8e-12, 3.0e-12, 3.9e-12 L (α = 2, 3, 5); 1.28e-11 L (self-weight); bounds
    // about 2× over (`cargo test --release --test orientation der -- --nocapture` prints
    // nothing; the assertion message gives the figure). Since DER runs on the one Newton host
    // (rod::implicit::newton, issue #21) it stops by the Cosserat loop's rules, at a relative
    // residual of 1e-9, and the spread is where each turned solve stops, as for Cosserat
    // above (with the old DER loop it was 1.2e-14 L). A real dependence is O(1).
    for alpha in [2.0, 3.0, 5.0] {
        let s = tip_load("der", 80, alpha);
        assert!(s < 8e-12, "α = {alpha}: {s:e} L");
    }
    let s = heavy("der", 80);
    assert!(s < 2.5e-11, "{s:e} L");
}
