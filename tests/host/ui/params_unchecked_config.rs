// Lesson: a value that might be invalid cannot be used until the error is
// handled. `Config::new` returns `Result<Config, ParamError>`, not a
// `Config`: there is no `depth()` to call until a `match`, `?` or `map_err`
// has dealt with the `Err` case. (The compiler's hint, `.expect(..)`, would
// compile, but in a kernel module it turns a bad `insmod` parameter into a
// panic: rparams uses `map_err(..)?` instead.)
#![allow(dead_code, unused)]

#[path = "../../../solutions/02-params/config.rs"]
mod config;

fn main() {
    let config = config::Config::new(100, 4);
    let ring_index_mask = config.depth() - 1;
}
