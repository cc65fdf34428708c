#include "run/simulate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/attn_split.h"
#include "sim/drive/feed.h"
#include "sim/trace.h"
#include "traces/mtrace.h"

/* bytes as "1.5 GiB" or "12.0 MiB" in buf. */
static char *
mib(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (UINT64_C(1) << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1u << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1u << 20));
	return buf;
}

/* The sizes a one-pass run counts for (cache_create_onepass()). */
struct onepass {
	unsigned level;
	const uint64_t *sizes;
	unsigned n;
	enum cache_onepass how;
};

/* A fresh model for spec, or with op its one-pass model; NULL with a message in err and *rc
 * -ENOMEM when memory is short, -EINVAL when the config is not valid. */
static struct cache *
model_create(const struct spec *spec, const struct onepass *op, int *rc, char *err, size_t errlen)
{
	struct cache *c =
		op ? cache_create_onepass(&spec->cache, op->level, op->sizes, op->n, op->how)
		   : cache_create(&spec->cache);
	char need[32];

	*rc = 0;
	if (c)
		return c;
	*rc = -EINVAL;
	if (cache_config_validate(&spec->cache, err, errlen))
		return NULL;
	*rc = -ENOMEM;
	if (op)
		snprintf(
			err, errlen, "cannot allocate the one-pass model of %u sizes (%s)", op->n,
			mib(cache_onepass_bytes(&spec->cache, op->level, op->sizes, op->n, op->how),
			    need, sizeof(need)));
	else
		snprintf(err, errlen, "cannot allocate the cache model (%s)",
			 mib(cache_model_bytes(&spec->cache), need, sizeof(need)));
	return NULL;
}

/* Runs d's kernel once more into a recording at rec->path, with no model: every access as the
 * kernel makes it, whatever cache a replay will use. Returns 0, or -EIO with a message in err;
 * a recording left incomplete is removed (mtrace_writer_close()). */
static int
record_pass(struct attn_data *d, const struct sim_record *rec, char *err, size_t errlen)
{
	struct mtrace_writer *w = mtrace_writer_open(rec->path, rec->command, err, errlen);
	struct trace_sink sink;
	struct trace_ctx *t;
	char why[4400];

	if (!w) {
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "recording: %s", why);
		return -EIO;
	}
	sink = mtrace_writer_sink(w);
	t = trace_ctx_create(NULL, &sink, 0);
	attn_run_traced(d, t);
	trace_ctx_destroy(t);
	if (mtrace_writer_close(w, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "recording: %s", why);
	return -EIO;
}

/* The live pass on k > 1 threads (sim/drive/feed.h): d's kernel on this thread into the feed
 * model, the slices on theirs; out->cache is their sum. With tiles in scratch the kernel hands
 * out little but runs of rows (its tiles tallied in bulk), so this thread is one of the k that
 * simulate the slices: k threads busy, not k + 1. Returns 0, or -ENOMEM with err. */
static int
split_pass(struct attn_data *d, const struct spec *spec, bool flush, unsigned k,
	   struct sim_result *out, char *err, size_t errlen)
{
	bool caller_slice = spec->tiles_in_scratch;
	struct cache_feed *f = cache_feed_start(&spec->cache, k, caller_slice, err, errlen);
	struct trace_ctx *t;
	double t0;

	if (!f)
		return -ENOMEM;
	t = trace_ctx_create(cache_feed_model(f), NULL, spec->tiles_in_scratch);
	t0 = now_seconds();
	attn_run_traced(d, t);
	trace_ctx_destroy(t); /* hands over the pending merged access */
	if (cache_feed_finish(f, flush, &out->cache, err, errlen))
		return -ENOMEM;
	out->seconds = now_seconds() - t0;
	out->threads = k;
	out->busy = caller_slice ? k : k + 1;
	return 0;
}

