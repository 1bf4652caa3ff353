//! `suture simulate`: run a scene headless over evenly spaced frames, write the trajectory as
//! a NumPy .npz (`times` [T], `rod{i}` [T, nodes, 3], `rod{i}_directors` [T, nodes-1, 3]) and
//! print a summary per rod (solver, contact, self-contact, knot) and of the suturing.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use suture::rod::SolverReport;
use suture::scene::{self, ModelName, Overrides, Scene};
use suture::session::npz::{self, Array};
use suture::sim::{ContactStats, RodReport, SelfContactStats, SimRod, World};

/// Arguments of `suture simulate`.
pub struct SimulateArgs {
    /// Scene file (TOML).
    pub scene: String,
    /// Output file (.npz).
    pub out: String,
    /// Number of frames (default 101, or 1 when the scene's duration is 0).
    pub frames: Option<u32>,
    /// Elements per rod (overrides the scene).
    pub elements: Option<u32>,
    /// Rod model (overrides the scene's).
    pub model: Option<ModelName>,
}

/// `suture simulate SCENE --out FILE`: exit 2 for a bad scene or an output that cannot be
/// created, 1 if the solver fails or the file cannot be written.
pub fn simulate(a: SimulateArgs) -> ExitCode {
    let path = &a.scene;
    let out = &a.out;
    let overrides = Overrides {
        elements: a.elements.map(|e| e as usize),
        model: a.model,
    };
    let mut sc = match scene::load(path, overrides) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for line in sc.notes() {
        eprintln!("{line}");
    }
    let times = frame_times(sc.file.duration, a.frames);
    let mut tallies: Vec<RodTally> = sc.world.rods.iter().map(RodTally::new).collect();
    let started = Instant::now();
    for &t in &times {
        let report = match sc.world.advance_to(t) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {path}: {e}");
                return ExitCode::from(1);
            }
        };
        for (i, rod) in sc.world.rods.iter().enumerate() {
            tallies[i].record(i, t, rod, &report.rods[i]);
        }
    }
    let wall = started.elapsed();
    if let Err(code) = write_npz(out, &times, &sc.world, &mut tallies) {
        return code;
    }
    for (i, rod) in sc.world.rods.iter().enumerate() {
        print_rod_summary(i, rod, &tallies[i], &sc, times.len(), wall);
    }
    print_suturing(&sc.world);
    println!("wrote {out}");
    ExitCode::SUCCESS
}

/// The frame times: `frames` (default 101, or 1 when `duration` is 0) evenly spaced from 0 to
/// `duration` inclusive.
fn frame_times(duration: f64, frames: Option<u32>) -> Vec<f64> {
    let frames = frames.unwrap_or(if duration > 0.0 { 101 } else { 1 }) as usize;
    (0..frames)
        .map(|i| {
            if frames == 1 {
                0.0
            } else {
                duration * i as f64 / (frames - 1) as f64
            }
        })
        .collect()
}

/// What one rod did over the run: its trajectory (flattened per frame) and solver, contact
/// and self-contact statistics.
struct RodTally {
    /// Node positions, frame after frame: [frames, nodes, 3].
    positions: Vec<f64>,
    /// Material directors d1 per segment, frame after frame: [frames, nodes-1, 3].
    directors: Vec<f64>,
    /// STRANDS Newton iterations, or Cosserat/DER iterations, summed.
    iterations: usize,
    /// STRANDS sweeps, summed.
    sweeps: usize,
    /// Largest curvature over the frames [1/m].
    max_kappa: f64,
    /// Whether the amplification warning was printed already.
    warned: bool,
    /// Dynamic steps taken.
    steps: usize,
    /// Dynamic steps that hit the iteration cap.
    unconverged: usize,
    /// The last dynamic step's report (None for STRANDS).
    last: Option<SolverReport>,
    /// Obstacle contact at the last frame.
    contact: Option<ContactStats>,
    /// Deepest obstacle penetration over the run [m].
    deepest: f64,
    /// Self-contact at the last frame.
    self_contact: Option<SelfContactStats>,
    /// Closest self-contact approach over the run [m].
    min_gap: f64,
    /// The knot a self-contacting rod starts in (named again at the end).
    knot_at_start: Option<String>,
}

