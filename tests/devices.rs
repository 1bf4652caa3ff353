//! Device profiles: the shipped ones load, and reports decode and encode byte for byte
//! (this machine has no HID devices: the bytes are what the devices send, per their formats).

use suture::device::{DeviceProfile, InputState, Mode};
use suture::math::Vec3;

fn load(name: &str) -> DeviceProfile {
    DeviceProfile::load(&format!("devices/{name}.toml")).expect("shipped profile loads")
}

#[test]
fn spacemouse_reports_decode_to_rates_and_buttons() {
    let p = load("spacemouse");
    assert_eq!(p.mode, Mode::Rate);
    assert!(p.matches(0x046d, 0xc626) && !p.matches(0x256f, 0xc626));
    assert!(p.output.is_none() && p.max_force == 0.0);
    let mut s = InputState::default();
    // Report 1: x = +350 (full right), y = -175, z = 0.
    assert_eq!(
        p.decode(&[1, 0x5e, 0x01, 0x51, 0xff, 0x00, 0x00], &mut s),
        Ok(3)
    );
    assert!((s.linear - Vec3::new(0.05, -0.025, 0.0)).norm() < 1e-15);
    // Report 2: rz = -350 (full twist): -1 rad/s.
    assert_eq!(p.decode(&[2, 0, 0, 0, 0, 0xa2, 0xfe], &mut s), Ok(3));
    assert!((s.angular - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-15);
    assert!(
        (s.linear.x - 0.05).abs() < 1e-15,
        "report 2 leaves translation alone"
    );
    // Report 3: buttons 0 and 1.
    assert_eq!(p.decode(&[3, 0b11, 0], &mut s), Ok(1));
    assert_eq!(s.buttons, 3);
    // An unknown report id changes nothing; a truncated known one is an error.
    let before = s;
    assert_eq!(p.decode(&[7, 1, 2, 3], &mut s), Ok(0));
    assert_eq!(s, before);
    assert!(p.decode(&[1, 0x5e], &mut s).is_err());
}

#[test]
fn six_axis_spacemouse_reads_all_axes_from_report_one() {
    let p = load("spacemouse_6axis");
    assert!(p.matches(0x256f, 0xc635));
    let mut s = InputState::default();
    let mut r = vec![1u8];
    for v in [350i16, 0, -350, 175, -175, 0] {
        r.extend_from_slice(&v.to_le_bytes());
    }
    assert_eq!(p.decode(&r, &mut s), Ok(6));
    assert!((s.linear - Vec3::new(0.05, 0.0, -0.05)).norm() < 1e-15);
    assert!((s.angular - Vec3::new(0.5, -0.5, 0.0)).norm() < 1e-15);
}

#[test]
fn open_stylus_pose_decodes_and_force_encodes_byte_for_byte() {
    let p = load("open_stylus");
    assert_eq!(p.mode, Mode::Position);
    // Pose: (12.345 mm, -0.5 mm, 100 mm), a 90° turn about y, button 2 pressed, sequence 9.
    let mut r = vec![1u8];
    for um in [12_345i32, -500, 100_000] {
        r.extend_from_slice(&um.to_le_bytes());
    }
    let h = (0.5f64.sqrt() * 32767.0).round() as i16;
    for q in [h, 0, h, 0] {
        r.extend_from_slice(&q.to_le_bytes());
    }
    r.push(0b100);
    r.push(9);
    assert_eq!(r.len(), p.input_length);
    let mut s = InputState::default();
    assert_eq!(p.decode(&r, &mut s), Ok(8));
    assert!((s.linear - Vec3::new(0.012345, -0.0005, 0.1)).norm() < 1e-12);
    let rot = s.rotation();
    assert!((rot * Vec3::x() - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-4);
    assert_eq!(s.buttons, 4);
    // Force (1.5, -0.25, 0.001) N and no torque, enabled.
    let mut out = [0xffu8; 14];
    let sat = p.encode(
        &Vec3::new(1.5, -0.25, 0.001),
        &Vec3::zeros(),
        true,
        &mut out,
    );
    assert_eq!(sat, Some(Ok(false)));
    let mut want = vec![2u8];
    for mn in [1500i16, -250, 1, 0, 0, 0] {
        want.extend_from_slice(&mn.to_le_bytes());
    }
    want.push(1);
    assert_eq!(out.to_vec(), want);
    // Release: the enable bit drops; a force beyond the i16 range saturates, never wraps.
    let sat = p.encode(&Vec3::new(40.0, 0.0, 0.0), &Vec3::zeros(), false, &mut out);
    assert_eq!(sat, Some(Ok(true)));
    assert_eq!(i16::from_le_bytes([out[1], out[2]]), i16::MAX);
    assert_eq!(out[13], 0);
    // An input-only device has nothing to encode.
    assert_eq!(
        load("spacemouse").encode(&Vec3::zeros(), &Vec3::zeros(), true, &mut out),
        None
    );
}

#[test]
fn bad_profiles_name_file_line_and_field() {
    for (file, want) in [
        (
            "tests/fixtures/bad_devices/field_past_end.toml",
            "tests/fixtures/bad_devices/field_past_end.toml:9:8: input[0].byte ends in byte 4 but the report has 4 bytes",
        ),
        (
            "tests/fixtures/bad_devices/unknown_axis.toml",
            "tests/fixtures/bad_devices/unknown_axis.toml:7:8: input[0].name unknown variant `w`, expected one of `x`, `y`, `z`, `rx`, `ry`, `rz`, `qw`, `qx`, `qy`, `qz`, `buttons`",
        ),
        (
            "tests/fixtures/bad_devices/huge_input_length.toml",
            "tests/fixtures/bad_devices/huge_input_length.toml:7:16: input_length must be in 2..=16384 [bytes] (report id and data, at most a HID report), got 1000000000000",
        ),
        (
            "tests/fixtures/bad_devices/force_without_limit.toml",
            "tests/fixtures/bad_devices/force_without_limit.toml:22:13: limits.max_force must be > 0, with max_stiffness > 0, for a device with an output report",
        ),
    ] {
        let e = DeviceProfile::load(file).expect_err(file);
        assert_eq!(e.to_string(), want);
    }
    let e = DeviceProfile::load("devices/none.toml").expect_err("missing");
    assert!(e.to_string().contains("cannot read device profile file"));
}

#[test]
fn devices_command_lists_profiles_and_says_when_no_device_is_present() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
        .arg("devices")
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("3 device profiles in devices/"), "{out}");
    // This machine has no HID devices; elsewhere the list names a profile or "no profile".
    assert!(
        out.contains("no HID devices found") || out.contains("HID interfaces:"),
        "{out}"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
        .args(["devices", "--profiles", "tests/fixtures/bad_devices"])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: tests/fixtures/bad_devices/"));
}

#[test]
fn a_profile_with_a_huge_report_is_refused_before_any_device_opens() {
    // input_length = 1e12 aborted on allocation when a matching device opened; the limit is
    // HID's largest report (Linux HID_MAX_BUFFER_SIZE, 16 KiB).
    assert_eq!(suture::device::profile::MAX_REPORT_LENGTH, 16384);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
        .args([
            "run",
            "scenes/knot_tying.toml",
            "--device",
            "hid:tests/fixtures/bad_devices/huge_input_length.toml",
            "--headless",
            "--duration",
            "1",
            "--no-record",
        ])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "error: tests/fixtures/bad_devices/huge_input_length.toml:7:16: input_length must be in 2..=16384 [bytes] (report id and data, at most a HID report), got 1000000000000"
    );
}