/* The live pass of a computing run on k > 1 threads: the kernel's trace-only form on this
 * thread into the model (the counters of the computing kernel, bit for bit: test-trace-only),
 * while its native build computes the values on k threads (run/attn_split.h). Returns 0,
 * or -ENOMEM with err. */
static int
values_pass(struct attn_data *d, const struct spec *spec, bool flush, unsigned k,
	    struct sim_result *out, char *err, size_t errlen)
{
	struct attn_data twin = *d; /* the same addresses; reads and writes none of them */
	struct attn_native_split *sp;
	struct trace_ctx *t;
	double t0;
	int rc;

	out->cache = model_create(spec, NULL, &rc, err, errlen);
	if (!out->cache)
		return rc;
	t0 = now_seconds();
	if (!(sp = attn_native_split_start(d, k, err, errlen))) {
		sim_result_finish(out);
		return -ENOMEM;
	}
	out->threads = attn_native_split_threads(sp);
	twin.trace_only = true;
	t = trace_ctx_create(out->cache, NULL, spec->tiles_in_scratch);
	attn_run_traced(&twin, t);
	trace_ctx_destroy(t);
	if (flush)
		cache_flush(out->cache);
	if (attn_native_split_join(sp)) {
		snprintf(err, errlen,
			 "cannot allocate the tiles of the threads computing the values");
		sim_result_finish(out);
		return -ENOMEM;
	}
	out->seconds = now_seconds() - t0;
	cache_sample_scale(out->cache);
	return 0;
}

/* sim_kernel(), or with trace_only sim_kernel_trace_only() (check is then false), on a fresh
 * model, or with op on a one-pass model (out->cache is then it); with rec recorded first; on
 * k slice threads where k > 1 (with op: the levels above the swept one on this thread, the
 * sizes on the slices', cache_onepass_attach_threads()). The arrays come first: the model takes
 * what their mapping leaves (attn_data_create() reserves more while it maps). */
static int
simulate(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	 bool check, bool trace_only, const struct onepass *op, const struct sim_record *rec,
	 unsigned k, struct sim_result *out, char *err, size_t errlen)
{
	struct attn_data *d;
	struct trace_ctx *t;
	double t0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->threads = out->busy = 1;
	d = trace_only ? attn_data_create_trace_only(cfg, err, errlen)
		       : attn_data_create(cfg, err, errlen);
	if (!d)
		return -EINVAL;
	if (k > 1 && !op) {
		if (rec) {
			attn_data_fill(d, seed);
			rc = record_pass(d, rec, err, errlen);
		} else {
			rc = 0;
		}
		if (!rc) {
			attn_data_fill(d, seed);
			rc = trace_only ? split_pass(d, spec, flush, k, out, err, errlen)
					: values_pass(d, spec, flush, k, out, err, errlen);
		}
		/* the caller simulates beside the values' threads */
		if (!rc && !trace_only)
			out->busy = out->threads + 1;
		attn_data_destroy(d);
		return rc;
	}
	out->cache = model_create(spec, op, &rc, err, errlen);
	if (!out->cache) {
		attn_data_destroy(d);
		return rc;
	}
	if (k > 1 &&
	    (rc = cache_onepass_attach_threads(out->cache, &spec->cache, op->level, op->sizes,
					       op->n, op->how, k, err, errlen))) {
		sim_result_finish(out);
		attn_data_destroy(d);
		return rc;
	}
	/* A pass of its own, so the live model below takes the same path as without --record
	 * (sim/trace.h: TR_ZIP reports lines to some caches, elements to a recording). */
	if (rec) {
		attn_data_fill(d, seed);
		if ((rc = record_pass(d, rec, err, errlen))) {
			sim_result_finish(out);
			attn_data_destroy(d);
			return rc;
		}
	}
	attn_data_fill(d, seed);
	if (check)
		attn_data_poison(d);
	t = trace_ctx_create(out->cache, NULL, spec->tiles_in_scratch);
	t0 = now_seconds();
	attn_run_traced(d, t);
	out->seconds = now_seconds() - t0;
	trace_ctx_destroy(t);
	if (flush)
		cache_flush(out->cache);
	if (k > 1) {
		if ((rc = cache_onepass_detach_threads(out->cache, flush, err, errlen))) {
			sim_result_finish(out);
			attn_data_destroy(d);
			return rc == -ENOMEM ? rc : -EINVAL;
		}
		out->threads = k;
		out->busy = k + 1;
	}
	cache_sample_scale(out->cache); /* set sampling's estimate; nothing otherwise */
	if (check) {
		out->checked = true;
		out->error = attn_check(d);
	}
	attn_data_destroy(d);
	return 0;
}

