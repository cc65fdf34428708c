/*
 * FlashAttention-2's forward launch as PyTorch 2.11 runs it (gpu/sdpa_plan.h).
 *
 * Notes: every number here is FlashAttention's (Dao-AILab/flash-attention
 * csrc/flash_attn/src/flash_fwd_launch_template.h for sm90, fp16/bf16, no dropout; flash_api.cpp
 * for set_params_splitkv(), num_splits_heuristic() and seqlenq_ngroups_swapped;
 * flash_fwd_kernel.h for the K/V loop, which runs from the last visible block down to the
 * first) or the H100's (datasheet). Tile bytes are rounded up to 32-byte sectors: the L2 and
 * ncu's DRAM counters work in sectors.
 */

#include "gpu/sdpa_plan.h"

#include <math.h>
#include <string.h>

#define SECTOR 32
#define MAX_SPLITS 128 /* flash_api.cpp: num_splits_heuristic(..., 128) */

static const char *const array_names[SDPA_ARRAYS] = { "Q",   "K",       "V",         "O",
						      "lse", "o_accum", "lse_accum", "spill" };

const char *
sdpa_array_name(enum sdpa_array a)
{
	return a < SDPA_ARRAYS ? array_names[a] : "?";
}

/* H100 SXM5: 132 SMs, 64K registers and 228 KB shared memory per SM (227 KB to one block),
 * 3.35 TB/s HBM3 (NVIDIA H100 datasheet; CUDA Programming Guide, compute capability 9.0). The
 * L2 as the h100 preset models it: one 22 MiB LRU, what one kernel was measured to keep of
 * the two 25 MB partitions (docs/gpu.md); or as hashed sets (--l2-model hashed): the 50 MiB
 * of the datasheet in two partitions, 32-way LRU sets, at most 16 dirty lines a set, the
 * model that best reproduces the H100's L2 microbenchmarks (03313eb:docs/gpu-run/l2-policy/,
 * 03313eb:tools/gpu-sdpa/l2fit.py). */
static const struct sdpa_gpu gpus[] = {
	{ "h100", 132, 65536, 233472, 22u << 20, 0, 50u << 20, 32, 16, 2, 3.35e12,
	  "H100 SXM5 datasheet",
	  "H100 SXM5 datasheet: 132 SMs, 3.35 TB/s HBM3; L2 as one 22 MiB LRU (docs/gpu.md)" },
	/* H200 SXM: the H100's SMs (compute capability 9.0, same registers and shared memory),
	 * 4.8 TB/s HBM3e (NVIDIA H200 datasheet); the L2 as the device reports it (62914560
	 * bytes, cudaDeviceProp::l2CacheSize and ncu), in the H100's two partitions of 32-way
	 * sets with at most 16 dirty lines a set; as one LRU, what one kernel keeps of the data
	 * it wrote, measured with Nsight Compute: 28.0 to 28.5 MiB of fills of 32 to 128 MiB
	 * (docs/gpu.md, "The H200"). */
	{ "h200", 132, 65536, 233472, 28u << 20, 0, 60u << 20, 32, 16, 2, 4.8e12,
	  "H200 SXM datasheet",
	  "H200 SXM datasheet: 132 SMs, 4.8 TB/s HBM3e; L2 of 60 MiB as the device reports it "
	  "(docs/gpu.md)" },
};

const struct sdpa_gpu *
sdpa_gpu_find(const char *name)
{
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		const char *a = gpus[i].name, *b = name;

		while (*a && *a == *b)
			a++, b++;
		if (!*a && !*b)
			return &gpus[i];
	}
	return NULL;
}

/* docs/gpu.md's table (03313eb:tools/gpu-sdpa/report.py, 1 set in 16): 72 shapes of PyTorch's flash
 * SDPA on the H100 under Nsight Compute; test-sdpa test_validation holds these to it. */
static const struct sdpa_validation h100_validation[] = {
	{ "decode, one query row", 12, 0.997, 1.000, NULL },
	{ "prefill, batch 1", 34, 0.914, 1.038, NULL },
	{ "prefill, batch above 1", 26, 0.657, 1.040,
	  "the model does not see where the heads lie in memory, and the H100 keeps less of K and "
	  "V when the heads in flight lie far apart: on causal d = 128 at batch 8 it read up to "
	  "1.6 times the model's bytes, and its own reads of one shape move by up to 13% with "
	  "where PyTorch's allocation lands (docs/gpu.md)" },
};

