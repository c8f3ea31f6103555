"""rkw.estimate's teaching page part: each part's estimate is the sum of
its stages', and the stages above a sitting are named, from a made-up
page and table (the claim "no stage is above 90 minutes" went stale once,
unchecked)."""

import pytest

from rkw import estimate as e

PAGE = f"""before

{e.PARTS_BEGIN}
| part | stages | estimated |
| --- | --- | --- |
| first | 01-02 | old |
| second | 03-03 | old |
{e.PARTS_END}

after
"""


def table(*minutes):
    return [(f"{i:02d}-s{i}", {"minutes": m}) for i, m in enumerate(minutes, 1)]


def test_sums_and_long_stages():
    out = e.teaching_with(PAGE, table(45, 60, 105))
    assert "| first | 01-02 | 1 h 45 min |" in out and "| second | 03-03 | 1 h 45 min |" in out
    assert "By the estimate, 1 stage is above a sitting of 90 minutes: 03 s3 (1 h 45 min)." in out
    assert out.startswith("before\n") and out.endswith(f"{e.PARTS_END}\n\nafter\n")
    # Written again, it does not change: --check compares with this.
    assert e.teaching_with(out, table(45, 60, 105)) == out


def test_no_long_stage():
    out = e.teaching_with(PAGE, table(45, 60, 90))
    assert "No stage is above 90 minutes by the estimate: one stage, one sitting." in out
    assert "By the estimate" not in out


def test_a_page_without_markers_is_an_error():
    with pytest.raises(SystemExit):
        e.teaching_with("no markers\n", table(45))
