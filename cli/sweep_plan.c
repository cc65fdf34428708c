#include "cli/sweep_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "cli/commands.h"
#include "sim/spec.h"
#include "sim/util.h"

void
sweep_plan_init(struct sweep_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->flush = true;
	p->seed = 1;
	p->simulate = true;
	p->N.v[0] = 1024, p->N.n = 1;
	p->d.v[0] = 64, p->d.n = 1;
	p->heads.v[0] = 1, p->heads.n = 1;
	p->batch.v[0] = 1, p->batch.n = 1;
	p->Br.v[0] = 64, p->Br.n = 1;
	p->Bc.v[0] = 64, p->Bc.n = 1;
	p->dtypes[0] = ATTN_FP32, p->ndtypes = 1;
	p->causal[0] = false, p->ncausal = 1;
}

void
sweep_plan_finish(struct sweep_plan *p)
{
	for (unsigned i = 0; i < p->ncaches; i++)
		free(p->caches[i]);
	p->ncaches = 0;
}

static bool
parse_value(const char *s, uint64_t *out, bool size_units)
{
	return size_units ? parse_size_bytes(s, out) == 0 : parse_u64(s, out);
}

int
sweep_list_parse(const char *opt, const char *text, struct u64_list *out, bool size_units)
{
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;

	out->n = 0;
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		char *c1 = strchr(item, ':'), *c2;
		uint64_t lo, hi, step;
		bool geometric;

		if (!c1) {
			if (!parse_value(item, &lo, size_units))
				rc = usage_error("sweep", "%s: '%s' is not a number", opt, item);
			else if (out->n == SWEEP_LIST_MAX)
				rc = usage_error("sweep", "%s: more than %d values", opt,
						 SWEEP_LIST_MAX);
			else
				out->v[out->n++] = lo;
			continue;
		}
		c2 = strchr(c1 + 1, ':');
		*c1 = '\0';
		if (!c2 || (c2[1] != 'x' && c2[1] != '+')) {
			rc = usage_error("sweep", "%s: range '%s:...' needs :xF or :+S", opt, item);
			break;
		}
		*c2 = '\0';
		geometric = c2[1] == 'x';
		if (!parse_value(item, &lo, size_units) || !parse_value(c1 + 1, &hi, size_units) ||
		    !parse_value(c2 + 2, &step, size_units && !geometric) || step == 0 ||
		    (geometric && step < 2) || lo == 0 || hi < lo) {
			rc = usage_error("sweep", "%s: bad range in '%s'", opt, text);
			break;
		}
		for (uint64_t v = lo; v <= hi; v = geometric ? v * step : v + step) {
			if (out->n == SWEEP_LIST_MAX) {
				rc = usage_error("sweep", "%s: more than %d values", opt,
						 SWEEP_LIST_MAX);
				break;
			}
			out->v[out->n++] = v;
			if (geometric ? v > UINT64_MAX / step : v > UINT64_MAX - step)
				break;
		}
	}
	free(copy);
	return rc;
}

int
sweep_plan_kernels(struct sweep_plan *p, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int rc = 0;

	p->nkernels = 0;
	for (char *k = strtok_r(copy, ",", &save); k && !rc; k = strtok_r(NULL, ",", &save)) {
		if (p->nkernels == ATTN_KERNEL_COUNT ||
		    !attn_kernel_parse(k, &p->kernels[p->nkernels]))
			rc = usage_error("sweep", "--kernel: unknown kernel '%s'", k);
		else
			p->nkernels++;
	}
	free(copy);
	return rc;
}

int
sweep_plan_dtypes(struct sweep_plan *p, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int rc = 0;

	p->ndtypes = 0;
	for (char *k = strtok_r(copy, ",", &save); k && !rc; k = strtok_r(NULL, ",", &save)) {
		if (p->ndtypes == 3 || !attn_dtype_parse(k, &p->dtypes[p->ndtypes]))
			rc = usage_error("sweep", "--dtype: unknown dtype '%s'", k);
		else
			p->ndtypes++;
	}
	free(copy);
	return rc;
}

int
sweep_plan_causal(struct sweep_plan *p, const char *list)
{
	char *copy, *save = NULL;
	int rc = 0;

	if (!list) {
		p->causal[0] = true;
		p->ncausal = 1;
		return 0;
	}
	copy = xstrdup(list);
	p->ncausal = 0;
	for (char *v = strtok_r(copy, ",", &save); v && !rc; v = strtok_r(NULL, ",", &save)) {
		bool yes = strcmp(v, "yes") == 0 || strcmp(v, "1") == 0;

		if ((!yes && strcmp(v, "no") != 0 && strcmp(v, "0") != 0) || p->ncausal == 2)
			rc = usage_error("sweep", "--causal: '%s' is not no or yes", v);
		else
			p->causal[p->ncausal++] = yes;
	}
	free(copy);
	return rc;
}

