//! Malformed scene fixtures (tests/fixtures/bad): each fails with its exact message, naming file,
//! line, column and field, and the CLI exits with code 2. None panics.

use std::process::Command;
use suture::scene::{self, Overrides};

const CASES: &[(&str, &str)] = &[
    (
        "tests/fixtures/bad/instrument_hand.toml",
        r#"tests/fixtures/bad/instrument_hand.toml:43:8: instruments[1].hand must be "right" or "left", got "middle""#,
    ),
    (
        "tests/fixtures/bad/instrument_tip_radius.toml",
        r#"tests/fixtures/bad/instrument_tip_radius.toml:41:18: instruments[0].jaw_tip_radius must be at most `jaw_radius` 0.0008 [m] (a jaw tapers toward its tip), got 0.001"#,
    ),
    (
        "tests/fixtures/bad/instrument_needle_position.toml",
        r#"tests/fixtures/bad/instrument_needle_position.toml:46:12: instruments[1].position must be left out: an instrument that holds the needle is placed on the needle's grip"#,
    ),
    (
        "tests/fixtures/bad/instrument_and_tool.toml",
        r#"tests/fixtures/bad/instrument_and_tool.toml:34:1: instruments replace [tool]: a scene's hands drive either its [tool] or its instruments"#,
    ),
    (
        "tests/fixtures/bad/pd_stiffness_damping.toml",
        r#"tests/fixtures/bad/pd_stiffness_damping.toml:9:21: rods[0].stiffness_damping is not available with solver = "pd" (use mass_damping, or the newton solver)"#,
    ),
    (
        "tests/fixtures/bad/negative_damping.toml",
        r#"tests/fixtures/bad/negative_damping.toml:8:16: rods[0].mass_damping must be ≥ 0 and finite, got -1"#,
    ),
    (
        "tests/fixtures/bad/zero_iterations.toml",
        r#"tests/fixtures/bad/zero_iterations.toml:4:14: solver.iterations must be in 1..=100000 [-], got 0"#,
    ),
    (
        "tests/fixtures/bad/solver_on_strands.toml",
        r#"tests/fixtures/bad/solver_on_strands.toml:3:10: solver.solver applies to model "cosserat" only"#,
    ),
    (
        "tests/fixtures/bad/refine_pd.toml",
        r#"tests/fixtures/bad/refine_pd.toml:5:10: solver.refine refines Newton steps: it applies to models "cosserat" and "der" with solver = "newton" only"#,
    ),
    (
        "tests/fixtures/bad/indefinite_pd.toml",
        r#"tests/fixtures/bad/indefinite_pd.toml:5:14: solver.indefinite chooses Newton steps: it applies to models "cosserat" and "der" with solver = "newton" only"#,
    ),
    (
        "tests/fixtures/bad/gaps_pd.toml",
        r#"tests/fixtures/bad/gaps_pd.toml:5:8: solver.gaps solves Newton steps: it applies to models "cosserat" and "der" with solver = "newton" only"#,
    ),
    (
        "tests/fixtures/bad/chord_pd.toml",
        r#"tests/fixtures/bad/chord_pd.toml:5:9: solver.chord reuses Newton factorisations: it applies to models "cosserat" and "der" with solver = "newton" only"#,
    ),
    (
        "tests/fixtures/bad/subdivide_der.toml",
        r#"tests/fixtures/bad/subdivide_der.toml:4:13: solver.subdivide halves unconverged Newton steps: it applies to model "cosserat" with solver = "newton" only"#,
    ),
    (
        "tests/fixtures/bad/subdivide_range.toml",
        r#"tests/fixtures/bad/subdivide_range.toml:4:13: solver.subdivide must be in 0..=4 halvings [-], got 9"#,
    ),
    (
        "tests/fixtures/bad/contact_hessian_no_contact.toml",
        r#"tests/fixtures/bad/contact_hessian_no_contact.toml:3:24: self_contact_hessian needs self_contact = true"#,
    ),
    (
        "tests/fixtures/bad/free_start.toml",
        r#"tests/fixtures/bad/free_start.toml:6:9: rods[0].start = "free": model "strands" needs a clamped start (the Standard BVP of Pai 2002); reverse the centerline to clamp the other end"#,
    ),
    (
        "tests/fixtures/bad/load_on_clamped.toml",
        r#"tests/fixtures/bad/load_on_clamped.toml:8:6: rods[0].loads[0].at = "end" acts on a clamped end, which carries it with no effect; make the end free or pinned"#,
    ),
    (
        "tests/fixtures/bad/missing_radius.toml",
        r#"tests/fixtures/bad/missing_radius.toml:2:1: rods[0] needs `radius` [m] or a USP `size` (e.g. "2-0")"#,
    ),
    (
        "tests/fixtures/bad/der_midpoint.toml",
        r#"tests/fixtures/bad/der_midpoint.toml:4:14: solver.integrator is not available with model "der": DER is stepped by backward Euler (IMC thesis eq. 3.6); use "euler""#,
    ),
    (
        "tests/fixtures/bad/rest_shape_cosserat.toml",
        r#"tests/fixtures/bad/rest_shape_cosserat.toml:8:14: rods[0].rest_shape needs model "der" (the rest shape of the other models is straight with rest_curvature/rest_twist)"#,
    ),
    (
        "tests/fixtures/bad/sag_free_alpha.toml",
        r#"tests/fixtures/bad/sag_free_alpha.toml:10:9: rods[0].sag_free.alpha must be in (0, 1] [-], got -1"#,
    ),
    (
        "tests/fixtures/bad/motion_times.toml",
        r#"tests/fixtures/bad/motion_times.toml:8:20: rods[0].end_motion.times[2] must be greater than the time before it [s], got 1 after 1"#,
    ),
    (
        "tests/fixtures/bad/obstacle_motion.toml",
        r#"tests/fixtures/bad/obstacle_motion.toml:15:16: obstacles[0].motion.displacement must have one value per time (2), got 1"#,
    ),
    (
        "tests/fixtures/bad/negative_radius.toml",
        r#"tests/fixtures/bad/negative_radius.toml:6:10: rods[0].radius must be > 0 [m], got -0.0001"#,
    ),
    (
        "tests/fixtures/bad/normal_parallel.toml",
        r#"tests/fixtures/bad/normal_parallel.toml:6:10: rods[0].normal must not be zero or parallel to the first centerline segment, got [2.0, 0.0, 0.0]"#,
    ),
    (
        "tests/fixtures/bad/obstacles.toml",
        r#"tests/fixtures/bad/obstacles.toml:10:12: obstacles[0].friction needs model "cosserat" with solver "newton" (STRANDS takes contact as lagged normal loads, without friction)"#,
    ),
    (
        "tests/fixtures/bad/obstacles_pd.toml",
        r#"tests/fixtures/bad/obstacles_pd.toml:13:12: obstacles[0].friction needs solver = "newton" (PD takes contact as projections, without friction)"#,
    ),
    (
        "tests/fixtures/bad/obstacle_zero_normal.toml",
        r#"tests/fixtures/bad/obstacle_zero_normal.toml:11:10: obstacles[0].normal must be a non-zero finite direction, got [0.0, 0.0, 0.0]"#,
    ),
    (
        "tests/fixtures/bad/obstacle_radius.toml",
        r#"tests/fixtures/bad/obstacle_radius.toml:17:10: obstacles[1].radius must be positive [m], got -0.01"#,
    ),
    (
        "tests/fixtures/bad/one_point.toml",
        r#"tests/fixtures/bad/one_point.toml:5:14: rods[0].centerline needs at least 2 points [m], got 1"#,
    ),
    (
        "tests/fixtures/bad/poisson.toml",
        r#"tests/fixtures/bad/poisson.toml:5:17: rods[0].poisson_ratio must be in (-1, 0.5] [-], got 0.6"#,
    ),
    (
        "tests/fixtures/bad/repeated_point.toml",
        r#"tests/fixtures/bad/repeated_point.toml:5:39: rods[0].centerline[2] repeats the point before it: segments must have length > 0 [m]"#,
    ),
    (
        "tests/fixtures/bad/syntax.toml",
        r#"tests/fixtures/bad/syntax.toml:2:8: TOML syntax error: unclosed table, expected `]`"#,
    ),
    (
        "tests/fixtures/bad/unknown_field.toml",
        r#"tests/fixtures/bad/unknown_field.toml:2:1: duratoin unknown field `duratoin`, expected one of `version`, `task`, `duration`, `gravity`, `self_contact`, `self_friction`, `self_friction_model`, `self_contact_hessian`, `quasi_static`, `solver`, `rods`, `obstacles`, `tool`, `instruments`, `needle`, `tissue`, `targets`, `view`"#,
    ),
    (
        "tests/fixtures/bad/unknown_material.toml",
        r#"tests/fixtures/bad/unknown_material.toml:4:12: rods[0].material "steel" is not a preset; presets: nylon, polypropylene, silk, polyglactin"#,
    ),
    (
        "tests/fixtures/bad/unknown_model.toml",
        r#"tests/fixtures/bad/unknown_model.toml:3:9: solver.model unknown variant `fem`, expected one of `strands`, `cosserat`, `der`"#,
    ),
    (
        "tests/fixtures/bad/version.toml",
        r#"tests/fixtures/bad/version.toml:1:11: version must be 1 (the only format version this build reads), got 2"#,
    ),
    (
        "tests/fixtures/bad/wrong_type.toml",
        r#"tests/fixtures/bad/wrong_type.toml:4:10: rods[0].radius invalid type: string "thick", expected f64"#,
    ),
    (
        "tests/fixtures/bad/zero_elements.toml",
        r#"tests/fixtures/bad/zero_elements.toml:3:12: solver.elements must be in 1..=100000 [-], got 0"#,
    ),
    (
        "tests/fixtures/bad/tool_rod.toml",
        r#"tests/fixtures/bad/tool_rod.toml:10:7: tool.rod must be a rod index in 0..1 [-], got 3"#,
    ),
    (
        "tests/fixtures/bad/tool_damping.toml",
        r#"tests/fixtures/bad/tool_damping.toml:10:17: tool.damping_ratio must be in [0, 10] [-], got -1"#,
    ),
    (
        "tests/fixtures/bad/needle_arc.toml",
        r#"tests/fixtures/bad/needle_arc.toml:10:7: needle.arc must be "3/8" or "1/2" (of a circle), got "5/8""#,
    ),
    (
        "tests/fixtures/bad/needle_wire.toml",
        r#"tests/fixtures/bad/needle_wire.toml:12:15: needle.wire_radius must be smaller than the radius of curvature 0.012 [m], got 0.02"#,
    ),
    (
        "tests/fixtures/bad/tissue_size.toml",
        r#"tests/fixtures/bad/tissue_size.toml:11:14: tissue.size[1] must be > 0 [m], got 0"#,
    ),
    (
        "tests/fixtures/bad/self_friction.toml",
        r#"tests/fixtures/bad/self_friction.toml:2:17: self_friction needs self_contact = true"#,
    ),
    (
        "tests/fixtures/bad/self_friction_model.toml",
        r#"tests/fixtures/bad/self_friction_model.toml:4:23: self_friction_model unknown variant `viscous`, expected `stick` or `kinetic`"#,
    ),
    (
        "tests/fixtures/bad/targets_rigid.toml",
        r#"tests/fixtures/bad/targets_rigid.toml:11:1: targets need a deformable [tissue] (with youngs_modulus)"#,
    ),
    (
        "tests/fixtures/bad/tissue_gap.toml",
        r#"tests/fixtures/bad/tissue_gap.toml:46:7: tissue.gap must be narrower than half the pad's width 0.04 [m], got 0.05"#,
    ),
    (
        "tests/fixtures/bad/view_eye.toml",
        r#"tests/fixtures/bad/view_eye.toml:9:7: view.eye must be at least 0.1 mm from `at` [m], got 0.05 mm"#,
    ),
    (
        "tests/fixtures/bad/tissue_spacing.toml",
        r#"tests/fixtures/bad/tissue_spacing.toml:47:11: tissue.spacing gives about 7878 lattice nodes per half of the pad, more than 600 (the tissue's implicit step is dense); use a spacing of at least 0.0022 [m]"#,
    ),
    (
        "tests/fixtures/bad/needle_grip.toml",
        r#"tests/fixtures/bad/needle_grip.toml:38:8: needle.grip must be in [0, 1] (fraction of the arc from the swage), got 1.5"#,
    ),
    (
        "tests/fixtures/bad/tissue_no_needle.toml",
        r#"tests/fixtures/bad/tissue_no_needle.toml:39:18: tissue.youngs_modulus a deformable tissue needs a [needle] to suture with"#,
    ),
    (
        "tests/fixtures/bad/dt_huge.toml",
        r#"tests/fixtures/bad/dt_huge.toml:5:6: solver.dt must be in [1e-6, 0.1] [s] (1 µs to 100 ms: the physics period of the real-time loop), got 1e20"#,
    ),
    (
        "tests/fixtures/bad/dt_overflow.toml",
        r#"tests/fixtures/bad/dt_overflow.toml:9:6: solver.dt must be in [1e-6, 0.1] [s] (1 µs to 100 ms: the physics period of the real-time loop), got 1e155"#,
    ),
    (
        "tests/fixtures/bad/dt_tiny.toml",
        r#"tests/fixtures/bad/dt_tiny.toml:5:6: solver.dt must be in [1e-6, 0.1] [s] (1 µs to 100 ms: the physics period of the real-time loop), got 1e-10"#,
    ),
    (
        "tests/fixtures/bad/breaking_force_no_suture.toml",
        r#"tests/fixtures/bad/breaking_force_no_suture.toml:8:18: rods[0].breaking_force has no effect: only the suture of a suturing scene (a [tool] or [[instruments]] with a [needle] through a [tissue] pad) can break; remove it"#,
    ),
];