/// Report transport over byte vectors: what a device would send, and what we wrote.
struct Bytes {
    pending: std::collections::VecDeque<Vec<u8>>,
    written: Vec<Vec<u8>>,
    unplugged: bool,
}

impl suture::device::Transport for Bytes {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, suture::device::DeviceError> {
        if self.unplugged {
            return Err(suture::device::DeviceError::Io("unplugged".into()));
        }
        Ok(self.pending.pop_front().map_or(0, |r| {
            buf[..r.len()].copy_from_slice(&r);
            r.len()
        }))
    }
    fn write(&mut self, r: &[u8]) -> Result<(), suture::device::DeviceError> {
        self.written.push(r.to_vec());
        Ok(())
    }
}

fn bytes(reports: Vec<Vec<u8>>) -> Bytes {
    Bytes {
        pending: reports.into(),
        written: vec![],
        unplugged: false,
    }
}

#[test]
fn hid_device_reads_poses_writes_forces_and_reports_faults() {
    use suture::device::{DeviceError, HapticDevice, HidDevice};
    let mut r = vec![1u8];
    for um in [1000i32, 2000, -3000] {
        r.extend_from_slice(&um.to_le_bytes());
    }
    for q in [32767i16, 0, 0, 0] {
        r.extend_from_slice(&q.to_le_bytes());
    }
    r.extend_from_slice(&[1, 0]);
    let mut d = HidDevice::new(load("open_stylus"), bytes(vec![r.clone(), r]));
    let s = d.poll(0.0).unwrap().expect("a sample");
    assert!((s.position - Vec3::new(0.001, 0.002, -0.003)).norm() < 1e-15);
    assert_eq!(s.buttons, 1);
    assert_eq!(
        d.poll(0.001).unwrap(),
        None,
        "both reports were drained by the first poll"
    );
    d.command(&Vec3::new(0.0, 2.0, 0.0), &Vec3::zeros(), true)
        .unwrap();
    assert_eq!(d.max_force(), 3.0);
    // A truncated report is a fault, not a panic; an unplugged device too.
    let mut d = HidDevice::new(load("open_stylus"), bytes(vec![vec![1, 2, 3]]));
    assert!(matches!(d.poll(0.0), Err(DeviceError::BadReport(_))));
    let mut t = bytes(vec![]);
    t.unplugged = true;
    let mut d = HidDevice::new(load("open_stylus"), t);
    assert!(matches!(d.poll(0.0), Err(DeviceError::Io(_))));
}

