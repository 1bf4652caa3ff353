//! L3: scene files (TOML, `version = 1`) → validated values → a simulation [`World`].
//!
//! Parse, then validate once: syntax and type errors come from the TOML parser with their span;
//! every semantic check names the field path, and the span of that path in the document gives
//! line and column: `scenes/x.toml:12:10: rods[0].radius must be > 0 [m], got -0.0001`.

pub mod file;
mod instruments;

/// A scene error: file, line, column, field and message.
pub type SceneError = crate::located::FileError;
pub use file::{ModelName, SceneFile};

use crate::contact::{
    ContactHessian, FrictionModel, LaggedContact, Obstacle, ObstacleContact, SelfContact, Shape,
};
use crate::located::{self, Doc, Seg};
use crate::math::{Mat3, Vec3, any_perpendicular, rotation_between, rotation_from_matrix};
use crate::rod::der::{SagFreeOptions, SagFreeReport, rest_shape};
use crate::rod::params::{self, RodParams, shear_from_poisson};
use crate::rod::{
    CosseratRod, DerRod, DynamicParams, EndCondition, Integrator, Method, Scheme, SolverConfig,
    Strands, StrandsConfig,
};
use crate::sim::needle::{Needle, NeedleTarget};
use crate::sim::suturing::{Suturing, SuturingParams, Target, TargetKind};
use crate::sim::tool::{NeedleShape, TissuePad, ToolSetup, ToolSpring};
use crate::sim::{EndMotion, RodDrive, RodModel, SimRod, TipHold, World};
use crate::tissue::{Tissue, TissueGeometry, TissueParams};
use file::{EndName, IntegratorName, LoadAt, MotionSection, RestShapeName, RodSection, SolverName};

/// Most tissue lattice nodes per half of the pad (its step stores a dense inverse of
/// 3 × nodes rows: 600 nodes is a 26 MB matrix, inverted in about a second).
pub const MAX_TISSUE_NODES: usize = 600;

/// Default number of elements per rod.
pub const DEFAULT_ELEMENTS: usize = 50;

/// Most halvings of an unconverged step (`[solver] subdivide`): a 1 ms step down to 62.5 µs.
/// Each level can double a stalled step's cost, so more would let one step outlast many of the
/// real-time loop's periods.
pub const MAX_SUBDIVIDE: i64 = 4;

/// The physical range of `[solver] dt` [s], inclusive: 1 µs to 100 ms. `dt` is the physics
/// period of the real-time loop (and the step of `suture simulate`). Below 1 µs no step of
/// any model runs in real time (a STRANDS sweep of 200 nodes alone takes ~20 µs), and below
/// 1 ns the loop's period rounds to zero (its timer counts nanoseconds). Above 100 ms (10 Hz)
/// a step resolves none of a hand's motion nor the stiff contact and tissue that the haptic
/// coupling renders at 1 kHz; far above it, numbers overflow (the pad's implicit matrix
/// `M + hC + h²K` at h ≳ 1e154 s, the loop's `Duration` at h ≳ 1.8e19 s). Recordings carry
/// the same range (`session::format::DT_RANGE`).
pub const DT_RANGE: std::ops::RangeInclusive<f64> = 1e-6..=0.1;

/// Command-line overrides applied before validation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    /// Elements for every rod.
    pub elements: Option<usize>,
    /// Rod model.
    pub model: Option<ModelName>,
}

/// A loaded, validated scene.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The parsed file.
    pub file: SceneFile,
    /// The world built from it, at t = 0 (not yet solved).
    pub world: World,
    /// The model every rod uses.
    pub model: ModelName,
    /// Rod parameters, per rod.
    pub params: Vec<RodParams>,
    /// Rod lengths [m].
    pub lengths: Vec<f64>,
    /// The device-driven tools, in the order the world steps them (the right hand's first):
    /// the scene's `[tool]`, or its `[[instruments]]`.
    pub tools: Vec<ToolSetup>,
    /// The needle, if the scene has `[needle]`.
    pub needle: Option<NeedleShape>,
    /// The tissue pad, if the scene has `[tissue]`.
    pub tissue: Option<TissuePad>,
    /// The viewer's camera at the start, if the scene has `[view]`.
    pub view: Option<View>,
    /// Per rod, what the sag-free optimisation did (`rest_shape = "sag-free"`).
    pub rest_shapes: Vec<Option<SagFreeReport>>,
}

/// The viewer's camera at the start (`[view]`): where it is and the point it looks at and
/// orbits about [m]. The physics never reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// The camera's position [m].
    pub eye: Vec3,
    /// The point it looks at [m].
    pub at: Vec3,
}

impl Scene {
    /// What the loader has to say about the scene: [`Scene::rest_shape_notes`], and a warning
    /// when the suture of a suturing scene cannot break (a material without a preset strength
    /// and no `breaking_force`: the tension a trainee used would go unchecked).
    pub fn notes(&self) -> Vec<String> {
        let mut out = self.rest_shape_notes();
        if let Some(su) = &self.world.suturing
            && su.params.breaking_force.is_infinite()
        {
            out.push(format!(
                "warning: rods[{}]: the suture cannot break (its material has no preset strength and breaking_force is not set); set rods[{}].breaking_force [N]",
                su.rod, su.rod
            ));
        }
        out
    }

    /// One line per sag-free rod saying what the optimisation did, and a warning line when the
    /// result is not an equilibrium (the box held it back) or is a saddle (docs/derivations/sagfree.md §4:
    /// the thread will flip when nudged).
    pub fn rest_shape_notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, r) in self.rest_shapes.iter().enumerate() {
            let Some(r) = r else { continue };
            out.push(format!(
                "rods[{i}]: sag-free rest shape in {} Gauss–Newton iterations: largest unbalanced force {:.2e} N → {:.2e} N; rest lengths changed ≤ {:.1e}, curvatures ≤ {:.1e}, twists ≤ {:.1e} rad; {}",
                r.iterations,
                r.force_before,
                r.force_after,
                r.max_length_change,
                r.max_curvature_change,
                r.max_twist_change,
                if r.stable { "stable" } else { "a saddle" }
            ));
            if !r.converged {
                out.push(format!(
                    "warning: rods[{i}]: the sag-free optimisation did not reach an equilibrium ({} parameters held by their bounds): the thread will still sag; widen [rods.sag_free] bounds or stiffen the thread",
                    r.box_active
                ));
            }
            if !r.stable {
                out.push(format!(
                    "warning: rods[{i}]: the sag-free equilibrium is a saddle of the energy: the smallest disturbance will make the thread flip (a level reach longer than about twice its gravity bending length); shorten the level part or let it settle"
                ));
            }
        }
        out
    }
}

type Ctx<'a> = Doc<'a>;

fn fmt_num(v: f64) -> String {
    format!("{v}")
}

/// Load and validate a scene file.
pub fn load(path: &str, overrides: Overrides) -> Result<Scene, SceneError> {
    let text = located::read(path, "scene")?;
    parse(path, &text, overrides)
}

/// Parse and validate scene text; `file` names it in errors.
pub fn parse(file: &str, text: &str, overrides: Overrides) -> Result<Scene, SceneError> {
    let (sf, ctx): (SceneFile, _) = Doc::parse(file, text)?;
    validate(&ctx, sf, overrides)
}

fn check_finite3(ctx: &Ctx, path: &[Seg], v: &[f64; 3], unit: &str) -> Result<Vec3, SceneError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(Vec3::new(v[0], v[1], v[2]))
    } else {
        Err(ctx.err(path, format!("must be finite {unit}, got {v:?}")))
    }
}

fn positive(ctx: &Ctx, path: &[Seg], v: f64, unit: &str) -> Result<f64, SceneError> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(ctx.err(path, format!("must be > 0 {unit}, got {}", fmt_num(v))))
    }
}

