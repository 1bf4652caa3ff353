//! One physics step, in one place.
//!
//! [`World::step_to`] runs the phases of a step in their order; the live physics loop
//! (runtime::physics), headless and viewer replay (session::replay, runtime::replay) and
//! offline stepping ([`World::advance_to`], `suture simulate`) all step the world through it.
//! A step returns [`StepOutputs`]: the one value the recorder, the haptic proxy and the
//! snapshot copy, so nothing above `sim` reads the world's internals.
//!
//! The instruments a device drives are [`Tool`]s, passed as a slice: a tool is its coupling to
//! the held rod node (or the needle), the coupling's gains and its grasp state across steps.

use super::needle::NeedleTarget;
use super::tool::{StrandsCoupling, ToolSetup, ToolSpring};
use super::{
    ContactStats, DynamicParts, ModelError, RodModel, RodReport, SelfContactStats, SimError,
    StepReport, World, contact_potentials, contact_stats, pose_obstacles, self_contact_stats,
    suture_step,
};
use crate::math::{Quat, Vec3};
use crate::rod::{NodePotential, SolverReport, StrandsReport};

/// Button bit that toggles the grasp (device::mouse::GRASP_BUTTON; the device layer sits
/// beside sim, so the bit is restated here and a test in runtime checks they agree).
pub const GRASP_BUTTON: u32 = 1;

/// Most tools (instruments, devices) a world steps with: a surgeon's two hands.
pub const MAX_TOOLS: usize = 2;

/// The device pose mapped to the world, for the physics (world frame, SI): what a physics
/// step consumes at its boundary, and what a recording stores for each step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolTarget {
    /// Time of the device reading [s since start].
    pub t: f64,
    /// Target position [m] and orientation.
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Target velocity [m/s] and angular velocity [rad/s].
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Buttons.
    pub buttons: u32,
    /// Force rendered to the hand at this tick [N] (world frame).
    pub hand_force: Vec3,
}

/// The coupling's gains while the tool holds: stiffness `k` [N/m], damping `c` [N s/m],
/// rotational stiffness `kr` [N m/rad].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Gains {
    /// Stiffness [N/m].
    pub k: f64,
    /// Damping [N s/m].
    pub c: f64,
    /// Rotational stiffness [N m/rad].
    pub kr: f64,
}

/// One instrument driven by a device: its coupling to the held rod node (suturing: to the
/// needle's grip point) and its grasp state across steps.
#[derive(Clone, Debug)]
pub struct Tool {
    /// The held rod.
    pub rod: usize,
    /// The coupling spring-damper inside the rod's implicit solve.
    pub coupling: ToolSpring,
    /// The coupling's gains while grasped.
    gains: Gains,
    /// Whether the tool holds (the coupling acts).
    pub grasped: bool,
    last_buttons: u32,
    /// The newest target orientation.
    pub target_rotation: Quat,
    /// The instrument it drives (scenes with `[[instruments]]`), by index among the world's
    /// instruments; None: the coupling holds a rod node (suturing: the needle) directly.
    pub instrument: Option<usize>,
}

/// A tool's rod or node is not in the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the tool holds rods[{rod}] node {node}, which the scene does not have")]
pub struct NoSuchNode {
    /// The rod asked for.
    pub rod: usize,
    /// The node asked for.
    pub node: usize,
}

impl Tool {
    /// A tool holding `rod` through `coupling` (grasped, with the coupling's gains).
    pub fn new(rod: usize, coupling: ToolSpring) -> Self {
        let gains = Gains {
            k: coupling.k,
            c: coupling.c,
            kr: coupling.kr,
        };
        Tool {
            rod,
            coupling,
            gains,
            grasped: true,
            last_buttons: 0,
            target_rotation: Quat::identity(),
            instrument: None,
        }
    }

    /// The tool of a session at t = 0 for a scene's tool setup: [`Tool::at_start`] for the
    /// `[tool]`, [`Tool::for_instrument`] for an instrument. The live run and replay build
    /// every tool here.
    pub fn from_setup(world: &World, setup: &ToolSetup, gains: Gains) -> Result<Self, NoSuchNode> {
        match setup.instrument {
            Some(i) => Tool::for_instrument(world, i, gains),
            None => Tool::at_start(world, setup.rod, setup.node, gains),
        }
    }

