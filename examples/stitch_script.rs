//! Writes a device trajectory (the `scripted:` CSV of `suture run`) that drives one whole
//! interrupted stitch in scenes/interrupted_stitch.toml, the way tests/suturing.rs drives the
//! world directly: lower the needle onto the skin, rotate it about its centre through the left
//! mark, under the wound and out at the right mark, let go, take the needle again at its point
//! (the grasp button, twice), rotate on until the swage is through, then pull the suture
//! through and tighten. World poses are mapped back to the device through the scene's
//! workspace map, so `suture run --device scripted:FILE` reproduces them.
//!
//! `cargo run --release --example stitch_script > docs/screens/full_stitch.csv`
//!
//! With `-- --soak SECONDS` the trainee then keeps working until SECONDS (issue #9's soak):
//! keeps the needle moving in loops from where the stitch ended, as when wrapping the suture
//! for an instrument tie, letting go of the needle 20 s into every 30 s and taking it again at
//! its point 0.19 s later. The loops (a circle every 4 s, changing sense every 8 s, reached
//! over the first 2 s) are either
//! - `--loops within-reach` (the default): 1 cm across the line from the swage to the exit
//!   mark, drawing toward the mark and back over 8 s. The suture's tail is clamped and the
//!   stitch is tight, so these keep the swage no farther from the mark than the stitch left
//!   it, as a trainee who feels the suture go taut does; or
//! - `--loops wide`: the first soak's, 1.5 cm over the wound, lifting up to 1 cm over 8 s.
//!   They draw the swage up to 3 cm farther from the mark: the trainee pulls against the taut
//!   suture (3–7 N of tension, the hand at the device's 3 N for much of the time) and breaks it
//!   sooner or later.

use std::f64::consts::PI;
use suture::coupling::WorkspaceMap;
use suture::math::{Quat, Vec3};
use suture::scene::{self, Overrides};

