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


def rnvme_paths(log):
    r = subprocess.run(["bash", "-c", ". scripts/nvme-drivers-guest.sh; rnvme_paths"], input=log,
                       cwd=REPO, env=dict(os.environ, SECS="1"), capture_output=True, text=True)
    return r.stdout.strip()


def test_rnvme_paths_counts_the_one_piece_requests_as_mapped():
    """Stage 21's shortcut maps a request of one piece outside stage 19's
    count: the benchmark page said 'every byte is copied' of a run whose
    4k requests all went zero copy, counting them as neither."""
    old = ("[ 5.1] rnvme: 7 requests zero copy (0 with an SGL), 3 through a bounce buffer\n"
           "[ 5.1] rnvme: 9 requests mapped in one piece\n")
    log = old + ("[ 9.2] rnvme: 40 requests zero copy (2 with an SGL), 0 through a bounce buffer\n"
                 "[ 9.2] rnvme: 161929 requests mapped in one piece\n")
    assert rnvme_paths(log) == "161969 2 0"
    # Stage 19 and 20 log no such line.
    assert rnvme_paths("[ 9.2] rnvme: 40 requests zero copy (2 with an SGL), 5 through a bounce buffer\n") == "40 2 5"
    assert rnvme_paths("[ 9.2] nvme nvme0: 2/0/0 default/read/poll queues\n") == ""
