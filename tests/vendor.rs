//! The vendor-SDK device backends (issue #25) against the SDKs' test doubles (doubles/vendor:
//! a cdylib built here twice into its own target folder, once exporting OpenHaptics' `hd*`
//! functions and once Force Dimension's `dhd*`): no vendor SDK and no hardware are needed,
//! and none was used.
//!
//! - A live 10 s `suture run --headless` on the instrument tie with a Touch (OpenHaptics, the
//!   tick inside the double's 1 kHz servo thread) on the right instrument and an omega.7 (DHD,
//!   polled, its gripper on the jaws) on the left: both haptic loops at ≥ 999 Hz by the run's
//!   own statistics; every force the double received finite and within its profile's limit;
//!   an SDK error of each device, a missed servo tick, and a physics stall each zero the force
//!   and ramp it back in; the recording holds both devices' samples in SI and suture's frame,
//!   and the gripper's presses.
//! - Two Touch devices on the one HD scheduler.
//! - Without the SDK: `suture run` exits 2 naming the library and how to install it;
//!   `suture devices` says what it looked for.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Which SDK's double.
#[derive(Clone, Copy)]
enum Sdk {
    /// OpenHaptics' HD API (libHD's double: only `hd*` functions).
    Hd,
    /// Force Dimension's DHD API (libdhd's double: only `dhd*` functions).
    Dhd,
}

/// The double of `sdk`, built once per test run (`cargo build -p vendor-double --features
/// hd|dhd` into its own target folder beside this build's, so it never waits on the outer
/// cargo's lock): one library per SDK, each exporting only its SDK's functions.
fn double(sdk: Sdk) -> &'static Path {
    static LIBS: [OnceLock<PathBuf>; 2] = [OnceLock::new(), OnceLock::new()];
    let (slot, feature) = match sdk {
        Sdk::Hd => (0, "hd"),
        Sdk::Dhd => (1, "dhd"),
    };
    LIBS[slot].get_or_init(|| {
        // target/<profile>/suture → target/vendor-double/<feature>
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_suture"));
        let target = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let dir = target.join("vendor-double").join(feature);
        let t0 = std::time::Instant::now();
        let o = Command::new(env!("CARGO"))
            .args(["build", "--release", "--locked", "-p", "vendor-double"])
            .args(["--features", feature])
            .arg("--target-dir")
            .arg(&dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs");
        assert!(
            o.status.success(),
            "building the double: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        println!(
            "{feature} double built in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        dir.join("release/libvendor_double.so")
    })
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("suture-vendor-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The double's configuration `name`.txt in `dir`: `body`, and its force log `dir/name-ID.csv`.
fn double_config(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.txt"));
    let log = dir.join(name);
    std::fs::write(&path, format!("{body}log {}\n", log.display())).unwrap();
    path
}

/// One `suture` process at a time: the live runs each spin two 1 kHz loops and a physics loop,
/// and the machine has two cores (run side by side, one run's physics fell to 878 Hz).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `suture ARGS` with the double's configs in the environment and no other vendor library.
fn suture(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Command::new(env!("CARGO_BIN_EXE_suture"));
    c.args(args)
        .env_remove("SUTURE_OPENHAPTICS_LIB")
        .env_remove("SUTURE_FORCEDIMENSION_LIB")
        .env_remove("VENDOR_DOUBLE_HD")
        .env_remove("VENDOR_DOUBLE_DHD");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("suture runs")
}

/// A force log the double wrote: rows (t, fx, fy, fz, tx, ty, tz, gripper force).
fn forces(path: &Path) -> Vec<[f64; 8]> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            v.try_into().unwrap()
        })
        .collect()
}

fn norm(r: &[f64; 8]) -> f64 {
    (r[1] * r[1] + r[2] * r[2] + r[3] * r[3]).sqrt()
}

