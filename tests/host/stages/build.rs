//! Points the crate at one tree of the workshop: `RKW_TREE=solutions` (the
//! default) or `RKW_TREE=steps`, so that the host tests test exactly the files
//! the kernel modules compile.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=RKW_TREE");
    let tree = env::var("RKW_TREE").unwrap_or_else(|_| "solutions".to_string());
    if tree != "solutions" && tree != "steps" {
        panic!("RKW_TREE must be `solutions` or `steps`, not `{tree}`");
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let repo = manifest
        .join("../../..")
        .canonicalize()
        .expect("tests/host/stages is three levels below the repository");
    let p9 = repo.join(&tree).join("14-9p-protocol/p9.rs");
    if !p9.exists() {
        panic!("{} does not exist", p9.display());
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("stages.rs");
    let code = format!(
        "/// Which tree these tests were built from.\n\
         pub const TREE: &str = {tree:?};\n\
         /// The repository the tree is in.\n\
         pub const REPO: &str = {repo:?};\n\
         /// Stage 14: the 9P2000.L codec, `{tree}/14-9p-protocol/p9.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {p9:?}]\n\
         pub mod p9;\n",
        repo = repo.display().to_string(),
        p9 = p9.display().to_string(),
    );
    fs::write(out, code).expect("write stages.rs");
}
