//! A scene one step past the parser: parse and build it as `suture run` and `suture simulate`
//! do (`scene::parse`, the CLI's loader), then step it as the live physics loop does
//! (`World::step` with the tools `runtime::run::start_tool` builds from the scene's tools,
//! driven by a hand sweeping 20 mm/s from where each tool starts) for `STEPS` steps of the
//! scene's `dt`; a scene `suture run` refuses (no tool, a quasi-static dynamic rod) goes the
//! way of `suture simulate` instead (`World::advance_to`, ten frames over the same time).
//! A step may fail (the solver refuses it and rolls back); it must not panic, abort or hang.
//! The work per input is bounded only by what the loader accepts: a valid scene that is slow
//! to step is left to libFuzzer's `-timeout`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use suture::math::Vec3;
use suture::runtime::run::start_tool;
use suture::sim::{MAX_TOOLS, ToolTarget};

/// Live steps per input (0.3 s at the default 1 ms).
const STEPS: usize = 300;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sc) = suture::scene::parse("fuzz.toml", text, suture::scene::Overrides::default())
    else {
        return;
    };
    let _ = sc.notes();
    let mut world = sc.world;
    let dt = sc.file.solver.dt.unwrap_or(1e-3);
    let live = !sc.tools.is_empty() && world.check_realtime().is_ok();
    let started: Option<Vec<_>> = live
        .then(|| {
            sc.tools
                .iter()
                .take(MAX_TOOLS)
                .map(|t| start_tool(&world, t, 0.0).ok())
                .collect()
        })
        .flatten();
    match started {
        Some(started) => {
            let starts: Vec<(Vec3, suture::math::Quat)> = started
                .iter()
                .zip(&sc.tools)
                .map(|(st, setup)| (st.tool.coupling.target, world.tool_frame(setup)))
                .collect();
            let mut tools: Vec<_> = started.into_iter().map(|st| st.tool).collect();
            let n = tools.len();
            let v = Vec3::new(0.02, 0.0, 0.0);
            let mut targets: [Option<ToolTarget>; MAX_TOOLS] = [None; MAX_TOOLS];
            for k in 1..=STEPS {
                let t = k as f64 * dt;
                for (slot, (p, q)) in targets.iter_mut().zip(&starts) {
                    *slot = Some(ToolTarget {
                        t,
                        position: p + v * t,
                        rotation: *q,
                        velocity: v,
                        angular_velocity: Vec3::zeros(),
                        // The grasp button pressed once, halfway (it toggles the grasp).
                        buttons: u32::from(k == STEPS / 2),
                        hand_force: Vec3::zeros(),
                    });
                }
                let _ = world.step(&mut tools, &targets[..n], dt);
            }
            let _ = world.digest(&tools);
        }
        None => {
            let end = STEPS as f64 * dt;
            for f in 1..=10 {
                if world.advance_to(end * f as f64 / 10.0).is_err() {
                    break;
                }
            }
        }
    }
});
