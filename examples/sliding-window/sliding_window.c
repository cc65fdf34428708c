/*
 * Sliding-window (local) causal attention as a memsim plugin: query row q attends to key rows
 * [q - W + 1, q] (--param window=W, default 128). The loop order, the arrays and the accesses
 * are those of memsim's built-in flash2 (kernels/flash2.c): for each block of B_r query rows
 * (tile Q_tile) the running max and sum (m_tile, l_tile) and output (O_tile) start empty; each
 * block of B_c key rows that meets the window of a row of the block goes to K_tile and V_tile,
 * the scores to S_tile, and the online softmax rescales O_tile and adds P V; O and the
 * logsumexp lse are stored once per query row, element by element (a write-allocate cache
 * reads such a line for ownership, as for flash2's stores). The window only skips the key
 * blocks wholly before [r0 - W + 1, r0 + B_r): with W >= N it is flash2 --causal.
 *
 * Build (Makefile): traced as sliding_window.so, with -DMEMSIM_NATIVE as
 * sliding_window-native.so. Run: memsim run --kernel ./sliding_window.so --param window=64.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsim/plugin.h"

enum { A_Q, A_K, A_V, A_O, A_LSE, A_QT, A_KT, A_VT, A_ST, A_OT, A_MT, A_LT, A_COUNT };

/* The window: --param window=W, a positive integer; 128 where not given. 0 for a bad value. */
static uint64_t
window(const struct memsim_kernel_config *c)
{
	for (unsigned i = 0; i < c->nparams; i++)
		if (strcmp(c->param_keys[i], "window") == 0) {
			const char *s = c->param_values[i];
			char *end;
			unsigned long long w;

			errno = 0;
			w = strtoull(s, &end, 10);
			if (*s < '0' || *s > '9' || *end || errno || w == 0)
				return 0;
			return (uint64_t)w;
		}
	return 128;
}

static int
check(const struct memsim_kernel_config *c, char *err, size_t errlen)
{
	if (window(c) == 0) {
		snprintf(err, errlen, "window must be a positive integer (--param window=W)");
		return -1;
	}
	if (c->dtype != MEMSIM_FP32) {
		snprintf(err, errlen, "sliding-window takes fp32 only (--dtype fp32)");
		return -1;
	}
	return 0;
}

static void
put_array(struct memsim_kernel_array *a, const char *name, uint64_t bytes, enum memsim_space s)
{
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->bytes = bytes;
	a->space = s;
}

/* flash2's arrays, in flash2's order: Q, K, V, O, lse in memory, then its tiles. */
static int
arrays(const struct memsim_kernel_config *c, struct memsim_kernel_array *out, unsigned max,
       char *err, size_t errlen)
{
	const uint64_t q = c->batch * c->heads * c->N * c->d * 4;
	const uint64_t kv = c->batch * c->kv_heads * c->N * c->d * 4;

	if (max < A_COUNT) {
		snprintf(err, errlen, "needs %d arrays", A_COUNT);
		return -1;
	}
	put_array(&out[A_Q], "Q", q, MEMSIM_SPACE_DRAM);
	put_array(&out[A_K], "K", kv, MEMSIM_SPACE_DRAM);
	put_array(&out[A_V], "V", kv, MEMSIM_SPACE_DRAM);
	put_array(&out[A_O], "O", q, MEMSIM_SPACE_DRAM);
	put_array(&out[A_LSE], "lse", c->batch * c->heads * c->N * 4, MEMSIM_SPACE_DRAM);
	put_array(&out[A_QT], "Q_tile", c->Br * c->d * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_KT], "K_tile", c->Bc * c->d * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_VT], "V_tile", c->Bc * c->d * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_ST], "S_tile", c->Br * c->Bc * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_OT], "O_tile", c->Br * c->d * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_MT], "m_tile", c->Br * 4, MEMSIM_SPACE_TILE);
	put_array(&out[A_LT], "l_tile", c->Br * 4, MEMSIM_SPACE_TILE);
	return A_COUNT;
}

/* The first key block query block [r0, r0 + nr) reads: the one holding key r0 - W + 1. */
static uint64_t
first_key_block(uint64_t r0, uint64_t W, uint64_t Bc)
{
	return r0 + 1 > W ? (r0 + 1 - W) / Bc * Bc : 0;
}

