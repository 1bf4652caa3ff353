//! Issue #6: a scripted needle driver sutures the interrupted-stitch scene end to end.
//!
//! The driver moves the ideal needle pose the way surgeons are taught: lower the needle onto
//! the skin, rotate it about its own centre so the point follows the arc (in at the left mark,
//! under the wound, out at the right mark), regrasp at the point, rotate on until the swage is
//! through, then pull the suture through and tighten. The needle follows through the virtual
//! coupling, so every force the tissue makes is in the coupling force the hand would feel.

use suture::coupling::VirtualCoupling;
use suture::math::{Quat, Vec3};
use suture::scene::{self, Overrides};
use suture::sim::suturing::{EventKind, Through};
use suture::sim::tool::ToolSpring;
use suture::sim::{Tool, World};
use suture::tissue::Face;

/// Pose of the ideal needle with its point at angle `phi` [rad] on the circle of centre `c`
/// (in the x–y plane), gripped at fraction `grip`: (grip position, frame).
fn ideal(world: &World, phi: f64, c: &Vec3, grip: f64) -> (Vec3, Quat) {
    let s = world.suturing.as_ref().unwrap();
    suture::sim::needle::pose_on_circle(&s.needle.shape, c, phi, grip)
}

struct Run {
    world: World,
    /// Largest depth of the needle in the tissue with no hole to be in [m].
    needle_stray: f64,
    /// The step error that ended the run early, if any.
    error: Option<String>,
    /// Steps whose Newton solve hit its iteration cap.
    unconverged: usize,
    /// (time, |coupling force| [N], tip force [N], gap at z = 0 [m]).
    /// Per step: time [s], coupling force [N], tip force [N], wound gap [m], tension [N].
    trace: Vec<(f64, f64, f64, f64, f64)>,
    /// Largest penetration of a suture node outside the tissue's passages below the skin [m].
    worst_outside: f64,
}

/// The plan: key times and (point angle [rad], centre height [m], extra grip offset [m]).
fn drive(text: &str, plan: &[(f64, f64, f64, Vec3)], regrasp_at: f64, t_end: f64) -> Run {
    let sc = scene::parse("interrupted_stitch.toml", text, Overrides::default()).unwrap();
    let setup = sc.tools[0];
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
    let h = 1e-3;
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
    let mut trace = Vec::new();
    let mut worst_outside = 0.0f64;
    let steps = (t_end / h).round() as usize;
    let mut regrasped = false;
    let mut error = None;
    let mut unconverged = 0;
    let mut needle_stray = 0.0f64;
    for k in 0..steps {
        let t = (k + 1) as f64 * h;
        if !regrasped && t >= regrasp_at {
            let s = world.suturing.as_mut().unwrap();
            let tip = s.needle.tip();
            s.set_held(t, false, &tip);
            s.set_held(t, true, &tip);
            regrasped = true;
        }
        let grip = world.suturing.as_ref().unwrap().needle.grip;
        let (phi, cy, off) = pose(t);
        let (p1, r1) = ideal(&world, phi, &Vec3::new(0.0, cy, 0.0), grip);
        let (phi0, cy0, off0) = pose(t - h);
        let (p0, _) = ideal(&world, phi0, &Vec3::new(0.0, cy0, 0.0), grip);
        let spring = &mut tools[0].coupling;
        spring.target = p1 + off;
        spring.target_velocity = (p1 + off - p0 - off0) / h;
        spring.target_rotation = r1;
        let out = world.step(&mut tools, &[None], h);
        match out.error {
            Some(e) => {
                error = Some(format!("t {t}: {e}"));
                break;
            }
            None => unconverged += usize::from(!out.converged),
        }
        let s = world.suturing.as_ref().unwrap();
        // Suture nodes below the skin must be inside a passage's channel.
        let x = world.rods[0].positions();
        let inside = s.suture_inside();
        for (i, p) in x.iter().enumerate() {
            if !inside[i] && p.x.abs() < 0.04 && p.z.abs() < 0.025 {
                worst_outside = worst_outside.max(-p.y - world.rods[0].radius);
            }
        }
        // The needle is in the tissue only through its holes (or pressing before one).
        if !s.tip_in_tissue()
            && !s
                .passages
                .iter()
                .any(|p| matches!(p.through, Through::Needle(_)))
        {
            for k in 0..=20 {
                let q = s.needle.point(s.needle.shape.arc_angle * k as f64 / 20.0);
                if let Some(m) = s.tissue.locate(&q) {
                    let (_, _, depth) = s.tissue.nearest_face(m.half, &m.rest);
                    needle_stray = needle_stray.max(depth);
                }
            }
        }
        trace.push((
            t,
            s.needle.coupling_force.norm(),
            s.tip_force,
            s.tissue.gap_at(0.0),
            out.tension,
        ));
    }
    Run {
        world,
        trace,
        worst_outside,
        needle_stray,
        error,
        unconverged,
    }
}

