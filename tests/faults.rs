//! Fault injection (issue #9 Done-when 2): a live session (haptic and physics loops, recorder)
//! on a suture held by the tool, with one fault each: the device stops answering, returns
//! garbage, is unplugged and comes back; the physics is driven into a non-finite state; the
//! recorder's disk fails; the render thread stalls. Each test asserts
//! - the force bound: every force sent to the device is finite and within its limit, the force
//!   is zero within 10 ms of a hand-safety fault and ramps back in (no step) afterwards;
//! - the fault report (counted in the session's report);
//! - the recording's integrity: it decodes, its steps run without a gap from step 0, and what
//!   was recorded before the fault is all there.
//!
//! Timing: the loops run in real time (1 kHz); the tests run one at a time.

use ringbuf::HeapRb;
use ringbuf::traits::{Consumer, Producer, Split};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suture::coupling::WorkspaceMap;
use suture::device::{DeviceError, DeviceSample, HapticDevice, ScriptedDevice};
use suture::math::{Quat, Vec3};
use suture::runtime::run::{self, RAMP, RunReport, RunSetup};
use suture::scene::{self, Overrides};
use suture::session::format::{self, Header, Recording};

/// One test at a time: each runs two 1 kHz threads on a two-core machine.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A 10 cm nylon 2-0 suture clamped at the origin, its free end held by the tool.
const SCENE: &str = r#"
version = 1
[solver]
model = "cosserat"
dt = 1e-3
elements = 30
[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
end = "free"
mass_damping = 2.0
[tool]
mass = 0.02
frequency = 15.915
damping_ratio = 1.0
"#;

/// The device's force limit [N].
const MAX_FORCE: f64 = 3.0;

/// What the test device does in its fault window.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    /// Polls return nothing new (a stalled USB stream).
    Silent,
    /// Polls return undecodable reports.
    Garbage,
    /// Polls fail with an I/O error (unplugged), then the device answers again.
    Unplugged,
    /// Reports decode to an absurd pose (1e200 m): the physics goes non-finite.
    Absurd,
}

/// A stylus that pulls the suture's tip 1 cm up and holds it (a steady pull), with `fault` in
/// [from, to) s; every command it receives goes to `log` (t, |f|, motors enabled), and every
/// poll it answers with its fault is counted in `served`.
struct TestDevice {
    inner: ScriptedDevice,
    fault: Fault,
    from: f64,
    to: f64,
    t: f64,
    log: ringbuf::HeapProd<(f64, f64, bool)>,
    served: Arc<AtomicUsize>,
}

impl HapticDevice for TestDevice {
    fn name(&self) -> &str {
        "fault-injection"
    }
    fn poll(&mut self, t: f64) -> Result<Option<DeviceSample>, DeviceError> {
        self.t = t;
        let s = self.inner.poll(t)?;
        if t < self.from || t >= self.to || self.fault == Fault::None {
            return Ok(s);
        }
        self.served.fetch_add(1, Ordering::Relaxed);
        match self.fault {
            Fault::None => Ok(s),
            Fault::Silent => Ok(None),
            Fault::Garbage => Err(DeviceError::BadReport("checksum mismatch".into())),
            Fault::Unplugged => Err(DeviceError::Io("device disconnected".into())),
            Fault::Absurd => Ok(s.map(|mut s| {
                s.position = Vec3::new(1e200, -1e200, 1e200);
                s
            })),
        }
    }
    fn command(&mut self, f: &Vec3, _: &Vec3, enable: bool) -> Result<(), DeviceError> {
        let _ = self.log.try_push((self.t, f.norm(), enable));
        Ok(())
    }
    fn max_force(&self) -> f64 {
        MAX_FORCE
    }
}

/// A recording target shared with the test; with `fail_after`, writes fail once that many
/// bytes are in (a full disk).
#[derive(Clone)]
struct Disk {
    bytes: Arc<Mutex<Vec<u8>>>,
    fail_after: Option<usize>,
}

