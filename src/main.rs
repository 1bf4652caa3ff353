//! `suture` command line. Exit codes: 0 success, 1 solver failure, 2 bad input (scene, arguments).
//!
//! This file holds the clap definitions and the dispatch; each subcommand's body is in `cli/`.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod cli;
use cli::{
    DeviceArg, parse_date, parse_devices, parse_frame_interval, parse_seconds, parse_speed,
    parse_time, parse_trainee,
};
use suture::scene::ModelName;

#[derive(Parser)]
#[command(name = "suture", version, about = "Haptic surgical suture simulator")]
struct Cli {
    /// Without a subcommand: `run` the default suturing scene with the mouse.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    Strands,
    Cosserat,
    Der,
}

impl From<ModelArg> for ModelName {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Strands => ModelName::Strands,
            ModelArg::Cosserat => ModelName::Cosserat,
            ModelArg::Der => ModelName::Der,
        }
    }
}

/// The vendor SDKs' libraries, loaded at run time.
#[derive(clap::Args, Clone, Debug, Default)]
struct VendorLibs {
    /// OpenHaptics' libHD (default: $SUTURE_OPENHAPTICS_LIB, then libHD.so on the loader's
    /// path and OpenHaptics' install folders).
    #[arg(long, value_name = "PATH")]
    openhaptics_lib: Option<String>,
    /// Force Dimension's libdhd (default: $SUTURE_FORCEDIMENSION_LIB, then libdhd.so on the
    /// loader's path and usual install folders).
    #[arg(long, value_name = "PATH")]
    forcedimension_lib: Option<String>,
}

