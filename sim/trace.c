#include "sim/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/name_index.h"
#include "base/progress.h"
#include "base/util.h"
#include "sim/drive/feed.h"

/* Accesses to the pace array between two looks at the clock: a query block's new lines of Q
 * for flash2 in fp16 with d = 128 and Br = 64. */
#define PACE_TICK 256u

struct phase_map {
	char name[CACHE_NAME_MAX];
	int cache_idx;
	int sink_idx;
};

/* A declared array as the tracing layer sees it: its range, whether it is scratch, and its
 * index in the cache model. */
struct trace_range {
	uint64_t base, len; /* [base, base + len), tested as addr - base < len */
	int cache_idx;
	bool scratch;
};

struct trace_state {
	struct cache *cache;
	struct trace_sink sink;
	bool recording;
	bool feed; /* cache is a feed model (sim/drive/feed.h): accesses go to it unmerged */
	int tiles_in_scratch;
	struct trace_range *ranges;
	unsigned nranges, last;
	struct phase_map *phases;
	unsigned nphases, phases_cap;
	struct name_index phase_names;
	/* trace_pace()'s plan and where the run stands in it */
	struct trace_pace pace[TRACE_PACE_MAX];
	unsigned npace, pace_phase;    /* pace_phase: phases started so far */
	unsigned pace_pass;            /* walks of the current region done */
	uint64_t pace_region, pace_in; /* the last access's region and offset in it */
	uint64_t pace_best;            /* the most units reached */
	double pace_before, pace_all;  /* weights of the phases done, and of all */
};

static const char *
phase_name_at(const void *owner, uint32_t i)
{
	return ((const struct trace_state *)owner)->phases[i].name;
}

struct trace_ctx *
trace_ctx_create(struct cache *c, const struct trace_sink *sink, int tiles_in_scratch)
{
	struct trace_ctx *t = xzalloc(sizeof(*t));
	bool w = sink != NULL;

	t->state = xzalloc(sizeof(*t->state));
	t->state->cache = c;
	if (sink) {
		t->state->sink = *sink;
		t->state->recording = true;
	}
	t->state->tiles_in_scratch = tiles_in_scratch;
	name_index_init(&t->state->phase_names, t->state, phase_name_at);
	t->pend_line = UINT64_MAX;
	/* Merge at L1-line granularity. */
	if (c && cache_get_config(c)->levels > 0)
		t->line_shift = log2_u64(cache_get_config(c)->level[0].line_bytes);
	else
		t->line_shift = 6;
	/* A feed model takes accesses one by one, cheaper than merging them: its slices settle
	 * them inline, as the fast path below does (and merging is exact, so not merging is). */
	t->state->feed = c && !w && cache_is_feed(c);
	t->merge = c && !w && cache_merge_is_exact(c) && !t->state->feed;
	t->fast = c && !w && cache_fast_l1_without_scratch(c, &t->l1);
	return t;
}

void
trace_flush(struct trace_ctx *t)
{
	if (t->fast_ops[0] | t->fast_ops[1]) {
		cache_count_fast(t->state->cache, t->fast_ops[0], t->fast_ops[1], t->fast_bytes[0],
				 t->fast_bytes[1]);
		t->fast_ops[0] = t->fast_ops[1] = t->fast_bytes[0] = t->fast_bytes[1] = 0;
	}
	if (t->pend_line == UINT64_MAX)
		return;
	cache_access_merged(t->state->cache, t->pend_addr, t->pend_size, (enum cache_op)t->pend_op,
			    t->pend_count, t->pend_bytes);
	t->pend_line = UINT64_MAX;
}

void
trace_ctx_destroy(struct trace_ctx *t)
{
	if (!t)
		return;
	trace_flush(t);
	free(t->state->phases);
	name_index_finish(&t->state->phase_names);
	free(t->state->ranges);
	free(t->state);
	free(t);
}

int
trace_array(struct trace_ctx *t, const char *name, const void *p, size_t bytes,
	    enum trace_space space)
{
	struct trace_state *s = t->state;
	uint64_t base = (uint64_t)(uintptr_t)p;

