//! `[[instruments]]` (issue #22): validated into an instrument's spec, its pose at t = 0 and
//! the coupling of the hand that drives it; its three capsules (two jaws, the shaft) become
//! obstacles of the suture, posed every step by sim::instrument.

use super::{Ctx, SceneError, check_finite3, fmt_num, positive};
use crate::contact::{Obstacle, Shape};
use crate::located::Seg;
use crate::math::{Mat3, Quat, Vec3, any_perpendicular, rotation_from_matrix};
use crate::sim::instrument::{Instrument, InstrumentKind, InstrumentSpec};
use crate::sim::needle::Needle;
use crate::sim::tool::{Hand, ToolSetup};

/// Coulomb friction of the suture on an instrument's steel [-] (nylon on steel, dry: about
/// 0.2–0.3; the middle of the range).
pub const INSTRUMENT_FRICTION: f64 = 0.25;

/// Where along the jaws a needle is held at t = 0 (fraction of the jaw from the hinge).
pub const NEEDLE_IN_JAWS: f64 = 0.7;

/// An instrument as the scene gives it.
#[derive(Clone, Debug)]
pub(super) struct Parsed {
    pub spec: InstrumentSpec,
    /// Pose at t = 0 (None: placed on the needle).
    pub pose: Option<(Vec3, Quat)>,
    pub holds_needle: bool,
    /// The coupling of its hand (rod and node filled in by the caller).
    pub tool: ToolSetup,
    /// Whether the scene gave a workspace offset (else: the hinge at t = 0).
    pub offset_given: bool,
}

/// Validate `[[instruments]]`.
pub(super) fn parse(
    ctx: &Ctx,
    list: &[super::file::InstrumentSection],
) -> Result<Vec<Parsed>, SceneError> {
    use Seg::{Idx, Key};
    if list.len() > crate::sim::MAX_TOOLS {
        return Err(ctx.err(
            &[Key("instruments")],
            format!(
                "at most {} instruments (one per hand), got {}",
                crate::sim::MAX_TOOLS,
                list.len()
            ),
        ));
    }
    let mut out: Vec<Parsed> = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let at = |k: &'static str| [Key("instruments"), Idx(i), Key(k)];
        let Some(hand) = Hand::from_name(&s.hand) else {
            return Err(ctx.err(
                &at("hand"),
                format!("must be \"right\" or \"left\", got \"{}\"", s.hand),
            ));
        };
        if out.iter().any(|p| p.spec.hand == hand) {
            return Err(ctx.err(
                &at("hand"),
                format!("\"{}\" is given to an earlier instrument too", s.hand),
            ));
        }
        let kind = match s.kind.as_str() {
            "needle-driver" => InstrumentKind::NeedleDriver,
            "forceps" => InstrumentKind::Forceps,
            other => {
                return Err(ctx.err(
                    &at("kind"),
                    format!("must be \"needle-driver\" or \"forceps\", got \"{other}\""),
                ));
            }
        };
        let driver = kind == InstrumentKind::NeedleDriver;
        let opt = |k: &'static str, v: Option<f64>, default: f64, unit: &str| match v {
            Some(v) => positive(ctx, &at(k), v, unit),
            None => Ok(default),
        };
        let holds_needle = match s.holds.as_deref() {
            None | Some("nothing") => false,
            Some("needle") => true,
            Some(other) => {
                return Err(ctx.err(
                    &at("holds"),
                    format!("must be \"needle\" or \"nothing\", got \"{other}\""),
                ));
            }
        };
        let pose = if holds_needle {
            for (k, given) in [
                ("position", s.position.is_some()),
                ("direction", s.direction.is_some()),
                ("opens_toward", s.opens_toward.is_some()),
            ] {
                if given {
                    return Err(ctx.err(
                        &at(k),
                        "must be left out: an instrument that holds the needle is placed on the needle's grip"
                            .to_string(),
                    ));
                }
            }
            None
        } else {
            let (Some(p), Some(d)) = (&s.position, &s.direction) else {
                return Err(ctx.err(
                    &at(if s.position.is_none() {
                        "position"
                    } else {
                        "direction"
                    }),
                    "is needed for an instrument that holds nothing at t = 0 (the hinge [m] and the jaws' direction)"
                        .to_string(),
                ));
            };
            let p = check_finite3(ctx, &at("position"), p, "[m]")?;
            let d = check_finite3(ctx, &at("direction"), d, "[-]")?;
            if d.norm() < 1e-12 {
                return Err(ctx.err(&at("direction"), "must not be zero".to_string()));
            }
            let z = d.normalize();
            let x = match &s.opens_toward {
                Some(o) => {
                    let o = check_finite3(ctx, &at("opens_toward"), o, "[-]")?;
                    let x = o - z * o.dot(&z);
                    if x.norm() < 1e-9 * o.norm().max(1e-300) || x.norm() < 1e-12 {
                        return Err(ctx.err(
                            &at("opens_toward"),
                            "must not be parallel to `direction`".to_string(),
                        ));
                    }
                    x.normalize()
                }
                None => any_perpendicular(&z),
            };
            let y = z.cross(&x);
            Some((p, rotation_from_matrix(&Mat3::from_columns(&[x, y, z]))))
        };
        let jaw_length = opt(
            "jaw_length",
            s.jaw_length,
            if driver { 0.012 } else { 0.010 },
            "[m]",
        )?;
        let jaw_radius = opt(
            "jaw_radius",
            s.jaw_radius,
            if driver { 0.0012 } else { 0.0006 },
            "[m]",
        )?;
        if jaw_radius >= 0.5 * jaw_length {
            return Err(ctx.err(
                &at("jaw_radius"),
                format!(
                    "must be less than half the jaw length {} [m], got {}",
                    fmt_num(0.5 * jaw_length),
                    fmt_num(jaw_radius)
                ),
            ));
        }
        let jaw_tip_radius = opt("jaw_tip_radius", s.jaw_tip_radius, jaw_radius, "[m]")?;
        if jaw_tip_radius > jaw_radius {
            return Err(ctx.err(
                &at("jaw_tip_radius"),
                format!(
                    "must be at most `jaw_radius` {} [m] (a jaw tapers toward its tip), got {}",
                    fmt_num(jaw_radius),
                    fmt_num(jaw_tip_radius)
                ),
            ));
        }
        let opening = opt("opening", s.opening, 0.5, "[rad]")?;
        if opening > 1.5 {
            return Err(ctx.err(
                &at("opening"),
                format!("must be at most 1.5 [rad], got {}", fmt_num(opening)),
            ));
        }
        let mass = opt("mass", s.mass, 0.02, "[kg]")?;
        let spec = InstrumentSpec {
            kind,
            hand,
            jaw_length,
            jaw_radius,
            jaw_tip_radius,
            shaft_length: opt("shaft_length", s.shaft_length, 0.06, "[m]")?,
            shaft_radius: opt("shaft_radius", s.shaft_radius, 0.002, "[m]")?,
            opening,
            jaw_speed: opt("jaw_speed", s.jaw_speed, 8.0, "[rad/s]")?,
            grip_strength: opt(
                "grip_strength",
                s.grip_strength,
                if driver { 5.0 } else { 3.0 },
                "[N]",
            )?,
            grip_stiffness: opt("grip_stiffness", s.grip_stiffness, 5000.0, "[N/m]")?,
            mass,
            inertia: opt("inertia", s.inertia, 2e-6, "[kg m²]")?,
        };
        let damping_ratio = match s.damping_ratio {
            Some(z) if z.is_finite() && (0.0..=10.0).contains(&z) => z,
            Some(z) => {
                return Err(ctx.err(
                    &at("damping_ratio"),
                    format!("must be in [0, 10] [-], got {}", fmt_num(z)),
                ));
            }
            None => 1.0,
        };
        let offset = s
            .workspace_offset
            .as_ref()
            .map(|o| check_finite3(ctx, &at("workspace_offset"), o, "[m]"))
            .transpose()?;
        out.push(Parsed {
            spec,
            pose,
            holds_needle,
            offset_given: offset.is_some(),
            tool: ToolSetup {
                hand,
                instrument: Some(i),
                rod: 0,
                node: 0,
                mass,
                inertia: spec.inertia,
                frequency: opt("frequency", s.frequency, 20.0, "[Hz]")?,
                damping_ratio,
                max_stiffness: opt("max_stiffness", s.max_stiffness, 1000.0, "[N/m]")?,
                workspace_scale: opt("workspace_scale", s.workspace_scale, 1.0, "[-]")?,
                workspace_offset: offset.unwrap_or_default(),
            },
        });
    }
    if out.iter().filter(|p| p.holds_needle).count() > 1 {
        return Err(ctx.err(
            &[Key("instruments")],
            "only one instrument can hold the needle at t = 0".to_string(),
        ));
    }
    // The right hand's tool first: the order a world steps them and devices are given.
    out.sort_by_key(|p| p.spec.hand != Hand::Right);
    for (k, p) in out.iter_mut().enumerate() {
        p.tool.instrument = Some(k);
    }
    Ok(out)
}

