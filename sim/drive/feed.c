/*
 * One producer feeding the slices of a run split by set (sim/drive/feed.h).
 *
 * Notes:
 *  - The feed model does what a whole model does before its levels: it counts the processor's
 *    accesses and the scratch bytes (scratch accesses stop there), as the plain model's
 *    access counts them (feed_model_access()). What would reach its levels goes, as struct
 *    cache_ref events, to the ring of the slice that owns its chunk (the largest line of any
 *    level); an access over chunks is cut at their bounds, each piece to its slice, as
 *    cache_set_slice()'s slices cut it. Arrays and phases go to every slice, in order with the
 *    accesses.
 *  - Slice i owns the chunks whose index modulo the slices is i: its sets at every level are
 *    those chunk bits', as in cache_set_slice(). There are more slices than threads where the
 *    sets and memory allow (cache_feed_slices_for()).
 *  - A slice is a whole model that sees only the pieces in its chunks: its sets are those of
 *    its chunks, and they change as in the one-thread run (sim/drive/slice.c says why), so the
 *    level and DRAM counts add up (cache_add_slice()). The processor's counts and scratch
 *    bytes are the feed model's; the slices get every array as not scratch, so that no piece
 *    of an access that was not scratch is taken for one.
 *  - Rings of batches, one per slice; a batch goes at FEED_BATCH events, or once its runs
 *    hold FEED_BATCH_WORK accesses. A thread takes the slice furthest behind that no other
 *    holds and simulates its next batch (sim/drive/feed_slice.c), so a slice's batches go in
 *    order, one thread at a time (the mutex orders its model's state between them), and which
 *    thread took which never changes a count. A thread on a slow core holds one slice at a
 *    time; the others take the rest. The producer's thread takes batches too where a ring it
 *    fills is full (that slice's first), and all it can at the end, so that it does not sit
 *    waiting for room while batches wait for a thread. Threads wait on condition
 *    variables, never spin, so a machine with fewer cores than threads runs them in turns. A
 *    slice settles loads and stores inside one L1 line inline, as traces/mtrace.c does.
 *  - The hit filter: with an LRU L1 (slot 0 holds the last line accessed in its set) that is
 *    write-back and write-allocate (a store leaves its line there, dirty), and no inclusive
 *    level below (nothing but an access changes L1), the producer knows, per L1 set, the line
 *    in slot 0 while every access to that set went through it one line at a time. An access
 *    that hits it and changes nothing there (a load, or a store to a line known dirty) is
 *    counted, not sent: the slice would change nothing but L1's reads or writes, which go to
 *    slice 0 before each phase switch (level counts belong to the phase current when added).
 *    Any other way to L1 forgets the sets it touches.
 */

#include "sim/drive/feed.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sim/cache_run.h"
#include "sim/drive/feed_internal.h"
#include "sim/drive/feed_test.h"

/* ---- the producer's side ---- */

/* Publishes slice s's batch being filled and makes its next one free: where the ring is
 * full, this thread simulates batches itself, that slice's first, until it is free. */
static NOINLINE void
publish(struct cache_feed *f, struct slice *s)
{
	s->work = 0;
	pthread_mutex_lock(&f->mu);
	if (s->cur->n) {
		s->cur->full = true;
		s->head++;
		if (f->idle && !s->busy)
			pthread_cond_signal(&f->more);
	}
	s->cur = &s->ring[s->head % FEED_RING];
	while (s->cur->full) {
		struct slice *t = feed_take(f, s);
		double w = now_seconds();

		if (t) {
			feed_simulate(f, t);
			f->help_s += now_seconds() - w;
			continue;
		}
		f->producer_waits = true;
		pthread_cond_wait(&f->room, &f->mu);
		f->producer_waits = false;
		f->room_s += now_seconds() - w;
	}
	s->cur->n = 0;
	pthread_mutex_unlock(&f->mu);
}

/* The next `need` events of slice s, in one batch. */
static inline struct cache_ref *
slot(struct cache_feed *f, struct slice *s, unsigned need)
{
	struct cache_ref *e;

	if (s->cur->n + need > FEED_BATCH)
		publish(f, s);
	e = &s->cur->ev[s->cur->n];
	s->cur->n += need;
	return e;
}

