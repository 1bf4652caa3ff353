//! `suture export`: a recording's series as CSV files (steps, samples, events) and/or a NumPy
//! .npz.

use std::path::Path;
use std::process::ExitCode;

use suture::session::export;

use super::read_salvaged;

/// `suture export FILE [--csv DIR] [--npz FILE]`.
pub fn export(file: &str, csv: Option<&str>, npz: Option<&str>) -> ExitCode {
    if csv.is_none() && npz.is_none() {
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
    if let Some(d) = csv
        && let Err(e) = export::write_csv(&rec, Path::new(d))
    {
        eprintln!("error: --csv {d}: {e}");
        return ExitCode::from(1);
    }
    if let Some(p) = npz
        && let Err(e) = export::write_npz(&rec, Path::new(p))
    {
        eprintln!("error: --npz {p}: {e}");
        return ExitCode::from(1);
    }
    println!(
        "{file}: {} steps, {} device samples, {} events exported",
        rec.steps.len(),
        rec.samples.len(),
        rec.events.len()
    );
    ExitCode::SUCCESS
}