fn validate(ctx: &Ctx, sf: SceneFile, ov: Overrides) -> Result<Scene, SceneError> {
    use Seg::{Idx, Key};
    if sf.version != 1 {
        return Err(ctx.err(
            &[Key("version")],
            format!(
                "must be 1 (the only format version this build reads), got {}",
                sf.version
            ),
        ));
    }
    if !(sf.duration >= 0.0 && sf.duration.is_finite()) {
        return Err(ctx.err(
            &[Key("duration")],
            format!("must be ≥ 0 [s], got {}", fmt_num(sf.duration)),
        ));
    }
    let gravity = check_finite3(ctx, &[Key("gravity")], &sf.gravity, "[m/s²]")?;
    let model = ov.model.or(sf.solver.model).unwrap_or(ModelName::Strands);
    if model == ModelName::Der {
        // DER (issue #8) runs the scene's rods, loads, motions, obstacles and self-contact;
        // the parts below need the Cosserat rod's frames or its PD solver.
        let refuse = |path: &[Seg], why: &str| {
            Err(ctx.err(path, format!("is not available with model \"der\": {why}")))
        };
        if sf.solver.solver.is_some() {
            return refuse(
                &[Key("solver"), Key("solver")],
                "DER is stepped by its implicit Newton solver only (remove `solver`)",
            );
        }
        if sf.solver.integrator == Some(IntegratorName::Midpoint) {
            return refuse(
                &[Key("solver"), Key("integrator")],
                "DER is stepped by backward Euler (IMC thesis eq. 3.6); use \"euler\"",
            );
        }
        if sf.needle.is_some() {
            return refuse(&[Key("needle")], "suturing runs on model \"cosserat\"");
        }
        if sf.tissue.is_some() {
            return refuse(&[Key("tissue")], "suturing runs on model \"cosserat\"");
        }
        if sf.tool.is_some() {
            return refuse(
                &[Key("tool")],
                "the tool's coupling turns the held segment's frame, which DER does not carry; use model \"cosserat\"",
            );
        }
    }
    let dt = match sf.solver.dt {
        Some(dt) if DT_RANGE.contains(&dt) => dt,
        Some(dt) => {
            return Err(ctx.err(
                &[Key("solver"), Key("dt")],
                format!(
                    "must be in [{:e}, {}] [s] (1 µs to 100 ms: the physics period of the real-time loop), got {dt:e}",
                    DT_RANGE.start(),
                    DT_RANGE.end(),
                ),
            ));
        }
        None => 1e-3,
    };
    if let Some(tol) = sf.solver.tolerance
        && !(tol > 0.0 && tol < 1e-3)
    {
        return Err(ctx.err(
            &[Key("solver"), Key("tolerance")],
            format!("must be in (0, 1e-3) [rad or L], got {}", fmt_num(tol)),
        ));
    }
    let check_elements = |path: &[Seg], e: i64| -> Result<usize, SceneError> {
        if (1..=100_000).contains(&e) {
            Ok(e as usize)
        } else {
            Err(ctx.err(path, format!("must be in 1..=100000 [-], got {e}")))
        }
    };
    let default_elements = match sf.solver.elements {
        Some(e) => check_elements(&[Key("solver"), Key("elements")], e)?,
        None => DEFAULT_ELEMENTS,
    };
    let strands = model == ModelName::Strands;
    // Features a model cannot honour are errors, not silent no-ops.
    if strands && sf.quasi_static == Some(false) {
        return Err(ctx.err(
            &[Key("quasi_static")],
            "= false: model \"strands\" is quasi-static only (dynamics come with model \"cosserat\")"
                .to_string(),
        ));
    }
    let quasi_static = sf.quasi_static.unwrap_or(strands);

    let self_friction = match sf.self_friction {
        Some(_) if !sf.self_contact => {
            return Err(ctx.err(
                &[Key("self_friction")],
                "needs self_contact = true".to_string(),
            ));
        }
        Some(f) if !(f.is_finite() && f >= 0.0) => {
            return Err(ctx.err(
                &[Key("self_friction")],
                format!("must be ≥ 0 [-], got {}", fmt_num(f)),
            ));
        }
        Some(f) => f,
        None => 0.0,
    };
    let self_friction_model = match sf.self_friction_model {
        Some(_) if sf.self_friction.is_none() => {
            return Err(ctx.err(
                &[Key("self_friction_model")],
                "needs self_friction (the coefficient μ)".to_string(),
            ));
        }
        Some(file::FrictionLaw::Kinetic) => FrictionModel::Kinetic,
        _ => FrictionModel::Stick,
    };
    let self_contact_hessian = match sf.self_contact_hessian {
        Some(_) if !sf.self_contact => {
            return Err(ctx.err(
                &[Key("self_contact_hessian")],
                "needs self_contact = true".to_string(),
            ));
        }
        Some(file::ContactHessianName::Near) => ContactHessian::Near,
        _ => ContactHessian::Full,
    };
    let pd = sf.solver.solver == Some(SolverName::Pd);
    // Contact without friction: PD (projections) and STRANDS (lagged normal loads).
    let frictionless = if strands {
        Some(
            "model \"cosserat\" with solver \"newton\" (STRANDS takes contact as lagged normal loads, without friction)",
        )
    } else if pd {
        Some("solver = \"newton\" (PD takes contact as projections, without friction)")
    } else {
        None
    };
    if let Some(why) = frictionless
        && self_friction > 0.0
    {
        return Err(ctx.err(&[Key("self_friction")], format!("needs {why}")));
    }
    if let Some(why) = frictionless
        && sf.self_contact_hessian.is_some()
    {
        // The same models and solvers have no Newton Hessian for it to shape.
        return Err(ctx.err(&[Key("self_contact_hessian")], format!("needs {why}")));
    }
    let (mut obstacles, mut obstacle_motions) = obstacles(ctx, &sf.obstacles)?;
    if let Some(why) = frictionless
        && let Some(i) = obstacles.iter().position(|o| o.friction > 0.0)
    {
        return Err(ctx.err(
            &[Key("obstacles"), Seg::Idx(i), Key("friction")],
            format!("needs {why}"),
        ));
    }
    let tissue = sf.tissue.as_ref().map(|t| tissue(ctx, t)).transpose()?;
    let mut tissue_plane = None;
    if let Some(t) = &tissue {
        if strands {
            return Err(ctx.err(
                &[Key("tissue")],
                "needs model \"cosserat\" (the pad is a contact surface; STRANDS has no contact)"
                    .to_string(),
            ));
        }
        if sf.solver.solver == Some(SolverName::Pd) {
            return Err(ctx.err(
                &[Key("tissue")],
                "needs solver = \"newton\" (contact is part of the Newton solve)".to_string(),
            ));
        }
        tissue_plane = Some(obstacles.len());
        obstacles.push(Obstacle {
            shape: Shape::Plane {
                point: t.center + Vec3::new(0.0, 0.5 * t.size.y, 0.0),
                normal: Vec3::y(),
            },
            friction: t.friction,
        });
    }
    let needle = sf.needle.as_ref().map(|n| needle(ctx, n)).transpose()?;
    // The instruments' capsules follow every other obstacle (sim::instrument poses them).
    let instruments = instruments::parse(ctx, &sf.instruments)?;
    let first_instrument_obstacle = obstacles.len();
    if !instruments.is_empty() {
        let deformable = sf
            .tissue
            .as_ref()
            .is_some_and(|t| t.youngs_modulus.is_some());
        let why = if !deformable || needle.is_none() {
            Some(
                "need a deformable [tissue] (with youngs_modulus) and a [needle]: instruments suture",
            )
        } else if sf.tool.is_some() {
            Some("replace [tool]: a scene's hands drive either its [tool] or its instruments")
        } else if sf.rods.len() != 1 {
            Some("need exactly one rod, the suture")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(ctx.err(&[Key("instruments")], why.to_string()));
        }
        let caps = instruments::obstacles(&instruments);
        obstacle_motions.resize(obstacles.len(), EndMotion::default());
        obstacle_motions.extend(caps.iter().map(|_| EndMotion::default()));
        obstacles.extend(caps);
    }
    if strands {
        for (k, present) in [
            ("solver", sf.solver.solver.is_some()),
            ("iterations", sf.solver.iterations.is_some()),
        ] {
            if present {
                return Err(ctx.err(
                    &[Key("solver"), Key(k)],
                    "applies to model \"cosserat\" only".to_string(),
                ));
            }
        }
    }
    let method = match sf.solver.solver {
        Some(SolverName::Pd) => Method::Pd,
        _ => Method::Newton,
    };
    if sf.solver.refine.is_some() && (strands || method == Method::Pd) {
        return Err(ctx.err(
            &[Key("solver"), Key("refine")],
            "refines Newton steps: it applies to models \"cosserat\" and \"der\" with solver = \"newton\" only".to_string(),
        ));
    }
    if sf.solver.chord.is_some() && (strands || method == Method::Pd) {
        return Err(ctx.err(
            &[Key("solver"), Key("chord")],
            "reuses Newton factorisations: it applies to models \"cosserat\" and \"der\" with solver = \"newton\" only".to_string(),
        ));
    }
    if sf.solver.gaps.is_some() && (strands || method == Method::Pd) {
        return Err(ctx.err(
            &[Key("solver"), Key("gaps")],
            "solves Newton steps: it applies to models \"cosserat\" and \"der\" with solver = \"newton\" only".to_string(),
        ));
    }
    let subdivide = match sf.solver.subdivide {
        Some(_) if model != ModelName::Cosserat || method == Method::Pd => {
            return Err(ctx.err(
                &[Key("solver"), Key("subdivide")],
                "halves unconverged Newton steps: it applies to model \"cosserat\" with solver = \"newton\" only".to_string(),
            ));
        }
        Some(k) if (0..=MAX_SUBDIVIDE).contains(&k) => k as usize,
        Some(k) => {
            return Err(ctx.err(
                &[Key("solver"), Key("subdivide")],
                format!("must be in 0..={MAX_SUBDIVIDE} halvings [-], got {k}"),
            ));
        }
        None => 0,
    };
    if sf.solver.indefinite.is_some() && (strands || method == Method::Pd) {
        return Err(ctx.err(
            &[Key("solver"), Key("indefinite")],
            "chooses Newton steps: it applies to models \"cosserat\" and \"der\" with solver = \"newton\" only".to_string(),
        ));
    }
    let iterations = match sf.solver.iterations {
        Some(k) if (1..=100_000).contains(&k) => k as usize,
        Some(k) => {
            return Err(ctx.err(
                &[Key("solver"), Key("iterations")],
                format!("must be in 1..=100000 [-], got {k}"),
            ));
        }
        None if method == Method::Pd => 10,
        None => 20,
    };
    let mut cosserat = SolverConfig {
        method,
        integrator: match sf.solver.integrator {
            Some(IntegratorName::Midpoint) => Integrator::ImplicitMidpoint,
            _ => Integrator::ImplicitEuler,
        },
        max_iterations: iterations,
        refine_steps: sf.solver.refine.unwrap_or(false),
        indefinite_band: sf.solver.indefinite.unwrap_or(true),
        cross_gaps: sf.solver.gaps.unwrap_or(false),
        chord: sf.solver.chord.unwrap_or(false),
        subdivide,
        ..Default::default()
    };
    if let Some(t) = sf.solver.tolerance {
        cosserat.tolerance = t;
    }
    let dynamics = Dynamics {
        model,
        dt,
        quasi_static,
        config: cosserat,
        obstacles,
        self_contact: sf.self_contact,
        self_friction,
        self_friction_model,
        self_contact_hessian,
    };
    if sf.rods.is_empty() {
        return Err(ctx.err(&[Key("rods")], "must list at least one rod".to_string()));
    }
    let scheme = match sf.solver.integrator {
        Some(IntegratorName::Euler) => Scheme::Euler,
        _ => Scheme::Midpoint,
    };
    let mut config = StrandsConfig {
        scheme,
        ..Default::default()
    };
    if let Some(t) = sf.solver.tolerance {
        config.tolerance = t;
    }
    let mut rods = Vec::new();
    let mut all_params = Vec::new();
    let mut lengths = Vec::new();
    let mut rest_shapes = Vec::new();
    for (i, rs) in sf.rods.iter().enumerate() {
        let elements = match (ov.elements, rs.elements) {
            (Some(e), _) => e,
            (None, Some(e)) => check_elements(&[Key("rods"), Idx(i), Key("elements")], e)?,
            (None, None) => default_elements,
        };
        let (rod, p, len, sf) = build_rod(ctx, i, rs, elements, gravity, config, &dynamics)?;
        rest_shapes.push(sf);
        rods.push(rod);
        all_params.push(p);
        lengths.push(len);
    }
    let tool = sf.tool.as_ref().map(|t| tool(ctx, t, &rods)).transpose()?;
    // With instruments, the needle is swaged on the suture's end and, held, has the mass and
    // coupling of the instrument that holds it (else the first's).
    let needle_tool = tool.or_else(|| {
        let p = instruments
            .iter()
            .find(|p| p.holds_needle)
            .or(instruments.first())?;
        Some(ToolSetup {
            rod: 0,
            node: rods[0].positions().len() - 1,
            ..p.tool
        })
    });
    if let (Some(ts), Some(t)) = (&sf.tissue, &needle_tool)
        && ts.youngs_modulus.is_some()
        && t.rod < rods.len()
    {
        soften_skin_contact(&mut rods[t.rod]);
    }
    let mut suturing = match (&sf.tissue, &tissue) {
        (Some(ts), Some(pad)) if ts.youngs_modulus.is_some() => Some(Box::new(suturing(
            ctx,
            &sf,
            ts,
            pad,
            needle,
            needle_tool,
            &rods,
            &all_params,
            tissue_plane,
        )?)),
        _ => {
            if !sf.targets.is_empty() {
                return Err(ctx.err(
                    &[Key("targets")],
                    "need a deformable [tissue] (with youngs_modulus)".to_string(),
                ));
            }
            None
        }
    };
    // A device at rest holds the needle where it lies: its origin maps to the grip point.
    let mut tool = tool;
    if let (Some(t), Some(su)) = (tool.as_mut(), suturing.as_ref())
        && sf
            .tool
            .as_ref()
            .is_some_and(|ts| ts.workspace_offset.is_none())
    {
        t.workspace_offset = su.needle.grip_position;
    }
    let mut tools: Vec<ToolSetup> = tool.into_iter().collect();
    if let Some(su) = suturing.as_mut().filter(|_| !instruments.is_empty()) {
        let n = rods[0].positions().len();
        let mut list = Vec::with_capacity(instruments.len());
        let mut holder = None;
        for (k, p) in instruments.iter().enumerate() {
            let first = first_instrument_obstacle + 3 * k;
            let (pos, rot) = p
                .pose
                .unwrap_or_else(|| instruments::on_needle(&p.spec, &su.needle));
            let mut ins = crate::sim::instrument::Instrument::new(p.spec, pos, rot, first);
            if p.holds_needle {
                let rinv = rot.inverse();
                ins.hold = crate::sim::instrument::Hold::Needle {
                    position: rinv * (su.needle.grip_position - pos),
                    rotation: rinv * su.needle.rotation,
                };
                holder = Some(k);
            }
            let mut t = p.tool;
            t.rod = 0;
            t.node = n - 1;
            if !p.offset_given {
                t.workspace_offset = pos;
            }
            // Without a device (simulate), an instrument holds its pose by its coupling.
            let (vc, _) = crate::coupling::VirtualCoupling::new(
                t.mass,
                t.inertia,
                t.frequency,
                t.damping_ratio,
                t.max_stiffness,
            );
            ins.home.k = vc.k;
            ins.home.c = vc.c;
            ins.home.kr = vc.kr;
            ins.home.cr = vc.c * t.inertia / t.mass;
            ins.target = ins.home;
            tools.push(t);
            list.push(ins);
        }
        let mut set = crate::sim::instrument::Instruments::new(list, n);
        set.needle_holder = holder;
        if let RodModel::Cosserat {
            contact: Some(c), ..
        } = &mut rods[0].model
        {
            set.place(c, n);
        }
        su.instruments = Some(Box::new(set));
    }
    // A rod breaks only as the suture of a suturing scene (sim::World's step checks its
    // tension against the suturing parameters): a breaking force anywhere else would be
    // silently ignored (issue #26).
    let breakable = suturing.as_ref().map(|su| su.rod);
    for (i, rs) in sf.rods.iter().enumerate() {
        if rs.breaking_force.is_some() && breakable != Some(i) {
            return Err(ctx.err(
                &[Key("rods"), Idx(i), Key("breaking_force")],
                "has no effect: only the suture of a suturing scene (a [tool] or [[instruments]] \
                 with a [needle] through a [tissue] pad) can break; remove it"
                    .to_string(),
            ));
        }
    }
    let view = sf.view.as_ref().map(|v| view(ctx, v)).transpose()?;
    Ok(Scene {
        tools,
        needle,
        tissue,
        view,
        file: sf,
        world: World {
            rods,
            time: 0.0,
            obstacle_motions,
            suturing,
        },
        model,
        params: all_params,
        lengths,
        rest_shapes,
    })
}

