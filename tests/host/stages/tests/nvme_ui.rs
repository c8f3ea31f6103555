//! Compile-fail lessons about the NVMe stages' types
//! (tests/host/ui/nvme_*.rs): each must fail to compile with exactly the
//! error in its `.stderr`. Re-bless after a deliberate change with
//! `TRYBUILD=overwrite`.

/// Stage 06's lessons, `nvme_sq_ring_*.rs`: its test runs them
/// (`--filter nvme_ring`).
#[test]
fn nvme_ring_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/nvme_sq_ring_*.rs"));
}

/// Every other `nvme_*.rs` lesson (stages 04, 07, ...).
#[test]
fn nvme_ui() {
    let ui = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui");
    let cases = trybuild::TestCases::new();
    let mut lessons: Vec<String> = std::fs::read_dir(ui)
        .expect("tests/host/ui")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("nvme_") && n.ends_with(".rs") && !n.starts_with("nvme_sq_ring_"))
        .collect();
    lessons.sort();
    for lesson in lessons {
        cases.compile_fail(format!("{ui}/{lesson}"));
    }
}
