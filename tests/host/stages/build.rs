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
    let p9 = stage_file("27-9p-protocol/p9.rs");
    let params_config = stage_file("02-params/config.rs");
    // The NVMe library (`nvme::*`): each file as the first stage that lists
    // it in its `nvme.rs` has it. That is the stage whose exercise the file
    // is (then this tree's copy: the skeleton's in steps/), or a given file
    // of `solutions/lib/nvme/` (the same in both trees).
    let nvme_views: Vec<String> = [
        "04-pci-probe",
        "05-nvme-reset",
        "07-admin-queue",
        "12-prp-lists",
    ]
    .iter()
    .map(|s| stage_file(&format!("{s}/nvme.rs")))
    .collect();
    for view in &nvme_views {
        println!("cargo:rerun-if-changed={view}");
    }
    let nvme_file = |name: &str| {
        for view in &nvme_views {
            if let Some(file) = declared(view, name) {
                return file;
            }
        }
        panic!("no stage's nvme.rs declares `mod {name};`");
    };
    // The library's `core`-only files: `regs.rs` and `controller.rs` need the
    // kernel crate.
    let mut nvme_mods: Vec<(&str, String)> = ["cap", "command", "identify", "io_command", "prp"]
        .iter()
        .map(|m| (*m, nvme_file(m)))
        .collect();
    // Stage 06's `ring.rs`, this tree's (the stage has no module root: the
    // stages after it include the solution's).
    let nvme_ring = stage_file("06-nvme-rings/ring.rs");
    println!("cargo:rerun-if-changed={nvme_ring}");
    nvme_mods.push(("ring", nvme_ring.clone()));
    // Stage 21's shadow doorbell arithmetic, this tree's.
    let speed_root = stage_file("21-speed/rnvme.rs");
    println!("cargo:rerun-if-changed={speed_root}");
    let nvme_event_index = included(&speed_root, "event_index");
    println!("cargo:rerun-if-changed={nvme_event_index}");
    let exec_root = stage_file("23-executor/rexec.rs");
    println!("cargo:rerun-if-changed={exec_root}");
    let exec_task_state = included(&exec_root, "task_state");
    // Stage 15's `passthru.rs`, this tree's (the stage has no module root).
    let nvme_passthru = stage_file("15-passthru-check/passthru.rs");
    println!("cargo:rerun-if-changed={nvme_passthru}");
    // Stage 32's passwd file, this tree's (the stage has no module root),
    // and the given group file stage 33's module root includes beside it.
    let r9p_passwd = stage_file("32-9p-passwd/passwd.rs");
    println!("cargo:rerun-if-changed={r9p_passwd}");
    let r9p_root = stage_file("33-9p-users/r9p_main.rs");
    println!("cargo:rerun-if-changed={r9p_root}");
    let r9p_group = included(&r9p_root, "group");
    // The session logic is shared (`solutions/lib/`): the same in both trees.
    let r9p_session = repo
        .join("solutions/lib/r9p/session.rs")
        .display()
        .to_string();
    println!("cargo:rerun-if-changed={r9p_session}");
    println!("cargo:rerun-if-changed={}/solutions/lib/r9p/session", repo.display());
    // The accept loop's retry rule (`service.rs` names it): shared too.
    let r9p_accept_retry = repo
        .join("solutions/lib/r9p/accept_retry.rs")
        .display()
        .to_string();
    println!("cargo:rerun-if-changed={r9p_accept_retry}");
    // What the session reaches: stage 29's walk and stage 30's listing,
    // this tree's (the skeleton's in steps/).
    let r9p_walk = stage_file("29-9p-walk/walk.rs");
    let r9p_listing = stage_file("30-9p-readdir/listing.rs");
    println!("cargo:rerun-if-changed={r9p_walk}");
    println!("cargo:rerun-if-changed={r9p_listing}");
    let repo_prefix = format!("{}/", repo.display());
    let rel = |file: &str| file.strip_prefix(&repo_prefix).unwrap_or(file).to_string();
    let passthru_rel = rel(&nvme_passthru);
    let event_index_rel = rel(&nvme_event_index);
    let task_state_rel = rel(&exec_task_state);
    let (r9p_passwd_rel, r9p_group_rel) = (rel(&r9p_passwd), rel(&r9p_group));
    let mut nvme = String::from(
        "/// The NVMe library's `core`-only files, as the stages include them\n\
         /// (the tree's `NN-stage/nvme.rs`); they name each other `super::x`.\n\
         #[allow(dead_code)]\n\
         pub mod nvme {\n",
    );
    for (name, file) in &nvme_mods {
        nvme += &format!(
            "    /// `{}`.\n    #[path = {file:?}]\n    pub mod {name};\n",
            rel(file)
        );
    }
    nvme += "}\n";
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
         {nvme}\
         /// Stage 04's CAP decoding (and the doorbell offsets stage 07 uses).\n\
         pub use nvme::cap as nvme_spec;\n\
         /// The same file, as stage 07 and later use it.\n\
         pub use nvme::cap as nvme_admin_spec;\n\
         /// Commands, completions and every opcode.\n\
         pub use nvme::command as nvme_command;\n\
         /// Stage 06: SQ/CQ ring indices and phase.\n\
         pub use nvme::ring as nvme_ring;\n\
         /// Identify data.\n\
         pub use nvme::identify as nvme_identify;\n\
         /// Stage 13: PRP entries and lists.\n\
         pub use nvme::prp as nvme_prp;\n\
         /// Read, Write, Flush, transfer pieces and I/O errors.\n\
         pub use nvme::io_command as nvme_io_command;\n\
         /// Stage 15: the passthrough ioctls' layouts, numbers and checks,\n\
         /// `{passthru_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_passthru:?}]\n\
         pub mod nvme_passthru;\n\
         /// Stage 21: shadow doorbells' event index, `{event_index_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {nvme_event_index:?}]\n\
         pub mod nvme_event_index;\n\
         /// The file `nvme_passthru` is (for the lints on it).\n\
         pub const NVME_PASSTHRU_FILE: &str = {nvme_passthru:?};\n\
         /// The file `nvme::ring` is (for the lints on it).\n\
         pub const NVME_RING_FILE: &str = {nvme_ring:?};\n\
         /// Stage 23: a task's atomic state machine, `{task_state_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {exec_task_state:?}]\n\
         pub mod exec_task_state;\n\
         /// Stage 32: finding a user in a passwd file, `{r9p_passwd_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_passwd:?}]\n\
         pub mod r9p_passwd;\n\
         /// Stage 32's `crate::passwd`.\n\
         pub use r9p_passwd as passwd;\n\
         /// Stage 32: a user's groups in a group file (given), `{r9p_group_rel}`.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_group:?}]\n\
         pub mod r9p_group;\n\
         /// r9p's session logic, `core` only, over a VFS trait:\n\
         /// `solutions/lib/r9p/session.rs` (the host fake is `r9p_fake`).\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_session:?}]\n\
         pub mod r9p_session;\n\
         /// The session as the kernel's crates name it.\n\
         pub use r9p_session as session;\n\
         /// What r9p's accept loop does when `accept` fails:\n\
         /// `solutions/lib/r9p/accept_retry.rs`.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_accept_retry:?}]\n\
         pub mod r9p_accept_retry;\n\
         /// Stage 29: walking one name, confined to the export.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_walk:?}]\n\
         pub mod walk;\n\
         /// Stage 30: listing a directory.\n\
         #[allow(dead_code)]\n\
         #[path = {r9p_listing:?}]\n\
         pub mod listing;\n\
         /// `walk.rs`'s `cross_mounts=` (the harness sets its limits itself).\n\
         pub fn cross_mounts() -> bool {{ false }}\n\
         /// The file `r9p_accept_retry` is (for the lints on it).\n\
         pub const R9P_ACCEPT_RETRY_FILE: &str = {r9p_accept_retry:?};\n\
         /// The file `r9p_session` is (for the lints on it).\n\
         pub const R9P_SESSION_FILE: &str = {r9p_session:?};\n\
         /// Stage 27: the 9P2000.L codec, `{tree}/27-9p-protocol/p9.rs`.\n\
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

/// The file the module tree root `view` (a stage's `nvme.rs`) declares as
/// `pub(crate) mod name;`, by the `#[path]` above it (relative to the
/// root's folder), or `None` if it declares no such module.
fn declared(view: &str, name: &str) -> Option<String> {
    let view = PathBuf::from(view);
    let text = fs::read_to_string(&view).unwrap_or_else(|e| panic!("{}: {e}", view.display()));
    let dir = view.parent().expect("a file has a folder");
    let mut path = None;
    for line in text.lines().map(str::trim) {
        if let Some(p) = line
            .strip_prefix("#[path = \"")
            .and_then(|l| l.strip_suffix("\"]"))
        {
            path = Some(p.to_string());
        } else if line.strip_prefix("pub(crate) ").unwrap_or(line) == format!("mod {name};") {
            let file = dir.join(path.unwrap_or_else(|| format!("{name}.rs")));
            let file = file
                .canonicalize()
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            return Some(file.display().to_string());
        } else if !line.starts_with("#[") {
            path = None;
        }
    }
    None
}
