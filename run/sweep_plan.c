#include "run/sweep_plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "base/util.h"
#include "gpu/sdpa_plan.h"
#include "sim/spec.h"

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
	for (unsigned i = 0; i < PLUGIN_MAX_PARAMS; i++) {
		for (unsigned k = 0; k < p->param_lists[i].n; k++)
			free(p->param_lists[i].given[k]);
		free(p->param_lists[i].given);
		p->param_lists[i] = (struct sweep_param_list){ NULL, 0 };
	}
	plugin_unload(&p->plugin);
}

static bool
parse_value(const char *s, uint64_t *out, bool size_units)
{
	return size_units ? parse_size_bytes(s, out) == 0 : parse_u64(s, out);
}

/* The next item of the comma-separated list at *cursor, cut in place, or NULL after the last.
 * Unlike strtok_r() an empty item (",,", a comma first or last, an empty list) comes back as
 * "", so that it is refused rather than skipped. */
static char *
next_item(char **cursor)
{
	char *s = *cursor, *comma;

	if (!s)
		return NULL;
	comma = strchr(s, ',');
	*cursor = comma ? comma + 1 : NULL;
	if (comma)
		*comma = '\0';
	return s;
}

/* A usage error: the message into err, -EINVAL. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
empty_item(const char *opt, const char *text, char *err, size_t errlen)
{
	return fail(err, errlen, "%s: empty item in '%s'", opt, text);
}

/* Appends v, which item gave; a value already listed is refused: two equal values would give
 * two configurations with one key, and their rows would count twice. */
static int
list_add(struct u64_list *l, uint64_t v, const char *opt, const char *item, char *err,
	 size_t errlen)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->v[i] == v)
			return fail(err, errlen, "%s: '%s' repeats %llu: give each value once", opt,
				    item, (unsigned long long)v);
	if (l->n == SWEEP_LIST_MAX)
		return fail(err, errlen, "%s: more than %d values", opt, SWEEP_LIST_MAX);
	l->v[l->n++] = v;
	return 0;
}

/* The values of the range "lo:hi:xF" or "lo:hi:+S" (item, cut in place) appended to out. */
static int
range_add(struct u64_list *out, char *item, const char *opt, const char *text, bool size_units,
	  char *err, size_t errlen)
{
	char *c1 = strchr(item, ':'), *c2 = strchr(c1 + 1, ':');
	char shown[128];
	uint64_t lo, hi, step;
	bool geometric;
	int rc = 0;

	snprintf(shown, sizeof(shown), "%s", item);
	*c1 = '\0';
	if (!c2 || (c2[1] != 'x' && c2[1] != '+'))
		return fail(err, errlen, "%s: range '%s:...' needs :xF or :+S", opt, item);
	*c2 = '\0';
	geometric = c2[1] == 'x';
	if (!parse_value(item, &lo, size_units) || !parse_value(c1 + 1, &hi, size_units) ||
	    !parse_value(c2 + 2, &step, size_units && !geometric) || step == 0 ||
	    (geometric && step < 2) || lo == 0 || hi < lo)
		return fail(err, errlen, "%s: bad range in '%s'", opt, text);
	for (uint64_t v = lo; v <= hi && !rc; v = geometric ? v * step : v + step) {
		rc = list_add(out, v, opt, shown, err, errlen);
		if (geometric ? v > UINT64_MAX / step : v > UINT64_MAX - step)
			break;
	}
	return rc;
}

int
sweep_list_parse(const char *opt, const char *text, struct u64_list *out, bool size_units,
		 char *err, size_t errlen)
{
	char *copy = xstrdup(text), *cursor = copy, *item;
	int rc = 0;

	out->n = 0;
	while (!rc && (item = next_item(&cursor))) {
		uint64_t v;

		if (!*item)
			rc = empty_item(opt, text, err, errlen);
		else if (strchr(item, ':'))
			rc = range_add(out, item, opt, text, size_units, err, errlen);
		else if (!parse_value(item, &v, size_units))
			rc = fail(err, errlen, "%s: '%s' is not a number", opt, item);
		else
			rc = list_add(out, v, opt, item, err, errlen);
	}
	free(copy);
	return rc;
}