/* The slice that owns chunk k. */
static inline struct slice *
slice_of(const struct cache_feed *f, uint64_t k)
{
	return &f->sl[k & f->mask];
}

/* One access in one chunk, to slice s. */
static inline void
route_one(struct cache_feed *f, struct slice *s, uint64_t addr, uint32_t size, enum cache_op op,
	  uint32_t count, uint64_t bytes)
{
	struct cache_ref *e;

	if (count <= UINT16_MAX && bytes == (uint64_t)size * count) {
		e = slot(f, s, 1);
		*e = (struct cache_ref){ addr, size, (uint16_t)op, (uint16_t)count };
		return;
	}
	e = slot(f, s, 2);
	e[0] = (struct cache_ref){ addr, size, EV_MERGED, (uint16_t)op };
	e[1] = (struct cache_ref){ bytes, count, 0, 0 };
}

/* The filter knows nothing of the L1 sets of [addr, addr + size) any more: an access that
 * takes the model's path. */
static void
forget(struct cache_feed *f, uint64_t addr, uint32_t size)
{
	uint64_t first = addr >> f->l1_shift, last = (addr + size - 1) >> f->l1_shift;

	if (last - first > f->filt_mask) {
		for (uint64_t s = 0; s <= f->filt_mask; s++)
			f->filt[s] = NONE;
		return;
	}
	for (uint64_t line = first;; line++) {
		f->filt[line & f->filt_mask] = NONE;
		if (line == last)
			break;
	}
}

/* Sends the hits the filter kept to slice 0 (any slice would do: level counts add up), before
 * a phase changes and at the end. */
static void
send_hits(struct cache_feed *f)
{
	struct cache_ref *e;

	if (!(f->hits[0] | f->hits[1]))
		return;
	e = slot(f, &f->sl[0], 2);
	e[0] = (struct cache_ref){ f->hits[0], 0, EV_HITS, 0 };
	e[1] = (struct cache_ref){ f->hits[1], 0, 0, 0 };
	f->hits[0] = f->hits[1] = 0;
}

/* For a load or store (op 0 or 1, count 1) inside one L1 line: true when the filter knows it
 * hits the line in slot 0 of its set and changes nothing there (a load, or a store to a line
 * known dirty), and counts it; otherwise records that the line will be in slot 0 after it. */
static inline bool
kept(struct cache_feed *f, uint64_t addr, unsigned op)
{
	uint64_t line = addr >> f->l1_shift, *e = &f->filt[line & f->filt_mask];

	if ((*e >> 1) == line && (op == 0 || (*e & 1))) {
		f->hits[op]++;
		return true;
	}
	*e = (line << 1) | op; /* after a load the dirty bit is not known: taken as clean */
	return false;
}

/* What would reach the feed model's levels, to the slices that own its chunks. */
static void
route(struct cache_feed *f, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
      uint64_t bytes)
{
	uint64_t first = addr >> f->shift, last = (addr + size - 1) >> f->shift;

	if (f->filt && op != CACHE_OP_IFETCH)
		forget(f, addr, size);
	if (first == last) {
		route_one(f, slice_of(f, first), addr, size, op, count, bytes);
		return;
	}
	/* Over chunks: a piece each (a merged access, bytes other than size x count, lies in
	 * one line, so in one chunk). */
	for (uint64_t k = first;; k++) {
		uint64_t lo = k == first ? addr : k << f->shift;
		uint64_t hi = k == last ? addr + size : (k + 1) << f->shift;

		route_one(f, slice_of(f, k), lo, (uint32_t)(hi - lo), op, count, (hi - lo) * count);
		if (k == last)
			break;
	}
}

/* The feed model's access: counted as the processor's, and scratch bytes kept, as a plain
 * model counts them; the rest goes to the slices. */
static void
feed_model_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
		  uint64_t bytes)
{
	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0)
			route(c->mode, addr, size, op, count, bytes);
		return;
	}
	if (c->nscratch && cache_scratch_bytes(c, addr, op, bytes))
		return;
	route(c->mode, addr, size, op, count, bytes);
}

