// Lesson: a task must not hold a lock guard across an `.await`.
// `spawn` wants a `Send` future: at each `.await` the task may be parked and
// later polled by another worker thread, and everything alive at that point
// (here `count`, a `MutexGuard`) is stored in the future and moves with it.
// A guard must be unlocked by the thread that locked it, so it is not
// `Send` (the kernel's lock guards are not either), and the future is not
// `Send`. Holding a lock while waiting would also block every other task
// that wants it. Fix: keep the guard in a block that ends before the
// `.await` (or drop it explicitly). An `Rc` alive across an `.await` fails
// the same way.
#![allow(dead_code, unused)]

use std::future::Future;
use std::sync::{Arc, Mutex};

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

async fn count_twice(shared: Arc<Mutex<u32>>) {
    let mut count = shared.lock().unwrap();
    *count += 1;
    tick().await;
    *count += 1;
}

fn main() {
    let shared = Arc::new(Mutex::new(0u32));
    spawn(count_twice(shared));
}
