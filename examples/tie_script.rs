//! The instrument tie, scripted (issue #22): the two hands' device trajectories that tie off
//! the placed stitch of scenes/instrument_tie.toml with two needle drivers, as a surgeon does
//! it (../shared/design/instrument-tie.md):
//!
//! 1. the right driver, jaws closed, lies over the wound parallel to it (jaws along z);
//! 2. the left hand, holding the needle, wraps the long end around the driver's jaws: a
//!    helix about the jaws' axis, once (or twice, the first throw of a surgeon's knot), in
//!    one sense or the other;
//! 3. the driver opens, takes the short tail near its end, closes, and backs out along its
//!    jaws so the wraps slide off the tip over the tail;
//! 4. the hands cross to opposite sides and pull the throw down flat onto the wound;
//! 5. the driver lets go of the tail, and the next throw is wrapped (the other sense for a
//!    square knot, the same sense for a granny).
//!
//! **Status: the plan does not tie a knot yet** (issue #22 stays open). Run with `--run`, the
//! driver's orbit does not catch the long end (the strand has a centimetre of slack and is
//! not where the open-loop plan aims: `jawdist` stays over 2.5 mm, `wraps` does not grow), and
//! the driver sweeping to the tail with open jaws breaks the suture. What it needs next: aim
//! at the strand's present geometry (closed loop, as a surgeon looks), the left hand holding
//! the long end itself close to the wound (an instrument can grasp the suture), and the
//! wraps checked step by step with the winding number it prints. (`-- --orbit` is the
//! closed-loop experiment, see `orbit_experiment`.)
//!
//! `cargo run --release --example tie_script -- square OUT_DIR` writes `OUT_DIR/right.csv` and
//! `OUT_DIR/left.csv` (the `scripted:` CSV of `suture run`, device coordinates through each
//! instrument's workspace map: `suture run scenes/instrument_tie.toml --headless
//! --device right=scripted:OUT_DIR/right.csv,left=scripted:OUT_DIR/left.csv`). The knots:
//! `square`, `granny`, `surgeons`. With `--run` it steps the scene offline through
//! `World::step` with the same targets and prints what happened.

use std::f64::consts::PI;
use suture::math::{Quat, Vec3};
use suture::scene::{self, Overrides, Scene};
use suture::sim::{ToolTarget, World};

/// Which knot to tie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knot {
    /// Two single throws of opposite sense.
    Square,
    /// Two single throws of the same sense.
    Granny,
    /// A double throw, then a single one of the opposite sense.
    Surgeons,
}

/// One key of a hand's trajectory (world frame): time [s], position [m], orientation,
/// buttons held from this key to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Key {
    /// Time [s].
    pub t: f64,
    /// Position [m] of the instrument's hinge (world).
    pub p: Vec3,
    /// Orientation (body → world).
    pub q: Quat,
    /// Buttons.
    pub buttons: u32,
}

/// A hand's plan: keys in time order.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The keys.
    pub keys: Vec<Key>,
}

impl Plan {
    fn at(&mut self, t: f64, p: Vec3, q: Quat) {
        self.keys.push(Key {
            t,
            p,
            q,
            buttons: 0,
        });
    }

    /// Press the jaw button at `t` for 20 ms (it toggles the jaws), where the hand is then.
    fn press(&mut self, t: f64) {
        let (p, q) = self.pose(t);
        self.keys.push(Key {
            t,
            p,
            q,
            buttons: 1,
        });
        self.keys.push(Key {
            t: t + 0.02,
            p,
            q,
            buttons: 0,
        });
        self.keys.sort_by(|a, b| a.t.total_cmp(&b.t));
    }

    /// Keys in time order, one per time (the buttons of keys at one time merged, the pose of
    /// the last one given).
    fn finish(&mut self) {
        self.keys.sort_by(|a, b| a.t.total_cmp(&b.t));
        let mut out: Vec<Key> = Vec::with_capacity(self.keys.len());
        for k in self.keys.drain(..) {
            match out.last_mut() {
                Some(last) if (k.t - last.t).abs() < 1e-9 => {
                    let b = last.buttons | k.buttons;
                    *last = k;
                    last.buttons = b;
                }
                _ => out.push(k),
            }
        }
        self.keys = out;
    }