void
cache_feed_below(struct cache_feed *f, uint64_t addr, uint64_t size, unsigned req, uint32_t count,
		 unsigned flags)
{
	/* A request from a level above lies in one of its lines, so in one chunk. */
	struct cache_ref *e = slot(f, slice_of(f, addr >> f->shift), 2);

	e[0] = (struct cache_ref){ addr, (uint32_t)size, EV_BELOW, 0 };
	e[1] = (struct cache_ref){ count | (uint64_t)req << 32 | (uint64_t)flags << 40, 0, 0, 0 };
}

/* cache_access_refs() on the feed model */
static size_t
feed_model_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	struct cache_feed *f = c->mode;
	const unsigned shift = f->shift;
	const uint64_t mask = f->mask, lo = c->scratch_lo, len = c->scratch_len;
	uint64_t ops = 0, st_ops = 0, bytes = 0, st_bytes = 0;
	/* The batches' fill in locals: stores of events could alias their counts. */
	struct cache_ref *dst[FEED_SLICES_MAX];
	unsigned used[FEED_SLICES_MAX];
	size_t i;

	for (unsigned j = 0; j < f->k; j++) {
		dst[j] = f->sl[j].cur->ev;
		used[j] = f->sl[j].cur->n;
	}
	for (i = 0; i < n && refs[i].kind < CACHE_OP_COUNT; i++) {
		const struct cache_ref r = refs[i];
		uint64_t chunk = r.addr >> shift, k = r.kind, cnt = r.count, j = chunk & mask;
		uint64_t b = (uint64_t)r.size * cnt;

		/* Scratch: counted, no slice gets it (so no batch to sync). */
		if (r.addr - lo < len &&
		    cache_scratch_access(c, r.addr, (enum cache_op)k, r.count, b))
			continue;
		/* Instruction fetches, pieces and what may be scratch: the model's path (it routes
		 * them). */
		if (k == CACHE_OP_IFETCH || r.addr - lo < len ||
		    ((r.addr + r.size - 1) >> shift) != chunk || used[j] == FEED_BATCH) {
			for (unsigned q = 0; q < f->k; q++)
				f->sl[q].cur->n = used[q];
			cache_access(c, r.addr, r.size, (enum cache_op)k, r.count);
			for (unsigned q = 0; q < f->k; q++) {
				dst[q] = f->sl[q].cur->ev;
				used[q] = f->sl[q].cur->n;
			}
			continue;
		}
		/* Scalars with k in {0, 1} as a multiplier, as data_refs() in sim/cache.c. */
		ops += cnt;
		st_ops += k * cnt;
		bytes += b;
		st_bytes += k * b;
		if (f->filt) {
			uint64_t line = r.addr >> f->l1_shift;

			if (((r.addr + r.size - 1) >> f->l1_shift) != line)
				forget(f, r.addr, r.size);
			else if (cnt == 1 ? kept(f, r.addr, (unsigned)k) : 0)
				continue;
			else
				f->filt[line & f->filt_mask] = (line << 1) | k;
		}
		dst[j][used[j]++] = r;
	}
	for (unsigned q = 0; q < f->k; q++)
		f->sl[q].cur->n = used[q];
	c->cpu.ops[CACHE_OP_LOAD] += ops - st_ops;
	c->cpu.ops[CACHE_OP_STORE] += st_ops;
	c->cpu.bytes[CACHE_OP_LOAD] += bytes - st_bytes;
	c->cpu.bytes[CACHE_OP_STORE] += st_bytes;
	return i;
}

