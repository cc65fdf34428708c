/*
 * The closed forms of analysis/formulas.h.
 *
 * Method. Lines are counted, not bytes: for an array of B bytes, B / L lines. Each group of
 * lines that the kernel treats alike follows a sequence of accesses; each access comes a
 * reuse distance after the previous access to the same line: the number of OTHER lines the
 * kernel touches in between (written G_x below, derived from the loop nests of the kernels;
 * "block" means the lines of B_r or B_c rows). Under LRU with room for C lines an access hits
 * exactly when its distance is below C (no conflict misses: the sets of a fully associative
 * cache). Then, for one line:
 *   - a miss on a load, or on a partial store under write-allocate, reads the line (the
 *     latter is read for ownership);
 *   - a miss on a line that was dirty is preceded by its write-back;
 *   - a line still dirty at the end is written by the final flush (or, when the run touches
 *     C other lines after its last access, by an eviction).
 * seq() below applies these rules; the kernels' sections list the sequences and distances.
 *
 * Notation (all in lines): rq = d s / L, one row of Q, K, V or O in the storage type;
 * qb = B_r rq and kb = B_c rq, a block of query or key rows; Srow = N s / L, one row of S;
 * T_r = ceil(N / B_r), T_c = ceil(N / B_c); g = heads / kv_heads; tiles t* (0 when they live
 * in scratch). Partial last tiles are averaged into T_r and T_c.
 */

#include "analysis/formulas.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "sim/util.h"

struct formula_array *
arr(struct formula_result *r, const char *name)
{
	for (unsigned i = 0; i < r->narrays; i++)
		if (strcmp(r->arrays[i].name, name) == 0)
			return &r->arrays[i];
	if (r->narrays == FORMULA_MAX_ARRAYS)
		return &r->arrays[FORMULA_MAX_ARRAYS - 1];
	snprintf(r->arrays[r->narrays].name, sizeof(r->arrays[0].name), "%s", name);
	return &r->arrays[r->narrays++];
}

/* Adds to a the traffic of n lines that each follow steps[0 .. ns), then see gap_end other
 * lines before the run ends. */
void
seq(struct formula_array *a, const struct q *q, double n, const struct step *steps, int ns,
    double gap_end)
{
	/* A sequence that starts with a finite distance continues an earlier one: the line
	 * was there, clean (earlier stores belong in the sequence). */
	bool present = ns > 0 && isfinite(steps[0].gap), dirty = false;
	double reads = 0, rfo = 0, writes = 0, flush = 0;

	if (n <= 0)
		return;
	for (int i = 0; i < ns; i++) {
		const struct step *st = &steps[i];
		/* The first repetition can differ (state from before); from the second on, each
		 * one repeats the same increments: count it once and multiply. */
		double last[3] = { 0, 0, 0 };

		for (int k = 0; k < 2 && k < st->rep; k++) {
			double r0 = reads, f0 = rfo, w0 = writes;
			bool miss = !present || st->gap >= q->C;

			if (miss) {
				if (present && dirty)
					writes += 1;
				if (st->op == LD || (st->op == ST && q->rfo)) {
					reads += 1;
					if (st->op == ST)
						rfo += 1;
				}
				present = true;
				dirty = st->op != LD;
			} else {
				dirty = dirty || st->op != LD;
			}
			last[0] = reads - r0;
			last[1] = rfo - f0;
			last[2] = writes - w0;
		}
		if (st->rep > 2) {
			reads += (st->rep - 2) * last[0];
			rfo += (st->rep - 2) * last[1];
			writes += (st->rep - 2) * last[2];
		}
	}
	if (present && dirty) {
		if (gap_end >= q->C) {
			writes += 1;
		} else if (q->flush) {
			writes += 1;
			flush += 1;
		}
	}
	a->read_bytes += n * reads * q->L;
	a->rfo_bytes += n * rfo * q->L;
	a->write_bytes += n * writes * q->L;
	a->flush_bytes += n * flush * q->L;
}