    /// The pose at `t` (linear between keys, slerp of the orientation).
    pub fn pose(&self, t: f64) -> (Vec3, Quat) {
        let k = &self.keys;
        let i = k.partition_point(|x| x.t <= t);
        if i == 0 {
            return (k[0].p, k[0].q);
        }
        if i == k.len() {
            return (k[i - 1].p, k[i - 1].q);
        }
        let (a, b) = (&k[i - 1], &k[i]);
        let s = ((t - a.t) / (b.t - a.t)).clamp(0.0, 1.0);
        (a.p + (b.p - a.p) * s, a.q.slerp(&b.q, s))
    }

    /// The buttons held at `t`.
    pub fn buttons(&self, t: f64) -> u32 {
        let i = self.keys.partition_point(|x| x.t <= t);
        if i == 0 { 0 } else { self.keys[i - 1].buttons }
    }

    /// The device target at `t` (velocity by central differences over 1 ms).
    pub fn target(&self, t: f64) -> ToolTarget {
        let (p, q) = self.pose(t);
        let d = 5e-4;
        let v = (self.pose(t + d).0 - self.pose((t - d).max(0.0)).0) / (t + d - (t - d).max(0.0));
        ToolTarget {
            t,
            position: p,
            rotation: q,
            velocity: v,
            angular_velocity: Vec3::zeros(),
            buttons: self.buttons(t),
            hand_force: Vec3::zeros(),
        }
    }

    /// When the plan ends [s].
    pub fn end(&self) -> f64 {
        self.keys.last().map_or(0.0, |k| k.t)
    }
}