bool
cache_feed_run(struct cache *c, const struct cache_run *r)
{
	struct cache_feed *f = c->mode;
	const uint64_t len = (uint64_t)r->n * r->elem;
	uint64_t span, acc;
	cache_classes classes;
	unsigned takers = 0;

	if (!cache_run_aligned(r) || r->op > CACHE_OP_STORE || r->kind > CACHE_RUN_MERGED ||
	    r->line_shift > f->shift || r->elem > UINT16_MAX || len > UINT32_MAX)
		return false;
	if (r->stride && r->rows - 1 > (UINT64_MAX - len) / r->stride)
		return false;
	span = (uint64_t)(r->rows - 1) * r->stride + len;
	/* Within one chunk a plain access goes to one slice, cheaper than one to every slice. */
	if (r->addr + span - 1 < r->addr ||
	    (r->rows == 1 && ((r->addr + len - 1) >> f->shift) == r->addr >> f->shift))
		return false;
	/* Scratch is decided access by access: none of the run may lie in its range. */
	if (c->scratch_len && r->addr < c->scratch_lo + c->scratch_len &&
	    c->scratch_lo < r->addr + span)
		return false;
	if (f->filt)
		for (uint64_t row = 0; row < r->rows; row++)
			forget(f, r->addr + row * r->stride, (uint32_t)len);
	acc = (uint64_t)r->rows * r->n;
	c->cpu.ops[r->op] += acc;
	c->cpu.bytes[r->op] += len * r->rows;
	/* Only to the slices that own a chunk of it: the others would do nothing with it. Each
	 * takes about an equal part of its accesses. */
	classes = f->k > 1 ? cache_run_classes(r, f->shift) : CACHE_CLASSES_ALL;
	for (unsigned i = 0; i < f->k; i++)
		takers += (f->sl[i].own.bits & classes) != 0;
	for (unsigned i = 0; i < f->k; i++) {
		struct slice *s = &f->sl[i];
		struct cache_ref *e;

		if (!(s->own.bits & classes))
			continue;
		e = slot(f, s, 2);
		e[0] = (struct cache_ref){ r->addr, r->n, EV_RUN,
					   (uint16_t)(r->op | r->kind << 2 | r->line_shift << 4) };
		e[1] = (struct cache_ref){ r->stride, r->rows, (uint16_t)r->elem, 0 };
		s->work += acc / takers + 1;
		if (s->work >= FEED_BATCH_WORK)
			publish(f, s);
	}
	return true;
}

void
cache_feed_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op)
{
	struct cache_feed *f = c->mode;
	uint64_t chunk = addr >> f->shift;
	struct slice *s = slice_of(f, chunk);

	if (op > CACHE_OP_STORE || addr - c->scratch_lo < c->scratch_len ||
	    ((addr + size - 1) >> f->shift) != chunk) {
		cache_access(c, addr, size, op, 1);
		return;
	}
	c->cpu.ops[op]++;
	c->cpu.bytes[op] += size;
	if (f->filt) {
		if (((addr + size - 1) >> f->l1_shift) != addr >> f->l1_shift)
			forget(f, addr, size);
		else if (kept(f, addr, op))
			return;
	}
	if (s->cur->n == FEED_BATCH)
		publish(f, s);
	s->cur->ev[s->cur->n++] = (struct cache_ref){ addr, size, (uint16_t)op, 1 };
}

bool
cache_feed_repeats_kept(struct cache *c, const uint64_t *addrs, const uint32_t *sizes,
			const bool *stores, unsigned n, uint32_t count)
{
	struct cache_feed *f = c->mode;

	if (!cache_is_feed(c) || !f->filt)
		return false;
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = addrs[i] >> f->l1_shift, e = f->filt[line & f->filt_mask];

		/* slot 0 of its set known to hold the line, dirty for a store: with two lines of
		 * one set, the set's entry names one of them only */
		if ((e >> 1) != line || (stores[i] && !(e & 1)) ||
		    addrs[i] - c->scratch_lo < c->scratch_len)
			return false;
	}
	for (unsigned i = 0; i < n; i++) {
		f->hits[stores[i]] += count;
		c->cpu.ops[stores[i]] += count;
		c->cpu.bytes[stores[i]] += (uint64_t)sizes[i] * count;
	}
	return true;
}

void
cache_feed_array(struct cache_feed *f, const char *name, uint64_t base, uint64_t bytes)
{

	for (unsigned i = 0; i < f->k; i++) {
		struct cache_ref *e = slot(f, &f->sl[i], 2 + NAME_EVS);

		memset(e, 0, (2 + NAME_EVS) * sizeof(*e));
		e[0] = (struct cache_ref){ base, 0, EV_ARRAY, 0 };
		e[1].addr = bytes;
		snprintf((char *)&e[2], CACHE_NAME_MAX, "%s", name);
	}
}