	trace_flush(t);
	if (s->recording) {
		int rc = s->sink.array(s->sink.ctx, name, base, bytes, space);

		if (rc < 0)
			return rc;
	}
	if (s->cache) {
		bool scratch = space == TRACE_SPACE_SCRATCH ||
			       (space == TRACE_SPACE_TILE && s->tiles_in_scratch);
		int rc = cache_add_array(s->cache, name, base, bytes, scratch);
		struct trace_range *r;

		if (rc < 0)
			return rc;
		if (s->recording) /* recording: every access goes to the sink and the model */
			return 0;
		s->ranges = xrealloc(s->ranges, (s->nranges + 1) * sizeof(*s->ranges));
		r = &s->ranges[s->nranges++];
		r->base = base;
		r->len = bytes;
		r->cache_idx = rc;
		r->scratch = scratch;
		s->last = 0;
		if (scratch && bytes) {
			/* Last bytes, not ends, which may lie at 2^64. */
			uint64_t lo = base, last = base + (bytes - 1);

			if (t->scratch_len) {
				uint64_t old_last = t->scratch_lo + (t->scratch_len - 1);

				if (t->scratch_lo < lo)
					lo = t->scratch_lo;
				if (old_last > last)
					last = old_last;
			}
			t->scratch_lo = lo;
			t->scratch_len = last - lo + 1;
		}
	}
	return 0;
}

/* Units of phase p of the plan: per walk of a region, and in all. */
static uint64_t
pace_units(const struct trace_pace *p, uint64_t *per)
{
	uint64_t region = p->region_bytes ? p->region_bytes : p->bytes;

	if (!p->p || !p->unit_bytes || !region) {
		*per = 0;
		return 0;
	}
	*per = (region + p->unit_bytes - 1) / p->unit_bytes;
	return *per * ((p->bytes + region - 1) / region) * (p->passes ? p->passes : 1);
}

/* Reports `done` units of the current phase. */
static void
pace_report(const struct trace_state *s, uint64_t done)
{
	const struct trace_pace *p = &s->pace[s->pace_phase - 1];
	uint64_t per, total = pace_units(p, &per);
	double f = s->pace_before + (total ? p->weight * (double)done / (double)total : 0);

	if (total)
		progress_report(f / s->pace_all, (double)done, (double)total, p->unit);
	else
		progress_report(f / s->pace_all, s->pace_phase - 1, s->npace, "phases");
}

void
trace_pace(struct trace_ctx *t, const struct trace_pace *pace, unsigned n)
{
	struct trace_state *s = t->state;

	if (!progress_enabled() || n == 0)
		return;
	s->npace = n > TRACE_PACE_MAX ? TRACE_PACE_MAX : n;
	memcpy(s->pace, pace, s->npace * sizeof(*pace));
	s->pace_phase = 0;
	s->pace_before = s->pace_all = 0;
	for (unsigned k = 0; k < s->npace; k++)
		s->pace_all += s->pace[k].weight;
	if (s->pace_all <= 0)
		s->npace = 0;
}

/* A phase starts: the plan's next entry, if any, is watched. */
static void
pace_next(struct trace_ctx *t)
{
	struct trace_state *s = t->state;
	const struct trace_pace *p;

	t->pace_len = 0;
	if (s->pace_phase)
		s->pace_before += s->pace[s->pace_phase - 1].weight;
	if (s->pace_phase == s->npace)
		return;
	p = &s->pace[s->pace_phase++];
	s->pace_pass = 0;
	s->pace_region = s->pace_in = s->pace_best = 0;
	if (p->p && p->unit_bytes) {
		t->pace_lo = (uint64_t)(uintptr_t)p->p;
		t->pace_len = p->bytes;
		t->pace_tick = PACE_TICK;
	}
	pace_report(s, 0);
}

void
trace_paced(struct trace_ctx *t, uint64_t addr)
{
	struct trace_state *s = t->state;
	const struct trace_pace *p = &s->pace[s->pace_phase - 1];
	uint64_t region = p->region_bytes ? p->region_bytes : p->bytes;
	uint64_t off = addr - t->pace_lo, r = off / region, in = off % region, per, done;

	pace_units(p, &per);
	t->pace_tick = PACE_TICK;
	/* A walk starts again from the region's low half; block loops inside a walk (proj's
	 * column blocks) step back by less. */
	if (r != s->pace_region) {
		s->pace_region = r;
		s->pace_pass = 0;
	} else if (in + region / 2 < s->pace_in && s->pace_pass + 1 < p->passes) {
		s->pace_pass++;
	}
	s->pace_in = in;
	done = (r * (p->passes ? p->passes : 1) + s->pace_pass) * per + in / p->unit_bytes;
	if (done > s->pace_best)
		s->pace_best = done;
	pace_report(s, s->pace_best);
}