/// The two hands' plans (right, left) for `knot` on the scene's placed stitch.
pub fn plans(sc: &Scene, knot: Knot) -> (Plan, Plan) {
    let set = sc
        .world
        .suturing
        .as_ref()
        .and_then(|su| su.instruments.as_ref())
        .expect("an instrument scene");
    let (r0, l0) = (&set.list[0], &set.list[1]);
    let (qr, ql) = (r0.rotation, l0.rotation);
    let mut right = Plan::default();
    let mut left = Plan::default();
    // The jaws' centre over the wound, where the wraps go [m].
    let half = 0.5 * r0.spec.jaw_length;
    // The driver's hinge for a jaw centre c (jaws along +z).
    let hinge = |c: Vec3| c - Vec3::new(0.0, 0.0, half);
    // The left hand's needle grip relative to its hinge (the helix moves the grip).
    let grip_off = l0.rotation.inverse()
        * (sc.world.suturing.as_ref().unwrap().needle.grip_position - l0.position);
    let lhinge = |g: Vec3| g - ql * grip_off;
    right.at(0.0, r0.position, qr);
    left.at(0.0, l0.position, ql);
    let mut t = 0.0;
    let throws: Vec<(f64, u32)> = match knot {
        Knot::Square => vec![(1.0, 1), (-1.0, 1)],
        Knot::Granny => vec![(1.0, 1), (1.0, 1)],
        Knot::Surgeons => vec![(1.0, 2), (-1.0, 1)],
    };
    for (n, &(sense, wraps)) in throws.iter().enumerate() {
        // The side the tail is on: left before the first throw, then alternating (the hands
        // cross at every throw).
        let tail_side = if n % 2 == 0 { -1.0 } else { 1.0 };
        let exit = Vec3::new(-tail_side * 0.008, 0.0, 0.0);
        // 1. The left hand holds the long end up and nearly taut; the driver comes beside
        // the strand, 2.5 cm over the wound, its jaws across it.
        t += 1.0;
        // The strand where the scene laid it (first throw) or where the last throw's pull
        // left it: the point of the long end 18 mm over the skin.
        let x0 = sc.world.rods[0].positions();
        let s_pt = if n == 0 {
            let k = x0.iter().rposition(|p| p.y < 0.018).expect("a long end");
            x0[k] + (x0[k + 1] - x0[k]) * ((0.018 - x0[k].y) / (x0[k + 1] - x0[k]).y)
        } else {
            exit + Vec3::new(-tail_side * 0.004, 0.018, 0.0)
        };
        let hand = if n == 0 {
            sc.world.suturing.as_ref().unwrap().needle.grip_position
        } else {
            exit + Vec3::new(-tail_side * 0.004, 0.045, 0.0)
        };
        left.at(t, lhinge(hand), ql);
        let orbit = 0.004;
        let jaw_at = |a: f64, f: f64| {
            s_pt + Vec3::new(orbit * a.cos(), orbit * a.sin(), 0.0)
                - Vec3::new(0.0, 0.0, (0.3 + 0.25 * f) * r0.spec.jaw_length)
        };
        let a0 = if tail_side < 0.0 { PI } else { 0.0 };
        right.at(t, jaw_at(a0, 0.0), qr);
        // 2. The driver's jaws orbit the strand `wraps` times in `sense`, backing along their
        // axis so the wraps lie side by side; the left hand comes down by the length a wrap
        // takes (1 cm) so the strand stays just taut.
        let turn = 2.0;
        let steps = 24 * wraps as usize;
        for k in 1..=steps {
            let f = k as f64 / steps as f64;
            let a = a0 + sense * 2.0 * PI * wraps as f64 * f;
            let tk = t + turn * wraps as f64 * f;
            right.at(tk, jaw_at(a, f * wraps as f64), qr);
            left.at(
                tk,
                lhinge(hand - Vec3::new(0.0, 0.006 * wraps as f64 * f, 0.0)),
                ql,
            );
        }
        t += turn * wraps as f64;
        let lend = left.pose(t).0;
        let from = right.pose(t).0;
        // 3. The driver opens and goes to the tail near its end; the left hand moves with it
        // (the wraps keep their shape).
        right.press(t);
        let tail = Vec3::new(tail_side * 0.021, 0.0004, 0.0);
        let to = hinge(tail) + Vec3::new(0.0, 0.0, -0.004);
        t += 1.5;
        right.at(t, to, qr);
        left.at(t, lend + (to - from), ql);
        right.press(t);
        t += 0.3;
        right.at(t, to, qr);
        let lnow = left.pose(t).0;
        left.at(t, lnow, ql);
        // Back out along the jaws: the wraps slide off the tip over the tail.
        t += 1.5;
        right.at(t, to + Vec3::new(0.0, 0.004, -0.020), qr);
        left.at(t, lnow, ql);
        // 4. The hands cross and pull the throw down flat onto the wound.
        t += 1.5;
        right.at(t, hinge(Vec3::new(-tail_side * 0.030, 0.004, 0.0)), qr);
        left.at(t, lhinge(Vec3::new(tail_side * 0.035, 0.006, 0.0)), ql);
        t += 1.0;
        right.at(t, hinge(Vec3::new(-tail_side * 0.034, 0.002, 0.0)), qr);
        left.at(t, lhinge(Vec3::new(tail_side * 0.040, 0.004, 0.0)), ql);
        // 5. Let go of the tail.
        right.press(t);
        t += 0.3;
        right.at(t, hinge(Vec3::new(-tail_side * 0.034, 0.008, 0.0)), qr);
        left.at(t, lhinge(Vec3::new(tail_side * 0.040, 0.004, 0.0)), ql);
    }
    t += 0.5;
    right.at(t, right.pose(t).0, qr);
    left.at(t, left.pose(t).0, ql);
    right.finish();
    left.finish();
    (right, left)
}

/// Load the tie scene.
pub fn scene() -> Scene {
    let path = "scenes/instrument_tie.toml";
    let text = std::fs::read_to_string(path).expect("run from the project root");
    scene::parse(path, &text, Overrides::default()).expect("scene")
}

/// The scene's tools over `world`, as the live run builds them (runtime::run::start_tool).
pub fn start_tools(sc: &Scene, world: &World) -> Vec<suture::sim::Tool> {
    sc.tools
        .iter()
        .map(|t| {
            suture::runtime::run::start_tool(world, t, 0.0)
                .expect("tool")
                .tool
        })
        .collect()
}

