//! A global allocator that counts, for the tests that measure what the engine allocates: the
//! bytes this thread holds now ([`live`]) and the bytes it has asked for so far ([`allocated`],
//! a reallocation counted at its new size). Every call is forwarded to the system allocator
//! unchanged; the counters are const-initialised thread-local `Cell`s (no allocation, no lock),
//! so a test reads its own thread's figures whatever other tests run beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters are
// const-initialised thread-local `Cell`s (no allocation, no lock).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|c| c.set(c.get() + layout.size() as i64));
        let _ = ALLOCATED.try_with(|c| c.set(c.get() + layout.size() as u64));
        // SAFETY: same layout as asked.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|c| c.set(c.get() - layout.size() as i64));
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = LIVE.try_with(|c| c.set(c.get() + new_size as i64 - layout.size() as i64));
        let _ = ALLOCATED.try_with(|c| c.set(c.get() + new_size as u64));
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap bytes this thread holds now (allocated minus freed since it started).
#[allow(dead_code)]
pub fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// Heap bytes this thread has asked for since it started.
#[allow(dead_code)]
pub fn allocated() -> u64 {
    ALLOCATED.with(Cell::get)
}