impl From<VendorLibs> for cli::run::VendorLibraries {
    fn from(v: VendorLibs) -> Self {
        cli::run::VendorLibraries {
            openhaptics: v.openhaptics_lib,
            forcedimension: v.forcedimension_lib,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the simulator: haptic loop (1 kHz), physics loop, and the viewer (or --headless).
    Run {
        /// Scene file (TOML) with a [tool]; default scenes/suturing.toml (built in if absent).
        scene: Option<String>,
        /// Input device: mouse, hid (first device matching a profile), hid:PROFILE.toml,
        /// scripted:FILE.csv (a trajectory t,x,y,z,rx,ry,rz,buttons), openhaptics[:NAME] (a
        /// 3D Systems Touch or Phantom through OpenHaptics; NAME as in Touch Setup) or
        /// forcedimension[:INDEX] (a Force Dimension device or Novint Falcon); it drives the scene's
        /// only tool (or its right hand). Two devices, one per hand: HAND=SPEC pairs, e.g.
        /// right=hid:devices/x.toml,left=mouse. The mouse alone drives every tool, one at a
        /// time (Tab switches).
        #[arg(long, default_value = "mouse", value_parser = parse_devices)]
        device: DeviceArg,
        /// Folder of device profiles (for --device hid; its vendor/ for openhaptics and
        /// forcedimension).
        #[arg(long, default_value = "devices")]
        profiles: String,
        #[command(flatten)]
        libraries: VendorLibs,
        /// No window: run for --duration seconds and print the loop statistics.
        #[arg(long)]
        headless: bool,
        /// Wall time to run [s] (headless: required; with a window: close after it).
        #[arg(long, value_parser = parse_seconds)]
        duration: Option<f64>,
        /// Render one frame to this PNG (the first snapshot at or after --shot-at simulated
        /// seconds; nothing is drawn before it) and exit; also writes PNG.json with the
        /// projected rod centerlines, needle and instruments.
        #[arg(long)]
        screenshot: Option<String>,
        /// Simulated time of the screenshot [s].
        #[arg(long, default_value_t = 0.5, value_parser = parse_time)]
        shot_at: f64,
        /// Record the session to FILE (default: a new file sessions/SCENE-UNIXTIME.surec).
        #[arg(long, value_name = "FILE", conflicts_with = "no_record")]
        record: Option<String>,
        /// Do not record the session.
        #[arg(long)]
        no_record: bool,
        /// The trainee's id, recorded with the session (assessment groups sessions by it):
        /// 1 to 64 letters, digits, '-', '_', '.' or '@'.
        #[arg(long, value_name = "ID", value_parser = parse_trainee)]
        trainee: Option<String>,
        /// Run the haptic and physics loops at normal priority (by default they ask for
        /// SCHED_FIFO 80 and 70, which needs root, CAP_SYS_NICE or an rtprio limit; refused,
        /// they run at normal priority and the run says so).
        #[arg(long)]
        no_realtime: bool,
    },
    /// Replay a recorded session: `--headless --verify` re-simulates it from the recorded
    /// targets and checks every step and state digest bit for bit (exit 0 only if all match,
    /// 1 at the first divergence, 2 for a bad file).
    Replay {
        /// The recording (.surec).
        file: String,
        /// No window.
        #[arg(long)]
        headless: bool,
        /// Compare every step and digest with the recording.
        #[arg(long)]
        verify: bool,
        /// Viewer: playback speed (1/16 to 16).
        #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
        speed: f64,
        /// Viewer: start at this simulated time [s].
        #[arg(long, default_value_t = 0.0, value_parser = parse_time)]
        start: f64,
        /// Viewer: close after this many wall seconds.
        #[arg(long, value_parser = parse_seconds)]
        duration: Option<f64>,
        /// Viewer: render one frame to this PNG (once the replay reaches --shot-at) and exit.
        #[arg(long)]
        screenshot: Option<String>,
        /// Simulated time of the screenshot [s].
        #[arg(long, default_value_t = 0.5, value_parser = parse_time)]
        shot_at: f64,
    },
    /// Assess recorded sessions: metrics and score per file as JSON (DIR/NAME.json), an HTML
    /// report with PNG plots (DIR/NAME.html, DIR/NAME-*.png), and a CSV summary across them
    /// (DIR/summary.csv). A truncated recording is assessed up to its last
    /// chunk (reported incomplete).
    Assess {
        /// Recordings (.surec).
        #[arg(required = true)]
        files: Vec<String>,
        /// Output folder.
        #[arg(long, default_value = "assessment")]
        out: String,
        /// The session library (SQLite) every assessed session is stored in, keyed on its
        /// recording's content hash (default: OUT/library.sqlite).
        #[arg(long, value_name = "PATH")]
        db: Option<String>,
        /// Do not re-simulate the session for its knot (faster; the knot is then the last
        /// KnotTied event's, if any).
        #[arg(long)]
        no_knot: bool,
    },
    /// List the sessions of the library, by trainee, task and date (UTC), with their marks
    /// and each trainee's proficiency.
    Sessions {
        /// The session library.
        #[arg(long, value_name = "PATH", default_value = "assessment/library.sqlite")]
        db: String,
        /// Only this trainee's sessions.
        #[arg(long, value_name = "ID")]
        trainee: Option<String>,
        /// Only this task's sessions.
        #[arg(long)]
        task: Option<String>,
        /// Only sessions started on or after this day (YYYY-MM-DD, UTC).
        #[arg(long, value_name = "DATE", value_parser = parse_date)]
        since: Option<f64>,
        /// Only sessions started on or before this day (YYYY-MM-DD, UTC).
        #[arg(long, value_name = "DATE", value_parser = parse_date)]
        until: Option<f64>,
    },
    /// Build a task's benchmark from expert recordings already assessed into the library:
    /// per metric, a threshold at the experts' mean + 2 SD (lower is better) or mean - 2 SD
    /// (higher is better); every session of the task is marked pass/fail against it.
    Benchmark {
        /// The experts' recordings (.surec), all of one task, at least 2.
        #[arg(required = true)]
        files: Vec<String>,
        /// The session library.
        #[arg(long, value_name = "PATH", default_value = "assessment/library.sqlite")]
        db: String,
        /// Proficiency: every metric passes on this many consecutive attempts.
        #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
        consecutive: u32,
    },
    /// Write the cohort dashboard of each task (or one): DIR/cohort-TASK.html, self-contained:
    /// learning curves with the benchmark band, the cohort's distribution per metric, who is
    /// proficient after how many attempts, each session linked to its report.
    Cohort {
        /// The session library.
        #[arg(long, value_name = "PATH", default_value = "assessment/library.sqlite")]
        db: String,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// Output folder (default: the library's folder).
        #[arg(long)]
        out: Option<String>,
    },
    /// Export a recording's series: CSV files (steps, samples, events) and/or a NumPy .npz,
    /// which also holds the suture's centreline frames (`suture` [T, nodes, 3], `suture_time`
    /// [T]) from re-simulating the session bit for bit (exit 1, no .npz, if it diverges).
    Export {
        /// The recording (.surec).
        file: String,
        /// Folder for steps.csv, samples.csv and events.csv.
        #[arg(long)]
        csv: Option<String>,
        /// The .npz file.
        #[arg(long)]
        npz: Option<String>,
        /// Simulated time between two frames of the rods in the .npz [s], rounded to whole
        /// physics steps.
        #[arg(long, value_name = "S", default_value_t = 0.01, value_parser = parse_frame_interval, requires = "npz")]
        frames_every: f64,
        /// Leave the rods' frames out of the .npz (no re-simulation).
        #[arg(long, requires = "npz", conflicts_with = "frames_every")]
        no_frames: bool,
    },
    /// List the HID devices present and the profile (devices/*.toml) that matches each, and
    /// what the vendor SDKs (OpenHaptics, Force Dimension) find, or why they find nothing.
    Devices {
        /// Folder of device profiles.
        #[arg(long, default_value = "devices")]
        profiles: String,
        #[command(flatten)]
        libraries: VendorLibs,
    },
    /// Run the 1 kHz pacer alone for a while and report its rate and period jitter.
    Jitter {
        /// Duration [s].
        #[arg(long, default_value_t = 5.0, value_parser = parse_seconds)]
        seconds: f64,
    },
    /// Run a scene headless and write the trajectory as a NumPy .npz file.
    Simulate {
        /// Scene file (TOML).
        scene: String,
        /// Output file (.npz): times [T], rod{i} [T, nodes, 3], rod{i}_directors [T, nodes-1, 3].
        #[arg(long)]
        out: String,
        /// Number of frames, evenly spaced from 0 to the scene's duration inclusive
        /// (default 101, or 1 when the duration is 0).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        frames: Option<u32>,
        /// Elements per rod (overrides the scene).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        elements: Option<u32>,
        /// Rod model (overrides the scene's solver.model).
        #[arg(long, value_enum)]
        model: Option<ModelArg>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Run {
        scene: None,
        device: DeviceArg {
            entries: vec![(None, "mouse".to_string())],
        },
        profiles: "devices".to_string(),
        libraries: VendorLibs::default(),
        headless: false,
        duration: None,
        screenshot: None,
        shot_at: 0.5,
        record: None,
        no_record: false,
        trainee: None,
        no_realtime: false,
    });
    match command {
        Command::Run {
            scene,
            device,
            profiles,
            libraries,
            headless,
            duration,
            screenshot,
            shot_at,
            record,
            no_record,
            trainee,
            no_realtime,
        } => cli::run::run(cli::run::RunArgs {
            scene,
            device,
            profiles,
            libraries: libraries.into(),
            headless,
            duration,
            screenshot,
            shot_at,
            record,
            no_record,
            trainee: trainee.unwrap_or_default(),
            no_realtime,
        }),
        Command::Replay {
            file,
            headless,
            verify,
            speed,
            start,
            duration,
            screenshot,
            shot_at,
        } => cli::replay::replay(cli::replay::ReplayArgs {
            file,
            headless,
            verify,
            speed,
            start,
            duration,
            screenshot,
            shot_at,
        }),
        Command::Assess {
            files,
            out,
            db,
            no_knot,
        } => cli::assess::assess(cli::assess::AssessArgs {
            files: &files,
            out: &out,
            db: db.as_deref(),
            no_knot,
        }),
        Command::Sessions {
            db,
            trainee,
            task,
            since,
            until,
        } => cli::lab::sessions(
            &db,
            suture::session::library::Filter {
                trainee,
                task,
                since,
                until: until.map(|d| d + 86_400.0),
            },
        ),
        Command::Benchmark {
            files,
            db,
            consecutive,
        } => cli::lab::benchmark(&files, &db, consecutive),
        Command::Cohort { db, task, out } => cli::lab::cohort(&db, task.as_deref(), out.as_deref()),
        Command::Export {
            file,
            csv,
            npz,
            frames_every,
            no_frames,
        } => cli::export::export(cli::export::ExportArgs {
            file: &file,
            csv: csv.as_deref(),
            npz: npz.as_deref(),
            frames_every,
            no_frames,
        }),
        Command::Simulate {
            scene,
            out,
            frames,
            elements,
            model,
        } => cli::simulate::simulate(cli::simulate::SimulateArgs {
            scene,
            out,
            frames,
            elements,
            model: model.map(ModelName::from),
        }),
        Command::Devices {
            profiles,
            libraries,
        } => cli::devices::devices(&profiles, &libraries.into()),
        Command::Jitter { seconds } => cli::jitter::jitter(seconds),
    }
}