int
sweep_plan_kernels(struct sweep_plan *p, const char *list, char *err, size_t errlen)
{
	char *copy = xstrdup(list), *cursor = copy, *k;
	int rc = 0;

	p->nkernels = 0;
	while (!rc && (k = next_item(&cursor))) {
		enum attn_kernel kernel;
		unsigned i = 0;

		if (!*k) {
			rc = empty_item("--kernel", list, err, errlen);
			break;
		}
		if (!attn_kernel_parse(k, &kernel)) {
			rc = fail(err, errlen, "--kernel: unknown kernel '%s'", k);
			break;
		}
		while (i < p->nkernels && p->kernels[i] != kernel)
			i++;
		if (i < p->nkernels || i == ATTN_KERNEL_COUNT)
			rc = fail(err, errlen, "--kernel: '%s' is listed twice", k);
		else
			p->kernels[p->nkernels++] = kernel;
	}
	free(copy);
	return rc;
}

int
sweep_plan_dtypes(struct sweep_plan *p, const char *list, char *err, size_t errlen)
{
	char *copy = xstrdup(list), *cursor = copy, *k;
	int rc = 0;

	p->ndtypes = 0;
	while (!rc && (k = next_item(&cursor))) {
		enum attn_dtype dtype;
		unsigned i = 0;

		if (!*k) {
			rc = empty_item("--dtype", list, err, errlen);
			break;
		}
		if (!attn_dtype_parse(k, &dtype)) {
			rc = fail(err, errlen, "--dtype: unknown dtype '%s'", k);
			break;
		}
		while (i < p->ndtypes && p->dtypes[i] != dtype)
			i++;
		if (i < p->ndtypes || i == 3)
			rc = fail(err, errlen, "--dtype: '%s' is listed twice", k);
		else
			p->dtypes[p->ndtypes++] = dtype;
	}
	free(copy);
	return rc;
}

int
sweep_plan_causal(struct sweep_plan *p, const char *list, char *err, size_t errlen)
{
	char *copy, *cursor, *v;
	int rc = 0;

	if (!list) {
		p->causal[0] = true;
		p->ncausal = 1;
		return 0;
	}
	copy = cursor = xstrdup(list);
	p->ncausal = 0;
	while (!rc && (v = next_item(&cursor))) {
		bool yes = strcmp(v, "yes") == 0 || strcmp(v, "1") == 0;

		if (!*v)
			rc = empty_item("--causal", list, err, errlen);
		else if (!yes && strcmp(v, "no") != 0 && strcmp(v, "0") != 0)
			rc = fail(err, errlen, "--causal: '%s' is not no or yes", v);
		else if (p->ncausal == 2 || (p->ncausal == 1 && p->causal[0] == yes))
			rc = fail(err, errlen, "--causal: '%s' is listed twice", v);
		else
			p->causal[p->ncausal++] = yes;
	}
	free(copy);
	return rc;
}

/* --param given ("KEY=V1,V2") cut into l: "KEY=V" for each value. A value without a comma
 * is one value as it is, "" too (as memsim run takes it). */
static int
param_list(struct sweep_param_list *l, const char *given, const char *key, char *err, size_t errlen)
{
	size_t klen = strlen(key);
	char *copy = xstrdup(given + klen + 1), *cursor = copy, *v;
	int rc = 0;

	while (!rc && (v = next_item(&cursor))) {
		char *kv;

		if (!*v && (l->n || cursor)) {
			rc = fail(err, errlen, "--param: empty item in '%s'", given);
			break;
		}
		for (unsigned k = 0; k < l->n && !rc; k++)
			if (strcmp(l->given[k] + klen + 1, v) == 0)
				rc = fail(err, errlen,
					  "--param %s: '%s' is listed twice: give each "
					  "value once",
					  key, v);
		if (rc)
			break;
		if (l->n == SWEEP_LIST_MAX) {
			rc = fail(err, errlen, "--param %s: more than %d values", key,
				  SWEEP_LIST_MAX);
			break;
		}
		kv = xzalloc(klen + strlen(v) + 2);
		sprintf(kv, "%s=%s", key, v);
		l->given = xrealloc(l->given, (l->n + 1) * sizeof(*l->given));
		l->given[l->n++] = kv;
	}
	free(copy);
	return rc;
}

/* How many values list i of the plan's --param has: one where it was not cut (a plan made
 * without sweep_plan_params() runs each value whole). */
static unsigned
param_count(const struct sweep_plan *p, unsigned i)
{
	return p->param_lists[i].n ? p->param_lists[i].n : 1;
}

