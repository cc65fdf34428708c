/*
 * `memsim xcheck`'s Valgrind side (cli/xcheck_valgrind.h): Cachegrind and Callgrind run on the
 * native build of the same source (`memsim native`), their counts read back for the kernel.
 */

#include "cli/xcheck_valgrind.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "measure/spawn.h"

#define KERNEL_REGION "Client Request: memsim-kernel"

const char *
xcheck_geometry_check(const struct spec *s)
{
	const struct cache_config *c = &s->cache;

	if (c->levels != 2)
		return "needs exactly two data levels (D1 and LL), as Cachegrind and Callgrind "
		       "simulate";
	for (unsigned i = 0; i < 2; i++)
		if (c->level[i].repl != CACHE_REPL_LRU)
			return "needs LRU replacement, the only one Valgrind simulates";
	if (c->has_icache && c->icache.repl != CACHE_REPL_LRU)
		return "needs LRU replacement, the only one Valgrind simulates";
	if (s->tiles_in_scratch)
		return "cannot put tiles in scratch: the native kernel's tiles are memory";
	return NULL;
}

void
xcheck_geometry_from_spec(const struct spec *s, struct geometry *g)
{
	const struct cache_level_config *lv[3];
	static const char *const names[3] = { "I1", "D1", "LL" };

	g->d1 = s->cache.level[0];
	g->ll = s->cache.level[1];
	g->i1_given = s->cache.has_icache;
	g->i1 = g->i1_given ? s->cache.icache : g->d1;
	lv[0] = &g->i1;
	lv[1] = &g->d1;
	lv[2] = &g->ll;
	for (int i = 0; i < 3; i++)
		snprintf(g->args[i], sizeof(g->args[i]), "--%s=%llu,%u,%u", names[i],
			 (unsigned long long)lv[i]->size_bytes, lv[i]->assoc, lv[i]->line_bytes);
}

/* memsim's spec for one tool's model over geometry g. */
void
xcheck_model_spec(const struct spec *base, bool callgrind, struct spec *out)
{
	*out = *base;
	out->preset[0] = '\0';
	out->cache.has_icache = true;
	out->cache.icache = base->cache.has_icache ? base->cache.icache : base->cache.level[0];
	snprintf(out->cache.icache.name, sizeof(out->cache.icache.name), "I1");
	for (unsigned i = 0; i < 2; i++) {
		struct cache_level_config *l = &out->cache.level[i];

		l->write = CACHE_WRITE_BACK;
		l->alloc = CACHE_ALLOC_FETCH;
		l->inclusion = CACHE_INCL_NINE;
		l->quiet_writebacks = false;
	}
	if (callgrind) {
		out->cache.level[0].write = CACHE_WRITE_THROUGH; /* callgrind/sim.c */
	} else {
		/* cachegrind/cg_sim.c: write-backs ignored, an access over two lines one
		 * reference */
		out->cache.level[1].quiet_writebacks = true;
		out->cache.icache.straddle_once = true;
		for (unsigned i = 0; i < 2; i++)
			out->cache.level[i].straddle_once = true;
	}
}

/* Runs valgrind with tool_args, then `memsim native` with the kernel's options. Returns 0, or
 * -1 with a one-line message. */
static int
run_valgrind(struct run_ctx *r, const char *name, char *const *tool_args, double *seconds,
	     char *err, size_t errlen)
{
	char *argv[64 + 2 * PLUGIN_MAX_PARAMS], out[1100], log[1100], words[512], why[512];
	int n = 0, rc;
	double t0;

	argv[n++] = (char *)r->valgrind;
	for (int i = 0; tool_args[i]; i++)
		argv[n++] = tool_args[i];
	argv[n++] = r->self;
	argv[n++] = "native";
	for (int i = 0; i < r->kargs.argc; i++)
		argv[n++] = r->kargs.argv[i];
	for (unsigned i = 0; i < r->nparams; i++) {
		argv[n++] = "--param";
		argv[n++] = (char *)r->params[i];
	}
	argv[n++] = "--evict";
	argv[n++] = r->evict;
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/%s.stdout", r->dir, name);
	snprintf(log, sizeof(log), "%s/%s.log", r->dir, name);
	t0 = now_seconds();
	rc = spawn_wait(argv, out, log, why, sizeof(why));
	*seconds = now_seconds() - t0;
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", name, why);
		r->failed_keep = true;
		return -1;
	}
	if (rc != 0) {
		spawn_last_line(log, words, sizeof(words));
		snprintf(err, errlen, "%s failed (exit status %d): %s (its log: %s)", name, rc,
			 words[0] ? words : "no message", log);
		r->failed_keep = true;
		return -1;
	}
	return 0;
}

bool
xcheck_kernel_function(const char *object, const char *fn, void *arg)
{
	(void)object;
	(void)arg;
	/* attn_flash2_native, attn_dispatch_native, attn_run_native and GCC's clones of them
	 * (".part.0", ".constprop.0"); the kernels' helpers are always inlined into them. */
	return strncmp(fn, "attn_", 5) == 0 && strstr(fn, "_native") != NULL;
}

static uint64_t
get(const struct vg_counts *c, const char *name)
{
	uint64_t v = 0;

	vg_counts_get(c, name, &v);
	return v;
}