int
trace_phase(struct trace_ctx *t, const char *name)
{
	struct trace_state *s = t->state;
	struct phase_map *m;
	char cut[CACHE_NAME_MAX];
	int64_t i;

	trace_flush(t);
	snprintf(cut, sizeof(cut), "%s", name);
	i = name_index_find(&s->phase_names, cut);
	if (i < 0) {
		if (s->nphases == CACHE_MAX_PHASES)
			return -ENOSPC;
		if (s->nphases == s->phases_cap) {
			s->phases_cap = s->phases_cap ? s->phases_cap * 2 : 8;
			s->phases = xrealloc(s->phases, s->phases_cap * sizeof(*s->phases));
		}
		i = s->nphases++;
		m = &s->phases[i];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", cut);
		name_index_add(&s->phase_names, m->name, (uint32_t)i);
		m->cache_idx = s->cache ? cache_add_phase(s->cache, cut) : -1;
		m->sink_idx = s->recording ? s->sink.phase(s->sink.ctx, cut) : -1;
	}
	m = &s->phases[i];
	if (s->cache)
		cache_set_phase(s->cache, m->cache_idx);
	if (s->recording && m->sink_idx >= 0)
		s->sink.set_phase(s->sink.ctx, m->sink_idx);
	if (s->npace)
		pace_next(t);
	return 0;
}

/* The declared range that owns addr: the last declared holding it, as in the cache model; NULL
 * for none. */
static const struct trace_range *
owner(struct trace_state *s, uint64_t addr)
{
	const struct trace_range *r = s->nranges ? &s->ranges[s->last] : NULL;

	if (r && addr - r->base < r->len)
		return r;
	for (unsigned i = s->nranges; i-- > 0;)
		if (addr - s->ranges[i].base < s->ranges[i].len) {
			s->last = i;
			return &s->ranges[i];
		}
	return NULL;
}

bool
trace_scratch(struct trace_ctx *t, uint64_t addr, uint64_t n, uint64_t bytes, enum cache_op op)
{
	struct trace_state *s = t->state;
	const struct trace_range *r = owner(s, addr);

	if (!r || !r->scratch || bytes > r->len - (addr - r->base))
		return false;
	cache_scratch_add(s->cache, (unsigned)r->cache_idx, op, n, bytes);
	return true;
}

bool
trace_scratch_holds(const struct trace_ctx *t, const void *p, size_t bytes)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	const struct trace_range *r = owner(t->state, a);

	return r && r->scratch && bytes <= r->len - (a - r->base);
}

bool
trace_scratch_add(struct trace_ctx *t, const void *p, uint64_t accesses, uint64_t bytes,
		  enum cache_op op)
{
	const struct trace_range *r = owner(t->state, (uint64_t)(uintptr_t)p);

	if (!r || !r->scratch)
		return false;
	cache_scratch_add(t->state->cache, (unsigned)r->cache_idx, op, accesses, bytes);
	return true;
}

/*
 * Why trace_zip()'s segments are exact. A segment is a run of iterations [k, e) in which every
 * stream stays inside one L1 line. Iteration k goes through trace_access() access by access.
 * If after it each stream's line is in L1, and dirty where a stream stores to it, every access
 * of iteration k + 1 is a hit: under LRU the lines it touches end it on top of their sets in
 * the order of their last touch, as after iteration k, and the other lines below them as they
 * were; under FIFO and random replacement a hit changes nothing; a store sets a dirty bit
 * already set, and a write-back L1's hit reaches no level below. So each iteration leaves the
 * model as it found it, and iterations k + 1 .. e - 1 are counted as the fast path counts hits,
 * and skipped. Anything else (a line that left, a no-write-allocate store's miss) goes on access
 * by access. The checks read the model's own tag array (t->l1: a write-back L1 under LRU, FIFO
 * or random, cache_fast_l1()), so nothing is assumed about what put the lines there.
 */