#[test]
fn rate_device_integrates_its_deflection_into_a_pose() {
    use suture::device::{HapticDevice, HidDevice};
    // Full +x deflection (0.05 m/s) and a quarter rz twist (0.25 rad/s), held for 1 s of 1 kHz
    // polls: 5 cm and 0.25 rad.
    let mut r = vec![1u8];
    for v in [350i16, 0, 0, 0, 0, 87] {
        r.extend_from_slice(&v.to_le_bytes());
    }
    let mut d = HidDevice::new(load("spacemouse_6axis"), bytes(vec![r]));
    let mut last = None;
    for k in 0..=1000 {
        last = d.poll(k as f64 * 1e-3).unwrap();
    }
    let s = last.expect("rate devices sample every poll");
    assert!((s.position.x - 0.05).abs() < 1e-12, "{}", s.position.x);
    let rz = 87.0 * 2.857142857142857e-3;
    assert!((s.rotation.angle() - rz).abs() < 1e-9);
    // Input-only: commands are accepted and nothing is written.
    d.command(&Vec3::new(1.0, 0.0, 0.0), &Vec3::zeros(), true)
        .unwrap();
    assert_eq!(d.max_force(), 0.0);
}

/// Issue #22: the mouse alone with two tools drives one hand at a time (device::MouseHands, as
/// the viewer's Tab switches it). Headless, through the same pieces as `suture run`: a
/// MouseDevice per hand in world coordinates, each read by its own haptic core, both tools
/// stepped by `World::step`. The hand not driven keeps its target bit for bit; the newly driven
/// one goes on from its own target (no jump); a switch mid-drag stops the hand let go.
#[test]
fn the_mouse_switches_hands_and_the_other_tool_keeps_its_target() {
    use std::time::Duration;
    use suture::coupling::{ForceLimiter, Watchdog, WorkspaceMap};
    use suture::device::{MouseDevice, MouseHands, MouseInput};
    use suture::math::Quat;
    use suture::runtime::haptic::{HapticConfig, HapticCore};
    use suture::runtime::run::{self, NOMINAL_FORCE_LIMIT, RAMP, TORQUE_LIMIT};
    use suture::sim::tool::{Hand, ToolSetup};
    use suture::sim::{Tool, ToolTarget};
    const TWO_RODS: &str = r#"
version = 1
[solver]
model = "cosserat"
dt = 1e-3
elements = 10
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.05], [0.1, 0.0, 0.05]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
[tool]
mass = 0.02
"#;
    let sc = suture::scene::parse("two_rods.toml", TWO_RODS, Default::default()).unwrap();
    let right = sc.tools[0];
    let left = ToolSetup {
        hand: Hand::Left,
        rod: 1,
        ..right
    };
    let mut world = sc.world.clone();
    let mut tools: Vec<Tool> = Vec::new();
    let mut cores = Vec::new();
    let mut senders = Vec::new();
    for t in [right, left] {
        let st = run::start_tool(&world, &t, 0.0).unwrap();
        tools.push(st.tool);
        let (m, tx) = MouseDevice::new(
            world.rods[t.rod].positions()[t.node],
            Quat::identity(),
            4096,
        );
        let map = WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [false; 3])
            .unwrap()
            .with_frame(run::tool_frame(&world, &t));
        let cfg = HapticConfig {
            period: Duration::from_millis(1),
            map,
            coupling: st.coupling,
            limiter: ForceLimiter::new(NOMINAL_FORCE_LIMIT, TORQUE_LIMIT, RAMP),
            watchdog: Watchdog::default(),
        };
        cores.push(HapticCore::new(Box::new(m), cfg));
        senders.push((t.hand.name().to_string(), tx));
    }
    let mut mouse = MouseHands::new(senders);
    let mut k = 0u64;
    // One haptic tick of each device and one physics step; the tools' targets after it.
    let mut tick = |world: &mut suture::sim::World, tools: &mut Vec<Tool>| {
        k += 1;
        let now = k as f64 * 1e-3;
        let targets: Vec<Option<ToolTarget>> =
            cores.iter_mut().map(|c| c.tick(now, None)).collect();
        let out = world.step(tools, &targets, 1e-3);
        assert!(out.error.is_none());
        [tools[0].coupling.target, tools[1].coupling.target]
    };
    let start = [
        world.rods[0].positions()[right.node],
        world.rods[1].positions()[left.node],
    ];
    let drag = |v: Vec3| MouseInput {
        translate: v,
        ..Default::default()
    };
    // The mouse drives the right hand: a 5 mm drag up (0.5 mm a tick at 0.5 m/s).
    assert_eq!(mouse.driven(), Some((0, "right")));
    assert!(mouse.send(drag(Vec3::new(0.0, 0.005, 0.0))));
    let mut at = [start[0], start[1]];
    for _ in 0..50 {
        at = tick(&mut world, &mut tools);
        assert_eq!(at[1], start[1], "the left hand is not driven");
    }
    assert!((at[0] - (start[0] + Vec3::new(0.0, 0.005, 0.0))).norm() < 1e-12);
    let right_held = at[0];
    // Tab: the left hand. Its first target is its own, moved by at most one tick's 0.5 mm.
    assert_eq!(mouse.switch(), 1);
    assert!(mouse.send(drag(Vec3::new(0.0, 0.0, 0.005))));
    let first = tick(&mut world, &mut tools);
    assert!(
        (first[1] - start[1]).norm() <= 0.5e-3 + 1e-12,
        "{:?}",
        first[1] - start[1]
    );
    for _ in 0..50 {
        at = tick(&mut world, &mut tools);
        assert_eq!(at[0], right_held, "the right hand holds its target");
    }
    assert!((at[1] - (start[1] + Vec3::new(0.0, 0.0, 0.005))).norm() < 1e-12);
    // A switch mid-drag: the left hand stops where it is (the rest of its drag is dropped).
    assert!(mouse.send(drag(Vec3::new(0.0, 0.0, 0.01))));
    for _ in 0..4 {
        at = tick(&mut world, &mut tools);
    }
    let left_held = at[1];
    assert!((left_held - (start[1] + Vec3::new(0.0, 0.0, 0.007))).norm() < 1e-12);
    assert_eq!(mouse.switch(), 0);
    for _ in 0..30 {
        at = tick(&mut world, &mut tools);
        assert_eq!(at[1], left_held, "the left hand holds after the switch");
        assert_eq!(at[0], right_held, "the right hand waits for input");
    }
}