    /// The tool driving instrument `i` of the world at t = 0: its target at the instrument's
    /// hinge and frame, with `gains` (the hand always holds its instrument: the coupling
    /// acts throughout; the grasp button opens and closes the jaws).
    pub fn for_instrument(world: &World, i: usize, gains: Gains) -> Result<Self, NoSuchNode> {
        let ins = world
            .suturing
            .as_ref()
            .and_then(|su| su.instruments.as_ref())
            .and_then(|set| set.list.get(i))
            .ok_or(NoSuchNode { rod: 0, node: i })?;
        let su = world.suturing.as_ref().expect("checked above");
        let mut spring = ToolSpring::new(su.node, gains.k, gains.c);
        spring.kr = gains.kr;
        spring.target = ins.position;
        spring.target_rotation = ins.rotation;
        let mut tool = Tool::new(su.rod, spring);
        tool.target_rotation = ins.rotation;
        tool.instrument = Some(i);
        Ok(tool)
    }

    /// The tool of a session at t = 0: coupled to node `node` of rod `rod` with `gains`, its
    /// target at the node and the held segment's frame (suturing: the needle's grip point and
    /// frame). The live run and replay both build it here.
    pub fn at_start(
        world: &World,
        rod: usize,
        node: usize,
        gains: Gains,
    ) -> Result<Self, NoSuchNode> {
        let r = world
            .rods
            .get(rod)
            .filter(|r| node < r.positions().len())
            .ok_or(NoSuchNode { rod, node })?;
        let mut spring = ToolSpring::new(node, gains.k, gains.c);
        spring.kr = gains.kr;
        spring.target = r.positions()[node];
        let mut frames = Vec::new();
        r.frames_into(&mut frames);
        spring.target_rotation = frames[spring.segment.min(frames.len() - 1)];
        if let Some(su) = world.suturing.as_ref() {
            spring.target = su.needle.grip_position;
            spring.target_rotation = su.needle.rotation;
        }
        Ok(Tool::new(rod, spring))
    }

    /// Phase 1 of a step: take the device's target. The coupling takes its pose and velocity,
    /// the grasp button toggles on its press edge, and (suturing) the driver lets go of the
    /// needle or takes it again at the needle point nearest to the device.
    fn take_target(&mut self, world: &mut World, t: &ToolTarget) {
        let spring = &mut self.coupling;
        spring.target = t.position;
        spring.target_velocity = t.velocity;
        self.target_rotation = t.rotation;
        spring.target_rotation = t.rotation;
        let pressed = t.buttons & GRASP_BUTTON != 0 && self.last_buttons & GRASP_BUTTON == 0;
        self.last_buttons = t.buttons;
        if let Some(i) = self.instrument {
            // The hand holds its instrument: the coupling always acts; the button works the
            // jaws.
            let g = self.gains;
            (spring.k, spring.c, spring.kr) = (g.k, g.c, g.kr);
            if let Some(ins) = world
                .suturing
                .as_mut()
                .and_then(|su| su.instruments.as_mut())
                .and_then(|set| set.list.get_mut(i))
            {
                let cr = if ins.spec.mass > 0.0 {
                    g.c * ins.spec.inertia / ins.spec.mass
                } else {
                    0.0
                };
                let target = NeedleTarget {
                    position: t.position,
                    velocity: t.velocity,
                    rotation: t.rotation,
                    angular_velocity: Vec3::zeros(),
                    k: g.k,
                    c: g.c,
                    kr: g.kr,
                    cr,
                };
                ins.take_target(target, pressed);
            }
            return;
        }
        if pressed {
            self.grasped = !self.grasped;
        }
        let g = self.gains;
        (spring.k, spring.c, spring.kr) = if self.grasped {
            (g.k, g.c, g.kr)
        } else {
            (0.0, 0.0, 0.0)
        };
        if let Some(su) = world.suturing.as_mut() {
            su.set_held(world.time, self.grasped, &t.position);
        }
    }

