"""The fio workloads the NVMe measurements run (scripts/nvme-drivers-guest.sh
has their fio arguments), as the reports name them: bench-nvme-report.py,
and the profile's and the instruction count's (rkw.nvmeprofile,
rkw.nvmeinsns)."""

# workload: (label in the table and plot, unit, what fio measures)
WL = {
    "randread-qd1": ("4k random, QD1", "IOPS", "4k random reads, one at a time (one job)"),
    "randread-qd32": ("4k random, QD32", "IOPS", "4k random reads, 32 in flight (one job)"),
    "randread-qd32-jobs": ("4k random, QD32 × 2 jobs", "IOPS",
                           "4k random reads, 32 in flight per job, one job pinned to each vCPU"),
    "randread-qd32-batch16": ("4k random, QD32, batch 16", "IOPS",
                              "4k random reads, 32 in flight, submitted 16 per `io_submit` "
                              "(`--iodepth_batch_submit=16`): blk-mq hands the driver 16 requests together, "
                              "the last one marked `is_last`"),
    "seqread-128k": ("128k sequential, QD8", "MB/s", "128 KiB sequential reads, 8 in flight (one job)"),
    "randwrite-qd32": ("4k random write, QD32", "IOPS",
                       "4k random writes, 32 in flight (one job), into the controller's volatile write cache, "
                       "which both drivers leave on (QEMU's `null-co` drops the data)"),
}


def titles():
    """workload: its label."""
    return {wl: v[0] for wl, v in WL.items()}