#[test]
fn each_fixture_gives_its_exact_message() {
    assert!(CASES.len() >= 10);
    for (file, want) in CASES {
        let got = scene::load(file, Overrides::default())
            .unwrap_err()
            .to_string();
        assert_eq!(&got, want, "{file}");
    }
}

#[test]
fn cli_reports_scene_errors_with_exit_code_2() {
    for (file, want) in CASES {
        let o = Command::new(env!("CARGO_BIN_EXE_suture"))
            .args(["simulate", file, "--out", "/dev/null"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{file}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).trim(),
            format!("error: {want}")
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_suture"))
        .args([
            "simulate",
            "scenes/does_not_exist.toml",
            "--out",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read scene file"));
}

#[test]
fn every_fixture_file_is_listed() {
    let n = std::fs::read_dir("tests/fixtures/bad").unwrap().count();
    assert_eq!(n, CASES.len());
}

#[test]
fn run_rejects_bad_arguments_with_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "run",
                "scenes/cantilever.toml",
                "--headless",
                "--duration",
                "1",
            ],
            "error: scenes/cantilever.toml: the scene has no [tool] section",
        ),
        (
            &["run", "--headless", "--duration", "1"],
            "error: --device mouse needs the viewer",
        ),
        (
            &[
                "run",
                "--headless",
                "--device",
                "scripted:/nonexistent.csv",
                "--duration",
                "1",
            ],
            "error: /nonexistent.csv",
        ),
        (
            &[
                "run",
                "--device",
                "joystick",
                "--headless",
                "--duration",
                "1",
            ],
            "error: --device: unknown device \"joystick\"",
        ),
        (
            &["run", "--headless"],
            "error: --headless needs --duration S",
        ),
        (
            // dt = 1e20 panicked in Duration::from_secs_f64 before the range check.
            &[
                "run",
                "tests/fixtures/bad/dt_huge.toml",
                "--headless",
                "--duration",
                "1",
            ],
            "error: tests/fixtures/bad/dt_huge.toml:5:6: solver.dt must be in [1e-6, 0.1] [s]",
        ),
        (
            &[
                "run",
                "tests/fixtures/bad/dt_tiny.toml",
                "--headless",
                "--duration",
                "1",
            ],
            "error: tests/fixtures/bad/dt_tiny.toml:5:6: solver.dt must be in [1e-6, 0.1] [s]",
        ),
        (
            &[
                "run",
                "tests/fixtures/bad/tool_rod.toml",
                "--headless",
                "--duration",
                "1",
            ],
            "error: tests/fixtures/bad/tool_rod.toml:10:7: tool.rod must be a rod index",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_suture"))
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
}

#[test]
fn a_suture_that_cannot_break_is_said_to_at_load() {
    // The tie scene's nylon has a preset strength: no warning.
    let text = std::fs::read_to_string("scenes/instrument_tie.toml").unwrap();
    let sc = scene::parse("tie.toml", &text, Overrides::default()).unwrap();
    assert!(sc.notes().iter().all(|l| !l.contains("cannot break")));
    // The same suture as a custom material (no preset, so no strength), no breaking_force.
    let custom = text.replace(
        "material = \"nylon\"\nsize = \"3-0\"",
        "radius = 0.0001\nyoungs_modulus = 2.0e9\npoisson_ratio = 0.4\ndensity = 1140.0",
    );
    assert_ne!(custom, text);
    let sc = scene::parse("tie.toml", &custom, Overrides::default()).unwrap();
    let notes = sc.notes();
    assert!(
        notes.iter().any(|l| l
            == "warning: rods[0]: the suture cannot break (its material has no preset strength and breaking_force is not set); set rods[0].breaking_force [N]"),
        "{notes:?}"
    );
    // With a breaking force it can.
    let strong = custom.replace(
        "radius = 0.0001\n",
        "radius = 0.0001\nbreaking_force = 12.0\n",
    );
    let sc = scene::parse("tie.toml", &strong, Overrides::default()).unwrap();
    assert!(sc.notes().iter().all(|l| !l.contains("cannot break")));
}
