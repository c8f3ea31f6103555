"""The NVMe measurements' workloads, named once (rkw.nvmeworkloads) and
counted once (nvme-drivers-guest.sh's fio_ios), for the benchmark, the
profile and the instruction count alike."""

import json
import os
import re
import subprocess

from conftest import REPO

from rkw import nvmeinsns, nvmeprofile, nvmeworkloads


def test_every_report_names_the_guests_workloads():
    guest = open(os.path.join(REPO, "scripts", "nvme-drivers-guest.sh")).read()
    table = guest[guest.index("declare -A WL=("):]
    table = table[:table.index("\n)\n")]
    assert set(re.findall(r"^\t\[([a-z0-9-]+)\]=", table, re.M)) == set(nvmeworkloads.WL)
    assert nvmeprofile.WORKLOADS == nvmeinsns.WORKLOADS == nvmeworkloads.titles()


def test_fio_ios_counts_reads_and_writes(tmp_path):
    out = tmp_path / "fio.json"
    out.write_text(json.dumps({"jobs": [{"read": {"total_ios": 3}, "write": {"total_ios": 4}},
                                        {"read": {"total_ios": 5}, "write": {"total_ios": 0}}]}))
    r = subprocess.run(["bash", "-c", '. scripts/nvme-drivers-guest.sh; fio_ios "$1"', "sh", str(out)],
                       cwd=REPO, env=dict(os.environ, SECS="1"), capture_output=True, text=True)
    assert r.stdout.strip() == "12"
    for guest in ("profile-nvme-guest.sh", "insns-nvme-guest.sh"):
        text = open(os.path.join(REPO, "scripts", guest)).read()
        assert "fio_ios /tmp/fio.json" in text and "total_ios" not in text