/* One access kind to fresh lines: a read, or a partial store. */
void
once(struct formula_array *a, const struct q *q, double n, int op, double gap_end)
{
	struct step s = { op, INFINITY, 1 };

	seq(a, q, n, &s, 1, gap_end);
}

static void
setup(struct q *q, const struct attn_config *c, const struct formula_machine *m)
{
	double L = m->line_bytes, tile = m->tiles_in_scratch ? 0 : 1;

	memset(q, 0, sizeof(*q));
	q->L = L;
	q->C = m->capacity_bytes / L;
	q->s = dtype_bytes(c->dtype);
	q->N = (double)c->N;
	q->d = (double)c->d;
	q->Br = (double)(c->Br < c->N ? c->Br : c->N);
	q->Bc = (double)(c->Bc < c->N ? c->Bc : c->N);
	q->B = (double)c->batch;
	q->H = (double)c->heads;
	q->Hkv = (double)c->kv_heads;
	q->g = q->H / q->Hkv;
	q->Tr = (double)attn_blocks(c->N, c->Br);
	q->Tc = (double)attn_blocks(c->N, c->Bc);
	q->rq = q->d * q->s / L;
	q->qb = q->Br * q->rq;
	q->kb = q->Bc * q->rq;
	q->Srow = q->N * q->s / L;
	q->Sseg = q->Bc * q->s / L;
	/* tiles are arrays of their own, page-aligned: whole lines */
	q->tq = tile * ceil(q->Br * q->d * 4 / L);
	q->tk = tile * ceil(q->Bc * q->d * 4 / L);
	q->tv = q->tk;
	q->ts = tile * ceil(q->Br * q->Bc * 4 / L);
	q->to = q->tq;
	q->trow = tile * ceil(q->N * 4 / L);
	q->tm = tile * ceil(q->Br * 4 / L);
	q->Qall = q->B * q->H * q->N * q->rq;
	q->Kall = q->B * q->Hkv * q->N * q->rq;
	q->Sall = q->B * q->H * q->N * q->Srow;
	q->Oall = q->Qall;
	q->vec = q->B * q->H * q->N * 4 / L;
	q->rfo = m->rfo;
	q->flush = m->flush;
}

/* Tiles in memory: first touched by scalar stores (a read for ownership under write-allocate),
 * then hit while the kernel's per-iteration lines fit, so their only other DRAM traffic is
 * the final flush. When they do not fit (caches of a few tiles), the spill traffic is not
 * modeled: the result says so. */
void
tiles(struct formula_result *r, const struct q *q, const char *const *names, const double *lines,
      int n, double working_set)
{
	for (int i = 0; i < n; i++)
		if (lines[i] > 0)
			once(arr(r, names[i]), q, lines[i], ST, 0);
	if (lines[0] > 0 && working_set >= q->C)
		r->tiles_approximate = true;
}

/* Number of key blocks query block ib uses. */
static double
flash_kblocks(const struct attn_config *c, uint64_t ib)
{
	uint64_t r_end = (ib + 1) * c->Br < c->N ? (ib + 1) * c->Br : c->N;

	return c->causal ? (double)attn_blocks(r_end, c->Bc) : (double)attn_blocks(c->N, c->Bc);
}

/* ---- no cache: every access moves its own bytes ---- */

static void
add(struct formula_result *r, const char *name, double rd, double wr)
{
	struct formula_array *a = arr(r, name);

	a->read_bytes += rd;
	a->write_bytes += wr;
}

