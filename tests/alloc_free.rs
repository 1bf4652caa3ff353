//! The physics step allocates nothing once warm (ARCHITECTURE.md: real-time loops never
//! allocate): counted by a global allocator on the stepping thread. Not yet where strands
//! press on each other: the Woodbury correction's dense factors are nalgebra matrices made
//! anew each iteration (65 allocations a step on the overhand knot, 2026-11-28); an
//! allocation-free rewrite rounds differently, and the scripted square tie, a knife edge
//! (der-imc.md §F6), came undone with it (ARCHITECTURE.md, "Threads").

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
