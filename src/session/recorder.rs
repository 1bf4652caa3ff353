//! The recorder: a thread that takes records from the real-time loops through lock-free rings
//! and writes them as chunks (session::format), flushing to the operating system at least every
//! [`FLUSH_EVERY`], so a crash of the process loses at most that much. The loops' side,
//! [`RecorderTx`], never blocks, allocates or does I/O: a record that finds its ring full is
//! counted and dropped. A disabled recorder (`RecorderTx::disabled`) is a valid no-op. The live
//! knot analysis (not a real-time loop) sends its records through a crossbeam channel
//! ([`Recorder::take_knots`]).

use super::format::{
    DigestRecord, End, EventRecord, Header, KnotRecord, SampleRecord, StepRecord, ToolStep, Writer,
};
use crate::sim::{MAX_TOOLS, StepOutputs, ToolTarget};
use crossbeam::channel::{Receiver, Sender};
use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest the recorder holds records before writing them.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// A state digest every this many physics steps (0.1 s at 1 kHz).
pub const DIGEST_EVERY: u64 = 100;

/// What the physics loop records.
// Records travel by value through a preallocated ring: boxing the step (the large variant,
// with every tool's target) would allocate in the real-time loop.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum PhysicsRecord {
    /// A step.
    Step(StepRecord),
    /// An event the step raised.
    Event(EventRecord),
    /// A state digest.
    Digest(DigestRecord),
}

/// The step record of the step just taken: the targets its tools consumed (`targets[i]` by
/// tool `i`, the slice the step was given) and what it produced (the step's [`StepOutputs`]).
/// The live physics loop and replay both build it here, so they compare like with like.
pub fn capture(step: u64, targets: &[Option<ToolTarget>], out: &StepOutputs) -> StepRecord {
    let mut more_tools = [None; MAX_TOOLS - 1];
    for (i, m) in more_tools.iter_mut().enumerate() {
        *m = out.tools[i + 1].map(|ts| ToolStep {
            target: targets.get(i + 1).copied().flatten(),
            position: ts.position,
            coupling_force: ts.force,
            grasped: ts.grasped,
        });
    }
    StepRecord {
        step,
        time: out.time,
        target: targets.first().copied().flatten(),
        more_tools,
        grasped: out.grasped,
        converged: out.error.is_none() && out.converged,
        failed: out.error.is_some(),
        tool_position: out.tool_position,
        tip_position: out.tip_position,
        coupling_force: out.coupling_force,
        tip_force: out.tip_force,
        tension: out.tension,
        gap: out.gap,
        tissue_force: out.tissue_force,
    }
}

/// The real-time loops' end of the recorder. Cheap to move into a loop; never blocks.
pub struct RecorderTx<T> {
    tx: Option<HeapProd<T>>,
    dropped: Arc<AtomicU64>,
}

impl<T> RecorderTx<T> {
    /// A recorder end that records nothing.
    pub fn disabled() -> Self {
        RecorderTx {
            tx: None,
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }
    /// Whether records go anywhere.
    pub fn enabled(&self) -> bool {
        self.tx.is_some()
    }
    /// Hand a record to the recorder (dropped and counted if its ring is full).
    #[inline]
    pub fn push(&mut self, r: T) {
        if let Some(tx) = self.tx.as_mut()
            && tx.try_push(r).is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The rings' ends for the loops (the physics loop's, and one per haptic loop), and the
/// recorder thread's handle.
pub struct Recorder {
    /// For the physics loop.
    pub physics: RecorderTx<PhysicsRecord>,
    /// For the haptic loops: `haptic[i]` for the device of the header's `tools[i]`.
    pub haptic: Vec<RecorderTx<SampleRecord>>,
    /// For the live knot analysis (None: disabled, or taken).
    knots: Option<Sender<KnotRecord>>,
    thread: Option<(std::thread::JoinHandle<RecorderReport>, Arc<EndSlot>)>,
}

/// What the recorder did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecorderReport {
    /// Records written: steps, samples, events, digests.
    pub steps: u64,
    /// See `steps`.
    pub samples: u64,
    /// See `steps`.
    pub events: u64,
    /// See `steps`.
    pub digests: u64,
    /// Knot records (the live analysis') written.
    pub knots: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Records the loops dropped because a ring was full.
    pub dropped: u64,
    /// The first write error, if any (records after it are counted, not written).
    pub error: Option<String>,
}

/// The end record's figures, handed over when the loops have stopped.
#[derive(Default)]
struct EndSlot {
    set: AtomicBool,
    end: std::sync::Mutex<Option<End>>,
}

impl Recorder {
    /// No recording.
    pub fn disabled() -> Self {
        Recorder {
            physics: RecorderTx::disabled(),
            haptic: Vec::new(),
            knots: None,
            thread: None,
        }
    }

    /// Record to `out` (a file, or any writer): writes the preamble and header now (an error
    /// here is returned), then starts the recorder thread, with one sample ring per tool of the
    /// header (at least one).
    pub fn start(mut out: Box<dyn Write + Send>, header: &Header) -> std::io::Result<Self> {
        let mut w = Writer::default();
        w.preamble();
        w.header(header);
        out.write_all(&w.buf)?;
        out.flush()?;
        // A second of records at 1 kHz (a step, an event or so, a digest every 100 steps).
        let (ptx, prx) = HeapRb::<PhysicsRecord>::new(4096).split();
        let (htx, hrx): (Vec<_>, Vec<_>) = (0..header.tools.len().max(1))
            .map(|_| HeapRb::<SampleRecord>::new(4096).split())
            .unzip();
        // The knot analysis changes the knot a few times a session: unbounded, it never blocks.
        let (ktx, krx) = crossbeam::channel::unbounded::<KnotRecord>();
        let dropped = Arc::new(AtomicU64::new(0));
        let slot = Arc::new(EndSlot::default());
        let thread = {
            let (dropped, slot) = (dropped.clone(), slot.clone());
            let bytes = w.buf.len() as u64;
            let rx = Rings {
                physics: prx,
                haptic: hrx,
                knots: krx,
            };
            std::thread::Builder::new()
                .name("recorder".into())
                .spawn(move || writer_loop(out, rx, dropped, slot, bytes))?
        };
        Ok(Recorder {
            physics: RecorderTx {
                tx: Some(ptx),
                dropped: dropped.clone(),
            },
            haptic: htx
                .into_iter()
                .map(|tx| RecorderTx {
                    tx: Some(tx),
                    dropped: dropped.clone(),
                })
                .collect(),
            knots: Some(ktx),
            thread: Some((thread, slot)),
        })
    }

