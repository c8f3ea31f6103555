"""rkw.nvmeab (scripts/ab-nvme.sh's report): before/after ratios per round,
from made-up guest lines."""

from rkw import nvmeab as ab

# Two rounds of one workload; the second round's "before" is slow, and a
# third round lost its C sample (the guest died): it counts for after/before
# only.
RAW = """RKW-INFO kernel 7.3.4, 2 vCPUs
RKW-AB 1 randread-qd32 after 900
RKW-AB 1 randread-qd32 before 800
RKW-AB 1 randread-qd32 c 1000
RKW-AB 2 randread-qd32 before 400
RKW-AB 2 randread-qd32 c 500
RKW-AB 2 randread-qd32 after 450
RKW-AB 3 randread-qd32 after 100
RKW-AB 3 randread-qd32 before 100
RKW-AB garbage line
RKW-GUEST-DONE
"""


def test_ratios_are_per_round(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW)
    runs = ab.parse(str(raw))
    assert list(runs) == ["randread-qd32"]
    rounds = runs["randread-qd32"]
    # Each round's own ratio: 0.9 and 0.9, though the rounds' C differ 2x.
    assert ab.ratios(rounds, "after", "c") == [0.9, 0.9]
    assert sorted(ab.ratios(rounds, "after", "before")) == [1.0, 1.125, 1.125]


def test_report_names_the_workload_and_builds(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW)
    text = ab.report(ab.parse(str(raw)), "abc1234", "def5678")
    row = next(line for line in text.splitlines() if line.startswith("| 4k random, QD32 "))
    # 2 complete rounds; after/C 0.90 (0.90-0.90); before/C 0.80; after/before median 1.12.
    assert row == "| 4k random, QD32 | 2 | 0.90 (0.90-0.90) | 0.80 (0.80-0.80) | 1.12 (1.00-1.12) |"
    assert "before: abc1234; after: def5678" in text


def test_no_samples_is_an_error(tmp_path, capsys):
    raw = tmp_path / "raw.txt"
    raw.write_text("RKW-GUEST-DONE\n")
    assert ab.main([str(raw)]) == 1
    assert "no RKW-AB line" in capsys.readouterr().err
