// Lesson: a spawned task cannot borrow its caller's locals.
// `spawn` returns at once, and the task runs later, on a worker, for as long
// as it likes: the caller's stack frame (here `buf`) may be gone by then.
// So `spawn` wants a `'static` future, one that owns everything it uses,
// and `checksum(&buf)` is a future that borrows `buf`. Fix: move the buffer
// into the task (`async move { checksum(&buf).await }`), or share it through
// an `Arc`.
#![allow(dead_code, unused)]

use std::future::Future;

// A host stand-in for `Executor::spawn` in solutions/23-executor/executor.rs
// (the kernel crate does not build on the host), with the same bounds on `F`:
// exec_spawn_bounds.rs checks that executor.rs still has them.
fn spawn<F>(future: F)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
}

async fn checksum(data: &[u8]) -> u32 {
    data.iter().map(|&b| u32::from(b)).sum()
}

fn main() {
    let buf = vec![0u8; 4096];
    spawn(checksum(&buf));
}
