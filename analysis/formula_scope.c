/*
 * What the exact formulas claim for a machine: their scope.
 *
 * The formulas count lines by reuse distance on one least-recently-used level that holds
 * C / L lines with no conflicts, write-back, write-allocate (or write-validate), in front of
 * DRAM (analysis/formulas.c). On such a level, and with no cache at all, they are byte-equal
 * on every array: that is the scope "exact", checked by tests/test-formulas.c and by
 * tools/verdict-survey.py over random configurations. A set-associative LRU level of 8 ways or
 * more gets a bound ("interval"): the formula at C +- R lines per set, R the runs of
 * consecutive lines a window between two touches of a line can hold (formula_interval_runs()),
 * where the formula is exact at C - R S L; checked the same way, strictly. Everything else is
 * an "estimate": the formula is printed as a reference, and the verdict names the first thing
 * the model lacks instead of inviting a report. docs/formulas.md ("Scope") lists the cases,
 * each with the survey's evidence.
 */

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/formula_kernels.h"
#include "analysis/formulas.h"

const char *
formula_scope_name(enum formula_scope scope)
{
	switch (scope) {
	case FORMULA_SCOPE_EXACT:
		return "exact";
	case FORMULA_SCOPE_INTERVAL:
		return "interval";
	default:
		return "estimate";
	}
}

/* The first reason the formula's model of one level does not describe m's last level, or
 * NULL. */
static const char *
level_outside(const struct formula_machine *m, char *buf, size_t n)
{
	static const char *const repl[] = { "LRU", "FIFO", "random", "pseudo-LRU" };

	if (m->no_cache)
		return m->tiles_in_scratch ? NULL
					   : "no cache with the tiles in memory: every tile access "
					     "moves its own bytes, which the formulas do not count";
	if (m->write_through)
		return "a write-through cache: every store goes to DRAM, where the formulas "
		       "count write-backs of dirty lines";
	if (m->no_write_allocate)
		return "a no-write-allocate cache: a store miss leaves the line out of the cache, "
		       "so the reuse distances the formulas count do not hold";
	if (m->repl != CACHE_REPL_LRU) {
		snprintf(buf, n, "%s replacement, where the formulas assume LRU", repl[m->repl]);
		return buf;
	}
	if (m->cachegrind_quirks)
		return "Cachegrind's accounting (straddling accesses counted once, write-backs "
		       "that do not refresh recency), which the formulas do not follow";
	return NULL;
}

/* Why the set-associative interval is no bound for this run, or NULL. The kinds where the
 * survey (tools/verdict-survey.py --focus interval) found runs outside it: fewer than 8
 * ways; fewer than 16 sets; flash1 and proj, whose strided re-reads (O, m and l per key block;
 * column blocks of weights) pile onto a few sets; rows narrower than a line, whose lines several
 * rows share. */
static const char *
interval_not_bound(const struct attn_config *c, const struct formula_machine *m, char *buf,
		   size_t n)
{
	if (m->ways < 8) {
		snprintf(buf, n,
			 "a %u-way cache: its conflict misses go beyond one line per set, so the "
			 "interval is no bound",
			 m->ways);
		return buf;
	}
	if (m->sets < 16) {
		snprintf(buf, n,
			 "a set-associative cache of %llu sets: with so few, one set's conflicts "
			 "weigh too much for the interval to be a bound",
			 (unsigned long long)m->sets);
		return buf;
	}
	if (c->kernel == ATTN_FLASH1 || c->kernel == ATTN_PROJ) {
		snprintf(buf, n,
			 "a set-associative cache under %s, whose strided re-reads crowd a few "
			 "sets: the interval is no bound (docs/formulas.md, Scope)",
			 attn_kernel_name(c->kernel));
		return buf;
	}
	if (c->kv_page) {
		snprintf(buf, n,
			 "a set-associative cache under a paged KV cache: the block table scatters "
			 "the pages over the sets, so the interval is no bound");
		return buf;
	}
	if ((double)(c->d * dtype_bytes(c->dtype)) < m->line_bytes) {
		snprintf(
			buf, n,
			"a set-associative cache with rows of %llu bytes, narrower than a %.0f-byte "
			"line: the interval is no bound",
			(unsigned long long)(c->d * dtype_bytes(c->dtype)), m->line_bytes);
		return buf;
	}
	return NULL;
}