impl Write for Disk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut b = self.bytes.lock().unwrap();
        if let Some(limit) = self.fail_after
            && b.len() + buf.len() > limit
        {
            return Err(std::io::Error::other("No space left on device (injected)"));
        }
        b.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a run left: the report, the device's command log, the recorded bytes and how many
/// polls the device answered with its fault.
struct Outcome {
    report: RunReport,
    commands: Vec<(f64, f64, bool)>,
    recording: Vec<u8>,
    served: usize,
}

/// Run the scene for `seconds` with `fault` in [from, to) s, recording to `disk`; `during`
/// runs on the main thread while the loops run (it may read snapshots).
fn session(
    fault: Fault,
    (from, to): (f64, f64),
    seconds: f64,
    disk: Disk,
    during: impl FnOnce(&mut run::Running),
) -> Outcome {
    let sc = scene::parse("faults.toml", SCENE, Overrides::default()).unwrap();
    let tool = sc.tools[0];
    let frame = run::tool_frame(&sc.world, &tool);
    let script = "0.0, 0, 0, 0, 0, 0, 0, 0\n0.3, 0, 0.01, 0, 0, 0, 0, 0\n";
    let (log, mut log_rx) = HeapRb::<(f64, f64, bool)>::new(1 << 16).split();
    let served = Arc::new(AtomicUsize::new(0));
    let device = TestDevice {
        inner: ScriptedDevice::parse("hold.csv", script).unwrap(),
        fault,
        from,
        to,
        t: 0.0,
        log,
        served: served.clone(),
    };
    let header = Header {
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        scene_path: "faults.toml".into(),
        scene_text: SCENE.into(),
        ..Default::default()
    };
    let setup = RunSetup {
        world: sc.world,
        devices: vec![run::DeviceSetup {
            tool,
            device: Box::new(device),
            map: WorkspaceMap::new(1.0, tool.workspace_offset, Quat::identity(), [false; 3])
                .unwrap()
                .with_frame(frame),
            device_max_stiffness: 0.0,
            label: "fault-injection".into(),
            profile_text: String::new(),
        }],
        haptic_period: Duration::from_millis(1),
        physics_dt: Duration::from_millis(1),
        snapshot_every: 16,
        record: Some((Box::new(disk.clone()), header)),
        // As `suture run` does (SCHED_FIFO where permitted).
        realtime: true,
    };
    let mut running = run::start(setup).unwrap();
    let t0 = std::time::Instant::now();
    during(&mut running);
    let left = Duration::from_secs_f64(seconds).saturating_sub(t0.elapsed());
    std::thread::sleep(left);
    let report = running.stop().unwrap();
    let mut commands = Vec::new();
    while let Some(c) = log_rx.try_pop() {
        commands.push(c);
    }
    let recording = disk.bytes.lock().unwrap().clone();
    let served = served.load(Ordering::Relaxed);
    println!(
        "{fault:?}: {served} faulty polls served\n{report}\nrecorder: {:?}",
        report.recorder
    );
    Outcome {
        report,
        commands,
        recording,
        served,
    }
}

fn disk() -> Disk {
    Disk {
        bytes: Arc::new(Mutex::new(Vec::new())),
        fail_after: None,
    }
}

