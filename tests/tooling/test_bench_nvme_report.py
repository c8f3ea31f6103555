"""scripts/bench-nvme-report.py: its rows for rnvme's variants (zero_copy=0,
built without overflow checks) and the write workload, from made-up
samples (no VM)."""

import importlib.util
import os

import pytest
from conftest import REPO

spec = importlib.util.spec_from_file_location("bench_nvme_report",
                                              os.path.join(REPO, "scripts", "bench-nvme-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def fio_job(iops, direction="read", lat_us=100):
    """One fio job of a 1 s run: IOPS in one direction, none in the other."""
    side = {"total_ios": iops, "iops": iops, "bw_bytes": iops * 4096,
            "lat_ns": {"mean": lat_us * 1000},
            "clat_ns": {"percentile": {"50.000000": lat_us * 1000, "99.000000": 2 * lat_us * 1000}}}
    other = {"total_ios": 0, "iops": 0, "bw_bytes": 0, "lat_ns": {"mean": 0}, "clat_ns": {}}
    job = {"usr_cpu": 10, "sys_cpu": 20, "job_runtime": 1000}
    job.update({"read": side, "write": other} if direction == "read" else {"read": other, "write": side})
    return job


def sample(r, wl, who, iops, direction="read", lat_us=100):
    return dict(round=r, wl=wl, who=who, irqs=iops, t0=0, t1=0, busy=10, total=200, ms=1000, ipis=0,
                ctxt=0, sqdb=0, cqdb=0, cmds=iops, jobs=[fio_job(iops, direction, lat_us)])


def rows(samples):
    return report.summarise([report.per_sample(s) for s in samples], {})


def test_variant_keys_labels_and_units():
    assert report.base_of("randread-qd32+bounce") == ("randread-qd32", "bounce")
    assert report.base_of("randread-qd1+nochecks") == ("randread-qd1", "nochecks")
    assert report.base_of("seqread-128k") == ("seqread-128k", "ours")
    assert report.label("randread-qd1+nochecks") == "4k random, QD1, no overflow checks"
    assert report.label("randread-qd32+bounce") == "4k random, QD32, zero_copy=0"
    assert report.unit_of("seqread-128k+bounce") == "MB/s"


def test_nochecks_row_compares_with_c_and_with_rnvme_as_built():
    s = []
    for r, (ours, nochecks, c) in enumerate([(900, 990, 1000), (800, 960, 1000), (850, 850, 1000)], 1):
        s += [sample(r, "randread-qd1", "ours", ours), sample(r, "randread-qd1", "nochecks", nochecks),
              sample(r, "randread-qd1", "c", c)]
    res = rows(s)
    assert set(res) == {"randread-qd1", "randread-qd1+nochecks"}
    row = res["randread-qd1+nochecks"]
    assert row["ratio"] == pytest.approx(0.96)
    assert row["vs_checked"] == pytest.approx(1.1)
    assert (row["vs_checked_min"], row["vs_checked_max"]) == (pytest.approx(1.0), pytest.approx(1.2))
    assert "vs_zero_copy" not in row


def test_write_workload_takes_the_write_side():
    s = [sample(1, "randwrite-qd32", "ours", 700, "write", lat_us=300),
         sample(1, "randwrite-qd32", "c", 1000, "write", lat_us=200)]
    row = rows(s)["randwrite-qd32"]
    assert row["value_ours"] == 700 and row["ratio"] == pytest.approx(0.7)
    assert (row["lat_us_ours"], row["lat_us_c"]) == (pytest.approx(300), pytest.approx(200))
    assert row["p99_us_ours"] == pytest.approx(600)


def test_result_lines_name_the_variants():
    s = [sample(1, "randread-qd32", w, v) for w, v in (("ours", 900), ("bounce", 800), ("nochecks", 950),
                                                        ("c", 1000))]
    res = rows(s)
    a = type("A", (), {"rounds": 1, "wall": 10})()
    names = {n for n, _, _ in report.result_lines(res, {"ours": [], "c": []}, a)}
    assert {"nvme-randread-qd32-ratio", "nvme-randread-qd32-zero-copy-0-ratio",
            "nvme-randread-qd32-no-overflow-checks-ratio"} <= names


def test_why_names_the_overflow_checks_and_whether_they_matter():
    s = []
    for r, (ours, nochecks) in enumerate([(900, 910), (900, 880)], 1):
        s += [sample(r, "randread-qd1", "ours", ours), sample(r, "randread-qd1", "nochecks", nochecks),
              sample(r, "randread-qd1", "c", 1000)]
    text = report.why(rows(s), {}, False, None, {}, {"c": []}, {})
    assert "overflow checks" in text and "within the rounds' spread" in text
    s = [x for x in s if x["who"] != "nochecks"]
    s += [sample(r, "randread-qd1", "nochecks", 1100) for r in (1, 2)]
    text = report.why(rows(s), {}, False, None, {}, {"c": []}, {})
    assert "overflow checks" in text and "within the rounds' spread" not in text


NOTE = f"<!-- Do not edit: {report.SCRIPT} rewrites this part. -->"
PART = f"{report.BEGIN}\n{NOTE}\n\nnumbers\n\n{report.END}\n"


def test_page_with_markers_keeps_the_rest(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# B\n\nmine\n\n{report.BEGIN}\nold\n{report.END}\n\n## 9P\n\n{report.P9}\n")
    report.write_page(str(tmp_path), "numbers\n", "21")
    assert page.read_text() == f"# B\n\nmine\n\n{PART}\n## 9P\n\n{report.P9}\n"


def test_no_page_gets_the_intro_and_the_9p_part_place(tmp_path):
    report.write_page(str(tmp_path), "numbers\n", "21")
    text = (tmp_path / "benchmarks.md").read_text()
    assert text.startswith("# Benchmarks\n\n`make bench` measures")
    assert f"## NVMe: rnvme (stage 21) against the C driver\n\n{PART}\n## 9P servers:" in text
    assert text.endswith(f"writes its results here.\n\n{report.P9}\n")


def test_page_without_markers_keeps_its_9p_part_from_its_heading(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Old\n\nold intro\n\n## 9P, mine\n\ntext\n\n{report.P9}\n9p numbers\n")
    report.write_page(str(tmp_path), "numbers\n", "19")
    text = page.read_text()
    assert "old intro" not in text and text.startswith("# Benchmarks\n")
    assert text.endswith(f"(stage 19) against the C driver\n\n{PART}\n## 9P, mine\n\ntext\n\n{report.P9}\n9p numbers\n")
