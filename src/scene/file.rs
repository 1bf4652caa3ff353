//! The scene file format, version 1, as serde types. Every struct rejects unknown fields.
//! Units are SI; see README "Scene format".

use serde::Deserialize;

/// Rod model names.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelName {
    /// Pai 2002 quasi-static rod.
    Strands,
    /// Soler 2018 dynamic Cosserat rod.
    Cosserat,
    /// Bergou 2008 discrete elastic rod, implicit (IMC thesis).
    Der,
}

impl ModelName {
    /// The name as written in scene files.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::Strands => "strands",
            ModelName::Cosserat => "cosserat",
            ModelName::Der => "der",
        }
    }
}

/// Integrator: for strands the collocation scheme (first order Euler, second order midpoint,
/// the default); for cosserat the time integrator (implicit Euler, the default, or implicit
/// midpoint).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum IntegratorName {
    /// First order.
    Euler,
    /// Second order.
    Midpoint,
}

/// Solver of the cosserat model.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SolverName {
    /// Coupled implicit Newton (default).
    Newton,
    /// Soler 2018 Projective Dynamics local/global iteration.
    Pd,
}

/// Friction law of rod self-contact.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FrictionLaw {
    /// Lagged Coulomb friction with stick (holds knots).
    Stick,
    /// Choi 2021's velocity-switched kinetic friction (no static friction).
    Kinetic,
}

/// Which self-contact pairs carry a Newton Hessian term (`contact::ContactHessian`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ContactHessianName {
    /// Pairs near contact (E'' ≥ 1e-3 of its peak), exact.
    Near,
    /// Also the pairs pressed deeper and the cushion out to about 2.44 radii.
    Full,
}

/// End condition of a rod.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum EndName {
    /// No constraint.
    #[default]
    Free,
    /// Position held, rotation free.
    Pinned,
    /// Position and orientation held.
    Clamped,
}

/// Which end a load acts on.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LoadAt {
    /// s = 0.
    Start,
    /// s = L.
    End,
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Format version; must be 1.
    pub version: i64,
    /// The task the scene sets a trainee (issue #24), e.g. "interrupted stitch": recordings
    /// carry it, assessment groups and benchmarks sessions by it. Default: the file's stem
    /// ([`task_name`]).
    pub task: Option<String>,
    /// Simulated time span [s] (≥ 0).
    #[serde(default)]
    pub duration: f64,
    /// Gravity [m/s²]; default (0, -9.81, 0), y up.
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Rod self-contact.
    #[serde(default)]
    pub self_contact: bool,
    /// Coulomb friction coefficient of rod self-contact [-] (default 0).
    pub self_friction: Option<f64>,
    /// Friction law of self-contact: "stick" (default) or "kinetic".
    pub self_friction_model: Option<FrictionLaw>,
    /// Which self-contact pairs carry a Newton Hessian term: "full" (default) or "near"
    /// (docs/derivations/der-imc.md §F11).
    pub self_contact_hessian: Option<ContactHessianName>,
    /// Quasi-static (equilibrium per frame) or dynamic; default: the model's nature.
    pub quasi_static: Option<bool>,
    /// Solver settings.
    #[serde(default)]
    pub solver: SolverSection,
    /// The rods (at least one).
    pub rods: Vec<RodSection>,
    /// Static obstacles.
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// The tool the device drives (`suture run`): which rod node it holds and the coupling.
    pub tool: Option<ToolSection>,
    /// The instruments the surgeon's hands drive (issue #22): a needle driver, forceps.
    #[serde(default)]
    pub instruments: Vec<InstrumentSection>,
    /// The curved needle swaged on the tool's rod end.
    pub needle: Option<NeedleSection>,
    /// The tissue pad.
    pub tissue: Option<TissueSection>,
    /// Marks on the tissue.
    #[serde(default)]
    pub targets: Vec<TargetSection>,
    /// Where the viewer's camera starts (the viewer only; default: framing the rods and the
    /// pad).
    pub view: Option<ViewSection>,
}

/// `[view]`: the viewer's camera at the start (the physics never reads it).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewSection {
    /// The camera's position [m].
    pub eye: [f64; 3],
    /// The point it looks at (and orbits about) [m].
    pub at: [f64; 3],
}

