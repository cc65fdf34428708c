/*
 * The block scheduler and L2 of the GPU SDPA model (gpu/sdpa_sim.h).
 *
 * Notes: the slots are SMs x blocks per SM (gpu/sdpa_plan.c derives 2 for the kernels
 * measured, as ncu's waves column shows: grid / 264). A round visits the slots in order and
 * each resident block does one step: its Q tile on the first, one K and one V tile on each,
 * its outputs on the last. A block that finishes hands its slot to the next block in grid
 * order (x fastest), which starts in the next round. Blocks of a causal kernel have different
 * step counts, so the blocks in flight drift apart through the grid, as on the GPU.
 * The L2 is one LRU by default (gpu/tilelru.h: per tile; SDPA_BACKEND_LINES feeds the same
 * accesses line by line to sim/cache.c, for tests), or random replacement, or hashed sets, or
 * two partitions (SDPA_BACKEND_PARTITIONS): the alternatives docs/gpu.md compares.
 */

#include "gpu/sdpa_sim.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/progress.h"
#include "gpu/l2expect.h"
#include "gpu/tilelru.h"
#include "sim/cache.h"

#define LINE 128
#define SECTOR 32

#define COPY TILELRU_CLASSES / 2 /* class offset of a partition's copies of far lines */

struct l2 {
	struct tilelru *tiles;
	struct tilelru *part[2]; /* SDPA_BACKEND_PARTITIONS */
	struct l2expect *expect; /* SDPA_BACKEND_SETS */
	struct l2sets *hashed;   /* SDPA_BACKEND_HASHED */
	bool by_page;            /* hashed by address: base[] are addresses */
	const char *why;         /* why the L2's configuration is refused (-EINVAL) */
	struct cache *lines;
	uint64_t base[SDPA_ARRAYS]; /* tile id or address of each array's first tile */
	int array_index[SDPA_ARRAYS];
};

/* The two-partition L2: each half of a tile (at least a sector) has its own home. */
static void
part_access(struct l2 *l, const struct sdpa_access *a, unsigned side)
{
	uint64_t tile = l->base[a->array] + a->tile;
	unsigned halves = a->bytes >= 2 * SECTOR ? 2 : 1;
	uint32_t half = a->bytes / halves;

	for (unsigned h = 0; h < halves; h++) {
		uint64_t id = 2 * tile + h;
		unsigned home = halves == 2 ? h : (unsigned)(tile & 1);

		if (a->store) {
			tilelru_access(l->part[home], id, half, a->array, true);
			continue;
		}
		if (home == side || !tilelru_holds(l->part[side], id, half))
			tilelru_access(l->part[home], id, half, a->array, false);
		if (home != side)
			tilelru_access(l->part[side], id, half, a->array + COPY, false);
	}
}

static void
l2_access(struct l2 *l, const struct sdpa_access *a, unsigned side)
{
	if (l->part[0]) {
		part_access(l, a, side);
		return;
	}
	if (l->tiles) {
		tilelru_access(l->tiles, l->base[a->array] + a->tile, a->bytes, a->array, a->store);
		return;
	}
	if (l->expect) {
		l2expect_access(l->expect, l->base[a->array] + a->tile, a->bytes, a->array,
				a->store);
		return;
	}
	if (l->by_page) {
		l2sets_access_at(l->hashed, l->base[a->array] + a->offset, a->bytes, a->array,
				 a->store, side);
		return;
	}
	if (l->hashed) {
		l2sets_access(l->hashed, l->base[a->array] + a->tile, a->bytes, a->array, a->store,
			      side);
		return;
	}
	for (uint64_t o = 0; o < a->bytes; o += LINE) {
		uint64_t n = a->bytes - o < LINE ? a->bytes - o : LINE;

		cache_access(l->lines, l->base[a->array] + a->offset + o, (uint32_t)n,
			     a->store ? CACHE_OP_STORE : CACHE_OP_LOAD, 1);
	}
}