    /// Feed the state a step carries to the next (a state digest, [`World::digest`]): the
    /// coupling's, whether it holds, the buttons of the last target (a press is an edge
    /// against them) and the newest target orientation. Every field is named here, so a new
    /// one must be placed on one side or the other.
    pub fn digest_into(&self, d: &mut crate::math::Digest) {
        let Tool {
            // What the session built it for: the held rod, the gains, the instrument.
            rod: _,
            gains: _,
            instrument: _,
            coupling,
            grasped,
            last_buttons,
            target_rotation,
        } = self;
        coupling.digest_into(d);
        d.bool(*grasped);
        d.u64(u64::from(*last_buttons));
        d.quat(target_rotation);
    }

    /// The tool's state in `world`: the held point (suturing: the needle's grip point and
    /// frame), its velocity, the coupling's force and target, and where the viewer draws it.
    pub fn state(&self, world: &World) -> ToolState {
        let s = &self.coupling;
        let instrument = self.instrument.and_then(|i| {
            world
                .suturing
                .as_ref()
                .and_then(|su| su.instruments.as_ref())
                .and_then(|set| set.list.get(i))
        });
        if let Some(ins) = instrument {
            return ToolState {
                rod: self.rod,
                node: s.node,
                position: ins.position,
                rotation: ins.rotation,
                velocity: ins.velocity,
                angular_velocity: ins.angular_velocity,
                force: ins.coupling_force,
                target: s.target,
                target_rotation: self.target_rotation,
                grasped: true,
                drawn_position: ins.position,
                drawn_target: s.target,
                instrument: Some(ins.state()),
            };
        }
        let (position, rotation, velocity, angular_velocity) = match world.suturing.as_ref() {
            Some(su) => {
                let n = &su.needle;
                (n.grip_position, n.rotation, n.velocity, n.angular_velocity)
            }
            None => {
                let rod = &world.rods[self.rod];
                match &rod.model {
                    RodModel::Cosserat { rod: c, .. } => {
                        let e = s.node.min(c.segments() - 1);
                        (c.x[s.node], c.q[e], c.v[s.node], c.q[e] * c.omega[e])
                    }
                    RodModel::Der { rod: c, .. } => {
                        // A tool on a DER rod is refused by the scene (its rotational coupling
                        // needs the Cosserat frames); follow the node's position and the
                        // segment's frame.
                        let e = s.node.min(c.segments() - 1);
                        let q = Quat::from_rotation_matrix(
                            &nalgebra::Rotation3::from_matrix_unchecked(c.frame(e)),
                        );
                        (
                            c.positions()[s.node],
                            q,
                            c.velocities()[s.node],
                            Vec3::zeros(),
                        )
                    }
                    RodModel::Strands(st) => {
                        let e = s.node.min(st.segments() - 1);
                        let m = nalgebra::Rotation3::from_matrix_unchecked(st.rotations()[e]);
                        // Quasi-static: the tool's velocity is the tip's over the last tick.
                        let v = s
                            .quasi_static
                            .as_ref()
                            .map_or(Vec3::zeros(), |_| s.target_velocity);
                        (
                            st.positions()[s.node],
                            Quat::from_rotation_matrix(&m),
                            v,
                            Vec3::zeros(),
                        )
                    }
                }
            }
        };
        // The viewer draws needles from their swage: the needle's, and the ghost's at the
        // device's pose.
        let (drawn_position, drawn_target) = match world.suturing.as_ref() {
            Some(su) => {
                let n = &su.needle;
                let grip = n.point(n.grip * n.shape.arc_angle) - n.swage();
                let local = n.rotation.inverse() * grip;
                (n.swage(), s.target - self.target_rotation * local)
            }
            None => (position, s.target),
        };
        ToolState {
            rod: self.rod,
            node: s.node,
            position,
            rotation,
            velocity,
            angular_velocity,
            force: s.force,
            target: s.target,
            target_rotation: self.target_rotation,
            grasped: self.grasped,
            drawn_position,
            drawn_target,
            instrument: None,
        }
    }
}

