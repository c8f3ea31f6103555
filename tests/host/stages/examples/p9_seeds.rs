//! Writes one valid frame of every 9P message into the folder given, as the
//! fuzzers' seed corpus: `cargo run --example p9_seeds -- DIR`.

fn main() {
    let dir = std::env::args().nth(1).expect("usage: p9_seeds DIR");
    std::fs::create_dir_all(&dir).expect("create the corpus folder");
    for (name, frame) in stages::p9_harness::seed_frames() {
        std::fs::write(format!("{dir}/seed-{name}"), frame).expect("write a seed");
    }
}
