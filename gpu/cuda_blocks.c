/*
 * memsim's CUDA kernels as thread blocks in flight: see cuda_blocks.h. Each kernel is its grid
 * and, per block, a number of steps and the loads and stores of each step, read off
 * gpu/cuda/attn_gpu.cu:
 *
 *  scores   block (x: 16 keys, y: 16 queries, z: batch x head); step k0 (16 of d): 16 Q row
 *           pieces and 16 K row pieces of 16 elements; the last also stores the 16 x 16 S tile.
 *  softmax  block (x: query row, y: batch x head); step 0 reads the row (all N_kv scores),
 *           step 1 its visible part (the sum), step 2 that part again and stores the row.
 *  av       block (x: 16 of d, y: 16 queries, z: batch x head); step j0 (16 of N_kv): 16 P row
 *           pieces and 16 V row pieces; the last also stores the 16 x 16 O tile.
 *  flash2   block (x: 64 queries, y: batch x head); step j: K and V rows [64 j, 64 j + 64) up
 *           to the last key the block sees (causal: its last row's position); the first step
 *           also loads the block's Q rows, the last stores its O rows and logsumexp.
 */

#include "gpu/cuda_blocks.h"

#include <stdio.h>
#include <stdlib.h>

#define TS 16    /* attn_gpu.cu: the naive products' tile edge */
#define FL_B 64  /* attn_gpu.cu: flash2's FL_BR = FL_BC */
#define THREADS 256

/* H100 SXM5: 132 SMs, 64K registers, 228 KiB of shared memory, 2048 threads an SM; 1 KiB of each
 * block's shared memory is the driver's (ncu's launch__shared_mem_per_block_driver). */
const struct cuda_blocks_gpu cuda_blocks_h100 = { 132, 65536, 233472, 2048, 1024 };

/* Registers a thread, as ptxas allocated them for sm_90 (ncu's
 * launch__registers_per_thread_allocated, 03313eb:docs/gpu-run/grid/occupancy.csv). */
static const uint32_t regs_scores = 40, regs_softmax = 24, regs_av = 32, regs_flash2 = 40;

enum launch_kind { SCORES, SOFTMAX, AV, FLASH2 };

/* Array base addresses: far apart and line aligned. */
struct layout {
	uint64_t Q, K, V, O, S, lse;
};

struct kernel {
	const struct attn_config *c;
	enum launch_kind kind;
	uint64_t N, Nk, d, s;
	uint64_t grid[3];
	struct layout at;
	struct cache *cache;    /* the L2 model: this, */
	struct l2sets *hashed;  /* or this */
	unsigned side;          /* the SM side of the slot stepping now */
};

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static enum launch_kind
launch_kind(const struct attn_config *c, unsigned launch)
{
	if (c->kernel == ATTN_FLASH2)
		return FLASH2;
	return launch == 0 ? SCORES : launch == 1 ? SOFTMAX : AV;
}

unsigned
cuda_blocks_launches(const struct attn_config *c)
{
	return c->kernel == ATTN_NAIVE ? 3 : c->kernel == ATTN_FLASH2 ? 1 : 0;
}

/* flash2's dynamic shared memory (attn_gpu.cu's g->smem). */
static uint64_t
flash2_smem(uint64_t d)
{
	return (3 * FL_B * d + FL_B * d + FL_B * FL_B + 3 * FL_B) * sizeof(float);
}

uint32_t
cuda_blocks_per_sm(const struct attn_config *c, unsigned launch, const struct cuda_blocks_gpu *g)
{
	static const uint64_t static_smem[] = { 2 * TS * (TS + 1) * 4, THREADS * 4,
						2 * TS * (TS + 1) * 4, 0 };
	const uint32_t regs[] = { regs_scores, regs_softmax, regs_av, regs_flash2 };
	enum launch_kind k = launch_kind(c, launch);
	uint64_t smem = static_smem[k] + (k == FLASH2 ? flash2_smem(c->d) : 0) +
			g->smem_per_block_reserved;
	uint64_t n = g->threads_per_sm / THREADS;

	if (g->regs_per_sm / (regs[k] * THREADS) < n)
		n = g->regs_per_sm / (regs[k] * THREADS);
	if (g->smem_per_sm / smem < n)
		n = g->smem_per_sm / smem;
	return n ? (uint32_t)n : 1;
}