/// `[tool]`: the virtual coupling between the device and a rod node (docs/derivations/cosserat.md §C.6).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSection {
    /// Index of the held rod (default 0).
    #[serde(default)]
    pub rod: i64,
    /// Held end: "start" or "end" (default "end").
    #[serde(default = "default_tool_end")]
    pub at: LoadAt,
    /// Virtual tool mass [kg] (default 0.02).
    pub mass: Option<f64>,
    /// Virtual tool moment of inertia [kg m²] (default 2e-6: 20 g at 1 cm), for the
    /// rotational coupling at the same frequency.
    pub inertia: Option<f64>,
    /// Coupling natural frequency [Hz] (default 20).
    pub frequency: Option<f64>,
    /// Coupling damping ratio [-] (default 1).
    pub damping_ratio: Option<f64>,
    /// Largest coupling stiffness [N/m] (default 1000; a device profile's limit caps it too).
    pub max_stiffness: Option<f64>,
    /// Device → world scale [-] (default 1).
    pub workspace_scale: Option<f64>,
    /// World position of the device origin [m] (default: the held node at t = 0).
    pub workspace_offset: Option<[f64; 3]>,
}

/// `[[instruments]]`: a needle driver or forceps driven by one hand's device: a rigid body
/// coupled like `[tool]`, with jaws that open and close (scenes/README.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentSection {
    /// The hand that drives it: "right" or "left" (the device given as `--device right=…`).
    pub hand: String,
    /// "needle-driver" or "forceps".
    pub kind: String,
    /// What the jaws hold at t = 0: "needle" (the instrument is placed on the needle's grip)
    /// or "nothing" (default; then `position` and `direction` place it).
    pub holds: Option<String>,
    /// The jaws' hinge at t = 0 [m].
    pub position: Option<[f64; 3]>,
    /// Direction of the jaws (hinge → tip) at t = 0 [-].
    pub direction: Option<[f64; 3]>,
    /// Direction in which the jaws open at t = 0 [-] (perpendicular to `direction`; default:
    /// any perpendicular).
    pub opens_toward: Option<[f64; 3]>,
    /// Jaw length, hinge to tip [m] (default: 0.012 driver, 0.010 forceps).
    pub jaw_length: Option<f64>,
    /// Radius of a jaw [m] (default: 0.0012 driver, 0.0006 forceps), at its hinge when
    /// `jaw_tip_radius` is given.
    pub jaw_radius: Option<f64>,
    /// Radius of a jaw at its tip [m] (default: `jaw_radius`, a jaw of one radius): a jaw
    /// that tapers from `jaw_radius` at the hinge to this at the tip, as a driver's do (a
    /// round cone, contact::Shape::RoundCone).
    pub jaw_tip_radius: Option<f64>,
    /// Shaft length behind the hinge [m] (default 0.06) and radius [m] (default 0.002).
    pub shaft_length: Option<f64>,
    /// See `shaft_length`.
    pub shaft_radius: Option<f64>,
    /// Opening angle of the open jaws [rad] (default 0.5) and the jaws' speed [rad/s]
    /// (default 8).
    pub opening: Option<f64>,
    /// See `opening`.
    pub jaw_speed: Option<f64>,
    /// Force the closed jaws hold the suture with before it slides [N] (default: 5 driver,
    /// 3 forceps).
    pub grip_strength: Option<f64>,
    /// Stiffness of the grasp on the suture [N/m] (default 5000).
    pub grip_stiffness: Option<f64>,
    /// The coupling to the device, as in `[tool]`: mass [kg], inertia [kg m²], frequency [Hz],
    /// damping ratio [-], largest stiffness [N/m], workspace scale [-] and offset [m]
    /// (default: the hinge at t = 0).
    pub mass: Option<f64>,
    /// See `mass`.
    pub inertia: Option<f64>,
    /// See `mass`.
    pub frequency: Option<f64>,
    /// See `mass`.
    pub damping_ratio: Option<f64>,
    /// See `mass`.
    pub max_stiffness: Option<f64>,
    /// See `mass`.
    pub workspace_scale: Option<f64>,
    /// See `mass`.
    pub workspace_offset: Option<[f64; 3]>,
}

fn default_tool_end() -> LoadAt {
    LoadAt::End
}

/// `[needle]`: a curved needle.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeedleSection {
    /// Fraction of a circle: "3/8" or "1/2".
    pub arc: String,
    /// Radius of curvature [m].
    pub radius: f64,
    /// Wire radius [m].
    pub wire_radius: f64,
    /// Where the driver holds it, as a fraction of the arc from the swage (default 0.3).
    pub grip: Option<f64>,
}

