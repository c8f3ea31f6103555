"""rkw.nvmeinsns (scripts/insns-nvme.sh's report): instructions per I/O
from the TCG plugin's dumps, charged to functions, from made-up dumps."""

import pytest

from rkw import nvmeinsns as n
from rkw import pagesection

RAW = """RKW-INFO kernel 7.3.4, 2 vCPUs
RKW-INSNS randread-qd32 ours 100 0
RKW-INSNS randread-qd32 c 200 1
RKW-KSYM ffffffffa0000000 t rnvme_fn\t[rnvme]
RKW-KSYM ffffffffa0001000 t nvme_poll_cq\t[nvme]
RKW-KSYM ffffffffa0002000 T _RNvCs1jJRYLZDCDI_5rnvme4main\t[rnvme]
RKW-KSYM ffffffff81001000 T __x64_sys_sethostname
RKW-GUEST-DONE
"""
# System.map as built: the kernel's symbols 0x1000 lower than the guest saw
# them (as if the kernel had been moved).
SYSTEM_MAP = """ffffffff81000000 T _stext
ffffffff81000000 T __x64_sys_sethostname
ffffffff81000100 T memcpy_orig
ffffffff81000200 T blk_mq_end_request
ffffffff81000300 T default_idle
"""


@pytest.fixture
def setup(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW)
    sm = tmp_path / "System.map"
    sm.write_text(SYSTEM_MAP)
    counts = tmp_path / "insns"
    counts.mkdir()
    # rnvme: 100 I/Os; its module 2000 + 1000 instructions, memcpy 500,
    # the block layer 300, user 700, idle 100.
    (counts / "insns-0.txt").write_text("ffffffffa0000010 20 100\nffffffffa0002004 10 100\n"
                                        "ffffffff81001110 5 100\nffffffff81001200 3 100\n"
                                        "401000 7 100\nffffffff81001300 1 100\n")
    # C: 200 I/Os; its module 1000, the block layer 400 (2 per I/O), user 1200.
    (counts / "insns-1.txt").write_text("ffffffffa0001000 5 200\nffffffff81001204 2 200\n401000 6 200\n")
    runs, modsyms, check = n.parse(str(raw))
    name = n.Namer(n.symbols(str(sm), modsyms, check))
    return runs, name, str(counts), tmp_path


def test_parse_and_name(setup):
    runs, name, _, _ = setup
    assert runs[("randread-qd32", "ours")] == {"ios": 100, "dump": 0}
    assert name(0x401000) == "[user]"
    assert name(0xffffffffa0000010) == "rnvme_fn [rnvme]"
    # System.map's addresses moved by the guest's sethostname (0x1000).
    assert name(0xffffffff81001110) == "memcpy_orig"
    assert name(0xffffffff81001204) == "blk_mq_end_request"


def test_per_io_and_kinds(setup):
    runs, name, counts, _ = setup
    a = n.load(f"{counts}/insns-0.txt", 100, name)["insns"]
    assert a["rnvme_fn [rnvme]"] == 20 and a["memcpy_orig"] == 5 and a["[user]"] == 7
    assert n.kind_of("rnvme_fn [rnvme]") == "driver" and n.kind_of("nvme_poll_cq [nvme]") == "driver"
    assert n.kind_of("memcpy_orig") == "copies" and n.kind_of("default_idle") == "idle"
    assert n.kind_of("_RNvCs1_6kernel3foo") == "kernel-crate" and n.kind_of("[user]") == "user"
    assert n.kind_of("blk_mq_end_request") == "kernel"


