//! Stage 23: the trybuild lessons `ui/exec_*.rs` are about
//! `Executor::spawn`'s bounds, but `executor.rs` needs the kernel crate and
//! cannot be built on the host. So each lesson declares a host stand-in
//! `spawn` with the same bounds, and these tests keep the two in step: the
//! bounds are still in `executor.rs` (the tree's, and `solutions/`'s, which
//! the lessons name), and every lesson's stand-in still has them.

use std::path::Path;

/// `Executor::spawn`'s signature and bounds in executor.rs, whitespace
/// aside.
const SPAWN: &str = "pub(crate) fn spawn<F>(self: &Arc<Self>, future: F) \
                     -> Result<JoinHandle<F::Output>> \
                     where F: Future + Send + 'static, F::Output: Send + 'static, {";

/// The lessons' stand-in, whitespace aside.
const STAND_IN: &str = "fn spawn<F>(future: F) \
                        where F: Future + Send + 'static, F::Output: Send + 'static, { }";

/// The two bound lines, each on a line of its own in executor.rs.
const BOUNDS: [&str; 2] = ["F: Future + Send + 'static,", "F::Output: Send + 'static,"];

/// `text` with every run of whitespace made one space.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn exec_spawn_bounds_are_in_executor_rs() {
    let mut trees = vec!["solutions"];
    if crate::TREE != "solutions" {
        trees.push(crate::TREE);
    }
    for tree in trees {
        let path = Path::new(crate::REPO).join(tree).join("23-executor/executor.rs");
        let text = read(&path);
        for bound in BOUNDS {
            assert!(
                text.lines().any(|l| l.trim() == bound),
                "{}: no line `{bound}`: update the lessons in tests/host/ui/exec_*.rs",
                path.display()
            );
        }
        assert!(
            squeeze(&text).contains(SPAWN),
            "{}: `spawn` is no longer `{SPAWN}`: update the lessons in tests/host/ui/exec_*.rs",
            path.display()
        );
    }
}

#[test]
fn exec_spawn_lessons_use_the_same_bounds() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui");
    let mut lessons: Vec<_> = std::fs::read_dir(&ui)
        .unwrap_or_else(|e| panic!("{}: {e}", ui.display()))
        .map(|entry| entry.expect("read ui/").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("exec_") && name.ends_with(".rs")
        })
        .collect();
    lessons.sort();
    assert!(lessons.len() >= 2, "the exec_*.rs lessons are missing from {}", ui.display());
    for lesson in lessons {
        let text = read(&lesson);
        assert!(
            squeeze(&text).contains(STAND_IN),
            "{}: its stand-in is not `{STAND_IN}`, the bounds of executor.rs's `spawn`",
            lesson.display()
        );
        assert!(
            text.contains("stand-in for `Executor::spawn` in solutions/23-executor/executor.rs"),
            "{}: the stand-in's comment must say what it mirrors",
            lesson.display()
        );
    }
}