/* docs/gpu.md's H200 table (tools/gpu-sdpa-check.py report, 1 set in 16): 28 shapes of
 * PyTorch's flash SDPA on the H200 under Nsight Compute (tests/data/gpu/sdpa-h200.csv);
 * test-sdpa test_h200_rows holds these to it. */
static const struct sdpa_validation h200_validation[] = {
	{ "decode, one query row", 7, 0.996, 0.999, NULL },
	{ "prefill, batch 1", 14, 0.945, 1.004,
	  "the H200 writes back more of O while the kernel runs than the model's L2 does: its "
	  "writes were up to 10 times the model's on d = 96 (docs/gpu.md)" },
	{ "prefill, batch above 1", 7, 0.920, 0.995,
	  "the H200 writes back more of O while the kernel runs than the model's L2 does "
	  "(docs/gpu.md)" },
};

const struct sdpa_validation *
sdpa_validation_of(const struct sdpa_shape *s, const struct sdpa_gpu *g)
{
	unsigned kind = s->n_q == 1 ? 0 : s->batch == 1 ? 1 : 2;

	if (g == &gpus[0])
		return &h100_validation[kind];
	if (g == &gpus[1])
		return &h200_validation[kind];
	return NULL;
}

const char *
sdpa_shape_check(const struct sdpa_shape *s)
{
	if (!s->batch || !s->heads || !s->kv_heads || !s->n_q || !s->n_kv || !s->d)
		return "every dimension must be at least 1";
	if (s->heads % s->kv_heads)
		return "the key's heads must divide the query's heads";
	if (s->d > 256)
		return "FlashAttention takes d up to 256";
	if (s->d % 8)
		return "d must be a multiple of 8 (PyTorch pads other d first: not modelled)";
	if (s->n_q > (1u << 30) || s->n_kv > (1u << 30) || s->batch > 65535 ||
	    (uint64_t)s->batch * s->heads > 65535u * 65535u)
		return "the shape is larger than a CUDA grid takes";
	return NULL;
}

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint32_t
sdpa_num_splits(uint64_t bnm, uint32_t sms, uint32_t n_blocks, uint32_t max_splits)
{
	float eff[MAX_SPLITS + 1], best = 0.f;

	if ((float)bnm >= 0.8f * (float)sms)
		return 1;
	if (max_splits > sms)
		max_splits = sms;
	if (max_splits > n_blocks)
		max_splits = n_blocks;
	if (max_splits > MAX_SPLITS)
		max_splits = MAX_SPLITS;
	for (uint32_t s = 1; s <= max_splits; s++) {
		/* 64 blocks in 11 splits are 6 x 10 + 4; in 12 they would be 11 splits anyway */
		bool eligible = s == 1 || ceil_div(n_blocks, s) != ceil_div(n_blocks, s - 1);
		float waves = (float)(bnm * s) / (float)sms;

		eff[s] = eligible ? waves / ceilf(waves) : 0.f;
		if (eff[s] > best)
			best = eff[s];
	}
	for (uint32_t s = 1; s <= max_splits; s++)
		if (eff[s] > 0.f && eff[s] >= 0.85f * best)
			return s;
	return 1;
}

/* flash_fwd_launch_template.h, sm90, no dropout: kBlockM, kBlockN, warps per head dim. */
static void
fwd_tiles(uint32_t d, uint32_t *bm, uint32_t *bn, uint32_t *warps)
{
	*bm = 128, *bn = 64, *warps = 4;
	if (d <= 64)
		*bn = 128; /* hdim32, hdim64: 128 x 128 */
	else if (d <= 128)
		*bn = 64; /* hdim96, hdim128 (not sm8x): 128 x 64 */
	else if (d <= 192)
		*warps = 8; /* hdim192: 128 x 64, 8 warps */
	else
		*bm = 64; /* hdim256 on H100 (228 KB per SM): 64 x 64 */
}

/* The kernel's head dim (the HEADDIM_SWITCH case d falls in). */
static uint32_t
head_dim_case(uint32_t d)
{
	static const uint32_t cases[] = { 32, 64, 96, 128, 192, 256 };

	for (unsigned i = 0; i < 6; i++)
		if (d <= cases[i])
			return cases[i];
	return 256;
}

/* Blocks per SM: FlashAttention's forward kernels use 246 to 255 registers a thread (ncu's
 * launch__registers_per_thread, 03313eb:docs/gpu-run/sdpa/ncu.csv.gz), allocated 256 a thread;
 * shared memory holds the Q, K and V tiles. */