static ALWAYS_INLINE bool
segment_settled(const struct trace_ctx *t, const uint64_t *lines, const struct trace_stream *s,
		unsigned ns)
{
	for (unsigned i = 0; i < ns; i++) {
		const uint64_t *set = cache_fast_set(&t->l1, lines[i]);
		uint64_t w = 0;

		/* most often the line just touched is its set's most recent */
		while ((set[w] >> 1) != lines[i])
			if (++w == t->l1.ways)
				return false;
		if (s[i].op == CACHE_OP_STORE && !(set[w] & 1))
			return false;
	}
	return true;
}

/*
 * Why trace_run() is exact. Inside one L1 line, every access of the run after the first finds
 * the line in L1 (nothing comes between them: scratch accesses never reach the model; only
 * the first access's own miss could take it back, through an inclusive level's
 * back-invalidation, which both paths below look for), so it is a hit whose only effect is its
 * counts:
 *  - on the inline fast path (a write-back L1; for stores, write-allocate too, since a
 *    no-write-allocate store miss leaves the line out) the first access goes through
 *    trace_access(), the others only add to fast_ops and fast_bytes, which every hit does,
 *    once segment_settled() finds the line still there (else they go one by one);
 *  - on a write-back, write-validate L1 (GPU presets) the line's accesses go to the model as
 *    one merged access covering them: the model counts `count` reads or writes, simulates the
 *    first (and the next ones alone while a back-invalidation takes the line, repeat_ref() in
 *    sim/cache.c), and validates (a store) or checks (a load) the granules of the span, which
 *    for contiguous elements are those the single accesses validate or check one by one, as
 *    long as each store covers whole granules (elements aligned and a multiple of the
 *    granule: line / 64 bytes above 64-byte lines);
 *  - without a cache every access moves its own bytes to DRAM, so the run is one merged
 *    access of all its bytes, attributed to the array of its first byte (hence one array).
 * Anything else (write-through, no-write-allocate, merging L1s off the fast path, recording, a
 * straddling or misaligned element) takes one trace_access() per element.
 */
/* How trace_run() reports a feed model's aligned elements (its model is never fast): merged
 * per line where L1 is write-back and write-validate, as its per_line test says. */
static enum cache_run_kind
elems_kind(const struct trace_ctx *t, uint32_t elem, enum cache_op op)
{
	const struct cache_level_config *l1 = &cache_get_config(t->state->cache)->level[0];
	uint64_t line = UINT64_C(1) << t->line_shift;

	return l1->write == CACHE_WRITE_BACK && l1->alloc == CACHE_ALLOC_VALIDATE &&
			       (op == CACHE_OP_LOAD || elem % (line > 64 ? line / 64 : 1) == 0)
		       ? CACHE_RUN_MERGED
		       : CACHE_RUN_ELEMS;
}

/* trace_pace_check() for the first byte of each of a run's rows (its last byte at
 * a + span - 1, no wrap): at once where no row reaches the watched range, or every row does
 * and none ends a tick. */
static void
pace_rows(struct trace_ctx *t, uint64_t a, uint32_t rows, uint64_t stride, uint64_t span)
{
	const uint64_t last = a + span - 1;

	if (!t->pace_len || last < t->pace_lo || (a >= t->pace_lo && a - t->pace_lo >= t->pace_len))
		return;
	if (a - t->pace_lo < t->pace_len && last - t->pace_lo < t->pace_len &&
	    t->pace_tick > rows) {
		t->pace_tick -= rows;
		return;
	}
	for (uint32_t k = 0; k < rows; k++)
		trace_pace_check(t, a + k * stride);
}

/* A feed model's run as one event to each slice with a chunk of it (sim/cache_run.h): false
 * where it must go access by access. */
static bool
feed_run(struct trace_ctx *t, uint64_t a, uint32_t elem, uint32_t n, uint32_t rows, uint64_t stride,
	 enum cache_op op, enum cache_run_kind kind)
{
	const struct cache_run r = { a,    stride,      elem,          n,
				     rows, (uint8_t)op, (uint8_t)kind, (uint8_t)t->line_shift };

	if (!cache_feed_run(t->state->cache, &r))
		return false;
	pace_rows(t, a, rows, stride, (uint64_t)(rows - 1) * stride + (uint64_t)n * elem);
	return true;
}