impl RodTally {
    fn new(rod: &SimRod) -> Self {
        Self {
            positions: Vec::new(),
            directors: Vec::new(),
            iterations: 0,
            sweeps: 0,
            max_kappa: 0.0,
            warned: false,
            steps: 0,
            unconverged: 0,
            last: None,
            contact: None,
            deepest: 0.0,
            self_contact: None,
            min_gap: f64::INFINITY,
            knot_at_start: rod
                .self_contact_enabled()
                .then(|| describe_knot(rod.positions())),
        }
    }

    /// Add rod `i`'s frame at time `t` and its solver report over the frame (warns once on
    /// stderr if a STRANDS solve amplifies rounding badly).
    fn record(&mut self, i: usize, t: f64, rod: &SimRod, report: &RodReport) {
        self.max_kappa = self.max_kappa.max(rod.max_curvature());
        match report {
            RodReport::Strands(r) => {
                self.iterations += r.newton_iterations;
                self.sweeps += r.sweeps;
                if r.amplification > 1e6 && !self.warned {
                    self.warned = true;
                    eprintln!(
                        "warning: rods[{i}] at t = {t} s: tension number T L²/EI = {:.0}; the two-sweep amplifies rounding by {:.1e} (refused above 1e8)",
                        r.tension_number, r.amplification
                    );
                }
            }
            RodReport::Cosserat {
                last,
                steps,
                iterations,
                unconverged,
                contact,
                self_contact,
            } => {
                if let Some(st) = self_contact {
                    self.min_gap = self.min_gap.min(st.min_distance);
                    self.self_contact = Some(*st);
                }
                if let Some(cs) = contact {
                    self.deepest = self.deepest.max(cs.max_penetration);
                    self.contact = Some(*cs);
                }
                self.iterations += iterations;
                self.steps += steps;
                self.unconverged += unconverged;
                self.last = Some(*last);
            }
        }
        for p in rod.positions() {
            self.positions.extend_from_slice(&[p.x, p.y, p.z]);
        }
        for d in rod.directors() {
            self.directors.extend_from_slice(&[d.x, d.y, d.z]);
        }
    }
}

/// Write the trajectories (moved out of `tallies`) to `out`: exit 2 if the file cannot be
/// created, 1 if writing fails.
fn write_npz(
    out: &str,
    times: &[f64],
    world: &World,
    tallies: &mut [RodTally],
) -> Result<(), ExitCode> {
    let frames = times.len();
    let mut arrays = vec![(
        "times".to_string(),
        Array {
            shape: vec![frames],
            data: times.to_vec(),
        },
    )];
    for (i, (rod, tally)) in world.rods.iter().zip(tallies.iter_mut()).enumerate() {
        let nodes = rod.positions().len();
        arrays.push((
            format!("rod{i}"),
            Array {
                shape: vec![frames, nodes, 3],
                data: std::mem::take(&mut tally.positions),
            },
        ));
        arrays.push((
            format!("rod{i}_directors"),
            Array {
                shape: vec![frames, nodes - 1, 3],
                data: std::mem::take(&mut tally.directors),
            },
        ));
    }
    let file = std::fs::File::create(out).map_err(|e| {
        eprintln!("error: cannot create {out}: {e}");
        ExitCode::from(2)
    })?;
    npz::write(std::io::BufWriter::new(file), &arrays).map_err(|e| {
        eprintln!("error: writing {out}: {e}");
        ExitCode::from(1)
    })
}

