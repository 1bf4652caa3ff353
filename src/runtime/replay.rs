//! Replay in the viewer: a player thread re-simulates a recording from its recorded targets,
//! every tool its own (the tools and step the live physics used, sim::Tool and
//! sim::World::step) at a chosen speed and publishes snapshots; the
//! viewer sends it pause, speed and seek commands through a ring. Seeking forward steps on
//! without pacing; seeking back restarts from the scene's initial world and steps to the
//! time asked for (a replay is deterministic, so the state there is the recorded one: the
//! player checks each recorded digest it passes).

use crate::session::format::Recording;
use crate::session::replay::{ReplayError, tools_for};
use crate::sim::snapshot::SnapshotTx;
use crate::sim::{DigestVersion, Tool, World};
use ringbuf::HeapCons;
use ringbuf::traits::Consumer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the viewer asks of the player.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplayCommand {
    /// Pause or play.
    SetPaused(bool),
    /// Playback speed (simulated seconds per wall second; clamped to [1/16, 16]).
    SetSpeed(f64),
    /// Jump to this simulated time [s] (clamped to the recording).
    Seek(f64),
}

/// The player: a recording, the world at its current step, and where it is.
pub struct Player {
    rec: Arc<Recording>,
    initial: World,
    /// The world at step `index` (0: the initial world).
    pub world: World,
    /// The tools (couplings and grasp states) at step `index`, in the order the world steps
    /// them (the recording header's tools).
    pub tools: Vec<Tool>,
    initial_tools: Vec<Tool>,
    /// Steps taken (an index into the recording's step records).
    pub index: usize,
    /// Paused?
    pub paused: bool,
    /// Playback speed.
    pub speed: f64,
    /// Digests checked on the way, and the first step whose digest differed (None: all
    /// matched).
    pub digests_checked: u64,
    /// See `digests_checked`.
    pub diverged_at: Option<u64>,
    /// Simulated time owed to playback [s] (speed × wall time not yet stepped).
    owed: f64,
    /// The state digest the recording carries.
    digest: DigestVersion,
}

impl Player {
    /// A player at the start of `rec`, over its scene's initial `world`.
    pub fn new(rec: Arc<Recording>, world: World) -> Result<Self, ReplayError> {
        let tools = tools_for(&rec, &world)?;
        let digest = rec
            .header
            .digest()
            .ok_or(ReplayError::DigestVersion(rec.header.digest_version))?;
        Ok(Player {
            digest,
            initial: world.clone(),
            world,
            initial_tools: tools.clone(),
            tools,
            rec,
            index: 0,
            paused: false,
            speed: 1.0,
            digests_checked: 0,
            diverged_at: None,
            owed: 0.0,
        })
    }

    /// The state digest of the world and tools now, of the version the recording carries
    /// (what its digest records at this step hold).
    pub fn digest(&self) -> u64 {
        self.world.digest_as(&self.tools, self.digest)
    }

    /// The recording's length [s].
    pub fn duration(&self) -> f64 {
        self.rec.steps.len() as f64 * self.rec.header.dt
    }

    /// The current simulated time [s].
    pub fn time(&self) -> f64 {
        self.world.time
    }

    /// Take one recorded step (false at the end).
    pub fn step(&mut self) -> bool {
        let Some(s) = self.rec.steps.get(self.index) else {
            return false;
        };
        let targets = s.targets();
        let n = self.tools.len();
        let _ = self
            .world
            .step(&mut self.tools, &targets[..n], self.rec.header.dt);
        self.index += 1;
        let step = self.index as u64;
        if let Ok(k) = self.rec.digests.binary_search_by_key(&step, |d| d.step) {
            self.digests_checked += 1;
            if self.digest() != self.rec.digests[k].digest && self.diverged_at.is_none() {
                self.diverged_at = Some(step);
            }
        }
        true
    }

    /// Go to simulated time `t` [s] (forward: step on; back: restart and step).
    pub fn seek(&mut self, t: f64) {
        let dt = self.rec.header.dt;
        let target = ((t.max(0.0) / dt).round() as usize).min(self.rec.steps.len());
        if target < self.index {
            self.world = self.initial.clone();
            self.tools.clone_from(&self.initial_tools);
            self.index = 0;
        }
        while self.index < target && self.step() {}
        self.owed = 0.0;
    }

    /// Apply a command.
    pub fn command(&mut self, c: ReplayCommand) {
        match c {
            ReplayCommand::SetPaused(p) => self.paused = p,
            ReplayCommand::SetSpeed(s) => self.speed = s.clamp(1.0 / 16.0, 16.0),
            ReplayCommand::Seek(t) => self.seek(t),
        }
    }

    /// Play `wall` seconds of wall time at the current speed (nothing while paused): the
    /// steps whose time has come. Returns the steps taken.
    pub fn advance(&mut self, wall: f64) -> usize {
        if self.paused {
            return 0;
        }
        let dt = self.rec.header.dt;
        self.owed += wall * self.speed;
        let mut n = 0;
        while self.owed >= dt {
            if !self.step() {
                self.owed = 0.0;
                break;
            }
            self.owed -= dt;
            n += 1;
        }
        n
    }
}

/// Run a player on its own thread: apply the viewer's commands, play in real time × speed,
/// and publish a snapshot about every 16 ms of wall time, until `stop` is set.
pub fn spawn(
    mut player: Player,
    mut snapshots: SnapshotTx,
    mut commands: HeapCons<ReplayCommand>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Player> {
    std::thread::spawn(move || {
        let mut last = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            while let Some(c) = commands.try_pop() {
                player.command(c);
            }
            let now = Instant::now();
            // A slow frame is not made up beyond 0.1 s (the replay slows down instead).
            player.advance((now - last).as_secs_f64().min(0.1));
            last = now;
            snapshots.publish(|snap| {
                snap.capture(&player.world);
                snap.step = player.index as u64;
                // The knot the live analysis had reported by this step, as recorded.
                snap.knot = crate::session::knots::status_at(&player.rec.knots, snap.step);
                for (i, dst) in snap.tools.iter_mut().enumerate() {
                    *dst = player.tools.get(i).map(|t| {
                        let hand = player.rec.header.tools[i].hand;
                        super::physics::tool_snapshot(&t.state(&player.world), hand)
                    });
                }
            });
            std::thread::sleep(Duration::from_millis(16));
        }
        player
    })
}
