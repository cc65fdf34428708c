/*
 * A hashed set-associative LRU counted in expectation, per tile (gpu/l2expect.h).
 *
 * Notes: LRU stack distances in bytes come from a Fenwick tree over access times: the slot of
 * each tile's last access holds its bytes, so the distinct bytes touched since time t are the
 * sum of the slots after t. When the times run out the live slots are renumbered in order
 * (amortized O(1) an access). P(Poisson(lambda) >= ways) is tabulated once and interpolated.
 */

#include "gpu/l2expect.h"

#include <math.h>
#include <stdlib.h>

#define NONE UINT64_MAX
#define TABLE 8192 /* points of the Poisson tail table */

struct tile {
	uint64_t last; /* time slot of the last access; NONE before the first */
	double dirty;  /* expected fraction of the tile's lines dirty and held */
	uint32_t bytes;
	uint8_t cls;
	bool seen;
};

struct l2expect {
	double capacity; /* bytes */
	uint32_t ways;
	struct tile *tiles;
	uint64_t ntiles;
	uint64_t *fen;   /* Fenwick tree over time slots 1 .. nslots, bytes */
	uint64_t *owner; /* tile id whose last access is at each slot, or NONE */
	uint64_t nslots, now;
	/* tail[i]: P(Poisson(lambda) >= ways) at lambda = i x lambda_max / TABLE */
	double lambda_max, *tail;
	double read[TILELRU_CLASSES], write[TILELRU_CLASSES];
};

/* P(Poisson(lambda) >= k), from the log of each term of the sum below k. */
static double
poisson_tail(double lambda, uint32_t k)
{
	double below = 0;

	if (lambda <= 0)
		return 0;
	for (uint32_t i = 0; i < k; i++)
		below += exp(-lambda + i * log(lambda) - lgamma(i + 1.0));
	return below >= 1 ? 0 : 1 - below;
}

static int
lru_init(struct l2expect *l)
{
	l->nslots = 2 * l->ntiles + 1024;
	l->fen = calloc(l->nslots + 1, sizeof(*l->fen));
	l->owner = malloc((l->nslots + 1) * sizeof(*l->owner));
	l->tail = malloc((TABLE + 1) * sizeof(*l->tail));
	if (!l->fen || !l->owner || !l->tail)
		return -1;
	for (uint64_t i = 0; i <= l->nslots; i++)
		l->owner[i] = NONE;
	/* past lambda_max the tail is 1 to within 1e-12 */
	l->lambda_max = l->ways + 14 * sqrt((double)l->ways) + 40;
	for (uint32_t i = 0; i <= TABLE; i++)
		l->tail[i] = poisson_tail(l->lambda_max * i / TABLE, l->ways);
	return 0;
}

struct l2expect *
l2expect_create(uint64_t capacity_bytes, uint32_t ways, uint64_t ntiles)
{
	struct l2expect *l;

	if (capacity_bytes < L2EXPECT_LINE || ntiles >= NONE / 4 || ways == 0 ||
	    ways > L2EXPECT_WAYS_MAX)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->capacity = (double)capacity_bytes;
	l->ways = ways;
	l->ntiles = ntiles ? ntiles : 1;
	l->tiles = calloc(l->ntiles, sizeof(*l->tiles));
	if (!l->tiles || lru_init(l)) {
		l2expect_destroy(l);
		return NULL;
	}
	for (uint64_t i = 0; i < l->ntiles; i++)
		l->tiles[i].last = NONE;
	return l;
}

void
l2expect_destroy(struct l2expect *l)
{
	if (!l)
		return;
	free(l->tiles);
	free(l->fen);
	free(l->owner);
	free(l->tail);
	free(l);
}

static void
fen_add(struct l2expect *l, uint64_t i, int64_t v)
{
	for (; i <= l->nslots; i += i & (~i + 1))
		l->fen[i] += (uint64_t)v;
}

/* Bytes at slots 1 .. i. */
static uint64_t
fen_sum(const struct l2expect *l, uint64_t i)
{
	uint64_t s = 0;

	for (; i > 0; i -= i & (~i + 1))
		s += l->fen[i];
	return s;
}

/* Renumbers the live slots 1 .. n in time order and rebuilds the tree. */
static void
compact(struct l2expect *l)
{
	uint64_t n = 0;

	for (uint64_t i = 1; i <= l->now; i++) {
		uint64_t id = l->owner[i];

		l->owner[i] = NONE;
		if (id == NONE)
			continue;
		l->owner[++n] = id;
		l->tiles[id].last = n;
	}
	for (uint64_t i = 0; i <= l->nslots; i++)
		l->fen[i] = 0;
	/* the linear build: each node passes its sum to its parent, empty slots too */
	for (uint64_t i = 1; i <= l->nslots; i++) {
		uint64_t j = i + (i & (~i + 1));

		if (i <= n)
			l->fen[i] += l->tiles[l->owner[i]].bytes;
		if (j <= l->nslots)
			l->fen[j] += l->fen[i];
	}
	l->now = n;
}

double
l2expect_miss_prob(const struct l2expect *l, double d_bytes)
{
	double x, f;
	uint32_t i;

	x = d_bytes * l->ways / l->capacity / l->lambda_max * TABLE;
	if (x >= TABLE)
		return 1;
	i = (uint32_t)x;
	f = x - i;
	return l->tail[i] * (1 - f) + l->tail[i + 1] * f;
}

/* The miss probability of tile id's lines now (1 before its first access); moves the tile to
 * the newest slot. */
static double
lru_touch(struct l2expect *l, uint64_t id, uint32_t bytes)
{
	struct tile *e = &l->tiles[id];
	double q = 1;

	if (e->last != NONE) {
		q = l2expect_miss_prob(l, (double)(fen_sum(l, l->now) - fen_sum(l, e->last)));
		fen_add(l, e->last, -(int64_t)e->bytes);
		l->owner[e->last] = NONE;
	}
	if (l->now == l->nslots)
		compact(l);
	e->last = ++l->now;
	e->bytes = bytes;
	l->owner[e->last] = id;
	fen_add(l, e->last, bytes);
	return q;
}

void
l2expect_access(struct l2expect *l, uint64_t id, uint32_t bytes, unsigned cls, bool write)
{
	struct tile *e = &l->tiles[id];
	double q;

	q = lru_touch(l, id, bytes);
	e->seen = true;
	/* dirty lines evicted since the last access were written then */
	l->write[e->cls] += e->dirty * q * bytes;
	if (write) {
		e->dirty = 1;
	} else {
		l->read[cls] += q * bytes;
		e->dirty *= 1 - q;
	}
	e->cls = (uint8_t)cls;
}

void
l2expect_finish(struct l2expect *l)
{
	uint64_t total = fen_sum(l, l->now);

	for (uint64_t id = 0; id < l->ntiles; id++) {
		struct tile *e = &l->tiles[id];
		double since;

		if (!e->seen || e->dirty == 0)
			continue;
		since = (double)(total - fen_sum(l, e->last));
		l->write[e->cls] += e->dirty * l2expect_miss_prob(l, since) * e->bytes;
		e->dirty = 0;
	}
}

struct tilelru_traffic
l2expect_dram(const struct l2expect *l, unsigned cls)
{
	double r = 0, w = 0;

	for (unsigned i = 0; i < TILELRU_CLASSES; i++) {
		if (cls < TILELRU_CLASSES && i != cls)
			continue;
		r += l->read[i];
		w += l->write[i];
	}
	return (struct tilelru_traffic){ (uint64_t)llround(r), (uint64_t)llround(w) };
}