static void
no_cache(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double s = q->s, N = q->N, d = q->d, bh = q->B * q->H;
	double head = N * d * s, S = N * N * s, vec = N * 4;
	uint64_t Tr = attn_blocks(c->N, c->Br);

	switch (c->kernel) {
	case ATTN_NAIVE:
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * q->Tr * head, 0);
		add(r, "V", bh * q->Tr * head, 0);
		add(r, "O", 0, bh * head);
		add(r, "S", bh * (c->softmax_separate ? S : 2 * S),
		    bh * (c->softmax_separate ? S : 2 * S));
		if (c->softmax_separate)
			add(r, "P", bh * S, bh * S);
		break;
	case ATTN_FLASH2: {
		double krows = 0;

		/* Each query block reads its key blocks' rows (the last block may be short). */
		for (uint64_t ib = 0; ib < Tr; ib++)
			krows += fmin(flash_kblocks(c, ib) * q->Bc, N);
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * krows * d * s, 0);
		add(r, "V", bh * krows * d * s, 0);
		add(r, "O", 0, bh * head);
		add(r, "lse", 0, bh * vec);
		break;
	}
	case ATTN_FLASH1: {
		double qrows = 0;
		uint64_t Tc = attn_blocks(c->N, c->Bc);

		for (uint64_t jb = 0; jb < Tc; jb++) {
			uint64_t ib0 = c->causal ? (jb * c->Bc) / c->Br : 0;

			qrows += (double)c->N - (double)(ib0 * c->Br);
		}
		add(r, "Q", bh * qrows * d * s, 0);
		add(r, "O", bh * qrows * d * s, bh * (head + qrows * d * s));
		add(r, "m", bh * qrows * 4, bh * (vec + qrows * 4));
		add(r, "l", bh * qrows * 4, bh * (vec + qrows * 4));
		add(r, "K", bh * head, 0);
		add(r, "V", bh * head, 0);
		break;
	}
	default: {
		double Dm = q->H * d, Dkv = q->Hkv * d, rows = q->B * N;
		double tq = ceil(Dm / q->Bc), tkv = ceil(Dkv / q->Bc);

		/* x is read once per column block of each of the three input products. */
		add(r, "x", rows * Dm * s * (tq + 2 * tkv), 0);
		add(r, "W_Q", q->B * q->Tr * Dm * Dm * s, 0);
		add(r, "W_K", q->B * q->Tr * Dm * Dkv * s, 0);
		add(r, "W_V", q->B * q->Tr * Dm * Dkv * s, 0);
		add(r, "W_O", q->B * q->Tr * Dm * Dm * s, 0);
		add(r, "O", rows * Dm * s * tq, 0);
		add(r, "Q", 0, rows * Dm * s);
		add(r, "K", 0, rows * Dkv * s);
		add(r, "V", 0, rows * Dkv * s);
		add(r, "y", 0, rows * Dm * s);
		break;
	}
	}
}

/* ---- lab formulas and regimes ---- */

double
formula_lab(const struct attn_config *c)
{
	double N = (double)c->N, d = (double)c->d, s = dtype_bytes(c->dtype);
	double heads = (double)c->batch * (double)c->heads;

	switch (c->kernel) {
	case ATTN_NAIVE:
		return heads * (12 * N * d + 16 * N * N) * s / 4;
	case ATTN_FLASH2:
		return heads * 8 * N * d * (1 + N / (double)c->Br) * s / 4;
	default:
		return 0;
	}
}

