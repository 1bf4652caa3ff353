//! The synthetic skills lab (issue #24): writes five expert recordings and three trainees ×
//! five attempts of the interrupted stitch (lab.rs says how they differ and that they are
//! synthetic, not simulated), then prints the commands that take them through the session
//! library, the benchmark and the cohort dashboard (scripts/synthetic_lab.sh runs them all):
//!
//! ```text
//! cargo run --release --example synthetic_lab -- lab
//! ```

mod lab;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "lab".into()));
    let scene = match std::fs::read_to_string(lab::SCENE) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e} (run from the repository root)", lab::SCENE);
            std::process::exit(2);
        }
    };
    let files = match lab::write_lab(&dir, &scene) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {}: {e}", dir.display());
            std::process::exit(1);
        }
    };
    for f in &files {
        println!(
            "{}\t{}\tattempt {}{}",
            f.path.display(),
            f.trainee,
            f.attempt,
            if f.expert { "\texpert" } else { "" }
        );
    }
    let d = dir.display();
    println!("\nthen:");
    println!(
        "  suture assess {d}/experts/*.surec {d}/trainees/*.surec --out {d}/assessment --no-knot"
    );
    println!("  suture benchmark {d}/experts/*.surec --db {d}/assessment/library.sqlite");
    println!("  suture sessions --db {d}/assessment/library.sqlite");
    println!("  suture cohort --db {d}/assessment/library.sqlite");
}