/// Every command is finite and within the limit; the force is zero from `from + 10 ms` to `to`
/// (a hand-safety fault); after `to` it ramps in: no tick adds more than the limit's ramp.
fn assert_force_bound(o: &Outcome, zero_window: Option<(f64, f64)>) {
    let step = MAX_FORCE * 1e-3 / RAMP;
    assert!(o.commands.len() > 1000, "{} commands", o.commands.len());
    for &(t, f, _) in &o.commands {
        assert!(f.is_finite() && f <= MAX_FORCE + 1e-9, "t {t}: force {f}");
    }
    // The steady pull is felt before any fault (the test is not vacuous).
    let before = o
        .commands
        .iter()
        .filter(|c| (0.6..0.7).contains(&c.0))
        .map(|c| c.1)
        .fold(0.0, f64::max);
    assert!(
        before > 0.05,
        "no steady force before the fault: {before} N"
    );
    if let Some((from, to)) = zero_window {
        let during: Vec<_> = o
            .commands
            .iter()
            .filter(|c| c.0 >= from + 0.010 && c.0 < to)
            .collect();
        assert!(!during.is_empty(), "no command during the fault");
        for c in &during {
            assert!(c.1 == 0.0, "t {}: {} N during the fault", c.0, c.1);
        }
        // Ramp in: from the fault's end on, each tick adds at most the ramp's step (the
        // motors' release when the session stops, enable = false, is not a rendered force).
        let after: Vec<_> = o.commands.iter().filter(|c| c.0 >= to && c.2).collect();
        for w in after.windows(2) {
            assert!(
                w[1].1 <= w[0].1 + step + 1e-9,
                "t {}: force jumps {} → {} N",
                w[1].0,
                w[0].1,
                w[1].1
            );
        }
        let back = after
            .iter()
            .filter(|c| c.0 >= to + 0.1)
            .map(|c| c.1)
            .fold(0.0, f64::max);
        assert!(back > 0.05, "the force did not come back: {back} N");
    }
}

/// The recording decodes, its steps run from 0 without a gap, and (if `through` is given)
/// it holds every step up to that time [s].
fn assert_recording(o: &Outcome, complete: bool, through: f64) -> Recording {
    let (rec, err) = format::salvage(&o.recording);
    if complete {
        assert!(err.is_none(), "recording damaged: {err:?}");
        assert!(rec.end.is_some(), "no end record");
    }
    assert!(!rec.steps.is_empty());
    for (i, s) in rec.steps.iter().enumerate() {
        assert_eq!(s.step, i as u64 + 1, "gap at step {i}");
    }
    let covered = rec.steps.len() as f64 * 1e-3;
    assert!(
        covered >= through,
        "{covered} s of steps recorded, {through} s expected"
    );
    assert!(
        rec.samples.len() as f64 >= 0.9 * through / 1e-3,
        "{} samples",
        rec.samples.len()
    );
    rec
}

#[test]
fn device_that_stops_answering_is_a_fault_with_zero_force_and_a_ramp_back() {
    let _s = serial();
    let o = session(Fault::Silent, (0.8, 1.1), 1.6, disk(), |_| {});
    assert!(
        o.report.hands[0].haptic.device_faults == 1,
        "{}",
        o.report.hands[0].haptic.device_faults
    );
    assert_force_bound(&o, Some((0.8, 1.1)));
    assert_recording(&o, true, 1.5);
    assert_eq!(o.report.physics.failed, 0);
}

#[test]
fn garbage_reports_are_faults_with_zero_force_and_a_ramp_back() {
    let _s = serial();
    let o = session(Fault::Garbage, (0.8, 1.0), 1.5, disk(), |_| {});
    // Every undecodable report is one counted fault, no more and no fewer.
    let n = o.report.hands[0].haptic.device_faults;
    assert_eq!(
        n as usize, o.served,
        "{n} faults for {} bad polls",
        o.served
    );
    // The window is 0.2 s of wall clock: 200 polls at 1 kHz (201 where a tick falls on each
    // edge). Below 200 only by ticks the machine lost to a freeze of both loops (CI saw one of
    // 26 ms): the bound allows a 50 ms freeze.
    assert!((150..=201).contains(&o.served), "{} bad polls", o.served);
    assert_force_bound(&o, Some((0.8, 1.0)));
    assert_recording(&o, true, 1.4);
}