fn stitch_plan() -> Vec<(f64, f64, f64, Vec3)> {
    use std::f64::consts::PI;
    let deg = PI / 180.0;
    vec![
        (0.0, 180.0 * deg, 0.004, Vec3::zeros()),
        (0.5, 180.0 * deg, 0.001, Vec3::zeros()),
        (3.5, 358.0 * deg, 0.001, Vec3::zeros()),
        (6.5, 548.0 * deg, 0.001, Vec3::zeros()),
        (8.0, 548.0 * deg, 0.001, Vec3::new(-0.012, 0.018, 0.0)),
        (9.5, 548.0 * deg, 0.001, Vec3::new(-0.012, 0.018, 0.0)),
    ]
}

fn scene_text() -> String {
    std::fs::read_to_string("scenes/interrupted_stitch.toml").unwrap()
}

fn events(run: &Run) {
    let s = run.world.suturing.as_ref().unwrap();
    for e in &s.events {
        println!("{:.3} s: {:?}", e.time, e.kind);
    }
    println!(
        "unconverged steps {}, needle stray depth {:.2e} m, suture below the skin outside holes {:.2e} m",
        run.unconverged, run.needle_stray, run.worst_outside
    );
}

/// Newton convergence (#26): the steps of a run that ended at the iteration cap, against
/// the count `measured` for that run (deterministic; `cargo test --release --test suturing --
/// --nocapture` prints it, 2026-11-26) plus 20 %, at least one step where any were measured,
/// so a regression that doubles them fails. A capped step goes on from where it stopped.
fn assert_converged(run: &Run, measured: usize) {
    let bound = measured + (measured / 5).max(usize::from(measured > 0));
    assert!(
        run.unconverged <= bound,
        "{} steps at the iteration cap (measured {measured}, bound {bound})",
        run.unconverged
    );
}

/// Done-when 1 and 2: one entry within 1 mm of its mark, one exit, the suture through both
/// sides, nothing in the tissue except through its holes, the incision closed by tightening;
/// the coupling force rises while the point presses on the skin and drops when it pierces.
#[test]
fn interrupted_stitch_end_to_end() {
    let run = drive(&scene_text(), &stitch_plan(), 3.5, 9.5);
    events(&run);
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_converged(&run, 2);
    let s = run.world.suturing.as_ref().unwrap();
    let r = run.world.rods[0].radius;
    // One skin entry, on its mark; one skin exit, on its mark.
    let entries: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Puncture {
                face: Face::Top,
                target_error,
                repeat,
                angle,
                ..
            } => Some((e.time, target_error, repeat, angle)),
            _ => None,
        })
        .collect();
    assert_eq!(entries.len(), 1, "skin entries: {entries:?}");
    let (t_p, err, repeat, angle) = entries[0];
    assert!(!repeat);
    assert!(err.unwrap() < 1e-3, "entry {err:?} m from its mark");
    println!(
        "entry {:.2} mm from its mark at {:.0}° to the normal",
        err.unwrap() * 1e3,
        angle.to_degrees()
    );
    let exits: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Exit {
                face: Face::Top,
                target_error,
                ..
            } => Some(target_error),
            _ => None,
        })
        .collect();
    assert_eq!(exits.len(), 1, "skin exits: {exits:?}");
    assert!(
        exits[0].unwrap() < 1e-3,
        "exit {:?} m from its mark",
        exits[0]
    );
    assert!(!s.events.iter().any(|e| matches!(
        e.kind,
        EventKind::Repuncture { .. } | EventKind::Withdrawn { .. } | EventKind::SutureBroken { .. }
    )));
    // The suture runs through both sides: its four holes (skin and wound face of each half).
    let through: Vec<_> = s
        .passages
        .iter()
        .filter(|p| matches!(p.through, Through::Suture(_)))
        .map(|p| (p.point.half, p.face))
        .collect();
    println!("the suture runs through {through:?}");
    for half in 0..2 {
        for face in [Face::Top, Face::Wound] {
            assert!(
                through.contains(&(half, face)),
                "not through {half} {face:?}"
            );
        }
    }
    // Nothing in the tissue except through its holes: suture nodes outside the channels stay
    // on the skin (within the contact's tolerance, half the radius), and the needle's centre
    // line is never inside without a hole or its point pressing (deeper than a tenth of the
    // wire radius: the swage or point just leaving a face).
    assert!(
        run.worst_outside <= 0.5 * r + 1e-6,
        "suture {:.2e} m into the skin",
        run.worst_outside
    );
    let wire = s.needle.shape.wire_radius;
    assert!(
        run.needle_stray < 0.1 * wire,
        "needle {:.2e} m deep with no hole",
        run.needle_stray
    );
    // Tightening closes the incision: 3 mm at rest, under 0.5 mm over the last half second.
    let g0 = run.trace[0].3;
    let tail: Vec<f64> = run
        .trace
        .iter()
        .filter(|p| p.0 > 9.0)
        .map(|p| p.3)
        .collect();
    let g1 = tail.iter().sum::<f64>() / tail.len() as f64;
    println!("gap {:.3} mm → {:.3} mm", g0 * 1e3, g1 * 1e3);
    assert!((g0 - 3e-3).abs() < 1e-4);
    assert!(g1.abs() < 0.5e-3, "gap {g1}");
    // Done-when 2: the coupling force rises while the point presses and drops at puncture.
    let f_at = |t: f64| run.trace[((t / 1e-3).round() as usize).saturating_sub(1)].1;
    let window = |a: f64, b: f64| {
        run.trace
            .iter()
            .filter(move |p| p.0 >= a && p.0 <= b)
            .map(|p| p.1)
    };
    let peak = window(t_p - 0.05, t_p).fold(0.0, f64::max);
    let after = window(t_p + 0.05, t_p + 0.2).sum::<f64>() / 151.0;
    let samples: Vec<f64> = (0..=8).map(|k| f_at(t_p - 0.8 + 0.1 * k as f64)).collect();
    println!(
        "coupling force before puncture (every 0.1 s to {t_p:.3} s): {samples:.3?}; peak {peak:.3} N, after {after:.3} N"
    );
    let rising = samples.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(rising >= 7, "not rising: {samples:?}");
    assert!(peak > 2.0 * samples[0]);
    assert!(after < 0.6 * peak, "no drop: {peak} → {after}");
}