static uint32_t
occupancy(const struct sdpa_gpu *g, uint32_t bm, uint32_t bn, uint32_t d, uint32_t warps)
{
	uint32_t by_regs = g->regs_per_sm / (256u * 32u * warps);
	uint32_t smem = (bm + 2 * bn) * d * 2 + 1024; /* 1 KB the runtime reserves per block */
	uint32_t by_smem = g->smem_per_sm / smem;

	return by_regs < by_smem ? by_regs : by_smem;
}

/* The local memory (spilled registers) of flash_fwd_kernel, bytes a thread: what it stores
 * once a block, outside the K/V loop (cold), and what it stores every K/V step (hot). Read off
 * the SASS of the kernels PyTorch 2.11 ships (tests/data/gpu/frames.csv, by
 * tools/gpu-sdpa-check.py frames): frame offsets stored in the main loop, and those stored only
 * outside it. ncu's local store sectors agree (88 + 24 a step a thread for d 64, exactly; d 96
 * and 256 in tests/data/gpu/sdpa-h200.csv). Local words interleave the 32 threads of a warp, so
 * each frame word is a 128-byte line of its own: cold and hot parts never share a line. The
 * split-KV kernel (246 registers, frame 0) and fp16/bf16 alike (same frames). A kernel of d
 * over 128 is never Is_even_MN (run_flash_fwd()). */
static const struct spill_frame {
	uint32_t d;
	bool causal, even_mn;
	uint32_t cold, hot;
} spill_frames[] = {
	{ 32, false, true, 0, 0 },     { 32, false, false, 80, 16 },  { 32, true, true, 0, 0 },
	{ 32, true, false, 188, 16 },  { 64, false, true, 88, 24 },   { 64, false, false, 64, 24 },
	{ 64, true, true, 104, 24 },   { 64, true, false, 184, 20 },  { 96, false, true, 0, 0 },
	{ 96, false, false, 44, 0 },   { 96, true, true, 8, 0 },      { 96, true, false, 0, 0 },
	{ 128, false, true, 76, 56 },  { 128, false, false, 28, 32 }, { 128, true, true, 72, 56 },
	{ 128, true, false, 332, 32 }, { 192, false, false, 0, 0 },   { 192, true, false, 0, 0 },
	{ 256, false, false, 0, 0 },   { 256, true, false, 32, 0 },
};

static void
spill_frame(struct sdpa_plan *p, uint32_t dcase)
{
	uint32_t threads = p->warps * 32;

	p->spill_cold = p->spill_hot = 0;
	if (p->splits > 1 || p->shape.d != dcase)
		return;
	for (size_t i = 0; i < sizeof(spill_frames) / sizeof(spill_frames[0]); i++) {
		const struct spill_frame *f = &spill_frames[i];

		if (f->d == dcase && f->causal == p->causal && f->even_mn == p->even_mn) {
			p->spill_cold = f->cold * threads;
			p->spill_hot = f->hot * threads;
		}
	}
}

void
sdpa_plan_make(const struct sdpa_shape *s, const struct sdpa_gpu *g, struct sdpa_plan *p)
{
	uint32_t dcase = head_dim_case(s->d), ngroups = s->heads / s->kv_heads;
	uint64_t bnm;

	*p = (struct sdpa_plan){ 0 };
	p->shape = *s;
	p->b = s->batch, p->h = s->heads, p->hk = s->kv_heads;
	p->nq = s->n_q, p->nkv = s->n_kv;
	/* flash_api.cpp: one query row has no mask to apply */
	p->causal = s->causal && s->n_q > 1;
	p->swapped = s->n_q == 1 && ngroups > 1;
	if (p->swapped) {
		p->nq = ngroups;
		p->h = s->kv_heads;
	}
	p->d_rounded = s->d <= 128 ? (s->d + 31) / 32 * 32 : (s->d + 63) / 64 * 64;
	/* set_params_splitkv(): the heuristic counts 64-row blocks over twice the SMs */
	p->block_n = s->d <= 64 ? 256 : s->d <= 128 ? 128 : 64;
	bnm = (uint64_t)p->b * p->h * ceil_div(p->nq, 64);
	p->splits = sdpa_num_splits(bnm, 2 * g->sms, (uint32_t)ceil_div(p->nkv, p->block_n),
				    MAX_SPLITS);
	if (p->splits > 1) {
		p->block_m = 64, p->warps = 4; /* run_mha_fwd_splitkv_dispatch() */
		p->m_blocks = (uint32_t)ceil_div(p->nq, p->block_m);
		p->grid[0] = p->m_blocks, p->grid[1] = p->splits;
		p->grid[2] = p->b * p->h;
		p->combine_block_m = dcase % 128 == 0 ? 4 : dcase % 64 == 0 ? 8 : 16;
		p->combine_grid = ceil_div((uint64_t)p->b * p->h * p->nq, p->combine_block_m);
	} else {
		fwd_tiles(s->d, &p->block_m, &p->block_n, &p->warps);
		p->m_blocks = (uint32_t)ceil_div(p->nq, p->block_m);
		p->grid[0] = p->m_blocks, p->grid[1] = p->b, p->grid[2] = p->h;
	}
	p->n_blocks = (uint32_t)ceil_div(p->nkv, p->block_n);
	p->blocks_per_sm = occupancy(g, p->block_m, p->block_n, dcase, p->warps);
	p->even_mn = p->nq % p->block_m == 0 && p->nkv % p->block_n == 0 && dcase <= 128;
	spill_frame(p, dcase);
	p->tiles[SDPA_Q] = p->tiles[SDPA_O] = p->tiles[SDPA_LSE] =
		(uint64_t)p->b * p->h * p->m_blocks;
	p->tiles[SDPA_K] = p->tiles[SDPA_V] = (uint64_t)p->b * p->hk * p->n_blocks;
	if (p->splits > 1)
		p->tiles[SDPA_OACC] = p->tiles[SDPA_LSEACC] = p->tiles[SDPA_Q] * p->splits;
}

