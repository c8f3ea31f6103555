//! Compile-fail lessons about stage 02's types (tests/host/ui/params_*.rs):
//! each must fail to compile with exactly the error in its `.stderr`.
//! Re-bless after a deliberate change with `TRYBUILD=overwrite`.

#[test]
fn params_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/params_*.rs"));
}