/// `[tissue]`: a rigid pad (axis-aligned box); its top face is a contact plane.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TissueSection {
    /// Centre [m].
    pub center: [f64; 3],
    /// Edge lengths along x, y, z [m].
    pub size: [f64; 3],
    /// Coulomb friction of the surface [-] (default 0.3).
    pub friction: Option<f64>,
    /// Young's modulus [Pa]: present, the pad is deformable and can be sutured (issue #6).
    pub youngs_modulus: Option<f64>,
    /// Density [kg/m³] (default 1000).
    pub density: Option<f64>,
    /// Rayleigh mass damping [1/s] (default 100).
    pub mass_damping: Option<f64>,
    /// Lattice spacing [m] (default 0.005).
    pub spacing: Option<f64>,
    /// Rest width of the incision along z through the centre [m] (default 0.003).
    pub gap: Option<f64>,
    /// Tip force that pierces the surface [N] (default 1.5).
    pub puncture_force: Option<f64>,
    /// Stiffness of the tip pressing on the surface [N/m] (default 2000).
    pub tip_stiffness: Option<f64>,
    /// Resistance to the tip cutting forward [N] (default 0.3).
    pub cut_force: Option<f64>,
    /// Side stiffness of a channel on the needle [N/m] (default 1000).
    pub needle_channel_stiffness: Option<f64>,
    /// Side stiffness of a channel on the suture [N/m] (default 1000).
    pub suture_channel_stiffness: Option<f64>,
    /// Coulomb coefficient of sliding through a channel [-] (default 0.2).
    pub channel_friction: Option<f64>,
    /// Grip of a channel on what slides through it [N] (default 0.02).
    pub drag: Option<f64>,
    /// Side force that tears a channel [N] (default 4).
    pub tear_force: Option<f64>,
}

/// `[[targets]]`: a mark on the tissue.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSection {
    /// "entry" or "exit".
    pub kind: TargetName,
    /// Rest position of the mark [m].
    pub position: [f64; 3],
}

/// Kind of a target.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TargetName {
    /// Needle entry.
    Entry,
    /// Needle exit.
    Exit,
}

fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

/// `[solver]`.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SolverSection {
    /// Rod model; default `strands`.
    pub model: Option<ModelName>,
    /// Time step of dynamic models, the physics period of the real-time loop [s]: in
    /// [1e-6, 0.1] (1 µs to 100 ms; `scene::DT_RANGE` gives the reasons); default 1e-3.
    pub dt: Option<f64>,
    /// Elements (segments) per rod; default 50.
    pub elements: Option<i64>,
    /// Strands collocation scheme (default `midpoint`) or cosserat time integrator (default
    /// `euler`).
    pub integrator: Option<IntegratorName>,
    /// Cosserat solver; default `newton`.
    pub solver: Option<SolverName>,
    /// Cosserat iteration cap per step; default 20 (newton) or 10 (pd).
    pub iterations: Option<i64>,
    /// Newton residual tolerance (rad, or units of L); default 1e-13.
    pub tolerance: Option<f64>,
    /// Cosserat and DER Newton: refine each Marquardt-shifted step towards the unshifted one
    /// by preconditioned conjugate gradients (docs/derivations/der-imc.md §F9); default false.
    pub refine: Option<bool>,
    /// Cosserat and DER Newton: where the banded Hessian alone is indefinite, take the exact
    /// step if the whole Hessian is definite (docs/derivations/der-imc.md §F10); default true.
    pub indefinite: Option<bool>,
    /// Cosserat and DER Newton: the self-contact Woodbury columns cross the spans between a
    /// knot's clusters of contact by transfer maps (docs/derivations/banded.md §5); default
    /// false.
    pub gaps: Option<bool>,
    /// Cosserat and DER Newton: chord steps, an unshifted factorisation reused while it
    /// contracts the residual (`SolverConfig::chord`, docs/derivations/der-imc.md §F13);
    /// default false.
    pub chord: Option<bool>,
    /// Cosserat Newton: halvings a step that does not converge may take (0..=4,
    /// `SolverConfig::subdivide`); default 0.
    pub subdivide: Option<i64>,
}