/* [addr, addr + bytes) through the L2 model; the hashed one takes each 128-byte line as a
 * tile of its own. */
static void
access_bytes(struct kernel *k, uint64_t addr, uint64_t bytes, bool write)
{
	if (!bytes)
		return;
	if (!k->hashed) {
		cache_access(k->cache, addr, (uint32_t)bytes, write ? CACHE_OP_STORE : CACHE_OP_LOAD,
			     1);
		return;
	}
	for (uint64_t l = addr / L2SETS_LINE; l <= (addr + bytes - 1) / L2SETS_LINE; l++)
		l2sets_access(k->hashed, l, L2SETS_LINE, 0, write, k->side);
}

static void
load(struct kernel *k, uint64_t addr, uint64_t bytes)
{
	access_bytes(k, addr, bytes, false);
}

static void
store(struct kernel *k, uint64_t addr, uint64_t bytes)
{
	access_bytes(k, addr, bytes, true);
}

/* Block idx's coordinates, x fastest. */
static void
coords(const struct kernel *k, uint64_t idx, uint64_t *x, uint64_t *y, uint64_t *z)
{
	*x = idx % k->grid[0];
	*y = idx / k->grid[0] % k->grid[1];
	*z = idx / (k->grid[0] * k->grid[1]);
}

/* The causal limit of query row i: keys [0, lim) are visible. */
static uint64_t
visible(const struct kernel *k, uint64_t i)
{
	return k->c->causal ? i + 1 + (k->Nk - k->N) : k->Nk;
}

static uint64_t
flash2_tiles(const struct kernel *k, uint64_t x)
{
	uint64_t r0 = x * FL_B, nr = k->N - r0 < FL_B ? k->N - r0 : FL_B;

	return ceil_div(visible(k, r0 + nr - 1), FL_B);
}

static uint64_t
block_steps(const struct kernel *k, uint64_t idx)
{
	uint64_t x, y, z;

	coords(k, idx, &x, &y, &z);
	switch (k->kind) {
	case SCORES:
		return ceil_div(k->d, TS);
	case SOFTMAX:
		return 3;
	case AV:
		return ceil_div(k->Nk, TS);
	default:
		return flash2_tiles(k, x);
	}
}

/* Where row r of head hd (of nh heads, n rows of w elements) of array base starts. */
static uint64_t
row_at(const struct kernel *k, uint64_t base, uint64_t b, uint64_t hd, uint64_t nh, uint64_t n,
       uint64_t w, uint64_t r)
{
	return base + ((b * nh + hd) * n + r) * w * k->s;
}

/* Pieces [col, col + width) of rows [r0, r0 + 16) (those below rows) of a head. */
static void
pieces(struct kernel *k, bool st, uint64_t head_base, uint64_t r0, uint64_t rows, uint64_t w,
       uint64_t col, uint64_t width)
{
	for (uint64_t r = r0; r < r0 + TS && r < rows; r++) {
		uint64_t at = head_base + (r * w + col) * k->s;

		if (st)
			store(k, at, width * k->s);
		else
			load(k, at, width * k->s);
	}
}

static void
step_scores(struct kernel *k, uint64_t x, uint64_t y, uint64_t z, uint64_t step, bool last)
{
	const struct attn_config *c = k->c;
	uint64_t b = z / c->heads, h = z % c->heads, kvh = h / (c->heads / c->kv_heads);
	uint64_t k0 = step * TS, kw = k->d - k0 < TS ? k->d - k0 : TS;
	uint64_t col0 = x * TS, nc = k->Nk - col0 < TS ? k->Nk - col0 : TS;

	pieces(k, false, row_at(k, k->at.Q, b, h, c->heads, k->N, k->d, 0), y * TS, k->N, k->d, k0,
	       kw);
	pieces(k, false, row_at(k, k->at.K, b, kvh, c->kv_heads, k->Nk, k->d, 0), x * TS, k->Nk,
	       k->d, k0, kw);
	if (last)
		pieces(k, true, k->at.S + z * k->N * k->Nk * k->s, y * TS, k->N, k->Nk, col0, nc);
}

