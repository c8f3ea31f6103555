//! Writes one valid frame of every 9P message into the folder given, as the
//! codec fuzzers' seed corpus, and the session harness's seed programs into
//! the second: `cargo run --example p9_seeds -- DIR [SESSION_DIR]`.

fn main() {
    let dir = std::env::args().nth(1).expect("usage: p9_seeds DIR [SESSION_DIR]");
    if let Some(session) = std::env::args().nth(2) {
        std::fs::create_dir_all(&session).expect("create the session corpus folder");
        for (name, program) in stages::r9p_session_harness::seed_programs() {
            std::fs::write(format!("{session}/seed-{name}"), program).expect("write a seed");
        }
    }
    std::fs::create_dir_all(&dir).expect("create the corpus folder");
    for (name, frame) in stages::p9_harness::seed_frames() {
        std::fs::write(format!("{dir}/seed-{name}"), frame).expect("write a seed");
    }
}
