//! Replays one input of the `p9_session` fuzz target, and prints what each
//! request was answered and the invariant it broke, if any:
//! `cargo run --example r9p_session_replay -- FILE`.

fn main() {
    let file = std::env::args()
        .nth(1)
        .expect("usage: r9p_session_replay FILE");
    let data = std::fs::read(&file).expect("read the input");
    let (result, trace) = stages::r9p_session_harness::run_traced(&data);
    for line in &trace {
        println!("{line}");
    }
    match result {
        Ok(stats) => println!("ok: {} requests, {} errors", stats.requests, stats.errors),
        Err(broken) => {
            println!("BROKEN: {broken}");
            std::process::exit(1);
        }
    }
}