#[test]
fn unplugged_device_that_comes_back_resumes_with_a_ramp() {
    let _s = serial();
    let o = session(Fault::Unplugged, (0.8, 1.2), 1.7, disk(), |_| {});
    // Every failed poll is one counted fault (measured 400 of 400); the window is 0.4 s of
    // wall clock, 400 polls at 1 kHz, fewer only by a freeze of both loops (a 50 ms one
    // allowed, as for the garbage reports).
    let n = o.report.hands[0].haptic.device_faults;
    assert_eq!(
        n as usize, o.served,
        "{n} faults for {} failed polls",
        o.served
    );
    assert!((350..=401).contains(&o.served), "{} failed polls", o.served);
    assert_force_bound(&o, Some((0.8, 1.2)));
    let rec = assert_recording(&o, true, 1.6);
    // The faulted ticks record no device sample; those before and after are all there.
    let gap = rec
        .samples
        .iter()
        .filter(|s| (0.81..1.19).contains(&s.t) && s.sample.is_some())
        .count();
    assert_eq!(gap, 0, "samples recorded while unplugged");
}

#[test]
fn non_finite_physics_is_rolled_back_reported_and_never_felt() {
    let _s = serial();
    let o = session(Fault::Absurd, (0.8, 0.9), 1.5, disk(), |_| {});
    let p = &o.report.physics;
    println!("first failed step: {:?}", p.first_error);
    // Each physics step that takes an absurd sample fails and is rolled back: one failed step
    // per absurd poll (measured 100 of 100), give or take the two loops' phase at the window's
    // edges (the physics reads the newest sample through a ring: its first or last step in
    // the window may see the sample before or after); the window, 0.1 s of wall clock, is
    // 100 polls, fewer only by a freeze of both loops (a 50 ms one allowed). A stall of the
    // haptic loop alone inside the window serves fewer polls while the physics goes on
    // stepping at 1 kHz on the last absurd sample it read: each poll so lost is one more
    // failed step (CI saw a 4.6 ms haptic period there: 97 polls, 101 failed steps).
    let served = o.served as u64;
    let lost = 100u64.saturating_sub(served);
    assert!(
        p.failed + 2 >= served && p.failed <= served + 2 + lost,
        "{} failed steps for {} absurd polls",
        p.failed,
        o.served
    );
    assert!((50..=101).contains(&o.served), "{} absurd polls", o.served);
    // The statistics name the first failed step: in the window (simulated time runs on the
    // wall clock; a 50 ms freeze allowed, as above).
    let (step, e) = p
        .first_error
        .as_ref()
        .expect("the first failure is reported");
    assert!(
        (0.75..=0.92).contains(&e.time) && *step >= 750,
        "{step}: {e}"
    );
    assert!(
        o.report.to_string().contains("physics first failed step"),
        "{}",
        o.report
    );
    // The world came through finite and the session went on.
    assert!(
        p.world.rods[0]
            .positions()
            .iter()
            .all(|x| x.iter().all(|v| v.is_finite()))
    );
    assert!(p.steps as f64 >= 0.99 * o.report.wall / 1e-3 - 100.0 - 2.0 - p.failed as f64);
    assert_eq!(o.report.hands[0].haptic.non_finite, 0);
    assert_force_bound(&o, Some((0.8, 0.9)));
    assert_recording(&o, true, 1.4);
}

#[test]
fn recorder_disk_failure_keeps_what_was_written_and_the_session_goes_on() {
    let _s = serial();
    let d = Disk {
        bytes: Arc::new(Mutex::new(Vec::new())),
        fail_after: Some(250_000),
    };
    // 3 s: rates are asserted over 3 s (see the_default_scene_runs_three_seconds_with_both_loops_at_rate).
    let o = session(Fault::None, (0.0, 0.0), 3.0, d, |_| {});
    let r = &o.report;
    assert!(
        r.recorder.error.is_some(),
        "the write error was not reported"
    );
    // The loops kept their rate (the recorder is off the real-time path).
    assert!(r.lowest_rate() >= 990.0, "{r}");
    assert_eq!(r.physics.failed, 0);
    assert_force_bound(&o, None);
    // Everything written before the failure decodes: steps from 0 with no gap, the whole
    // chunks (the last, partial one is cut), and it covers the time before the disk filled.
    assert!(o.recording.len() <= 250_000);
    let rec = assert_recording(&o, false, 0.2);
    println!(
        "{} bytes written: {} steps, {} samples recovered",
        o.recording.len(),
        rec.steps.len(),
        rec.samples.len()
    );
}

