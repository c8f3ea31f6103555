//! Decode throughput of a Tread/Twalk mix (3 reads per walk), on the host:
//! `cargo run --release --example bench_9p [SECONDS]` (scripts/bench-9p.sh).

use std::time::Duration;

fn main() {
    let seconds: f64 = std::env::args().nth(1).map_or(3.0, |s| s.parse().expect("SECONDS"));
    let frames = stages::p9_harness::bench_frames();
    let avg = frames.iter().map(Vec::len).sum::<usize>() as f64 / frames.len() as f64;
    println!("mix: {} frames (Twalk + 3 Tread each), {avg:.1} bytes on average", frames.len());
    // Warm up, then measure.
    stages::p9_harness::bench_decode(Duration::from_millis(300));
    let report = stages::p9_harness::bench_decode(Duration::from_secs_f64(seconds));
    println!(
        "decoded {} messages ({:.1} MB) in {:.2} s: {:.1} million messages/s, {:.0} MB/s",
        report.messages,
        report.bytes as f64 / 1e6,
        report.elapsed.as_secs_f64(),
        report.messages_per_sec() / 1e6,
        report.bytes as f64 / 1e6 / report.elapsed.as_secs_f64(),
    );
    println!("p9-decode-msgs-per-sec {:.0}", report.messages_per_sec());
}