/* Applies "--cache-sweep L2=32K:64M:x2" to a base spec: one spec per size of that level. */
static int
expand_cache_sweep(struct sweep_plan *p, const char *base, const char *sweep)
{
	const char *eq = strchr(sweep, '=');
	char level[8], err[512];
	struct u64_list sizes;
	struct sweep_cache_group *g;
	struct spec s;
	int rc;

	if (!eq || eq - sweep > 2)
		return usage_error("sweep", "--cache-sweep: '%s' is not LEVEL=lo:hi:xF", sweep);
	memcpy(level, sweep, (size_t)(eq - sweep));
	level[eq - sweep] = '\0';
	level[0] = (char)(level[0] == 'l' ? 'L' : level[0]);
	if ((rc = sweep_list_parse("--cache-sweep", eq + 1, &sizes, true)))
		return rc;
	if (spec_parse(base, &s, err, sizeof(err)))
		return usage_error("sweep", "--cache: %s", err);
	g = &p->groups[p->ngroups];
	memset(g, 0, sizeof(*g));
	g->first = p->ncaches;
	g->level = s.cache.levels;
	for (unsigned k = 0; k < s.cache.levels; k++)
		if (strcmp(s.cache.level[k].name, level) == 0)
			g->level = k;
	if (g->level == s.cache.levels)
		return usage_error("sweep", "--cache-sweep: %s is not a level of '%s'", level,
				   base);
	for (unsigned i = 0; i < sizes.n; i++) {
		struct spec one = s;
		char buf[1024];

		/* Every size at the associativity the --cache gave (cache_config_resize()), in a
		 * label that spec_parse() reads back as that cache. */
		if (cache_config_resize(&s.cache, g->level, sizes.v[i], &one.cache, err,
					sizeof(err)))
			return usage_error("sweep", "--cache-sweep: %s", err);
		/* N ways that make one set: the label says N (not "full"), so that the size's
		 * spec also says the ways the others keep. */
		if (one.cache.level[g->level].assoc)
			one.cache.level[g->level].fully_assoc = false;
		if (p->ncaches == SWEEP_CACHES_MAX)
			return usage_error("sweep", "more than %d caches", SWEEP_CACHES_MAX);
		p->caches[p->ncaches++] = xstrdup(spec_format(&one, buf, sizeof(buf)));
	}
	g->n = sizes.n;
	g->method = cache_onepass_method(&s.cache, g->level, sizes.v, sizes.n, &g->why);
	p->ngroups++;
	return 0;
}

int
sweep_plan_cache(struct sweep_plan *p, const char *text, const char *cache_sweep)
{
	struct spec s;
	char err[512], buf[1024];

	if (cache_sweep)
		return expand_cache_sweep(p, text, cache_sweep);
	if (spec_parse(text, &s, err, sizeof(err)))
		return usage_error("sweep", "--cache: %s", err);
	if (p->ncaches == SWEEP_CACHES_MAX)
		return usage_error("sweep", "more than %d --cache", SWEEP_CACHES_MAX);
	/* A preset keeps its name (reports show it); a spec its canonical form. */
	p->caches[p->ncaches++] =
		xstrdup(s.preset[0] ? s.preset : spec_format(&s, buf, sizeof(buf)));
	return 0;
}

char *
sweep_plan_mode(const struct sweep_plan *p, char *buf, size_t len)
{
	char sample[32] = "";

	if (p->sample_sets > 1)
		snprintf(sample, sizeof(sample), " sampled 1/%u", p->sample_sets);
	snprintf(buf, len, "flush=%d seed=%llu %s%s%s", p->flush, (unsigned long long)p->seed,
		 p->simulate ? "simulated" : "formula", p->trace_only ? " trace-only" : "", sample);
	return buf;
}

static void
item_key(struct sweep_item *it, const struct sweep_plan *p)
{
	const struct attn_config *c = &it->cfg;
	char mode[128];

	snprintf(it->key, sizeof(it->key),
		 "%s N=%llu d=%llu heads=%llu kv_heads=%llu batch=%llu %s Br=%llu Bc=%llu "
		 "causal=%d separate=%d cache=%s %s",
		 attn_kernel_name(c->kernel), (unsigned long long)c->N, (unsigned long long)c->d,
		 (unsigned long long)c->heads, (unsigned long long)c->kv_heads,
		 (unsigned long long)c->batch, attn_dtype_name(c->dtype), (unsigned long long)c->Br,
		 (unsigned long long)c->Bc, c->causal, c->softmax_separate, p->caches[it->cache],
		 sweep_plan_mode(p, mode, sizeof(mode)));
}

