//! Compile-fail lessons about stage 23's `Executor::spawn` bounds
//! (tests/host/ui/exec_*.rs): each must fail to compile with exactly the
//! error in its `.stderr`. Re-bless after a deliberate change with
//! `TRYBUILD=overwrite`.

#[test]
fn exec_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/exec_*.rs"));
}