void
trace_run(struct trace_ctx *t, const void *p, uint32_t elem, uint64_t n, enum cache_op op)
{
	struct trace_state *s = t->state;
	uint64_t a = (uint64_t)(uintptr_t)p, line = UINT64_C(1) << t->line_shift;
	const struct cache_level_config *l1;
	bool per_line;

	if (n == 0 || elem == 0)
		return;
	if (a - t->scratch_lo < t->scratch_len && trace_scratch(t, a, n, n * elem, op))
		return;
	trace_pace_check(t, a);
	l1 = s->cache ? &cache_get_config(s->cache)->level[0] : NULL;
	if (!s->recording && s->cache && cache_get_config(s->cache)->levels == 0) {
		while (n) {
			uint32_t k = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;

			cache_access_merged(s->cache, a, elem, op, k, (uint64_t)k * elem);
			a += (uint64_t)k * elem;
			n -= k;
		}
		return;
	}
	per_line =
		!s->recording && s->cache && is_pow2(elem) && elem <= line && a % elem == 0 &&
		((t->fast && (op == CACHE_OP_LOAD || l1->alloc == CACHE_ALLOC_FETCH)) ||
		 (!t->fast && l1->write == CACHE_WRITE_BACK && l1->alloc == CACHE_ALLOC_VALIDATE &&
		  (op == CACHE_OP_LOAD || elem % (line > 64 ? line / 64 : 1) == 0)));
	if (s->feed && !t->fast && n <= UINT32_MAX &&
	    feed_run(t, a, elem, (uint32_t)n, 1, 0, op, elems_kind(t, elem, op)))
		return;
	if (!per_line) {
		for (uint64_t k = 0; k < n; k++)
			trace_access(t, (const void *)(uintptr_t)(a + k * elem), elem, op);
		return;
	}
	while (n) {
		uint64_t k = (line - (a & (line - 1))) / elem;

		if (k > n)
			k = n;
		if (t->fast) {
			unsigned w = op == CACHE_OP_STORE;
			uint64_t line_no = a >> t->line_shift;

			trace_access(t, (const void *)(uintptr_t)a, elem, op);
			/* The line stays, as the others' hits need, unless a back-invalidation
			 * took it (segment_settled() looks). */
			if (k > 1 &&
			    !segment_settled(t, &line_no, &(struct trace_stream){ NULL, elem, op },
					     1)) {
				for (uint64_t j = 1; j < k; j++)
					trace_access(t, (const void *)(uintptr_t)(a + j * elem),
						     elem, op);
			} else {
				t->fast_ops[w] += k - 1;
				t->fast_bytes[w] += (k - 1) * elem;
			}
		} else {
			cache_access_merged(s->cache, a, (uint32_t)(k * elem), op, (uint32_t)k,
					    k * elem);
		}
		a += k * elem;
		n -= k;
	}
}

/* The run straight to a model of this thread's own that is neither recording nor fast, its
 * lines cut as a feed's slice cuts them (cache_access_run() over one slice): what trace_run()
 * and trace_zip() would hand it, access for access, with less work a line. False where the
 * run must go row by row (elements that straddle lines, part of it in a scratch array). */
static bool
model_run(struct trace_ctx *t, uint64_t a, uint32_t elem, uint32_t n, uint32_t rows,
	  uint64_t stride, enum cache_op op, enum cache_run_kind kind)
{
	struct trace_state *s = t->state;
	const struct cache_run r = { a,    stride,      elem,          n,
				     rows, (uint8_t)op, (uint8_t)kind, (uint8_t)t->line_shift };
	uint64_t len = (uint64_t)n * elem, span;

	if (cache_get_config(s->cache)->levels == 0 || !cache_run_aligned(&r) ||
	    (stride && rows - 1 > (UINT64_MAX - len) / stride))
		return false;
	span = (uint64_t)(rows - 1) * stride + len;
	if (a + span - 1 < a ||
	    (t->scratch_len && a < t->scratch_lo + t->scratch_len && t->scratch_lo < a + span))
		return false;
	trace_flush(t);
	pace_rows(t, a, rows, stride, span);
	cache_access_run(s->cache, &r, t->line_shift, 0, CACHE_CLASSES_ALL, NULL);
	return true;
}