/// The three capsules of each instrument, as built (closed jaws, body frame at the world
/// origin; sim::instrument poses them every step): each jaw a round cone where it tapers
/// (`jaw_tip_radius` < `jaw_radius`), else a capsule.
pub(super) fn obstacles(parsed: &[Parsed]) -> Vec<Obstacle> {
    let mut out = Vec::with_capacity(3 * parsed.len());
    for p in parsed {
        let ins = Instrument::new(p.spec, Vec3::zeros(), Quat::identity(), 0);
        for (j, (a, b, radius)) in ins.body_capsules(0.0).into_iter().enumerate() {
            let tip = p.spec.jaw_tip_radius;
            let shape = if j < 2 && tip < radius {
                // The hinge's radius at a, the tip's at b; the loader checked
                // 0 < tip < radius < jaw_length / 2, so the cone has a side.
                Shape::RoundCone {
                    a,
                    b,
                    ra: radius,
                    rb: tip,
                }
            } else {
                Shape::Capsule { a, b, radius }
            };
            out.push(Obstacle {
                shape,
                friction: INSTRUMENT_FRICTION,
            });
        }
    }
    out
}

/// The pose of an instrument holding `needle` at its grip: the jaws across the needle's
/// plane (along the needle's body y, as a driver holds a curved needle), the grip point at
/// [`NEEDLE_IN_JAWS`] of the jaws, the jaws opening along the needle's d1.
pub(super) fn on_needle(spec: &InstrumentSpec, needle: &Needle) -> (Vec3, Quat) {
    let r = needle.rotation.to_rotation_matrix().into_inner();
    let (d1, d2) = (r.column(0).into_owned(), r.column(1).into_owned());
    let z = d2;
    let x = d1;
    let y = z.cross(&x);
    let rot = rotation_from_matrix(&Mat3::from_columns(&[x, y, z]));
    let hinge = needle.grip_position - z * (NEEDLE_IN_JAWS * spec.jaw_length);
    (hinge, rot)
}