/// The run's line for `hand`: (rate [Hz] over the time the machine was ours, i.e. leaving
/// out the hypervisor's steal the run reports (runtime::steal), device faults, missed servo
/// ticks, physics stalls).
fn hand_line(stdout: &str, hand: &str) -> (f64, u64, u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("haptic {hand} (")))
        .unwrap_or_else(|| panic!("no {hand} line in\n{stdout}"));
    let after = |key: &str| -> u64 {
        line.find(key).map_or(0, |i| {
            let digits: String = line[i + key.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits.parse().unwrap()
        })
    };
    let rate: f64 = line[..line.find(" Hz:").unwrap()]
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let ticks: f64 = line[..line.find(" ticks, ").unwrap()]
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let stolen = stdout.find("hypervisor steal ").map_or(0.0, |i| {
        let ms: String = stdout[i + "hypervisor steal ".len()..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        ms.parse::<f64>().unwrap() * 1e-3
    });
    let rate = ticks / (ticks / rate - stolen);
    let missed = line.find(" missed servo ticks").map_or(0, |i| {
        let open = line[..i].rfind('(').unwrap();
        line[open + 1..i].parse().unwrap()
    });
    (
        rate,
        after("device faults "),
        missed,
        after("physics stalls "),
    )
}

/// The median force, axis by axis, over the commands in [from, to) [N], SDK axes.
fn median_force(log: &[[f64; 8]], from: f64, to: f64) -> [f64; 3] {
    let mut m = [0.0; 3];
    for (k, m) in m.iter_mut().enumerate() {
        let mut v: Vec<f64> = log
            .iter()
            .filter(|r| r[0] >= from && r[0] < to)
            .map(|r| r[k + 1])
            .collect();
        v.sort_by(f64::total_cmp);
        *m = v.get(v.len() / 2).copied().unwrap_or(f64::NAN);
    }
    m
}

/// The mean force [N], SDK axes, over the commands in [from, to) that are not ramping in: a servo period
/// longer than `SERVO_MISSED_PERIODS` periods (a gap in the log's clock) is a device fault,
/// after which the force restarts from zero and ramps in over `RAMP` s (runtime::haptic), so
/// the commands within `RAMP` s after such a gap are left out. Returns the mean and how many
/// commands it is over.
fn mean_force(log: &[[f64; 8]], from: f64, to: f64) -> ([f64; 3], usize) {
    let gap = suture::runtime::haptic::SERVO_MISSED_PERIODS * 1e-3;
    let mut ramp_until = f64::NEG_INFINITY;
    let mut rows = Vec::new();
    for (i, r) in log.iter().enumerate() {
        if i > 0 && r[0] - log[i - 1][0] > gap {
            ramp_until = r[0] + suture::runtime::run::RAMP;
        }
        if r[0] >= from && r[0] < to && r[0] > ramp_until {
            rows.push(r);
        }
    }
    let n = rows.len().max(1) as f64;
    let mut m = [0.0; 3];
    for r in &rows {
        for k in 0..3 {
            m[k] += r[k + 1] / n;
        }
    }
    (m, rows.len())
}

/// The force is zero (within `eps` N) at every command in [from, to), there is one, and from
/// `to` on it grows by at most the ramp's step a tick (limit × 1 ms / 50 ms) until it is back
/// above `back` N within `within` s.
fn assert_zero_then_ramp(log: &[[f64; 8]], (from, to): (f64, f64), limit: f64, what: &str) {
    let during: Vec<&[f64; 8]> = log.iter().filter(|r| r[0] >= from && r[0] < to).collect();
    for r in &during {
        assert!(norm(r) <= 1e-12, "{what}: {} N at {} s", norm(r), r[0]);
    }
    let step = limit * 1e-3 / 0.05;
    let after: Vec<&[f64; 8]> = log.iter().filter(|r| r[0] >= to).collect();
    assert!(after.len() > 100, "{what}: no commands after the fault");
    let mut prev = after[0];
    assert!(
        norm(prev) <= step + 1e-9,
        "{what}: starts at {} N",
        norm(prev)
    );
    for r in &after[1..60] {
        assert!(
            norm(r) <= norm(prev) + step + 1e-9,
            "{what}: {} → {} N at {} s",
            norm(prev),
            norm(r),
            r[0]
        );
        prev = r;
    }
    println!(
        "{what}: {} commands zero in [{from}, {to}) s, ramp back in ≤ {step:.3} N a tick",
        during.len()
    );
}

const TOUCH_MAX: f64 = 3.3;
const OMEGA_MAX: f64 = 8.0;

#[test]
fn a_touch_and_an_omega_drive_the_two_instruments_for_ten_seconds_through_faults() {
    let (hd_lib, dhd_lib) = (double(Sdk::Hd), double(Sdk::Dhd));
    let dir = tmp("live");
    // Right: a Touch moving the right driver 14 mm down (HD: y up, mm) and back up; an SDK
    // error at 3.0 s, missed servo ticks (3 ms) at 5.0 s, a physics stall (100 ms) at 7.0 s.
    let hd = double_config(
        &dir,
        "touch",
        "model Touch\n\
         key 0.0 0 0 0 0 0 0 0 0\n\
         key 1.0 0 -14 0 0 0 0 0 0\n\
         key 9.0 0 -14 0 0 0 0 0 0\n\
         key 9.5 0 0 0 0 0 0 0 0\n\
         error 3.0 3.2\n\
         miss 5.0 0.003\n\
         stall 7.0 0.1\n",
    );
    // Left: an omega.7 (DHD: x toward the user, y right, z up, m) lifting the left driver
    // 1 cm (DHD z), its gripper opened at 2 s and closed at 6 s; an SDK error at 4.0 s.
    let dhd = double_config(
        &dir,
        "omega",
        "model omega.7\n\
         key 0.0 0 0 0 0 0 0 0 0.05\n\
         key 1.0 0 0 0.01 0 0 0 0 0.05\n\
         key 1.95 0 0 0.01 0 0 0 0 0.05\n\
         key 2.0 0 0 0.01 0 0 0 0 0.5\n\
         key 6.0 0 0 0.01 0 0 0 0 0.5\n\
         key 6.05 0 0 0.01 0 0 0 0 0.05\n\
         error 4.0 4.2\n",
    );
    let rec = dir.join("session.surec");
    let (hd_arg, dhd_arg) = (hd_lib.to_str().unwrap(), dhd_lib.to_str().unwrap());
    let t0 = std::time::Instant::now();
    let o = suture(
        &[
            "run",
            "scenes/instrument_tie.toml",
            "--headless",
            "--duration",
            "10",
            "--device",
            "right=openhaptics,left=forcedimension",
            "--openhaptics-lib",
            hd_arg,
            "--forcedimension-lib",
            dhd_arg,
            "--record",
            rec.to_str().unwrap(),
        ],
        &[("VENDOR_DOUBLE_HD", &hd), ("VENDOR_DOUBLE_DHD", &dhd)],
    );
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    println!("{out}\n{err}\nrun took {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Both devices' loops held 1 kHz, by the run's own statistics.
    let (right_rate, right_faults, right_missed, right_stalls) = hand_line(&out, "right");
    let (left_rate, left_faults, _, left_stalls) = hand_line(&out, "left");
    assert!(
        right_rate >= 999.0 && left_rate >= 999.0,
        "{right_rate} / {left_rate} Hz"
    );
    assert!(out.contains("haptic right (openhaptics"), "{out}");
    assert!(out.contains("haptic left (forcedimension"), "{out}");
    assert!(
        out.contains("haptic right on the vendor SDK's servo thread"),
        "{out}"
    );
    // The right: the SDK error (one fault a failed frame: 200) and the missed ticks (the one
    // made, and any the double's servo thread missed on its own on this busy machine); the
    // left: its SDK error (200 failed polls). Each saw the physics stall.
    assert!(right_missed >= 1, "no missed servo tick counted");
    assert!(
        (150..=260).contains(&(right_faults - right_missed)),
        "right faults {right_faults}, {right_missed} of them missed ticks"
    );
    assert!(
        (150..=260).contains(&left_faults),
        "left faults {left_faults}"
    );
    assert!(
        right_stalls >= 1 && left_stalls >= 1,
        "{right_stalls} {left_stalls}"
    );

    let touch = forces(&dir.join("touch-0.csv"));
    let omega = forces(&dir.join("omega-0.csv"));
    for (log, limit, what) in [(&touch, TOUCH_MAX, "touch"), (&omega, OMEGA_MAX, "omega")] {
        assert!(log.len() > 9000, "{what}: {} commands", log.len());
        for r in log.iter() {
            assert!(
                r.iter().all(|v| v.is_finite()) && norm(r) <= limit + 1e-9,
                "{what}: {r:?}"
            );
        }
        let peak = log.iter().map(norm).fold(0.0, f64::max);
        println!("{what}: {} commands, peak {peak:.3} N", log.len());
    }
    // Each hand holds its instrument up: it feels the instrument's weight (m g = 0.02 kg ×
    // 9.81 m/s²) down, along HD -y for the Touch and DHD -z for the omega, once the omega has
    // let the needle go (before 2 s it holds the needle and suture too: 0.2315 N measured).
    // The median force: the needle's fall onto the pad after 2 s makes physics steps of up to
    // 9 ms, and the watchdog fades the force at each (issue #23; the haptic lines count them
    // as physics stalls, and the deliberate stall at 7 s tests the fade). A mean over the
    // window fell to 0.143 N in 1 of 15 runs; a median is the force held between fades.
    let weight = 0.02 * 9.81;
    for (log, down, what) in [(&touch, 1, "touch"), (&omega, 2, "omega")] {
        let m = median_force(log, 2.5, 3.0);
        println!("{what}: median force over 2.5-3.0 s {m:?} N (SDK axes)");
        let mut want = [0.0; 3];
        want[down] = -weight;
        for k in 0..3 {
            assert!(
                (m[k] - want[k]).abs() < 1e-3,
                "{what}: {m:?} N, want {want:?}"
            );
        }
    }
    // SDK error: zero 10 ms into it, ramp back in after.
    assert_zero_then_ramp(&touch, (3.01, 3.2), TOUCH_MAX, "touch SDK error");
    // A missed servo tick: the first tick after it restarts from zero and ramps.
    let after_miss = touch.iter().position(|r| r[0] >= 5.003).unwrap();
    assert!(
        touch[after_miss][0] - touch[after_miss - 1][0] > 0.0025,
        "no gap in the servo ticks around 5.0 s"
    );
    assert_zero_then_ramp(&touch, (5.0, 5.003), TOUCH_MAX, "touch missed tick");
    // Physics stall: the watchdog fades it to zero within 15 ms (5 ms deadline, 10 ms fade)
    // of the physics thread's last publish, and ramps back in after. The stall starts when
    // the physics thread runs the double's signal handler, not at the double's 7.0 s: that
    // thread is time-shared (nice −10) behind the two SCHED_FIFO haptic loops on 2 cores, and
    // in one CI run (2026-11-27, 387b577) the handler ran 2.8 ms late (0.020 N at 7.0168 s,
    // the fade's last millisecond). So zero is asserted from 15 ms plus 5 ms of that latency.
    assert_zero_then_ramp(&touch, (7.020, 7.1), TOUCH_MAX, "touch physics stall");
    // The omega's error: the failed calls take no command; after it the force ramps in.
    assert!(!omega.iter().any(|r| (4.0..4.2).contains(&r[0])));
    assert_zero_then_ramp(&omega, (4.0, 4.2), OMEGA_MAX, "omega SDK error");

    // The recording: both devices' samples, in SI and suture's frame.
    let bytes = std::fs::read(&rec).unwrap();
    let r = suture::session::format::decode(&bytes).expect("the recording decodes");
    assert_eq!(r.header.tools.len(), 2);
    let at = |tool: u8, t: f64| {
        r.samples
            .iter()
            .filter(|s| s.tool == tool && s.t >= t)
            .find_map(|s| s.sample)
            .unwrap()
    };
    // The Touch at -14 mm (HD y) is at y = -0.014 m; the omega lifted 1 cm along DHD z is at
    // y = +0.01 m in suture's frame.
    let p = at(0, 2.0).position;
    assert!(
        (p - suture::math::Vec3::new(0.0, -0.014, 0.0)).norm() < 1e-9,
        "{p}"
    );
    let p = at(1, 2.0).position;
    assert!(
        (p - suture::math::Vec3::new(0.0, 0.01, 0.0)).norm() < 1e-9,
        "{p}"
    );
    // No sample while the omega's SDK failed (the double's clock starts at its first call,
    // a little before the run's).
    assert!(
        !r.samples
            .iter()
            .any(|s| s.tool == 1 && (4.06..4.14).contains(&s.t) && s.sample.is_some())
    );
    // The gripper pressed the jaw button twice: opening past 0.25 rad at 1.972 s, closing
    // under 0.15 rad at 6.039 s (the double's clock, a little ahead of the run's).
    let mut presses = Vec::new();
    let mut last = 0;
    for s in r.samples.iter().filter(|s| s.tool == 1) {
        let b = s.sample.map_or(last, |x| x.buttons & 1);
        if b == 1 && last == 0 {
            presses.push(s.t);
        }
        last = b;
    }
    assert_eq!(presses.len(), 2, "{presses:?}");
    assert!(
        (presses[0] - 1.972).abs() < 0.1 && (presses[1] - 6.039).abs() < 0.1,
        "{presses:?}"
    );
}

#[test]
fn two_touch_devices_share_the_hd_scheduler() {
    let lib = double(Sdk::Hd);
    let dir = tmp("two");
    let hd = double_config(
        &dir,
        "touch",
        // A 5 ms servo stall at 1.5 s: a missed servo tick in the window the forces are
        // averaged over (the CI run of 5c8b201 had one of its own there).
        "model Touch X\nkey 0 0 0 0 0 0 0 0 0\nkey 0.5 0 10 0 0 0 0 0 0\nmiss 1.5 0.005\n",
    );
    let libarg = lib.to_str().unwrap();
    let o = suture(
        &[
            "run",
            "scenes/instrument_tie.toml",
            "--headless",
            "--duration",
            "2",
            "--no-record",
            "--device",
            "right=openhaptics:Right,left=openhaptics:Left",
            "--openhaptics-lib",
            libarg,
        ],
        &[("VENDOR_DOUBLE_HD", &hd)],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    for (hand, id) in [("right", 0), ("left", 1)] {
        let (rate, faults, missed, _) = hand_line(&out, hand);
        // Rates are asserted over ≥ 10 s only (the run above); this one must have run. No SDK
        // error: the only faults are servo ticks missed, the scripted one at least.
        assert!(rate > 900.0, "{hand}: {rate} Hz");
        assert_eq!(faults, missed, "{hand}");
        assert!(
            missed >= 1,
            "{hand}: the scripted miss at 1.5 s was not seen"
        );
        let log = forces(&dir.join(format!("touch-{id}.csv")));
        assert!(log.len() > 1800, "{hand}: {} commands", log.len());
        assert!(log.iter().all(|r| norm(r) <= TOUCH_MAX + 1e-9));
        // Each Touch holds its instrument's weight (0.196 N down, HD -y) once still; the left
        // holds the needle too, and feels the suture's elastic pull on it as well (0.0287 N
        // more down, measured in 5 of 5 runs; the needle's and suture's weight is < 1 mN).
        // Away from a missed servo tick's ramp-in (one in the CI run of 5c8b201, at 1.549 s,
        // took 4.8 mN off the plain mean: half of 0.196 N over 50 ms of the second).
        let (m, n) = mean_force(&log, 1.0, 2.0);
        println!("{hand}: mean force over 1-2 s {m:?} N (SDK axes, {n} commands)");
        assert!(n > 500, "{hand}: {n} commands settled in 1-2 s");
        let weight = 0.02 * 9.81;
        if hand == "right" {
            assert!((m[1] + weight).abs() < 1e-3, "{hand}: {m:?} N");
        } else {
            assert!(
                -m[1] > weight + 0.02 && -m[1] < weight + 0.04,
                "{hand}: {m:?} N"
            );
        }
    }
}

#[test]
fn without_the_sdk_run_exits_2_naming_the_library_and_devices_says_what_it_looked_for() {
    for (device, lib, env) in [
        ("openhaptics", "libHD.so", "SUTURE_OPENHAPTICS_LIB"),
        ("forcedimension", "libdhd.so", "SUTURE_FORCEDIMENSION_LIB"),
    ] {
        // Without the library (exit 2, stderr); with `extra` arguments.
        let run = |extra: &[&str]| {
            let mut args = vec!["run", "--device", device, "--headless", "--duration", "1"];
            args.extend_from_slice(extra);
            args.push("--no-record");
            let o = suture(&args, &[]);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert_eq!(o.status.code(), Some(2), "{err}");
            err
        };
        let err = run(&[]);
        assert!(
            err.contains(&format!("looked for {lib} (default: ")) && err.contains(env),
            "{err}"
        );
        assert!(err.contains("Install") || err.contains("Download"), "{err}");
        // A path given that is not there is named.
        let flag = format!("--{device}-lib");
        let err = run(&[&flag, "/nonexistent/libX.so"]);
        assert!(
            err.contains("looked for /nonexistent/libX.so (given on the command line"),
            "{err}"
        );
    }
    let o = suture(&["devices"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("openhaptics: 1 profiles in devices/vendor/")
            && out.contains("forcedimension: 3 profiles in devices/vendor/"),
        "{out}"
    );
    assert!(
        out.contains(
            "nothing found: OpenHaptics: cannot load the vendor's library; looked for libHD.so"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "nothing found: Force Dimension: cannot load the vendor's library; looked for libdhd.so"
        ),
        "{out}"
    );
}

#[test]
fn devices_lists_what_the_sdks_find() {
    let (hd_lib, dhd_lib) = (double(Sdk::Hd), double(Sdk::Dhd));
    let dir = tmp("devices");
    let dhd = double_config(
        &dir,
        "falcon",
        "model Falcon\ndevices 2\nkey 0 0 0 0 0 0 0 0 0\n",
    );
    let (hd_arg, dhd_arg) = (hd_lib.to_str().unwrap(), dhd_lib.to_str().unwrap());
    let args = [
        "devices",
        "--openhaptics-lib",
        hd_arg,
        "--forcedimension-lib",
        dhd_arg,
    ];
    // No HD device configured: the SDK's reason; two Falcons.
    let o = suture(&args, &[("VENDOR_DOUBLE_DHD", &dhd)]);
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}");
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains(&format!("library {hd_arg}")) && out.contains(&format!("library {dhd_arg}")),
        "{out}"
    );
    assert!(
        out.contains("no device: OpenHaptics: no device found (hdInitDevice(HD_DEFAULT_DEVICE): Communication error (vendor double) (HD error 0x0201"),
        "{out}"
    );
    assert!(
        out.contains("--device forcedimension:0: Falcon")
            && out.contains("--device forcedimension:1: Falcon"),
        "{out}"
    );
}