static void
step_av(struct kernel *k, uint64_t x, uint64_t y, uint64_t z, uint64_t step, bool last)
{
	const struct attn_config *c = k->c;
	uint64_t b = z / c->heads, h = z % c->heads, kvh = h / (c->heads / c->kv_heads);
	uint64_t j0 = step * TS, jw = k->Nk - j0 < TS ? k->Nk - j0 : TS;
	uint64_t col0 = x * TS, cw = k->d - col0 < TS ? k->d - col0 : TS;

	pieces(k, false, k->at.S + z * k->N * k->Nk * k->s, y * TS, k->N, k->Nk, j0, jw);
	pieces(k, false, row_at(k, k->at.V, b, kvh, c->kv_heads, k->Nk, k->d, 0), j0, k->Nk, k->d,
	       col0, cw);
	if (last)
		pieces(k, true, row_at(k, k->at.O, b, h, c->heads, k->N, k->d, 0), y * TS, k->N,
		       k->d, col0, cw);
}

static void
step_softmax(struct kernel *k, uint64_t x, uint64_t y, uint64_t step)
{
	uint64_t row = k->at.S + (y * k->N + x) * k->Nk * k->s;
	uint64_t lim = visible(k, x);

	if (step == 0) {
		load(k, row, k->Nk * k->s);
		return;
	}
	load(k, row, lim * k->s);
	if (step == 2)
		store(k, row, k->Nk * k->s);
}

static void
step_flash2(struct kernel *k, uint64_t x, uint64_t y, uint64_t step, bool last)
{
	const struct attn_config *c = k->c;
	uint64_t b = y / c->heads, h = y % c->heads, kvh = h / (c->heads / c->kv_heads);
	uint64_t r0 = x * FL_B, nr = k->N - r0 < FL_B ? k->N - r0 : FL_B;
	uint64_t c0 = step * FL_B, nc = k->Nk - c0 < FL_B ? k->Nk - c0 : FL_B;

	if (step == 0)
		load(k, row_at(k, k->at.Q, b, h, c->heads, k->N, k->d, r0), nr * k->d * k->s);
	load(k, row_at(k, k->at.K, b, kvh, c->kv_heads, k->Nk, k->d, c0), nc * k->d * k->s);
	load(k, row_at(k, k->at.V, b, kvh, c->kv_heads, k->Nk, k->d, c0), nc * k->d * k->s);
	if (last) {
		store(k, row_at(k, k->at.O, b, h, c->heads, k->N, k->d, r0), nr * k->d * k->s);
		store(k, k->at.lse + (y * k->N + r0) * sizeof(float), nr * sizeof(float));
	}
}

static void
block_step(struct kernel *k, uint64_t idx, uint64_t step, bool last)
{
	uint64_t x, y, z;

	coords(k, idx, &x, &y, &z);
	switch (k->kind) {
	case SCORES:
		step_scores(k, x, y, z, step, last);
		break;
	case SOFTMAX:
		step_softmax(k, x, y, step);
		break;
	case AV:
		step_av(k, x, y, z, step, last);
		break;
	default:
		step_flash2(k, x, y, step, last);
	}
}

static void
kernel_init(struct kernel *k, const struct attn_config *c, unsigned launch)
{
	const uint64_t bh = c->batch * c->heads, align = (uint64_t)1 << 30;
	uint64_t q_bytes, kv_bytes;

	k->c = c;
	k->kind = launch_kind(c, launch);
	k->N = c->N;
	k->Nk = attn_nkv(c);
	k->d = c->d;
	k->s = dtype_bytes(c->dtype);
	q_bytes = bh * k->N * k->d * k->s;
	kv_bytes = c->batch * c->kv_heads * k->Nk * k->d * k->s;
	/* each array from a gigabyte boundary after the last */
	k->at.Q = align;
	k->at.K = ceil_div(k->at.Q + q_bytes, align) * align;
	k->at.V = ceil_div(k->at.K + kv_bytes, align) * align;
	k->at.O = ceil_div(k->at.V + kv_bytes, align) * align;
	k->at.lse = ceil_div(k->at.O + q_bytes, align) * align;
	k->at.S = ceil_div(k->at.lse + bh * k->N * sizeof(float), align) * align;
	switch (k->kind) {
	case SCORES:
		k->grid[0] = ceil_div(k->Nk, TS), k->grid[1] = ceil_div(k->N, TS), k->grid[2] = bh;
		break;
	case SOFTMAX:
		k->grid[0] = k->N, k->grid[1] = bh, k->grid[2] = 1;
		break;
	case AV:
		k->grid[0] = ceil_div(k->d, TS), k->grid[1] = ceil_div(k->N, TS), k->grid[2] = bh;
		break;
	default:
		k->grid[0] = ceil_div(k->N, FL_B), k->grid[1] = bh, k->grid[2] = 1;
	}
}

