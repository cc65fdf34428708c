/*
 * A run split by set over threads (sim/cache.h, cache_slices_max()): which configs split
 * exactly, a slice's model (a driver: struct slice, its chunks), and the sum of the slices'
 * counts.
 *
 * Notes:
 *  - Slices are by chunk, the largest line of any level (as set sampling's classes): every
 *    level's set index holds the chunk bits that pick the slice when it has slices x (chunk /
 *    line) sets or more, so a line, its set at every level, the victims of that set, the
 *    lines an inclusive level back-invalidates and those an exclusive one takes all lie in
 *    one slice. Replacement state is per set (LRU, FIFO, tree-PLRU), so each slice's sets
 *    change as in the whole run, and every level and DRAM count is a sum over lines.
 *  - Not split: a random policy (one generator per level, drawn in the order of all sets'
 *    misses), straddle=once (one count for an access over two lines, which may lie in two
 *    slices), no cache (an access is its own DRAM transfer), set sampling.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache.h"
#include "sim/cache_internal.h"

/* The most slices level l allows (a power of two), up to cap: sets / (chunk / line). */
static unsigned
level_slices(const struct cache_level_config *l, unsigned chunk_shift, unsigned cap)
{
	uint64_t lines = l->size_bytes / l->line_bytes;
	uint64_t sets = l->fully_assoc ? 1 : lines / l->assoc;
	uint64_t k = sets >> (chunk_shift - log2_u64(l->line_bytes));

	return k >= cap ? cap : (unsigned)(k ? k : 1);
}

/* Why level l cannot be split at all, or NULL. */
static const char *
level_unsplit(const struct cache_level_config *l)
{
	if (l->repl == CACHE_REPL_RANDOM)
		return "uses random replacement, one generator for all its sets";
	if (l->straddle_once)
		return "counts an access over two lines once (straddle=once), and the lines may "
		       "lie in two slices";
	return NULL;
}

/* cache_slices_max(), up to cap slices. */
static unsigned
slices_max(const struct cache_config *cfg, unsigned want, unsigned cap, char *why, size_t whylen)
{
	unsigned chunk = cache_chunk_shift(cfg), n = cfg->levels + cfg->has_icache, k = 1;

	why[0] = 0;
	if (want <= 1)
		return 1;
	if (cfg->sample_sets > 1) {
		snprintf(why, whylen, "set sampling (--sample-sets) runs as one thread");
		return 1;
	}
	if (cfg->levels == 0) {
		snprintf(why, whylen, "no cache: no sets to split");
		return 1;
	}
	while (k * 2 <= want && k * 2 <= cap)
		k *= 2;
	if (k < want)
		snprintf(why, whylen, "threads split sets by a power of two: %u, not %u", k, want);
	for (unsigned i = 0; i < n; i++) {
		const struct cache_level_config *l =
			i < cfg->levels ? &cfg->level[i] : &cfg->icache;
		const char *no = level_unsplit(l);
		unsigned most = level_slices(l, chunk, cap);

		if (no) {
			snprintf(why, whylen, "%s %s", l->name, no);
			return 1;
		}
		if (most < k && (l->fully_assoc || l->size_bytes / l->line_bytes == l->assoc)) {
			snprintf(why, whylen, "%s is fully associative (one set): no sets to split",
				 l->name);
			return 1;
		}
		if (most < k) {
			k = most;
			snprintf(why, whylen,
				 "%s has %llu sets of %u-byte lines: split by %u-byte chunks, %u "
				 "thread%s at most",
				 l->name,
				 (unsigned long long)(l->size_bytes / l->line_bytes / l->assoc),
				 l->line_bytes, 1u << chunk, k, k == 1 ? "" : "s");
		}
	}
	return k;
}

unsigned
cache_slices_max(const struct cache_config *cfg, unsigned want, char *why, size_t whylen)
{
	return slices_max(cfg, want, CACHE_MAX_SLICES, why, whylen);
}

unsigned
cache_classes_max(const struct cache_config *cfg)
{
	char why[256];

	return slices_max(cfg, CACHE_CLASSES_MAX, CACHE_CLASSES_MAX, why, sizeof(why));
}

