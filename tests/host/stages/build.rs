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
    // A skeleton includes the files it has no exercise in from solutions/
    // (e.g. stage 06's `spec.rs`), so a stage's files are the ones its
    // module root includes.
    let admin_root = stage_file("06-admin-queue/rnvme.rs");
    println!("cargo:rerun-if-changed={admin_root}");
    let nvme_admin_spec = included(&admin_root, "spec");
    let nvme_command = included(&admin_root, "command");
    let nvme_ring = included(&admin_root, "ring");
    let nvme_identify = included(&admin_root, "identify");
    let exec_root = stage_file("12-executor/rexec.rs");
    println!("cargo:rerun-if-changed={exec_root}");
    let exec_task_state = included(&exec_root, "task_state");
    // Stage 09's, likewise (its skeleton takes `io_command.rs` from
    // solutions/).
    let blk_root = stage_file("09-blk-mq/rnvme.rs");
    println!("cargo:rerun-if-changed={blk_root}");
    let nvme_prp = included(&blk_root, "prp");
    let nvme_io_command = included(&blk_root, "io_command");
    let blk_command = included(&blk_root, "command");
    // Stage 10's `passthru.rs`, likewise the file its module root includes.
    let production_root = stage_file("10-nvme-production/rnvme.rs");
    println!("cargo:rerun-if-changed={production_root}");
    let nvme_passthru = included(&production_root, "passthru");
    // Stage 16's passwd and group files, likewise (its skeleton takes
    // `group.rs` from solutions/).
    let r9p_root = stage_file("16-9p-hardening/r9p_main.rs");
    println!("cargo:rerun-if-changed={r9p_root}");
    let r9p_passwd = included(&r9p_root, "passwd");
    let r9p_group = included(&r9p_root, "group");
    let repo_prefix = format!("{}/", repo.display());
    let rel = |file: &str| file.strip_prefix(&repo_prefix).unwrap_or(file).to_string();
    let (prp_rel, io_command_rel) = (rel(&nvme_prp), rel(&nvme_io_command));
    let passthru_rel = rel(&nvme_passthru);
    let (admin_spec_rel, command_rel) = (rel(&nvme_admin_spec), rel(&nvme_command));
    let (ring_rel, identify_rel) = (rel(&nvme_ring), rel(&nvme_identify));
    let task_state_rel = rel(&exec_task_state);
    let (r9p_passwd_rel, r9p_group_rel) = (rel(&r9p_passwd), rel(&r9p_group));
    // `io_command.rs` names `crate::command` and `crate::prp`: stage 06's
    // `nvme_command` when stage 09 includes that very file, else its own.
    let command = if blk_command == nvme_command {
        "/// Stage 09's `crate::command`: stage 06's `nvme_command`.\n\
         pub use nvme_command as command;\n"
            .to_string()
    } else {
        format!(
            "/// Stage 09's `crate::command`, `{}`.\n\
             #[allow(dead_code)]\n\
             #[path = {blk_command:?}]\n\
             pub mod command;\n",
            rel(&blk_command)
        )
    };
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
         /// `{admin_spec_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_admin_spec:?}]\n\
         pub mod nvme_admin_spec;\n\
         /// Stage 06: commands and completions, `{command_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_command:?}]\n\
         pub mod nvme_command;\n\
         /// Stage 06: SQ/CQ ring indices and phase, `{ring_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_ring:?}]\n\
         pub mod nvme_ring;\n\
         /// Stage 06: Identify data, `{identify_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_identify:?}]\n\
         pub mod nvme_identify;\n\
         /// Stage 09: PRP entries and lists, `{prp_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_prp:?}]\n\
         pub mod nvme_prp;\n\
         /// Stage 09's `crate::prp`.\n\
         pub use nvme_prp as prp;\n\
         {command}\
         /// Stage 09: Read, Write, Flush, transfer pieces and I/O errors,\n\
         /// `{io_command_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_io_command:?}]\n\
         pub mod nvme_io_command;\n\
         /// Stage 10: the passthrough ioctls' layouts, numbers and checks,\n\
         /// `{passthru_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_passthru:?}]\n\
         pub mod nvme_passthru;\n\
         /// The file `nvme_passthru` is (for the lints on it).\n\
         pub const NVME_PASSTHRU_FILE: &str = {nvme_passthru:?};\n\
         /// Stage 12: a task's atomic state machine, `{task_state_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {exec_task_state:?}]\n\
         pub mod exec_task_state;\n\
         /// Stage 16: finding a user in a passwd file, `{r9p_passwd_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_passwd:?}]\n\
         pub mod r9p_passwd;\n\
         /// Stage 16's `crate::passwd`.\n\
         pub use r9p_passwd as passwd;\n\
         /// Stage 16: a user's groups in a group file, `{r9p_group_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_group:?}]\n\
         pub mod r9p_group;\n\
         /// Stage 14: the 9P2000.L codec, `{tree}/14-9p-protocol/p9.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {p9:?}]\n\
         pub mod p9;\n",
        repo = repo.display().to_string(),
    );
    fs::write(out, code).expect("write stages.rs");
}

/// The file the module root `root` compiles as `mod name;`: the
/// `#[path = "..."]` attribute just above it (relative to the root's
/// folder), else `name.rs` next to the root. Panics if the root declares no
/// such module or the file does not exist.
fn included(root: &str, name: &str) -> String {
    let root = PathBuf::from(root);
    let text = fs::read_to_string(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let dir = root.parent().expect("a file has a folder");
    let mut path = None;
    for line in text.lines().map(str::trim) {
        if let Some(p) = line
            .strip_prefix("#[path = \"")
            .and_then(|l| l.strip_suffix("\"]"))
        {
            path = Some(p.to_string());
        } else if line.starts_with("#[") {
            // Another attribute of the same item.
        } else if line.strip_prefix("pub(crate) ").unwrap_or(line) == format!("mod {name};") {
            let file = dir.join(path.unwrap_or_else(|| format!("{name}.rs")));
            let file = file
                .canonicalize()
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            return file.display().to_string();
        } else {
            path = None;
        }
    }
    panic!("{} declares no `mod {name};`", root.display());
}