struct slot {
	uint64_t block, step, steps;
	bool busy;
};

/* The rounds: each busy slot does one step; a finished block's slot takes the next block. */
static void
run_rounds(struct kernel *k, struct slot *slots, uint32_t nslots, uint64_t blocks)
{
	uint64_t next = 0, busy = 0;

	for (uint32_t i = 0; i < nslots && next < blocks; i++, next++, busy++)
		slots[i] = (struct slot){ next, 0, block_steps(k, next), true };
	while (busy) {
		for (uint32_t i = 0; i < nslots; i++) {
			struct slot *s = &slots[i];

			if (!s->busy)
				continue;
			k->side = i % 2;
			block_step(k, s->block, s->step, s->step + 1 == s->steps);
			if (++s->step < s->steps)
				continue;
			if (next < blocks) {
				*s = (struct slot){ next, 0, block_steps(k, next), true };
				next++;
			} else {
				s->busy = false;
				busy--;
			}
		}
	}
}

/* The model's DRAM traffic into out; the flush's write-backs too (the hashed L2: its dirty
 * lines). */
static void
traffic(struct kernel *k, struct cuda_blocks_result *out)
{
	if (k->hashed) {
		struct tilelru_traffic t = l2sets_dram(k->hashed, TILELRU_CLASSES);
		uint64_t dirty = 0;

		l2sets_held_lines(k->hashed, &dirty);
		out->read_bytes = t.read_bytes;
		out->write_bytes = t.write_bytes;
		out->flush_write_bytes = dirty * L2SETS_LINE;
		return;
	}
	out->read_bytes = cache_dram(k->cache)->read_bytes;
	out->write_bytes = cache_dram(k->cache)->write_bytes;
	cache_flush(k->cache);
	out->flush_write_bytes = cache_dram(k->cache)->write_bytes - out->write_bytes;
}

int
cuda_blocks_simulate(const struct attn_config *c, unsigned launch,
		     const struct cache_config *cfg, const struct l2sets_config *hashed,
		     const struct cuda_blocks_gpu *g, struct cuda_blocks_result *out, char *err,
		     size_t errlen)
{
	struct cache_config full = *cfg;
	struct kernel k;
	struct slot *slots;
	uint64_t blocks;
	uint32_t nslots;
	const char *why = NULL;

	/* A GPU hashes addresses to its L2 sets; a set index of plain address bits would put the
	 * rows of the blocks in flight (a power-of-two stride apart) into a few sets and thrash
	 * them. Every level is taken fully associative instead. */
	for (unsigned i = 0; i < full.levels; i++) {
		full.level[i].fully_assoc = true;
		full.level[i].assoc = (uint32_t)(full.level[i].size_bytes / full.level[i].line_bytes);
	}
	kernel_init(&k, c, launch);
	blocks = k.grid[0] * k.grid[1] * k.grid[2];
	nslots = g->sms * cuda_blocks_per_sm(c, launch, g);
	k.cache = hashed ? NULL : cache_create(&full);
	k.hashed = hashed ? l2sets_create(hashed, &why) : NULL;
	slots = calloc(nslots, sizeof(*slots));
	if ((!k.cache && !k.hashed) || !slots) {
		if (why)
			snprintf(err, errlen, "the hashed L2: %s", why);
		else
			snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
				 (double)(hashed ? hashed->capacity_bytes
						 : cache_model_bytes(&full)) /
					 1048576.0);
		cache_destroy(k.cache);
		l2sets_destroy(k.hashed);
		free(slots);
		return -1;
	}
	run_rounds(&k, slots, nslots, blocks);
	traffic(&k, out);
	out->blocks = blocks;
	out->slots = nslots;
	cache_destroy(k.cache);
	l2sets_destroy(k.hashed);
	free(slots);
	return 0;
}