/// `[rods.sag_free]` checked into optimiser settings (defaults where absent).
fn sag_free_options(
    ctx: &Ctx,
    i: usize,
    sec: Option<&file::SagFreeSection>,
) -> Result<SagFreeOptions, SceneError> {
    use Seg::{Idx, Key};
    let mut o = SagFreeOptions::default();
    let Some(sec) = sec else {
        return Ok(o);
    };
    let at = |k: &'static str| [Key("rods"), Idx(i), Key("sag_free"), Key(k)];
    if let Some(a) = sec.alpha {
        if !(a > 0.0 && a <= 1.0) {
            return Err(ctx.err(
                &at("alpha"),
                format!("must be in (0, 1] [-], got {}", fmt_num(a)),
            ));
        }
        o.alpha = a;
    }
    if let Some(b) = sec.curvature_bound {
        o.curvature_bound = positive(ctx, &at("curvature_bound"), b, "[-]")?;
    }
    if let Some(b) = sec.twist_bound {
        o.twist_bound = positive(ctx, &at("twist_bound"), b, "[rad]")?;
    }
    if let Some([lo, hi]) = sec.length_bounds {
        if !(lo > 0.0 && lo <= 1.0 && hi >= 1.0 && hi.is_finite()) {
            return Err(ctx.err(
                &at("length_bounds"),
                format!(
                    "must be [low, high] with 0 < low ≤ 1 ≤ high (fractions of the authored lengths), got [{}, {}]",
                    fmt_num(lo),
                    fmt_num(hi)
                ),
            ));
        }
        o.length_bounds = (lo, hi);
    }
    if let Some(t) = sec.optimise_twist {
        o.optimise_twist = t;
    }
    Ok(o)
}