/// `[[rods]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodSection {
    /// Initial centreline polyline [m], 2+ points; its length is the rod's length.
    pub centerline: Vec<[f64; 3]>,
    /// Material preset: nylon, polypropylene, silk, polyglactin.
    pub material: Option<String>,
    /// USP size, e.g. "2-0" (sets the radius).
    pub size: Option<String>,
    /// Radius [m].
    pub radius: Option<f64>,
    /// Breaking force [N] (default: the material preset's strength × area; none without one).
    pub breaking_force: Option<f64>,
    /// Young's modulus [Pa].
    pub youngs_modulus: Option<f64>,
    /// Shear modulus [Pa].
    pub shear_modulus: Option<f64>,
    /// Poisson's ratio [-].
    pub poisson_ratio: Option<f64>,
    /// Density [kg/m³].
    pub density: Option<f64>,
    /// Reference direction for d1 at the start [-]; default: any perpendicular.
    pub normal: Option<[f64; 3]>,
    /// Rest curvature (κ1, κ2) in the material frame [1/m].
    pub rest_curvature: Option<[f64; 2]>,
    /// Rest twist rate [rad/m].
    pub rest_twist: Option<f64>,
    /// Start condition; default clamped.
    pub start: Option<EndName>,
    /// End condition; default free.
    pub end: Option<EndName>,
    /// Elements for this rod (overrides `solver.elements`).
    pub elements: Option<i64>,
    /// Mass-proportional damping α [1/s] (cosserat): force `-α m v`.
    pub mass_damping: Option<f64>,
    /// Stiffness-proportional (strain-rate) damping β [s] (cosserat, newton solver).
    pub stiffness_damping: Option<f64>,
    /// Rest shape (der): `straight` (default; with `rest_curvature`/`rest_twist`),
    /// `authored` (the centreline is the rest shape) or `sag-free` (rest shape optimised so
    /// the centreline is an equilibrium under gravity and the loads, Takahashi–Batty 2025).
    pub rest_shape: Option<RestShapeName>,
    /// Settings of the sag-free optimisation.
    pub sag_free: Option<SagFreeSection>,
    /// Point loads at the ends.
    #[serde(default)]
    pub loads: Vec<LoadSection>,
    /// Motion of a clamped start.
    pub start_motion: Option<MotionSection>,
    /// Motion of a held end.
    pub end_motion: Option<MotionSection>,
}

/// `rest_shape` values.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RestShapeName {
    /// Straight, with the rod's `rest_curvature` and `rest_twist`.
    Straight,
    /// The authored centreline.
    Authored,
    /// Optimised so the authored centreline hangs still.
    SagFree,
}

/// `[rods.sag_free]`: settings of the sag-free optimisation (docs/derivations/sagfree.md §6).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SagFreeSection {
    /// Regulariser weight α [-] (default 1e-7).
    pub alpha: Option<f64>,
    /// Largest change of a rest curvature component [-] (default √2).
    pub curvature_bound: Option<f64>,
    /// Largest change of a rest twist [rad] (default π/8).
    pub twist_bound: Option<f64>,
    /// Rest-length bounds as fractions of the authored lengths (default [0.1, 1.1]).
    pub length_bounds: Option<[f64; 2]>,
    /// Optimise rest twists too (default true).
    pub optimise_twist: Option<bool>,
}

/// `[[rods.loads]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Which end.
    pub at: LoadAt,
    /// Force [N, world].
    #[serde(default)]
    pub force: [f64; 3],
    /// Torque [N m, world].
    #[serde(default)]
    pub torque: [f64; 3],
}

/// `[rods.start_motion]` / `[rods.end_motion]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotionSection {
    /// Key times [s], strictly increasing, ≥ 0.
    pub times: Vec<f64>,
    /// Displacements [m] at the key times.
    pub displacement: Option<Vec<[f64; 3]>>,
    /// Rotation vectors [rad] at the key times.
    pub rotation: Option<Vec<[f64; 3]>>,
}

/// `[[obstacles]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Obstacle {
    /// Half-space bounded by a plane.
    Plane {
        /// A point on the plane [m].
        point: [f64; 3],
        /// Outward normal [-].
        normal: [f64; 3],
        /// Coulomb friction coefficient [-].
        #[serde(default)]
        friction: f64,
        /// Scripted rigid motion (about `point`).
        motion: Option<MotionSection>,
    },
    /// Finite solid cylinder.
    Cylinder {
        /// Centre [m].
        center: [f64; 3],
        /// Axis direction [-].
        axis: [f64; 3],
        /// Radius [m].
        radius: f64,
        /// Length [m].
        length: f64,
        /// Coulomb friction coefficient [-].
        #[serde(default)]
        friction: f64,
        /// Scripted rigid motion (about `center`).
        motion: Option<MotionSection>,
    },
    /// Solid capsule: the points within `radius` of the segment `a`–`b` (an instrument, the
    /// needle's wire).
    Capsule {
        /// One end of the core segment [m].
        a: [f64; 3],
        /// The other end [m].
        b: [f64; 3],
        /// Radius [m].
        radius: f64,
        /// Coulomb friction coefficient [-].
        #[serde(default)]
        friction: f64,
        /// Scripted rigid motion (about the midpoint of `a`–`b`).
        motion: Option<MotionSection>,
    },
}

/// The task a scene sets: its `task`, else the stem of its path (`scenes/x.toml` → `x`).
pub fn task_name(file: &SceneFile, path: &str) -> String {
    match &file.task {
        Some(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => std::path::Path::new(path)
            .file_stem()
            .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned()),
    }
}
