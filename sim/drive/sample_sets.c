/*
 * Set sampling as a driver (cache_config.sample_sets, sim/cache.h): a model whose accesses
 * reach its levels only in 1 set class in k, its DRAM bytes kept per chunk for the estimate's
 * error (sim/drive/sample.h), and its counts scaled by k after the run.
 *
 * Notes:
 *  - The processor's accesses and scratch bytes are counted whole, as a plain model counts
 *    them; an access outside the sampled sets stops there, and its repeats with it.
 *  - The levels are the plain model's: what reaches them runs the plain path unchanged.
 */

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache_internal.h"
#include "sim/drive/sample.h"

struct sampling {
	/* An access reaches the caches when keeps() (below). */
	unsigned shift, block_shift, hash_shift;
	uint64_t mask, residue, block_mask;
	uint64_t bytes[2]; /* bytes loaded (fetched), stored in the sampled sets */
	bool scaled;
	struct sample_units units; /* DRAM bytes per sampled chunk: the estimate's error */
};

/* Set sampling's choice: chunk i (addr >> shift) is in the run of k chunks numbered b = i / k
 * modulo the runs, and is kept where i modulo k is the residue XOR the top log2 k bits of b
 * times the golden-ratio constant (Fibonacci hashing: b = 0 gives 0, so the first run keeps
 * CACHE_SAMPLE_RESIDUE(k)). A fixed residue in every run kept the same columns of an array
 * whose rows span a multiple of k chunks: the offsets spread them. */
#define SAMPLE_HASH UINT64_C(0x9E3779B97F4A7C15)

static inline bool
keeps(const struct sampling *s, uint64_t addr)
{
	uint64_t run = (addr >> s->block_shift) & s->block_mask;
	uint64_t offset = (run * SAMPLE_HASH) >> s->hash_shift;

	return (((addr >> s->shift) ^ offset) & s->mask) == s->residue;
}

static void
sampled_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
	       uint64_t bytes)
{
	struct sampling *s = c->mode;
	bool write = op == CACHE_OP_STORE;

	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0 && keeps(s, addr)) {
			s->bytes[0] += bytes;
			cache_level_access(c, &c->lv[c->icache], addr, size, false, count,
					   F_IFETCH);
		}
		return;
	}
	if (c->nscratch && cache_scratch_bytes(c, addr, op, bytes))
		return;
	if (!keeps(s, addr))
		return; /* in a set that sampling leaves out */
	s->bytes[write] += bytes;
	cache_level_access(c, &c->lv[0], addr, size, write, count, 0);
}

/* DRAM, as the plain model's, and the bytes of the chunk. */
static unsigned
sampled_below(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count,
	      unsigned flags)
{
	struct sampling *s = c->mode;

	cache_dram_below(c, addr, size, req, count, flags);
	sample_units_add(&s->units, addr, req == REQ_READ ? size : size * count);
	return 0;
}

/* The plain model's answer for the accesses in the sampled sets: the others' repeats are
 * dropped as the accesses were. */
static bool
sampled_repeats(const struct cache *c, const uint64_t *addrs, const bool *stores, unsigned n)
{
	const struct sampling *s = c->mode;

	if (!cache_plain_repeats(c, addrs, stores, 0, true))
		return false; /* none settle in this model */
	for (unsigned i = 0; i < n; i++)
		if (keeps(s, addrs[i]) && !cache_plain_repeats(c, &addrs[i], &stores[i], 1, true))
			return false;
	return true;
}

static void
sampled_destroy(struct cache *c)
{
	struct sampling *s = c->mode;

	sample_units_finish(&s->units);
	free(s);
}

static const struct cache_drive sampled_drive = {
	.access = sampled_access,
	.refs = cache_refs_each,
	.below = sampled_below,
	.repeats = sampled_repeats,
	.destroy = sampled_destroy,
};