static void
regime(struct formula_result *r, const struct attn_config *c, const struct formula_machine *m,
       const struct q *q)
{
	struct formula_regime *g = &r->regime;
	double kv_bytes = 2 * q->N * q->d * q->s, S_bytes = q->Sall * q->L;
	char kv[32], S[32], C[32];

	snprintf(kv, sizeof(kv), "%.3g MiB", kv_bytes / 1048576);
	snprintf(S, sizeof(S), "%.3g MiB", S_bytes / 1048576);
	snprintf(C, sizeof(C), "%.3g MiB", m->capacity_bytes / 1048576);
	g->within_assumptions = false;
	if (c->kernel == ATTN_NAIVE) {
		double G_K = naive_gap_k(q, q->Br, q->Br, 0);
		double G_S1 = q->Sall - 1;

		if (m->no_cache)
			snprintf(g->text, sizeof(g->text),
				 "K/V fit in cache fails: no cache holds K and V between query "
				 "blocks, so each is read T_r = %.0f times, not once",
				 q->Tr);
		else if (G_K >= q->C)
			snprintf(
				g->text, sizeof(g->text),
				"K/V fit in cache fails: K, V and a block row of S (%.3g MiB) do not "
				"fit in %s, so K and V are read T_r = %.0f times, not once",
				G_K * q->L / 1048576, C, q->Tr);
		else if (G_S1 < q->C)
			snprintf(
				g->text, sizeof(g->text),
				"S spills to DRAM fails: S and P (%s) fit in %s and never reach DRAM "
				"between passes",
				S, C);
		else if (m->rfo && c->softmax_separate)
			snprintf(g->text, sizeof(g->text),
				 "no read-for-ownership fails: write-allocate reads S and P before "
				 "writing them (+2 N^2 s)");
		else {
			g->within_assumptions = true;
			snprintf(g->text, sizeof(g->text),
				 "K/V stay in cache (%s), S spills to DRAM (%s > %s)%s", kv, S, C,
				 m->rfo ? "; write-allocate adds S's read for ownership (N^2 s)"
					: "");
		}
	} else if (c->kernel == ATTN_FLASH2) {
		double G = flash2_gap(q, q->Br, q->Br, 0);

		if (c->causal)
			snprintf(
				g->text, sizeof(g->text),
				"all blocks computed fails: causal skips the masked key blocks the "
				"lab formula counts (about half of K and V)");
		else if (!m->no_cache && G < q->C)
			snprintf(
				g->text, sizeof(g->text),
				"K/V re-read per query block fails: K and V (%s) stay in %s, so they "
				"are read once, not N/B_r = %.0f times",
				kv, C, q->N / q->Br);
		else {
			g->within_assumptions = true;
			snprintf(
				g->text, sizeof(g->text),
				"K/V re-read from DRAM for each of the N/B_r = %.0f query blocks%s",
				q->N / q->Br,
				m->no_cache ? " (no cache)"
					    : ", since they do not fit in the cache");
		}
	} else {
		snprintf(g->text, sizeof(g->text), "the lab has no formula for %s",
			 attn_kernel_name(c->kernel));
	}
}

void
formula_machine_from_spec(const struct spec *s, bool flush, struct formula_machine *m)
{
	const struct cache_config *c = &s->cache;

	memset(m, 0, sizeof(*m));
	m->tiles_in_scratch = s->tiles_in_scratch;
	m->flush = flush;
	if (c->levels == 0) {
		m->no_cache = true;
		m->line_bytes = 1;
		return;
	}
	m->capacity_bytes = (double)c->level[c->levels - 1].size_bytes;
	m->line_bytes = (double)c->level[c->levels - 1].line_bytes;
	m->rfo = c->level[0].alloc == CACHE_ALLOC_FETCH;
}

int
formula_eval(const struct attn_config *c, const struct formula_machine *m,
	     struct formula_result *out)
{
	struct q q;

	memset(out, 0, sizeof(*out));
	setup(&q, c, m);
	if (m->no_cache) {
		q.L = 1;
		no_cache(out, c, &q);
	} else {
		switch (c->kernel) {
		case ATTN_NAIVE:
			formula_naive(out, c, &q);
			break;
		case ATTN_FLASH1:
			formula_flash1(out, c, &q);
			break;
		case ATTN_FLASH2:
			formula_flash2(out, c, &q);
			break;
		default:
			formula_proj(out, c, &q);
			break;
		}
	}
	for (unsigned i = 0; i < out->narrays; i++) {
		out->read_bytes += out->arrays[i].read_bytes;
		out->write_bytes += out->arrays[i].write_bytes;
		out->rfo_bytes += out->arrays[i].rfo_bytes;
		out->flush_bytes += out->arrays[i].flush_bytes;
	}
	out->lab_bytes = formula_lab(c);
	out->flops = attn_flops(c);
	regime(out, c, m, &q);
	return 0;
}

const struct formula_array *
formula_array(const struct formula_result *r, const char *name)
{
	for (unsigned i = 0; i < r->narrays; i++)
		if (strcmp(r->arrays[i].name, name) == 0)
			return &r->arrays[i];
	return NULL;
}
