//! The viewer renders a real frame: `suture run scenes/suturing.toml --screenshot out.png` under
//! Xvfb (Mesa's software Vulkan driver), driven by a scripted device. The image must not be
//! blank, suture-coloured pixels must lie where the projected centerline (the PNG's JSON
//! sidecar, from the camera that drew the frame) says, and not beside it; the needle and the
//! tissue pad must show. CI installs xvfb and mesa-vulkan-drivers (.ci/run).
#![cfg(feature = "viewer")]

use std::process::Command;

/// Run `cmd` to its end, print what it wrote, and require it to succeed.
fn run_ok(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0));
}

/// A screenshot, decoded: its size [px] and its rows of RGB(A) pixels.
struct Shot {
    w: i64,
    h: i64,
    bpp: usize,
    line: usize,
    buf: Vec<u8>,
}

impl Shot {
    fn read(path: &std::path::Path) -> Shot {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let bpp = info.line_size / info.width as usize;
        assert!(bpp >= 3, "{bpp} bytes a pixel");
        buf.truncate(info.buffer_size());
        Shot {
            w: info.width as i64,
            h: info.height as i64,
            bpp,
            line: info.line_size,
            buf,
        }
    }

    /// The pixel at (x, y) [px], None outside the image.
    fn px(&self, x: i64, y: i64) -> Option<[u8; 3]> {
        if x < 0 || y < 0 || x >= self.w || y >= self.h {
            return None;
        }
        let i = y as usize * self.line + x as usize * self.bpp;
        Some([self.buf[i], self.buf[i + 1], self.buf[i + 2]])
    }

    /// Every pixel, row by row.
    fn pixels(&self) -> impl Iterator<Item = [u8; 3]> + '_ {
        self.buf.chunks(self.bpp).map(|p| [p[0], p[1], p[2]])
    }
}

/// The suture's colour class: clearly blue-violet (nylon), whatever the shading.
fn is_suture(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    b > r + 40 && b > g + 40
}

/// The needle's: bright and neutral (steel).
fn is_steel(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    r > 150 && g > 150 && b > 150 && (r - b).abs() < 30
}

/// The tissue's: pink (red well above blue and green).
fn is_tissue(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    r > 170 && r > g + 25 && r > b + 25
}

/// `bin` under `xvfb-run` (a fresh virtual X server), or directly on this desktop's display.
fn with_display(bin: &str) -> Command {
    if Command::new("xvfb-run").arg("--help").output().is_ok() {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24", bin]);
        c
    } else {
        assert!(
            std::env::var_os("DISPLAY").is_some(),
            "no xvfb-run and no DISPLAY: install xvfb and mesa-vulkan-drivers (see .ci/run)"
        );
        Command::new(bin)
    }
}