int
sim_kernel(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	   bool check, struct sim_result *out, char *err, size_t errlen)
{
	return simulate(cfg, spec, flush, seed, check, false, NULL, NULL, 1, out, err, errlen);
}

int
sim_kernel_trace_only(const struct attn_config *cfg, const struct spec *spec, bool flush,
		      struct sim_result *out, char *err, size_t errlen)
{
	return simulate(cfg, spec, flush, 0, false, true, NULL, NULL, 1, out, err, errlen);
}

int
sim_kernel_record(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
		  bool trace_only, const struct sim_record *rec, struct sim_result *out, char *err,
		  size_t errlen)
{
	return simulate(cfg, spec, flush, trace_only ? 0 : seed, false, trace_only, NULL, rec, 1,
			out, err, errlen);
}

/* The threads a run can take, up to want, and why not more. */
static unsigned
plan_threads(const struct spec *spec, unsigned want, struct sim_result *out)
{
	char why[sizeof(out->threads_why)];
	unsigned k = cache_slices_max(&spec->cache, want ? want : 1, why, sizeof(why));

	snprintf(out->threads_why, sizeof(out->threads_why), "%s", why);
	return k;
}

/* The threads a computing run's values can take, up to want, and why not more: its units
 * (run/attn_split.h). The model runs on the caller's thread, whatever the cache. */
static unsigned
plan_values(const struct attn_config *cfg, unsigned want, struct sim_result *out)
{
	uint64_t units = attn_native_units(cfg);

	out->threads_why[0] = 0;
	if (want <= 1)
		return 1;
	if (units >= want)
		return want;
	snprintf(out->threads_why, sizeof(out->threads_why),
		 "the values split into %llu unit%s (%s)", (unsigned long long)units,
		 units == 1 ? "" : "s",
		 cfg->kv_page || cfg->kernel == ATTN_PROJ
			 ? "batch elements, with paged K/V or proj"
			 : "each batch element's query heads of one KV head");
	return units ? (unsigned)units : 1;
}

unsigned
sim_default_threads(const struct attn_config *cfg, const struct spec *spec, bool trace_only)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	const struct cache_config *cc = &spec->cache;
	char why[256];

	if (cores < 2)
		return 1;
	if (trace_only) {
		/* Pays where the kernel hands out runs of rows (tiles in scratch) and one thread
		 * has no inline L1 path to lose (a write-validate L1: the GPU presets). */
		if (!spec->tiles_in_scratch || cc->levels == 0 ||
		    cc->level[0].alloc != CACHE_ALLOC_VALIDATE || attn_flops(cfg) < 1e10)
			return 1;
		return cache_slices_max(cc, cores < SIM_TRACE_ONLY_THREADS ? (unsigned)cores
									 : SIM_TRACE_ONLY_THREADS,
					why, sizeof(why));
	}
	if (attn_flops(cfg) < 1e8 || attn_native_units(cfg) < 2)
		return 1;
	return cores > CACHE_MAX_SLICES ? CACHE_MAX_SLICES : (unsigned)cores;
}

int
sim_kernel_split(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
		 bool trace_only, unsigned threads, struct sim_result *out, char *err,
		 size_t errlen)
{
	return sim_kernel_record_split(cfg, spec, flush, seed, trace_only, NULL, threads, out, err,
				       errlen);
}