/// Step `world` through both plans to their end (offline, the live loop's `World::step`),
/// calling `each` after every step.
pub fn run(
    sc: &Scene,
    world: &mut World,
    (right, left): &(Plan, Plan),
    mut each: impl FnMut(&World, &suture::sim::StepOutputs),
) {
    let h = world.dt().expect("a dynamic scene");
    let mut tools = start_tools(sc, world);
    let end = right.end().max(left.end());
    let steps = (end / h).round() as usize;
    for _ in 0..steps {
        let t = world.time + h;
        let targets = [Some(right.target(t)), Some(left.target(t))];
        let out = world.step(&mut tools, &targets, h);
        each(world, &out);
    }
}

/// How often the suture winds about the right driver's jaws' axis [turns] (over the nodes
/// beside the jaws), and its nearest approach to the upper jaw's core [m]: what shows a wrap.
pub fn wraps_and_jaw_distance(world: &World) -> (f64, f64) {
    let set = world
        .suturing
        .as_ref()
        .and_then(|su| su.instruments.as_deref())
        .expect("an instrument scene");
    let jr = &set.list[0];
    let inv = jr.rotation.inverse();
    let x = world.rods[0].positions();
    let mut wind = 0.0;
    let mut last: Option<f64> = None;
    for q in x {
        let b = inv * (q - jr.position);
        if !(-0.002..=jr.spec.jaw_length + 0.002).contains(&b.z) {
            last = None;
            continue;
        }
        let a = b.y.atan2(b.x);
        if let Some(l) = last {
            // The turn from the last node, in (−π, π].
            wind += (a - l + PI).rem_euclid(2.0 * PI) - PI;
        }
        last = Some(a);
    }
    let (a, b, _) = jr.capsules()[0];
    let dmin = x
        .windows(2)
        .map(|w| suture::contact::segment::distance(&w[0], &w[1], &a, &b).distance)
        .fold(f64::INFINITY, f64::min);
    (wind / (2.0 * PI), dmin)
}

/// The long end's point `height` [m] over the skin, as the suture lies now (from the needle
/// end down: the first node under that height and the one above it).
pub fn strand_at(world: &World, height: f64) -> Option<Vec3> {
    let x = world.rods[0].positions();
    let k = x.iter().rposition(|p| p.y < height)?;
    let (a, b) = (x[k], *x.get(k + 1)?);
    Some(a + (b - a) * ((height - a.y) / (b.y - a.y)))
}

/// An experiment (`-- --orbit [--reverse]`): does the driver's orbit, aimed at the strand
/// where it is at every step, wrap the long end on the jaws? Prints the winding number.
/// Found: no. The jaws reach the strand (0.9 mm at 1.5 s) but push it ahead of them, and the
/// orbit's centre, following the strand, runs after it (18 → 48 mm in 0.25 s) until the
/// strand is pulled to 75 N and the solve diverges. The left hand must keep the strand
/// under tension for the jaws to wrap it.
fn orbit_experiment(sc: &Scene, sense: f64) {
    let mut world = sc.world.clone();
    let h = world.dt().unwrap();
    let set = world
        .suturing
        .as_ref()
        .unwrap()
        .instruments
        .as_ref()
        .unwrap();
    let (r0, qr, l0, ql) = (
        set.list[0].position,
        set.list[0].rotation,
        set.list[1].position,
        set.list[1].rotation,
    );
    let jaw = set.list[0].spec.jaw_length;
    let mut tools = start_tools(sc, &world);
    let orbit = 0.004;
    let mut prev = r0;
    for step in 0..4000 {
        let t = world.time + h;
        let s_now = strand_at(&world, 0.018).unwrap_or(r0);
        let hinge_for = |c: Vec3, f: f64| c - Vec3::new(0.0, 0.0, (0.3 + 0.25 * f) * jaw);
        let p = if t < 1.0 {
            let start = hinge_for(s_now - Vec3::new(orbit, 0.0, 0.0), 0.0);
            r0 + (start - r0) * t
        } else {
            let f = ((t - 1.0) / 2.0).min(1.0);
            let a = std::f64::consts::PI + sense * 2.0 * PI * f;
            hinge_for(s_now + Vec3::new(orbit * a.cos(), orbit * a.sin(), 0.0), f)
        };
        let v = (p - prev) / h;
        prev = p;
        let lp = l0 + Vec3::new(0.0, -0.006 * ((t - 1.0) / 2.0).clamp(0.0, 1.0), 0.0);
        let targets = [
            Some(ToolTarget {
                t,
                position: p,
                rotation: qr,
                velocity: v,
                angular_velocity: Vec3::zeros(),
                buttons: 0,
                hand_force: Vec3::zeros(),
            }),
            Some(ToolTarget {
                t,
                position: lp,
                rotation: ql,
                velocity: Vec3::zeros(),
                angular_velocity: Vec3::zeros(),
                buttons: 0,
                hand_force: Vec3::zeros(),
            }),
        ];
        let out = world.step(&mut tools, &targets, h);
        if (step + 1) % 250 == 0 {
            let (wraps, jawdist) = wraps_and_jaw_distance(&world);
            println!(
                "{:.2} s: wraps {:+.2} jawdist {:.2} mm strand {:?} tension {:.2} N err {:?}",
                out.time,
                wraps,
                jawdist * 1e3,
                (s_now * 1e3).map(|c| c.round()).as_slice(),
                out.tension,
                out.error.is_some()
            );
        }
    }
}

