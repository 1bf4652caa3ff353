//! The rigid curved needle the virtual coupling drives (issue #6).
//!
//! Geometry (body frame, as `tool::NeedleShape`): the swage at the origin, the arc leaving
//! along +z and curving toward +x, `p(θ) = ρ (sin θ ẑ + (1 − cos θ) x̂)`, `θ ∈ [0, Θ]`, the arc
//! centre at `ρ x̂`, the point at θ = Θ. The suture is swaged at θ = 0 and leaves along −z.
//!
//! Dynamics: a rigid body of the tool's mass and (isotropic) inertia — the needle in its driver
//! — about the grip point θ_g. The coupling spring-damper to the device target is implicit
//! (linear, solved exactly per step: stable at any stiffness); tissue and suture forces are
//! applied explicitly (lagged one step, they are soft next to `m/h²`):
//!
//! `v' = (m v + h F + h k (x_t − x_g) + h c v_t) / (m + h c + h² k)`,
//! `ω' = (I ω + h τ + h k_r θ_err + h c_r ω_t) / (I + h c_r + h² k_r)`,
//!
//! with θ_err the rotation vector from the needle's frame to the target frame (world), then
//! `x_g += h v'`, `R ← exp(h ω') R` (symplectic Euler).

use super::tool::NeedleShape;
use crate::math::{Quat, Vec3};

/// A rigid needle and its state.
#[derive(Clone, Debug)]
pub struct Needle {
    /// Shape.
    pub shape: NeedleShape,
    /// Body frame → world.
    pub rotation: Quat,
    /// Grip point [m] (world).
    pub grip_position: Vec3,
    /// Grip fraction of the arc (0 swage, 1 point).
    pub grip: f64,
    /// Velocity of the grip point [m/s] and angular velocity [rad/s] (world).
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Mass [kg] and moment of inertia about the grip [kg m²] (needle in its driver).
    pub mass: f64,
    /// See `mass`.
    pub inertia: f64,
    /// Force [N] and torque about the grip [N m] accumulated for the next step.
    force: Vec3,
    torque: Vec3,
    /// Coupling force on the needle over the last step [N] (the hand feels its opposite).
    pub coupling_force: Vec3,
    /// Coupling torque on the needle over the last step [N m].
    pub coupling_torque: Vec3,
    /// The external (tissue + suture + gravity) force of the last step [N].
    pub external_force: Vec3,
}

/// The coupling to the device, as the physics loop sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NeedleTarget {
    /// Target grip position [m] and velocity [m/s].
    pub position: Vec3,
    /// See `position`.
    pub velocity: Vec3,
    /// Target needle frame and angular velocity [rad/s].
    pub rotation: Quat,
    /// See `rotation`.
    pub angular_velocity: Vec3,
    /// Stiffness [N/m], damping [N s/m], rotational stiffness [N m/rad] and damping
    /// [N m s/rad]; all zero when the needle is not held.
    pub k: f64,
    /// See `k`.
    pub c: f64,
    /// See `k`.
    pub kr: f64,
    /// See `k`.
    pub cr: f64,
}

impl NeedleTarget {
    /// Feed every field to a state digest (an instrument keeps its device's last target).
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let NeedleTarget {
            position,
            velocity,
            rotation,
            angular_velocity,
            k,
            c,
            kr,
            cr,
        } = self;
        d.vec3(position);
        d.vec3(velocity);
        d.quat(rotation);
        d.vec3(angular_velocity);
        for g in [k, c, kr, cr] {
            d.f64(*g);
        }
    }
}

/// The pose of a needle whose arc lies on the circle of centre `centre` in the plane normal
/// to z (its point at angle `phi` [rad], measured from +x toward +y; the arc trailing behind
/// the point, counter-clockwise travel), gripped at arc fraction `grip`: (grip position [m],
/// frame). This is how a surgeon drives a curved needle: rotating it about its own centre so
/// the point follows the arc. Scripted drivers (tests, benchmarks, demos) use it.
pub fn pose_on_circle(shape: &NeedleShape, centre: &Vec3, phi: f64, grip: f64) -> (Vec3, Quat) {
    let rho = shape.curvature_radius;
    let arc = shape.arc_angle;
    let ps = phi - arc;
    let (cs, sn) = (ps.cos(), ps.sin());
    let swage = centre + Vec3::new(cs, sn, 0.0) * rho;
    let d1 = -Vec3::new(cs, sn, 0.0);
    let d3 = Vec3::new(-sn, cs, 0.0);
    let d2 = d3.cross(&d1);
    let r = crate::math::Mat3::from_columns(&[d1, d2, d3]);
    let th = grip * arc;
    let body = Vec3::new(rho * (1.0 - th.cos()), 0.0, rho * th.sin());
    (
        swage + r * body,
        Quat::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(r)),
    )
}

