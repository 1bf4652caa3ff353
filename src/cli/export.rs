//! `suture export`: a recording's series as CSV files (steps, samples, events) and/or a NumPy
//! .npz, which also holds the rods' centreline frames of the re-simulated session.

use std::path::Path;
use std::process::ExitCode;

use suture::session::{export, frames};

use super::{read_salvaged, recorded_scene, warn_other_build};

/// Arguments of `suture export`.
pub struct ExportArgs<'a> {
    /// The recording.
    pub file: &'a str,
    /// Folder for the CSV files.
    pub csv: Option<&'a str>,
    /// The .npz file.
    pub npz: Option<&'a str>,
    /// Simulated time between two frames of the rods [s].
    pub frames_every: f64,
    /// Leave the frames out (no re-simulation).
    pub no_frames: bool,
}

/// `suture export FILE [--csv DIR] [--npz FILE [--frames-every S | --no-frames]]`. Exit 2 for
/// bad input (arguments, recording, its scene), 1 if an output cannot be written or the
/// re-simulation diverges from the recording (then no .npz is written).
pub fn export(a: ExportArgs) -> ExitCode {
    let file = a.file;
    if a.csv.is_none() && a.npz.is_none() {
        eprintln!("error: export needs --csv DIR and/or --npz FILE");
        return ExitCode::from(2);
    }
    let rec = match read_salvaged(file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // The frames' stride in whole physics steps (checked before anything is written).
    let dt = rec.header.dt;
    let every = (a.frames_every / dt).round();
    if a.npz.is_some() && !a.no_frames && every < 1.0 {
        eprintln!(
            "error: --frames-every {}: shorter than the recording's physics step (dt = {dt} s)",
            a.frames_every
        );
        return ExitCode::from(2);
    }
    if let Some(d) = a.csv
        && let Err(e) = export::write_csv(&rec, Path::new(d))
    {
        eprintln!("error: --csv {d}: {e}");
        return ExitCode::from(1);
    }
    let mut frames_note = String::new();
    if let Some(p) = a.npz {
        let mut arrays = export::npz_arrays(&rec);
        if !a.no_frames {
            let sc = match recorded_scene(file, &rec.header) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            warn_other_build(file, &rec.header);
            let mut world = sc.world;
            let (f, report) = match frames::sample(&rec, &mut world, every as u64) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {file}: {e}");
                    return ExitCode::from(2);
                }
            };
            if report.divergence.is_some() {
                eprintln!(
                    "error: {file}: {report}: the rods' frames would not be the recorded session's, \
                     so no .npz is written (--no-frames exports the recorded series alone)"
                );
                return ExitCode::from(1);
            }
            frames_note = format!(
                ", {} frames of {} rod{} every {} steps ({} s), re-simulated bit for bit",
                f.len(),
                f.rods.len(),
                if f.rods.len() == 1 { "" } else { "s" },
                f.every,
                f.every as f64 * dt
            );
            arrays.extend(f.arrays());
        }
        let written = std::fs::File::create(p)
            .and_then(|w| suture::session::npz::write(std::io::BufWriter::new(w), &arrays));
        if let Err(e) = written {
            eprintln!("error: --npz {p}: {e}");
            return ExitCode::from(1);
        }
    }
    println!(
        "{file}: {} steps, {} device samples, {} events exported{frames_note}",
        rec.steps.len(),
        rec.samples.len(),
        rec.events.len()
    );
    ExitCode::SUCCESS
}