#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--orbit") {
        orbit_experiment(
            &scene(),
            if args.iter().any(|a| a == "--reverse") {
                -1.0
            } else {
                1.0
            },
        );
        return;
    }
    let knot = match args.get(1).map(String::as_str) {
        Some("granny") => Knot::Granny,
        Some("surgeons") => Knot::Surgeons,
        _ => Knot::Square,
    };
    let sc = scene();
    let plans = plans(&sc, knot);
    if args.iter().any(|a| a == "--run") {
        let mut world = sc.world.clone();
        let mut seen = 0;
        let mut unconverged = 0;
        run(&sc, &mut world, &plans, |w, out| {
            unconverged += usize::from(!out.converged);
            if let Some(e) = &out.error {
                println!("{:.3} s: error {e}", out.time);
            }
            for e in w.events_since(seen) {
                println!("{:.3} s: {}", e.time, e.kind.describe());
            }
            seen = out.events;
            let step = (out.time * 1e3).round() as u64;
            let x = w.rods[0].positions();
            if step.is_multiple_of(250) {
                let id = suture::topology::identify_open(x);
                let (wraps, jawdist) = wraps_and_jaw_distance(w);
                print!("wraps {wraps:+.2} jawdist {:.2} mm ", jawdist * 1e3);
                let set = w.suturing.as_ref().unwrap().instruments.as_ref().unwrap();
                let r = &set.list[0];
                let l = &set.list[1];
                println!(
                    "{:.2} s: right {:?} open {:.2} hold {:?} | left {:?} | gap {:.2} mm | tension {:.2} N | knot {:?} | unconverged {unconverged}",
                    out.time,
                    (r.position * 1e3).map(|c| c.round()).as_slice(),
                    r.opening,
                    r.hold,
                    (l.position * 1e3).map(|c| c.round()).as_slice(),
                    out.gap * 1e3,
                    out.tension,
                    id.map(|k| (k.name, k.determinant, k.crossings)).ok(),
                );
            }
        });
        return;
    }
    let dir = args.get(2).cloned().unwrap_or_else(|| ".".to_string());
    std::fs::create_dir_all(&dir).expect("output folder");
    for (plan, setup, name) in [
        (&plans.0, &sc.tools[0], "right"),
        (&plans.1, &sc.tools[1], "left"),
    ] {
        let ins = &sc
            .world
            .suturing
            .as_ref()
            .unwrap()
            .instruments
            .as_ref()
            .unwrap()
            .list[setup.instrument.expect("an instrument")];
        let frame = ins.rotation;
        let mut csv = String::from("t,x,y,z,rx,ry,rz,buttons\n");
        for k in &plan.keys {
            let p = (k.p - setup.workspace_offset) / setup.workspace_scale;
            let r = (k.q * frame.inverse()).scaled_axis();
            csv.push_str(&format!(
                "{:.6},{:.9},{:.9},{:.9},{:.9},{:.9},{:.9},{}\n",
                k.t, p.x, p.y, p.z, r.x, r.y, r.z, k.buttons
            ));
        }
        std::fs::write(format!("{dir}/{name}.csv"), csv).expect("write");
    }
}