impl Needle {
    /// A needle at rest with its swage at `swage` [m] and frame `rotation`, gripped at arc
    /// fraction `grip`.
    pub fn new(
        shape: NeedleShape,
        swage: Vec3,
        rotation: Quat,
        grip: f64,
        mass: f64,
        inertia: f64,
    ) -> Self {
        let mut n = Needle {
            shape,
            rotation,
            grip_position: Vec3::zeros(),
            grip: grip.clamp(0.0, 1.0),
            velocity: Vec3::zeros(),
            angular_velocity: Vec3::zeros(),
            mass,
            inertia,
            force: Vec3::zeros(),
            torque: Vec3::zeros(),
            coupling_force: Vec3::zeros(),
            coupling_torque: Vec3::zeros(),
            external_force: Vec3::zeros(),
        };
        n.grip_position = n.point_from(&swage, n.grip * shape.arc_angle);
        n
    }

    fn body(&self, th: f64) -> Vec3 {
        let r = self.shape.curvature_radius;
        Vec3::new(r * (1.0 - th.cos()), 0.0, r * th.sin())
    }

    fn point_from(&self, swage: &Vec3, th: f64) -> Vec3 {
        swage + self.rotation * self.body(th)
    }

    /// Swage point [m].
    pub fn swage(&self) -> Vec3 {
        self.grip_position - self.rotation * self.body(self.grip * self.shape.arc_angle)
    }

    /// Point at arc angle `th` [rad] (0 swage, Θ point) [m].
    pub fn point(&self, th: f64) -> Vec3 {
        self.point_from(&self.swage(), th)
    }

    /// Unit tangent at `th` (toward the point).
    pub fn tangent(&self, th: f64) -> Vec3 {
        self.rotation * Vec3::new(th.sin(), 0.0, th.cos())
    }

    /// The point [m].
    pub fn tip(&self) -> Vec3 {
        self.point(self.shape.arc_angle)
    }

    /// Velocity of the needle's material point at `th` [m/s].
    pub fn velocity_at(&self, th: f64) -> Vec3 {
        self.velocity
            + self
                .angular_velocity
                .cross(&(self.point(th) - self.grip_position))
    }

    /// Closest point of the needle's circle to `p`: its arc angle θ (may fall outside [0, Θ];
    /// in [Θ/2 − π, Θ/2 + π), the cut opposite the arc's middle) and the offset `p − c(θ)` [m].
    pub fn closest(&self, p: &Vec3) -> (f64, Vec3) {
        let r = self.shape.curvature_radius;
        let b = self.rotation.inverse() * (p - self.swage());
        // Centre at r x̂; c(θ) − centre = r (sin θ ẑ − cos θ x̂).
        let q = b - Vec3::new(r, 0.0, 0.0);
        // atan2 cuts the circle at θ = ±π, which is the point of a 1/2-circle needle: a
        // point just past it would come out at −π, nearest the swage. Put the cut opposite the
        // arc's middle instead.
        let mid = 0.5 * self.shape.arc_angle;
        let tau = std::f64::consts::TAU;
        let th = mid + (q.z.atan2(-q.x) - mid + 0.5 * tau).rem_euclid(tau) - 0.5 * tau;
        let off = self.rotation * (b - self.body(th));
        (th, off)
    }

    /// Apply a force [N] at world point `at` for the next step.
    pub fn apply(&mut self, f: &Vec3, at: &Vec3) {
        self.force += f;
        self.torque += (at - self.grip_position).cross(f);
    }

    /// Move the grip to arc fraction `u` (a regrasp): the body does not move.
    pub fn regrasp(&mut self, u: f64) {
        let swage = self.swage();
        let w = self.angular_velocity;
        let v_new = self.velocity
            + w.cross(&(self.point_from(&swage, u * self.shape.arc_angle) - self.grip_position));
        self.grip = u.clamp(0.0, 1.0);
        self.grip_position = self.point_from(&swage, self.grip * self.shape.arc_angle);
        self.velocity = v_new;
    }

