// Lesson: `?` alone does not turn a `ParamError` into the kernel's error
// code. `config.rs` uses only `core`, so it knows nothing of the kernel's
// `Error`, and there is no `From<ParamError>` for it: the module decides
// which errno a refused parameter becomes (and logs why) with `map_err`.
// `Error` and `EINVAL` below stand in for `kernel::error::Error` and
// `kernel::error::code::EINVAL`, which the host cannot link against.
#![allow(dead_code, unused)]

#[path = "../../../solutions/02-params/config.rs"]
mod config;

/// Stand-in for `kernel::error::Error`: a negative errno.
#[derive(Debug)]
struct Error(i32);
const EINVAL: Error = Error(-22);

fn init(depth: u32, queues: u32) -> Result<config::Config, Error> {
    let config = config::Config::new(depth, queues)?;
    Ok(config)
}

fn main() {}
