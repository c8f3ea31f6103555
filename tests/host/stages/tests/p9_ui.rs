//! Compile-fail lessons about the 9P codec's types (tests/host/ui/p9_*.rs):
//! each must fail to compile with exactly the error in its `.stderr`.
//! Re-bless after a deliberate change with `TRYBUILD=overwrite`.

#[test]
fn p9_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/p9_*.rs"));
}