fn rod_params(ctx: &Ctx, i: usize, rs: &RodSection) -> Result<RodParams, SceneError> {
    use Seg::{Idx, Key};
    let at = |k: &'static str| [Key("rods"), Idx(i), Key(k)];
    let mat = match &rs.material {
        Some(name) => Some(params::material(name).ok_or_else(|| {
            let names: Vec<_> = params::MATERIALS.iter().map(|m| m.name).collect();
            ctx.err(
                &at("material"),
                format!("\"{name}\" is not a preset; presets: {}", names.join(", ")),
            )
        })?),
        None => None,
    };
    let radius = match (rs.radius, &rs.size) {
        (Some(r), _) => positive(ctx, &at("radius"), r, "[m]")?,
        (None, Some(size)) => params::usp_radius(size).ok_or_else(|| {
            let names: Vec<_> = params::USP_SIZES.iter().map(|s| s.0).collect();
            ctx.err(
                &at("size"),
                format!("\"{size}\" is not a USP size; sizes: {}", names.join(", ")),
            )
        })?,
        (None, None) => {
            return Err(ctx.err(
                &[Key("rods"), Idx(i)],
                "needs `radius` [m] or a USP `size` (e.g. \"2-0\")".to_string(),
            ));
        }
    };
    let e = match (rs.youngs_modulus, mat) {
        (Some(e), _) => positive(ctx, &at("youngs_modulus"), e, "[Pa]")?,
        (None, Some(m)) => m.youngs_modulus,
        (None, None) => {
            return Err(ctx.err(
                &[Key("rods"), Idx(i)],
                "needs `youngs_modulus` [Pa] or a `material` preset".to_string(),
            ));
        }
    };
    let g = match (rs.shear_modulus, rs.poisson_ratio, mat) {
        (Some(_), Some(_), _) => {
            return Err(ctx.err(
                &at("poisson_ratio"),
                "conflicts with shear_modulus: give one of them".to_string(),
            ));
        }
        (Some(g), None, _) => positive(ctx, &at("shear_modulus"), g, "[Pa]")?,
        (None, Some(nu), _) => {
            if !(-1.0 < nu && nu <= 0.5) {
                return Err(ctx.err(
                    &at("poisson_ratio"),
                    format!("must be in (-1, 0.5] [-], got {}", fmt_num(nu)),
                ));
            }
            shear_from_poisson(e, nu)
        }
        (None, None, Some(m)) => shear_from_poisson(e, m.poisson_ratio),
        (None, None, None) => {
            return Err(ctx.err(
                &[Key("rods"), Idx(i)],
                "needs `shear_modulus` [Pa], `poisson_ratio` or a `material` preset".to_string(),
            ));
        }
    };
    let density = match (rs.density, mat) {
        (Some(d), _) => positive(ctx, &at("density"), d, "[kg/m³]")?,
        (None, Some(m)) => m.density,
        (None, None) => {
            return Err(ctx.err(
                &[Key("rods"), Idx(i)],
                "needs `density` [kg/m³] or a `material` preset".to_string(),
            ));
        }
    };
    Ok(RodParams {
        radius,
        youngs_modulus: e,
        shear_modulus: g,
        density,
    })
}

/// Validate a scripted motion at `base` (e.g. `rods[0].end_motion`, `obstacles[1].motion`).
fn motion(ctx: &Ctx, base: [Seg; 3], m: &MotionSection) -> Result<EndMotion, SceneError> {
    use Seg::{Idx, Key};
    let [b0, b1, b2] = base;
    let p = |k: &'static str| [b0, b1, b2, Key(k)];
    if m.times.is_empty() {
        return Err(ctx.err(&p("times"), "must list at least one time [s]".to_string()));
    }
    for (j, w) in m.times.windows(2).enumerate() {
        if w[1].is_nan() || w[1] <= w[0] {
            return Err(ctx.err(
                &[b0, b1, b2, Key("times"), Idx(j + 1)],
                format!(
                    "must be greater than the time before it [s], got {} after {}",
                    fmt_num(w[1]),
                    fmt_num(w[0])
                ),
            ));
        }
    }
    if m.times[0] < 0.0 || m.times.iter().any(|t| !t.is_finite()) {
        return Err(ctx.err(&p("times"), "must be finite and ≥ 0 [s]".to_string()));
    }
    if m.displacement.is_none() && m.rotation.is_none() {
        return Err(ctx.err(
            &base,
            "needs `displacement` [m] or `rotation` [rad] values".to_string(),
        ));
    }
    let list = |k: &'static str, v: &Option<Vec<[f64; 3]>>, unit: &str| {
        let Some(v) = v else {
            return Ok(Vec::new());
        };
        if v.len() != m.times.len() {
            return Err(ctx.err(
                &p(k),
                format!(
                    "must have one value per time ({}), got {}",
                    m.times.len(),
                    v.len()
                ),
            ));
        }
        v.iter()
            .enumerate()
            .map(|(j, x)| check_finite3(ctx, &[b0, b1, b2, Key(k), Idx(j)], x, unit))
            .collect::<Result<Vec<_>, _>>()
    };
    let displacement = list("displacement", &m.displacement, "[m]")?;
    let rotation = list("rotation", &m.rotation, "[rad]")?;
    Ok(EndMotion {
        times: m.times.clone(),
        displacement,
        rotation,
    })
}

/// Projective Dynamics takes contact as projections with a fixed weight (no adaptive raises:
/// its penetration is bounded by the iteration count); the weight is this many times the
/// adaptive solvers' starting stiffness, which sinks the design load by one tolerance.
const PD_CONTACT_GAIN: f64 = 100.0;

/// What the dynamic model needs from the scene, besides the rod.
struct Dynamics {
    model: ModelName,
    dt: f64,
    quasi_static: bool,
    config: SolverConfig,
    obstacles: Vec<Obstacle>,
    self_contact: bool,
    self_friction: f64,
    self_friction_model: FrictionModel,
    self_contact_hessian: ContactHessian,
}