void
cache_feed_phase(struct cache_feed *f, const char *name)
{

	for (unsigned i = 0; i < f->k; i++) {
		struct cache_ref *e = slot(f, &f->sl[i], 1 + NAME_EVS);

		memset(e, 0, (1 + NAME_EVS) * sizeof(*e));
		e[0].kind = EV_PHASE;
		snprintf((char *)&e[1], CACHE_NAME_MAX, "%s", name);
	}
}

void
cache_feed_set_phase(struct cache_feed *f, int phase)
{

	send_hits(f); /* counted to the phase that ends */
	for (unsigned i = 0; i < f->k; i++)
		*slot(f, &f->sl[i], 1) = (struct cache_ref){ (uint64_t)phase, 0, EV_SET_PHASE, 0 };
}

static void
feed_model_array(struct cache *c, const char *name, uint64_t base, uint64_t bytes, bool scratch)
{
	(void)scratch; /* the slices' arrays are never scratch (see Notes) */
	cache_feed_array(c->mode, name, base, bytes);
}

static void
feed_model_phase(struct cache *c, const char *name)
{
	cache_feed_phase(c->mode, name);
}

static void
feed_model_set_phase(struct cache *c, int phase)
{
	cache_feed_set_phase(c->mode, phase);
}

/* The feed model holds no lines: what would reach its levels goes to the slices. */
static const struct cache_drive feed_drive = {
	.access = feed_model_access,
	.refs = feed_model_refs,
	.below = cache_dram_below,
	.array = feed_model_array,
	.phase = feed_model_phase,
	.set_phase = feed_model_set_phase,
};

bool
cache_is_feed(const struct cache *c)
{
	return c->drive == &feed_drive;
}

/* ---- start and end ---- */

/* Frees f and its models, the threads ended. */
static void
feed_free(struct cache_feed *f)
{
	for (unsigned i = 0; i < f->k; i++) {
		cache_destroy(f->sl[i].c);
		free(f->sl[i].ring);
	}
	cache_destroy(f->model);
	free(f->filt);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->room);
	pthread_cond_destroy(&f->more);
	free(f->sl);
	free(f->w);
	free(f->tid);
	free(f);
}

/* The measurement knobs (cache_feed_measure()): the process's, set before any feed starts. */
static unsigned slices_a_thread = FEED_SLICES_A_THREAD;
static FILE *times_to;

int
cache_feed_measure(unsigned slices, FILE *times)
{
	if (slices > CACHE_CLASSES_MAX || (slices & (slices - 1)))
		return -EINVAL;
	slices_a_thread = slices ? slices : FEED_SLICES_A_THREAD;
	times_to = times;
	return 0;
}