int
xcheck_run_cachegrind(struct run_ctx *r, const struct geometry *g, struct xcheck_row *row,
		      char *err, size_t errlen)
{
	char file[1100], outopt[1200];
	/* --demangle=no: a C++ plugin's names as its symbol table has them */
	char *args[] = {
		"--tool=cachegrind", "--cache-sim=yes",  "--demangle=no", (char *)g->args[0],
		(char *)g->args[1],  (char *)g->args[2], outopt,          NULL
	};
	struct vg_counts c;
	static const char *const need[] = { "D1mr", "D1mw", "DLmr", "DLmw" };
	bool all;

	snprintf(file, sizeof(file), "%s/cachegrind.out", r->dir);
	snprintf(outopt, sizeof(outopt), "--cachegrind-out-file=%s", file);
	if (run_valgrind(r, "cachegrind", args, &row->seconds, err, errlen))
		return -1;
	if (vg_cachegrind_read(file, r->cachegrind_keep, r->keep_arg, &c, err, errlen)) {
		r->failed_keep = true;
		return -1;
	}
	vg_counts_sum(&c, need, 4, &all);
	if (!all) {
		snprintf(err, errlen,
			 "%s: no D1mr/D1mw/DLmr/DLmw events: was --cache-sim=yes lost?", file);
		r->failed_keep = true;
		return -1;
	}
	row->q[XCHECK_D1_MISSES] = (double)(get(&c, "D1mr") + get(&c, "D1mw"));
	row->q[XCHECK_LL_MISSES] = (double)(get(&c, "DLmr") + get(&c, "DLmw"));
	row->q[XCHECK_DRAM_BYTES] = row->q[XCHECK_LL_MISSES] * g->ll.line_bytes;
	snprintf(row->note, sizeof(row->note),
		 "the self counts of %s (%u function records) in %s; "
		 "DRAM bytes are LL fills, (DLmr + DLmw) x %u B: Cachegrind counts no "
		 "write-backs",
		 r->cachegrind_what, c.functions, "cachegrind.out", g->ll.line_bytes);
	return 0;
}

int
xcheck_run_callgrind(struct run_ctx *r, const struct geometry *g, bool prefetch,
		     struct xcheck_row *row, char *err, size_t errlen)
{
	const char *name = prefetch ? "callgrind-hwpref" : "callgrind";
	char file[1100], outopt[1200], dump[1200];
	char *args[] = { "--tool=callgrind",
			 "--cache-sim=yes",
			 "--demangle=no",
			 "--simulate-wb=yes",
			 "--instr-atstart=no",
			 (char *)g->args[0],
			 (char *)g->args[1],
			 (char *)g->args[2],
			 outopt,
			 prefetch ? "--simulate-hwpref=yes" : NULL,
			 NULL };
	struct vg_counts c, tot;
	static const char *const need[] = { "D1mr", "D1mw", "DLmr", "DLmw", "DLdmr", "DLdmw" };
	double wb;
	bool all;

	snprintf(file, sizeof(file), "%s/%s.out", r->dir, name);
	snprintf(outopt, sizeof(outopt), "--callgrind-out-file=%s", file);
	if (run_valgrind(r, name, args, &row->seconds, err, errlen))
		return -1;
	/* DUMP_STATS_AT writes the region as the first numbered dump. */
	snprintf(dump, sizeof(dump), "%s.1", file);
	if (vg_callgrind_read(dump, KERNEL_REGION, r->callgrind_keep, r->keep_arg, &c, &tot, err,
			      errlen)) {
		r->failed_keep = true;
		return -1;
	}
	vg_counts_sum(&c, need, 6, &all);
	if (!all) {
		snprintf(err, errlen, "%s: missing write-back events (DLdmr, DLdmw)", dump);
		r->failed_keep = true;
		return -1;
	}
	wb = (double)(get(&c, "ILdmr") + get(&c, "DLdmr") + get(&c, "DLdmw"));
	row->q[XCHECK_D1_MISSES] = (double)(get(&c, "D1mr") + get(&c, "D1mw"));
	row->q[XCHECK_LL_MISSES] = (double)(get(&c, "DLmr") + get(&c, "DLmw"));
	row->q[XCHECK_WRITEBACKS] = wb;
	row->q[XCHECK_DRAM_BYTES] = (row->q[XCHECK_LL_MISSES] + wb) * g->ll.line_bytes;
	snprintf(row->note, sizeof(row->note),
		 "the self costs of %s in the region between "
		 "client requests (callgrind.out.1; the whole region, with libm, the timer and "
		 "stack set-up: %llu D1, %llu LL data misses); write-backs are LL misses that "
		 "evicted a dirty line (ILdmr + DLdmr + DLdmw); lines still dirty at the end are "
		 "not counted",
		 r->callgrind_what, (unsigned long long)(get(&tot, "D1mr") + get(&tot, "D1mw")),
		 (unsigned long long)(get(&tot, "DLmr") + get(&tot, "DLmw")));
	return 0;
}

void
xcheck_callgrind_prefetch_note(struct xcheck_row *pf, const struct xcheck_row *row)
{
	snprintf(pf->note, sizeof(pf->note),
		 "--simulate-hwpref=yes: after 3 ascending (or descending) lines in a 4 KiB "
		 "page, each further one fetches the line 5 ahead into LL, uncounted; demand "
		 "LL misses change by %+.1f%% against Callgrind without it (prefetched lines "
		 "also evict lines still in use). Prefetch fills are DRAM traffic no "
		 "Callgrind event counts, so DRAM bytes are left blank; an LLC-miss counter "
		 "on prefetching hardware misses them too",
		 row->q[XCHECK_LL_MISSES] > 0
			 ? (pf->q[XCHECK_LL_MISSES] / row->q[XCHECK_LL_MISSES] - 1) * 100
			 : 0.0);
	pf->q[XCHECK_DRAM_BYTES] = -1; /* prefetch fills are not counted: unknown */
}