/// Validate `[[obstacles]]`: finite points, non-zero normals and axes, positive sizes, friction
/// coefficient ≥ 0.
fn obstacles(
    ctx: &Ctx,
    list: &[file::Obstacle],
) -> Result<(Vec<Obstacle>, Vec<EndMotion>), SceneError> {
    use Seg::{Idx, Key};
    let mut out = Vec::with_capacity(list.len());
    let mut motions = Vec::with_capacity(list.len());
    for (i, o) in list.iter().enumerate() {
        let at = |k: &'static str| [Key("obstacles"), Idx(i), Key(k)];
        let point = |k: &'static str, v: &[f64; 3]| {
            if v.iter().all(|c| c.is_finite()) {
                Ok(Vec3::from(*v))
            } else {
                Err(ctx.err(&at(k), format!("must be finite [m], got {v:?}")))
            }
        };
        let unit = |k: &'static str, v: &[f64; 3]| {
            let u = Vec3::from(*v);
            let n = u.norm();
            if n.is_finite() && n > 1e-12 {
                Ok(u / n)
            } else {
                Err(ctx.err(
                    &at(k),
                    format!("must be a non-zero finite direction, got {v:?}"),
                ))
            }
        };
        let positive = |k: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(ctx.err(&at(k), format!("must be positive [m], got {v}")))
            }
        };
        let friction = |f: f64| {
            if f.is_finite() && f >= 0.0 {
                Ok(f)
            } else {
                Err(ctx.err(&at("friction"), format!("must be ≥ 0 [-], got {f}")))
            }
        };
        let scripted = match o {
            file::Obstacle::Plane { motion, .. }
            | file::Obstacle::Cylinder { motion, .. }
            | file::Obstacle::Capsule { motion, .. } => motion,
        };
        motions.push(match scripted {
            Some(m) => motion(ctx, [Key("obstacles"), Idx(i), Key("motion")], m)?,
            None => EndMotion::default(),
        });
        out.push(match o {
            file::Obstacle::Plane {
                point: p,
                normal,
                friction: f,
                ..
            } => Obstacle {
                shape: Shape::Plane {
                    point: point("point", p)?,
                    normal: unit("normal", normal)?,
                },
                friction: friction(*f)?,
            },
            file::Obstacle::Cylinder {
                center,
                axis,
                radius,
                length,
                friction: f,
                ..
            } => Obstacle {
                shape: Shape::Cylinder {
                    center: point("center", center)?,
                    axis: unit("axis", axis)?,
                    radius: positive("radius", *radius)?,
                    half_length: 0.5 * positive("length", *length)?,
                },
                friction: friction(*f)?,
            },
            file::Obstacle::Capsule {
                a,
                b,
                radius,
                friction: f,
                ..
            } => Obstacle {
                shape: Shape::Capsule {
                    a: point("a", a)?,
                    b: point("b", b)?,
                    radius: positive("radius", *radius)?,
                },
                friction: friction(*f)?,
            },
        });
    }
    Ok((out, motions))
}

/// Validate `[tool]` against the built rods.
fn tool(ctx: &Ctx, t: &file::ToolSection, rods: &[SimRod]) -> Result<ToolSetup, SceneError> {
    use Seg::Key;
    let at = |k: &'static str| [Key("tool"), Key(k)];
    if t.rod < 0 || t.rod as usize >= rods.len() {
        return Err(ctx.err(
            &at("rod"),
            format!(
                "must be a rod index in 0..{} [-], got {}",
                rods.len(),
                t.rod
            ),
        ));
    }
    let rod = t.rod as usize;
    let node = match t.at {
        LoadAt::Start => 0,
        LoadAt::End => rods[rod].positions().len() - 1,
    };
    let opt = |k: &'static str, v: Option<f64>, default: f64, unit: &str| match v {
        Some(v) => positive(ctx, &at(k), v, unit),
        None => Ok(default),
    };
    let damping_ratio = match t.damping_ratio {
        Some(z) if z.is_finite() && (0.0..=10.0).contains(&z) => z,
        Some(z) => {
            return Err(ctx.err(
                &at("damping_ratio"),
                format!("must be in [0, 10] [-], got {}", fmt_num(z)),
            ));
        }
        None => 1.0,
    };
    let workspace_offset = match &t.workspace_offset {
        Some(v) => check_finite3(ctx, &at("workspace_offset"), v, "[m]")?,
        None => rods[rod].positions()[node],
    };
    Ok(ToolSetup {
        hand: crate::sim::tool::Hand::Right,
        instrument: None,
        rod,
        node,
        mass: opt("mass", t.mass, 0.02, "[kg]")?,
        inertia: opt("inertia", t.inertia, 2e-6, "[kg m²]")?,
        frequency: opt("frequency", t.frequency, 20.0, "[Hz]")?,
        damping_ratio,
        max_stiffness: opt("max_stiffness", t.max_stiffness, 1000.0, "[N/m]")?,
        workspace_scale: opt("workspace_scale", t.workspace_scale, 1.0, "[-]")?,
        workspace_offset,
    })
}

/// Validate `[needle]`.
fn needle(ctx: &Ctx, n: &file::NeedleSection) -> Result<NeedleShape, SceneError> {
    use Seg::Key;
    let at = |k: &'static str| [Key("needle"), Key(k)];
    let arc_angle = match n.arc.as_str() {
        "3/8" => 0.75 * std::f64::consts::PI,
        "1/2" => std::f64::consts::PI,
        other => {
            return Err(ctx.err(
                &at("arc"),
                format!("must be \"3/8\" or \"1/2\" (of a circle), got \"{other}\""),
            ));
        }
    };
    let curvature_radius = positive(ctx, &at("radius"), n.radius, "[m]")?;
    let wire_radius = positive(ctx, &at("wire_radius"), n.wire_radius, "[m]")?;
    if wire_radius >= curvature_radius {
        return Err(ctx.err(
            &at("wire_radius"),
            format!(
                "must be smaller than the radius of curvature {} [m], got {}",
                fmt_num(curvature_radius),
                fmt_num(wire_radius)
            ),
        ));
    }
    Ok(NeedleShape {
        curvature_radius,
        arc_angle,
        wire_radius,
    })
}