/* Why flashdecode's formula at S > 1, in one of its exact regimes, is not exact on m's cache,
 * or NULL. walked: the line-by-line walk, which follows write-validate granules of any width,
 * counts it. */
static const char *
flashdecode_cache_outside(const struct formula_machine *m, bool walked)
{
	if (!m->fully_assoc && m->sets >= 2)
		return "flashdecode with S > 1 on a set-associative cache: its exact formula holds "
		       "on fully associative LRU caches, which conflicts may break (no interval)";
	if (!m->rfo && m->line_bytes > 256 && !walked)
		return "flashdecode with S > 1 on a write-validate cache of lines over 256 bytes: "
		       "granules wider than its 4-byte stores are followed only line by line, and "
		       "this run has too many line touches (over 3e7) or lines (4e6) for that";
	return NULL;
}

/* Why flashdecode's formula at S > 1 is not exact on m's cache, or NULL: it is in
 * formula_flashdecode_lru()'s regime or formula_flashdecode_walk()'s on a fully associative
 * cache, or where the cache evicts nothing (a fully associative one of at least the lines the
 * run touches, and under write-validate granules of at most 4 bytes, which the fp32 partial
 * stores fill). */
static const char *
flashdecode_outside(const struct attn_config *c, const struct formula_machine *m, char *buf,
		    size_t n)
{
	const struct attn_config v = attn_decode_view(c);
	double lines = m->capacity_bytes / m->line_bytes;
	double fp = formula_flashdecode_footprint(c, m->line_bytes);
	bool walk = formula_flashdecode_walk_shape(&v, m->line_bytes);
	/* paged rows that share lines: only the walk places them (the footprint counts K and V
	 * unpaged) */
	bool shared = c->kv_page && (c->d * dtype_bytes(c->dtype)) % (uint64_t)m->line_bytes != 0;

	bool walks = formula_flashdecode_walk_fits(&v, m->line_bytes);

	if ((lines >= fp && !shared) || formula_flashdecode_lru_fits(&v, m->line_bytes) || walks)
		return flashdecode_cache_outside(m, walks);
	if (walk && formula_flashdecode_lru_shape(&v, m->line_bytes)) {
		snprintf(buf, n,
			 "flashdecode with S > 1, %.0f lines of %.0f touched: %.3g steps (B H N "
			 "S^2) are too many to follow line by line (exact from %.0f lines up)",
			 lines, fp, formula_flashdecode_lru_steps(&v), fp);
		return buf;
	}
	if (walk && shared) {
		snprintf(buf, n,
			 "flashdecode with S > 1, paged with rows of %llu bytes, not whole "
			 "%.0f-byte lines: up to %.3g line touches are too many to follow line by "
			 "line (over 3e7, or the pool over 4e6 lines)",
			 (unsigned long long)(c->d * dtype_bytes(c->dtype)), m->line_bytes,
			 formula_flashdecode_walk_steps(&v, m->line_bytes));
		return buf;
	}
	if (walk) {
		snprintf(buf, n,
			 "flashdecode with S > 1, %.0f lines of %.0f touched: up to %.3g line "
			 "touches of %.0f lines are too many to follow line by line (over 3e7 or "
			 "4e6; exact from %.0f lines up)",
			 lines, fp, formula_flashdecode_walk_steps(&v, m->line_bytes), fp, fp);
		return buf;
	}
	if (shared)
		return "flashdecode with S > 1, paged with rows that share lines: its line-by-line "
		       "walk, which places them, wants lines of 4 bytes or more";
	snprintf(buf, n,
		 "flashdecode with S > 1, %.0f lines of %.0f touched: its line-by-line formula "
		 "wants lines of 4 bytes or more (else exact from %.0f lines up)",
		 lines, fp, fp);
	return buf;
}