/* Rows [r0, r0 + nr) of the head at base (rows d apart) into the tile. */
static void
tile_load(struct memsim_trace *t, float *tile, const float *base, uint64_t nr, uint64_t d)
{
	for (uint64_t r = 0; r < nr; r++) {
		TR_LOAD_SPAN(t, base + r * d, d * 4);
		memcpy(tile + r * d, base + r * d, d * 4);
		TR_STORE_SPAN(t, tile + r * d, d * 4);
	}
}

/* One query row against one key block: S, the online softmax, O_tile += P V. */
static void
row_step(struct memsim_trace *t, float *const *a, const struct memsim_kernel_config *c, uint64_t i,
	 uint64_t q, uint64_t c0, uint64_t nc, uint64_t W)
{
	const uint64_t d = c->d;
	float *srow = a[A_ST] + i * c->Bc, *orow = a[A_OT] + i * d, *qrow = a[A_QT] + i * d;
	float rmax = -INFINITY, mold, mnew, alpha, psum = 0;

	for (uint64_t j = 0; j < nc; j++) {
		float v = -INFINITY;

		if (c0 + j <= q && c0 + j + W > q) {
			float s = 0;

			for (uint64_t k = 0; k < d; k++)
				s += qrow[k] * a[A_KT][j * d + k];
			v = s / sqrtf((float)d);
		}
		srow[j] = v;
		rmax = v > rmax ? v : rmax;
	}
	TR_LOAD_SPAN(t, qrow, d * 4);
	TR_LOAD_SPAN(t, a[A_KT], nc * d * 4);
	TR_STORE_SPAN(t, srow, nc * 4);
	if (rmax == -INFINITY)
		return; /* every key of this block outside the row's window */
	TR_LOAD_ELEM(t, &a[A_MT][i]);
	mold = a[A_MT][i];
	mnew = mold > rmax ? mold : rmax;
	alpha = expf(mold - mnew);
	for (uint64_t j = 0; j < nc; j++) {
		srow[j] = expf(srow[j] - mnew);
		psum += srow[j];
	}
	for (uint64_t k = 0; k < d; k++)
		orow[k] *= alpha;
	for (uint64_t j = 0; j < nc; j++)
		for (uint64_t k = 0; k < d; k++)
			orow[k] += srow[j] * a[A_VT][j * d + k];
	TR_LOAD_SPAN(t, srow, nc * 4);
	TR_STORE_SPAN(t, srow, nc * 4);
	TR_LOAD_SPAN(t, a[A_VT], nc * d * 4);
	TR_LOAD_SPAN(t, orow, d * 4);
	TR_STORE_SPAN(t, orow, d * 4);
	TR_LOAD_ELEM(t, &a[A_LT][i]);
	a[A_LT][i] = a[A_LT][i] * alpha + psum;
	TR_STORE_ELEM(t, &a[A_LT][i]);
	a[A_MT][i] = mnew;
	TR_STORE_ELEM(t, &a[A_MT][i]);
}

/* One query block of one head: its key blocks, then O and lse row by row. */
static void
query_block(struct memsim_trace *t, float *const *a, const struct memsim_kernel_config *c,
	    uint64_t bh, uint64_t kvbh, uint64_t r0, uint64_t W)
{
	const uint64_t N = c->N, d = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t nr = N - r0 < Br ? N - r0 : Br;
	float *lse = a[A_LSE] + bh * N;

	tile_load(t, a[A_QT], a[A_Q] + (bh * N + r0) * d, nr, d);
	for (uint64_t i = 0; i < nr; i++) {
		a[A_MT][i] = -INFINITY;
		a[A_LT][i] = 0;
	}
	TR_STORE_SPAN(t, a[A_MT], nr * 4);
	TR_STORE_SPAN(t, a[A_LT], nr * 4);
	memset(a[A_OT], 0, nr * d * 4);
	TR_STORE_SPAN(t, a[A_OT], nr * d * 4);
	for (uint64_t c0 = first_key_block(r0, W, Bc); c0 < r0 + nr; c0 += Bc) {
		uint64_t nc = N - c0 < Bc ? N - c0 : Bc;

		tile_load(t, a[A_KT], a[A_K] + (kvbh * N + c0) * d, nc, d);
		tile_load(t, a[A_VT], a[A_V] + (kvbh * N + c0) * d, nc, d);
		for (uint64_t i = 0; i < nr; i++)
			row_step(t, a, c, i, r0 + i, c0, nc, W);
	}
	for (uint64_t i = 0; i < nr; i++) {
		float *orow = a[A_OT] + i * d, *o = a[A_O] + (bh * N + r0 + i) * d;
		float li;

		TR_LOAD_ELEM(t, &a[A_LT][i]);
		li = a[A_LT][i];
		TR_LOAD_SPAN(t, orow, d * 4);
		TR_STORE_SPAN(t, orow, d * 4);
		/* element stores, as flash2's row_store: each line of O read for ownership */
		for (uint64_t k = 0; k < d; k++) {
			orow[k] /= li;
			o[k] = orow[k];
			TR_STORE_ELEM(t, &o[k]);
		}
		TR_LOAD_ELEM(t, &a[A_MT][i]);
		lse[r0 + i] = a[A_MT][i] + logf(li);
		TR_STORE_ELEM(t, &lse[r0 + i]);
	}
}