/// Build the suturing state of a deformable `[tissue]`: the needle swaged on the tool's rod
/// end, the incised pad, the interaction parameters and the targets.
#[allow(clippy::too_many_arguments)]
fn suturing(
    ctx: &Ctx,
    sf: &SceneFile,
    ts: &file::TissueSection,
    pad: &TissuePad,
    needle: Option<NeedleShape>,
    tool: Option<ToolSetup>,
    rods: &[SimRod],
    params: &[RodParams],
    plane: Option<usize>,
) -> Result<Suturing, SceneError> {
    use Seg::{Idx, Key};
    let at = |k: &'static str| [Key("tissue"), Key(k)];
    let Some(shape) = needle else {
        return Err(ctx.err(
            &at("youngs_modulus"),
            "a deformable tissue needs a [needle] to suture with".to_string(),
        ));
    };
    let Some(tool) = tool else {
        return Err(ctx.err(
            &at("youngs_modulus"),
            "a deformable tissue needs a [tool] to drive the needle".to_string(),
        ));
    };
    let rod = &rods[tool.rod];
    let n = rod.positions().len() - 1;
    if tool.node != n {
        return Err(ctx.err(
            &[Key("tool"), Key("at")],
            "must be \"end\": the needle is swaged on the suture's end".to_string(),
        ));
    }
    let RodModel::Cosserat { rod: c, .. } = &rod.model else {
        return Err(ctx.err(
            &at("youngs_modulus"),
            "needs model \"cosserat\"".to_string(),
        ));
    };
    let opt = |k: &'static str, v: Option<f64>, default: f64, unit: &str| match v {
        Some(v) => positive(ctx, &at(k), v, unit),
        None => Ok(default),
    };
    let e = opt("youngs_modulus", ts.youngs_modulus, 0.0, "[Pa]")?;
    let density = opt("density", ts.density, 1000.0, "[kg/m³]")?;
    let mass_damping = match ts.mass_damping {
        Some(v) if v.is_finite() && v >= 0.0 => v,
        Some(v) => {
            return Err(ctx.err(
                &at("mass_damping"),
                format!("must be ≥ 0 [1/s], got {}", fmt_num(v)),
            ));
        }
        None => 100.0,
    };
    let spacing = opt("spacing", ts.spacing, 0.005, "[m]")?;
    let gap = opt("gap", ts.gap, 0.003, "[m]")?;
    if gap >= pad.size.x / 2.0 {
        return Err(ctx.err(
            &at("gap"),
            format!(
                "must be narrower than half the pad's width {} [m], got {}",
                fmt_num(pad.size.x / 2.0),
                fmt_num(gap)
            ),
        ));
    }
    if spacing > (pad.size.x - gap) / 2.0 || spacing > pad.size.z {
        return Err(ctx.err(
            &at("spacing"),
            format!(
                "must fit the pad's halves at least once, got {}",
                fmt_num(spacing)
            ),
        ));
    }
    // The tissue step keeps a dense inverse per half (tissue.rs): bound the lattice so a
    // scene cannot ask for gigabytes and minutes of set-up.
    let per_half = (((pad.size.x - gap) / 2.0 / spacing).round() + 1.0)
        * ((pad.size.z / spacing).round() + 1.0);
    if per_half > MAX_TISSUE_NODES as f64 {
        return Err(ctx.err(
            &at("spacing"),
            format!(
                "gives about {per_half:.0} lattice nodes per half of the pad, more than {MAX_TISSUE_NODES} (the tissue's implicit step is dense); use a spacing of at least {} [m]",
                // Rounded up to 0.1 mm.
                fmt_num(
                    (((pad.size.x - gap) / 2.0 * pad.size.z / MAX_TISSUE_NODES as f64).sqrt()
                        * 1.2e4)
                        .ceil()
                        / 1e4
                )
            ),
        ));
    }
    let tissue = Tissue::new(
        TissueGeometry {
            center: pad.center,
            size: pad.size,
            gap,
        },
        TissueParams {
            youngs_modulus: e,
            density,
            mass_damping,
            stiffness_damping: 0.0,
            spacing,
        },
    );
    let rs = &sf.rods[tool.rod];
    let breaking_force = match rs.breaking_force {
        Some(v) => positive(
            ctx,
            &[Key("rods"), Idx(tool.rod), Key("breaking_force")],
            v,
            "[N]",
        )?,
        None => rs
            .material
            .as_deref()
            .and_then(params::material)
            .map_or(f64::INFINITY, |m| m.breaking_force(params[tool.rod].radius)),
    };
    let sp = SuturingParams {
        puncture_force: opt("puncture_force", ts.puncture_force, 1.5, "[N]")?,
        tip_stiffness: opt("tip_stiffness", ts.tip_stiffness, 2000.0, "[N/m]")?,
        cut_force: opt("cut_force", ts.cut_force, 0.3, "[N]")?,
        needle_channel_stiffness: opt(
            "needle_channel_stiffness",
            ts.needle_channel_stiffness,
            1000.0,
            "[N/m]",
        )?,
        suture_channel_stiffness: opt(
            "suture_channel_stiffness",
            ts.suture_channel_stiffness,
            1000.0,
            "[N/m]",
        )?,
        friction: match ts.channel_friction {
            Some(v) if v.is_finite() && v >= 0.0 => v,
            Some(v) => {
                return Err(ctx.err(
                    &at("channel_friction"),
                    format!("must be ≥ 0 [-], got {}", fmt_num(v)),
                ));
            }
            None => 0.2,
        },
        drag: match ts.drag {
            Some(v) if v.is_finite() && v >= 0.0 => v,
            Some(v) => {
                return Err(ctx.err(&at("drag"), format!("must be ≥ 0 [N], got {}", fmt_num(v))));
            }
            None => 0.02,
        },
        tear_force: opt("tear_force", ts.tear_force, 4.0, "[N]")?,
        slip_speed: 1e-3,
        breaking_force,
    };
    let grip = match sf.needle.as_ref().and_then(|n| n.grip) {
        Some(g) if (0.0..=1.0).contains(&g) => g,
        Some(g) => {
            return Err(ctx.err(
                &[Key("needle"), Key("grip")],
                format!(
                    "must be in [0, 1] (fraction of the arc from the swage), got {}",
                    fmt_num(g)
                ),
            ));
        }
        None => 0.3,
    };
    let swage = c.x[n];
    let frame = c.q[n - 1];
    let needle = Needle::new(shape, swage, frame, grip, tool.mass, tool.inertia);
    // The suture's end held on the swage: a spring-damper at ten times the coupling's
    // stiffness, critically damped on the tool's mass, and a rotational spring of ten times
    // the suture's bending stiffness per segment.
    let w = 2.0 * std::f64::consts::PI * tool.frequency;
    let k = (tool.mass * w * w).min(tool.max_stiffness);
    let mut attach = ToolSpring::new(n, 10.0 * k, 2.0 * (10.0 * k * tool.mass).sqrt());
    attach.kr = 10.0 * params[tool.rod].bending_stiffness() / c.params.segment_length;
    attach.segment = n - 1;
    let mut targets = Vec::with_capacity(sf.targets.len());
    for (i, t) in sf.targets.iter().enumerate() {
        let p = check_finite3(
            ctx,
            &[Key("targets"), Idx(i), Key("position")],
            &t.position,
            "[m]",
        )?;
        targets.push(Target {
            kind: match t.kind {
                file::TargetName::Entry => TargetKind::Entry,
                file::TargetName::Exit => TargetKind::Exit,
            },
            position: p,
        });
    }
    let mut s = Suturing::new(needle, tissue, sp, tool.rod, n, n + 1, attach, targets);
    s.plane = plane;
    // Without a device (simulate), the needle is held where it starts, by the same coupling.
    let (vc, _) = crate::coupling::VirtualCoupling::new(
        tool.mass,
        tool.inertia,
        tool.frequency,
        tool.damping_ratio,
        tool.max_stiffness,
    );
    s.home = NeedleTarget {
        position: s.needle.grip_position,
        velocity: Vec3::zeros(),
        rotation: s.needle.rotation,
        angular_velocity: Vec3::zeros(),
        k: vc.k,
        c: vc.c,
        kr: vc.kr,
        cr: vc.c * tool.inertia / tool.mass,
    };
    // A suture laid through the pad in the scene is a placed stitch.
    s.thread_initial(&c.x, c.params.segment_length);
    // Form the tissue's step matrix now, not on the real-time loop's first step.
    if let RodModel::Cosserat { dt, .. } = &rod.model {
        s.tissue.prepare(*dt);
    }
    Ok(s)
}

/// The skin is soft (it deforms by millimetres under a stitch): the suture may sink into the
/// pad's contact plane by up to half its radius before the penalty stiffens, instead of 1 %
/// (which stiffened the penalty a thousandfold and throttled every Newton step of a suture
/// dragged over the skin to micrometres).
fn soften_skin_contact(rod: &mut SimRod) {
    if let RodModel::Cosserat {
        contact: Some(c), ..
    } = &mut rod.model
    {
        c.tolerance = 0.5 * rod.radius;
    }
}

/// Validate `[tissue]`.
fn tissue(ctx: &Ctx, t: &file::TissueSection) -> Result<TissuePad, SceneError> {
    use Seg::{Idx, Key};
    let center = check_finite3(ctx, &[Key("tissue"), Key("center")], &t.center, "[m]")?;
    for (i, v) in t.size.iter().enumerate() {
        positive(ctx, &[Key("tissue"), Key("size"), Idx(i)], *v, "[m]")?;
    }
    let friction = match t.friction {
        Some(f) if f.is_finite() && f >= 0.0 => f,
        Some(f) => {
            return Err(ctx.err(
                &[Key("tissue"), Key("friction")],
                format!("must be ≥ 0 [-], got {}", fmt_num(f)),
            ));
        }
        None => 0.3,
    };
    Ok(TissuePad {
        center,
        size: Vec3::from(t.size),
        friction,
    })
}

/// Validate `[view]`.
fn view(ctx: &Ctx, v: &file::ViewSection) -> Result<View, SceneError> {
    use Seg::Key;
    let eye = check_finite3(ctx, &[Key("view"), Key("eye")], &v.eye, "[m]")?;
    let at = check_finite3(ctx, &[Key("view"), Key("at")], &v.at, "[m]")?;
    if (eye - at).norm() < 1e-4 {
        return Err(ctx.err(
            &[Key("view"), Key("eye")],
            format!(
                "must be at least 0.1 mm from `at` [m], got {} mm",
                fmt_num((eye - at).norm() * 1e3)
            ),
        ));
    }
    Ok(View { eye, at })
}