uint64_t
sdpa_blocks(const struct sdpa_plan *p)
{
	return (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];
}

uint64_t
sdpa_spill_store_bytes(const struct sdpa_plan *p)
{
	uint64_t total = 0, blocks = sdpa_blocks(p);

	if (!p->spill_cold && !p->spill_hot)
		return 0;
	for (uint64_t i = 0; i < blocks; i++)
		total += p->spill_cold + (uint64_t)sdpa_block_steps(p, i) * p->spill_hot;
	return total;
}

struct block {
	uint32_t m, split, b, h;
	uint32_t n_min, n_max; /* K/V blocks it visits: n_max - 1 down to n_min */
};

static void
block_decode(const struct sdpa_plan *p, uint64_t idx, struct block *k)
{
	uint64_t yz = idx / p->grid[0];

	k->m = (uint32_t)(idx % p->grid[0]);
	if (p->splits > 1) {
		uint32_t z = (uint32_t)(yz / p->grid[1]), per;

		k->split = (uint32_t)(yz % p->grid[1]);
		k->b = z / p->h, k->h = z % p->h;
		per = (uint32_t)ceil_div(p->n_blocks, p->splits);
		k->n_min = k->split * per;
		k->n_max = k->n_min + per < p->n_blocks ? k->n_min + per : p->n_blocks;
	} else {
		k->split = 0;
		k->b = (uint32_t)(yz % p->grid[1]), k->h = (uint32_t)(yz / p->grid[1]);
		k->n_min = 0, k->n_max = p->n_blocks;
	}
	if (p->causal) {
		/* the mask aligned at the end: the block's last row sees keys up to
		 * (m + 1) block_m + nkv - nq */
		int64_t last = (int64_t)(k->m + 1) * p->block_m + (int64_t)p->nkv - (int64_t)p->nq;
		int64_t lim = last <= 0 ? 0 : (last + p->block_n - 1) / p->block_n;

		if (lim < (int64_t)k->n_max)
			k->n_max = (uint32_t)lim;
	}
	if (k->n_max < k->n_min)
		k->n_max = k->n_min;
}

uint32_t
sdpa_block_steps(const struct sdpa_plan *p, uint64_t idx)
{
	struct block k;

	block_decode(p, idx, &k);
	return k.n_max > k.n_min ? k.n_max - k.n_min : 1;
}

double
sdpa_steps(const struct sdpa_plan *p)
{
	/* A block's steps depend on its query block and split alone (block_decode()): the
	 * first batch and head's, times the batches and heads. */
	uint64_t per = p->splits > 1 ? (uint64_t)p->grid[0] * p->grid[1] : p->grid[0], sum = 0;

	for (uint64_t i = 0; i < per; i++)
		sum += sdpa_block_steps(p, i);
	return (double)sum * (double)(sdpa_blocks(p) / per);
}

static uint32_t
sectors(uint64_t bytes)
{
	return (uint32_t)ceil_div(bytes, SECTOR) * SECTOR;
}

unsigned
sdpa_block_step(const struct sdpa_plan *p, uint64_t idx, uint32_t step,
		struct sdpa_access out[SDPA_STEP_MAX])
{
	struct block k;
	uint32_t s = 2, d = p->shape.d, steps;
	uint64_t bh, rows, row0;
	unsigned n = 0;