/* Where a run's wall time went, to out: which thread held the others up. */
static void
feed_times(const struct cache_feed *f, FILE *out)
{
	double lo = 0, hi = 0;

	for (unsigned i = 0; i < f->started; i++) {
		double t = f->w[i].idle_s;

		lo = i == 0 || t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	fprintf(out,
		"memsim: feed of %u slices on %u threads: %.3f s; the caller's thread simulated "
		"batches %.3f s and waited for room %.3f s; the other threads waited for batches "
		"%.3f to %.3f s\n",
		f->k, f->started + f->caller, now_seconds() - f->t0, f->help_s, f->room_s, lo, hi);
}

/* Publishes what is left, ends the input, simulates batches on this thread too until none is
 * left to take, and joins the threads; with report, where the wall time went
 * (cache_feed_measure()). */
static void
feed_end(struct cache_feed *f, bool flush, bool report)
{
	struct slice *s;
	double t;

	send_hits(f);
	pthread_mutex_lock(&f->mu);
	for (unsigned i = 0; i < f->k; i++) {
		s = &f->sl[i];
		if (s->cur && s->cur->n) {
			s->cur->full = true;
			s->head++;
		}
	}
	f->done = true;
	f->flush = flush;
	f->hold = false;
	pthread_cond_broadcast(&f->more);
	t = now_seconds();
	for (;;) {
		if ((s = feed_take(f, NULL)))
			feed_simulate(f, s);
		else if ((s = feed_take_flush(f)))
			feed_flush_slice(f, s);
		else
			break;
	}
	f->help_s += now_seconds() - t;
	pthread_mutex_unlock(&f->mu);
	for (unsigned i = 0; i < f->started; i++)
		pthread_join(f->tid[i], NULL);
	if (report && times_to)
		feed_times(f, times_to);
	f->started = 0;
}

/* The hit filter where it is exact: an LRU L1 (slot 0 its most recent line) that is
 * write-back and write-allocate (a store leaves its line in L1, dirty), and no level below
 * that changes L1 but through its accesses (an inclusive one back-invalidates). */
static void
filter_init(struct cache_feed *f, const struct cache_config *cfg)
{
	const struct cache_level_config *l1 = &cfg->level[0];
	uint64_t sets;

	if (!f->sl[0].c->lv[0].lru_order || l1->write != CACHE_WRITE_BACK ||
	    l1->alloc != CACHE_ALLOC_FETCH)
		return;
	for (unsigned i = 1; i < cfg->levels; i++)
		if (cfg->level[i].inclusion != CACHE_INCL_NINE)
			return;
	sets = l1->size_bytes / l1->line_bytes / l1->assoc;
	f->filt = xzalloc(sets * sizeof(*f->filt));
	for (uint64_t s = 0; s < sets; s++)
		f->filt[s] = NONE;
	f->filt_mask = sets - 1;
	f->l1_shift = log2_u64(l1->line_bytes);
}

unsigned
cache_feed_slices_for(const struct cache_config *cfg, unsigned threads)
{
	unsigned most = cache_classes_max(cfg), k = threads, want = threads * slices_a_thread;
	uint64_t bytes = cache_model_bytes(cfg);

	while (k < want && k * 2 <= most && (uint64_t)k * 2 * bytes <= FEED_MODELS_BYTES)
		k *= 2;
	return k;
}

/* How the slices' models are made: make(ctx), each of model_bytes; with producer, a feed model
 * and the hit filter too (a plain run), else neither (a one-pass model's sizes, which get only
 * what leaves the levels above the swept one from a producer that simulates those itself). */
struct feed_models {
	struct cache *(*make)(void *ctx);
	void *ctx;
	uint64_t model_bytes;
	bool producer;
};

/* The slices' models, their rings and the slice threads. */
static struct cache_feed *
feed_start_slices(const struct cache_config *cfg, unsigned threads, unsigned k, bool caller_thread,
		  const struct feed_models *m, bool *short_of_memory, char *err, size_t errlen)
{
	struct cache_feed *f = xzalloc(sizeof(*f));
	unsigned n = threads - caller_thread;

	f->k = k;
	f->threads = threads;
	f->caller = caller_thread;
	f->shift = cache_chunk_shift(cfg);
	f->mask = k - 1;
	f->sl = xzalloc(k * sizeof(*f->sl));
	f->w = xzalloc(n * sizeof(*f->w));
	f->tid = xzalloc(n * sizeof(*f->tid));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->room, NULL);
	pthread_cond_init(&f->more, NULL);
	if (m->producer) {
		f->model = cache_build(cfg, 0, CACHE_MAX_LEVELS);
		if (!f->model) {
			snprintf(err, errlen, "cannot allocate the threads' feed");
			feed_free(f);
			return NULL;
		}
		f->model->drive = &feed_drive;
		f->model->mode = f;
	}
	for (unsigned i = 0; i < k; i++) {
		struct slice *s = &f->sl[i];

		s->f = f;
		s->ring = calloc(FEED_RING, sizeof(*s->ring));
		s->cur = s->ring;
		s->c = m->make(m->ctx);
		if (!s->ring || !s->c) {
			snprintf(err, errlen, "cannot allocate %u cache models (%.1f MiB each)", k,
				 (double)m->model_bytes / 1048576.0);
			feed_free(f);
			*short_of_memory = true;
			return NULL;
		}
		/* Class j of the pattern is chunk index j & mask's: slice i's where that is i. */
		for (unsigned j = 0; j < CACHE_CLASSES_MAX; j++)
			if ((j & f->mask) == i)
				s->own.bits |= (cache_classes)1 << j;
		s->own.shift = f->shift;
		s->own.mask = f->mask;
		s->own.memo = &s->memo;
		s->fast = cache_fast_l1(s->c, &s->v);
		cache_prefault(s->c);
	}
	if (m->producer)
		filter_init(f, cfg);
	f->t0 = now_seconds();
	for (; f->started < n; f->started++) {
		int e;

		f->w[f->started].f = f;
		e = pthread_create(&f->tid[f->started], NULL, feed_slice_main, &f->w[f->started]);
		if (e) {
			snprintf(err, errlen, "cannot start thread %u of %u: %s", f->started + 1, n,
				 strerror(e));
			cache_feed_abort(f);
			/* no room for its stack: maybe beside fewer models */
			*short_of_memory = e == EAGAIN || e == ENOMEM;
			return NULL;
		}
	}
	return f;
}

