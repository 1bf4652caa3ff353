//! Profile the physics steps of a recorded session: re-simulate it from its recorded targets
//! (as `suture replay --headless --verify` does) and time every step, unpaced, on one core.
//! Prints, per window of simulated time, the mean and longest step [µs], the steps over 1 ms,
//! and over the whole session also the median and the 99th percentile (nearest rank) and the
//! steps and their share of the time by Newton iterations a step (bands of five),
//! the Newton iterations (mean, most) and the unconverged steps; with `--steps FILE` also
//! writes one CSV line per step (step, time, µs, iterations, converged, the suture's
//! self-contact candidate pairs and pairs within contact); with `--trace A:B` prints
//! the suture's holes, its contact and channel forces and nodes 30–49 (`STEP_PROFILE_NODES=A:B`
//! for others) after steps A..B; with
//! `--edit 'OLD=>NEW'` edits the recorded scene first (an experiment: the physics changes, so
//! the recorded digests no longer match). Also reports how many 1 ms ticks the physics loop's
//! pacer (20 ms catch-up) would drop on these step times alone, and checks the recorded state
//! digests (0 differ: the build re-simulates the session bit for bit).
//!
//! `cargo run --release --example step_profile -- SESSION.surec [--window SECONDS]
//! [--steps FILE] [--trace A:B] [--edit 'OLD=>NEW']`

use std::io::Write;
use std::time::Instant;
use suture::scene::{self, Overrides};
use suture::session::format;
use suture::session::replay::tools_for;
use suture::sim::RodModel;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: step_profile SESSION.surec [--window S] [--steps FILE]");
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let window: f64 = opt("--window").map_or(10.0, |v| v.parse().expect("--window SECONDS"));
    let mut steps_out = opt("--steps").map(|f| {
        let mut w = std::io::BufWriter::new(std::fs::File::create(f).expect("--steps FILE"));
        writeln!(w, "step,time,us,iterations,converged,pairs,active").unwrap();
        w
    });
    let bytes = std::fs::read(path).expect("read the recording");
    let (rec, err) = format::salvage(&bytes);
    if let Some(e) = err {
        eprintln!("{path}: {e} (profiling the part that decoded)");
    }
    let h = &rec.header;
    // `--edit OLD=>NEW` replaces text in the recorded scene (an experiment: the digests will
    // differ once the edit changes the physics).
    let mut text = h.scene_text.clone();
    if let Some(e) = opt("--edit") {
        let (a, b) = e.split_once("=>").expect("--edit OLD=>NEW");
        assert!(text.contains(a), "the recorded scene has no {a:?}");
        text = text.replace(a, b);
    }
    let sc = scene::parse(&h.scene_path, &text, Overrides::default()).expect("scene");
    let mut world = sc.world;
    let mut tools = tools_for(&rec, &world).expect("tools");
    let n_tools = tools.len();
    let dt = h.dt;
    println!(
        "window_start_s,steps,mean_us,max_us,over_1ms,mean_iter,max_iter,unconverged,failed,\
         tension_n,passages,gap_mm,held"
    );
    let per = (window / dt).round().max(1.0) as usize;
    let (mut sum, mut max, mut over, mut it_sum, mut it_max, mut unc, mut fail, mut n) =
        (0.0, 0.0f64, 0, 0usize, 0usize, 0, 0, 0);
    let mut total = (0.0, 0.0f64, 0usize, 0usize);
    // Every step's time [µs], for the percentiles (#23 states its goal as a mean and a p99).
    let mut times = Vec::with_capacity(rec.steps.len());
    // Steps and time [µs] by Newton iterations a step, in bands of five (the last: 40 on).
    let mut by_iterations = [(0usize, 0.0f64); 9];
    // The physics loop's pacer replayed on these step times (runtime::physics: 1 ms ticks,
    // catching up a lag of up to 20 ms, giving up the rest): the ticks this machine's solver
    // alone would drop, without preemption.
    let (mut lag, mut dropped) = (0.0f64, 0u64);
    let (mut digests, mut mismatched) = (0u64, 0u64);
    let version = h
        .digest()
        .expect("a state digest version this build computes");
    let mut next_digest = rec.digests.iter().peekable();
    let trace: Option<(usize, usize)> = opt("--trace").map(|v| {
        let (a, b) = v.split_once(':').expect("--trace FROM:TO");
        (a.parse().unwrap(), b.parse().unwrap())
    });
    for (i, s) in rec.steps.iter().enumerate() {
        let t0 = Instant::now();
        let r = world.step(&mut tools, &s.targets()[..n_tools], dt);
        let us = t0.elapsed().as_secs_f64() * 1e6;
        times.push(us);
        lag = (lag + us - dt * 1e6).max(0.0);
        if lag > 20_000.0 {
            dropped += (lag / (dt * 1e6)) as u64;
            lag = 0.0;
        }
        while let Some(d) = next_digest.next_if(|d| d.step <= i as u64 + 1) {
            if d.step == i as u64 + 1 {
                digests += 1;
                mismatched += u64::from(world.digest_as(&tools, version) != d.digest);
            }
        }
        let (it, conv) = match &r.error {
            None => (r.iterations, r.converged),
            Some(_) => (0, false),
        };
        if trace.is_some_and(|(a, b)| i + 1 >= a && i + 1 < b) {
            describe(&world);
        }
        if let Some(w) = steps_out.as_mut() {
            // The suture's self-contact after the step: candidate pairs and pairs within
            // contact (what the Woodbury terms of its Newton solves scale with).
            let (pairs, active) = match world.rods.first().map(|r| &r.model) {
                Some(RodModel::Cosserat {
                    self_contact: Some(sc),
                    ..
                })
                | Some(RodModel::Der {
                    self_contact: Some(sc),
                    ..
                }) => (sc.pairs.len(), sc.active),
                _ => (0, 0),
            };
            writeln!(
                w,
                "{},{:.3},{us:.1},{it},{},{pairs},{active}",
                i + 1,
                world.time,
                u8::from(conv)
            )
            .unwrap();
        }
        sum += us;
        max = max.max(us);
        over += usize::from(us > 1000.0);
        it_sum += it;
        let band = &mut by_iterations[(it / 5).min(8)];
        band.0 += 1;
        band.1 += us;
        it_max = it_max.max(it);
        unc += usize::from(!conv);
        fail += usize::from(r.error.is_some());
        n += 1;
        total.0 += us;
        total.1 = total.1.max(us);
        total.2 += usize::from(us > 1000.0);
        total.3 += usize::from(!conv);
        if n == per || i + 1 == rec.steps.len() {
            let (tension, passages, gap, held) =
                world.suturing.as_ref().map_or((0.0, 0, 0.0, false), |s| {
                    (
                        s.tension,
                        s.passages.len(),
                        s.tissue.gap_at(0.0) * 1e3,
                        s.held,
                    )
                });
            println!(
                "{:.1},{n},{:.0},{max:.0},{over},{:.1},{it_max},{unc},{fail},\
                 {tension:.3},{passages},{gap:.2},{held}",
                (i + 1 - n) as f64 * dt,
                sum / n as f64,
                it_sum as f64 / n as f64
            );
            (sum, max, over, it_sum, it_max, unc, fail, n) = (0.0, 0.0, 0, 0, 0, 0, 0, 0);
        }
    }
    if let Some(su) = world.suturing.as_ref() {
        for e in &su.events {
            eprintln!("event at {:.3} s: {}", e.time, e.kind.describe());
        }
    }
    let all: f64 = by_iterations.iter().map(|b| b.1).sum();
    for (k, (steps, us)) in by_iterations.iter().enumerate().filter(|(_, b)| b.0 > 0) {
        let range = if k == 8 {
            "40+".to_string()
        } else {
            format!("{}-{}", 5 * k, 5 * k + 4)
        };
        eprintln!(
            "steps of {range} iterations: {steps} ({:.1} %), {:.1} % of the time, mean {:.0} µs",
            100.0 * *steps as f64 / rec.steps.len().max(1) as f64,
            100.0 * us / all.max(f64::MIN_POSITIVE),
            us / *steps as f64
        );
    }
    // The nearest-rank percentile: the smallest time at or above `p` of the steps.
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let k = ((p * times.len() as f64).ceil() as usize).clamp(1, times.len().max(1));
        times.get(k - 1).copied().unwrap_or(0.0)
    };
    eprintln!(
        "{} steps: mean {:.0} µs, p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs, {} over 1 ms, \
         {} unconverged; a 1 ms pacer with 20 ms catch-up would drop {dropped} ticks; \
         {mismatched} of {digests} recorded digests differ",
        rec.steps.len(),
        total.0 / rec.steps.len().max(1) as f64,
        pct(0.5),
        pct(0.99),
        total.1,
        total.2,
        total.3
    );
}