/// Done-when 3a: pulling too hard breaks the suture (here a weakened one, 0.8 N), the break
/// is reported with its tension, and the scene goes on: the needle, now free of the suture's
/// pull, hangs in the coupling under its own weight.
#[test]
fn pulling_too_hard_breaks_the_suture_and_the_scene_goes_on() {
    use std::f64::consts::PI;
    let text = scene_text().replace("size = \"3-0\"", "size = \"3-0\"\nbreaking_force = 0.8");
    let deg = PI / 180.0;
    let mut plan = stitch_plan();
    plan.truncate(4);
    plan.push((8.5, 548.0 * deg, 0.001, Vec3::new(-0.02, 0.03, 0.0)));
    plan.push((9.5, 548.0 * deg, 0.001, Vec3::new(-0.02, 0.03, 0.0)));
    let run = drive(&text, &plan, 3.5, 9.5);
    events(&run);
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_converged(&run, 4);
    let s = run.world.suturing.as_ref().unwrap();
    let breaks: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SutureBroken { tension, .. } => Some((e.time, tension)),
            _ => None,
        })
        .collect();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let (t_b, tension) = breaks[0];
    // The tension is checked once a step (1 ms), so the break is reported at the first step
    // over 0.8 N: the step before it was under 0.8 N. (The tension does not rise smoothly:
    // the suture sticks and slips in its channels, and from step to step it moves by up to
    // 0.2 N here; measured 0.7946 N the step before and 0.8026 N at the break,
    // `cargo test --release --test suturing pulling_too_hard -- --nocapture`.)
    let before = run
        .trace
        .iter()
        .rev()
        .find(|p| p.0 < t_b - 0.5e-3)
        .map(|p| p.4)
        .unwrap();
    println!("tension {before:.6} N the step before the break, {tension:.6} N at it");
    assert!(
        before < 0.8 && tension > 0.8,
        "broke at {tension} N after {before} N"
    );
    let mean = |a: f64, b: f64| {
        let v: Vec<f64> = run
            .trace
            .iter()
            .filter(|p| p.0 >= a && p.0 <= b)
            .map(|p| p.1)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let before = mean(t_b - 0.1, t_b);
    let after = mean(9.0, 9.5);
    println!("coupling force {before:.3} N before the break, {after:.3} N at the end");
    assert!(after < 0.5 * before);
    assert!(run.world.suturing.as_ref().unwrap().is_finite());
}

