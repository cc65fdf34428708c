/*
 * The slices' side of a feed (sim/drive/feed.h; sim/drive/feed.c's Notes say how it works):
 * each slice applies its batches of events to its model, on its own thread or the caller's.
 */

#include <string.h>

#include "sim/cache_run.h"
#include "base/util.h"
#include "sim/drive/feed_internal.h"

/* The name in the events from e. */
static void
name_at(const struct cache_ref *e, char *name)
{
	memcpy(name, e, CACHE_NAME_MAX);
	name[CACHE_NAME_MAX - 1] = 0;
}

/* The header ev[i] and its fields; returns the index of its last event. */
static unsigned
apply(struct cache *c, const struct cache_ref *ev, unsigned i, const struct owned *own)
{
	const struct cache_ref *e = &ev[i];
	char name[CACHE_NAME_MAX];
	struct cache_run r;

	switch (e->kind) {
	case EV_RUN:
		r = (struct cache_run){ e->addr,
					ev[i + 1].addr,
					ev[i + 1].kind,
					e->size,
					ev[i + 1].size,
					(uint8_t)(e->count & 3),
					(uint8_t)((e->count >> 2) & 3),
					(uint8_t)(e->count >> 4) };
		cache_access_run(c, &r, own->shift, own->mask, own->bits, own->memo);
		return i + 1;
	case EV_MERGED:
		cache_access_merged(c, e->addr, e->size, (enum cache_op)e->count, ev[i + 1].size,
				    ev[i + 1].addr);
		return i + 1;
	case EV_ARRAY:
		name_at(&ev[i + 2], name);
		cache_add_array(c, name, e->addr, ev[i + 1].addr, false);
		return i + 1 + NAME_EVS;
	case EV_PHASE:
		name_at(&ev[i + 1], name);
		cache_add_phase(c, name);
		return i + NAME_EVS;
	case EV_HITS: /* the processor's counts are the feed model's: only L1's matter */
		cache_count_fast(c, e->addr, ev[i + 1].addr, 0, 0);
		return i + 1;
	case EV_BELOW:
		c->drive->below(c, e->addr, e->size, (enum req)((ev[i + 1].addr >> 32) & 0xff),
				(uint32_t)ev[i + 1].addr, (unsigned)(ev[i + 1].addr >> 40));
		return i + 1;
	default: /* EV_SET_PHASE */
		cache_set_phase(c, (int)e->addr);
		return i;
	}
}

/* A batch through the model's calls alone. */
static void
consume_model(struct cache *c, const struct cache_ref *ev, unsigned n, const struct owned *own)
{
	unsigned i = 0;

	while (i < n) {
		i += (unsigned)cache_access_refs(c, ev + i, n - i);
		if (i < n)
			i = apply(c, ev, i, own) + 1;
	}
}

/* A batch where the inline L1 path applies (v): loads and stores inside one line settle as in
 * traces/mtrace.c's fused loop, the rest through the model; shift and ways are constants where
 * the caller can make them. */