/* The plan's dimensions, outermost first: the product is walked like an odometer. */
enum {
	DIM_CACHE,
	DIM_KERNEL,
	DIM_DTYPE,
	DIM_CAUSAL,
	DIM_HEADS,
	DIM_KV,
	DIM_BATCH,
	DIM_D,
	DIM_BR,
	DIM_BC,
	DIM_N,
	DIMS
};

struct sweep_item *
sweep_plan_items(const struct sweep_plan *p, size_t *count)
{
	const unsigned len[DIMS] = { p->ncaches, p->nkernels, p->ndtypes,
				     p->ncausal, p->heads.n,  p->kv_given ? p->kv_heads.n : 1,
				     p->batch.n, p->d.n,      p->Br.n,
				     p->Bc.n,    p->N.n };
	unsigned at[DIMS] = { 0 };
	size_t cap = 64, n = 0;
	struct sweep_item *items = xzalloc(cap * sizeof(*items));

	for (int i = 0; i < DIMS; i++)
		if (len[i] == 0) {
			*count = 0;
			return items;
		}
	for (;;) {
		struct sweep_item it;
		int i;

		memset(&it, 0, sizeof(it));
		it.cache = at[DIM_CACHE];
		it.cfg.kernel = p->kernels[at[DIM_KERNEL]];
		it.cfg.dtype = p->dtypes[at[DIM_DTYPE]];
		it.cfg.causal = p->causal[at[DIM_CAUSAL]];
		it.cfg.heads = p->heads.v[at[DIM_HEADS]];
		it.cfg.kv_heads = p->kv_given ? p->kv_heads.v[at[DIM_KV]] : it.cfg.heads;
		it.cfg.batch = p->batch.v[at[DIM_BATCH]];
		it.cfg.d = p->d.v[at[DIM_D]];
		it.cfg.Br = p->Br.v[at[DIM_BR]];
		it.cfg.Bc = p->Bc.v[at[DIM_BC]];
		it.cfg.N = p->N.v[at[DIM_N]];
		it.cfg.softmax_separate = p->softmax_separate;
		if (it.cfg.kv_heads != 0 && it.cfg.heads % it.cfg.kv_heads == 0 &&
		    !(it.cfg.kernel == ATTN_PROJ && it.cfg.causal)) {
			item_key(&it, p);
			if (n == cap) {
				cap *= 2;
				items = xrealloc(items, cap * sizeof(*items));
			}
			items[n++] = it;
		}
		for (i = DIMS - 1; i >= 0 && ++at[i] == len[i]; i--)
			at[i] = 0;
		if (i < 0)
			break;
	}
	*count = n;
	return items;
}

int
sweep_plan_group_of(const struct sweep_plan *p, unsigned cache)
{
	for (unsigned g = 0; g < p->ngroups; g++)
		if (cache >= p->groups[g].first && cache < p->groups[g].first + p->groups[g].n)
			return (int)g;
	return -1;
}

/* The group whose sizes item i runs in one pass with, or -1. */
static int
onepass_group(const struct sweep_plan *p, const struct sweep_item *it)
{
	int g = sweep_plan_group_of(p, it->cache);

	if (g < 0 || !p->simulate || p->separate_runs || p->sample_sets > 1 ||
	    p->groups[g].method == CACHE_ONEPASS_SEPARATE)
		return -1;
	return g;
}