/* The scope of one level in front of DRAM: exact, interval, or an estimate and why (in buf).
 * fitting_tiles: tiles in memory that never spill count as if they were in scratch. */
static enum formula_scope
level_scope(const struct formula_result *r, const struct attn_config *c,
	    const struct formula_machine *m, bool fitting_tiles, char *buf, size_t n)
{
	const char *why = level_outside(m, buf, n);
	double lines = m->capacity_bytes / m->line_bytes;

	if (!why && r->tiles_approximate)
		why = "the tiles live in memory and spill from a cache this small: their "
		      "traffic is not modeled";
	if (!why && !m->no_cache && !m->tiles_in_scratch && !fitting_tiles)
		why = "the tiles live in memory, where the formulas count only their first "
		      "stores and the final flush and take the lines between two of their uses as "
		      "cached (exact with tiles=scratch)";
	if (!why && !m->no_cache && !m->rfo && c->kernel == ATTN_NAIVE && attn_nkv(c) != c->N)
		why = "naive with N_kv != N on a write-validate cache: S lines stored in part, "
		      "evicted and stored again are not modeled (a few lines; exact with "
		      "write-allocate, or N_kv = N)";
	if (!why && !m->no_cache && c->kernel == ATTN_FLASHDECODE && attn_splits(c) > 1)
		why = flashdecode_outside(c, m, buf, n);
	/* paging relabels lines only where each holds one (page, token, kv head) row */
	if (!why && !m->no_cache && c->kv_page &&
	    !(c->kernel == ATTN_FLASHDECODE && attn_splits(c) > 1) &&
	    (c->d * dtype_bytes(c->dtype)) % (uint64_t)m->line_bytes != 0) {
		snprintf(buf, n,
			 "a paged KV cache with rows of %llu bytes, not whole %.0f-byte lines: a "
			 "line holds rows of several kv heads or pages, whose reuse the formulas "
			 "count as unpaged (exact where d x s is a multiple of the line)",
			 (unsigned long long)(c->d * dtype_bytes(c->dtype)), m->line_bytes);
		why = buf;
	}
	if (!why && !m->no_cache && lines <= r->step_lines) {
		snprintf(buf, n,
			 "a cache of %.0f lines, no more than the %.0f one step of the kernel may "
			 "touch: the formulas are exact from %.0f lines up",
			 lines, r->step_lines, r->step_lines + 1);
		why = buf;
	}
	if (!why && !m->no_cache && !m->fully_assoc && m->sets >= 2)
		why = interval_not_bound(c, m, buf, n);
	if (!why && !m->no_cache && !m->fully_assoc && m->sets >= 2)
		return FORMULA_SCOPE_INTERVAL;
	if (!why)
		return FORMULA_SCOPE_EXACT;
	if (why != buf)
		snprintf(buf, n, "%s", why);
	return FORMULA_SCOPE_ESTIMATE;
}

/* A window between two touches of a line: flash2's is at most a prefix of its kv head's K
 * rows, the same of V, and runs of Q, O and lse rows (5), and so is flashdecode's at S = 1
 * (flash2's loop over the packed rows of attn_decode_view()); naive's K and V windows add the
 * rows of S (or P) two query blocks write (or read) from a column on, a run per row (2 n_r + 2
 * with n_r = min(B_r, N)), and its S and P windows across phases at most n_r + 4. */
unsigned
formula_interval_runs(const struct attn_config *c)
{
	switch (c->kernel) {
	case ATTN_FLASH2:
		return 5;
	case ATTN_FLASHDECODE:
		return attn_splits(c) > 1 ? 0 : 5;
	case ATTN_NAIVE:
		return 2 * (unsigned)(c->Br < c->N ? c->Br : c->N) + 3;
	default:
		return 0;
	}
}

