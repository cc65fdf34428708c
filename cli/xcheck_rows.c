/*
 * The kernel-independent rows of an xcheck table (cli/xcheck_rows.h).
 */

#include "cli/xcheck_rows.h"

#include <stdio.h>

#include "kernels/attn.h"

void
xcheck_memsim_row(struct cache *c, unsigned ll_line, double seconds, bool callgrind,
		  struct xcheck_row *row)
{
	const struct cache_level_stats *l1 = cache_level_stats(c, 0);
	const struct cache_level_stats *l2 = cache_level_stats(c, 1);
	const struct cache_traffic *dram = cache_dram(c);
	double evicted = (double)(dram->write_bytes - dram->flush_write_bytes);

	row->q[XCHECK_D1_MISSES] = (double)(l1->read_misses + l1->write_misses);
	row->seconds = seconds;
	if (callgrind) {
		row->q[XCHECK_LL_MISSES] = (double)(l2->read_misses + l2->write_misses);
		row->q[XCHECK_WRITEBACKS] = evicted / ll_line;
		row->q[XCHECK_DRAM_BYTES] = (double)dram->read_bytes + evicted;
	} else {
		row->q[XCHECK_LL_MISSES] = (double)l2->read_misses;
		row->q[XCHECK_DRAM_BYTES] = (double)dram->read_bytes;
	}
}

static void
papi_row_init(struct xcheck *x)
{
	struct xcheck_row *p = &x->rows[XCHECK_PAPI];

	p->shown = true;
	snprintf(p->source, sizeof(p->source), "PAPI");
	snprintf(p->model, sizeof(p->model), "this machine");
}

int
xcheck_host_spec(struct xcheck *x, struct spec *host)
{
	struct xcheck_row *m = &x->rows[XCHECK_MEMSIM_HOST];
	char buf[512];

	papi_row_init(x);
	if (spec_parse("host", host, buf, sizeof(buf))) {
		/* The machine's caches unknown: PAPI still runs, without a memsim row beside it. */
		snprintf(m->note, sizeof(m->note), "no host preset: %s", buf);
		return -1;
	}
	return 0;
}

void
xcheck_host_row(struct xcheck *x, const struct spec *host, struct cache *c, double seconds,
		uint64_t *line, uint64_t *evict)
{
	struct xcheck_row *m = &x->rows[XCHECK_MEMSIM_HOST];
	const struct cache_level_config *ll = &host->cache.level[host->cache.levels - 1];
	char spec_text[512];

	m->shown = true;
	snprintf(m->source, sizeof(m->source), "memsim");
	snprintf(m->model, sizeof(m->model), "host preset");
	xcheck_memsim_row(c, ll->line_bytes, seconds, false, m);
	m->q[XCHECK_D1_MISSES] = m->q[XCHECK_LL_MISSES] = -1;
	m->q[XCHECK_DRAM_BYTES] = (double)(cache_dram(c)->read_bytes + cache_dram(c)->write_bytes);
	snprintf(m->note, sizeof(m->note),
		 "traced run on %s (from %s%s%s); DRAM bytes read and written, no final "
		 "flush, as a counter read at the kernel's end sees them",
		 spec_format(host, spec_text, sizeof(spec_text)), host->source,
		 host->note[0] ? ": " : "", host->note);
	*line = ll->line_bytes;
	*evict = 2 * ll->size_bytes;
	x->rows[XCHECK_PAPI].ref = XCHECK_MEMSIM_HOST;
}

int
xcheck_papi_count(struct xcheck *x, void (*run)(void *), void *arg, uint64_t line, uint64_t evict,
		  struct papi_report *rep, char *err, size_t errlen)
{
	struct xcheck_row *p = &x->rows[XCHECK_PAPI];
	char buf[512];

	if (evict > (1ull << 30))
		evict = 1ull << 30;
	if (attn_evict_caches(evict)) {
		snprintf(err, errlen, "cannot allocate %llu bytes to evict the caches",
			 (unsigned long long)evict);
		return -1;
	}
	papi_measure(run, arg, line, rep);
	p->seconds = rep->seconds;
	if (rep->dram_read_counted || rep->dram_write_counted)
		p->q[XCHECK_DRAM_BYTES] = (double)(rep->dram_read_bytes + rep->dram_write_bytes);
	snprintf(p->note, sizeof(p->note), "%s; %s%s%s", papi_report_line(rep, buf, sizeof(buf)),
		 rep->reason, rep->strategy && rep->strategy->leaves_out ? "; " : "",
		 rep->strategy && rep->strategy->leaves_out ? rep->strategy->leaves_out : "");
	return 0;
}