/// Issue #22: `--device` with hands: a bad hand, a hand twice, a bare device beside named
/// ones, or a hand the scene has no tool for is a clear error (exit 2) before anything runs.
#[test]
fn device_lists_with_bad_hands_are_refused_with_exit_code_2() {
    let run = |device: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_suture"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "run",
                "scenes/suturing.toml",
                "--headless",
                "--duration=1",
                "--no-record",
            ])
            .arg(format!("--device={device}"))
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for (device, want) in [
        (
            "foot=mouse",
            "unknown hand \"foot\" in \"foot=...\": the hands are right and left",
        ),
        (
            "right=mouse,right=hid",
            "the right hand is given two devices",
        ),
        (
            "mouse,left=hid",
            "with several devices, name each one's hand: right=SPEC,left=SPEC",
        ),
        ("right=", "no device after \"right=\""),
        ("right=mouse,,left=mouse", "an empty device in"),
        (
            "left=scripted:docs/screens/stitch_drive.csv",
            "--device left=scripted:docs/screens/stitch_drive.csv: scenes/suturing.toml has no tool for the left hand (its tools: right)",
        ),
    ] {
        let (code, err) = run(device);
        assert_eq!(code, Some(2), "--device {device}: {err}");
        assert!(err.contains(want), "--device {device}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Naming the scene's only hand works as the bare device does.
    let (code, err) = run("right=scripted:docs/screens/stitch_drive.csv");
    assert_eq!(code, Some(0), "{err}");
}
