// Lesson: a `Config` can only come from `Config::new`. Its fields are
// private, so code outside `config.rs` (here `main`, in rparams that is
// `init`) can read them through `depth()` and `queues()` but cannot build
// a `Config` that skipped the checks, such as a depth of 100, which the
// ring arithmetic (`index & (depth - 1)`) would get wrong.
#![allow(dead_code, unused)]

#[path = "../../../solutions/02-params/config.rs"]
mod config;

fn main() {
    let config = config::Config { depth: 100, queues: 4 };
    let ring_index_mask = config.depth() - 1;
}
