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
    let stage_file = |rel: &str| {
        let file = repo.join(&tree).join(rel);
        if !file.exists() {
            panic!("{} does not exist", file.display());
        }
        file.display().to_string()
    };
    let p9 = stage_file("14-9p-protocol/p9.rs");
    let params_config = stage_file("02-params/config.rs");
    let nvme_spec = stage_file("04-pci-probe/spec.rs");
    let nvme_admin_spec = stage_file("06-admin-queue/spec.rs");
    let nvme_command = stage_file("06-admin-queue/command.rs");
    let nvme_ring = stage_file("06-admin-queue/ring.rs");
    let nvme_identify = stage_file("06-admin-queue/identify.rs");
    let exec_task_state = stage_file("12-executor/task_state.rs");
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("stages.rs");
    let code = format!(
        "/// Which tree these tests were built from.\n\
         pub const TREE: &str = {tree:?};\n\
         /// The repository the tree is in.\n\
         pub const REPO: &str = {repo:?};\n\
         /// Stage 02: rparams' parameter checks, `{tree}/02-params/config.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {params_config:?}]\n\
         pub mod params_config;\n\
         /// Stage 04: NVMe CAP decoding, `{tree}/04-pci-probe/spec.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_spec:?}]\n\
         pub mod nvme_spec;\n\
         /// Stage 06: stage 04's CAP decoding plus the doorbell offsets,\n\
         /// `{tree}/06-admin-queue/spec.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_admin_spec:?}]\n\
         pub mod nvme_admin_spec;\n\
         /// Stage 06: commands and completions, `{tree}/06-admin-queue/command.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_command:?}]\n\
         pub mod nvme_command;\n\
         /// Stage 06: SQ/CQ ring indices and phase, `{tree}/06-admin-queue/ring.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_ring:?}]\n\
         pub mod nvme_ring;\n\
         /// Stage 06: Identify data, `{tree}/06-admin-queue/identify.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_identify:?}]\n\
         pub mod nvme_identify;\n\
         /// Stage 12: a task's atomic state machine, `{tree}/12-executor/task_state.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {exec_task_state:?}]\n\
         pub mod exec_task_state;\n\
         /// Stage 14: the 9P2000.L codec, `{tree}/14-9p-protocol/p9.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {p9:?}]\n\
         pub mod p9;\n",
        repo = repo.display().to_string(),
    );
    fs::write(out, code).expect("write stages.rs");
}