static int
run(const struct memsim_kernel_config *c, void *const *arr, struct memsim_trace *t, char *err,
    size_t errlen)
{
	float *a[A_COUNT];
	const uint64_t W = window(c), group = c->heads / c->kv_heads;

	for (int i = 0; i < A_COUNT; i++)
		a[i] = arr[i];
	/* Inputs: small values, so that exp() stays finite. */
	for (uint64_t i = 0; i < c->batch * c->heads * c->N * c->d; i++)
		a[A_Q][i] = (float)(i % 13) / 13.0f;
	for (uint64_t i = 0; i < c->batch * c->kv_heads * c->N * c->d; i++) {
		a[A_K][i] = (float)(i % 7) / 7.0f;
		a[A_V][i] = (float)(i % 5) / 5.0f;
	}
	if (TR_PHASE(t, "flash_tile")) {
		snprintf(err, errlen, "cannot start phase flash_tile");
		return -1;
	}
	for (uint64_t b = 0; b < c->batch; b++)
		for (uint64_t h = 0; h < c->heads; h++)
			for (uint64_t r0 = 0; r0 < c->N; r0 += c->Br)
				query_block(t, a, c, b * c->heads + h, b * c->kv_heads + h / group,
					    r0, W);
	return 0;
}

/* Per query row: 4 d flops per key in its window (the score and P V). */
static double
flops(const struct memsim_kernel_config *c)
{
	const uint64_t N = c->N, W = window(c);
	double keys = W >= N ? (double)N * (double)(N + 1) / 2
			     : (double)W * (double)(W + 1) / 2 + (double)(N - W) * (double)W;

	return 4.0 * (double)c->d * keys * (double)(c->batch * c->heads);
}

/* Lines of an array of bytes, starting at a line boundary. */
static uint64_t
lines(uint64_t bytes, uint32_t line)
{
	return (bytes + line - 1) / line;
}

/* Lines of bytes [a, b) of an array that starts at a line boundary; 0 where empty. */
static uint64_t
span(uint64_t a, uint64_t b, uint32_t line)
{
	return b > a ? (b - 1) / line - a / line + 1 : 0;
}

/* Distinct lines unit (bh, ib) touches: its Q and O rows, its lse values, and the K and V rows
 * of its key blocks (of kv head kvbh). */
static uint64_t
unit_lines(const struct memsim_kernel_config *c, uint64_t bh, uint64_t kvbh, uint64_t ib,
	   uint32_t line)
{
	const uint64_t N = c->N, row = c->d * 4, W = window(c);
	const uint64_t r0 = ib * c->Br, r1 = r0 + c->Br < N ? r0 + c->Br : N;
	const uint64_t kend =
		(r1 + c->Bc - 1) / c->Bc * c->Bc < N ? (r1 + c->Bc - 1) / c->Bc * c->Bc : N;
	const uint64_t k0 = first_key_block(r0, W, c->Bc);

	return 2 * span((bh * N + r0) * row, (bh * N + r1) * row, line) +
	       span((bh * N + r0) * 4, (bh * N + r1) * 4, line) +
	       2 * span((kvbh * N + k0) * row, (kvbh * N + kend) * row, line);
}

/*
 * An upper bound on every reuse distance, in lines, or UINT64_MAX where out of memory. A line
 * is touched again in the same unit (query block of a head), or in the next unit (a Q, O or
 * lse line two blocks or two heads share, a K or V line the next query block's window still
 * covers, a K or V line two kv heads share: the last unit of one group is followed by the
 * first of the next), or, for K and V, by the next head of its group: a line whose first key
 * block is jb is last touched by head h at or before its query block ib_last(jb), the last
 * whose window reaches jb, and first by head h + 1 at ib_first(jb), the first whose rows reach
 * it. The sum of the lines the units between touch bounds the distinct lines between.
 */