/* A slice's chunks: index & mask == residue. */
struct slice {
	unsigned shift;
	uint64_t mask, residue;
};

/* The pieces of an access in this slice's chunks, in order, through level L. Lines never cross
 * chunks, so each line of the access is simulated by the one slice that holds its sets, as a
 * whole run would. */
static void
slice_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	    uint32_t count, unsigned flags)
{
	const struct slice *s = c->mode;
	unsigned shift = s->shift;
	uint64_t first = addr >> shift, last = (addr + size - 1) >> shift;

	for (uint64_t k = first;; k++) {
		if ((k & s->mask) == s->residue) {
			uint64_t lo = k == first ? addr : k << shift;
			uint64_t hi = k == last ? addr + size : (k + 1) << shift;

			cache_level_access(c, L, lo, (uint32_t)(hi - lo), write, count, flags);
		}
		if (k == last)
			break;
	}
}

/* Every access counted as the processor's, whole; only its pieces in this slice's chunks reach
 * the levels. */
static void
slice_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
	     uint64_t bytes)
{
	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0)
			slice_lines(c, &c->lv[c->icache], addr, size, false, count, F_IFETCH);
		return;
	}
	if (c->nscratch && cache_scratch_bytes(c, addr, op, bytes))
		return;
	slice_lines(c, &c->lv[0], addr, size, op == CACHE_OP_STORE, count, 0);
}

static void
slice_destroy(struct cache *c)
{
	free(c->mode);
}

static const struct cache_drive slice_drive = {
	.access = slice_access,
	.refs = cache_refs_each,
	.below = cache_dram_below,
	.destroy = slice_destroy,
};

void
cache_set_slice(struct cache *c, unsigned slices, unsigned index)
{
	struct slice *s;

	if (slices <= 1)
		return;
	s = xzalloc(sizeof(*s));
	s->shift = cache_chunk_shift(&c->cfg);
	s->mask = slices - 1;
	s->residue = index;
	c->drive = &slice_drive;
	c->mode = s;
}

bool
cache_fast_l1_slice(struct cache *c, struct cache_fast_l1 *v)
{
	const struct slice *s = c->mode;

	if (c->drive != &slice_drive)
		return cache_fast_l1(c, v);
	if (c->nscratch || !cache_fill_fast_l1(c, v))
		return false;
	v->slice_shift = s->shift;
	v->slice_mask = s->mask;
	v->slice_residue = s->residue;
	return true;
}

static void
stats_add(struct cache_level_stats *dst, const struct cache_level_stats *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

static void
traffic_add(struct cache_traffic *dst, const struct cache_traffic *t)
{
	dst->read_bytes += t->read_bytes;
	dst->write_bytes += t->write_bytes;
	dst->rfo_bytes += t->rfo_bytes;
	dst->flush_write_bytes += t->flush_write_bytes;
	dst->flush_read_bytes += t->flush_read_bytes;
}

int
cache_add_slice(struct cache *dst, struct cache *src)
{
	if (dst->nlv != src->nlv || dst->narrays != src->narrays || dst->nphases != src->nphases)
		return -1;
	for (unsigned p = 0; p < dst->nphases; p++)
		if (strcmp(dst->phases[p].name, src->phases[p].name))
			return -1;
	/* Each phase's level counts up to date, so that the snapshots equal the totals. */
	cache_sync_phase(dst);
	cache_sync_phase(src);
	for (unsigned i = 0; i < dst->nlv; i++) {
		stats_add(&dst->lv[i].st, &src->lv[i].st);
		dst->snap[i] = dst->lv[i].st;
		for (unsigned p = 0; p < dst->nphases; p++)
			stats_add(&dst->phases[p].lvl[i], &src->phases[p].lvl[i]);
	}
	/* The DRAM, per-array and per-phase totals are sums of these cells (cache_dram()). */
	for (unsigned p = 0; p < dst->nphases; p++)
		for (unsigned a = 0; a < dst->narrays; a++)
			traffic_add(&dst->phases[p].per_array[a], &src->phases[p].per_array[a]);
	return 0;
}
