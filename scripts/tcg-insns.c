// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for scripts/insns-nvme.sh: counts the guest
 * instructions executed in each translation block (TB), by the TB's
 * address, with no sampling. Under TCG, time follows the instructions the
 * guest executes and the memory they access more than anything else, and
 * unlike `perf` in the guest this sees inside interrupt handlers and
 * regions with interrupts off.
 *
 *   -plugin tcg-insns.so,arg=reset=ADDR,arg=dump=ADDR,arg=dir=DIR
 *
 * A TB that starts at reset=ADDR zeroes the counts when it runs; one at
 * dump=ADDR writes them to DIR/insns-N.txt (N = 0, 1, ...: "address
 * instructions-in-the-TB times-run locked irq-on memory-accesses rep" per
 * line, for the TBs that ran) and zeroes them. Besides its instructions,
 * each TB says what under TCG costs more than an instruction: its locked
 * instructions (a `lock` prefix, or `xchg` with memory: each an atomic
 * helper call with 2 vCPUs), the instructions that may turn interrupts
 * on (`sti`, `popf`: each ends the TB), and its `rep` string instructions
 * (QEMU runs one element per TB run: a 128-byte `rep movsq` is 16 runs),
 * all read from its bytes; and the guest memory its runs accessed,
 * counted as they run (each access a lookup in QEMU's software TLB). The
 * guest runs the reset and dump addresses on purpose (two system calls
 * nothing else makes while it measures: sethostname, setdomainname).
 *
 * Written against QEMU 7.2's plugin API (version 1), with its functions
 * declared here: Debian ships no qemu-plugin.h. The counts are added
 * inline, by every vCPU, without atomics: an estimate, close enough when
 * the workload runs for seconds.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
struct qemu_plugin_insn;
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_mem_rw rw,
					  enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

/* One per translation (a TB translated again gets another). */
struct tb_count {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs;
	uint64_t locked;	/* per run: read from the TB's bytes */
	uint64_t irq_on;	/* per run: sti, popf */
	uint64_t rep;		/* per run: rep (or repne) string instructions */
	uint64_t mems;		/* all runs: counted as they run */
};

#define CHUNK 65536
static struct tb_count **chunks;
static size_t nchunks, used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t reset_at, dump_at;
static char dir[512] = ".";
static int dumps;

/* Called with the lock held. */
static struct tb_count *new_count(void)
{
	if (used == nchunks * CHUNK) {
		struct tb_count **c = realloc(chunks, (nchunks + 1) * sizeof(*c));

		if (!c)
			return NULL;
		chunks = c;
		chunks[nchunks] = calloc(CHUNK, sizeof(struct tb_count));
		if (!chunks[nchunks])
			return NULL;
		nchunks++;
	}
	used++;
	return &chunks[(used - 1) / CHUNK][(used - 1) % CHUNK];
}

/* Writes the counts to DIR/insns-N.txt (if file is set), then zeroes them. */
static void flush(int write)
{
	char path[600];
	FILE *f = NULL;

	pthread_mutex_lock(&lock);
	if (write) {
		snprintf(path, sizeof(path), "%s/insns-%d.txt", dir, dumps++);
		f = fopen(path, "w");
		if (!f)
			fprintf(stderr, "tcg-insns: cannot write %s\n", path);
	}
	for (size_t i = 0; i < used; i++) {
		struct tb_count *c = &chunks[i / CHUNK][i % CHUNK];

		if (c->runs && f)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				c->vaddr, c->insns, c->runs, c->locked, c->irq_on, c->mems, c->rep);
		c->runs = 0;
		c->mems = 0;
	}
	if (f)
		fclose(f);
	pthread_mutex_unlock(&lock);
}

static void on_reset(unsigned int vcpu, void *userdata)
{
	flush(0);
}

static void on_dump(unsigned int vcpu, void *userdata)
{
	flush(1);
}

/*
 * What x86 instruction `b` (`n` bytes) is, as far as the counts care: 1 if
 * it is locked (a lock prefix, or xchg with a memory operand), 2 if it may
 * turn interrupts on (sti, popf), 3 if it is a rep (or repne) string
 * instruction (movs, stos, cmps, scas, lods, ins, outs), else 0.
 */
static int kind_of(const uint8_t *b, size_t n)
{
	size_t i = 0;
	int lock = 0, rep = 0;

	/* Legacy prefixes, then a REX prefix. */
	for (; i < n; i++) {
		switch (b[i]) {
		case 0xf0:
			lock = 1;
			continue;
		case 0xf2: case 0xf3:
			rep = 1;
			continue;
		case 0x66: case 0x67:
		case 0x2e: case 0x3e: case 0x26: case 0x64: case 0x65: case 0x36:
			continue;
		}
		break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= n)
		return 0;
	if (lock)
		return 1;
	if ((b[i] == 0x86 || b[i] == 0x87) && i + 1 < n && (b[i + 1] >> 6) != 3)
		return 1;
	if (b[i] == 0xfb || b[i] == 0x9d)
		return 2;
	if (rep && ((b[i] >= 0xa4 && b[i] <= 0xa7) || (b[i] >= 0xaa && b[i] <= 0xaf) ||
		    (b[i] >= 0x6c && b[i] <= 0x6f)))
		return 3;
	return 0;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct tb_count *c;
	size_t n = qemu_plugin_tb_n_insns(tb);

	pthread_mutex_lock(&lock);
	c = new_count();
	if (c) {
		c->vaddr = qemu_plugin_tb_vaddr(tb);
		c->insns = n;
	}
	pthread_mutex_unlock(&lock);
	if (!c)
		return;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int kind = kind_of(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));

		c->locked += kind == 1;
		c->irq_on += kind == 2;
		c->rep += kind == 3;
		qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_RW, QEMU_PLUGIN_INLINE_ADD_U64,
						     &c->mems, 1);
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &c->runs, 1);
	if (c->vaddr == reset_at)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_reset, QEMU_PLUGIN_CB_NO_REGS, NULL);
	if (c->vaddr == dump_at)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "reset=", 6))
			reset_at = strtoull(argv[i] + 6, NULL, 16);
		else if (!strncmp(argv[i], "dump=", 5))
			dump_at = strtoull(argv[i] + 5, NULL, 16);
		else if (!strncmp(argv[i], "dir=", 4))
			snprintf(dir, sizeof(dir), "%s", argv[i] + 4);
		else {
			fprintf(stderr, "tcg-insns: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!reset_at || !dump_at) {
		fprintf(stderr, "tcg-insns: reset= and dump= are needed\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
