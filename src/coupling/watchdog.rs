//! Physics watchdog for the haptic loop: if the physics has not published a new state for more
//! than `deadline` (5 ms), the force fades linearly to zero over `fade` (10 ms), so a stalled
//! or crashed simulation never leaves the hand pushed by a stale spring. When physics resumes,
//! the caller ramps the [`ForceLimiter`](super::ForceLimiter) back in from where the fade had
//! taken the force ([`ForceLimiter::resume_from`](super::ForceLimiter::resume_from)).
//! Times are passed in (this module reads no clock).

/// The watchdog's verdict for one haptic tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// Factor to apply to the force [0, 1].
    pub scale: f64,
    /// Physics is stalled (past the deadline).
    pub stalled: bool,
    /// Physics just came back after a stall (ramp back in from the fade).
    pub resumed: bool,
}

/// Watches the age of the physics state.
#[derive(Clone, Debug)]
pub struct Watchdog {
    /// Largest allowed age of the physics state [s].
    pub deadline: f64,
    /// Time to fade the force out once past the deadline [s].
    pub fade: f64,
    stalled: bool,
    /// Stalls seen so far.
    pub stalls: u64,
}

impl Watchdog {
    /// A watchdog with the limits: 5 ms deadline, 10 ms fade.
    pub fn new(deadline: f64, fade: f64) -> Self {
        Watchdog {
            deadline,
            fade,
            stalled: false,
            stalls: 0,
        }
    }

    /// Verdict at time `now` [s] for a physics state published at `published` [s].
    pub fn check(&mut self, now: f64, published: f64) -> Verdict {
        let age = now - published;
        let late = age.is_nan() || age > self.deadline; // NaN ages count as late
        let resumed = self.stalled && !late;
        if late && !self.stalled {
            self.stalls += 1;
        }
        self.stalled = late;
        let scale = if !late {
            1.0
        } else if self.fade > 0.0 {
            ((self.deadline + self.fade - age) / self.fade).clamp(0.0, 1.0)
        } else {
            0.0
        };
        Verdict {
            scale: if scale.is_finite() { scale } else { 0.0 },
            stalled: late,
            resumed,
        }
    }
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog::new(5e-3, 10e-3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_fades_to_zero_within_10_ms_of_the_deadline_and_resumes() {
        let mut w = Watchdog::default();
        // Physics publishes every ms until t = 0.100 s, then stalls until 0.130 s.
        let mut zero_at = None;
        let mut resumed_at = None;
        for k in 0..200 {
            let t = k as f64 * 1e-3;
            let published = if t <= 0.100 || t >= 0.130 { t } else { 0.100 };
            let v = w.check(t, published);
            if t <= 0.105 + 1e-12 {
                assert_eq!(v.scale, 1.0, "t {t}");
            }
            if v.scale == 0.0 && zero_at.is_none() {
                zero_at = Some(t);
            }
            if v.resumed {
                resumed_at = Some(t);
            }
            // Monotone fade while stalled.
            if v.stalled {
                assert!(v.scale <= 1.0 && v.scale >= 0.0);
            }
        }
        let zero_at = zero_at.expect("force reached zero");
        assert!(zero_at <= 0.100 + 0.005 + 0.010 + 1e-9, "zero at {zero_at}");
        assert_eq!(resumed_at, Some(0.130));
        assert_eq!(w.stalls, 1);
        // A NaN timestamp is a stall, not a full-force tick.
        assert!(w.check(0.2, f64::NAN).stalled);
    }
}