#[test]
fn screenshot_shows_suture_needle_and_tissue_where_the_camera_projects_them() {
    let dir = std::env::temp_dir().join(format!("suture-viewer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("lift.csv");
    std::fs::write(
        &script,
        "0,0,0,0,0,0,0,0\n0.3,0,0.005,0,0,0,0,0\n1,-0.01,0.01,0.01,0,0,0,0\n",
    )
    .unwrap();
    let shot = dir.join("shot.png");
    let bin = env!("CARGO_BIN_EXE_suture");
    let args = [
        "run".to_string(),
        "scenes/suturing.toml".to_string(),
        format!("--device=scripted:{}", script.display()),
        format!("--screenshot={}", shot.display()),
        "--shot-at=0.5".to_string(),
    ];
    let mut cmd = with_display(bin);
    run_ok(cmd.args(&args).env("XDG_RUNTIME_DIR", &dir));

    let img = Shot::read(&shot);
    let (w, h) = (img.w, img.h);
    let px = |x: i64, y: i64| img.px(x, y);
    // Not blank: many colours, and the background is not everything.
    let mut colours = std::collections::HashSet::new();
    let (mut tissue, mut total) = (0usize, 0usize);
    for y in (0..h).step_by(2) {
        for x in (0..w).step_by(2) {
            let p = px(x, y).unwrap();
            colours.insert(p);
            tissue += usize::from(is_tissue(p));
            total += 1;
        }
    }
    let tissue_fraction = tissue as f64 / total as f64;
    println!(
        "{} colours, tissue {:.1} % of the image",
        colours.len(),
        100.0 * tissue_fraction
    );
    assert!(colours.len() > 200);

    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("png.json")).unwrap())
            .unwrap();
    assert_eq!(
        (side["width"].as_i64(), side["height"].as_i64()),
        (Some(w), Some(h))
    );
    let points = |v: &serde_json::Value| -> Vec<(f64, f64)> {
        v.as_array()
            .unwrap()
            .iter()
            .filter_map(|p| Some((p[0].as_f64()?, p[1].as_f64()?)))
            .collect()
    };
    let near = |(x, y): (f64, f64), r: i64, class: fn([u8; 3]) -> bool| {
        let (x, y) = (x.round() as i64, y.round() as i64);
        (-r..=r).any(|dx| (-r..=r).any(|dy| px(x + dx, y + dy).is_some_and(class)))
    };
    let rod = points(&side["rods"][0]);
    assert!(rod.len() >= 20);
    // Every node but the last two (under the needle's swage): suture pixels within 2 px.
    let body = &rod[..rod.len() - 2];
    let on = body.iter().filter(|p| near(**p, 2, is_suture)).count();
    // Control: 25 px beside the centerline (perpendicular in the image) there is no suture.
    let beside = body
        .windows(2)
        .filter(|s| {
            let (a, b) = (s[0], s[1]);
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let n = (dx * dx + dy * dy).sqrt().max(1e-9);
            near((a.0 - 25.0 * dy / n, a.1 + 25.0 * dx / n), 2, is_suture)
        })
        .count();
    // The pad: the centres of its top lattice cells, projected by the camera, are on tissue
    // pixels (all but those under the suture, the needle or the HUD).
    let cells = points(&side["tissue_cells"]);
    let on_tissue = cells.iter().filter(|p| near(**p, 1, is_tissue)).count();
    println!(
        "tissue: {on_tissue}/{} top cell centres on tissue pixels",
        cells.len()
    );
    assert!(cells.len() >= 100, "{} cells", cells.len());
    assert!(
        on_tissue as f64 >= 0.9 * cells.len() as f64,
        "no tissue pad where it projects"
    );
    let needle = points(&side["needle"]);
    let steel = needle.iter().filter(|p| near(**p, 3, is_steel)).count();
    println!(
        "centerline: {on}/{} nodes on suture pixels, {beside} beside it; needle: {steel}/{} on steel",
        body.len(),
        needle.len()
    );
    assert!(on as f64 >= 0.9 * body.len() as f64);
    assert!((beside as f64) <= 0.1 * body.len() as f64);
    assert!(steel as f64 >= 0.5 * needle.len() as f64);
    let _ = std::fs::remove_dir_all(&dir);
}