void
trace_run_rows(struct trace_ctx *t, const void *p, uint32_t elem, uint64_t n, uint64_t rows,
	       uint64_t stride, enum cache_op op)
{
	struct trace_state *s = t->state;
	uint64_t a = (uint64_t)(uintptr_t)p;

	/* The runs' elements merged per line where trace_run() would merge them. */
	if (s->cache && !s->recording && !t->fast && n <= UINT32_MAX && rows <= UINT32_MAX) {
		enum cache_run_kind kind = elems_kind(t, elem, op);

		if (s->feed ? rows > 1 && feed_run(t, a, elem, (uint32_t)n, (uint32_t)rows, stride,
						   op, kind)
			    : model_run(t, a, elem, (uint32_t)n, (uint32_t)rows, stride, op, kind))
			return;
	}
	for (uint64_t k = 0; k < rows; k++)
		trace_run(t, (const void *)(uintptr_t)(a + k * stride), elem, n, op);
}

/* trace_access_older()'s miss. Progress looks at misses alone there, and out of line, so the
 * hit stays the few instructions of a leaf. */
static NOINLINE void
older_miss(struct trace_ctx *t, uint64_t addr, uint32_t bytes, unsigned op)
{
	trace_pace_check(t, addr);
	cache_fast_miss(t->state->cache, addr, bytes, op);
}

void
trace_access_older(struct trace_ctx *t, uint64_t addr, uint32_t bytes, unsigned op, uint64_t *set,
		   uint64_t line)
{
	if (!cache_fast_hit_older(&t->l1, set, line, op))
		older_miss(t, addr, bytes, op);
}

/* trace_access() of [a, a + elem) in L1 line `line` on the inline fast path, as it counts and
 * settles it; true when it missed L1. */
static ALWAYS_INLINE bool
zip_access(struct trace_ctx *t, uint64_t a, uint64_t line, uint32_t elem, unsigned op)
{
	uint64_t *set = cache_fast_set(&t->l1, line);
	unsigned w = op == CACHE_OP_STORE;

	t->fast_ops[w]++;
	t->fast_bytes[w] += elem;
	if (cache_fast_hit_recent(set, line, w) || cache_fast_hit_older(&t->l1, set, line, w))
		return false;
	older_miss(t, a, elem, w);
	return true;
}

/* trace_zip() on the inline fast path, segment by segment; inlined for a constant ns. */
static ALWAYS_INLINE void
zip_segments(struct trace_ctx *t, uint64_t n, const struct trace_stream *s, unsigned ns)
{
	const unsigned shift = t->line_shift;
	const uint64_t line = UINT64_C(1) << shift;
	uint64_t a[TRACE_ZIP_MAX], lines[TRACE_ZIP_MAX];
	unsigned eshift[TRACE_ZIP_MAX];

	for (unsigned i = 0; i < ns; i++) {
		a[i] = (uint64_t)(uintptr_t)s[i].p;
		eshift[i] = is_pow2(s[i].elem) ? log2_u64(s[i].elem) : 64;
	}
	for (uint64_t k = 0; k < n;) {
		uint64_t e = n;
		bool missed = false;

		for (unsigned i = 0; i < ns; i++) {
			uint64_t rest = line - (a[i] & (line - 1));
			uint64_t in_line = eshift[i] < 64 ? rest >> eshift[i] : rest / s[i].elem;

			lines[i] = a[i] >> shift;
			if (in_line == 0) {
				/* element k straddles a line: a segment of its own */
				e = k + 1;
				trace_access(t, (const void *)(uintptr_t)a[i], s[i].elem,
					     (enum cache_op)s[i].op);
				continue;
			}
			if (k + in_line < e)
				e = k + in_line;
			missed |= zip_access(t, a[i], lines[i], s[i].elem, s[i].op);
		}
		k++;
		/* no miss: every line is in L1, each stored one dirty */
		if (k < e && (!missed || segment_settled(t, lines, s, ns))) {
			for (unsigned i = 0; i < ns; i++) {
				t->fast_ops[s[i].op == CACHE_OP_STORE] += e - k;
				t->fast_bytes[s[i].op == CACHE_OP_STORE] += (e - k) * s[i].elem;
			}
		} else {
			e = k;
		}
		for (unsigned i = 0; i < ns; i++)
			a[i] = (uint64_t)(uintptr_t)s[i].p + e * s[i].elem;
		k = e;
	}
}

/* trace_zip() on any other model: iteration k of each segment access by access, then, where
 * the model says its repeats are settled (cache_repeats_settled(): the argument above, for
 * write-through, tree-PLRU, set sampling, ...), each stream's rest of the segment as one merged
 * access, the streams in order; on a feed model, where its hit filter would keep every repeat
 * (cache_feed_repeats_kept()), counted as it would count them. */
