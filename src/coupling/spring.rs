//! Workspace mapping and the 6-DOF virtual coupling (docs/derivations/cosserat.md §C.5–C.6; Colgate's virtual
//! coupling): the device and the simulated tool are joined by a spring-damper, never rigidly, so
//! the haptic loop renders a bounded, passive force whatever the simulation does.

use crate::math::{Mat3, Quat, Vec3, rotation_from_matrix};

/// Device pose → world pose: `p = offset + R · (scale · S p_dev)`, `q = R · (S q_dev S) · F`, with
/// `S = diag(±1)` the axis flips. `S` must be a rotation (an even number of flips), else a
/// device orientation would map to a reflection. `F` is the tool's frame at the device's
/// identity orientation, so a device at rest holds the tool as the scene placed it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkspaceMap {
    /// World metres per device metre [-].
    pub scale: f64,
    /// World position of the device origin [m].
    pub offset: Vec3,
    /// Rotation from the (flipped) device frame to the world.
    pub rotation: Quat,
    /// Axis signs applied first.
    pub flip: [bool; 3],
    /// Tool frame at the device's identity orientation (right factor): the device turns the
    /// tool from this frame (identity by default).
    pub frame: Quat,
}

/// A workspace map that cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MapError {
    /// Scale not positive and finite.
    #[error("scale must be > 0 and finite, got {0}")]
    Scale(f64),
    /// An odd number of flips is a reflection.
    #[error("an odd number of axis flips is a reflection; flip two axes or use the rotation")]
    Reflection,
}

impl WorkspaceMap {
    /// A validated map.
    pub fn new(
        scale: f64,
        offset: Vec3,
        rotation: Quat,
        flip: [bool; 3],
    ) -> Result<Self, MapError> {
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(MapError::Scale(scale));
        }
        if flip.iter().filter(|f| **f).count() % 2 == 1 {
            return Err(MapError::Reflection);
        }
        Ok(WorkspaceMap {
            scale,
            offset,
            rotation,
            flip,
            frame: Quat::identity(),
        })
    }

    /// The same map with the tool frame `frame` at the device's identity orientation.
    pub fn with_frame(mut self, frame: Quat) -> Self {
        self.frame = frame;
        self
    }

    fn s(&self) -> Mat3 {
        Mat3::from_diagonal(&Vec3::from_fn(|i, _| if self.flip[i] { -1.0 } else { 1.0 }))
    }

    /// World position [m] of a device position [m].
    pub fn position(&self, p: &Vec3) -> Vec3 {
        self.offset + self.rotation * (self.s() * p * self.scale)
    }

    /// World velocity [m/s] of a device velocity.
    pub fn velocity(&self, v: &Vec3) -> Vec3 {
        self.rotation * (self.s() * v * self.scale)
    }

    /// World orientation of a device orientation.
    pub fn orientation(&self, q: &Quat) -> Quat {
        let s = self.s();
        let r = s * q.to_rotation_matrix().into_inner() * s;
        self.rotation * rotation_from_matrix(&r) * self.frame
    }

    /// Device-frame force [N] for a world force on the hand (the inverse direction map; no
    /// scale: forces are rendered 1:1).
    pub fn force_to_device(&self, f: &Vec3) -> Vec3 {
        self.s() * (self.rotation.inverse() * f)
    }
}

/// The virtual coupling, set by natural frequency and damping ratio for the tool it drives.
#[derive(Clone, Debug, PartialEq)]
pub struct VirtualCoupling {
    /// Linear stiffness [N/m].
    pub k: f64,
    /// Linear damping [N s/m].
    pub c: f64,
    /// Angular stiffness [N m/rad].
    pub kr: f64,
    /// Angular damping [N m s/rad].
    pub cr: f64,
}

impl VirtualCoupling {
    /// `k = m ω²`, `c = 2 ζ m ω` (and the same with the tool's moment of inertia `inertia`
    /// [kg m²] for rotation), `ω = 2π frequency` [Hz]; the linear stiffness is capped at the
    /// device's `max_stiffness` [N/m] (the damping keeps the ratio ζ at the capped stiffness).
    /// Returns the coupling and whether it was capped.
    pub fn new(
        mass: f64,
        inertia: f64,
        frequency: f64,
        damping_ratio: f64,
        max_stiffness: f64,
    ) -> (Self, bool) {
        let w = 2.0 * std::f64::consts::PI * frequency;
        let mut k = mass * w * w;
        let capped = max_stiffness > 0.0 && k > max_stiffness;
        if capped {
            k = max_stiffness;
        }
        let we = (k / mass).sqrt();
        (
            VirtualCoupling {
                k,
                c: 2.0 * damping_ratio * mass * we,
                kr: inertia * w * w,
                cr: 2.0 * damping_ratio * inertia * w,
            },
            capped,
        )
    }

