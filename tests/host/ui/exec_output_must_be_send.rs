// Lesson: what a task returns travels too.
// The output of a spawned future is handed to its `JoinHandle`, which may be
// awaited by a task on another worker thread: so `spawn` wants
// `F::Output: Send` as well, not only a `Send` future. This future is `Send`
// (the `Rc` is created at the very end, never held across an `.await`), but
// its output, an `Rc`, is not: two threads could update its reference count
// at once. Fix: return an `Arc` (or the plain value).
#![allow(dead_code, unused)]

use std::future::Future;
use std::rc::Rc;

// A host stand-in for `Executor::spawn` in solutions/23-executor/executor.rs
// (the kernel crate does not build on the host), with the same bounds on `F`:
// exec_spawn_bounds.rs checks that executor.rs still has them.
fn spawn<F>(future: F)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
}

async fn tick() {}

fn main() {
    spawn(async {
        tick().await;
        Rc::new(42)
    });
}