/* The number of combinations of the plan's --param lists. */
static uint64_t
param_combinations(const struct sweep_plan *p)
{
	uint64_t n = 1;

	for (unsigned i = 0; i < p->params.n && n <= SWEEP_PLAN_MAX; i++)
		n *= param_count(p, i);
	return n;
}

int
sweep_plan_params(struct sweep_plan *p, char *err, size_t errlen)
{
	for (unsigned i = 0; i < p->params.n; i++) {
		int rc = param_list(&p->param_lists[i], p->params.given[i], p->params.keys[i], err,
				    errlen);

		if (rc)
			return rc;
	}
	/* refused here, as their walk counts them in 32 bits; sweep_plan_check() the rest */
	if (param_combinations(p) > SWEEP_PLAN_MAX)
		return fail(err, errlen,
			    "the --param lists give more than %d configurations, the limit: "
			    "shorten a list or split the sweep",
			    SWEEP_PLAN_MAX);
	return 0;
}

void
sweep_plan_item_params(const struct sweep_plan *p, const struct sweep_item *it,
		       struct plugin_params *out)
{
	uint32_t at = it->params;

	*out = p->params;
	/* the first --param outermost, as the other lists run */
	for (unsigned i = p->params.n; i-- > 0;) {
		const struct sweep_param_list *l = &p->param_lists[i];
		unsigned k = at % param_count(p, i);

		at /= param_count(p, i);
		if (l->n) {
			out->given[i] = l->given[k];
			out->values[i] = l->given[k] + strlen(p->params.keys[i]) + 1;
		}
	}
}

/* Applies "--cache-sweep L2=32K:64M:x2" to a base spec: one spec per size of that level. */
static int
expand_cache_sweep(struct sweep_plan *p, const char *base, const char *sweep, char *err,
		   size_t errlen)
{
	const char *eq = strchr(sweep, '=');
	char level[8], why[512];
	struct u64_list sizes;
	struct sweep_cache_group *g;
	struct spec s;
	int rc;

	if (!eq || eq - sweep > 2)
		return fail(err, errlen, "--cache-sweep: '%s' is not LEVEL=lo:hi:xF", sweep);
	memcpy(level, sweep, (size_t)(eq - sweep));
	level[eq - sweep] = '\0';
	level[0] = (char)(level[0] == 'l' ? 'L' : level[0]);
	if ((rc = sweep_list_parse("--cache-sweep", eq + 1, &sizes, true, err, errlen)))
		return rc;
	if (spec_parse(base, &s, why, sizeof(why)))
		return fail(err, errlen, "--cache: %s", why);
	g = &p->groups[p->ngroups];
	memset(g, 0, sizeof(*g));
	g->first = p->ncaches;
	g->level = s.cache.levels;
	for (unsigned k = 0; k < s.cache.levels; k++)
		if (strcmp(s.cache.level[k].name, level) == 0)
			g->level = k;
	if (g->level == s.cache.levels)
		return fail(err, errlen, "--cache-sweep: %s is not a level of '%s'", level, base);
	for (unsigned i = 0; i < sizes.n; i++) {
		struct spec one = s;
		char buf[1024];

		/* Every size at the associativity the --cache gave (cache_config_resize()), in a
		 * label that spec_parse() reads back as that cache. */
		if (cache_config_resize(&s.cache, g->level, sizes.v[i], &one.cache, why,
					sizeof(why)))
			return fail(err, errlen, "--cache-sweep: %s", why);
		/* N ways that make one set: the label says N (not "full"), so that the size's
		 * spec also says the ways the others keep. */
		if (one.cache.level[g->level].assoc)
			one.cache.level[g->level].fully_assoc = false;
		if (p->ncaches == SWEEP_CACHES_MAX)
			return fail(err, errlen, "more than %d caches", SWEEP_CACHES_MAX);
		p->caches[p->ncaches++] = xstrdup(spec_format(&one, buf, sizeof(buf)));
	}
	g->n = sizes.n;
	g->method = cache_onepass_method(&s.cache, g->level, sizes.v, sizes.n, &g->why);
	p->ngroups++;
	return 0;
}