    /// The wrench on the tool [N, N m] pulling it toward the device pose; the hand feels its
    /// opposite. Positions [m], velocities [m/s], angular velocities [rad/s], world frame.
    #[allow(clippy::too_many_arguments)]
    pub fn wrench(
        &self,
        device: (&Vec3, &Quat),
        device_rate: (&Vec3, &Vec3),
        tool: (&Vec3, &Quat),
        tool_rate: (&Vec3, &Vec3),
    ) -> (Vec3, Vec3) {
        let f = (device.0 - tool.0) * self.k + (device_rate.0 - tool_rate.0) * self.c;
        // Rotation taking the tool to the device, as a world rotation vector.
        let err = (device.1 * tool.1.inverse()).scaled_axis();
        let t = err * self.kr + (device_rate.1 - tool_rate.1) * self.cr;
        (f, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_scales_rotates_and_flips_consistently() {
        let rot = Quat::from_scaled_axis(Vec3::new(0.0, std::f64::consts::FRAC_PI_2, 0.0));
        let m = WorkspaceMap::new(0.5, Vec3::new(0.0, 0.1, 0.0), rot, [true, false, true]).unwrap();
        // Device +x flips to -x, scales to -0.5, rotates 90° about y to +0.5 z.
        let p = m.position(&Vec3::new(1.0, 0.0, 0.0));
        assert!((p - Vec3::new(0.0, 0.1, 0.5)).norm() < 1e-14);
        // Orientation: a device rotation about x maps to a world rotation about the image of
        // the (flipped) x axis: flips negate the angle, the map turns the axis to +z.
        let q = m.orientation(&Quat::from_scaled_axis(Vec3::new(0.3, 0.0, 0.0)));
        let expect = Quat::from_scaled_axis(rot * Vec3::new(-0.3, 0.0, 0.0)) * rot;
        assert!(q.angle_to(&expect) < 1e-12);
        // Forces go back through the inverse rotation and flips: device +x is world +z, so a
        // world +z force is a device +x force.
        let f = Vec3::new(0.0, 0.0, 2.0);
        assert!((m.force_to_device(&f) - Vec3::new(2.0, 0.0, 0.0)).norm() < 1e-14);
        assert_eq!(
            WorkspaceMap::new(1.0, Vec3::zeros(), Quat::identity(), [true, false, false]),
            Err(MapError::Reflection)
        );
        assert_eq!(
            WorkspaceMap::new(0.0, Vec3::zeros(), Quat::identity(), [false; 3]),
            Err(MapError::Scale(0.0))
        );
    }

    #[test]
    fn coupling_is_critically_damped_at_the_requested_frequency() {
        // A free 20 g tool coupled at 30 Hz, ζ = 1, to a fixed device 1 cm away: the exact
        // response is x(t) = x0 (1 + ωt) e^{-ωt}. Integrate with symplectic Euler, 10 µs steps.
        let (m, f) = (0.02, 30.0);
        let (c, capped) = VirtualCoupling::new(m, 1e-6, f, 1.0, 1e4);
        assert!(!capped);
        let w = 2.0 * std::f64::consts::PI * f;
        assert!((c.k - m * w * w).abs() < 1e-9 && (c.c - 2.0 * m * w).abs() < 1e-12);
        let (dev, q) = (Vec3::zeros(), Quat::identity());
        let (mut x, mut v) = (Vec3::new(0.01, 0.0, 0.0), Vec3::zeros());
        let dt = 1e-5;
        let mut worst = 0.0f64;
        for k in 1..=5000 {
            let (fo, _) = c.wrench(
                (&dev, &q),
                (&Vec3::zeros(), &Vec3::zeros()),
                (&x, &q),
                (&v, &Vec3::zeros()),
            );
            v += fo / m * dt;
            x += v * dt;
            let t = k as f64 * dt;
            let exact = 0.01 * (1.0 + w * t) * (-w * t).exp();
            worst = worst.max((x.x - exact).abs());
        }
        assert!(worst < 2e-5 * 0.01 * 100.0, "{worst}"); // < 0.2 % of x0 over 50 ms
        // The stiffness is capped at the device's limit, and ζ kept.
        let (c2, capped) = VirtualCoupling::new(m, 1e-6, 100.0, 0.7, 1000.0);
        assert!(capped && c2.k == 1000.0);
        assert!((c2.c / (2.0 * (c2.k * m).sqrt()) - 0.7).abs() < 1e-12);
    }

    #[test]
    fn torque_turns_the_tool_toward_the_device() {
        let (c, _) = VirtualCoupling::new(0.02, 1e-6, 30.0, 1.0, 0.0);
        let dev = Quat::from_scaled_axis(Vec3::new(0.0, 0.0, 0.2));
        let tool = Quat::identity();
        let (_, t) = c.wrench(
            (&Vec3::zeros(), &dev),
            (&Vec3::zeros(), &Vec3::zeros()),
            (&Vec3::zeros(), &tool),
            (&Vec3::zeros(), &Vec3::zeros()),
        );
        assert!((t - Vec3::new(0.0, 0.0, 0.2 * c.kr)).norm() < 1e-15);
    }
}