    /// One step of `h` [s] under the accumulated forces, gravity `g` [m/s²] and the coupling.
    pub fn step(&mut self, h: f64, gravity: &Vec3, t: &NeedleTarget) {
        self.step_with_drags(h, gravity, t, &[], 1.0);
    }

    /// [`Needle::step`] with sliding resistances implicit in the solve: each
    /// `(point, unit direction τ, force f, lagged speed v along τ, forward only)` resists the
    /// needle's velocity along τ at that point with `c = f / max(|v|, v_s)` (Coulomb at speed,
    /// viscous below `v_s` [m/s]), so a large resistance on a light body stays stable. The
    /// translational and rotational unknowns are solved together (6×6, symmetric positive
    /// definite): `A = diag(m + hc + h²k, I + hc_r + h²k_r) + h Σ c g gᵀ`, `g = [τ; r × τ]`.
    pub fn step_with_drags(
        &mut self,
        h: f64,
        gravity: &Vec3,
        t: &NeedleTarget,
        drags: &[(Vec3, Vec3, f64, f64, bool)],
        slip_speed: f64,
    ) {
        use nalgebra::{Matrix6, Vector6};
        let f = self.force + gravity * self.mass;
        self.external_force = f;
        let (m, i) = (self.mass, self.inertia);
        let err = (t.rotation * self.rotation.inverse()).scaled_axis();
        let mut a = Matrix6::<f64>::zeros();
        let lin = m + h * t.c + h * h * t.k;
        let rot = i + h * t.cr + h * h * t.kr;
        for k in 0..3 {
            a[(k, k)] = lin;
            a[(k + 3, k + 3)] = rot;
        }
        let bl = self.velocity * m
            + f * h
            + (t.position - self.grip_position) * (h * t.k)
            + t.velocity * (h * t.c);
        let br = self.angular_velocity * i
            + self.torque * h
            + err * (h * t.kr)
            + t.angular_velocity * (h * t.cr);
        let mut b = Vector6::new(bl.x, bl.y, bl.z, br.x, br.y, br.z);
        for &(p, tau, force, v, forward) in drags {
            if forward && v <= 0.0 {
                continue;
            }
            let c = force / v.abs().max(slip_speed);
            let r = p - self.grip_position;
            let rt = r.cross(&tau);
            let g = Vector6::new(tau.x, tau.y, tau.z, rt.x, rt.y, rt.z);
            a += g * g.transpose() * (h * c);
        }
        let _ = &mut b;
        let u = match a.cholesky() {
            Some(ch) => ch.solve(&b),
            None => Vector6::zeros(),
        };
        let v = Vec3::new(u[0], u[1], u[2]);
        let w = Vec3::new(u[3], u[4], u[5]);
        self.velocity = v;
        self.angular_velocity = w;
        self.grip_position += v * h;
        self.rotation = Quat::from_scaled_axis(w * h) * self.rotation;
        self.rotation.renormalize();
        self.coupling_force = (t.position - self.grip_position) * t.k + (t.velocity - v) * t.c;
        let err = (t.rotation * self.rotation.inverse()).scaled_axis();
        self.coupling_torque = err * t.kr + (t.angular_velocity - w) * t.cr;
        self.force = Vec3::zeros();
        self.torque = Vec3::zeros();
    }

