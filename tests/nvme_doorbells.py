#!/usr/bin/python3
"""Check the doorbell writes QEMU's NVMe model saw against ring arithmetic.

QEMU traces every doorbell write (pci_nvme_mmio_doorbell_sq: the new SQ
tail, pci_nvme_mmio_doorbell_cq: the new CQ head). For one queue, in one
queue lifetime, a driver that submits S commands and consumes C completions
must have written SQ tails that advance by S in all, and CQ heads that
advance by C, each write moving forward (mod depth), and never more than
depth - 1 commands outstanding. With --one-at-a-time (a driver that waits
for each command before the next), every SQ write moves the tail by one and
every CQ write the head by one, so both are exactly 1, 2, ..., depth - 1,
0, 1, ...: a doorbell forgotten once and caught up later fails too.

Usage: nvme_doorbells.py TRACE FROM QID DEPTH SUBMITTED COMPLETED
           [--one-at-a-time]
FROM is a byte offset in TRACE (doorbell_mark, tests/lib.sh): only what
QEMU traced after it counts. Prints "ok ..." or what is wrong; a line is
named by its number after FROM.
"""
import re
import sys

SQ = re.compile(r"pci_nvme_mmio_doorbell_sq sqid (\d+) new_tail (\d+)")
CQ = re.compile(r"pci_nvme_mmio_doorbell_cq cqid (\d+) new_head (\d+)")


def main(trace, start, qid, depth, submitted, completed, one_at_a_time):
    with open(trace, "rb") as f:
        f.seek(start)
        lines = f.read().decode(errors="replace").splitlines()
    sq_pos = cq_pos = 0  # where the rings are, mod depth
    sq_total = cq_total = 0  # how far they moved in all
    sq_writes = cq_writes = 0
    for n, line in enumerate(lines, 1):
        m = SQ.search(line)
        if m and int(m[1]) == qid:
            tail = int(m[2])
            if tail >= depth:
                return f"line {n}: SQ {qid} tail {tail} is outside a ring of {depth}"
            step = (tail - sq_pos) % depth
            if step == 0:
                return f"line {n}: SQ {qid} tail {tail} rung again without a new command"
            if one_at_a_time and step != 1:
                return (f"line {n}: SQ {qid} tail {tail} after {sq_pos}: one command at a time "
                        f"moves it by 1, not {step} (a doorbell forgotten or a wrong value)")
            sq_pos, sq_total, sq_writes = tail, sq_total + step, sq_writes + 1
        m = CQ.search(line)
        if m and int(m[1]) == qid:
            head = int(m[2])
            if head >= depth:
                return f"line {n}: CQ {qid} head {head} is outside a ring of {depth}"
            step = (head - cq_pos) % depth
            if step == 0:
                return f"line {n}: CQ {qid} head {head} rung again without consuming an entry"
            if one_at_a_time and step != 1:
                return (f"line {n}: CQ {qid} head {head} after {cq_pos}: one completion at a time "
                        f"moves it by 1, not {step} (a doorbell forgotten or a wrong value)")
            cq_pos, cq_total, cq_writes = head, cq_total + step, cq_writes + 1
        if sq_total - cq_total > depth - 1:
            return f"line {n}: {sq_total - cq_total} commands outstanding on a ring of {depth} (at most {depth - 1})"
        if cq_total > sq_total:
            return f"line {n}: CQ {qid} consumed {cq_total} completions for {sq_total} commands"
    if sq_total != submitted or cq_total != completed:
        return (f"SQ {qid} tail moved {sq_total} times and CQ {qid} head {cq_total} times "
                f"({sq_writes} and {cq_writes} doorbell writes); expected {submitted} commands "
                f"and {completed} completions")
    if submitted < 2 * depth:
        return f"only {submitted} commands: the ring of {depth} did not wrap twice"
    return (f"ok: {sq_writes} SQ and {cq_writes} CQ doorbell writes, {submitted} commands "
            f"and {completed} completions, the ring of {depth} wrapped {submitted // depth} times")


args = sys.argv[1:]
flag = "--one-at-a-time" in args
args = [a for a in args if a != "--one-at-a-time"]
print(main(args[0], int(args[1]), *map(int, args[2:6]), flag))