size_t
sweep_plan_tasks(const struct sweep_plan *p, const struct sweep_item *items, size_t nitems,
		 long *todo, size_t n, struct sweep_task *tasks)
{
	/* Caches are the outermost dimension, so item i with cache first + k of a group runs
	 * the configuration of item i - k * per_cache, its group's first cache. */
	size_t per_cache = p->ncaches ? nitems / p->ncaches : 0, ntasks = 0, at = 0;
	long *task_of = xzalloc((nitems + 1) * sizeof(*task_of));
	unsigned *count = xzalloc((n + 1) * sizeof(*count));
	long *sorted = xzalloc((n + 1) * sizeof(*sorted));

	for (size_t i = 0; i < nitems; i++)
		task_of[i] = -1;
	/* First pass: a task per configuration and group, in the order of their first item. */
	for (size_t t = 0; t < n; t++) {
		const struct sweep_item *it = &items[todo[t]];
		int g = onepass_group(p, it);
		size_t r = (size_t)todo[t];

		if (g >= 0) {
			r -= (it->cache - p->groups[g].first) * per_cache;
			if (task_of[r] >= 0) {
				count[task_of[r]]++;
				continue;
			}
			task_of[r] = (long)ntasks;
		}
		tasks[ntasks] = (struct sweep_task){ 0, 1, g };
		count[ntasks] = 1;
		ntasks++;
	}
	for (size_t k = 0; k < ntasks; k++) {
		tasks[k].start = at;
		at += count[k];
		tasks[k].n = 0;
	}
	/* Second pass: each item into its task's place. */
	for (size_t i = 0; i < nitems; i++)
		task_of[i] = -1;
	for (size_t t = 0, next = 0; t < n; t++) {
		const struct sweep_item *it = &items[todo[t]];
		int g = onepass_group(p, it);
		size_t r = (size_t)todo[t];
		long k;

		if (g >= 0) {
			r -= (it->cache - p->groups[g].first) * per_cache;
			if (task_of[r] < 0)
				task_of[r] = (long)next++;
			k = task_of[r];
		} else {
			k = (long)next++;
		}
		sorted[tasks[k].start + tasks[k].n++] = todo[t];
	}
	memcpy(todo, sorted, n * sizeof(*todo));
	free(sorted);
	free(count);
	free(task_of);
	return ntasks;
}

/* Appends "--opt v1,v2,..." to args. */
static void
add_list(char **args, int *n, char *buf, size_t buflen, const char *opt, const struct u64_list *l)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < l->n && used < buflen; i++)
		used += (size_t)snprintf(buf + used, buflen - used, "%s%llu", i ? "," : "",
					 (unsigned long long)l->v[i]);
	args[(*n)++] = (char *)opt;
	args[(*n)++] = buf;
}

char *
sweep_plan_command(const struct sweep_plan *p, const char *out)
{
	enum { MAXARGS = 40 + 2 * SWEEP_CACHES_MAX };
	char *args[MAXARGS];
	char lists[8][SWEEP_LIST_MAX * 21];
	char kernels[64] = "", dtypes[32] = "", causal[16] = "", seed[24], sample[16];
	char *line, *cmd;
	int n = 0;

	args[n++] = "sweep";
	args[n++] = "--out";
	args[n++] = (char *)out;
	for (unsigned i = 0; i < p->nkernels; i++)
		snprintf(kernels + strlen(kernels), sizeof(kernels) - strlen(kernels), "%s%s",
			 i ? "," : "", attn_kernel_name(p->kernels[i]));
	args[n++] = "--kernel";
	args[n++] = kernels;
	add_list(args, &n, lists[0], sizeof(lists[0]), "--N", &p->N);
	add_list(args, &n, lists[1], sizeof(lists[1]), "--d", &p->d);
	add_list(args, &n, lists[2], sizeof(lists[2]), "--heads", &p->heads);
	if (p->kv_given)
		add_list(args, &n, lists[3], sizeof(lists[3]), "--kv-heads", &p->kv_heads);
	add_list(args, &n, lists[4], sizeof(lists[4]), "--batch", &p->batch);
	add_list(args, &n, lists[5], sizeof(lists[5]), "--Br", &p->Br);
	add_list(args, &n, lists[6], sizeof(lists[6]), "--Bc", &p->Bc);
	for (unsigned i = 0; i < p->ndtypes; i++)
		snprintf(dtypes + strlen(dtypes), sizeof(dtypes) - strlen(dtypes), "%s%s",
			 i ? "," : "", attn_dtype_name(p->dtypes[i]));
	args[n++] = "--dtype";
	args[n++] = dtypes;
	for (unsigned i = 0; i < p->ncausal; i++)
		snprintf(causal + strlen(causal), sizeof(causal) - strlen(causal), "%s%s",
			 i ? "," : "--causal=", p->causal[i] ? "yes" : "no");
	args[n++] = causal;
	if (p->softmax_separate)
		args[n++] = "--softmax-separate";
	for (unsigned i = 0; i < p->ncaches; i++) {
		args[n++] = "--cache";
		args[n++] = p->caches[i];
	}
	if (!p->flush)
		args[n++] = "--no-flush";
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)p->seed);
	args[n++] = "--seed";
	args[n++] = seed;
	if (!p->simulate)
		args[n++] = "--formula-only";
	if (p->trace_only)
		args[n++] = "--trace-only";
	if (p->separate_runs)
		args[n++] = "--separate-runs";
	if (p->sample_sets > 1) {
		snprintf(sample, sizeof(sample), "%u", p->sample_sets);
		args[n++] = "--sample-sets";
		args[n++] = sample;
	}
	line = report_command_line(n, args);
	cmd = xzalloc(strlen(line) + 8);
	sprintf(cmd, "memsim %s", line);
	free(line);
	return cmd;
}