static void
zip_segments_model(struct trace_ctx *t, uint64_t n, const struct trace_stream *s, unsigned ns)
{
	const unsigned shift = t->line_shift;
	const uint64_t line = UINT64_C(1) << shift;
	uint64_t a[TRACE_ZIP_MAX];
	uint32_t sizes[TRACE_ZIP_MAX];
	bool stores[TRACE_ZIP_MAX];

	for (unsigned i = 0; i < ns; i++) {
		stores[i] = s[i].op == CACHE_OP_STORE;
		sizes[i] = s[i].elem;
	}
	for (uint64_t k = 0; k < n;) {
		uint64_t e = n;

		for (unsigned i = 0; i < ns; i++) {
			uint64_t in_line;

			a[i] = (uint64_t)(uintptr_t)s[i].p + k * s[i].elem;
			in_line = (line - (a[i] & (line - 1))) / s[i].elem;
			if (k + (in_line ? in_line : 1) < e)
				e = k + (in_line ? in_line : 1);
			trace_access(t, (const void *)(uintptr_t)a[i], s[i].elem,
				     (enum cache_op)s[i].op);
		}
		k++;
		if (k >= e || e - k > UINT32_MAX)
			continue;
		trace_flush(t);
		if (t->state->feed) {
			if (cache_feed_repeats_kept(t->state->cache, a, sizes, stores, ns,
						    (uint32_t)(e - k)))
				k = e;
			continue;
		}
		if (!cache_repeats_settled(t->state->cache, a, stores, ns))
			continue;
		for (unsigned i = 0; i < ns; i++)
			cache_access_merged(t->state->cache, a[i] + s[i].elem, s[i].elem,
					    (enum cache_op)s[i].op, (uint32_t)(e - k),
					    (e - k) * s[i].elem);
		k = e;
	}
}

void
trace_zip(struct trace_ctx *t, uint64_t n, const struct trace_stream *s, unsigned ns)
{
	struct trace_stream mem[TRACE_ZIP_MAX];
	unsigned m = 0;

	if (ns > TRACE_ZIP_MAX)
		ns = TRACE_ZIP_MAX;
	if (n == 0)
		return;
	/* A stream wholly in a scratch array never reaches the model: its n accesses and their
	 * bytes in one go. Scratch takes no part in the order of the others. */
	for (unsigned i = 0; i < ns; i++) {
		uint64_t a = (uint64_t)(uintptr_t)s[i].p, len = n * s[i].elem;

		if (s[i].elem && !(a - t->scratch_lo < t->scratch_len &&
				   a + len - 1 - t->scratch_lo < t->scratch_len &&
				   trace_scratch(t, a, n, len, (enum cache_op)s[i].op)))
			mem[m++] = s[i];
	}
	/* One stream, or no cache (every access its own bytes, whatever the order): runs. */
	if (m == 0)
		return;
	if (m == 1 || (!t->state->recording && t->state->cache &&
		       cache_get_config(t->state->cache)->levels == 0)) {
		for (unsigned i = 0; i < m; i++)
			trace_run(t, mem[i].p, mem[i].elem, n, (enum cache_op)mem[i].op);
		return;
	}
	for (unsigned i = 0; i < m; i++) {
		uint64_t a = (uint64_t)(uintptr_t)mem[i].p;

		/* a stream partly in the scratch span goes access by access below */
		if (a + n * mem[i].elem > t->scratch_lo && a < t->scratch_lo + t->scratch_len)
			goto by_access;
	}
	if (t->fast) {
		/* the kernels' loops walk two or three arrays */
		if (m == 2)
			zip_segments(t, n, mem, 2);
		else if (m == 3)
			zip_segments(t, n, mem, 3);
		else
			zip_segments(t, n, mem, m);
		return;
	}
	if (!t->state->recording) {
		zip_segments_model(t, n, mem, m);
		return;
	}
by_access:
	for (uint64_t k = 0; k < n; k++)
		for (unsigned i = 0; i < m; i++)
			trace_access(t, (const char *)mem[i].p + k * mem[i].elem, mem[i].elem,
				     (enum cache_op)mem[i].op);
}

