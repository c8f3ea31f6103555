#!/usr/bin/python3
"""nvme-cli's view of a controller, recorded and compared between two drivers
(stage 19 test: rnvme's char devices against the C driver's).

  nvme_cli.py record CTRL_NODE NS_NODE OUT.json
      runs the nvme-cli commands of COMMANDS below against the controller node
      (e.g. /dev/nvme0, /dev/rnvme0) and the namespace node (/dev/ng0n1,
      /dev/rng0n1), plus a write/read round trip of 4 KiB at a block range
      the test owns (61 MiB into namespace 1, written back afterwards), and
      stores exit codes and parsed outputs in OUT.json
  nvme_cli.py compare A.json B.json
      prints "ok <command>" or "not-ok <command>: <field>: A vs B; ..." per
      command, ignoring only the fields of IGNORED; exits 1 if any differ

Written for the nvme-cli of Debian bookworm, 2.3 (libnvme 1.3): there
get-feature has no JSON output (-H, parsed here); every command takes a char
device node; read and write need the namespace node, or the controller node
with -n 1 (without -n they ask NVME_IOCTL_ID, which a controller node
refuses with ENOTTY); they open the node O_RDONLY, even to write.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

TEST_OFFSET = 61 << 20  # the test's 4 KiB: 61 MiB into namespace 1
TEST_BYTES = 4096

# The commands, by name: nvme-cli's arguments ({ctrl} and {ns} are the nodes)
# and how to parse what it prints.
COMMANDS = [
    ("id-ctrl", ["id-ctrl", "{ctrl}", "-o", "json"], "json"),
    ("id-ns -n 1 on the controller node", ["id-ns", "{ctrl}", "-n", "1", "-o", "json"], "json"),
    ("id-ns on the namespace node", ["id-ns", "{ns}", "-o", "json"], "json"),
    ("smart-log", ["smart-log", "{ctrl}", "-o", "json"], "json"),
    ("get-feature -f 7 (Number of Queues)", ["get-feature", "{ctrl}", "-f", "7", "-H"], "feature"),
    ("get-ns-id on the namespace node", ["get-ns-id", "{ns}"], "nsid"),
    ("get-ns-id on the controller node (fails: NVME_IOCTL_ID is ENOTTY there)", ["get-ns-id", "{ctrl}"], "nsid"),
]

# Fields that legitimately differ between two runs on the same controller,
# whichever the driver (command name -> field -> why). Decided by recording
# the C driver (Linux 7.3, QEMU 7.2) three times: twice in one boot with
# ioctls.py's and nvme-cli's I/O in between (the four workload counters
# differed, nothing else), once in a second boot (nothing differed from the
# first boot's first record: the same boot does the same I/O).
IGNORED = {
    "smart-log": {
        # QEMU counts every command of the namespace since the device was
        # created: the driver's own probe and partition-scan reads, fio,
        # this test's round trips, another driver loaded before.
        "data_units_read": "counts what was read since QEMU created the controller",
        "data_units_written": "counts what was written since QEMU created the controller",
        "host_read_commands": "counts the Reads since QEMU created the controller",
        "host_write_commands": "counts the Writes since QEMU created the controller",
        # Not seen to differ (QEMU gives hours since the controller was
        # created: 0 in any run under an hour), but a clock by definition.
        # controller_busy_time is not here: QEMU 7.2 keeps it at 0.
        "power_on_hours": "a clock: hours since QEMU created the controller",
    },
}


def nvme(argv):
    """nvme-cli's exit code, stdout and stderr."""
    try:
        p = subprocess.run(["nvme"] + argv, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", "nvme did not finish within 120 s"


def parse_feature(text):
    """get-feature -H: 'get-feature:0x07 (Number of Queues), Current
    value:0x003f003f' and one indented 'name: value' line per field."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"get-feature:(\S+) \(([^)]*)\), (\w+) value:(\S+)", line)
        if m:
            out.update(fid=m[1], name=m[2], sel=m[3], value=m[4])
        elif (m := re.match(r"\s+(.*?)\s*:\s*(.*?)\s*$", line)):
            out[m[1]] = m[2]
    return out


def parse(kind, text):
    try:
        if kind == "json":
            return json.loads(text)
        if kind == "feature":
            return parse_feature(text)
        if kind == "nsid":  # "ng0n1: namespace-id:1"
            m = re.search(r"namespace-id:(\d+)", text)
            return {"nsid": int(m[1])} if m else {"unparsed": text}
    except ValueError:
        pass
    return {"unparsed": text}


def round_trip(node, extra, lba, count, data, tmp):
    """nvme write of data at lba through node, then nvme read of it back."""
    src, dst = os.path.join(tmp, "w.bin"), os.path.join(tmp, "r.bin")
    with open(src, "wb") as f:
        f.write(data)
    io = ["-s", str(lba), "-c", str(count), "-z", str(len(data))]
    w = nvme(["write", node] + extra + io + ["-d", src])
    if os.path.exists(dst):
        os.unlink(dst)
    r = nvme(["read", node] + extra + io + ["-d", dst])
    got = open(dst, "rb").read() if os.path.exists(dst) else b""
    return {"write": {"rc": w[0], "stderr": w[2].strip()}, "read": {"rc": r[0], "stderr": r[2].strip()},
            "data": "matches" if got == data else f"differs ({len(got)} bytes read back)"}


def pattern(tag, bs, lba):
    return b"".join((b"rkw-10 nvme-cli %s lba %d " % (tag, lba + b)).ljust(bs, b"*")
                    for b in range(TEST_BYTES // bs))


def record(ctrl, ns, out_file):
    rec = {"nvme version": nvme(["version"])[1].strip(), "nodes": {"ctrl": ctrl, "ns": ns}, "commands": {}}
    for name, argv, kind in COMMANDS:
        argv = [a.format(ctrl=ctrl, ns=ns) for a in argv]
        rc, out, err = nvme(argv)
        rec["commands"][name] = {"command": "nvme " + " ".join(argv), "rc": rc, "output": parse(kind, out),
                                 "stderr": err.strip().replace(ctrl, "{ctrl}").replace(ns, "{ns}")}
    # The round trips, in 4 KiB the test owns; their old content written back.
    ns_json = rec["commands"]["id-ns on the namespace node"]["output"]
    try:
        bs = 1 << ns_json["lbafs"][ns_json["flbas"] & 0xF]["ds"]
    except (KeyError, IndexError, TypeError):
        bs = 512
    lba, count = TEST_OFFSET // bs, TEST_BYTES // bs - 1  # -c is zero-based
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "saved.bin")
        io = ["-s", str(lba), "-c", str(count), "-z", str(TEST_BYTES)]
        rc, _, err = nvme(["read", ns] + io + ["-d", saved])
        for name, node, extra, tag in (
                ("write and read on the namespace node", ns, [], b"ns"),
                ("write and read on the controller node -n 1", ctrl, ["-n", "1"], b"ctrl")):
            entry = round_trip(node, extra, lba, count, pattern(tag, bs, lba), tmp)
            entry["command"] = f"nvme write|read {node} {' '.join(extra + io)} -d FILE"
            rec["commands"][name] = entry
        rc_w = None
        if rc == 0 and os.path.getsize(saved) == TEST_BYTES:
            rc_w = nvme(["write", ns] + io + ["-d", saved])[0]
        if rc_w != 0:
            rec["restore"] = f"the test's 4 KiB not written back: read exited {rc} ({err.strip()}), write {rc_w}"
        # Read on the controller node without -n: nvme-cli needs a namespace ID.
        rc, _, err = nvme(["read", ctrl] + io + ["-d", os.path.join(tmp, "x.bin")])
        rec["commands"]["read on the controller node without -n (fails)"] = {
            "command": f"nvme read {ctrl} {' '.join(io)} -d FILE", "rc": rc, "stderr": err.strip()}
    with open(out_file, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"recorded {len(rec['commands'])} commands in {out_file}")
    return 0 if "restore" not in rec else 1


def flatten(value, path=""):
    """{"a": {"b": [1, 2]}} -> {"a.b[0]": 1, "a.b[1]": 2}"""
    if isinstance(value, dict):
        items = {}
        for k, v in value.items():
            items.update(flatten(v, f"{path}.{k}" if path else k))
        return items
    if isinstance(value, list):
        items = {}
        for i, v in enumerate(value):
            items.update(flatten(v, f"{path}[{i}]"))
        return items
    return {path: value}


def compare(file_a, file_b):
    a, b = json.load(open(file_a))["commands"], json.load(open(file_b))["commands"]
    failed = 0
    for name in list(a) + [n for n in b if n not in a]:
        if name not in a or name not in b:
            failed += 1
            print(f"not-ok {name}: only in {file_a if name in a else file_b}")
            continue
        # The command line names the nodes: never compared.
        fa = {k: v for k, v in flatten(a[name]).items() if k != "command"}
        fb = {k: v for k, v in flatten(b[name]).items() if k != "command"}
        ignored = IGNORED.get(name, {})
        diffs = [f"{k}: {fa.get(k, '(none)')!r} vs {fb.get(k, '(none)')!r}" for k in sorted(set(fa) | set(fb))
                 if k.removeprefix("output.") not in ignored and fa.get(k) != fb.get(k)]
        if diffs:
            failed += 1
            # The command's own failure first (its exit status and error),
            # then at most a few fields: a command rnvme refused differs in
            # every field, and one line of all of them says nothing.
            first = [d for d in diffs if d.startswith(("rc:", "stderr:"))]
            rest = [d for d in diffs if d not in first]
            shown = first + rest[:4]
            more = f"; and {len(diffs) - len(shown)} more field(s)" if len(diffs) > len(shown) else ""
            print(f"not-ok {name}: " + "; ".join(shown) + more)
        else:
            note = f" (ignored: {', '.join(sorted(ignored))})" if ignored else ""
            print(f"ok {name}{note}")
    return 1 if failed else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "record":
        return record(argv[2], argv[3], argv[4])
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    sys.exit(__doc__.split("\n\n")[1])


sys.exit(main(sys.argv))