#[test]
fn stalled_render_thread_costs_snapshots_not_rate_or_force() {
    let _s = serial();
    let o = session(Fault::None, (0.0, 0.0), 3.0, disk(), |running| {
        // The render thread takes snapshots for 0.5 s, then hangs for 1 s holding one.
        let t0 = std::time::Instant::now();
        let mut seen = 0u64;
        while t0.elapsed() < Duration::from_millis(500) {
            if let Some(s) = running.snapshots.latest() {
                seen = seen.max(s.step);
            }
            std::thread::sleep(Duration::from_millis(16));
        }
        assert!(seen > 0, "no snapshot before the stall");
        std::thread::sleep(Duration::from_millis(1000));
        let after = running.snapshots.latest().map_or(0, |s| s.step);
        assert!(after > seen, "snapshots did not resume: {seen} → {after}");
    });
    let r = &o.report;
    assert!(r.lowest_rate() >= 990.0, "{r}");
    assert!(r.physics.skipped_snapshots > 0, "the stall was not seen");
    assert_eq!(r.hands[0].haptic.device_faults + r.physics.failed, 0);
    assert_force_bound(&o, None);
    // The force stayed smooth through the stall: no tick jumps by more than the ramp step.
    let step = MAX_FORCE * 1e-3 / RAMP;
    for w in o.commands.windows(2).filter(|w| w[0].0 > 0.5 && w[1].2) {
        assert!(
            (w[1].1 - w[0].1).abs() <= step,
            "t {}: {} → {} N",
            w[1].0,
            w[0].1,
            w[1].1
        );
    }
    assert_recording(&o, true, 1.9);
}