static void
l2_traffic(struct l2 *l, struct sdpa_traffic *t)
{
	*t = (struct sdpa_traffic){ 0 };
	for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
		if (l->part[0]) {
			for (unsigned i = 0; i < 2; i++) {
				struct tilelru_traffic x = tilelru_dram(l->part[i], a);

				t->read[a] += x.read_bytes, t->write[a] += x.write_bytes;
			}
		} else if (l->tiles || l->expect || l->hashed) {
			struct tilelru_traffic x = l->tiles    ? tilelru_dram(l->tiles, a)
						   : l->expect ? l2expect_dram(l->expect, a)
							       : l2sets_dram(l->hashed, a);

			t->read[a] = x.read_bytes, t->write[a] = x.write_bytes;
		} else if (l->array_index[a] > 0) {
			const struct cache_traffic *x =
				cache_array_traffic(l->lines, (unsigned)l->array_index[a]);

			t->read[a] = x->read_bytes;
			t->write[a] = x->write_bytes - x->flush_write_bytes;
		}
		t->read_bytes += t->read[a];
		t->write_bytes += t->write[a];
	}
	t->lookup_known = !l->part[0];
	t->read_lookup_miss_bytes = l->hashed
					    ? l2sets_read_lookup_misses(l->hashed, TILELRU_CLASSES)
				    : t->lookup_known ? t->read_bytes
						      : 0;
}

/* by_page: each array from a 2 MiB page of its own, one after another (PyTorch's allocator
 * gives a tensor of 1 MiB or more a segment of whole 2 MiB pages). */
static void
page_bases(struct l2 *l, const struct sdpa_plan *p, uint32_t nslots)
{
	const uint64_t page = 2u << 20;
	uint64_t next = page;

	l->by_page = true;
	for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
		uint64_t size = a == SDPA_SPILL ? (uint64_t)nslots * (p->spill_cold + p->spill_hot)
						: sdpa_array_bytes(p, a);

		l->base[a] = next;
		next += (size + page - 1) / page * page;
	}
}

static int
l2_init(struct l2 *l, const struct sdpa_plan *p, uint32_t nslots, const struct sdpa_model *m,
	uint64_t bytes, uint32_t sets)
{
	enum sdpa_backend backend = m->backend;
	uint64_t random_seed = m->random_seed;
	uint64_t next = 0, tiles[SDPA_ARRAYS];

	for (unsigned a = 0; a < SDPA_ARRAYS; a++)
		tiles[a] = a == SDPA_SPILL ? 2 * (uint64_t)nslots : p->tiles[a];

	*l = (struct l2){ 0 };
	if (backend == SDPA_BACKEND_PARTITIONS) {
		for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
			l->base[a] = next;
			next += tiles[a];
		}
		l->part[0] = tilelru_create(bytes / 2, 2 * next, sets, random_seed);
		l->part[1] = tilelru_create(bytes / 2, 2 * next, sets, random_seed);
		return l->part[0] && l->part[1] ? 0 : -ENOMEM;
	}
	if (backend != SDPA_BACKEND_LINES) {
		for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
			l->base[a] = next;
			next += tiles[a];
		}
		if (backend == SDPA_BACKEND_TILES) {
			l->tiles = tilelru_create(bytes, next, sets, random_seed);
			return l->tiles ? 0 : -ENOMEM;
		}
		if (backend == SDPA_BACKEND_HASHED) {
			struct l2sets_config c = { bytes,
						   m->line_ways,
						   m->sample,
						   m->dirty_ways,
						   m->partitions,
						   m->policy,
						   random_seed + m->page_seed,
						   m->by_page };
			const char *why;

			if (m->by_page)
				page_bases(l, p, nslots);
			l->hashed = l2sets_create(&c, &why);
			l->why = why;
			return l->hashed ? 0 : why ? -EINVAL : -ENOMEM;
		}
		l->expect = l2expect_create(bytes, m->line_ways, next);
		return l->expect ? 0 : -ENOMEM;
	} else {
		struct cache_config cfg = { 0 };
		char e[256];

		cfg.levels = 1;
		snprintf(cfg.level[0].name, sizeof(cfg.level[0].name), "L2");
		cfg.level[0].size_bytes = bytes;
		cfg.level[0].fully_assoc = true;
		cfg.level[0].assoc = (uint32_t)(bytes / LINE);
		cfg.level[0].line_bytes = LINE;
		cfg.level[0].alloc = CACHE_ALLOC_VALIDATE;
		if (cache_config_validate(&cfg, e, sizeof(e)))
			return -EINVAL;
		l->lines = cache_create(&cfg);
		if (!l->lines)
			return -ENOMEM;
		for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
			uint64_t size = a == SDPA_SPILL ? (uint64_t)nslots * (p->spill_cold +
											p->spill_hot)
							: sdpa_array_bytes(p, a);

			l->base[a] = next + (1u << 20);
			next = (l->base[a] + size + (1u << 20)) & ~(uint64_t)((1u << 20) - 1);
			if (size)
				l->array_index[a] = cache_add_array(l->lines, sdpa_array_name(a),
								    l->base[a], size, false);
		}
		return 0;
	}
}

