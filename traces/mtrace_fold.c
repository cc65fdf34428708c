/*
 * The writer's repeat finder (traces/mtrace_fold.h). Searching, it keeps the last records
 * unwritten and counts, for each body length L, how many records at the end equal the one L
 * before them; once two whole periods of some L stand unwritten at the end (the shortest L
 * first), it repeats: each next record that equals the body's next one extends the run, the
 * first that does not ends it. A run is written as a repeat record once it holds
 * FOLD_MIN_RECORDS records (fewer save too little for the reader's trip through its slow
 * path), as plain records otherwise. Records equal when their access is: the same slot, kind,
 * size, count and address step, whatever bytes encode it.
 */

#include "traces/mtrace_fold.h"

#include <string.h>

#define FOLD_MIN_RECORDS 32

void
mtrace_fold_init(struct mtrace_fold *f, mtrace_put_fn put, void *ctx)
{
	memset(f, 0, sizeof(*f));
	f->put = put;
	f->ctx = ctx;
}

static bool
same(const struct mtrace_rec *a, const struct mtrace_rec *b)
{
	return a->delta == b->delta && a->key == b->key;
}

static struct mtrace_rec *
hist(struct mtrace_fold *f, uint64_t i)
{
	return &f->hist[i % MTRACE_FOLD_HISTORY];
}

static void
put_rec(struct mtrace_fold *f, const struct mtrace_rec *r)
{
	f->put(f->ctx, r->bytes, r->len, 1);
}

/* Starts searching afresh, with nothing unwritten. */
static void
forget(struct mtrace_fold *f)
{
	f->begin = f->end = f->unwritten = 0;
	memset(f->match, 0, sizeof(f->match));
	f->period = 0;
}

/* Ends the run: writes it, and the records held with it, then searches afresh. */
static void
end_run(struct mtrace_fold *f)
{
	if (f->committed) {
		uint8_t b[MTRACE_REPEAT_MAX_RECORDS * 31 + 21];
		size_t n = 0;

		b[n++] = 0xe0 | MTRACE_CTRL_REPEAT;
		mtrace_put_varint(b, &n, f->period);
		mtrace_put_varint(b, &n, f->periods);
		for (unsigned i = 0; i < f->period; i++) {
			memcpy(b + n, f->body[i].bytes, f->body[i].len);
			n += f->body[i].len;
		}
		f->put(f->ctx, b, n, 1 + f->period);
	} else {
		for (unsigned i = 0; i < f->period; i++)
			put_rec(f, &f->body[i]);
	}
	for (unsigned i = 0; i < f->nheld; i++)
		put_rec(f, &f->held[i]);
	forget(f);
}

/* Whether an access at a, a period after one at last, got there the way a reader computes it:
 * by the signed step a - last without wrapping (mtrace_steps_fit() in the reader). */
static bool
steps_on(uint64_t last, uint64_t a)
{
	uint64_t step = a - last;

	return step == 0 || ((int64_t)step > 0) == (a > last);
}

static void
run_push(struct mtrace_fold *f, const struct mtrace_rec *r)
{
	if (!same(r, &f->body[f->pos]) || !steps_on(f->last_addr[f->pos], r->addr) ||
	    f->periods == MTRACE_REPEAT_MAX_PERIODS) {
		end_run(f);
		mtrace_fold_push(f, r);
		return;
	}
	f->held[f->nheld++] = *r;
	f->last_addr[f->pos] = r->addr;
	if (++f->pos < f->period)
		return;
	f->pos = 0;
	f->periods++;
	if (f->committed || f->periods * f->period >= FOLD_MIN_RECORDS) {
		f->committed = true;
		f->nheld = 0;
	}
}

static bool
periods_step_on(struct mtrace_fold *f, unsigned L)
{
	for (unsigned i = 0; i < L; i++)
		if (!steps_on(hist(f, f->end - 2 * L + i)->addr, hist(f, f->end - L + i)->addr))
			return false;
	return true;
}

/* Starts a run of body length L: the last 2L records are two periods of it. */
static void
start_run(struct mtrace_fold *f, unsigned L)
{
	while (f->unwritten < f->end - 2 * L)
		put_rec(f, hist(f, f->unwritten++));
	f->period = L;
	f->periods = 2;
	f->pos = 0;
	f->nheld = 0;
	for (unsigned i = 0; i < L; i++) {
		f->body[i] = *hist(f, f->end - 2 * L + i);
		f->held[f->nheld++] = *hist(f, f->end - L + i);
		f->last_addr[i] = f->held[i].addr;
	}
	f->committed = 2 * L >= FOLD_MIN_RECORDS;
	if (f->committed)
		f->nheld = 0;
}

void
mtrace_fold_push(struct mtrace_fold *f, const struct mtrace_rec *r)
{
	uint64_t n;

	if (f->period) {
		run_push(f, r);
		return;
	}
	*hist(f, f->end++) = *r;
	if (f->end - f->begin > MTRACE_FOLD_HISTORY)
		f->begin++;
	n = f->end - f->begin;
	for (unsigned L = 1; L <= MTRACE_REPEAT_MAX_RECORDS && L < n; L++) {
		f->match[L] = same(r, hist(f, f->end - 1 - L)) ? f->match[L] + 1 : 0;
		/* Two periods, both unwritten, the second stepping on as a reader would. */
		if (f->match[L] >= L && f->end - f->unwritten >= 2 * L && periods_step_on(f, L)) {
			start_run(f, L);
			return;
		}
	}
	/* What no run can start from any more. */
	if (f->end - f->unwritten >= MTRACE_FOLD_HISTORY)
		put_rec(f, hist(f, f->unwritten++));
}

void
mtrace_fold_flush(struct mtrace_fold *f)
{
	if (f->period)
		end_run(f);
	while (f->unwritten < f->end)
		put_rec(f, hist(f, f->unwritten++));
	forget(f);
}