    /// Take the live knot analysis' end (None: a disabled recorder, or already taken). Its
    /// records are written until [`Recorder::finish`]; drop it before then.
    pub fn take_knots(&mut self) -> Option<Sender<KnotRecord>> {
        self.knots.take()
    }

    /// Take the loops' ends (the recorder keeps running until [`Recorder::finish`]): the
    /// physics loop's and `n` haptic loops' (a disabled recorder's, or past its rings, are
    /// disabled).
    pub fn take_ends(
        &mut self,
        n: usize,
    ) -> (RecorderTx<PhysicsRecord>, Vec<RecorderTx<SampleRecord>>) {
        let mut haptic = std::mem::take(&mut self.haptic);
        haptic.truncate(n);
        haptic.resize_with(n, RecorderTx::disabled);
        (
            std::mem::replace(&mut self.physics, RecorderTx::disabled()),
            haptic,
        )
    }

    /// After the loops have stopped: write what is left and the end record, and stop the
    /// thread. A disabled recorder returns a default report.
    pub fn finish(self, end: End) -> RecorderReport {
        let Some((thread, slot)) = self.thread else {
            return RecorderReport::default();
        };
        *slot.end.lock().unwrap_or_else(|e| e.into_inner()) = Some(end);
        slot.set.store(true, Ordering::Release);
        thread.join().unwrap_or_else(|_| RecorderReport {
            error: Some("the recorder thread panicked".into()),
            ..Default::default()
        })
    }
}

/// The recorder thread's inputs.
struct Rings {
    physics: HeapCons<PhysicsRecord>,
    haptic: Vec<HeapCons<SampleRecord>>,
    knots: Receiver<KnotRecord>,
}

/// The recorder thread: drain, batch, write a chunk of each kind and flush every FLUSH_EVERY.
fn writer_loop(
    mut out: Box<dyn Write + Send>,
    rings: Rings,
    dropped: Arc<AtomicU64>,
    slot: Arc<EndSlot>,
    bytes: u64,
) -> RecorderReport {
    let Rings {
        physics: mut prx,
        haptic: mut hrx,
        knots: krx,
    } = rings;
    let mut rep = RecorderReport {
        bytes,
        ..Default::default()
    };
    let (mut steps, mut samples, mut events, mut digests) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut knots = Vec::new();
    let mut w = Writer::default();
    let mut last = Instant::now();
    loop {
        let ending = slot.set.load(Ordering::Acquire);
        while let Some(r) = prx.try_pop() {
            match r {
                PhysicsRecord::Step(s) => steps.push(s),
                PhysicsRecord::Event(e) => events.push(e),
                PhysicsRecord::Digest(d) => digests.push(d),
            }
        }
        for rx in hrx.iter_mut() {
            while let Some(s) = rx.try_pop() {
                samples.push(s);
            }
        }
        knots.extend(krx.try_iter());
        if ending || last.elapsed() >= FLUSH_EVERY {
            last = Instant::now();
            w.buf.clear();
            if !steps.is_empty() {
                w.steps(&steps);
            }
            if !samples.is_empty() {
                w.samples(&samples);
            }
            if !events.is_empty() {
                w.events(&events);
            }
            if !digests.is_empty() {
                w.digests(&digests);
            }
            if !knots.is_empty() {
                w.knots(&knots);
            }
            let mut end = None;
            if ending {
                let mut e = slot
                    .end
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_default();
                e.dropped = dropped.load(Ordering::Relaxed);
                if let Some(err) = &rep.error {
                    e.note = format!("{}; write error: {err}", e.note);
                }
                w.end(&e);
                end = Some(e);
            }
            if rep.error.is_none() && !w.buf.is_empty() {
                match out.write_all(&w.buf).and_then(|_| out.flush()) {
                    Ok(()) => {
                        rep.bytes += w.buf.len() as u64;
                        rep.steps += steps.len() as u64;
                        rep.samples += samples.len() as u64;
                        rep.events += events.len() as u64;
                        rep.digests += digests.len() as u64;
                        rep.knots += knots.len() as u64;
                    }
                    Err(e) => rep.error = Some(e.to_string()),
                }
            }
            steps.clear();
            samples.clear();
            events.clear();
            digests.clear();
            knots.clear();
            if end.is_some() {
                rep.dropped = dropped.load(Ordering::Relaxed);
                return rep;
            }
        }
        // Wake rarely: on a 2-core machine each wake-up preempts a real-time loop. The rings
        // hold 4 s of records; the flush interval bounds what a crash loses.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A default name for an unnamed session: `sessions/<scene stem>-<unix seconds>.surec`.
pub fn default_path(scene: &str, unix: f64) -> std::path::PathBuf {
    let stem = std::path::Path::new(scene)
        .file_stem()
        .map_or("session".into(), |s| s.to_string_lossy().into_owned());
    std::path::PathBuf::from("sessions").join(format!("{stem}-{}.surec", unix as u64))
}