int
sim_kernel_record_split(const struct attn_config *cfg, const struct spec *spec, bool flush,
			uint64_t seed, bool trace_only, const struct sim_record *rec,
			unsigned threads, struct sim_result *out, char *err, size_t errlen)
{
	struct sim_result plan;
	unsigned k =
		trace_only ? plan_threads(spec, threads, &plan) : plan_values(cfg, threads, &plan);
	int rc = simulate(cfg, spec, flush, trace_only ? 0 : seed, false, trace_only, NULL, rec, k,
			  out, err, errlen);

	if (!rc && out->threads == k)
		snprintf(out->threads_why, sizeof(out->threads_why), "%s", plan.threads_why);
	else if (!rc)
		snprintf(out->threads_why, sizeof(out->threads_why),
			 "%u of %u threads could be started", out->threads, k);
	return rc;
}

int
sim_kernel_onepass(const struct attn_config *cfg, const struct spec *spec, unsigned level,
		   const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
		   uint64_t seed, bool trace_only, struct sim_result *outs, char *err,
		   size_t errlen)
{
	return sim_kernel_onepass_split(cfg, spec, level, sizes, n, how, flush, seed, trace_only, 1,
					outs, err, errlen);
}

int
sim_kernel_onepass_split(const struct attn_config *cfg, const struct spec *spec, unsigned level,
			 const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
			 uint64_t seed, bool trace_only, unsigned threads, struct sim_result *outs,
			 char *err, size_t errlen)
{
	const struct onepass op = { level, sizes, n, how };
	struct sim_result one;
	char need[32], why[sizeof(one.threads_why)];
	unsigned used;
	int rc;

	if (how == CACHE_ONEPASS_SEPARATE ||
	    cache_onepass_method(&spec->cache, level, sizes, n, NULL) < how) {
		snprintf(err, errlen, "one pass (%s) does not apply to these sizes of L%u",
			 cache_onepass_str(how), level + 1);
		return -EINVAL;
	}
	used = cache_onepass_slices_max(&spec->cache, level, sizes, n, threads ? threads : 1, why,
					sizeof(why));
	rc = simulate(cfg, spec, flush, trace_only ? 0 : seed, false, trace_only, &op, NULL, used,
		      &one, err, errlen);
	if (rc)
		return rc;
	if (cache_onepass_failed(one.cache)) {
		snprintf(err, errlen, "memory ran out during the one pass of %u sizes (%s)", n,
			 mib(cache_onepass_bytes(&spec->cache, level, sizes, n, how), need,
			     sizeof(need)));
		sim_result_finish(&one);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < n; k++) {
		memset(&outs[k], 0, sizeof(outs[k]));
		outs[k].cache = cache_onepass_take(one.cache, k);
		outs[k].seconds = one.seconds;
		outs[k].threads = one.threads;
		outs[k].busy = one.busy;
		snprintf(outs[k].threads_why, sizeof(outs[k].threads_why), "%s", why);
	}
	sim_result_finish(&one);
	return 0;
}

/* A page count from /proc/self/statm (field 0: all mappings, 5: data and stack), or 0. */
static uint64_t
statm_bytes(unsigned field)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long v[7] = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	int got = 0;

	if (f) {
		got = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			     &v[4], &v[5], &v[6]);
		fclose(f);
	}
	return got > (int)field && page > 0 ? v[field] * (uint64_t)page : 0;
}

/* MemAvailable from /proc/meminfo in bytes, or UINT64_MAX where there is none. */
static uint64_t
mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;
	uint64_t bytes = UINT64_MAX;

	if (!f)
		return bytes;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			bytes = kb * 1024;
	fclose(f);
	return bytes;
}

/* Makes *best the smaller of it and what `limit` leaves once `used` bytes are taken; names
 * the bound in *what. */
static void
bound(uint64_t *best, const char **what, uint64_t limit, uint64_t used, const char *name)
{
	uint64_t left = limit > used ? limit - used : 0;

	if (limit != UINT64_MAX && left < *best) {
		*best = left;
		*what = name;
	}
}

