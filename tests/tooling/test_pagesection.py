"""rkw.pagesection: one generated part of the benchmark page, replaced
between its markers (or, with append, added)."""

import pytest

from rkw import pagesection

B, E = "<!-- part: generated -->", "<!-- end of part -->"
NOTE = "<!-- Do not edit: s.sh rewrites this part. -->"


def test_replaces_between_the_markers(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(f"# P\n\n{B}\nold\n{E}\n\n## Next\n")
    pagesection.replace(str(page), B, E, "s.sh", "new\n")
    assert page.read_text() == f"# P\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n\n## Next\n"


def test_without_markers_it_fails_unless_appending(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# P\n\nintro\n")
    with pytest.raises(SystemExit):
        pagesection.replace(str(page), B, E, "s.sh", "new\n")
    assert page.read_text() == "# P\n\nintro\n"
    pagesection.replace(str(page), B, E, "s.sh", "new\n", append=True)
    assert page.read_text() == f"# P\n\nintro\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n"


def test_append_creates_the_page_and_heals_a_lost_end(tmp_path):
    page = tmp_path / "p.md"
    pagesection.replace(str(page), B, E, "s.sh", "new\n", append=True)
    assert page.read_text() == f"{B}\n{NOTE}\n\nnew\n\n{E}\n"
    page.write_text(f"# P\n\n{B}\nold, its end marker lost\n\n## Next\n\nx\n")
    pagesection.replace(str(page), B, E, "s.sh", "new\n", append=True)
    assert page.read_text() == f"# P\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n\n## Next\n\nx\n"


def test_an_end_before_the_begin_is_not_the_end(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(f"{E}\n{B}\nold\n")
    with pytest.raises(SystemExit):
        pagesection.replace(str(page), B, E, "s.sh", "new\n")


def test_new_page_gives_a_page_without_markers_its_place(tmp_path):
    page = tmp_path / "p.md"
    seen = []

    def new_page(old):
        seen.append(old)
        return f"# New\n\n{B}\n{E}\n\n{old}"

    pagesection.replace(str(page), B, E, "s.sh", "new\n", new_page=new_page)
    assert seen == [""]
    assert page.read_text() == f"# New\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n\n"
    page.write_text(f"# P\n\n{B}\nits end marker lost\n")
    pagesection.replace(str(page), B, E, "s.sh", "new\n", new_page=new_page)
    assert seen[-1] == f"# P\n\n{B}\nits end marker lost\n"
    assert page.read_text().startswith(f"# New\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n\n# P\n")
    # A page with both markers keeps the rest of its text.
    page.write_text(f"# P\n\n{B}\nold\n{E}\n")
    pagesection.replace(str(page), B, E, "s.sh", "new\n", new_page=new_page)
    assert len(seen) == 2 and page.read_text() == f"# P\n\n{B}\n{NOTE}\n\nnew\n\n{E}\n"


def test_a_new_page_without_the_markers_fails(tmp_path):
    page = tmp_path / "p.md"
    with pytest.raises(SystemExit):
        pagesection.replace(str(page), B, E, "s.sh", "new\n", new_page=lambda old: "# No markers\n")
    assert not page.exists()
