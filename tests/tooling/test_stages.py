"""rkw.stages, the stage reader, against scripts/common.sh's stage_env."""

import os
import re
import subprocess

import pytest
from conftest import REPO

from rkw import stages

ALL = stages.names()


def shell_stage_env(stage, keys):
    """{KEY: common.sh's `stage_env STAGE KEY`}, in one bash."""
    out = subprocess.run(
        ["bash", "-c", '. "$1/scripts/common.sh"; s=$2; shift 2; for k; do printf "%s=%s\\0" "$k" "$(stage_env "$s" "$k")"; done',
         "bash", REPO, stage, *keys],
        capture_output=True, check=True, env=dict(os.environ, RKW_FLAVOUR="fast"),
    ).stdout.decode()
    return dict(kv.split("=", 1) for kv in out.split("\0") if kv)


def test_every_stage_is_found():
    on_disk = sorted(d for d in os.listdir(os.path.join(REPO, "tests")) if os.path.isfile(os.path.join(REPO, "tests", d, "stage.env")))
    assert ALL == on_disk
    assert len(ALL) >= 35


@pytest.mark.parametrize("stage", ALL)
def test_stage_env_is_what_common_sh_sources(stage):
    with open(os.path.join(REPO, "tests", stage, "stage.env")) as f:
        keys = set(re.findall(r"^(\w+)=", f.read(), re.M))
    assert keys, f"{stage}/stage.env sets nothing"
    # ... and keys it does not set, some of which the caller has (test.sh's BOOT).
    asked = sorted(keys | {"BOOT", "CPUS", "PATH", "HOME", "NO_SUCH_KEY"})
    assert {k: stages.setting(stage, k) for k in asked} == shell_stage_env(stage, asked)
    assert set(stages.env(stage)) == keys


def test_the_callers_variables_do_not_leak(monkeypatch):
    monkeypatch.setenv("BOOT", "3")
    assert stages.setting("09-interrupts", "BOOT") == ""
    assert stages.setting("17-timeouts", "BOOT") == "nvme-production"


def test_shell_syntax_as_bash_reads_it(tmp_path):
    (tmp_path / "tests" / "99-x").mkdir(parents=True)
    (tmp_path / "tests" / "99-x" / "stage.env").write_text(
        "# a comment\n"
        'DEVICES="nvme:serial=a nvme:serial=b" # two controllers\n'
        "QUOTED='single quoted $HOME'\n"
        "MODULE=rx\n"
        "DERIVED=${MODULE}-2\n"
        "EMPTY=\n"
        "export LATER=yes\n"
        "MODULE=ry\n"
    )
    env = stages.env("99-x", root=str(tmp_path))
    assert env == {
        "DEVICES": "nvme:serial=a nvme:serial=b",
        "QUOTED": "single quoted $HOME",
        "MODULE": "ry",
        "DERIVED": "rx-2",
        "EMPTY": "",
        "LATER": "yes",
    }
    assert stages.setting("99-x", "NOPE", root=str(tmp_path)) == ""
    assert stages.env("98-none", root=str(tmp_path)) == {}


def test_resolve():
    assert stages.resolve("1") == "01-hello"
    assert stages.resolve("01") == "01-hello"
    assert stages.resolve("01-hello") == "01-hello"
    assert stages.resolve("35") == ALL[-1]
    with pytest.raises(LookupError, match="no stage 99"):
        stages.resolve("99")
    with pytest.raises(LookupError, match="not a stage: x"):
        stages.resolve("x")


def test_names_of_several_trees():
    both = stages.names(REPO, ("steps", "solutions"))
    assert "lib" not in both
    assert both == [s for s in ALL if os.path.isdir(os.path.join(REPO, "steps", s))]


@pytest.mark.parametrize("env", [{}, {"RKW_CACHE": "/tmp/rkw-c"}, {"XDG_CACHE_HOME": "/tmp/xdg"}])
def test_the_venv_is_common_sh_s(env, monkeypatch):
    """A parsing task re-runs itself by the venv's python: the venv
    scripts/common.sh names (VENV), wherever the cache is."""
    import rkw

    for k in ("RKW_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    shell = subprocess.run(["bash", "-c", '. "$1/scripts/common.sh"; echo "$VENV"', "bash", REPO],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert rkw.venv() == shell


def test_every_task_has_its_wrapper():
    """The names the Makefile, the tests and the book call stay: each task
    of the package is scripts/TASK.py, a wrapper of run(TASK)."""
    import rkw

    for task in rkw.TASKS:
        path = os.path.join(REPO, "scripts", f"{task}.py")
        assert os.access(path, os.X_OK), f"{path}: missing or not executable"
        with open(path) as f:
            assert f'run("{task}", sys.argv[1:])' in f.read()
    out = subprocess.run(["python3", "-m", "rkw"], cwd=os.path.join(REPO, "scripts"), capture_output=True, text=True)
    assert out.returncode == 2 and all(t in out.stdout for t in rkw.TASKS)