int
sim_memory_setting(uint64_t *bytes)
{
	const char *env = getenv("MEMSIM_MEMORY");

	if (!env)
		return 0;
	return parse_size_bytes(env, bytes) == 0 ? 1 : -EINVAL;
}

uint64_t
sim_memory_available(const struct attn_config *cfg, bool trace_only, const char **what)
{
	return sim_memory_share(cfg, trace_only, 1, what);
}

uint64_t
sim_memory_share(const struct attn_config *cfg, bool trace_only, unsigned workers,
		 const char **what)
{
	uint64_t best = UINT64_MAX, mapped = cfg ? attn_data_bytes(cfg) : 0;
	uint64_t memory = trace_only ? 0 : mapped, set, avail;
	const char *unused;
	struct rlimit rl;

	if (!what)
		what = &unused;
	*what = "nothing";
	if (workers < 1)
		workers = 1;
	/* The machine's memory is shared by the workers that run at once; each process's
	 * limits are its own. */
	if (sim_memory_setting(&set) > 0) {
		bound(&best, what, set / workers, memory, "MEMSIM_MEMORY");
		return best;
	}
	/* The arrays as the model finds them: mapped (trace-only: address space, no memory). */
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		bound(&best, what, rl.rlim_cur, statm_bytes(0) + mapped, "RLIMIT_AS");
	if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		bound(&best, what, rl.rlim_cur, statm_bytes(5) + memory, "RLIMIT_DATA");
	avail = mem_available();
	bound(&best, what, avail == UINT64_MAX ? avail : avail / workers, memory, "MemAvailable");
	return best;
}

/* Whether level `level` of cfg has one set. */
static bool
one_set(const struct cache_config *cfg, unsigned level)
{
	const struct cache_level_config *l = &cfg->level[level];

	return l->fully_assoc || l->size_bytes / l->line_bytes == l->assoc;
}

unsigned
sim_onepass_split(const struct spec *spec, unsigned level, const uint64_t *sizes, unsigned n,
		  enum cache_onepass how, uint64_t budget, unsigned *pass)
{
	unsigned order[CACHE_ONEPASS_MAX], kind[CACHE_ONEPASS_MAX], npasses = 0;
	uint64_t in[CACHE_ONEPASS_MAX];

	if (n > CACHE_ONEPASS_MAX)
		n = CACHE_ONEPASS_MAX;
	/* Smallest first (an insertion sort: a sweep has a few sizes). */
	for (unsigned k = 0; k < n; k++) {
		struct cache_config one;
		char err[256];
		bool ok = cache_config_resize(&spec->cache, level, sizes[k], &one, err,
					      sizeof(err)) == 0;

		order[k] = k;
		/* The tracing layer reads L1's geometry (sim/trace.c): an L1 of one set and
		 * one of several are traced apart. */
		kind[k] = level == 0 && ok && one_set(&one, 0);
	}
	for (unsigned k = 1; k < n; k++)
		for (unsigned j = k; j > 0 && sizes[order[j]] < sizes[order[j - 1]]; j--) {
			unsigned t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	/* Each kind apart; within it, as many of the smallest sizes as fit, then the next. */
	for (unsigned want = 0; want < 2; want++) {
		unsigned m = 0;

		for (unsigned i = 0; i < n; i++) {
			unsigned k = order[i];

			if (kind[k] != want)
				continue;
			in[m] = sizes[k];
			if (m &&
			    cache_onepass_bytes(&spec->cache, level, in, m + 1, how) > budget) {
				npasses++;
				in[0] = sizes[k];
				m = 0;
			}
			pass[k] = npasses;
			m++;
		}
		if (m)
			npasses++;
	}
	return npasses;
}

void
sim_result_finish(struct sim_result *r)
{
	cache_destroy(r->cache);
	memset(r, 0, sizeof(*r));
}