    /// Feed the state a step carries to the next (a state digest, `sim::World::digest`): the
    /// pose, grip and velocities, the forces accumulated for the next step, and the last
    /// step's coupling and external forces. Every field is named here, so a new one must be
    /// placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Needle {
            // The scene's needle (and its driver's mass).
            shape: _,
            mass: _,
            inertia: _,
            rotation,
            grip_position,
            grip,
            velocity,
            angular_velocity,
            force,
            torque,
            coupling_force,
            coupling_torque,
            external_force,
        } = self;
        d.quat(rotation);
        d.vec3(grip_position);
        d.f64(*grip);
        d.vec3(velocity);
        d.vec3(angular_velocity);
        d.vec3(force);
        d.vec3(torque);
        d.vec3(coupling_force);
        d.vec3(coupling_torque);
        d.vec3(external_force);
    }

    /// Whether the state is finite.
    pub fn is_finite(&self) -> bool {
        self.grip_position.iter().all(|c| c.is_finite())
            && self.velocity.iter().all(|c| c.is_finite())
            && self.angular_velocity.iter().all(|c| c.is_finite())
            && self.rotation.coords.iter().all(|c| c.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees one ulp of every piece of state a step carries to the next.
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp, ulp_q, ulp3};
        let shape = NeedleShape {
            curvature_radius: 0.008,
            arc_angle: 0.75 * std::f64::consts::PI,
            wire_radius: 3.5e-4,
        };
        let rot = Quat::from_euler_angles(0.3, -0.2, 1.1);
        let mut n = Needle::new(shape, Vec3::new(0.01, 0.02, -0.03), rot, 0.3, 1e-3, 1e-8);
        let target = NeedleTarget {
            position: Vec3::new(0.011, 0.02, -0.03),
            velocity: Vec3::zeros(),
            rotation: rot,
            angular_velocity: Vec3::zeros(),
            k: 100.0,
            c: 1.0,
            kr: 0.01,
            cr: 1e-5,
        };
        n.apply(&Vec3::new(0.0, 0.1, 0.0), &n.tip());
        n.step(1e-3, &Vec3::new(0.0, -9.81, 0.0), &target);
        n.apply(&Vec3::new(0.0, 0.1, 0.0), &n.tip());
        let digest = |n: &Needle| {
            let mut d = crate::math::Digest::default();
            n.digest_into(&mut d);
            d.0
        };
        assert_each_changes(
            &n,
            digest,
            &[
                ("rotation", &|n| ulp_q(&mut n.rotation)),
                ("grip_position", &|n| ulp3(&mut n.grip_position)),
                ("grip", &|n| ulp(&mut n.grip)),
                ("velocity", &|n| ulp3(&mut n.velocity)),
                ("angular_velocity", &|n| ulp3(&mut n.angular_velocity)),
                ("force", &|n| ulp3(&mut n.force)),
                ("torque", &|n| ulp3(&mut n.torque)),
                ("coupling_force", &|n| ulp3(&mut n.coupling_force)),
                ("coupling_torque", &|n| ulp3(&mut n.coupling_torque)),
                ("external_force", &|n| ulp3(&mut n.external_force)),
            ],
        );
        let digest = |t: &NeedleTarget| {
            let mut d = crate::math::Digest::default();
            t.digest_into(&mut d);
            d.0
        };
        assert_each_changes(
            &target,
            digest,
            &[
                ("position", &|t| ulp3(&mut t.position)),
                ("velocity", &|t| ulp3(&mut t.velocity)),
                ("rotation", &|t| ulp_q(&mut t.rotation)),
                ("angular_velocity", &|t| ulp3(&mut t.angular_velocity)),
                ("k", &|t| ulp(&mut t.k)),
                ("c", &|t| ulp(&mut t.c)),
                ("kr", &|t| ulp(&mut t.kr)),
                ("cr", &|t| ulp(&mut t.cr)),
            ],
        );
    }

    /// A point just past the tip of a 1/2-circle needle is nearest its tip, not its swage
    /// (atan2's cut at ±π sat exactly on the point: a regrasp "at the point" took the swage).
    #[test]
    fn closest_point_near_the_tip_of_a_half_circle_is_the_tip() {
        for arc in [std::f64::consts::PI, 0.75 * std::f64::consts::PI] {
            let shape = NeedleShape {
                curvature_radius: 0.008,
                arc_angle: arc,
                wire_radius: 3.5e-4,
            };
            let rot = Quat::from_euler_angles(0.3, -0.2, 1.1);
            let n = Needle::new(shape, Vec3::new(0.01, 0.02, -0.03), rot, 0.3, 1e-3, 1e-8);
            for (eps, want) in [(-1e-3, arc - 1e-3), (0.0, arc), (1e-3, arc + 1e-3)] {
                let (th, off) = n.closest(&n.point(arc + eps));
                assert!((th - want).abs() < 1e-9, "arc {arc}: {th} vs {want}");
                assert!(off.norm() < 1e-12);
            }
            // Every point of the arc maps back to its own angle.
            for k in 0..=20 {
                let th = arc * k as f64 / 20.0;
                assert!((n.closest(&n.point(th)).0 - th).abs() < 1e-9);
            }
        }
    }
}