struct cache *
cache_create(const struct cache_config *cfg)
{
	char err[256];
	struct cache *c;
	struct sampling *s;
	unsigned kbits;

	if (cache_config_validate(cfg, err, sizeof(err)))
		return NULL;
	c = cache_build(cfg, cfg->levels, CACHE_MAX_LEVELS);
	if (!c || cfg->sample_sets <= 1)
		return c;
	s = xzalloc(sizeof(*s));
	kbits = log2_u64(cfg->sample_sets);
	s->shift = cache_chunk_shift(cfg);
	s->mask = cfg->sample_sets - 1;
	s->residue = CACHE_SAMPLE_RESIDUE(cfg->sample_sets);
	s->block_shift = s->shift + kbits;
	s->block_mask = cache_sample_classes(cfg) - 1;
	s->hash_shift = 64 - kbits;
	sample_units_init(&s->units, s->shift, kbits, cache_sample_classes(cfg));
	c->drive = &sampled_drive;
	c->mode = s;
	return c;
}

/* ---- after the run ---- */

static void
stats_scale(struct cache_level_stats *st, uint64_t k)
{
	uint64_t *w = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		w[i] *= k;
}

static void
traffic_scale(struct cache_traffic *t, uint64_t k)
{
	t->read_bytes *= k;
	t->write_bytes *= k;
	t->rfo_bytes *= k;
	t->flush_write_bytes *= k;
	t->flush_read_bytes *= k;
}

void
cache_sample_scale(struct cache *c)
{
	uint64_t k = c->cfg.sample_sets;
	struct sampling *s = c->mode;

	if (k <= 1 || s->scaled)
		return;
	cache_sync_phase(c);
	for (unsigned i = 0; i < c->nlv; i++) {
		stats_scale(&c->lv[i].st, k);
		c->snap[i] = c->lv[i].st;
		for (unsigned p = 0; p < c->nphases; p++)
			stats_scale(&c->phases[p].lvl[i], k);
	}
	for (unsigned p = 0; p < c->nphases; p++)
		for (unsigned a = 0; a < c->narrays; a++)
			traffic_scale(&c->phases[p].per_array[a], k);
	s->scaled = true;
}

void
cache_sample_get(struct cache *c, struct cache_sample *out)
{
	uint64_t k = c->cfg.sample_sets > 1 ? c->cfg.sample_sets : 1;
	const struct sampling *s = c->mode;
	const struct cache_cpu_stats *cs = &c->cpu;
	const struct cache_traffic *t = cache_dram(c);
	struct sample_spread sp;
	uint64_t div;

	memset(out, 0, sizeof(*out));
	out->sample_sets = (uint32_t)k;
	if (k == 1)
		return;
	div = s->scaled ? k : 1; /* back to the sample's own counts */
	out->cached_read_bytes = cs->bytes[CACHE_OP_LOAD] - cs->scratch_read_bytes;
	out->cached_write_bytes = cs->bytes[CACHE_OP_STORE] - cs->scratch_write_bytes;
	if (c->icache >= 0)
		out->cached_read_bytes += cs->bytes[CACHE_OP_IFETCH];
	out->cached_bytes = out->cached_read_bytes + out->cached_write_bytes;
	out->sampled_read_bytes = s->bytes[0];
	out->sampled_write_bytes = s->bytes[1];
	out->levels = c->nlv;
	for (unsigned i = 0; i < c->nlv; i++) {
		const struct cache_level_stats *st = &c->lv[i].st;

		out->misses[i] = (st->read_misses + st->write_misses) / div;
		if (i == 0 || (int)i == c->icache)
			out->refs += (st->reads + st->writes) / div;
	}
	out->dram_bytes = (t->read_bytes + t->write_bytes) / div;
	sample_units_spread(&s->units, &sp);
	out->dram_chunks = sp.chunks;
	out->dram_effective_chunks = sp.effective_chunks;
	out->set_classes = sp.classes;
	out->class_rel_variance = sp.class_rel_variance;
}