static void
l2_finish(struct l2 *l)
{
	tilelru_destroy(l->tiles);
	l2expect_destroy(l->expect);
	l2sets_destroy(l->hashed);
	tilelru_destroy(l->part[0]);
	tilelru_destroy(l->part[1]);
	cache_destroy(l->lines);
}

struct slot {
	uint64_t block;
	uint32_t step, steps;
	bool busy;
};

/* The partition side of slot s: consecutive blocks alternate sides (an assumption: the block
 * scheduler spreads consecutive blocks over the GPCs). */
static unsigned
side_of(uint32_t s)
{
	return s % 2;
}

/* Slot s's spilled registers: its cold part (tile 2s, once a block) or hot part (tile 2s + 1,
 * every K/V step), both in one frame per slot, as a new block on an SM reuses the local memory
 * of the warps that finished there. */
static void
spill_store(struct l2 *l, const struct sdpa_plan *p, uint32_t s, bool hot)
{
	uint32_t frame = p->spill_cold + p->spill_hot;
	struct sdpa_access a = { SDPA_SPILL, 2 * (uint64_t)s + hot, hot ? p->spill_hot : p->spill_cold,
				 (uint64_t)s * frame + (hot ? p->spill_cold : 0), true };

	if (a.bytes)
		l2_access(l, &a, side_of(s));
}

static void
run_main(const struct sdpa_plan *p, uint32_t nslots, struct slot *slots, struct l2 *l, bool spill)
{
	uint64_t next = 0, total = sdpa_blocks(p);
	uint32_t busy = 0;
	struct sdpa_access acc[SDPA_STEP_MAX];
	/* The progress line counts steps: a causal kernel's blocks differ in length. */
	double steps = progress_enabled() ? sdpa_steps(p) : 0, done = 0;

	progress_begin("sdpa");
	for (uint32_t s = 0; s < nslots && next < total; s++, busy++)
		slots[s] = (struct slot){ next, 0, sdpa_block_steps(p, next), true }, next++;
	while (busy) {
		if (steps > 0)
			progress_report(done / steps, done, steps, "block steps");
		for (uint32_t s = 0; s < nslots; s++) {
			struct slot *k = &slots[s];
			unsigned n;

			if (!k->busy)
				continue;
			done++;
			n = sdpa_block_step(p, k->block, k->step, acc);
			for (unsigned i = 0; i < n; i++)
				l2_access(l, &acc[i], side_of(s));
			if (spill && k->step == 0)
				spill_store(l, p, s, false);
			if (spill)
				spill_store(l, p, s, true);
			if (++k->step < k->steps)
				continue;
			if (next < total) {
				*k = (struct slot){ next, 0, sdpa_block_steps(p, next), true };
				next++;
			} else {
				k->busy = false;
				busy--;
			}
		}
	}
	progress_end();
}

/* flash_fwd_splitkv_combine_kernel: each block of combine_block_m rows reads the splits'
 * log-sum-exps, then their partial O rows, and writes O and the log-sum-exp. Sector-sized
 * tiles for the log-sum-exps, which neighbouring blocks share. */
static int
run_combine(const struct sdpa_plan *p, uint64_t l2_bytes, struct sdpa_traffic *t)
{
	uint64_t rows = (uint64_t)p->b * p->h * p->nq, cb = p->combine_block_m;
	uint64_t lse_sectors = (rows * 4 + SECTOR - 1) / SECTOR;
	uint64_t base_oacc = lse_sectors * p->splits,
		 base_o = base_oacc + p->combine_grid * p->splits;
	uint64_t base_lse = base_o + p->combine_grid;
	struct tilelru *c = tilelru_create(l2_bytes, base_lse + lse_sectors, 1, 0);

	if (!c)
		return -ENOMEM;
	for (uint64_t i = 0; i < p->combine_grid; i++) {
		uint64_t r0 = i * cb, r1 = r0 + cb < rows ? r0 + cb : rows;

		for (uint32_t s = 0; s < p->splits; s++)
			for (uint64_t x = r0 * 4 / SECTOR; x <= (r1 * 4 - 1) / SECTOR; x++)
				tilelru_access(c, s * lse_sectors + x, SECTOR, SDPA_LSEACC, false);
		for (uint32_t s = 0; s < p->splits; s++)
			tilelru_access(c, base_oacc + s * p->combine_grid + i,
				       (uint32_t)((r1 - r0) * p->d_rounded * 4), SDPA_OACC, false);
		tilelru_access(
			c, base_o + i,
			(uint32_t)(((r1 - r0) * p->shape.d * 2 + SECTOR - 1) / SECTOR * SECTOR),
			SDPA_O, true);
		for (uint64_t x = r0 * 4 / SECTOR; x <= (r1 * 4 - 1) / SECTOR; x++)
			tilelru_access(c, base_lse + x, SECTOR, SDPA_LSE, true);
	}
	*t = (struct sdpa_traffic){ 0 };
	for (unsigned a = 0; a < SDPA_ARRAYS; a++) {
		struct tilelru_traffic x = tilelru_dram(c, a);

		t->read[a] = x.read_bytes, t->write[a] = x.write_bytes;
		t->read_bytes += x.read_bytes, t->write_bytes += x.write_bytes;
	}
	t->read_lookup_miss_bytes = t->read_bytes, t->lookup_known = true;
	tilelru_destroy(c);
	return 0;
}

