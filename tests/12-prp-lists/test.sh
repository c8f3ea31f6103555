#!/bin/bash
# Stage 12 test (runs in the VM): one command moves many pages. At probe,
# rnvme reads the host's pattern through I/O queue 1 with every transfer
# length from one block to 128 KiB, starting at a page boundary, 512 bytes
# into a page and 512 bytes before a page's end, so that PRP2 is nothing, a
# second page, or a PRP list; each block is compared with what the host
# wrote. Then 128 KiB are written past the pattern and read back. QEMU's
# NVMe model checks every PRP entry (its trace must be clean). After the VM,
# after-vm.sh runs prp::describe's host property tests on the same tree.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

# Reads the probe makes with 512-byte blocks (transfers.rs: 1..=24 blocks,
# then every 7th, and the longest, at each of the 3 offsets), and how many
# of them touch more than two memory pages, so need a list.
READS=172 LISTED=132

hint "prp::describe: PRP1 = addr; PRP2 = 0, the next page, or list_addr with the list (make check runs its host tests: scripts/host-test.sh --tree steps --filter nvme_prp names the failing case)"
mark
load
expect_dmesg "$READS Reads of 1 to 256 blocks, at 3 places in the buffer, read the host's pattern ($LISTED through a PRP list)" \
	"^rnvme $BDF: PRP transfers: $READS Reads of 1 to 256 blocks at 3 offsets read the host's pattern \($LISTED with a PRP list\)"
hint "a Write's PRPs are built as a Read's: a wrong list shows as data that does not read back"
expect_dmesg "128 KiB written past the pattern in one command, then read back" \
	"^rnvme $BDF: PRP transfers: 128 KiB written at block 2048 and read back"
hint "unbind: stage 11's io_queues::stop"
mark
unload
expect_dmesg "unbind deletes the I/O queues" "^rnvme $BDF: deleted [0-9]+ I/O queue pairs"
reload_twice
finish
