"""rkw.nvmeprofile, the report of scripts/profile-nvme.sh: µs per I/O from
perf's shares, the kinds of code, Rust names, and the page's markers."""

import shutil

import pytest

from rkw import nvmeprofile as p
from rkw import pagesection

RAW = """\
RKW-INFO kernel 7.3.4, 2 vCPUs, perf 6.1.187
RKW-RUN randread-qd32 ours 100000 10000 2
RKW-SYM randread-qd32 ours 50.00 k default_idle
RKW-SYM randread-qd32 ours 10.00 k _raw_spin_unlock_irq_enable
RKW-SYM randread-qd32 ours 5.00 k _RNvMs_NtCs1jJRYLZDCDI_5rnvme7dma_mapNtB5_7Mapping3map
RKW-SYM randread-qd32 ours 2.00 k get_page_from_freelist
RKW-SYM randread-qd32 ours 3.00 . get_io_u
RKW-RUN randread-qd32 c 200000 10000 2
RKW-SYM randread-qd32 c 60.00 k default_idle
RKW-SYM randread-qd32 c 10.00 k _raw_spin_unlock
RKW-SYM randread-qd32 c 1.00 k 0x0000000000020394
RKW-SYM randread-qd32 c 3.00 . get_io_u
RKW-GUEST-DONE
"""


@pytest.fixture
def parsed(tmp_path):
    f = tmp_path / "raw.txt"
    f.write_text(RAW)
    return p.parse(str(f))


def test_per_io_scales_shares_by_cpu_time_and_ios(parsed):
    runs, syms = parsed
    ours = p.per_io(runs, syms, "randread-qd32", "ours")
    # 2 CPUs x 10 s = 20 s of CPU; 10 % of it over 100 000 I/Os = 20 µs.
    assert ours[("_raw_spin_unlock_irq_enable", "k")] == pytest.approx(20.0)
    # C did twice the I/Os: the same share is half the time per I/O.
    c = p.per_io(runs, syms, "randread-qd32", "c")
    assert c[("_raw_spin_unlock", "k")] == pytest.approx(10.0)
    assert ("default_idle", "k") not in ours


@pytest.mark.parametrize("sym,k,kind", [
    ("_raw_spin_unlock_irqrestore", "k", "locks"),
    ("_RNvMs_NtCs1jJRYLZDCDI_5rnvme7dma_mapNtB5_7Mapping3map", "k", "driver"),
    ("nvme_queue_rq", "k", "driver"),
    ("0x0000000000020394", "k", "unnamed"),
    ("rust_helper_atomic_i8_try_cmpxchg_acquire", "k", "kernel-crate"),
    ("get_page_from_freelist", "k", "alloc"),
    ("memcpy_orig", "k", "copies"),
    ("blk_mq_submit_bio", "k", "kernel"),
    ("get_io_u", ".", "user"),
    ("0x0000000000000915", ".", "user"),
])
def test_kinds(sym, k, kind):
    assert p.kind_of(sym, k) == kind


def test_rust_names_start_at_the_crate():
    assert p.rust_name("_RNvMs_NtCs1jJRYLZDCDI_5rnvme7dma_mapNtB5_7Mapping3map") == "rnvme::dma_map::Mapping::map"
    assert p.rust_name("blk_mq_submit_bio") == "blk_mq_submit_bio"


def test_report_and_page(parsed, tmp_path):
    runs, syms = parsed
    text = p.report(runs, syms, 3, "abc1234")
    assert "**4k random, QD32**" in text
    assert "| a lock released" in text and "+10.0 |" in text
    assert "`rnvme::dma_map::Mapping::map`" in text
    page = tmp_path / "benchmarks.md"
    page.write_text(f"before\n{p.BEGIN}\nold\n{p.END}\nafter\n")
    pagesection.replace(str(page), p.BEGIN, p.END, "scripts/profile-nvme.sh", text)
    out = page.read_text()
    assert out.startswith("before\n") and out.endswith(f"{p.END}\nafter\n")
    assert "old" not in out and "abc1234" in out
    page.write_text("no markers\n")
    with pytest.raises(SystemExit):
        pagesection.replace(str(page), p.BEGIN, p.END, "scripts/profile-nvme.sh", text)


@pytest.mark.skipif(not shutil.which("c++filt"), reason="no c++filt (binutils)")
def test_demangled_reads_rust_v0_and_falls_back():
    sym = ("_RNvMs0_NtNtCs1jJRYLZDCDI_5rnvme4nvme5queueINtB5_9QueuePairINtNtB9_4disk8InFlight"
           "NtNtB9_5speed9SpeedDiskEE13issue_batchedB9_")
    names = p.demangled([sym, "nvme_poll_cq [nvme]", "_RNvMs_NtCs1jJRYLZDCDI_5rnvme7dma_mapNtB5_7Mapping3map"])
    assert names[sym] == "<rnvme::nvme::queue::QueuePair<rnvme::disk::InFlight<rnvme::speed::SpeedDisk>>>::issue_batched"
    assert names["nvme_poll_cq [nvme]"] == "nvme_poll_cq"
    # Cut short, c++filt cannot read it: the rough reading.
    assert names["_RNvMs_NtCs1jJRYLZDCDI_5rnvme7dma_mapNtB5_7Mapping3map"] == "rnvme::dma_map::Mapping::map"


def test_ties_in_the_function_table_are_ordered_by_name():
    runs = {("randread-qd1", w): {"ios": 1000, "ms": 1000, "cpus": 1} for w in ("ours", "c")}
    syms = {("randread-qd1", "ours"): {("zeta_fn", "k"): 1.0, ("alpha_fn", "k"): 1.0, ("mid_fn", "k"): 1.0},
            ("randread-qd1", "c"): {}}
    text = p.report(runs, syms, 12, "")
    assert text.index("`alpha_fn`") < text.index("`mid_fn`") < text.index("`zeta_fn`")