fn main() {
    let text = std::fs::read_to_string("scenes/interrupted_stitch.toml")
        .expect("run from the project root");
    let sc = scene::parse(
        "scenes/interrupted_stitch.toml",
        &text,
        Overrides::default(),
    )
    .expect("scene");
    let tool = sc.tools.first().copied().expect("the scene has a [tool]");
    let frame = suture::runtime::run::tool_frame(&sc.world, &tool);
    // The map `suture run` builds (cli/run.rs): no rotation, no flips, the tool's frame.
    WorkspaceMap::new(
        tool.workspace_scale,
        tool.workspace_offset,
        Quat::identity(),
        [false; 3],
    )
    .expect("the scene's workspace map is valid");
    let su = sc.world.suturing.as_ref().expect("a suturing scene");
    let shape = su.needle.shape;
    let grip0 = su.needle.grip;
    let deg = PI / 180.0;
    // Key times [s] and (point angle [rad], centre height [m], extra offset [m]); as in
    // tests/suturing.rs, with 0.2 s to let go and take the needle at its point at 3.5 s.
    let plan: Vec<(f64, f64, f64, Vec3)> = vec![
        (0.0, 180.0 * deg, 0.004, Vec3::zeros()),
        (0.5, 180.0 * deg, 0.001, Vec3::zeros()),
        (3.5, 358.0 * deg, 0.001, Vec3::zeros()),
        (3.7, 358.0 * deg, 0.001, Vec3::zeros()),
        (6.7, 548.0 * deg, 0.001, Vec3::zeros()),
        (8.2, 548.0 * deg, 0.001, Vec3::new(-0.012, 0.018, 0.0)),
        (9.7, 548.0 * deg, 0.001, Vec3::new(-0.012, 0.018, 0.0)),
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
    // The device's inverse map: world = offset + scale·p, world rotation = q·frame.
    let to_device = |p: &Vec3, r: &Quat| {
        (
            (p - tool.workspace_offset) / tool.workspace_scale,
            (r * frame.inverse()).scaled_axis(),
        )
    };
    let args: Vec<String> = std::env::args().collect();
    let soak = match args.iter().position(|a| a == "--soak") {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| *v > 9.7)
            .expect("--soak SECONDS (more than the stitch's 9.7 s)"),
        None => 9.7,
    };
    let h: f64 = 0.01;
    let n = (9.7 / h).round() as usize;
    let mut last = (Vec3::zeros(), Quat::identity());
    for k in 0..=n {
        let t = k as f64 * h;
        let (phi, cy, off) = pose(t);
        // Before 3.5 s the needle is held at the scene's grip; from 3.7 s at its point. In
        // between the device moves from the grip to the point with the needle let go
        // (button down at 3.50 s: release; down again at 3.69 s: take it at the point).
        let grip = if t < 3.5 {
            grip0
        } else if t < 3.7 {
            grip0 + (1.0 - grip0) * ((t - 3.5) / 0.19).min(1.0)
        } else {
            1.0
        };
        let (p, r) =
            suture::sim::needle::pose_on_circle(&shape, &Vec3::new(0.0, cy, 0.0), phi, grip);
        last = (p + off, r);
        let (dp, dr) = to_device(&(p + off), &r);
        let buttons = u32::from((3.5..3.52).contains(&t) || (3.69..3.71).contains(&t));
        println!(
            "{t:.2}, {:.7}, {:.7}, {:.7}, {:.7}, {:.7}, {:.7}, {buttons}",
            dp.x, dp.y, dp.z, dr.x, dr.y, dr.z
        );
    }
    let wide = match args.iter().position(|a| a == "--loops") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("wide") => true,
            Some("within-reach") => false,
            _ => panic!("--loops within-reach|wide"),
        },
        None => false,
    };
    // The soak: loops from where the stitch ended (pad plane x–z, y up). Within reach: with
    // s0 the swage there and d0 its distance to the exit mark X, the swage (the needle keeps
    // its frame, so it moves as the grip) follows
    //   s0 + ramp·(α (X − s0) + r ((cos ωu − 1) e1 + sin ωu e2)),  e1, e2 ⟂ X − s0,
    // whose distance to X is at most √((1 − α)² d0² + 4 r²) < d0 for α ≥ 0.2, r = 5 mm.
    let (p0, r0) = last;
    let (phi_end, cy_end, off) = pose(9.7);
    // Gripped at arc fraction 0, the needle's grip point is its swage.
    let s0 =
        suture::sim::needle::pose_on_circle(&shape, &Vec3::new(0.0, cy_end, 0.0), phi_end, 0.0).0
            + off;
    let exit = su
        .targets
        .iter()
        .find(|t| t.kind == suture::sim::suturing::TargetKind::Exit)
        .expect("the scene marks the exit")
        .position;
    let to_exit = exit - s0;
    let d0 = to_exit.norm();
    let (e1, e2) = (Vec3::z().cross(&to_exit).normalize(), Vec3::z());
    let r = 0.005;
    assert!(
        (0.64 * d0 * d0 + 4.0 * r * r).sqrt() < d0,
        "the loops would pull the suture (d0 = {d0} m)"
    );
    let m = ((soak - 9.7) / h).round() as usize;
    for k in 1..=m {
        let t = 9.7 + k as f64 * h;
        let u = t - 9.7;
        let ramp = (u / 2.0).min(1.0);
        let sense = if (u / 8.0).floor() as i64 % 2 == 0 {
            1.0
        } else {
            -1.0
        };
        let w = sense * std::f64::consts::TAU / 4.0;
        let slow = (std::f64::consts::TAU * u / 8.0).cos();
        let p = if wide {
            let lift = 0.005 * (1.0 - slow);
            p0 + Vec3::new(0.015 * ((w * u).cos() - 1.0), lift, 0.015 * (w * u).sin()) * ramp
        } else {
            let alpha = 0.3 - 0.1 * slow;
            p0 + (to_exit * alpha + (e1 * ((w * u).cos() - 1.0) + e2 * (w * u).sin()) * r) * ramp
        };
        let (dp, dr) = to_device(&p, &r0);
        let c = u % 30.0;
        let buttons = u32::from((20.0..20.02).contains(&c) || (20.19..20.21).contains(&c));
        println!(
            "{t:.2}, {:.7}, {:.7}, {:.7}, {:.7}, {:.7}, {:.7}, {buttons}",
            dp.x, dp.y, dp.z, dr.x, dr.y, dr.z
        );
    }
}