/// Done-when 3b: driving the needle sideways (off its arc) inside the tissue is resisted —
/// the coupling force climbs far above what driving along the arc takes — until the tissue
/// tears and the needle cuts a new path, reported as a re-puncture.
#[test]
fn driving_the_needle_sideways_is_resisted_and_tears() {
    use std::f64::consts::PI;
    let deg = PI / 180.0;
    let phi = (180.0 + (2.3 - 0.5) / 3.0 * 178.0) * deg;
    let plan = vec![
        (0.0, 180.0 * deg, 0.004, Vec3::zeros()),
        (0.5, 180.0 * deg, 0.001, Vec3::zeros()),
        (2.3, phi, 0.001, Vec3::zeros()),
        (2.8, phi, 0.001, Vec3::new(0.0, 0.0, 0.04)),
        (3.2, phi, 0.001, Vec3::new(0.0, 0.0, 0.04)),
    ];
    let run = drive(&scene_text(), &plan, 10.0, 3.2);
    events(&run);
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_converged(&run, 0);
    let s = run.world.suturing.as_ref().unwrap();
    let max = |a: f64, b: f64| {
        run.trace
            .iter()
            .filter(|p| p.0 >= a && p.0 <= b)
            .map(|p| p.1)
            .fold(0.0, f64::max)
    };
    let along = max(1.9, 2.3);
    let sideways = max(2.3, 3.2);
    println!("coupling force: along the arc ≤ {along:.3} N, sideways up to {sideways:.3} N");
    assert!(sideways > 3.0 * along && sideways > 2.0, "not resisted");
    let tears: Vec<_> = s
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Repuncture { .. }))
        .map(|e| e.time)
        .collect();
    assert!(!tears.is_empty() && tears[0] > 2.3, "no tear: {tears:?}");
}

/// Done-when 4: every task scene loads and runs headless for 5 s in the real-time loops (the
/// device holds still), with no failed step and the physics keeping pace.
#[test]
fn task_scenes_run_headless_for_five_seconds() {
    let script = std::env::temp_dir().join(format!("suture-still-{}.csv", std::process::id()));
    std::fs::write(&script, "0, 0, 0, 0, 0, 0, 0, 0\n10, 0, 0, 0, 0, 0, 0, 0\n").unwrap();
    for scene in [
        "scenes/interrupted_stitch.toml",
        "scenes/running_stitch.toml",
        "scenes/knot_tying.toml",
        "scenes/suturing.toml",
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
            .args(["run", scene, "--headless", "--duration", "5", "--no-record"])
            .arg(format!("--device=scripted:{}", script.display()))
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        println!("{scene}:\n{out}{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{scene}");
        // `physics period …, step M/X µs mean/max, N steps, U unconverged, F failed`
        let line = out
            .lines()
            .find(|l| l.starts_with("physics period"))
            .unwrap();
        let field = |name: &str| -> f64 {
            let i = line.find(name).unwrap();
            line[..i]
                .split_whitespace()
                .last()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert_eq!(field(" failed"), 0.0, "{scene}: {line}");
        assert!(field(" steps,") >= 4500.0, "{scene}: {line}");
    }
    let _ = std::fs::remove_file(&script);
}

/// The "knot tied" event comes from the suture's geometry alone (crate::topology): the
/// overhand knot of scenes/knot_overhand.toml, swaged on a needle over a deformable pad, is
/// reported as a trefoil (determinant 3) after the first frame of offline stepping.
#[test]
fn a_knotted_suture_is_reported_as_tied() {
    let text = std::fs::read_to_string("scenes/knot_overhand.toml").unwrap();
    let cut = text.find("[rods.start_motion]").unwrap();
    let text = text[..cut].replace("end = \"clamped\"", "end = \"free\"")
        + r#"
[tool]
at = "end"

[needle]
arc = "3/8"
radius = 0.012
wire_radius = 0.0004

[tissue]
center = [0.0, -0.5, 0.0]
size = [0.2, 0.02, 0.2]
youngs_modulus = 60e3
spacing = 0.02
"#;
    let mut sc = scene::parse("knotted.toml", &text, Overrides::default()).unwrap();
    sc.world.advance_to(0.002).unwrap();
    let s = sc.world.suturing.as_ref().unwrap();
    let knots: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::KnotTied {
                name, determinant, ..
            } => Some((name, determinant)),
            _ => None,
        })
        .collect();
    println!("{knots:?}");
    assert_eq!(knots, vec![(Some("trefoil"), 3)]);
}
