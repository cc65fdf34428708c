/* The cache model's statistics: phases, arrays and the getters. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache_internal.h"

/* ---- phases ---- */

static void
stats_add_delta(struct cache_level_stats *dst, const struct cache_level_stats *now,
		struct cache_level_stats *snap)
{
	uint64_t *d = (uint64_t *)dst, *s = (uint64_t *)snap;
	const uint64_t *n = (const uint64_t *)now;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++) {
		d[i] += n[i] - s[i];
		s[i] = n[i];
	}
}

void
cache_sync_phase(struct cache *c)
{
	for (unsigned i = 0; i < c->nlv; i++)
		stats_add_delta(&c->phases[c->cur_phase].lvl[i], &c->lv[i].st, &c->snap[i]);
}

int
cache_add_phase(struct cache *c, const char *name)
{
	struct phase *p;
	char cut[CACHE_NAME_MAX];
	int64_t i;

	snprintf(cut, sizeof(cut), "%s", name);
	i = name_index_find(&c->phase_names, cut);
	if (i >= 0)
		return (int)i;
	/* The final flush always finds room: its phase is the one past the cap. */
	if (c->nphases > CACHE_MAX_PHASES && strcmp(cut, "flush") != 0)
		return -ENOSPC;
	if (c->nphases == c->phases_cap) {
		c->phases_cap *= 2;
		c->phases = xrealloc(c->phases, c->phases_cap * sizeof(*c->phases));
	}
	p = &c->phases[c->nphases];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", cut);
	name_index_add(&c->phase_names, p->name, c->nphases);
	/* a one-pass model's models, a feed's slices: the same phases at the same indices */
	if (c->drive->phase)
		c->drive->phase(c, cut);
	return (int)c->nphases++;
}

void
cache_set_phase(struct cache *c, int phase)
{
	if (phase < 0 || (unsigned)phase >= c->nphases || (unsigned)phase == c->cur_phase)
		return;
	if (c->drive->set_phase)
		c->drive->set_phase(c, phase);
	cache_sync_phase(c);
	c->cur_phase = (unsigned)phase;
}

/* ---- arrays ---- */

int
cache_add_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes, bool scratch)
{
	struct array *a;

	if (c->narrays > CACHE_MAX_ARRAYS)
		return -ENOSPC;
	a = &c->arrays[c->narrays];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->base = base;
	a->len = bytes;
	a->scratch = scratch;
	c->last_array = c->prev_array = 0; /* the new range may hide part of an older one */
	if (c->drive->array)
		c->drive->array(c, name, base, bytes, scratch);
	if (scratch && bytes) {
		/* The span's last byte, not its end, which may lie at 2^64. */
		uint64_t lo = base, last = base + (bytes - 1);

		if (c->nscratch) {
			uint64_t old_last = c->scratch_lo + (c->scratch_len - 1);

			if (c->scratch_lo < lo)
				lo = c->scratch_lo;
			if (old_last > last)
				last = old_last;
		}
		c->scratch_lo = lo;
		c->scratch_len =
			last - lo + 1; /* 0 only for the whole address space: unreachable */
		c->nscratch++;
	}
	return (int)c->narrays++;
}

/* ---- getters ---- */

unsigned
cache_level_count(const struct cache *c)
{
	return c->nlv;
}

const struct cache_level_config *
cache_level_config(const struct cache *c, unsigned i)
{
	return &c->lv[i].cfg;
}

const struct cache_level_stats *
cache_level_stats(const struct cache *c, unsigned i)
{
	return &c->lv[i].st;
}

static void
traffic_sum(struct cache_traffic *dst, const struct cache_traffic *t)
{
	dst->read_bytes += t->read_bytes;
	dst->write_bytes += t->write_bytes;
	dst->rfo_bytes += t->rfo_bytes;
	dst->flush_write_bytes += t->flush_write_bytes;
	dst->flush_read_bytes += t->flush_read_bytes;
}

/* Rebuilds the DRAM, per-array and per-phase totals from the (phase, array) cells. */
static void
sum_traffic(struct cache *c)
{
	memset(&c->dram, 0, sizeof(c->dram));
	for (unsigned a = 0; a < c->narrays; a++)
		memset(&c->arrays[a].traffic, 0, sizeof(c->arrays[a].traffic));
	for (unsigned p = 0; p < c->nphases; p++) {
		struct phase *ph = &c->phases[p];

		memset(&ph->traffic, 0, sizeof(ph->traffic));
		for (unsigned a = 0; a < c->narrays; a++) {
			traffic_sum(&ph->traffic, &ph->per_array[a]);
			traffic_sum(&c->arrays[a].traffic, &ph->per_array[a]);
		}
		traffic_sum(&c->dram, &ph->traffic);
	}
}

const struct cache_traffic *
cache_dram(struct cache *c)
{
	sum_traffic(c);
	return &c->dram;
}

const struct cache_cpu_stats *
cache_cpu(const struct cache *c)
{
	return &c->cpu;
}

unsigned
cache_array_count(const struct cache *c)
{
	return c->narrays;
}

const char *
cache_array_name(const struct cache *c, unsigned i)
{
	return c->arrays[i].name;
}

bool
cache_array_is_scratch(const struct cache *c, unsigned i)
{
	return c->arrays[i].scratch;
}

const struct cache_traffic *
cache_array_traffic(struct cache *c, unsigned i)
{
	sum_traffic(c);
	return &c->arrays[i].traffic;
}

const uint64_t *
cache_array_scratch(const struct cache *c, unsigned i)
{
	return c->arrays[i].scratch_bytes;
}

unsigned
cache_phase_count(const struct cache *c)
{
	return c->nphases;
}

const char *
cache_phase_name(const struct cache *c, unsigned i)
{
	return c->phases[i].name;
}

const struct cache_traffic *
cache_phase_traffic(struct cache *c, unsigned i)
{
	sum_traffic(c);
	return &c->phases[i].traffic;
}

const struct cache_traffic *
cache_phase_array_traffic(const struct cache *c, unsigned p, unsigned a)
{
	return &c->phases[p].per_array[a];
}

const struct cache_level_stats *
cache_phase_level_stats(struct cache *c, unsigned p, unsigned i)
{
	cache_sync_phase(c);
	return &c->phases[p].lvl[i];
}