/// Rod `i`'s summary lines on stdout (tip, curvature, solver, contact, self-contact, lagged
/// contact, knot), and a warning on stderr if steps hit the iteration cap.
fn print_rod_summary(
    i: usize,
    rod: &SimRod,
    t: &RodTally,
    sc: &Scene,
    frames: usize,
    wall: Duration,
) {
    let tip = rod.positions()[rod.positions().len() - 1];
    let solver = match &t.last {
        None => format!(
            "{} Newton iterations ({} sweeps) over {} frames",
            t.iterations, t.sweeps, frames
        ),
        Some(r) => format!(
            "{} steps, {} iterations ({} steps unconverged); final: stretch {:.1e}, energy {:.4e} J (bend {:.3e}, kinetic {:.3e})",
            t.steps,
            t.iterations,
            t.unconverged,
            r.max_stretch,
            r.total_energy(),
            r.bend_energy,
            r.kinetic_energy
        ),
    };
    println!(
        "rod{i}: model {} N={} tip [{:.6}, {:.6}, {:.6}] m, max curvature {:.4} 1/m, {solver}, wall {:.3} ms",
        sc.model.as_str(),
        rod.positions().len() - 1,
        tip.x,
        tip.y,
        tip.z,
        t.max_kappa,
        wall.as_secs_f64() * 1e3
    );
    let r = sc.params[i].radius;
    if let Some(c) = t.contact {
        println!(
            "rod{i}: contact: {} points at the end, deepest sink over the run {:.3e} m ({:.2} % of the rod radius), penalty stiffness {:.2e} N/m ({} raises)",
            c.active,
            t.deepest,
            100.0 * t.deepest / r,
            c.stiffness,
            c.raises
        );
    }
    if let Some(c) = t.self_contact {
        println!(
            "rod{i}: self-contact: {} of {} candidate pairs touching at the end, closest approach over the run {:.4e} m = 2r {:+.2} % r, IMC stiffness {:.2e} J ({} raises)",
            c.active,
            c.candidates,
            t.min_gap,
            100.0 * (t.min_gap - 2.0 * r) / r,
            c.stiffness,
            c.raises
        );
    }
    if let Some(l) = &rod.lagged {
        let sink = l.contact.as_ref().map_or(0.0, |c| c.max_penetration);
        println!(
            "rod{i}: lagged contact loads (STRANDS): {} solves in the last frame, last motion {:.1e} m ({}), deepest sink at the end {sink:.3e} m",
            l.passes,
            l.change,
            if l.change < l.tolerance {
                "settled"
            } else {
                "NOT settled: raise the pass limit or use model cosserat"
            }
        );
    }
    if let Some(start) = &t.knot_at_start {
        println!(
            "rod{i}: knot at t = 0: {start}; at the end: {}",
            describe_knot(rod.positions())
        );
    }
    if t.unconverged > 0 {
        eprintln!(
            "warning: rods[{i}]: {} of {} steps hit the iteration cap before converging (raise solver.iterations)",
            t.unconverged, t.steps
        );
    }
}

/// The suturing summary (holes, incision, tension, events), if the scene sutures.
fn print_suturing(world: &World) {
    let Some(su) = &world.suturing else { return };
    use suture::sim::suturing::Through;
    let through = su
        .passages
        .iter()
        .filter(|p| matches!(p.through, Through::Suture(_)))
        .count();
    println!(
        "suturing: {} holes ({through} with the suture through), incision {:.2} mm, suture tension {:.3} N, needle coupling force {:.3} N, {} events",
        su.passages.len(),
        su.tissue.gap_at(su.tissue.geometry.center.z) * 1e3,
        su.tension,
        su.needle.coupling_force.norm(),
        su.events.len()
    );
    for e in &su.events {
        println!("  {:.3} s: {}", e.time, e.kind.describe());
    }
}

/// The knot of an open rod from its geometry alone (`topology`): name, determinant, crossings
/// and the material span between its outermost self-crossings (node parameters).
fn describe_knot(x: &[suture::math::Vec3]) -> String {
    match suture::topology::identify_open(x) {
        Err(e) => format!("not identified ({e})"),
        Ok(id) => {
            let extent = match suture::topology::knot_extent(x, 8) {
                Ok(Some((a, b))) => format!(", knotted between nodes {a:.1} and {b:.1}"),
                _ => String::new(),
            };
            format!(
                "{} (determinant {}, {} crossings{extent})",
                id.name.unwrap_or("unnamed"),
                id.determinant,
                id.crossings
            )
        }
    }
}