/// Issue #22: two devices, one per hand, each tool on its own suture; the left device stops
/// answering in [0.8, 1.1) s. Each hand has its own haptic loop, limiter and fault handling: the
/// left hand's force is zero within 10 ms of its fault and ramps back, one fault counted; the
/// right hand's pull goes on through it, untouched; the recording replays bit for bit.
#[test]
fn a_fault_of_one_hands_device_leaves_the_other_hand_alone() {
    use suture::sim::tool::{Hand, ToolSetup};
    let _s = serial();
    // SCENE with a second suture, 5 cm beside the first, before the [tool] table.
    let second = r#"[[rods]]
material = "nylon"
size = "2-0"
centerline = [[0.0, 0.0, 0.05], [0.1, 0.0, 0.05]]
normal = [0.0, 1.0, 0.0]
start = "clamped"
end = "free"
mass_damping = 2.0
[tool]"#;
    let text = SCENE.replace("[tool]", second);
    let sc = scene::parse("two_faults.toml", &text, Overrides::default()).unwrap();
    assert_eq!(sc.world.rods.len(), 2);
    let right = sc.tools[0];
    let left = ToolSetup {
        hand: Hand::Left,
        rod: 1,
        workspace_offset: sc.world.rods[1].positions()[right.node],
        ..right
    };
    let script = "0.0, 0, 0, 0, 0, 0, 0, 0\n0.3, 0, 0.01, 0, 0, 0, 0, 0\n";
    let mut logs = Vec::new();
    let devices = [(right, Fault::None), (left, Fault::Silent)]
        .into_iter()
        .map(|(t, fault)| {
            let (log, log_rx) = HeapRb::<(f64, f64, bool)>::new(1 << 16).split();
            logs.push(log_rx);
            run::DeviceSetup {
                tool: t,
                device: Box::new(TestDevice {
                    inner: ScriptedDevice::parse("hold.csv", script).unwrap(),
                    fault,
                    from: 0.8,
                    to: 1.1,
                    t: 0.0,
                    log,
                    served: Arc::new(AtomicUsize::new(0)),
                }),
                map: WorkspaceMap::new(1.0, t.workspace_offset, Quat::identity(), [false; 3])
                    .unwrap()
                    .with_frame(run::tool_frame(&sc.world, &t)),
                device_max_stiffness: 0.0,
                label: String::new(),
                profile_text: String::new(),
            }
        })
        .collect();
    let disk = disk();
    let running = run::start(RunSetup {
        world: sc.world.clone(),
        devices,
        haptic_period: Duration::from_millis(1),
        physics_dt: Duration::from_millis(1),
        snapshot_every: 16,
        record: Some((
            Box::new(disk.clone()),
            Header {
                crate_version: env!("CARGO_PKG_VERSION").to_string(),
                scene_path: "two_faults.toml".into(),
                scene_text: text.clone(),
                ..Default::default()
            },
        )),
        realtime: true,
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(1600));
    let report = running.stop().unwrap();
    println!("{report}");
    let commands: Vec<Vec<(f64, f64, bool)>> = logs
        .iter_mut()
        .map(|rx| std::iter::from_fn(|| rx.try_pop()).collect())
        .collect();
    assert_eq!(report.hands[0].hand, Hand::Right);
    assert_eq!(report.hands[0].haptic.device_faults, 0);
    assert_eq!(report.hands[1].haptic.device_faults, 1);
    for c in &commands {
        assert!(c.len() > 1000, "{} commands", c.len());
        assert!(
            c.iter()
                .all(|&(_, f, _)| f.is_finite() && f <= MAX_FORCE + 1e-9)
        );
    }
    let force_in = |c: &[(f64, f64, bool)], a: f64, b: f64| -> Vec<f64> {
        c.iter()
            .filter(|x| (a..b).contains(&x.0))
            .map(|x| x.1)
            .collect()
    };
    // Both hands feel the steady pull before the fault.
    for c in &commands {
        let before = force_in(c, 0.6, 0.7);
        assert!(before.iter().all(|&f| f > 0.05), "{before:?}");
    }
    // The left hand: zero from 10 ms into its fault to its end.
    let left_off = force_in(&commands[1], 0.81, 1.1);
    assert!(
        !left_off.is_empty() && left_off.iter().all(|&f| f == 0.0),
        "{left_off:?}"
    );
    // The right hand: its pull goes on through the left hand's fault. Only a stall of the
    // physics loop (its own watchdog, which the left hand's fault does not touch) may fade
    // it: each stall costs at most the watchdog's deadline and fade (5 + 10 ms), the stall
    // itself (at most the physics loop's 20 ms catch-up) and the ramp back in (50 ms):
    // under 100 ticks a stall.
    let right_on = force_in(&commands[0], 0.8, 1.1);
    let low = right_on.iter().filter(|&&f| f <= 0.05).count() as u64;
    let stalls = report.hands[0].haptic.stalls;
    assert!(
        right_on.len() > 250 && low <= 100 * stalls,
        "{low} weak ticks, {stalls} physics stalls: {right_on:?}"
    );
    // The left hand ramps back in after its fault (no step larger than the ramp allows).
    let step = MAX_FORCE * 1e-3 / RAMP;
    let after: Vec<&(f64, f64, bool)> = commands[1].iter().filter(|x| x.0 >= 1.1).collect();
    assert!(after.windows(2).all(|w| w[1].1 - w[0].1 <= step + 1e-9));
    // (The last command is the release at the end of the run: zero, motors off.)
    let back = after.iter().rev().find(|x| x.2).unwrap();
    assert!(back.1 > 0.05, "{back:?}");
    // The recording: both hands, replayed bit for bit.
    let bytes = disk.bytes.lock().unwrap().clone();
    let rec = format::decode(&bytes).unwrap();
    assert_eq!(rec.header.tools.len(), 2);
    let v = suture::session::replay::verify(&rec, sc.world, |_| {}).unwrap();
    assert!(v.divergence.is_none() && v.end_matched == Some(true), "{v}");
}