/// `n + 1` points at equal arc length along the polyline `pts`, and the unit tangent of each
/// of the `n` chords.
fn resample(pts: &[Vec3], n: usize) -> Vec<Vec3> {
    let mut cum = vec![0.0];
    for j in 1..pts.len() {
        cum.push(cum[j - 1] + (pts[j] - pts[j - 1]).norm());
    }
    let total = cum[cum.len() - 1];
    (0..=n)
        .map(|k| {
            let s = total * k as f64 / n as f64;
            let j = cum.partition_point(|&c| c <= s).clamp(1, pts.len() - 1);
            let f = ((s - cum[j - 1]) / (cum[j] - cum[j - 1])).clamp(0.0, 1.0);
            pts[j - 1].lerp(&pts[j], f)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn build_rod(
    ctx: &Ctx,
    i: usize,
    rs: &RodSection,
    elements: usize,
    gravity: Vec3,
    config: StrandsConfig,
    dynamics: &Dynamics,
) -> Result<(SimRod, RodParams, f64, Option<SagFreeReport>), SceneError> {
    let strands = dynamics.model == ModelName::Strands;
    use Seg::{Idx, Key};
    let at = |k: &'static str| [Key("rods"), Idx(i), Key(k)];
    let rest_shape = rs.rest_shape.unwrap_or(RestShapeName::Straight);
    if rest_shape != RestShapeName::Straight {
        if dynamics.model != ModelName::Der {
            return Err(ctx.err(
                &at("rest_shape"),
                "needs model \"der\" (the rest shape of the other models is straight with rest_curvature/rest_twist)"
                    .to_string(),
            ));
        }
        for (k, present) in [
            ("rest_curvature", rs.rest_curvature.is_some()),
            ("rest_twist", rs.rest_twist.is_some()),
        ] {
            if present {
                return Err(ctx.err(
                    &at(k),
                    "conflicts with rest_shape: the authored centreline sets the rest shape"
                        .to_string(),
                ));
            }
        }
    }
    if rs.sag_free.is_some() && rest_shape != RestShapeName::SagFree {
        return Err(ctx.err(
            &at("sag_free"),
            "needs rest_shape = \"sag-free\"".to_string(),
        ));
    }
    let sag_free_options = sag_free_options(ctx, i, rs.sag_free.as_ref())?;
    if rs.centerline.len() < 2 {
        return Err(ctx.err(
            &at("centerline"),
            format!("needs at least 2 points [m], got {}", rs.centerline.len()),
        ));
    }
    let mut pts = Vec::with_capacity(rs.centerline.len());
    for (j, p) in rs.centerline.iter().enumerate() {
        pts.push(check_finite3(
            ctx,
            &[Key("rods"), Idx(i), Key("centerline"), Idx(j)],
            p,
            "[m]",
        )?);
    }
    let mut length = 0.0;
    for j in 1..pts.len() {
        let l = (pts[j] - pts[j - 1]).norm();
        if l.is_nan() || l <= 1e-12 {
            return Err(ctx.err(
                &[Key("rods"), Idx(i), Key("centerline"), Idx(j)],
                "repeats the point before it: segments must have length > 0 [m]".to_string(),
            ));
        }
        length += l;
    }
    let params = rod_params(ctx, i, rs)?;
    // Material frame at the start: d3 along the first segment, d1 from `normal`.
    let t0 = (pts[1] - pts[0]).normalize();
    let d1 = match rs.normal {
        Some(n) => {
            let n = check_finite3(ctx, &at("normal"), &n, "[-]")?;
            let perp = n - t0 * t0.dot(&n);
            if n.norm() == 0.0 || perp.norm() < 1e-6 * n.norm() {
                return Err(ctx.err(
                    &at("normal"),
                    format!(
                        "must not be zero or parallel to the first centerline segment, got {:?}",
                        [n.x, n.y, n.z]
                    ),
                ));
            }
            perp.normalize()
        }
        None => any_perpendicular(&t0),
    };
    let base_rot = Mat3::from_columns(&[d1, t0.cross(&d1), t0]);
    // Carry d1 to the last segment by parallel transport at each polyline corner.
    let mut tip_rot = base_rot;
    for j in 1..pts.len() - 1 {
        let a = (pts[j] - pts[j - 1]).normalize();
        let b = (pts[j + 1] - pts[j]).normalize();
        tip_rot = rotation_between(&a, &b) * tip_rot;
    }
    let start = rs.start.unwrap_or(EndName::Clamped);
    let end = rs.end.unwrap_or(EndName::Free);
    if strands && start != EndName::Clamped {
        return Err(ctx.err(
            &at("start"),
            format!(
                "= \"{}\": model \"strands\" needs a clamped start (the Standard BVP of Pai 2002); reverse the centerline to clamp the other end",
                if start == EndName::Free { "free" } else { "pinned" }
            ),
        ));
    }
    let tip_hold = match end {
        EndName::Free => TipHold::Free,
        EndName::Pinned => TipHold::Pinned,
        EndName::Clamped => TipHold::Clamped,
    };
    let mut tip_force = Vec3::zeros();
    let mut tip_torque = Vec3::zeros();
    let mut base_force = Vec3::zeros();
    let mut base_torque = Vec3::zeros();
    for (j, l) in rs.loads.iter().enumerate() {
        let lp = |k: &'static str| [Key("rods"), Idx(i), Key("loads"), Idx(j), Key(k)];
        let f = check_finite3(ctx, &lp("force"), &l.force, "[N]")?;
        let m = check_finite3(ctx, &lp("torque"), &l.torque, "[N m]")?;
        match (l.at, end) {
            (LoadAt::Start, _) if start == EndName::Clamped => {
                return Err(ctx.err(
                    &lp("at"),
                    "= \"start\" acts on the clamped start, which carries it with no effect; load the end"
                        .to_string(),
                ));
            }
            (LoadAt::Start, _) if start == EndName::Pinned && f.norm() > 0.0 => {
                return Err(ctx.err(
                    &lp("force"),
                    "acts on a pinned start, which carries it with no effect; only a torque can load a pinned end"
                        .to_string(),
                ));
            }
            (LoadAt::Start, _) => {
                base_force += f;
                base_torque += m;
            }
            (LoadAt::End, EndName::Clamped) => {
                return Err(ctx.err(
                    &lp("at"),
                    "= \"end\" acts on a clamped end, which carries it with no effect; make the end free or pinned"
                        .to_string(),
                ));
            }
            (LoadAt::End, EndName::Pinned) if f.norm() > 0.0 => {
                return Err(ctx.err(
                    &lp("force"),
                    "acts on a pinned end, which carries it with no effect; only a torque can load a pinned end"
                        .to_string(),
                ));
            }
            _ => {
                tip_force += f;
                tip_torque += m;
            }
        }
    }
    let start_motion = match &rs.start_motion {
        Some(_) if start == EndName::Free => {
            return Err(ctx.err(
                &at("start_motion"),
                "moves a free start, which has nothing to move; make the start clamped or pinned"
                    .to_string(),
            ));
        }
        Some(m) => {
            let sm = motion(
                ctx,
                [Seg::Key("rods"), Seg::Idx(i), Seg::Key("start_motion")],
                m,
            )?;
            if start == EndName::Pinned && !sm.rotation.is_empty() {
                return Err(ctx.err(
                    &[Key("rods"), Idx(i), Key("start_motion"), Key("rotation")],
                    "rotates a pinned start, whose rotation is free; use displacement only"
                        .to_string(),
                ));
            }
            sm
        }
        None => EndMotion::default(),
    };
    let end_motion = match &rs.end_motion {
        Some(m) if end == EndName::Free => {
            let _ = m;
            return Err(ctx.err(
                &at("end_motion"),
                "moves a free end, which has nothing to move; make the end clamped or pinned"
                    .to_string(),
            ));
        }
        Some(m) => {
            let em = motion(
                ctx,
                [Seg::Key("rods"), Seg::Idx(i), Seg::Key("end_motion")],
                m,
            )?;
            if end == EndName::Pinned && !em.rotation.is_empty() {
                return Err(ctx.err(
                    &[Key("rods"), Idx(i), Key("end_motion"), Key("rotation")],
                    "rotates a pinned end, whose rotation is free; use displacement only"
                        .to_string(),
                ));
            }
            em
        }
        None => EndMotion::default(),
    };
    let rest = Vec3::new(
        rs.rest_curvature.map_or(0.0, |k| k[0]),
        rs.rest_curvature.map_or(0.0, |k| k[1]),
        rs.rest_twist.unwrap_or(0.0),
    );
    if !rest.iter().all(|v| v.is_finite()) {
        return Err(ctx.err(&at("rest_curvature"), "must be finite [1/m]".to_string()));
    }
    let mut damping = [0.0; 2];
    for (k, (key, v)) in [
        ("mass_damping", rs.mass_damping),
        ("stiffness_damping", rs.stiffness_damping),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(v) = v else { continue };
        if strands {
            return Err(ctx.err(
                &at(key),
                "applies to the dynamic model \"cosserat\" only (strands is quasi-static)"
                    .to_string(),
            ));
        }
        if !(v >= 0.0 && v.is_finite()) {
            return Err(ctx.err(
                &at(key),
                format!("must be ≥ 0 and finite, got {}", fmt_num(v)),
            ));
        }
        damping[k] = v;
    }
    if damping[1] > 0.0 && dynamics.model == ModelName::Der {
        return Err(ctx.err(
            &at("stiffness_damping"),
            "is not available with model \"der\" (use mass_damping)".to_string(),
        ));
    }
    if damping[1] > 0.0 && dynamics.config.method == Method::Pd {
        return Err(ctx.err(
            &at("stiffness_damping"),
            "is not available with solver = \"pd\" (use mass_damping, or the newton solver)"
                .to_string(),
        ));
    }
    let hold = |e: EndName| match e {
        EndName::Free => TipHold::Free,
        EndName::Pinned => TipHold::Pinned,
        EndName::Clamped => TipHold::Clamped,
    };
    let drive = RodDrive {
        base_hold: hold(start),
        base: (base_rot, pts[0]),
        tip: (tip_rot, pts[pts.len() - 1]),
        tip_hold,
        start_motion,
        end_motion,
        base_force,
        base_torque,
        tip_force,
        tip_torque,
        distributed_force: gravity * params.linear_density(),
        gravity,
    };
    // Contact: the initial penalty stiffness sinks a point by the tolerance under the rod's
    // weight plus its end loads (Newton raises it by itself under larger loads, impacts).
    let contact = (!dynamics.obstacles.is_empty()).then(|| {
        let weight = params.linear_density() * length * gravity.norm();
        let loads = drive.base_force.norm() + drive.tip_force.norm();
        let mut c = ObstacleContact::new(
            dynamics.obstacles.clone(),
            params.radius,
            elements + 1,
            ObstacleContact::stiffness_for(weight + loads, params.radius),
        );
        c.max_stiffness = c.stiffness.max(ObstacleContact::stiffness_cap(
            params.axial_stiffness(),
            params.radius,
        ));
        if dynamics.config.method == Method::Pd && !strands {
            c.adaptive = false;
            c.stiffness *= PD_CONTACT_GAIN;
        }
        Box::new(c)
    });
    // Self-contact leaves out the DEFAULT_SKIP segments next to each one: with segments
    // shorter than 2r / DEFAULT_SKIP (the radius), the first pair it keeps overlaps on a
    // straight rod already, the stiffness is raised step after step and the rod blows up
    // (a fuzzed plectoneme at 945 elements: minutes a step; issue #26).
    if dynamics.self_contact {
        let seg = length / elements as f64;
        let shortest = 2.0 * params.radius / crate::contact::self_contact::DEFAULT_SKIP as f64;
        if seg < shortest {
            let path = if rs.elements.is_some() {
                at("elements")
            } else {
                at("radius")
            };
            return Err(ctx.err(
                &path,
                format!(
                    "with self_contact = true, the {elements} elements are {} [m] long, shorter than the rod's radius {} [m]: every segment would touch its own neighbours; use at most {} elements or a thinner rod",
                    fmt_num(seg),
                    fmt_num(params.radius),
                    (length / shortest).floor()
                ),
            ));
        }
    }
    // Self-contact: the initial IMC stiffness holds the larger of the rod's weight plus its
    // end loads and its bending force scale EI/l² (l the segment length: what a bent rod
    // presses on itself with) at a tenth of the tolerance; Newton raises it as needed.
    let self_contact = dynamics.self_contact.then(|| {
        let weight = params.linear_density() * length * gravity.norm();
        let loads = drive.base_force.norm() + drive.tip_force.norm();
        let seg = length / elements as f64;
        let bending = params.bending_stiffness() / (seg * seg);
        let mut c = SelfContact::new(
            params.radius,
            SelfContact::stiffness_for((weight + loads).max(bending), params.radius),
        );
        c.max_stiffness = c.params.stiffness.max(SelfContact::stiffness_cap(
            params.axial_stiffness(),
            params.radius,
        ));
        c.skip = SelfContact::skip_for(seg, params.radius);
        c.friction = dynamics.self_friction;
        c.friction_model = dynamics.self_friction_model;
        c.hessian = dynamics.self_contact_hessian;
        if dynamics.config.method == Method::Pd && !strands {
            // PD: a fixed projection weight, 100× the adaptive start (see
            // ObstacleContact::adaptive).
            c.adaptive = false;
            c.params.stiffness *= PD_CONTACT_GAIN;
        }
        Box::new(c)
    });
    let mut lagged = None;
    let mut sag_free_report = None;
    let model = if strands {
        let ei = params.bending_stiffness();
        let stiffness = Vec3::new(ei, ei, params.torsional_stiffness());
        let mut s = Strands::new(length, elements, stiffness, rest, config);
        s.set_rest_pose(&drive.base.0, &drive.base.1);
        if contact.is_some() || self_contact.is_some() {
            let mut l = LaggedContact::new(elements + 1, contact, self_contact);
            l.tolerance = 0.01 * params.radius;
            lagged = Some(Box::new(l));
        }
        RodModel::Strands(Box::new(s))
    } else {
        let mut cp = DynamicParams::new(&params, length, elements);
        cp.rest_darboux = rest;
        cp.mass_damping = damping[0];
        cp.stiffness_damping = damping[1];
        // Initial state: the centreline resampled at equal arc length; d3 along each chord,
        // d1 carried from `normal` by parallel transport.
        let x = resample(&pts, elements);
        let mut frame = base_rot;
        let mut q = Vec::with_capacity(elements);
        for e in 0..elements {
            let t = (x[e + 1] - x[e]).normalize();
            frame = rotation_between(&(frame * Vec3::z()), &t) * frame;
            q.push(rotation_from_matrix(&frame));
        }
        let cond = |e: EndName| match e {
            EndName::Free => EndCondition::Free,
            EndName::Pinned => EndCondition::Pinned,
            EndName::Clamped => EndCondition::Clamped,
        };
        if dynamics.model == ModelName::Der {
            let mut rod = DerRod::new(cp, (cond(start), cond(end)), dynamics.config, x, q);
            match rest_shape {
                RestShapeName::Straight => {}
                RestShapeName::Authored => rod.set_rest_to_current(),
                RestShapeName::SagFree => {
                    let rep =
                        rest_shape::optimize(&mut rod, &drive.drive_at(0.0), &sag_free_options)
                            .map_err(|e| {
                                ctx.err(&at("rest_shape"), format!("= \"sag-free\": {e}"))
                            })?;
                    sag_free_report = Some(rep);
                }
            }
            RodModel::Der {
                rod: Box::new(rod),
                dt: dynamics.dt,
                quasi_static: dynamics.quasi_static,
                contact,
                self_contact,
            }
        } else {
            let mut rod = CosseratRod::new(cp, (cond(start), cond(end)), dynamics.config, x, q);
            rod.held_frames = (
                rotation_from_matrix(&base_rot),
                rotation_from_matrix(&tip_rot),
            );
            RodModel::Cosserat {
                rod: Box::new(rod),
                dt: dynamics.dt,
                quasi_static: dynamics.quasi_static,
                contact,
                self_contact,
            }
        }
    };
    Ok((
        SimRod {
            model,
            drive,
            radius: params.radius,
            lagged,
        },
        params,
        length,
        sag_free_report,
    ))
}