/// A tool after a step (world frame, SI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolState {
    /// The held rod and node.
    pub rod: usize,
    /// See `rod`.
    pub node: usize,
    /// The held point [m] and the frame of its segment (suturing: the needle's grip point
    /// and frame).
    pub position: Vec3,
    /// See `position`.
    pub rotation: Quat,
    /// Velocity [m/s] and angular velocity [rad/s] of the held point.
    pub velocity: Vec3,
    /// See `velocity`.
    pub angular_velocity: Vec3,
    /// Force of the coupling on the rod (or needle) [N]; the hand feels its opposite.
    pub force: Vec3,
    /// The device's target [m] and orientation as the step consumed them.
    pub target: Vec3,
    /// See `target`.
    pub target_rotation: Quat,
    /// Whether the tool holds (a released needle is not coupled).
    pub grasped: bool,
    /// Where the viewer draws the tool and its ghost [m] (needles from their swage).
    pub drawn_position: Vec3,
    /// See `drawn_position`.
    pub drawn_target: Vec3,
    /// The instrument the tool drives (its capsules, jaws and hold), if it drives one; its
    /// hinge and frame are `position` and `rotation`.
    pub instrument: Option<super::instrument::InstrumentState>,
}

/// What one step produced: what the recorder stores, the haptic proxy renders and the viewer
/// shows. Built by [`World::step_to`] after the step; allocation-free.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepOutputs {
    /// Time reached [s].
    pub time: f64,
    /// Solver iterations summed over the rods.
    pub iterations: usize,
    /// Whether every rod's solve converged.
    pub converged: bool,
    /// The first rod whose solve failed (its state rolled back to the step's start).
    pub error: Option<SimError>,
    /// Whether the first tool holds (true without a tool).
    pub grasped: bool,
    /// Each tool after the step (`tools[i]` for the i-th tool of the slice the step was
    /// given; None past its end).
    pub tools: [Option<ToolState>; MAX_TOOLS],
    /// The recorded tool point [m] (suturing: the needle's grip point), the needle's tip
    /// (else the tool point) and the coupling's force on the rod or needle [N].
    pub tool_position: Vec3,
    /// See `tool_position`.
    pub tip_position: Vec3,
    /// See `tool_position`.
    pub coupling_force: Vec3,
    /// Suturing: the tip's force on the skin [N], the largest suture tension [N], the
    /// incision's width at its centre [m] and the tissue's force on the needle and suture
    /// [N]; 0 otherwise.
    pub tip_force: f64,
    /// See `tip_force`.
    pub tension: f64,
    /// See `tip_force`.
    pub gap: f64,
    /// See `tip_force`.
    pub tissue_force: f64,
    /// Suturing events raised so far ([`World::events_since`] gives them).
    pub events: usize,
}

impl StepOutputs {
    /// The first tool after the step (the one a single-device session drives).
    pub fn tool(&self) -> Option<&ToolState> {
        self.tools[0].as_ref()
    }
}

/// One step's clock and what it solves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Substep {
    /// Step length [s].
    pub h: f64,
    /// Time at the step's end [s].
    pub t: f64,
    /// Whether the dynamic rods step (false: a frame of zero length).
    pub dynamic: bool,
    /// Whether the quasi-static rods (STRANDS, `quasi_static` dynamic rods) are solved for
    /// their equilibrium at `t` (every live step; the last step of an offline frame).
    pub settle: bool,
}

/// What one rod's solver did over the steps of an offline frame.
#[derive(Clone, Debug, Default, PartialEq)]
struct RodTally {
    last: SolverReport,
    strands: StrandsReport,
    steps: usize,
    iterations: usize,
    unconverged: usize,
}

impl World {
    /// One live step of `h` [s] (the physics loop and replay): every tool takes its device's
    /// target (`targets[i]` for `tools[i]`; None: no new sample, the coupling keeps its
    /// target), every rod steps. Allocation-free.
    pub fn step(
        &mut self,
        tools: &mut [Tool],
        targets: &[Option<ToolTarget>],
        h: f64,
    ) -> StepOutputs {
        let clock = Substep {
            h,
            t: self.time + h,
            dynamic: true,
            settle: true,
        };
        self.step_to(tools, targets, clock, None)
    }