static uint64_t
reuse_bound(const struct memsim_kernel_config *c, uint32_t line)
{
	const uint64_t Tr = (c->N + c->Br - 1) / c->Br, Tc = (c->N + c->Bc - 1) / c->Bc;
	const uint64_t g = c->heads / c->kv_heads, BH = c->batch * c->heads, W = window(c);
	/* prefix sums of the units' lines: of this head, and of the previous one */
	uint64_t *pre = calloc(Tr + 1, sizeof(*pre)), *prev = calloc(Tr + 1, sizeof(*prev));
	uint64_t bound = 0, last = 0;

	if (!pre || !prev) {
		free(pre);
		free(prev);
		return UINT64_MAX;
	}
	for (uint64_t bh = 0; bh < BH; bh++) {
		uint64_t kvbh = bh / c->heads * c->kv_heads + bh % c->heads / g, *swap;

		for (uint64_t ib = 0; ib < Tr; ib++) {
			uint64_t u = unit_lines(c, bh, kvbh, ib, line);

			if (last + u > bound)
				bound = last + u;
			last = u;
			pre[ib + 1] = pre[ib] + u;
		}
		/* the previous head is of the same group */
		for (uint64_t jb = 0; g > 1 && bh % c->heads % g > 0 && jb < Tc; jb++) {
			uint64_t first = jb * c->Bc / c->Br;
			uint64_t lastq = ((jb + 1) * c->Bc + W - 2) / c->Br;
			uint64_t b;

			lastq = lastq < Tr - 1 ? lastq : Tr - 1;
			b = prev[Tr] - prev[lastq] + pre[first + 1];
			if (b > bound)
				bound = b;
		}
		swap = prev;
		prev = pre;
		pre = swap;
	}
	free(pre);
	free(prev);
	return bound;
}

/*
 * The DRAM bytes where no line is evicted before its last use. memsim allocates each array
 * 64-byte aligned at least, so with lines dividing 64 no line holds two arrays. Every query
 * block reads its key blocks from the one holding key r0 - W + 1 up; query block 0 starts at
 * key 0, so every line of Q, K, V, O and lse is touched. Where they all fit in the cache's
 * lines (tiles in scratch take none), or where every reuse distance is below the cache's lines
 * (reuse_bound()), every touch after a line's first hits: each line of Q, K and V is read
 * once, each line of O and lse read once for ownership (element stores on a write-allocate
 * cache) and written once (evicted dirty, or by the final flush). Elsewhere the formula
 * returns -1: K and V lines are read again, by counts that depend on the reuse distances
 * across query blocks, not derived here (README.md).
 */
static int
formula(const struct memsim_kernel_config *c, uint64_t capacity, uint32_t line,
	struct memsim_array_bytes *out, unsigned n)
{
	const uint64_t q = c->batch * c->heads * c->N * c->d * 4;
	const uint64_t kv = c->batch * c->kv_heads * c->N * c->d * 4;
	const uint64_t l = c->batch * c->heads * c->N * 4;
	uint64_t all;

	if (n != A_COUNT || line == 0 || line > 64 || 64 % line)
		return -1;
	all = 2 * lines(q, line) + 2 * lines(kv, line) + lines(l, line);
	if (all > capacity / line && reuse_bound(c, line) > capacity / line)
		return -1;
	memset(out, 0, n * sizeof(*out));
	out[A_Q].read_bytes = lines(q, line) * line;
	out[A_K].read_bytes = out[A_V].read_bytes = lines(kv, line) * line;
	out[A_O].read_bytes = out[A_O].write_bytes = lines(q, line) * line;
	out[A_LSE].read_bytes = out[A_LSE].write_bytes = lines(l, line) * line;
	return 0;
}

static const char *const params[] = { "window", NULL };

static const struct memsim_kernel_plugin sliding_window = {
	MEMSIM_PLUGIN_ABI,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"sliding-window",
	"causal attention over a window of W keys (--param window=W), flash2's loop order",
	params,
	check,
	arrays,
	run,
	flops,
	formula,
};

MEMSIM_PLUGIN(sliding_window)