static ALWAYS_INLINE void
consume_inline(struct cache *c, const struct cache_fast_l1 *v, const struct cache_ref *ev,
	       unsigned n, const struct owned *own, const unsigned shift, const uint64_t ways)
{
	const struct cache_fast_l1 g = { v->tags,    v->set_mask,    ways,       shift, v->lru,
					 v->l2_tags, v->l2_set_mask, v->l2_ways, 0,     0,
					 0 };
	const uint64_t line_bytes = UINT64_C(1) << shift;
	uint64_t ops[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	struct cache_fast_misses m = { 0, 0, 0 };

	for (unsigned i = 0; i < n; i++) {
		const struct cache_ref *e = &ev[i];
		uint64_t a = e->addr, line = a >> shift, *set;
		unsigned op = e->kind;

		if (op > CACHE_OP_STORE || e->count != 1 || ((a + e->size - 1) >> shift) != line) {
			/* Counts first: level counts go to the phase current when added. */
			cache_count_fast(c, ops[0], ops[1], bytes[0], bytes[1]);
			cache_count_fast_misses(c, &m);
			ops[0] = ops[1] = bytes[0] = bytes[1] = 0;
			if (op < CACHE_OP_COUNT)
				cache_access(c, a, e->size, (enum cache_op)op, e->count);
			else
				i = apply(c, ev, i, own);
			continue;
		}
		ops[op]++;
		bytes[op] += e->size;
		set = cache_fast_set(&g, line);
		if (!cache_fast_hit_recent(set, line, op) &&
		    !cache_fast_hit_older(&g, set, line, op) &&
		    !(g.l2_tags && e->size != line_bytes &&
		      cache_fast_l2_hit(&g, set, line, op, &m)))
			cache_fast_miss(c, a, e->size, op);
	}
	cache_count_fast(c, ops[0], ops[1], bytes[0], bytes[1]);
	cache_count_fast_misses(c, &m);
}

static NOINLINE void
consume_64x8(struct cache *c, const struct cache_fast_l1 *v, const struct cache_ref *ev, unsigned n,
	     const struct owned *own)
{
	consume_inline(c, v, ev, n, own, 6, 8);
}

static NOINLINE void
consume_any(struct cache *c, const struct cache_fast_l1 *v, const struct cache_ref *ev, unsigned n,
	    const struct owned *own)
{
	consume_inline(c, v, ev, n, own, v->line_shift, v->ways);
}

/* A batch: the slices' arrays are never scratch, so whether the inline path applies depends
 * on the config alone. */
static void
consume(struct cache *c, const struct cache_fast_l1 *v, bool fast, const struct cache_ref *ev,
	unsigned n, const struct owned *own)
{
	if (!fast)
		consume_model(c, ev, n, own);
	else if (v->line_shift == 6 && v->ways == 8)
		consume_64x8(c, v, ev, n, own);
	else
		consume_any(c, v, ev, n, own);
}

struct slice *
feed_take(struct cache_feed *f, const struct slice *prefer)
{
	struct slice *best = NULL;
	uint64_t most = 0;

	for (unsigned i = 0; i < f->k; i++) {
		struct slice *s = &f->sl[i];
		uint64_t behind = s->head - s->tail;

		if (!s->busy && (behind > most || (behind == most && behind && s == prefer))) {
			best = s;
			most = behind;
		}
	}
	if (best)
		best->busy = true;
	return best;
}

void
feed_simulate(struct cache_feed *f, struct slice *s)
{
	struct batch *b = &s->ring[s->tail % FEED_RING];

	pthread_mutex_unlock(&f->mu);
	consume(s->c, &s->v, s->fast, b->ev, b->n, &s->own);
	pthread_mutex_lock(&f->mu);
	b->full = false;
	s->tail++;
	s->busy = false;
	if (f->producer_waits)
		pthread_cond_signal(&f->room);
	/* Free again with batches left: an idle thread may take it. */
	if (f->idle && s->head != s->tail)
		pthread_cond_signal(&f->more);
}

struct slice *
feed_take_flush(struct cache_feed *f)
{
	if (!f->done || !f->flush)
		return NULL;
	for (unsigned i = 0; i < f->k; i++) {
		struct slice *s = &f->sl[i];

		if (!s->busy && !s->flushed && s->head == s->tail) {
			s->busy = true;
			return s;
		}
	}
	return NULL;
}

void
feed_flush_slice(struct cache_feed *f, struct slice *s)
{
	pthread_mutex_unlock(&f->mu);
	cache_flush(s->c);
	pthread_mutex_lock(&f->mu);
	s->flushed = true;
	s->busy = false;
}

void *
feed_slice_main(void *arg)
{
	struct worker *w = arg;
	struct cache_feed *f = w->f;
	struct slice *last = NULL, *s;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		if (!f->hold && (s = feed_take(f, last))) {
			feed_simulate(f, s);
			last = s;
		} else if (!f->hold && (s = feed_take_flush(f))) {
			feed_flush_slice(f, s);
		} else if (f->done && !f->hold) {
			break; /* what is left, another thread holds and finishes */
		} else {
			double t = now_seconds();

			f->idle++;
			pthread_cond_wait(&f->more, &f->mu);
			f->idle--;
			w->idle_s += now_seconds() - t;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}