    /// One step: the phase order of every physics step, live, replayed or offline.
    ///
    /// 1. device targets: each tool's coupling takes its device's target, the grasp button
    ///    toggles, the needle is let go or taken;
    /// 2. the sutured rod (suturing scenes): the instruments' jaws, grasps and free bodies, the
    ///    needle on its coupling (its holder's), the suture's tissue channels, the rod with its
    ///    potentials, the tissue, tension, breakage, events ([`suture_step`]);
    /// 3. every other rod with its potentials (obstacle contact, self-contact, a tool's
    ///    coupling): dynamic rods one implicit step, quasi-static rods their equilibrium;
    /// 4. guard: a rod whose solve failed keeps its state from the step's start (its solver
    ///    rolls back) and the first failure is reported; the others go on;
    /// 5. the clock, and the step's outputs.
    ///
    /// Allocation-free when `tally` is None (the live loop).
    fn step_to(
        &mut self,
        tools: &mut [Tool],
        targets: &[Option<ToolTarget>],
        clock: Substep,
        mut tally: Option<&mut [RodTally]>,
    ) -> StepOutputs {
        let Substep { h, t, .. } = clock;
        // 1. Device targets.
        for (tool, target) in tools.iter_mut().zip(targets) {
            if let Some(target) = target {
                tool.take_target(self, target);
            }
        }
        let mut out = StepOutputs {
            converged: true,
            ..Default::default()
        };
        // 2. The sutured rod: the first tool drives the needle, the needle the suture's end.
        let sutured = self.suturing.as_ref().map(|s| s.rod);
        if let Some(s) = self.suturing.as_mut().filter(|_| clock.dynamic) {
            let target = match tools.first_mut() {
                // Instruments: the needle's holder drives it (suture_step).
                _ if s.instruments.is_some() => None,
                Some(tool) => {
                    let spring = &tool.coupling;
                    let cr = if s.needle.mass > 0.0 {
                        spring.c * s.needle.inertia / s.needle.mass
                    } else {
                        0.0
                    };
                    Some(NeedleTarget {
                        position: spring.target,
                        velocity: spring.target_velocity,
                        rotation: spring.target_rotation,
                        angular_velocity: Vec3::zeros(),
                        k: spring.k,
                        c: spring.c,
                        kr: spring.kr,
                        cr,
                    })
                }
                None => Some(s.home),
            };
            let r = suture_step(
                s,
                &mut self.rods[s.rod],
                &self.obstacle_motions,
                h,
                t,
                target.as_ref(),
            );
            if let Some(tool) = tools.first_mut().filter(|tl| tl.instrument.is_none()) {
                tool.coupling.force = s.needle.coupling_force;
            }
            if let Some(set) = s.instruments.as_ref() {
                for tool in tools.iter_mut() {
                    if let Some(ins) = tool.instrument.and_then(|i| set.list.get(i)) {
                        tool.coupling.force = ins.coupling_force;
                    }
                }
            }
            match r {
                Ok(rep) => {
                    out.iterations += rep.iterations;
                    out.converged &= rep.converged;
                }
                Err(source) => {
                    out.error.get_or_insert(SimError {
                        rod: s.rod,
                        time: t,
                        source,
                    });
                }
            }
        }
        // 3. Every other rod. In a suturing scene the tool holds the needle, not a rod node.
        let free_tools: &mut [Tool] = if sutured.is_some() { &mut [] } else { tools };
        for (i, rod) in self.rods.iter_mut().enumerate() {
            if Some(i) == sutured {
                continue;
            }
            let tool = free_tools.iter_mut().find(|tl| tl.rod == i);
            let tl = tally.as_deref_mut().map(|tl| &mut tl[i]);
            let res = match &mut rod.model {
                RodModel::Strands(s) if clock.settle => {
                    // Quasi-static rods: the equilibrium at t, the held one with the tip force
                    // solved with the coupling (docs/models.md, "quasi-static coupling").
                    let prob = rod.drive.problem_at(t);
                    match tool {
                        Some(tool) => {
                            let spring = &mut tool.coupling;
                            let tip = s.positions()[s.positions().len() - 1];
                            let cp = spring.quasi_static.get_or_insert_with(|| {
                                Box::new(StrandsCoupling::new(0.0, 0.0, tip))
                            });
                            // Spring only: a damper c/h on a massless equilibrium is a far
                            // stiffer spring than k (1 kN/m for c = 1.3 N s/m at 1 ms) and
                            // makes the solve stiff for no benefit; the hand side keeps its
                            // damping.
                            (cp.k, cp.c) = (spring.k, 0.0);
                            let r = cp
                                .solve(s, &prob, &spring.target, &spring.target_velocity, h)
                                .map(|it| {
                                    out.iterations += it;
                                });
                            spring.force = cp.force;
                            r.map_err(ModelError::from)
                        }
                        None => {
                            let r = match rod.lagged.as_mut() {
                                Some(l) => {
                                    pose_obstacles(&mut l.contact, &self.obstacle_motions, t);
                                    l.solve(s, &prob).map(|r| r.last)
                                }
                                None => s.solve(&prob),
                            };
                            r.map(|r| {
                                if let Some(tl) = tl {
                                    tl.strands = r;
                                }
                            })
                            .map_err(ModelError::from)
                        }
                    }
                }
                RodModel::Strands(_) => Ok(()),
                model => match model.dynamic_mut() {
                    Some(parts) => step_dynamic(
                        parts,
                        tool,
                        (&self.obstacle_motions, &rod.drive),
                        clock,
                        (&mut out, tl),
                    ),
                    None => Ok(()),
                },
            };
            // 4. Guard: the failed rod's solver has rolled it back; report the first.
            if let Err(source) = res {
                out.error.get_or_insert(SimError {
                    rod: i,
                    time: t,
                    source,
                });
            }
        }
        // 5. The clock and the outputs.
        self.time = t;
        self.outputs(tools, out)
    }