uint32_t
sdpa_l2_sets(const struct sdpa_plan *p, uint64_t l2_bytes, uint32_t ways)
{
	uint64_t tile = (uint64_t)p->block_n * p->shape.d * 2, sets;

	if (ways == 0)
		return 1;
	sets = l2_bytes / ((uint64_t)ways * tile);
	return sets ? (uint32_t)(sets < 65536 ? sets : 65536) : 1;
}

/* The model with the GPU's values in place of its zeros. */
static struct sdpa_model
resolve(const struct sdpa_model *m, const struct sdpa_gpu *g)
{
	struct sdpa_model r = *m;
	bool sets = m->backend == SDPA_BACKEND_SETS || m->backend == SDPA_BACKEND_HASHED;

	if (!r.l2_bytes)
		r.l2_bytes = sets ? g->l2_hashed_bytes : g->l2_model_bytes;
	if (!r.line_ways)
		r.line_ways = m->by_page ? SDPA_PAGE_WAYS : g->l2_hashed_ways;
	if (r.dirty_ways == 0)
		r.dirty_ways = g->l2_hashed_dirty_ways;
	else if (r.dirty_ways == UINT32_MAX)
		r.dirty_ways = 0;
	if (!r.sample)
		r.sample = SDPA_SAMPLE_DEFAULT;
	if (!r.partitions)
		r.partitions = g->l2_hashed_partitions;
	return r;
}

int
sdpa_simulate(const struct sdpa_plan *p, const struct sdpa_gpu *g, const struct sdpa_model *m,
	      struct sdpa_result *out, char *err, size_t errlen)
{
	struct sdpa_model mm = resolve(m, g);
	struct l2 l;
	struct slot *slots;
	int rc = 0;

	*out = (struct sdpa_result){ 0 };
	out->model = mm;
	out->l2_bytes = mm.l2_bytes;
	out->slots = m->slots ? m->slots : g->sms * p->blocks_per_sm;
	out->ways = m->ways == SDPA_WAYS_GPU ? g->l2_ways : m->ways;
	out->sets = sdpa_l2_sets(p, out->l2_bytes, out->ways);
	slots = calloc(out->slots, sizeof(*slots));
	if (!slots || (rc = l2_init(&l, p, out->slots, &mm, out->l2_bytes, out->sets))) {
		free(slots);
		if (rc == -EINVAL && m->by_page)
			snprintf(err, errlen, "--l2-hash pages: %s", l.why);
		else if (rc == -EINVAL)
			snprintf(err, errlen,
				 "the hashed L2 needs capacity / (128 x ways) sets, at least "
				 "the sample (%u), ways 1 to %u, dirty ways up to the ways",
				 mm.sample, L2SETS_WAYS_MAX);
		else
			snprintf(err, errlen, "not enough memory for the L2 model of this shape");
		return rc == -EINVAL ? rc : -ENOMEM;
	}
	run_main(p, out->slots, slots, &l, !m->no_spill);
	if (l.expect)
		l2expect_finish(l.expect);
	l2_traffic(&l, &out->main);
	l2_finish(&l);
	free(slots);
	if (p->splits > 1 && run_combine(p, out->l2_bytes, &out->combine)) {
		snprintf(err, errlen, "not enough memory for the L2 model of this shape");
		return -ENOMEM;
	}
	return 0;
}
