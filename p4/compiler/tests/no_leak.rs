//! Compiling a program keeps nothing once its result is dropped (#12: the
//! program's description is owned, not leaked to get `&'static` data), so a
//! process that compiles many programs (a build script, a language server,
//! the STF harness) does not grow with each one.
//!
//! A counting global allocator measures the bytes live after each
//! compilation; it is this test binary's own, so this file holds one test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

mod common;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counter is
// only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System.dealloc`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract is `System.realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Compiles `path` once and drops everything it produced.
fn compile_once(path: &std::path::Path) {
    let (res, _sources) =
        p4_compiler::compile_with_sources(path, &p4_compiler::CompileOptions::default());
    let out = res.expect("the program compiles");
    assert!(out.rust.contains("PROGRAM_INFO"));
}

#[test]
fn compiling_a_program_many_times_leaks_nothing() {
    // Tables with entries, action profiles, counters, meters, registers,
    // digests and value sets: every kind of P4Info object.
    let programs = ["control_features", "block_features", "parser_features"];
    let paths: Vec<_> = programs
        .iter()
        .map(|p| common::dir().join("in").join(format!("{p}.p4")))
        .collect();
    // The first rounds may fill caches that live for the process.
    for _ in 0..2 {
        paths.iter().for_each(|p| compile_once(p));
    }
    let before = LIVE.load(Ordering::Relaxed);
    const ROUNDS: isize = 10;
    for _ in 0..ROUNDS {
        paths.iter().for_each(|p| compile_once(p));
    }
    let grown = LIVE.load(Ordering::Relaxed) - before;
    // A leak of the P4Info names and slices alone is kilobytes a round.
    assert!(
        grown < 1024,
        "{grown} bytes stayed allocated after {ROUNDS} rounds of compiling {programs:?}"
    );
}
