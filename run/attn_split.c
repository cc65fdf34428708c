/*
 * A kernel's values on several threads: see run/attn_split.h.
 *
 * Notes:
 *  - A view is d's config with batch 1 and the unit's heads, and d's pointers moved to the
 *    unit's first element of each array ([batch][heads] first, as attn.h lays them out), so
 *    head_row() and the kernels' loops find the unit's rows where the whole kernel finds them.
 *    Paged K and V keep the pool's base (the block table names its pages); the table moves
 *    to the batch element's row.
 *  - flashdecode's packed grouped decode (attn_decode_view()) packs a KV head's query heads,
 *    which a unit holds together: its partial arrays start where the whole run's do for that
 *    KV head.
 *  - Units are taken from one counter, so a slow unit does not hold a thread's others back;
 *    which thread runs a unit changes nothing in its values.
 */

#include "run/attn_split.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct attn_native_split {
	struct attn_data *d;
	uint64_t units;
	atomic_uint_fast64_t next;
	unsigned threads;
	pthread_t *tid;
};

/* Units are whole batch elements. */
static bool
by_batch(const struct attn_config *c)
{
	return c->kv_page || c->kernel == ATTN_PROJ;
}

uint64_t
attn_native_units(const struct attn_config *c)
{
	return by_batch(c) ? c->batch : c->batch * c->kv_heads;
}

/* p moved by bytes; NULL stays NULL. */
static void *
moved(void *p, uint64_t bytes)
{
	return p ? (char *)p + bytes : NULL;
}

/* v = unit u of d (tiles aside). */
static void
unit_view(const struct attn_data *d, uint64_t u, struct attn_data *v)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t s = dtype_bytes(c->dtype), N = c->N, Nk = attn_nkv(c), D = c->d;
	const uint64_t group = c->heads / c->kv_heads, S = attn_splits(c);
	uint64_t b = u, kvh = 0, nkv = c->kv_heads, bh, bkv;

	if (!by_batch(c)) {
		b = u / c->kv_heads;
		kvh = u % c->kv_heads;
		nkv = 1;
	}
	bh = b * c->heads + kvh * group; /* the unit's first (batch, query head) */
	bkv = b * c->kv_heads + kvh;
	*v = *d;
	v->arena = NULL;
	v->arena_bytes = 0;
	v->cfg.batch = 1;
	v->cfg.kv_heads = nkv;
	v->cfg.heads = nkv * group;
	v->Q = moved(d->Q, bh * N * D * s);
	v->O = moved(d->O, bh * N * D * s);
	v->S = moved(d->S, bh * N * Nk * s);
	v->P = moved(d->P, bh * N * Nk * s);
	v->m = moved(d->m, bh * N * sizeof(float));
	v->l = moved(d->l, bh * N * sizeof(float));
	v->lse = moved(d->lse, bh * N * sizeof(float));
	v->Oacc = moved(d->Oacc, bh * S * N * D * sizeof(float));
	v->lseacc = moved(d->lseacc, bh * S * N * sizeof(float));
	if (c->kv_page) {
		v->block_table = moved(d->block_table, b * attn_pages(c) * sizeof(int32_t));
		v->pages = moved(d->pages, b * attn_pages(c) * sizeof(int32_t));
	} else {
		v->K = moved(d->K, bkv * Nk * D * s);
		v->V = moved(d->V, bkv * Nk * D * s);
	}
	v->x = moved(d->x, b * N * c->heads * D * s);
	v->y = moved(d->y, b * N * c->heads * D * s);
}

/* v's tiles = t's. */
static void
use_tiles(struct attn_data *v, const struct attn_data *t)
{
	v->Qt = t->Qt;
	v->Kt = t->Kt;
	v->Vt = t->Vt;
	v->St = t->St;
	v->Ot = t->Ot;
	v->mt = t->mt;
	v->lt = t->lt;
	v->row = t->row;
}

static void *
worker(void *arg)
{
	struct attn_native_split *sp = arg;
	struct attn_data t = { 0 }, v;
	void *tiles = attn_tiles_alloc(sp->d, &t);
	uint64_t u;

	/* Short of memory, this thread takes no unit; attn_native_split_join() says so if no
	 * thread could. */
	if (!tiles)
		return NULL;
	while ((u = atomic_fetch_add(&sp->next, 1)) < sp->units) {
		unit_view(sp->d, u, &v);
		use_tiles(&v, &t);
		attn_run_native(&v);
	}
	free(tiles);
	return NULL;
}

struct attn_native_split *
attn_native_split_start(struct attn_data *d, unsigned threads, char *err, size_t errlen)
{
	struct attn_native_split *sp = xzalloc(sizeof(*sp));
	int rc = 0;

	sp->d = d;
	sp->units = attn_native_units(&d->cfg);
	sp->threads = threads < 1 ? 1 : threads;
	if (sp->threads > sp->units)
		sp->threads = (unsigned)(sp->units ? sp->units : 1);
	atomic_init(&sp->next, 0);
	sp->tid = xzalloc(sp->threads * sizeof(*sp->tid));
	for (unsigned i = 0; i < sp->threads; i++)
		if ((rc = pthread_create(&sp->tid[i], NULL, worker, sp))) {
			/* the threads started finish every unit */
			sp->threads = i;
			break;
		}
	if (sp->threads == 0) {
		snprintf(err, errlen, "cannot start a thread computing the values: %s",
			 strerror(rc));
		free(sp->tid);
		free(sp);
		return NULL;
	}
	return sp;
}

unsigned
attn_native_split_threads(const struct attn_native_split *sp)
{
	return sp->threads;
}

int
attn_native_split_join(struct attn_native_split *sp)
{
	int rc;

	for (unsigned i = 0; i < sp->threads; i++)
		pthread_join(sp->tid[i], NULL);
	/* every unit taken (each by a thread that had its tiles) */
	rc = atomic_load(&sp->next) >= sp->units ? 0 : -ENOMEM;
	free(sp->tid);
	free(sp);
	return rc;
}