/// README's first command opens the simulator with the mouse: the same run (`suture run`,
/// default scene, default device = mouse, window) for 4 s of wall time under Xvfb.
#[test]
fn the_default_run_opens_with_the_mouse_and_reports_its_loops() {
    let dir = std::env::temp_dir().join(format!("suture-viewer-mouse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_suture");
    let mut cmd = with_display(bin);
    let o = cmd
        .args(["run", "--duration", "4"])
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{out}{err}");
    assert_eq!(o.status.code(), Some(0));
    assert!(err.contains("device mouse"), "{err}");
    assert!(out.starts_with("haptic ") && out.contains("physics "));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `suture replay FILE` shows the recording in the viewer: a recorded stitch replayed under
/// Xvfb, a screenshot taken mid-replay shows the tissue and the suture, and the player checked
/// the recorded digests it passed without a divergence.
#[test]
fn a_recording_replays_in_the_viewer() {
    let dir = std::env::temp_dir().join(format!("suture-viewer-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("stitch.surec");
    let bin = env!("CARGO_BIN_EXE_suture");
    let o = Command::new(bin)
        .args([
            "run",
            "scenes/interrupted_stitch.toml",
            "--headless",
            "--duration=2",
        ])
        .arg("--device=scripted:docs/screens/stitch_drive.csv")
        .arg(format!("--record={}", rec.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let shot = dir.join("replay.png");
    let o = with_display(bin)
        .arg("replay")
        .arg(&rec)
        .args(["--speed=0.5", "--start=0.8", "--shot-at=1.0"])
        .arg(format!("--screenshot={}", shot.display()))
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("digests checked") && !out.contains("DIVERGED"),
        "{out}"
    );
    let img = Shot::read(&shot);
    let (mut tissue, mut suture, mut total) = (0usize, 0usize, 0usize);
    for p in img.pixels() {
        tissue += usize::from(is_tissue(p));
        suture += usize::from(is_suture(p));
        total += 1;
    }
    println!(
        "replay frame: tissue {:.1} %, suture {:.2} %",
        100.0 * tissue as f64 / total as f64,
        100.0 * suture as f64 / total as f64
    );
    assert!(tissue as f64 > 0.05 * total as f64);
    assert!(suture as f64 > 0.001 * total as f64);
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("png.json")).unwrap())
            .unwrap();
    assert!(side["time"].as_f64().unwrap() >= 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue #22: a session of two devices (one per hand, each tool on its own rod, recorded
/// through the library as `suture run` records) replays in the viewer with both tools: the
/// sidecar has both tools' held points and ghosts, each held point lies on a drawn suture, and
/// the player found no divergence.
#[test]
fn a_two_device_recording_replays_in_the_viewer_with_both_tools() {
    use std::time::Duration;
    use suture::coupling::WorkspaceMap;
    use suture::device::ScriptedDevice;
    use suture::math::Quat;
    use suture::runtime::run::{self, DeviceSetup, RunSetup};
    use suture::session::format::Header;
    use suture::sim::tool::{Hand, ToolSetup};
    const TWO_RODS: &str = r#"
version = 1
[solver]
model = "cosserat"
dt = 1e-3
elements = 20
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
mass_damping = 2.0
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.05], [0.1, 0.0, 0.05]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
mass_damping = 2.0
[tool]
mass = 0.02
frequency = 15.915
"#;
    let dir = std::env::temp_dir().join(format!("suture-viewer-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("two.surec");
    let sc = suture::scene::parse("two_rods.toml", TWO_RODS, Default::default()).unwrap();
    let right = sc.tools[0];
    let left = ToolSetup {
        hand: Hand::Left,
        rod: 1,
        workspace_offset: sc.world.rods[1].positions()[right.node],
        ..right
    };
    let scripts = [
        "0, 0, 0, 0, 0, 0, 0, 0\n0.8, 0, 0.02, 0, 0, 0, 0, 0\n",
        "0, 0, 0, 0, 0, 0, 0, 0\n0.8, 0, -0.02, 0.01, 0, 0, 0, 0\n",
    ];
    let devices = [right, left]
        .iter()
        .zip(scripts)
        .map(|(t, script)| DeviceSetup {
            tool: *t,
            device: Box::new(ScriptedDevice::parse("drive.csv", script).unwrap()),
            map: WorkspaceMap::new(1.0, t.workspace_offset, Quat::identity(), [false; 3])
                .unwrap()
                .with_frame(run::tool_frame(&sc.world, t)),
            device_max_stiffness: 0.0,
            label: String::new(),
            profile_text: String::new(),
        })
        .collect();
    let running = run::start(RunSetup {
        world: sc.world.clone(),
        devices,
        haptic_period: Duration::from_millis(1),
        physics_dt: Duration::from_millis(1),
        snapshot_every: 16,
        record: Some((
            Box::new(std::fs::File::create(&rec).unwrap()),
            Header {
                crate_version: env!("CARGO_PKG_VERSION").to_string(),
                scene_path: "two_rods.toml".into(),
                scene_text: TWO_RODS.into(),
                ..Default::default()
            },
        )),
        realtime: false,
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let report = running.stop().unwrap();
    let steps = report.physics.recorded_steps;
    println!("{report}");
    let shot = dir.join("two.png");
    let at = (steps as f64 * 1e-3 - 0.05).min(1.0);
    let o = with_display(env!("CARGO_BIN_EXE_suture"))
        .arg("replay")
        .arg(&rec)
        .args(["--speed=4", &format!("--shot-at={at}")])
        .arg(format!("--screenshot={}", shot.display()))
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("digests checked") && !out.contains("DIVERGED"),
        "{out}"
    );
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("png.json")).unwrap())
            .unwrap();
    let points = |v: &serde_json::Value| -> Vec<(f64, f64)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
            .collect()
    };
    let tools = points(&side["tools"]);
    let ghosts = points(&side["ghosts"]);
    assert_eq!((tools.len(), ghosts.len()), (2, 2), "{side}");
    // Each tool's held point is on its rod's drawn tube (suture pixels within 3 px).
    let img = Shot::read(&shot);
    let near = |(x, y): (f64, f64), r: i64| {
        (-r..=r).any(|dy| {
            (-r..=r).any(|dx| {
                img.px(x.round() as i64 + dx, y.round() as i64 + dy)
                    .is_some_and(is_suture)
            })
        })
    };
    for (k, p) in tools.iter().enumerate() {
        assert!(near(*p, 3), "tool {k} at {p:?}: no suture pixel");
    }
    // The two tools are apart on screen (two rods, two hands).
    let d = ((tools[0].0 - tools[1].0).powi(2) + (tools[0].1 - tools[1].1).powi(2)).sqrt();
    assert!(d > 50.0, "{tools:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue #22: the mouse alone on the two-instrument scene (the default device): both hands
/// start where their instruments are (a mouse started elsewhere yanked the suture apart in the
/// first 20 ms), the physics fails no step, and the frame has both tools.
#[test]
fn the_mouse_alone_holds_both_instruments_where_the_scene_put_them() {
    let dir = std::env::temp_dir().join(format!("suture-viewer-mouse2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("mouse2.png");
    let o = with_display(env!("CARGO_BIN_EXE_suture"))
        .args([
            "run",
            "scenes/instrument_tie.toml",
            "--no-record",
            "--shot-at=0.5",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    assert!(out.contains("haptic right (mouse)") && out.contains("haptic left (mouse)"));
    assert!(out.contains(" unconverged, 0 failed,"), "{out}");
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("png.json")).unwrap())
            .unwrap();
    assert_eq!(side["tools"].as_array().unwrap().len(), 2, "{side}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The right driver's colour class: orange, jaws and shaft (red well above green, little blue),
/// whatever the shading; not the pink pad (much blue), the yellow bead or the red arrow.
fn is_right_instrument(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    r > 90 && 10 * g >= 3 * r && 4 * g <= 3 * r && 20 * b < 7 * r
}

/// The left driver's: teal (green and blue well above red, green the larger).
fn is_left_instrument(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    g > r + 50 && b > r + 30 && g >= b
}

/// Issue #22: the viewer draws the instruments as the capsules they are. The tie scene under
/// Xvfb (without its `[view]`, which frames where the tie goes on later: the default camera has
/// both instruments in view at the start), both hands still, the right hand's jaw button
/// pressed at 0.05 s: at 0.3 s each instrument's colour lies along the projected cores of its
/// jaws and shaft (the sidecar, from the camera that drew the frame) and not on both sides
/// beside them, and the right driver's jaws are open (apart on screen near their tips by more
/// than a jaw's width, each drawn) while the left's, holding the needle, are closed.
#[test]
fn the_instruments_are_drawn_where_the_camera_projects_their_capsules() {
    let dir = std::env::temp_dir().join(format!("suture-viewer-jaws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (right, left) = (dir.join("right.csv"), dir.join("left.csv"));
    std::fs::write(
        &right,
        "0,0,0,0,0,0,0,0\n0.05,0,0,0,0,0,0,1\n0.07,0,0,0,0,0,0,0\n2,0,0,0,0,0,0,0\n",
    )
    .unwrap();
    std::fs::write(&left, "0,0,0,0,0,0,0,0\n2,0,0,0,0,0,0,0\n").unwrap();
    let text = std::fs::read_to_string("scenes/instrument_tie.toml").unwrap();
    let scene = dir.join("tie.toml");
    std::fs::write(&scene, &text[..text.find("\n[view]").unwrap_or(text.len())]).unwrap();
    let shot = dir.join("jaws.png");
    run_ok(
        with_display(env!("CARGO_BIN_EXE_suture"))
            .args(["run", "--no-record", "--shot-at=0.3"])
            .arg(&scene)
            .arg(format!(
                "--device=right=scripted:{},left=scripted:{}",
                right.display(),
                left.display()
            ))
            .arg(format!("--screenshot={}", shot.display()))
            .env("XDG_RUNTIME_DIR", &dir),
    );
    let img = Shot::read(&shot);
    let (w, h) = (img.w, img.h);
    let px = |x: i64, y: i64| img.px(x, y);
    let near = |(x, y): (f64, f64), r: i64, class: fn([u8; 3]) -> bool| {
        let (x, y) = (x.round() as i64, y.round() as i64);
        (-r..=r).any(|dx| (-r..=r).any(|dy| px(x + dx, y + dy).is_some_and(class)))
    };
    let inside = |(x, y): (f64, f64)| x >= 0.0 && y >= 0.0 && x < w as f64 && y < h as f64;
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("png.json")).unwrap())
            .unwrap();
    let instruments = side["instruments"].as_array().unwrap();
    assert_eq!(instruments.len(), 2, "{side}");
    let point = |p: &serde_json::Value| Some((p[0].as_f64()?, p[1].as_f64()?));
    for ins in instruments {
        let hand = ins["hand"].as_str().unwrap();
        let class: fn([u8; 3]) -> bool = match hand {
            "right" => is_right_instrument,
            _ => is_left_instrument,
        };
        let (mut on, mut beside, mut total) = (0usize, 0usize, 0usize);
        for (core, radius) in ins["capsules"]
            .as_array()
            .unwrap()
            .iter()
            .zip(ins["radii_px"].as_array().unwrap())
        {
            let pts: Vec<(f64, f64)> = core.as_array().unwrap().iter().filter_map(point).collect();
            let r = radius.as_f64().unwrap();
            // The ends' caps and the part past the image's edge are left out.
            for s in pts.windows(2) {
                let (a, b) = (s[0], s[1]);
                if !(inside(a) && inside(b)) {
                    continue;
                }
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let n = (dx * dx + dy * dy).sqrt().max(1e-9);
                let m = ((a.0 + b.0) * 0.5, (a.1 + b.1) * 0.5);
                total += 1;
                on += usize::from(near(m, 2, class));
                // Control: 1.5 radii plus 10 px beside the core, both sides.
                let off = 1.5 * r + 10.0;
                beside += usize::from(
                    near((m.0 - off * dy / n, m.1 + off * dx / n), 1, class)
                        && near((m.0 + off * dy / n, m.1 - off * dx / n), 1, class),
                );
            }
        }
        println!("{hand}: {on}/{total} core points on its colour, {beside} with it both sides");
        assert!(total >= 8, "{hand}: {total} core points in the image");
        assert!(on as f64 >= 0.85 * total as f64, "{hand}: {on}/{total}");
        assert!(
            beside as f64 <= 0.1 * total as f64,
            "{hand}: {beside}/{total}"
        );
    }
    // The jaws: the right driver's open, the left's (on the needle) closed; compared at 7/8 of
    // their length (the tail, ahead of the right jaws, hides a tip).
    let tip = |ins: &serde_json::Value, j: usize| {
        let core = ins["capsules"][j].as_array().unwrap();
        point(&core[core.len() - 2]).unwrap()
    };
    let (r, l) = (&instruments[0], &instruments[1]);
    assert_eq!(
        (r["hand"].as_str(), l["hand"].as_str()),
        (Some("right"), Some("left"))
    );
    assert_eq!(
        (r["jaws"].as_str(), l["jaws"].as_str()),
        (Some("open"), Some("closed"))
    );
    let jaw_px = r["radii_px"][0].as_f64().unwrap();
    let (a, b) = (tip(r, 0), tip(r, 1));
    let apart = ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
    println!(
        "right jaws {apart:.1} px apart near their tips (a jaw {:.1} px wide)",
        2.0 * jaw_px
    );
    assert!(apart > 2.0 * jaw_px, "{apart} px");
    assert!(near(a, 2, is_right_instrument) && near(b, 2, is_right_instrument));
    assert_eq!(tip(l, 0), tip(l, 1));
    let _ = std::fs::remove_dir_all(&dir);
}
