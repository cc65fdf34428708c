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
 * formula_line_sequence() below applies these rules; the kernels' sections list the sequences and
 * distances.
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
#include "base/util.h"

struct formula_array *
formula_array_named(struct formula_result *r, const char *name)
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
formula_line_sequence(struct formula_array *a, const struct formula_geometry *q, double n,
		      const struct formula_step *steps, int ns, double gap_end)
{
	/* A sequence that starts with a finite distance continues an earlier one: the line
	 * was there, clean (earlier stores belong in the sequence). */
	bool present = ns > 0 && isfinite(steps[0].gap), dirty = false;
	double reads = 0, rfo = 0, writes = 0, flush = 0;

	if (n <= 0)
		return;
	for (int i = 0; i < ns; i++) {
		const struct formula_step *st = &steps[i];
		/* The first repetition can differ (state from before); from the second on, each
		 * one repeats the same increments: count it once and multiply. */
		double last[3] = { 0, 0, 0 };

		for (int k = 0; k < 2 && k < st->rep; k++) {
			double r0 = reads, f0 = rfo, w0 = writes;
			bool miss = !present || st->gap >= q->C;

			if (miss) {
				if (present && dirty)
					writes += 1;
				if (st->op == FORMULA_LOAD || (st->op == FORMULA_STORE && q->rfo)) {
					reads += 1;
					if (st->op == FORMULA_STORE)
						rfo += 1;
				}
				present = true;
				dirty = st->op != FORMULA_LOAD;
			} else {
				dirty = dirty || st->op != FORMULA_LOAD;
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
formula_line_once(struct formula_array *a, const struct formula_geometry *q, double n, int op,
		  double gap_end)
{
	struct formula_step s = { op, INFINITY, 1 };

	formula_line_sequence(a, q, n, &s, 1, gap_end);
}

double
formula_tile_row_lines(uint64_t rows, uint64_t stride, uint64_t width, uint64_t L)
{
	uint64_t last = UINT64_MAX;
	double n = 0;

	if (width == 0)
		return 0;
	if (width >= stride) /* rows that touch: one range */
		return span(0, (rows - 1) * stride + width, L);
	for (uint64_t i = 0; i < rows; i++) {
		uint64_t first = i * stride / L, end = (i * stride + width - 1) / L;

		n += (double)(end - first + 1) - (first == last ? 1 : 0);
		last = end;
	}
	return n;
}

static void
setup(struct formula_geometry *q, const struct attn_config *c, const struct formula_machine *m)
{
	double L = m->line_bytes, tile = m->tiles_in_scratch ? 0 : 1;

	memset(q, 0, sizeof(*q));
	q->L = L;
	q->C = m->capacity_bytes / L;
	q->s = dtype_bytes(c->dtype);
	q->N = (double)c->N;
	q->d = (double)c->d;
	q->Br = (double)(c->Br < c->N ? c->Br : c->N);
	q->Bc = (double)(c->Bc < attn_nkv(c) ? c->Bc : attn_nkv(c));
	q->B = (double)c->batch;
	q->H = (double)c->heads;
	q->Hkv = (double)c->kv_heads;
	q->g = q->H / q->Hkv;
	q->Tr = (double)attn_blocks(c->N, c->Br);
	q->Tc = (double)attn_blocks(attn_nkv(c), c->Bc);
	q->rq = q->d * q->s / L;
	q->qb = q->Br * q->rq;
	q->kb = q->Bc * q->rq;
	q->Nk = (double)attn_nkv(c);
	q->Srow = q->Nk * q->s / L;
	q->Sseg = q->Bc * q->s / L;
	/* tiles are arrays of their own, page-aligned: whole lines */
	q->tq = tile * ceil(q->Br * q->d * 4 / L);
	q->tk = tile * ceil(q->Bc * q->d * 4 / L);
	q->tv = q->tk;
	/* S tile rows sit B_c floats apart (B_c as given), each as wide as the key block */
	q->ts = tile * formula_tile_row_lines((uint64_t)q->Br, c->Bc * 4, (uint64_t)q->Bc * 4,
					      (uint64_t)L);
	q->to = q->tq;
	q->trow = tile * ceil(q->Nk * 4 / L);
	q->tm = tile * ceil(q->Br * 4 / L);
	q->Qall = q->B * q->H * q->N * q->rq;
	q->Kall = q->B * q->Hkv * q->Nk * q->rq;
	q->Sall = q->B * q->H * q->N * q->Srow;
	q->Oall = q->Qall;
	q->vec = q->B * q->H * q->N * 4 / L;
	q->rfo = m->rfo;
	q->flush = m->flush;
}

/* Tiles in memory: first touched by scalar stores (a read for ownership under write-allocate),
 * then hit while the kernel's per-step lines fit, so their only other DRAM traffic is the
 * final flush. step_lines bounds the lines one step of the kernel touches between two uses of
 * a tile line (tiles in memory included): when the cache holds no more, tiles spill, and that
 * traffic is not modeled: the result says so. It is also the smallest cache the formulas claim
 * to be exact for (formula_scope.c). */
void
formula_tiles(struct formula_result *r, const struct formula_geometry *q, const char *const *names,
	      const double *lines, int n, double step_lines)
{
	for (int i = 0; i < n; i++)
		if (lines[i] > 0)
			formula_line_once(formula_array_named(r, names[i]), q, lines[i],
					  FORMULA_STORE, 0);
	r->step_lines = step_lines;
	if (lines[0] > 0 && step_lines >= q->C)
		r->tiles_approximate = true;
}

/* Number of key blocks query block ib uses. */
static double
flash_kblocks(const struct attn_config *c, uint64_t ib)
{
	uint64_t r_end = (ib + 1) * c->Br < c->N ? (ib + 1) * c->Br : c->N;

	/* causal: up to the block's last row's position, N_kv - N on */
	return c->causal ? (double)attn_blocks(r_end + attn_kv_offset(c), c->Bc)
			 : (double)attn_blocks(attn_nkv(c), c->Bc);
}

/* sum over i < n of floor((a i + b) / m) (the classic Euclid-like reduction). */
u128
formula_floor_sum(u128 n, u128 m, u128 a, u128 b)
{
	u128 ans = 0;

	while (n > 0) {
		u128 y;

		if (a >= m) {
			ans += n * (n - 1) / 2 * (a / m);
			a %= m;
		}
		if (b >= m) {
			ans += n * (b / m);
			b %= m;
		}
		y = a * n + b;
		if (y < m)
			break;
		n = y / m;
		b = y % m;
		y = m;
		m = a;
		a = y;
	}
	return ans;
}

/* ---- no cache: every access moves its own bytes ---- */

static void
add(struct formula_result *r, const char *name, double rd, double wr)
{
	struct formula_array *a = formula_array_named(r, name);

	a->read_bytes += rd;
	a->write_bytes += wr;
}

static void
no_cache(struct formula_result *r, const struct attn_config *c, const struct formula_geometry *q)
{
	double s = q->s, N = q->N, d = q->d, bh = q->B * q->H;
	double head = N * d * s, head_kv = q->Nk * d * s, S = N * q->Nk * s, vec = N * 4;
	uint64_t Tr = attn_blocks(c->N, c->Br);

	switch (c->kernel) {
	case ATTN_NAIVE:
		/* each query block reads all N_kv rows of K (scores) and of V (av); S is N x N_kv,
		 * written by scores, read and written by softmax, read by av */
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * q->Tr * head_kv, 0);
		add(r, "V", bh * q->Tr * head_kv, 0);
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
			krows += fmin(flash_kblocks(c, ib) * q->Bc, q->Nk);
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * krows * d * s, 0);
		add(r, "V", bh * krows * d * s, 0);
		add(r, "O", 0, bh * head);
		add(r, "lse", 0, bh * vec);
		if (c->kv_page) {
			/* paged: each key block reads its pages' entries (int32) */
			double entries = 0;
			uint64_t Nk = attn_nkv(c), P = c->kv_page;

			for (uint64_t ib = 0; ib < Tr; ib++)
				for (uint64_t t = 0; t < (uint64_t)flash_kblocks(c, ib); t++) {
					uint64_t r0 = t * c->Bc;
					uint64_t r1 = r0 + c->Bc < Nk ? r0 + c->Bc : Nk;

					entries += (double)((r1 - 1) / P - r0 / P + 1);
				}
			add(r, "block_table", bh * entries * 4, 0);
		}
		break;
	}
	case ATTN_FLASHDECODE:
		formula_flashdecode_accesses(r, c);
		break;
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
		/* proj's B_c blocks the projection's columns, not the rows: not clipped to N */
		double Dm = q->H * d, Dkv = q->Hkv * d, rows = q->B * N, Bc = (double)c->Bc;
		double tq = ceil(Dm / Bc), tkv = ceil(Dkv / Bc);

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
	double N = (double)c->N, Nk = (double)attn_nkv(c), d = (double)c->d;
	double s = dtype_bytes(c->dtype), heads = (double)c->batch * (double)c->heads;

	/* The decode form (N queries, N_kv keys; the lab's at N_kv = N): naive reads Q (N d),
	 * K and V (N_kv d each) once and moves S and P (4 N N_kv); flash reads Q and writes O
	 * (2 N d) and reads K and V (2 N_kv d) once per query block (N / B_r). */
	switch (c->kernel) {
	case ATTN_NAIVE:
		return heads * (4 * N * d + 8 * Nk * d + 16 * N * Nk) * s / 4;
	case ATTN_FLASH2:
		return heads * 8 * d * (N + Nk * N / (double)c->Br) * s / 4;
	case ATTN_FLASHDECODE: {
		/* flash2's, Q read once per split; S > 1 adds the partial O and logsumexp (fp32),
		 * written by the splits and read by the combine: 8 S N (d + 1). Packed, a KV
		 * head's g query heads are its N = g rows (attn_decode_view()). */
		const struct attn_config v = attn_decode_view(c);
		double S = (double)attn_splits(c), n = (double)v.N;
		double vh = (double)v.batch * (double)v.heads;

		return vh * (s * (S * n * d + n * d + 2 * Nk * d * n / (double)v.Br) +
			     (S > 1 ? 8 * S * n * (d + 1) : 0));
	}
	default:
		return 0;
	}
}

/* Bytes an array moves: its reads without the reads for ownership (the lab counts none), and
 * its writes. */
static double
moved(const struct formula_result *r, const char *name, bool reads, bool writes)
{
	const struct formula_array *a = formula_array(r, name);

	if (!a)
		return 0;
	return (reads ? a->read_bytes - a->rfo_bytes : 0) + (writes ? a->write_bytes : 0);
}

/* The reads for ownership of the array named name (0 when absent). */
static double
formula_rfo(const struct formula_result *r, const char *name)
{
	const struct formula_array *a = formula_array(r, name);

	return a ? a->rfo_bytes : 0;
}

/* x within 5% of the lab's term t: the lab's assumption about that array holds. */
static bool
term_holds(double x, double t)
{
	return x >= 0.95 * t && x <= 1.05 * t;
}

static void
mib(char *buf, size_t n, double bytes)
{
	snprintf(buf, n, "%.3g MiB", bytes / 1048576);
}

/* The cache the lab has in mind: fully associative (or of many ways) and LRU. Returns false
 * with the failed assumption in text otherwise. */
static bool
lab_machine(const struct formula_machine *m, char *text, size_t n)
{
	if (m->no_cache)
		return true;
	if (m->repl == CACHE_REPL_RANDOM || m->repl == CACHE_REPL_FIFO) {
		snprintf(
			text, n,
			"LRU cache fails: %s replacement evicts lines still in use, so what the lab "
			"keeps in cache stays there only in part",
			m->repl == CACHE_REPL_RANDOM ? "random" : "FIFO");
		return false;
	}
	if (!m->fully_assoc && m->ways < 8) {
		snprintf(
			text, n,
			"fully associative cache fails: a %u-way cache has conflict misses the lab "
			"does not count",
			m->ways);
		return false;
	}
	return true;
}

/* The tiles' bytes, which the lab leaves out: outside its regime when over 5% of the total. */
static bool
tiles_small(const struct formula_result *r, char *text, size_t n)
{
	double t = 0, total = r->read_bytes - r->rfo_bytes + r->write_bytes;
	char b[32];

	for (unsigned i = 0; i < r->narrays; i++)
		if (strstr(r->arrays[i].name, "_tile"))
			t += r->arrays[i].read_bytes - r->arrays[i].rfo_bytes +
			     r->arrays[i].write_bytes;
	if (t <= 0.05 * total)
		return true;
	mib(b, sizeof(b), t);
	snprintf(text, n,
		 "tiles stay in cache fails: the tiles in memory move %s (%.0f%% of the bytes), "
		 "which the lab leaves out",
		 b, 100 * t / total);
	return false;
}

/* "T_r = 8" and, where the lab's N / B_r differs, "(the lab's N/B_r = 7.81)". */
static void
blocks_text(char *buf, size_t n, const struct formula_geometry *q)
{
	double lab = q->N / q->Br;

	if (lab == q->Tr)
		snprintf(buf, n, "T_r = %.0f", q->Tr);
	else
		snprintf(buf, n, "T_r = %.0f (the lab's N/B_r = %.3g)", q->Tr, lab);
}

/*
 * Whether the lab formula's assumptions hold, judged array by array on the exact formula's
 * bytes (which count everything live between two uses of a line: K, V, S rows, Q, O, tiles),
 * each lab term within 5%: naive reads Q, K and V once and moves S and P 4 N^2 s; flash2 reads
 * Q once, writes O once and reads K and V once per query block. The first assumption that
 * fails is named, with the numbers.
 */
/* flash2 with one query block holding all N rows: K and V read once per head, not N/B_r
 * times. */
static void
regime_one_block(struct formula_result *r, const struct attn_config *c,
		 const struct formula_geometry *q, const char *C, double kv)
{
	struct formula_regime *g = &r->regime;

	/* K and V of every KV head once: what "read once" means, judged on the bytes */
	double once = 2 * q->B * q->Hkv * q->Nk * q->d * q->s;

	if (kv <= 1.05 * once)
		snprintf(g->text, sizeof(g->text),
			 "B_r <= N fails: one query block (B_r = %llu) holds all N = %llu "
			 "rows, so K and V are read once, not the lab's N/B_r = %.3g times",
			 (unsigned long long)c->Br, (unsigned long long)c->N,
			 (double)c->N / (double)c->Br);
	else
		snprintf(g->text, sizeof(g->text),
			 "B_r <= N fails: one query block (B_r = %llu) holds all N = %llu "
			 "rows, so each query head reads K and V once, not the lab's N/B_r "
			 "= %.3g times; K and V are read %.3g times in all, as %s does not "
			 "keep a KV head's K and V between the %llu query heads that share "
			 "it",
			 (unsigned long long)c->Br, (unsigned long long)c->N,
			 (double)c->N / (double)c->Br, kv / once, C,
			 (unsigned long long)(c->heads / c->kv_heads));
}

/* naive's terms, in the order the lab formula states its assumptions. */
static void
regime_naive(struct formula_result *r, const struct attn_config *c, const struct formula_machine *m,
	     const struct formula_geometry *q, const char *C, double kv, double Q)
{
	struct formula_regime *g = &r->regime;
	double head = q->B * q->H * q->N * q->d * q->s;
	double khead = q->B * q->H * q->Nk * q->d * q->s;
	char a[32], b[32];

	double S = moved(r, "S", true, true) + moved(r, "P", true, true);
	double S_lab = 4 * q->B * q->H * q->N * q->Nk * q->s;

	mib(a, sizeof(a), S);
	mib(b, sizeof(b), S_lab);
	if (kv > 1.05 * 2 * khead)
		snprintf(
			g->text, sizeof(g->text),
			m->no_cache
				? "K/V fit in cache fails: no cache holds K and V between "
				  "query blocks, so they are read %.3g times, not once"
				: "K/V fit in cache fails: K and V are read %.3g times, not "
				  "once: K, V and what is live between two uses of a K "
				  "line (S rows, Q, O, tiles) do not fit in %s",
			kv / (2 * khead), C);
	else if (kv < 0.95 * 2 * khead)
		snprintf(
			g->text, sizeof(g->text),
			"one K/V head per query head fails: %llu query heads share each K "
			"and V head, which is read once for all of them (the lab counts it "
			"per query head)",
			(unsigned long long)(c->heads / c->kv_heads));
	else if (!term_holds(Q, head))
		snprintf(g->text, sizeof(g->text),
			 "Q read once fails: Q is read %.3g times", Q / head);
	else if (S <= 0.5 * S_lab)
		snprintf(g->text, sizeof(g->text),
			 "S spills to DRAM fails: S and P stay in %s between passes: they "
			 "move %s, not the lab's 4 N^2 s = %s",
			 C, a, b);
	else if (S < 0.95 * S_lab)
		snprintf(
			g->text, sizeof(g->text),
			"S spills to DRAM fails: S and P move %s, not the lab's 4 N^2 s = %s: "
			"part of S stays in %s between passes",
			a, b, C);
	else if (S > 1.05 * S_lab)
		snprintf(g->text, sizeof(g->text),
			 "S moves 4 N^2 s fails: S and P move %s, more than the lab's %s",
			 a, b);
	else if (m->rfo && c->softmax_separate)
		snprintf(g->text, sizeof(g->text),
			 "no read-for-ownership fails: write-allocate reads S and P before "
			 "writing them (+2 N^2 s)");
	else if (tiles_small(r, g->text, sizeof(g->text))) {
		g->within_assumptions = true;
		mib(b, sizeof(b), kv);
		snprintf(g->text, sizeof(g->text),
			 "K/V read once (%s), S spills to DRAM (%s moved)%s", b, a,
			 m->rfo ? "; write-allocate adds S's read for ownership (N^2 s)"
				: "");
	}
}

/* flash2's terms, in the order the lab formula states its assumptions. */
static void
regime_flash2(struct formula_result *r, const struct formula_machine *m,
	      const struct formula_geometry *q, const char *C, double kv, double Q)
{
	struct formula_regime *g = &r->regime;
	double head = q->B * q->H * q->N * q->d * q->s;
	double khead = q->B * q->H * q->Nk * q->d * q->s;
	char blocks[64];

	blocks_text(blocks, sizeof(blocks), q);
	double O = moved(r, "O", true, true);
	double lse = moved(r, "lse", true, true) + formula_rfo(r, "lse");
	double o_rfo = formula_rfo(r, "O");
	double total = r->read_bytes + r->write_bytes;
	double kv_lab = 2 * khead * q->N / q->Br;

	if (kv < 0.95 * kv_lab)
		snprintf(g->text, sizeof(g->text),
			 "K/V re-read per query block fails: K and V are read %.3g times, "
			 "not %s: they stay in %s",
			 kv / (2 * khead), blocks, C);
	else if (kv > 1.05 * kv_lab)
		snprintf(
			g->text, sizeof(g->text),
			"N/B_r passes over K/V fails: K and V are read %.3g times, more than "
			"the lab's N/B_r = %.3g (T_r = %.0f query blocks, the last one short)",
			kv / (2 * khead), q->N / q->Br, q->Tr);
	else if (!term_holds(Q, head))
		snprintf(g->text, sizeof(g->text),
			 "Q read once fails: Q is read %.3g times", Q / head);
	else if (!term_holds(O, head))
		snprintf(g->text, sizeof(g->text),
			 "O written once fails: O moves %.3g times its size", O / head);
	else if (o_rfo > 0.05 * total)
		snprintf(
			g->text, sizeof(g->text),
			"no read-for-ownership fails: write-allocate reads O before writing "
			"it (%.0f bytes, %.0f%% of the bytes)",
			o_rfo, 100 * o_rfo / total);
	else if (lse + o_rfo > 0.05 * total)
		snprintf(g->text, sizeof(g->text),
			 "logsumexp negligible fails: lse moves %.0f bytes (%.0f%% of the "
			 "bytes; 4 per row in whole lines), which the lab leaves out",
			 lse, 100 * lse / total);
	else if (tiles_small(r, g->text, sizeof(g->text))) {
		g->within_assumptions = true;
		snprintf(g->text, sizeof(g->text),
			 "K/V re-read from DRAM for each of the %s query blocks%s", blocks,
			 m->no_cache ? " (no cache)"
				     : ", since they do not fit in the cache");
	}
}

static void
regime(struct formula_result *r, const struct attn_config *c, const struct formula_machine *m,
       const struct formula_geometry *q)
{
	struct formula_regime *g = &r->regime;
	double kv = moved(r, "K", true, false) + moved(r, "V", true, false);
	double Q = moved(r, "Q", true, false);
	char C[32];

	mib(C, sizeof(C), m->capacity_bytes);
	g->within_assumptions = false;
	if (c->kernel == ATTN_FLASHDECODE) {
		snprintf(g->text, sizeof(g->text),
			 "the lab's assumptions are judged for naive and flash2 only, not "
			 "flashdecode");
		return;
	}
	if (c->kernel != ATTN_NAIVE && c->kernel != ATTN_FLASH2) {
		snprintf(g->text, sizeof(g->text), "the lab has no formula for %s",
			 attn_kernel_name(c->kernel));
		return;
	}
	if (c->kernel == ATTN_FLASH2 && c->causal) {
		snprintf(g->text, sizeof(g->text),
			 "all blocks computed fails: causal skips the masked key blocks the lab "
			 "formula counts (about half of K and V)");
		return;
	}
	if (!lab_machine(m, g->text, sizeof(g->text)))
		return;
	if (!r->regime_judged) {
		snprintf(g->text, sizeof(g->text),
			 "the lab's assumptions are judged on the exact formula, which does not "
			 "cover this machine: %s",
			 r->scope_why);
		return;
	}
	if (r->tiles_approximate) {
		snprintf(g->text, sizeof(g->text),
			 "tiles stay in cache fails: the tiles live in memory and spill from %s",
			 C);
		return;
	}
	if (c->kernel == ATTN_FLASH2 && c->Br > c->N)
		regime_one_block(r, c, q, C, kv);
	else if (c->kernel == ATTN_NAIVE)
		regime_naive(r, c, m, q, C, kv, Q);
	else
		regime_flash2(r, m, q, C, kv, Q);
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
	const struct cache_level_config *last = &c->level[c->levels - 1];

	m->capacity_bytes = (double)last->size_bytes;
	m->line_bytes = (double)last->line_bytes;
	m->rfo = c->level[0].alloc == CACHE_ALLOC_FETCH;
	m->levels = c->levels;
	m->fully_assoc = last->fully_assoc;
	m->ways = last->fully_assoc ? (uint32_t)(last->size_bytes / last->line_bytes) : last->assoc;
	m->sets = last->size_bytes / last->line_bytes / m->ways;
	m->repl = last->repl;
	for (unsigned i = 0; i < c->levels; i++) {
		const struct cache_level_config *l = &c->level[i];

		m->inclusive |= i > 0 && l->inclusion == CACHE_INCL_INCLUSIVE;
		if (i + 1 < c->levels)
			m->upper_capacity_bytes =
				fmax(m->upper_capacity_bytes, (double)l->size_bytes);
		m->write_through |= l->write == CACHE_WRITE_THROUGH;
		m->no_write_allocate |= l->alloc == CACHE_ALLOC_NONE;
		m->cachegrind_quirks |= l->straddle_once || l->quiet_writebacks;
	}
}

/* The regime's sides on a set-associative last level with no bound: how many of the fully
 * associative formulas at C +- one line per set (never under one line) are inside the lab's
 * assumptions. Where formula_scope() found the bound, its two ends are the sides. */
static void
regime_sides(struct formula_result *out, const struct attn_config *c,
	     const struct formula_machine *m)
{
	double step = (double)m->sets * m->line_bytes;

	for (int side = -1; side <= 1; side += 2) {
		struct formula_machine fa = *m;
		struct formula_result *r = malloc(sizeof(*r));

		if (!r)
			continue; /* a side not evaluated counts as outside */
		fa.fully_assoc = true;
		fa.sets = 1;
		fa.capacity_bytes = fmax(m->capacity_bytes + side * step, m->line_bytes);
		fa.ways = (uint32_t)(fa.capacity_bytes / m->line_bytes);
		formula_eval(c, &fa, r);
		out->interval_sides_in_regime += r->regime.within_assumptions;
		free(r);
	}
}

int
formula_eval(const struct attn_config *c, const struct formula_machine *m,
	     struct formula_result *out)
{
	/* the loops the kernel runs: flashdecode's packed rows (attn_decode_view()), else c */
	const struct attn_config v = attn_decode_view(c);
	bool set_assoc = !m->no_cache && !m->fully_assoc && m->sets >= 2;
	struct formula_geometry q;

	memset(out, 0, sizeof(*out));
	setup(&q, &v, m);
	if (m->no_cache) {
		q.L = 1;
		no_cache(out, &v, &q);
	} else {
		switch (v.kernel) {
		case ATTN_NAIVE:
			formula_naive(out, &v, &q);
			break;
		case ATTN_FLASH1:
			formula_flash1(out, &v, &q);
			break;
		case ATTN_FLASH2:
			formula_flash2(out, &v, &q);
			break;
		case ATTN_FLASHDECODE:
			formula_flashdecode(out, &v, &q);
			break;
		default:
			formula_proj(out, &v, &q);
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
	for (unsigned i = 0; i < out->narrays; i++)
		out->arrays[i].low_bytes = out->arrays[i].high_bytes =
			out->arrays[i].read_bytes + out->arrays[i].write_bytes;
	out->low_bytes = out->high_bytes = out->read_bytes + out->write_bytes;
	formula_scope(out, c, m);
	if (set_assoc && !out->interval)
		regime_sides(out, c, m);
	regime(out, c, m, &q);
	if (out->regime.within_assumptions && set_assoc && out->interval_sides_in_regime < 2) {
		out->regime.within_assumptions = false;
		snprintf(out->regime.text, sizeof(out->regime.text),
			 "a cache of C that stays clear of the crossovers fails: the lab's "
			 "assumptions hold at C but not at C +- %u line%s per set, %s",
			 out->interval ? out->interval_runs : 1, out->interval ? "s" : "",
			 out->interval ? "the ends of the set-associative bound"
				       : "which a set-associative cache behaves like");
	}
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