def test_report_and_page(setup):
    runs, name, counts, tmp = setup
    text = n.report(runs, counts, name, 4, "abc1234")
    assert "**4k random, QD32** (100 I/Os for `rnvme`, 200 for C): 46 against 13 instructions per I/O" in text
    # Blocks: rnvme's 6 blocks ran 100 times each for 100 I/Os, C's 3 ran
    # 200 times for 200 I/Os.
    assert "in 6 against 3 translated blocks run per I/O (2.00×)" in text
    assert "| the driver (rnvme's module; C's `nvme` and `nvme_core`) | 30 | 5 | +25 |" in text
    assert "| memory copies and fills (`memcpy`, `memset`) | 5 | 0 | +5 |" in text
    assert "`rnvme_fn` [rnvme] | 20 | 0 | +20 |" in text
    assert "abc1234" in text
    # Calls: C's first block begins where nvme_poll_cq does (200 runs, 200
    # I/Os); of rnvme's, those where blk_mq_end_request and default_idle
    # begin.
    assert "| the driver (rnvme's module; C's `nvme` and `nvme_core`) | 0.0 | 1.0 | -1.0 |" in text
    assert "| the rest of the kernel (block layer, aio, system calls, interrupts, scheduler) | 1.0 | 0.0 | +1.0 |" in text
    assert "| in the kernel, in all | 2.0 | 1.0 | +1.0 |" in text
    page = tmp / "benchmarks.md"
    page.write_text(f"before\n{n.BEGIN}\nold\n{n.END}\nafter\n")
    pagesection.replace(str(page), n.BEGIN, n.END, "scripts/insns-nvme.sh", text)
    out = page.read_text()
    assert out.startswith(f"before\n{n.BEGIN}\n") and out.endswith(f"{n.END}\nafter\n") and "old" not in out


def test_main_says_what_is_missing(setup, capsys):
    _, _, counts, tmp = setup
    empty = tmp / "empty.txt"
    empty.write_text("RKW-GUEST-DONE\n")
    assert n.main([str(empty), "--counts", counts, "--system-map", str(tmp / "System.map")]) == 1
    assert "no RKW-INSNS line" in capsys.readouterr().err


def test_calls_are_the_runs_of_blocks_that_begin_a_function(setup, tmp_path):
    _, name, _, _ = setup
    dump = tmp_path / "calls.txt"
    # rnvme_fn entered 300 times, a block inside it 50 times, memcpy_orig
    # (0x81000100 in System.map, 0x1000 higher in the guest) entered 100
    # times, and user space (never counted as calls).
    dump.write_text("ffffffffa0000000 4 300\nffffffffa0000010 9 50\n"
                    "ffffffff81001100 2 100\n401000 3 1000\n")
    calls = n.load(str(dump), 100, name)["calls"]
    assert calls == {"rnvme_fn [rnvme]": 3.0, "memcpy_orig": 1.0}


def test_memory_and_locked_counts(setup, tmp_path):
    runs, name, counts, _ = setup
    # Seven columns (tcg-insns.c's): address, instructions, runs, locked and
    # interrupt-enabling instructions per run, memory accesses of all runs,
    # rep string instructions per run.
    # rnvme (100 I/Os): its module 2 locked per run, 800 accesses in all;
    # memcpy 300 accesses; a block with popf. C (200 I/Os): 400 accesses.
    (tmp_path / "insns-0.txt").write_text("ffffffffa0000010 20 100 2 0 800 1\n"
                                          "ffffffff81001110 5 100 0 0 300\n"
                                          "ffffffff81001200 3 100 0 1 100\n")
    (tmp_path / "insns-1.txt").write_text("ffffffffa0001000 5 200 1 0 400\n")
    a = n.load(str(tmp_path / "insns-0.txt"), 100, name)
    assert a["mems"] == {"rnvme_fn [rnvme]": 8.0, "memcpy_orig": 3.0, "blk_mq_end_request": 1.0}
    assert a["locked"] == {"rnvme_fn [rnvme]": 2.0} and a["irq_on"] == {"blk_mq_end_request": 1.0}
    # A seventh column: rep string instructions per run (none in six).
    assert a["rep"] == {"rnvme_fn [rnvme]": 1.0}
    text = n.report(runs, str(tmp_path), name, 4, "")
    assert "| memory accesses (loads and stores) | 12.0 | 2.0 | 6.00 |" in text
    assert "| of them, by the driver | 8.0 | 2.0 | 4.00 |" in text
    assert "| locked instructions (atomics) | 2.0 | 1.0 | 2.00 |" in text
    assert "| instructions that may turn interrupts on (`sti`, `popf`) | 1.0 | 0.0 | – |" in text
    assert "| steps of `rep` string instructions (`rep movsq`: QEMU runs each as a block) | 1.0 | 0.0 | – |" in text
    # Dumps of three columns (an older plugin's) give no such table.
    assert "memory accesses" not in n.report(runs, counts, name, 4, "")