static struct cache *
make_plain(void *cfg)
{
	return cache_create(cfg);
}

/* feed_start_slices() with cache_feed_slices_for() slices, or where their models or the
 * threads do not fit, half as many down to one a thread: more slices than threads only spread
 * the work. */
struct cache_feed *
cache_feed_start(const struct cache_config *cfg, unsigned threads, bool caller_thread, char *err,
		 size_t errlen)
{
	const struct feed_models m = { make_plain, (void *)cfg, cache_model_bytes(cfg), true };
	unsigned k = cache_feed_slices_for(cfg, threads);
	bool short_of_memory = false;
	struct cache_feed *f;

	while (!(f = feed_start_slices(cfg, threads, k, caller_thread, &m, &short_of_memory, err,
				       errlen)) &&
	       short_of_memory && k > threads) {
		k /= 2;
		short_of_memory = false;
	}
	return f;
}

struct cache_feed *
cache_feed_start_models(const struct cache_config *cfg, unsigned threads,
			struct cache *(*make)(void *ctx), void *ctx, uint64_t model_bytes,
			char *err, size_t errlen)
{
	const struct feed_models m = { make, ctx, model_bytes, false };
	bool short_of_memory = false;

	return feed_start_slices(cfg, threads, threads, false, &m, &short_of_memory, err, errlen);
}

unsigned
cache_feed_slices(const struct cache_feed *f)
{
	return f->k;
}

void
cache_feed_hold(struct cache_feed *f, bool hold)
{
	pthread_mutex_lock(&f->mu);
	f->hold = hold;
	if (!hold)
		pthread_cond_broadcast(&f->more);
	pthread_mutex_unlock(&f->mu);
}

struct cache *
cache_feed_model(struct cache_feed *f)
{
	return f->model;
}

/* The processor's counts and the scratch arrays, from the feed model m to the sum d. */
static void
take_cpu(struct cache *d, const struct cache *m)
{
	d->cpu = m->cpu;
	for (unsigned a = 0; a < d->narrays && a < m->narrays; a++) {
		d->arrays[a].scratch = m->arrays[a].scratch;
		memcpy(d->arrays[a].scratch_bytes, m->arrays[a].scratch_bytes,
		       sizeof(d->arrays[a].scratch_bytes));
	}
	d->nscratch = m->nscratch;
	d->scratch_lo = m->scratch_lo;
	d->scratch_len = m->scratch_len;
}

int
cache_feed_finish(struct cache_feed *f, bool flush, struct cache **out, char *err, size_t errlen)
{
	struct cache *sum;

	feed_end(f, flush, true);
	sum = f->sl[0].c;
	for (unsigned i = 1; i < f->k; i++)
		if (cache_add_slice(sum, f->sl[i].c)) {
			snprintf(err, errlen, "internal: thread %u saw other arrays or phases",
				 i + 1);
			feed_free(f);
			return -1;
		}
	if (sum->narrays != f->model->narrays) {
		snprintf(err, errlen, "internal: the threads saw other arrays than the feed");
		feed_free(f);
		return -1;
	}
	take_cpu(sum, f->model);
	*out = sum;
	f->sl[0].c = NULL;
	feed_free(f);
	return 0;
}

void
cache_feed_abort(struct cache_feed *f)
{
	feed_end(f, false, false);
	feed_free(f);
}

void
cache_feed_stop(struct cache_feed *f, bool flush)
{
	feed_end(f, flush, true);
}

struct cache *
cache_feed_slice_model(const struct cache_feed *f, unsigned i)
{
	return f->sl[i].c;
}

void
cache_feed_free(struct cache_feed *f)
{
	feed_free(f);
}