    /// Fill the step's outputs from the world after the step.
    fn outputs(&self, tools: &[Tool], mut out: StepOutputs) -> StepOutputs {
        out.time = self.time;
        out.grasped = tools.first().is_none_or(|tl| tl.grasped);
        if let Some(tool) = tools.first() {
            out.coupling_force = tool.coupling.force;
            let x = self.rods[tool.rod].positions();
            out.tool_position = x[tool.coupling.node.min(x.len() - 1)];
            out.tip_position = out.tool_position;
        }
        for (slot, tool) in out.tools.iter_mut().zip(tools) {
            *slot = Some(tool.state(self));
        }
        if let Some(su) = self.suturing.as_ref() {
            let n = &su.needle;
            out.tool_position = n.grip_position;
            out.tip_position = n.tip();
            out.coupling_force = n.coupling_force;
            out.tip_force = su.tip_force;
            out.tension = su.tension;
            out.gap = su.tissue.gap_at(su.tissue.geometry.center.z);
            out.tissue_force =
                su.passages.iter().map(|p| p.force.norm()).sum::<f64>() + su.tip_force;
            out.events = su.events.len();
        }
        out
    }

    /// The frame a tool of `setup` holds at t = 0 (its device at identity orientation holds
    /// it so): an instrument's body frame, or the held rod segment's.
    pub fn tool_frame(&self, setup: &ToolSetup) -> Quat {
        let instrument = setup.instrument.and_then(|i| {
            self.suturing
                .as_ref()
                .and_then(|su| su.instruments.as_ref())
                .and_then(|set| set.list.get(i))
        });
        match instrument {
            Some(ins) => ins.rotation,
            None => self.held_frame(setup.rod, setup.node),
        }
    }

    /// The suturing events raised after the first `seen` (none outside suturing scenes).
    pub fn events_since(&self, seen: usize) -> &[super::suturing::Event] {
        match self.suturing.as_ref() {
            Some(su) => &su.events[seen.min(su.events.len())..],
            None => &[],
        }
    }

