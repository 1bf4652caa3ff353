//! The physics loop: a thread stepping one dynamic Cosserat rod at a fixed `dt`, its coupled
//! node pulled by the virtual coupling (sim::tool::ToolSpring) toward the latest ToolTarget from
//! the haptic loop, with obstacle contact if any, publishing the tool's state (ProxyState) back.
//! Allocation-free per step (the solver's buffers are allocated with the rod).

use super::haptic::{Latest, ProxyState, ToolTarget};
use super::pacer::Pacer;
use super::stats::LoopSummary;
use crate::contact::ObstacleContact;
use crate::rod::cosserat::{Both, NoPotential, NodePotential};
use crate::rod::{CosseratRod, Drive};
use crate::sim::tool::ToolSpring;
use ringbuf::HeapProd;
use ringbuf::traits::Producer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the physics loop did, returned when it stops (with the rod's final state).
#[derive(Clone, Debug)]
pub struct PhysicsReport {
    /// Loop statistics (compute = the step's wall time).
    pub stats: LoopSummary,
    /// Steps taken.
    pub steps: u64,
    /// Steps that did not converge within the iteration cap.
    pub unconverged: u64,
    /// Steps the solver refused (state rolled back; the loop goes on).
    pub failed: u64,
    /// The rod at the end.
    pub rod: CosseratRod,
    /// The coupling at the end (its last force on the rod).
    pub spring: ToolSpring,
}

/// Run the physics loop on a new thread until `stop` is set.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    start: Instant,
    mut rod: CosseratRod,
    drive: Drive,
    mut spring: ToolSpring,
    mut contact: Option<ObstacleContact>,
    dt: Duration,
    mut targets: Latest<ToolTarget>,
    mut proxy: HeapProd<ProxyState>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<PhysicsReport> {
    std::thread::spawn(move || {
        let mut pacer = Pacer::new(dt);
        let h = dt.as_secs_f64();
        let (mut steps, mut unconverged, mut failed) = (0u64, 0u64, 0u64);
        let mut compute = Duration::ZERO;
        let node = spring.node;
        while !stop.load(Ordering::Relaxed) {
            let tick = pacer.tick(compute);
            if let Some(t) = targets.get() {
                spring.target = t.position;
                spring.target_velocity = t.velocity;
            }
            let mut none = NoPotential;
            let c: &mut dyn NodePotential = match contact.as_mut() {
                Some(c) => c,
                None => &mut none,
            };
            let mut both = Both {
                a: c,
                b: &mut spring,
            };
            match rod.step_with(h, &drive, &mut both) {
                Ok(rep) => {
                    steps += 1;
                    unconverged += u64::from(!rep.converged);
                }
                Err(_) => failed += 1,
            }
            let e = node.min(rod.segments() - 1);
            let _ = proxy.try_push(ProxyState {
                published: (Instant::now() - start).as_secs_f64(),
                position: rod.x[node],
                rotation: rod.q[e],
                velocity: rod.v[node],
                angular_velocity: rod.q[e] * rod.omega[e],
            });
            compute = tick.elapsed();
        }
        PhysicsReport {
            stats: pacer.stats.summary(),
            steps,
            unconverged,
            failed,
            rod,
            spring,
        }
    })
}
