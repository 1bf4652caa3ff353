//! The physics step allocates nothing once warm (ARCHITECTURE.md: real-time loops never
//! allocate): counted by a global allocator on the stepping thread. Where strands press on
//! each other, one allocation a Newton iteration is left: the packing buffer of
//! `matrixmultiply::dgemm`, which nalgebra's product of the Woodbury correction's negative
//! block runs (65 allocations a step on the overhand knot before 2026-11-29; an own product
//! would round differently, and the scripted square tie, a knife edge, der-imc.md §F6,
//! comes undone under such changes: ARCHITECTURE.md, "Threads").

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    COUNT.with(|c| c.get())
}

/// The committed recording (the two-bite stitch of scenes/knot_tying.toml: the needle, the
/// tissue, the suture in its channels and the tool) stepped again with its recorded targets:
/// after the first second no step allocates but where a buffer grows past its largest size
/// so far (the broad phase's, once, when a step's motion sweeps more pairs than any before).
#[test]
fn a_recorded_suturing_session_steps_without_allocating() {
    let bytes = std::fs::read("tests/fixtures/replay/knot_tying_stitch.surec").unwrap();
    let rec = suture::session::format::decode(&bytes).unwrap();
    let sc = suture::scene::parse(
        &rec.header.scene_path,
        &rec.header.scene_text,
        Default::default(),
    )
    .unwrap();
    let mut world = sc.world.clone();
    let mut tools = suture::session::replay::tools_for(&rec, &world).unwrap();
    let n = tools.len();
    let h = rec.header.dt;
    let mut per_step = Vec::with_capacity(rec.steps.len());
    for s in &rec.steps {
        let targets = s.targets();
        let count = allocations(|| {
            world.step(&mut tools, &targets[..n], h);
        });
        per_step.push(count);
    }
    let late = &per_step[1000..];
    let steps_with = late.iter().filter(|&&k| k > 0).count();
    println!(
        "{} steps after the first second: {} allocations in {steps_with} of them",
        late.len(),
        late.iter().sum::<usize>()
    );
    assert!(steps_with <= 1, "{steps_with}");
}

/// The overhand knot tightening (scenes/knot_overhand.toml: 301 nodes, self-contact with the
/// exact pair Hessians: about a hundred Woodbury terms in every Newton iteration, most with
/// negative weights, docs/performance.md). Once the knot's pairs are in contact, a step
/// allocates nothing of its own: the Woodbury correction's buffers keep their capacity. What
/// is left is nalgebra's product `WᵀW` of the capacitance's negative block, which runs
/// `matrixmultiply::dgemm`, and that allocates its packing buffer once a call: at most once a
/// factorisation, so at most once a Newton iteration (each iteration takes one factor).
/// Beyond those, a step allocates only where a buffer grows past its largest size so far as
/// the knot's pairs multiply (measured: twice in 1000 steps, one allocation each).
/// Replacing that product would change its rounding (matrixmultiply's kernel, FMA where the
/// CPU has it), so it stays until a change of rounding is adopted (der-imc.md §F6).
#[test]
fn the_overhand_knot_tightens_allocating_only_matrixmultiplys_packing() {
    let path = "scenes/knot_overhand.toml";
    let text = std::fs::read_to_string(path).unwrap();
    let sc = suture::scene::parse(path, &text, Default::default()).unwrap();
    let mut world = sc.world;
    let h = world.dt().expect("the overhand is stepped dynamically");
    let (warm, steps) = (500, 1500);
    let (mut allocated, mut iterations, mut over) = (0usize, 0usize, 0usize);
    for k in 0..steps {
        let mut its = 0;
        let count = allocations(|| {
            let out = world.step(&mut [], &[], h);
            assert!(out.error.is_none(), "{:?}", out.error);
            its = out.iterations;
        });
        if k >= warm {
            allocated += count;
            iterations += its;
            // Beyond one a factorisation: a buffer grown past its largest size so far.
            over += count.saturating_sub(its);
        }
    }
    println!(
        "{} steps after the first 0.5 s: {allocated} allocations, {iterations} Newton \
         iterations, {over} allocations beyond one an iteration",
        steps - warm
    );
    assert!(
        iterations > steps - warm,
        "the knot must be solving: {iterations}"
    );
    assert!(over <= 4, "{over}");
}
