//! ForceLimiter: the last stage before a force is sent to the hand (docs/derivations/cosserat.md §C.5–C.6,
//! CHAI3D's practice). A non-finite command becomes zero and is reported; the magnitude is
//! clamped to the device's limit; after start-up and after every fault the output ramps in
//! linearly over `ramp` seconds, so the hand never feels a step when the simulation resumes.
//! Allocation-free and lock-free: it runs inside the 1 kHz haptic loop.

use crate::math::Vec3;

/// What happened to one command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimiterEvent {
    /// The command was not finite and was replaced by zero (a fault: the ramp restarts).
    pub non_finite: bool,
    /// The magnitude exceeded the limit and was scaled down.
    pub clamped: bool,
    /// The ramp scaled the command down.
    pub ramping: bool,
}

/// Clamp, zero and ramp a force (and torque) command.
#[derive(Clone, Debug)]
pub struct ForceLimiter {
    /// Largest force magnitude [N] (the device profile's limit).
    pub max_force: f64,
    /// Largest torque magnitude [N m].
    pub max_torque: f64,
    /// Ramp-in duration [s] after start and after a fault.
    pub ramp: f64,
    /// Time since the last (re)start of the ramp [s].
    since: f64,
    /// Non-finite commands seen so far.
    pub faults: u64,
    /// Commands clamped so far.
    pub clamps: u64,
}

impl ForceLimiter {
    /// A limiter starting a ramp now.
    ///
    /// # Panics
    /// If a limit is not positive and finite or the ramp is negative: profiles are validated
    /// before a limiter is built.
    pub fn new(max_force: f64, max_torque: f64, ramp: f64) -> Self {
        assert!(max_force > 0.0 && max_force.is_finite());
        assert!(max_torque > 0.0 && max_torque.is_finite());
        assert!(ramp >= 0.0 && ramp.is_finite());
        ForceLimiter {
            max_force,
            max_torque,
            ramp,
            since: 0.0,
            faults: 0,
            clamps: 0,
        }
    }

    /// Restart the ramp (after a device reconnect, a solver roll-back, a device fault).
    pub fn restart(&mut self) {
        self.since = 0.0;
    }

    /// Go on ramping in from `level` [0, 1] of the force, or from where the ramp already is if
    /// that is lower: after a physics stall the watchdog has faded the force to `level`, and
    /// the ramp continues from there (restarting it from zero dropped a force the fade had only
    /// begun on to 2 % in one tick, a step the hand feels).
    pub fn resume_from(&mut self, level: f64) {
        let level = if level.is_finite() {
            level.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.since = self.since.min(level * self.ramp);
    }

    /// The safe command for `force` [N] and `torque` [N m], `dt` [s] after the previous one.
    pub fn apply(&mut self, force: Vec3, torque: Vec3, dt: f64) -> (Vec3, Vec3, LimiterEvent) {
        let mut ev = LimiterEvent::default();
        let finite = force.iter().chain(torque.iter()).all(|v| v.is_finite());
        if !finite || !dt.is_finite() {
            ev.non_finite = true;
            self.faults += 1;
            self.since = 0.0;
            return (Vec3::zeros(), Vec3::zeros(), ev);
        }
        self.since += dt.max(0.0);
        let clamp = |v: Vec3, max: f64, ev: &mut LimiterEvent| {
            let n = v.norm();
            if n > max {
                ev.clamped = true;
                v * (max / n)
            } else {
                v
            }
        };
        let mut f = clamp(force, self.max_force, &mut ev);
        let mut t = clamp(torque, self.max_torque, &mut ev);
        if ev.clamped {
            self.clamps += 1;
        }
        if self.since < self.ramp {
            let s = self.since / self.ramp;
            if f.norm() > 0.0 || t.norm() > 0.0 {
                ev.ramping = true;
            }
            f *= s;
            t *= s;
        }
        (f, t, ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_is_zeroed_and_restarts_the_ramp() {
        let mut l = ForceLimiter::new(3.0, 0.1, 0.05);
        for _ in 0..100 {
            l.apply(Vec3::new(1.0, 0.0, 0.0), Vec3::zeros(), 1e-3);
        }
        let (f, t, ev) = l.apply(Vec3::new(f64::NAN, 0.0, 0.0), Vec3::zeros(), 1e-3);
        assert!(ev.non_finite && f == Vec3::zeros() && t == Vec3::zeros());
        assert_eq!(l.faults, 1);
        // 1 ms after the fault the force is 1/50 of the command, 50 ms after it is all of it.
        let (f, _, ev) = l.apply(Vec3::new(1.0, 0.0, 0.0), Vec3::zeros(), 1e-3);
        assert!(ev.ramping && (f.x - 0.02).abs() < 1e-12);
        let mut last = f;
        for _ in 0..49 {
            (last, _, _) = l.apply(Vec3::new(1.0, 0.0, 0.0), Vec3::zeros(), 1e-3);
        }
        assert!((last.x - 1.0).abs() < 1e-12);
        let (f, _, _) = l.apply(Vec3::new(f64::INFINITY, 0.0, 0.0), Vec3::zeros(), 1e-3);
        assert_eq!(f, Vec3::zeros());
    }

    #[test]
    fn magnitude_is_clamped_along_its_direction() {
        let mut l = ForceLimiter::new(3.0, 0.1, 0.0);
        let (f, t, ev) = l.apply(Vec3::new(30.0, 40.0, 0.0), Vec3::new(0.0, 0.0, -1.0), 1e-3);
        assert!(ev.clamped);
        assert!((f - Vec3::new(1.8, 2.4, 0.0)).norm() < 1e-12);
        assert!((t - Vec3::new(0.0, 0.0, -0.1)).norm() < 1e-12);
        assert_eq!(l.clamps, 1);
        let (f, _, ev) = l.apply(Vec3::new(1.0, 1.0, 1.0), Vec3::zeros(), 1e-3);
        assert!(!ev.clamped && f == Vec3::new(1.0, 1.0, 1.0));
    }

    #[test]
    fn output_never_exceeds_the_limit_for_any_input() {
        let mut l = ForceLimiter::new(2.5, 0.05, 0.01);
        let mut s: u64 = 12345;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f64::from_bits(s) // every bit pattern: NaN, ±inf, subnormals, huge
        };
        for _ in 0..100_000 {
            let (f, t, _) = l.apply(
                Vec3::new(rnd(), rnd(), rnd()),
                Vec3::new(rnd(), rnd(), rnd()),
                1e-3,
            );
            assert!(f.norm() <= 2.5 * (1.0 + 1e-15) && f.iter().all(|v| v.is_finite()));
            assert!(t.norm() <= 0.05 * (1.0 + 1e-15) && t.iter().all(|v| v.is_finite()));
        }
    }
}