/* The loop of trace_access_batch(), called with constant NULLs for sizes or writes so that
 * each instance tests per access only what varies. The fast path's state is held in locals
 * (the counts are sums, settled once at the end: nothing reads them within a batch, which
 * starts no phase); every access it does not settle goes through trace_access() itself. */
static ALWAYS_INLINE void
batch_fast(struct trace_ctx *t, size_t n, const uint64_t *addrs, const uint32_t *sizes,
	   const uint8_t *writes, uint32_t size, int write)
{
	const struct cache_fast_l1 l1 = t->l1;
	const unsigned shift = t->line_shift;
	const uint64_t lo = t->scratch_lo, len = t->scratch_len;
	uint64_t ops[2] = { 0, 0 }, bytes[2] = { 0, 0 };

	for (size_t i = 0; i < n; i++) {
		uint64_t a = addrs[i], line = a >> shift;
		uint32_t b = sizes ? sizes[i] : size;
		unsigned w = writes ? writes[i] != 0 : write != 0;
		uint64_t *set;

		if (a - lo < len || ((a + b - 1) >> shift) != line) {
			trace_access(t, (const void *)(uintptr_t)a, b,
				     w ? CACHE_OP_STORE : CACHE_OP_LOAD);
			continue;
		}
		set = cache_fast_set(&l1, line);
		ops[w]++;
		bytes[w] += b;
		if (!cache_fast_hit_recent(set, line, w))
			trace_access_older(t, a, b, w, set, line);
	}
	t->fast_ops[0] += ops[0];
	t->fast_ops[1] += ops[1];
	t->fast_bytes[0] += bytes[0];
	t->fast_bytes[1] += bytes[1];
}

void
trace_access_batch(struct trace_ctx *t, size_t n, const uint64_t *addrs, const uint32_t *sizes,
		   const uint8_t *writes, uint32_t size, int write)
{
	if (!t->fast) {
		for (size_t i = 0; i < n; i++)
			trace_access(t, (const void *)(uintptr_t)addrs[i], sizes ? sizes[i] : size,
				     (writes ? writes[i] != 0 : write != 0) ? CACHE_OP_STORE
									    : CACHE_OP_LOAD);
		return;
	}
	if (sizes && writes)
		batch_fast(t, n, addrs, sizes, writes, 0, 0);
	else if (sizes)
		batch_fast(t, n, addrs, sizes, NULL, 0, write);
	else if (writes)
		batch_fast(t, n, addrs, NULL, writes, size, 0);
	else
		batch_fast(t, n, addrs, NULL, NULL, size, write);
}

void
trace_access_slow(struct trace_ctx *t, uint64_t addr, size_t bytes, enum cache_op op)
{
	struct trace_state *s = t->state;

	if (bytes == 0)
		return;
	trace_pace_check(t, addr);
	/* Very long spans go out in pieces the 32-bit access size can carry. */
	while (bytes > (UINT32_C(1) << 30)) {
		trace_access_slow(t, addr, UINT32_C(1) << 30, op);
		addr += UINT32_C(1) << 30;
		bytes -= UINT32_C(1) << 30;
	}
	if (s->recording)
		s->sink.access(s->sink.ctx, (enum trace_event_kind)op, addr, (uint32_t)bytes, 1);
	if (!s->cache)
		return;
	if (s->feed) {
		cache_feed_access(s->cache, addr, (uint32_t)bytes, op);
		return;
	}
	if (t->pend_line != UINT64_MAX) {
		uint64_t line = addr >> t->line_shift;

		/* Same test as the inline path, for the recording case that skips it. */
		if (line == t->pend_line && op == t->pend_op &&
		    ((addr + bytes - 1) >> t->line_shift) == line &&
		    t->pend_count < TRACE_MAX_MERGE) {
			t->pend_count++;
			t->pend_bytes += bytes;
			return;
		}
		trace_flush(t);
	}
	if (!cache_merge_is_exact(s->cache) ||
	    (addr >> t->line_shift) != ((addr + bytes - 1) >> t->line_shift)) {
		cache_access(s->cache, addr, (uint32_t)bytes, op, 1);
		return;
	}
	t->pend_line = addr >> t->line_shift;
	t->pend_addr = addr;
	t->pend_size = (uint32_t)bytes;
	t->pend_count = 1;
	t->pend_bytes = bytes;
	t->pend_op = op;
}