    /// Advance to time `t` [s] with no device: equal steps of at most the scene's `dt`
    /// through [`World::step_to`], the quasi-static rods solved at `t` (warm-started), then
    /// (suturing) the knot check. Reports what each rod's solver did over the frame.
    pub fn advance_to(&mut self, t: f64) -> Result<StepReport, SimError> {
        let t0 = self.time;
        let span = t - t0;
        // Steps of at most dt; a world of STRANDS rods only is solved once, at t.
        let steps = match self.dt() {
            Some(dt) if span > 0.0 => (span / dt - 1e-9).ceil().max(1.0) as usize,
            Some(_) => 0,
            None => usize::from(span > 0.0),
        };
        let mut tally = vec![RodTally::default(); self.rods.len()];
        let (mut iterations, mut unconverged) = (0, 0);
        let suturing = self.suturing.is_some();
        for k in 1..=steps.max(1) {
            let h = span / steps.max(1) as f64;
            // A suturing world keeps the live loop's clock (the step ends at time + h).
            let tk = if suturing {
                self.time + h
            } else {
                t0 + span * k as f64 / steps as f64
            };
            let clock = Substep {
                h,
                t: if steps == 0 { t } else { tk },
                dynamic: steps > 0,
                settle: k == steps.max(1),
            };
            let out = self.step_to(&mut [], &[], clock, Some(&mut tally));
            if let Some(e) = out.error {
                return Err(e);
            }
            iterations += out.iterations;
            unconverged += usize::from(!out.converged);
            if steps > 0 {
                self.time = t0 + span * k as f64 / steps as f64;
            }
        }
        self.time = t;
        if let Some(s) = self.suturing.as_mut() {
            s.check_knot(t, self.rods[s.rod].positions());
        }
        let rods = self
            .rods
            .iter()
            .zip(tally)
            .map(|(r, tl)| match &r.model {
                RodModel::Strands(_) => RodReport::Strands(tl.strands),
                RodModel::Cosserat {
                    contact,
                    self_contact,
                    ..
                }
                | RodModel::Der {
                    contact,
                    self_contact,
                    ..
                } => {
                    let (contact, self_contact): (Option<ContactStats>, Option<SelfContactStats>) =
                        (contact_stats(contact), self_contact_stats(self_contact));
                    if suturing {
                        // The suturing step reports its rods together.
                        RodReport::Cosserat {
                            last: SolverReport::default(),
                            steps,
                            iterations,
                            unconverged,
                            contact,
                            self_contact,
                        }
                    } else {
                        RodReport::Cosserat {
                            last: tl.last,
                            steps: tl.steps,
                            iterations: tl.iterations,
                            unconverged: tl.unconverged,
                            contact,
                            self_contact,
                        }
                    }
                }
            })
            .collect();
        Ok(StepReport { time: t, rods })
    }
}

/// Phase 3 for one dynamic rod (Cosserat or DER): one implicit step to `clock.t`, or its
/// equilibrium at `clock.t` when quasi-static, with its contact potentials and a tool's
/// coupling. Tallies iterations into `out` (and the offline frame's tally).
fn step_dynamic(
    parts: DynamicParts<'_>,
    tool: Option<&mut Tool>,
    (motions, drive): (&[super::EndMotion], &super::RodDrive),
    clock: Substep,
    (out, tally): (&mut StepOutputs, Option<&mut RodTally>),
) -> Result<(), ModelError> {
    let Substep { h, t, .. } = clock;
    let DynamicParts {
        rod: c,
        quasi_static,
        contact,
        self_contact,
    } = parts;
    if quasi_static && !clock.settle || !quasi_static && !clock.dynamic {
        return Ok(());
    }
    pose_obstacles(contact, motions, t);
    let [mut k0, mut k1] = contact_potentials(contact, self_contact);
    let rep = match tool {
        _ if quasi_static => c.equilibrate_with(&drive.drive_at(t), &mut [&mut k0, &mut k1]),
        Some(tool) => {
            let mut coupling: Option<&mut dyn NodePotential> = Some(&mut tool.coupling);
            c.step_with(
                h,
                &drive.drive_at(t),
                &mut [&mut k0, &mut k1, &mut coupling],
            )
        }
        None => c.step_with(h, &drive.drive_at(t), &mut [&mut k0, &mut k1]),
    }?;
    out.iterations += rep.iterations;
    out.converged &= rep.converged;
    if let Some(tl) = tally {
        tl.last = rep;
        tl.steps += 1;
        tl.iterations += rep.iterations;
        tl.unconverged += usize::from(!rep.converged);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state digest sees the smallest change of every piece of state a tool carries from
    /// step to step (the coupling's own pieces: sim::tool's test).
    #[test]
    fn digest_sees_every_piece_of_carried_state() {
        use crate::math::digest_test::{assert_each_changes, ulp_q, ulp3};
        let mut tool = Tool::new(0, ToolSpring::new(5, 200.0, 1.5));
        tool.last_buttons = GRASP_BUTTON;
        tool.target_rotation = Quat::from_euler_angles(0.1, 0.2, 0.3);
        let digest = |t: &Tool| {
            let mut d = crate::math::Digest::default();
            t.digest_into(&mut d);
            d.0
        };
        assert_each_changes(
            &tool,
            digest,
            &[
                ("coupling", &|t| ulp3(&mut t.coupling.target)),
                ("grasped", &|t| t.grasped = false),
                ("last_buttons", &|t| t.last_buttons = 0),
                ("target_rotation", &|t| ulp_q(&mut t.target_rotation)),
            ],
        );
    }
}