/// Print the suture's potentials at the current state (trace mode).
fn describe(world: &suture::sim::World) {
    use suture::rod::{NodePotential, PotentialSink};
    use suture::sim::RodModel;
    let Some(su) = world.suturing.as_ref() else {
        return;
    };
    let RodModel::Cosserat {
        rod,
        contact,
        self_contact,
        ..
    } = &world.rods[su.rod].model
    else {
        return;
    };
    let n = rod.x.len();
    let top = |name: &str, p: &dyn NodePotential| {
        let mut g = vec![0.0; 6 * n - 3];
        p.evaluate(&rod.x, Some(&mut PotentialSink::new(&mut g, None)));
        let (mut best, mut at) = (0.0f64, 0);
        for i in 0..n {
            let f = (g[6 * i].powi(2) + g[6 * i + 1].powi(2) + g[6 * i + 2].powi(2)).sqrt();
            if f > best {
                (best, at) = (f, i);
            }
        }
        eprintln!("  {name}: largest node force {best:.3e} N at node {at}");
    };
    if let Some(c) = contact {
        top("contact", c.as_ref());
        eprintln!(
            "  contact stiffness {:.3e} N/m after {} raises, deepest {:.3e} m",
            c.stiffness, c.raises, c.max_penetration
        );
    }
    if let Some(c) = self_contact {
        top("self-contact", c.as_ref());
    }
    top("channel", &su.channel);
    top("attach", &su.attach);
    if let Some(set) = su.instruments.as_ref() {
        top("grips", &set.grips);
    }
    for cp in &su.channel.points {
        eprintln!(
            "  hole {} at {:.2?} mm: seg {} a {:.2} lambda {:.3} N slip {:.2e} m/s force {:.3} N",
            cp.passage,
            (cp.anchor * 1e3).as_slice(),
            cp.seg0,
            cp.a0,
            cp.lambda,
            cp.slip,
            cp.force.norm()
        );
    }
    let l = rod.params.segment_length;
    // `STEP_PROFILE_NODES=A:B`: which nodes to print (30:50).
    let (from, to) = std::env::var("STEP_PROFILE_NODES")
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((30, 50));
    let line: Vec<String> = (from..n.min(to))
        .map(|i| {
            format!(
                "{i}:({:.2},{:.2},{:.2}){}",
                rod.x[i].x * 1e3,
                rod.x[i].y * 1e3,
                rod.x[i].z * 1e3,
                if i + 1 < n {
                    format!(" s{:.3}", (rod.x[i + 1] - rod.x[i]).norm() / l)
                } else {
                    String::new()
                }
            )
        })
        .collect();
    eprintln!("  nodes [mm]: {}", line.join(" "));
}
