//! Compile-fail lessons about stage 04's and 06's types (tests/host/ui/nvme_*.rs):
//! each must fail to compile with exactly the error in its `.stderr`.
//! Re-bless after a deliberate change with `TRYBUILD=overwrite`.

#[test]
fn nvme_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/nvme_*.rs"));
}