/* The formula on a fully associative cache of `lines` of m's lines, or NULL where it is not
 * exact there (caller frees). */
static struct formula_result *
interval_side(const struct attn_config *c, const struct formula_machine *m, double lines)
{
	struct formula_machine fa = *m;
	struct formula_result *r;

	if (lines < 1)
		return NULL;
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	fa.fully_assoc = true;
	fa.sets = 1;
	fa.capacity_bytes = lines * m->line_bytes;
	fa.ways = (uint32_t)lines;
	formula_eval(c, &fa, r);
	if (r->scope != FORMULA_SCOPE_EXACT) {
		free(r);
		return NULL;
	}
	return r;
}

/* r's bound on m's set-associative level: the formula at C + R S L (low) and C - R S L (high),
 * in total and per array. Returns NULL, or why there is none (in buf). */
static const char *
interval_bound(struct formula_result *r, const struct attn_config *c,
	       const struct formula_machine *m, char *buf, size_t n)
{
	unsigned runs = formula_interval_runs(c);
	double lines = m->capacity_bytes / m->line_bytes, span = (double)runs * (double)m->sets;
	struct formula_result *low, *high;

	if (!runs) {
		snprintf(buf, n,
			 "a set-associative cache under %s: no bound is derived for its "
			 "windows (docs/formulas.md, Scope)",
			 attn_kernel_name(c->kernel));
		return buf;
	}
	low = interval_side(c, m, lines + span);
	high = interval_side(c, m, lines - span);
	if (!low || !high) {
		free(low);
		free(high);
		snprintf(
			buf, n,
			"a %u-way cache: %s's windows hold up to %u runs of lines, so the bound is "
			"the formula at C +- %u lines per set, and C - %u S L = %.0f lines is not "
			"over one step (%.0f lines): no bound",
			m->ways, attn_kernel_name(c->kernel), runs, runs, runs,
			fmax(lines - span, 0), r->step_lines);
		return buf;
	}
	r->interval = true;
	r->interval_runs = runs;
	r->interval_sides_in_regime =
		low->regime.within_assumptions + high->regime.within_assumptions;
	r->low_bytes = fmin(r->low_bytes, low->read_bytes + low->write_bytes);
	r->high_bytes = fmax(r->high_bytes, high->read_bytes + high->write_bytes);
	for (unsigned i = 0; i < r->narrays; i++) {
		struct formula_array *a = &r->arrays[i];
		const struct formula_array *l = formula_array(low, a->name);
		const struct formula_array *h = formula_array(high, a->name);

		a->low_bytes = fmin(a->low_bytes, l ? l->read_bytes + l->write_bytes : 0);
		a->high_bytes = fmax(a->high_bytes, h ? h->read_bytes + h->write_bytes : 0);
	}
	free(low);
	free(high);
	return NULL;
}

void
formula_scope(struct formula_result *r, const struct attn_config *c,
	      const struct formula_machine *m)
{
	char buf[256];

	r->scope = level_scope(r, c, m, false, r->scope_why, sizeof(r->scope_why));
	/* Tiles in memory that never spill move a few lines: the other arrays' terms, which
	 * the lab's assumptions are about, still hold. */
	r->regime_judged = level_scope(r, c, m, true, buf, sizeof(buf)) != FORMULA_SCOPE_ESTIMATE;
	if (m->levels > 1 && r->scope != FORMULA_SCOPE_ESTIMATE) {
		r->regime_judged = m->upper_capacity_bytes * 8 <= m->capacity_bytes;
		r->scope = FORMULA_SCOPE_ESTIMATE;
		snprintf(r->scope_why, sizeof(r->scope_why),
			 "%u cache levels: the levels above the last filter the stream it sees, "
			 "so its LRU order is not the kernel's (the formulas model one level)",
			 m->levels);
	}
	if (r->scope == FORMULA_SCOPE_INTERVAL &&
	    interval_bound(r, c, m, r->scope_why, sizeof(r->scope_why)))
		r->scope = FORMULA_SCOPE_ESTIMATE;
}