int
sweep_plan_cache(struct sweep_plan *p, const char *text, const char *cache_sweep, char *err,
		 size_t errlen)
{
	struct spec s;
	char why[512], buf[1024];

	if (cache_sweep)
		return expand_cache_sweep(p, text, cache_sweep, err, errlen);
	if (spec_parse(text, &s, why, sizeof(why)))
		return fail(err, errlen, "--cache: %s", why);
	if (p->ncaches == SWEEP_CACHES_MAX)
		return fail(err, errlen, "more than %d --cache", SWEEP_CACHES_MAX);
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

/* Text written at `at` (NULL: only measured), n bytes so far: a plan of a million keys is
 * measured and written without snprintf(), which took most of the time to make them. */
struct text {
	char *at;
	size_t n;
};

static void
put_str(struct text *t, const char *s)
{
	size_t len = strlen(s);

	if (t->at)
		memcpy(t->at + t->n, s, len);
	t->n += len;
}

static void
put_u64(struct text *t, const char *before, uint64_t v)
{
	char digits[24];
	size_t k = sizeof(digits);

	put_str(t, before);
	digits[--k] = '\0';
	do {
		digits[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_str(t, digits + k);
}

/* Item it's key, its terminating NUL included, into t: the text of results.json's "key", which
 * --resume and merge compare, so it must not change. */
static void
item_key(const struct sweep_item *it, const struct sweep_plan *p, struct text *t)
{
	const struct attn_config *c = &it->cfg;

	if (p->plugin.p) {
		/* The plugin by its path and its parameters, as given. */
		put_str(t, "plugin=");
		put_str(t, p->plugin.path);
		struct plugin_params pp;

		/* one value of each list: the key of a --param without a comma is as it was */
		sweep_plan_item_params(p, it, &pp);
		for (unsigned i = 0; i < pp.n; i++) {
			put_str(t, " param:");
			put_str(t, pp.given[i]);
		}
	} else {
		put_str(t, attn_kernel_name(c->kernel));
	}
	put_u64(t, " N=", c->N);
	/* only where it differs: the keys of sweeps without --N-kv stay as they were */
	if (attn_nkv(c) != c->N)
		put_u64(t, " N_kv=", attn_nkv(c));
	if (c->kernel == ATTN_FLASHDECODE)
		put_u64(t, " splits=", attn_splits(c));
	if (c->kv_page)
		put_u64(t, " kv_page=", c->kv_page);
	put_u64(t, " d=", c->d);
	put_u64(t, " heads=", c->heads);
	put_u64(t, " kv_heads=", c->kv_heads);
	put_u64(t, " batch=", c->batch);
	put_str(t, " ");
	put_str(t, attn_dtype_name(c->dtype));
	put_u64(t, " Br=", c->Br);
	put_u64(t, " Bc=", c->Bc);
	put_u64(t, " causal=", c->causal);
	put_u64(t, " separate=", c->softmax_separate);
	put_str(t, " cache=");
	put_str(t, p->caches[it->cache]);
	put_u64(t, " flush=", p->flush);
	put_u64(t, " seed=", p->seed);
	put_str(t, p->simulate ? " simulated" : " formula");
	put_str(t, p->trace_only ? " trace-only" : "");
	if (p->sample_sets > 1)
		put_u64(t, " sampled 1/", p->sample_sets);
	if (t->at)
		t->at[t->n] = '\0';
	t->n++;
}

/* The plan's dimensions, outermost first: the product is walked like an odometer. */
enum {
	DIM_CACHE,
	DIM_KERNEL,
	DIM_PARAMS, /* the combinations of a plugin's --param lists */
	DIM_DTYPE,
	DIM_CAUSAL,
	DIM_HEADS,
	DIM_KV,
	DIM_BATCH,
	DIM_D,
	DIM_BR,
	DIM_BC,
	DIM_N,
	DIM_NKV,
	DIM_SPLITS,
	DIM_KV_PAGE,
	DIMS
};

/* The odometer over the plan's product: at[] the digits, len[] each dimension's length. */
struct walk {
	unsigned len[DIMS], at[DIMS];
	bool done;
};

static void
walk_init(struct walk *w, const struct sweep_plan *p)
{
	const unsigned len[DIMS] = { p->ncaches,
				     p->nkernels,
				     (unsigned)param_combinations(p),
				     p->ndtypes,
				     p->ncausal,
				     p->heads.n,
				     p->kv_given ? p->kv_heads.n : 1,
				     p->batch.n,
				     p->d.n,
				     p->Br.n,
				     p->Bc.n,
				     p->N.n,
				     p->nkv_given ? p->N_kv.n : 1,
				     p->splits_given ? p->splits.n : 1,
				     p->kv_page_given ? p->kv_page.n : 1 };

	memcpy(w->len, len, sizeof(len));
	memset(w->at, 0, sizeof(w->at));
	w->done = false;
	for (int i = 0; i < DIMS; i++)
		w->done |= len[i] == 0;
}

/* The configuration under the odometer into it (its key not set), then one step on. Returns
 * false, writing nothing, after the last. */
static bool
walk_next(struct walk *w, const struct sweep_plan *p, struct sweep_item *it)
{
	int i;

	if (w->done)
		return false;
	memset(it, 0, sizeof(*it));
	it->cache = w->at[DIM_CACHE];
	it->cfg.kernel = p->kernels[w->at[DIM_KERNEL]];
	it->params = w->at[DIM_PARAMS];
	it->cfg.dtype = p->dtypes[w->at[DIM_DTYPE]];
	it->cfg.causal = p->causal[w->at[DIM_CAUSAL]];
	it->cfg.heads = p->heads.v[w->at[DIM_HEADS]];
	it->cfg.kv_heads = p->kv_given ? p->kv_heads.v[w->at[DIM_KV]] : it->cfg.heads;
	it->cfg.batch = p->batch.v[w->at[DIM_BATCH]];
	it->cfg.d = p->d.v[w->at[DIM_D]];
	it->cfg.Br = p->Br.v[w->at[DIM_BR]];
	it->cfg.Bc = p->Bc.v[w->at[DIM_BC]];
	it->cfg.N = p->N.v[w->at[DIM_N]];
	it->cfg.N_kv = p->nkv_given ? p->N_kv.v[w->at[DIM_NKV]] : it->cfg.N;
	it->cfg.softmax_separate = p->softmax_separate;
	if (it->cfg.kernel == ATTN_FLASHDECODE) {
		uint64_t tc = attn_blocks(it->cfg.N_kv, it->cfg.Bc ? it->cfg.Bc : 1);

		it->cfg.splits_source = ATTN_SPLITS_GIVEN;
		it->cfg.splits = p->splits_given
					 ? p->splits.v[w->at[DIM_SPLITS]]
					 : sdpa_default_splits(&it->cfg, p->caches[it->cache],
							       &it->cfg.splits_source);
		/* no P to keep apart (memsim run refuses the flag) */
		it->cfg.softmax_separate = false;
		/* clamped as memsim run clamps it */
		it->cfg.splits = it->cfg.splits < tc ? it->cfg.splits : tc;
	} else if (w->at[DIM_SPLITS] > 0) {
		it->cfg.splits = UINT64_MAX; /* the --splits list repeats other kernels */
	}
	/* paged flash2 and flashdecode at each --kv-page; the other kernels once, unpaged */
	it->cfg.kv_seed = p->seed;
	if (p->kv_page_given &&
	    (it->cfg.kernel == ATTN_FLASH2 || it->cfg.kernel == ATTN_FLASHDECODE))
		it->cfg.kv_page = p->kv_page.v[w->at[DIM_KV_PAGE]];
	else if (w->at[DIM_KV_PAGE] > 0)
		it->cfg.splits = UINT64_MAX;
	for (i = DIMS - 1; i >= 0 && ++w->at[i] == w->len[i]; i--)
		w->at[i] = 0;
	w->done = i < 0;
	return true;
}

enum left_out {
	KEPT,
	LEFT_OUT_KV_HEADS,
	LEFT_OUT_CAUSAL,
	LEFT_OUT_NKV,
	LEFT_OUT_REPEAT, /* a kernel without splits (pages), once per --splits (--kv-page) value
			  * after the first */
	LEFT_OUT_COUNT
};

/* Whether the kernels take configuration c, or why not. */
static enum left_out
left_out(const struct attn_config *c)
{
	if (c->splits == UINT64_MAX)
		return LEFT_OUT_REPEAT;
	if (c->kv_heads == 0 || c->heads % c->kv_heads != 0)
		return LEFT_OUT_KV_HEADS;
	if (c->kernel == ATTN_PROJ && c->causal)
		return LEFT_OUT_CAUSAL;
	/* as attn_config_check(): flash1 and proj take N_kv = N; causal needs N <= N_kv */
	if (attn_nkv(c) != c->N && (c->kernel == ATTN_FLASH1 || c->kernel == ATTN_PROJ))
		return LEFT_OUT_NKV;
	if (c->causal && c->N > attn_nkv(c))
		return LEFT_OUT_NKV;
	return KEPT;
}

int
sweep_plan_check(const struct sweep_plan *p, char *err, size_t errlen)
{
	struct walk w;
	struct sweep_item it;
	uint64_t total = 1, left[LEFT_OUT_COUNT] = { 0 };
	char count[32];
	bool over = false;

	walk_init(&w, p);
	for (int i = 0; i < DIMS; i++)
		over |= __builtin_mul_overflow(total, (uint64_t)w.len[i], &total);
	/* Refused before anything is made: the items of a plan cost about 300 bytes each. */
	if (over || total > SWEEP_PLAN_MAX) {
		if (over)
			snprintf(count, sizeof(count), "more than 2^64");
		else
			snprintf(count, sizeof(count), "%llu", (unsigned long long)total);
		return fail(err, errlen,
			    "the lists give %s configurations, over the limit of %d: "
			    "shorten a list or split the sweep",
			    count, SWEEP_PLAN_MAX);
	}
	for (unsigned i = 0; i < p->ncaches; i++)
		for (unsigned j = 0; j < i; j++)
			if (strcmp(p->caches[i], p->caches[j]) == 0)
				return fail(err, errlen,
					    "--cache: '%s' is given twice: give each cache "
					    "once",
					    p->caches[i]);
	while (walk_next(&w, p, &it))
		left[left_out(&it.cfg)]++;
	if (left[KEPT] == 0) {
		char kv[64] = "", causal[96] = "", nkv[128] = "";

		if (left[LEFT_OUT_KV_HEADS])
			snprintf(kv, sizeof(kv), "%llu with kv_heads not dividing heads",
				 (unsigned long long)left[LEFT_OUT_KV_HEADS]);
		if (left[LEFT_OUT_CAUSAL])
			snprintf(causal, sizeof(causal),
				 "%s%llu of kernel proj with --causal (proj has no causal mask)",
				 kv[0] ? ", " : "", (unsigned long long)left[LEFT_OUT_CAUSAL]);
		if (left[LEFT_OUT_NKV])
			snprintf(nkv, sizeof(nkv),
				 "%s%llu with N_kv != N under flash1 or proj, or N > N_kv with "
				 "--causal",
				 kv[0] || causal[0] ? ", " : "",
				 (unsigned long long)left[LEFT_OUT_NKV]);
		return fail(err, errlen, "no configuration remains of the %llu listed: %s%s%s",
			    (unsigned long long)total, kv, causal, nkv);
	}
	return 0;
}

struct sweep_item *
sweep_plan_items(const struct sweep_plan *p, size_t *count)
{
	struct walk w;
	struct sweep_item it, *items;
	struct text keys = { NULL, 0 };
	size_t n = 0;

	/* Two walks: the first sizes one block for the items and their keys (freed with the
	 * items by one free()), the second fills it. */
	walk_init(&w, p);
	while (walk_next(&w, p, &it))
		if (left_out(&it.cfg) == KEPT) {
			n++;
			item_key(&it, p, &keys);
		}
	items = xzalloc(n * sizeof(*items) + keys.n + 1);
	keys = (struct text){ (char *)(items + n), 0 };
	n = 0;
	walk_init(&w, p);
	while (walk_next(&w, p, &it))
		if (left_out(&it.cfg) == KEPT) {
			it.key = keys.at + keys.n;
			item_key(&it, p, &keys);
			items[n++] = it;
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
	enum { MAXARGS = 40 + 2 * SWEEP_CACHES_MAX + 2 * PLUGIN_MAX_PARAMS };
	char *args[MAXARGS];
	char lists[10][SWEEP_LIST_MAX * 21];
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
	args[n++] = p->plugin.p ? (char *)p->plugin.path : kernels;
	for (unsigned i = 0; i < p->params.n; i++) {
		args[n++] = "--param";
		args[n++] = (char *)p->params.given[i];
	}
	add_list(args, &n, lists[0], sizeof(lists[0]), "--N", &p->N);
	if (p->nkv_given)
		add_list(args, &n, lists[7], sizeof(lists[7]), "--N-kv", &p->N_kv);
	if (p->splits_given)
		add_list(args, &n, lists[8], sizeof(lists[8]), "--splits", &p->splits);
	if (p->kv_page_given)
		add_list(args, &n, lists[9], sizeof(lists[9]), "--kv-page", &p->kv_page);
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