	block_decode(p, idx, &k);
	steps = k.n_max > k.n_min ? k.n_max - k.n_min : 1;
	bh = (uint64_t)k.b * p->h + k.h;
	row0 = (uint64_t)k.m * p->block_m;
	rows = p->nq - row0 < p->block_m ? p->nq - row0 : p->block_m;
	if (step == 0)
		out[n++] =
			(struct sdpa_access){ SDPA_Q, bh * p->m_blocks + k.m, sectors(rows * d * s),
					      (bh * p->nq + row0) * d * s, false };
	if (k.n_max > k.n_min) {
		uint32_t nb = k.n_max - 1 - step;
		uint64_t kvh = (uint64_t)k.b * p->hk + k.h / (p->h / p->hk);
		uint64_t r0 = (uint64_t)nb * p->block_n;
		uint64_t kr = p->nkv - r0 < p->block_n ? p->nkv - r0 : p->block_n;
		uint64_t tile = kvh * p->n_blocks + nb, off = (kvh * p->nkv + r0) * d * s;

		out[n++] = (struct sdpa_access){ SDPA_K, tile, sectors(kr * d * s), off, false };
		out[n++] = (struct sdpa_access){ SDPA_V, tile, sectors(kr * d * s), off, false };
	}
	if (step + 1 < steps)
		return n;
	if (p->splits > 1) {
		uint64_t t = (uint64_t)k.split * p->tiles[SDPA_Q] + bh * p->m_blocks + k.m;
		uint64_t r = ((uint64_t)k.split * p->b * p->h + bh) * p->nq + row0;

		out[n++] = (struct sdpa_access){ SDPA_OACC, t, sectors(rows * p->d_rounded * 4),
						 r * p->d_rounded * 4, true };
		out[n++] = (struct sdpa_access){ SDPA_LSEACC, t, sectors(rows * 4), r * 4, true };
	} else {
		out[n++] =
			(struct sdpa_access){ SDPA_O, bh * p->m_blocks + k.m, sectors(rows * d * s),
					      (bh * p->nq + row0) * d * s, true };
		out[n++] = (struct sdpa_access){ SDPA_LSE, bh * p->m_blocks + k.m,
						 sectors(rows * 4), (bh * p->nq + row0) * 4, true };
	}
	return n;
}

uint64_t
sdpa_array_bytes(const struct sdpa_plan *p, enum sdpa_array a)
{
	uint64_t q = (uint64_t)p->b * p->h * p->nq, kv = (uint64_t)p->b * p->hk * p->nkv;

	switch (a) {
	case SDPA_Q:
	case SDPA_O:
		return q * p->shape.d * 2;
	case SDPA_K:
	case SDPA_V:
		return kv * p->shape.d * 2;
	case SDPA_LSE:
		return q * 4;
	case SDPA_OACC:
		return p->splits > 1 ? q * p->splits * p->d_rounded * 4 : 0;
	case SDPA_LSEACC:
		return p->splits > 1 ? q * p->splits * 4 : 0;
	default:
		return 0;
	}
}

uint64_t
sdpa_default_splits(const struct attn_config *c, const char *preset,
		    enum attn_splits_source *source)
{
	/* both H100 presets model the SXM part: sdpa_plan.c's "h100"; h200 its "h200" */
	const struct sdpa_gpu *g = strcmp(preset, "h100") == 0 || strcmp(preset, "h100-50m") == 0
					   ? sdpa_gpu_find("h100")
				   : strcmp(preset, "h200") == 0 ? sdpa_gpu_find("h200")
								   : NULL;
	uint64_t tc = attn_blocks(attn_nkv(c), c->Bc), bnm;
	/* packed (N = 1, grouped heads): kv_heads heads of g rows, as FlashAttention counts
	 * them after seqlenq_ngroups_swapped */
	const struct attn_config v = attn_decode_view(c);

	*source = ATTN_SPLITS_CPU;
	if (!g || c->Br == 0 || c->Bc == 0)
		return 1;
	*source = ATTN_SPLITS_HEURISTIC;
	if (__builtin_mul_overflow(v.batch, v.heads, &bnm) ||
	    __builtin_mul_overflow(bnm, attn_blocks(v.N, v.Br), &bnm))
		bnm = UINT64_MAX;
	/* flash_api.cpp: num_splits_heuristic(b h m_blocks, 2 SMs, n_blocks, 128) */
	return sdpa_num_splits(bnm, 2 * g->sms, tc > UINT32_MAX ? UINT32_MAX : (uint32_t)tc, 128);
}
