/*
 * `memsim sweep` and `memsim merge`.
 *
 * A sweep is the cartesian product of option lists. Configurations run in worker processes
 * (one per core unless --jobs says otherwise); the parent alone writes the output files, one
 * line per finished run, flushed at once:
 *   DIR/results.json   one JSON object per line (a run's report, plus "key" and "index")
 *   DIR/results.csv    one row per run
 *   DIR/manifest.json  date, versions, host, seed, the command, the lists, a summary
 * An interrupted sweep keeps every finished line; --resume skips the configurations whose key
 * is already in results.json (a half-written last line is dropped). --shard i/n runs the
 * configurations whose index is i modulo n, so a scheduler can spread a sweep; `memsim merge`
 * joins the shards' results.
 */

#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/evaluate.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "sim/util.h"

#define MAX_LIST 256
#define MAX_CACHES 64

struct u64_list {
	uint64_t v[MAX_LIST];
	unsigned n;
};

struct sweep_plan {
	struct u64_list N, d, heads, kv_heads, batch, Br, Bc;
	enum attn_kernel kernels[ATTN_KERNEL_COUNT];
	unsigned nkernels;
	enum attn_dtype dtypes[3];
	unsigned ndtypes;
	bool causal[2];
	unsigned ncausal;
	bool softmax_separate;
	bool kv_given;
	char *caches[MAX_CACHES]; /* specs after --cache-sweep expansion */
	unsigned ncaches;
	bool flush;
	uint64_t seed;
	bool simulate;
};

struct sweep_item {
	struct attn_config cfg;
	unsigned cache;
	char key[1024];
};

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* ---- parsing lists ---- */

/* "a,b,c", "lo:hi:xF" (geometric) or "lo:hi:+S" (arithmetic); sizes may carry K/M/G when
 * size_units. Returns 0 or EXIT_USAGE after a message. */
static int
parse_list(const char *opt, const char *text, struct u64_list *out, bool size_units)
{
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;

	out->n = 0;
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		char *c1 = strchr(item, ':');
		uint64_t lo, hi, step;

		if (!c1) {
			if ((size_units ? parse_size_bytes(item, &lo) != 0
					: !parse_u64(item, &lo))) {
				rc = usage_error("sweep", "%s: '%s' is not a number", opt, item);
				break;
			}
			if (out->n == MAX_LIST) {
				rc = usage_error("sweep", "%s: more than %d values", opt, MAX_LIST);
				break;
			}
			out->v[out->n++] = lo;
			continue;
		}
		{
			char *c2 = strchr(c1 + 1, ':');
			bool geometric;

			*c1 = '\0';
			if (!c2 || (c2[1] != 'x' && c2[1] != '+')) {
				rc = usage_error("sweep", "%s: range '%s:...' needs :xF or :+S",
						 opt, item);
				break;
			}
			*c2 = '\0';
			geometric = c2[1] == 'x';
			if ((size_units ? parse_size_bytes(item, &lo) != 0
					: !parse_u64(item, &lo)) ||
			    (size_units ? parse_size_bytes(c1 + 1, &hi) != 0
					: !parse_u64(c1 + 1, &hi)) ||
			    (geometric ? !parse_u64(c2 + 2, &step)
				       : (size_units ? parse_size_bytes(c2 + 2, &step) != 0
						     : !parse_u64(c2 + 2, &step))) ||
			    step == 0 || (geometric && step < 2) || lo == 0 || hi < lo) {
				rc = usage_error("sweep", "%s: bad range in '%s'", opt, text);
				break;
			}
			for (uint64_t v = lo; v <= hi; v = geometric ? v * step : v + step) {
				if (out->n == MAX_LIST) {
					rc = usage_error("sweep", "%s: more than %d values", opt,
							 MAX_LIST);
					break;
				}
				out->v[out->n++] = v;
				if (v > UINT64_MAX / step)
					break;
			}
		}
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
	struct spec s;
	int rc;

	if (!eq || eq - sweep > 2) {
		return usage_error("sweep", "--cache-sweep: '%s' is not LEVEL=lo:hi:xF", sweep);
	}
	memcpy(level, sweep, (size_t)(eq - sweep));
	level[eq - sweep] = '\0';
	level[0] = (char)(level[0] == 'l' ? 'L' : level[0]);
	if ((rc = parse_list("--cache-sweep", eq + 1, &sizes, true)))
		return rc;
	if (spec_parse(base, &s, err, sizeof(err)))
		return usage_error("sweep", "--cache: %s", err);
	for (unsigned i = 0; i < sizes.n; i++) {
		struct cache_level_config *l = NULL;
		char buf[1024];

		for (unsigned k = 0; k < s.cache.levels; k++)
			if (strcmp(s.cache.level[k].name, level) == 0)
				l = &s.cache.level[k];
		if (!l)
			return usage_error("sweep", "--cache-sweep: %s is not a level of '%s'",
					   level, base);
		l->size_bytes = sizes.v[i];
		if (l->fully_assoc)
			l->assoc = (uint32_t)(sizes.v[i] / l->line_bytes);
		if (cache_config_validate(&s.cache, err, sizeof(err)))
			return usage_error("sweep", "--cache-sweep: %s", err);
		if (p->ncaches == MAX_CACHES)
			return usage_error("sweep", "more than %d caches", MAX_CACHES);
		p->caches[p->ncaches++] = xstrdup(spec_format(&s, buf, sizeof(buf)));
	}
	return 0;
}

/* ---- the plan ---- */

static void
item_key(struct sweep_item *it, const struct sweep_plan *p)
{
	const struct attn_config *c = &it->cfg;

	snprintf(it->key, sizeof(it->key),
		 "%s N=%llu d=%llu heads=%llu kv_heads=%llu batch=%llu %s Br=%llu Bc=%llu "
		 "causal=%d separate=%d cache=%s flush=%d seed=%llu %s",
		 attn_kernel_name(c->kernel), (unsigned long long)c->N, (unsigned long long)c->d,
		 (unsigned long long)c->heads, (unsigned long long)c->kv_heads,
		 (unsigned long long)c->batch, attn_dtype_name(c->dtype), (unsigned long long)c->Br,
		 (unsigned long long)c->Bc, c->causal, c->softmax_separate, p->caches[it->cache],
		 p->flush, (unsigned long long)p->seed, p->simulate ? "simulated" : "formula");
}

/* The product of the lists, in a fixed order. Configurations the kernel does not accept
 * (kv_heads not dividing heads, proj with causal) are left out. */
static struct sweep_item *
plan_items(const struct sweep_plan *p, size_t *count)
{
	size_t cap = 64, n = 0;
	struct sweep_item *items = xzalloc(cap * sizeof(*items));

	for (unsigned ca = 0; ca < p->ncaches; ca++)
		for (unsigned k = 0; k < p->nkernels; k++)
			for (unsigned t = 0; t < p->ndtypes; t++)
				for (unsigned cz = 0; cz < p->ncausal; cz++)
					for (unsigned a = 0; a < p->heads.n; a++)
						for (unsigned kv = 0;
						     kv < (p->kv_given ? p->kv_heads.n : 1); kv++)
							for (unsigned b = 0; b < p->batch.n; b++)
								for (unsigned dd = 0; dd < p->d.n;
								     dd++)
									for (unsigned br = 0;
									     br < p->Br.n; br++)
										for (unsigned bc =
											     0;
										     bc < p->Bc.n;
										     bc++)
											for (unsigned nn =
												     0;
											     nn <
											     p->N.n;
											     nn++) {
												struct sweep_item
													it;

												memset(&it,
												       0,
												       sizeof(it));
												it.cfg.kernel =
													p->kernels
														[k];
												it.cfg.dtype =
													p->dtypes
														[t];
												it.cfg.causal =
													p->causal
														[cz];
												it.cfg.heads =
													p->heads.v
														[a];
												it.cfg.kv_heads =
													p->kv_given
														? p->kv_heads
															  .v[kv]
														: it.cfg.heads;
												it.cfg.batch =
													p->batch.v
														[b];
												it.cfg.d =
													p->d.v[dd];
												it.cfg.Br =
													p->Br.v[br];
												it.cfg.Bc =
													p->Bc.v[bc];
												it.cfg.N =
													p->N.v[nn];
												it.cfg.softmax_separate =
													p->softmax_separate;
												it.cache =
													ca;
												if (it.cfg.kv_heads ==
													    0 ||
												    it.cfg.heads %
													    it.cfg.kv_heads ||
												    (it.cfg.kernel ==
													     ATTN_PROJ &&
												     it.cfg.causal))
													continue;
												item_key(
													&it,
													p);
												if (n ==
												    cap) {
													cap *= 2;
													items = xrealloc(
														items,
														cap * sizeof(*items));
												}
												items[n++] =
													it;
											}
	*count = n;
	return items;
}

/* ---- output files ---- */

static const char *csv_header =
	"index,kernel,N,d,heads,kv_heads,batch,dtype,Br,Bc,causal,cache,flush,mode,"
	"dram_read_bytes,dram_write_bytes,rfo_bytes,flush_write_bytes,exact_bytes,exact_ratio,"
	"exact_within,arrays_within,lab_bytes,lab_measured_bytes,lab_ratio,lab_within,"
	"in_lab_regime,regime,flops,intensity,traced_seconds,error\n";

static double
num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItem(o, a);

	if (b)
		x = cJSON_GetObjectItem(x, b);
	return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const char *
str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItem(o, a);

	if (b)
		x = cJSON_GetObjectItem(x, b);
	return cJSON_IsString(x) ? x->valuestring : "";
}

static bool
flag(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItem(o, a);

	if (b)
		x = cJSON_GetObjectItem(x, b);
	return cJSON_IsTrue(x);
}

static void
csv_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
csv_row(FILE *f, const cJSON *r)
{
	const cJSON *cmp = cJSON_GetObjectItem(r, "compare"), *lab = NULL, *exact = NULL;
	const cJSON *e;

	cJSON_ArrayForEach (e, cmp) {
		if (strcmp(str(e, "formula", NULL), "lab") == 0)
			lab = e;
		else
			exact = e;
	}
	fprintf(f, "%.0f,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%s,%.0f,%.0f,%d,", num(r, "index", NULL),
		str(r, "config", "kernel"), num(r, "config", "N"), num(r, "config", "d"),
		num(r, "config", "heads"), num(r, "config", "kv_heads"), num(r, "config", "batch"),
		str(r, "config", "dtype"), num(r, "config", "Br"), num(r, "config", "Bc"),
		flag(r, "config", "causal"));
	csv_quoted(f, str(r, "config", "cache"));
	fprintf(f, ",%d,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.6g,%d,%d,%.0f,%.0f,%.6g,%d,%d,",
		flag(r, "config", "flush"), str(r, "mode", NULL), num(r, "dram", "read_bytes"),
		num(r, "dram", "write_bytes"), num(r, "dram", "rfo_bytes"),
		num(r, "dram", "flush_write_bytes"),
		num(cJSON_GetObjectItem(r, "formulas"), "exact", "bytes"),
		exact ? num(exact, "ratio", NULL) : 0, exact ? flag(exact, "within", NULL) : 0,
		flag(cJSON_GetObjectItem(r, "formulas"), "exact", "arrays_within"),
		num(cJSON_GetObjectItem(r, "formulas"), "lab", "bytes"),
		lab ? num(lab, "measured_bytes", NULL) : 0, lab ? num(lab, "ratio", NULL) : 0,
		lab ? flag(lab, "within", NULL) : 0, flag(r, "regime", "within_lab_assumptions"));
	csv_quoted(f, str(r, "regime", "text"));
	fprintf(f, ",%.6g,%.6g,%.6g,", num(r, "flops", NULL), num(r, "intensity", NULL),
		num(r, "traced_seconds", NULL));
	csv_quoted(f, str(r, "error", NULL));
	fputc('\n', f);
}

/* Reads results.json; keeps only complete lines (truncating a torn last line), fills the
 * key list and rewrites results.csv from them. Returns the number of runs, or -1. */
static long
load_results(const char *dir, char ***keys, char *err, size_t errlen)
{
	char path[4096], cpath[4096];
	FILE *f, *csv;
	char *line = NULL;
	size_t cap = 0, nkeys = 0, keycap = 64;
	ssize_t len;
	off_t good = 0;

	*keys = xzalloc(keycap * sizeof(char *));
	snprintf(path, sizeof(path), "%s/results.json", dir);
	snprintf(cpath, sizeof(cpath), "%s/results.csv", dir);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	csv = fopen(cpath, "w");
	if (!csv) {
		snprintf(err, errlen, "cannot write %.400s: %s", cpath, strerror(errno));
		fclose(f);
		return -1;
	}
	fputs(csv_header, csv);
	while ((len = getline(&line, &cap, f)) > 0) {
		cJSON *r;

		if (line[len - 1] != '\n')
			break; /* torn last line */
		r = cJSON_Parse(line);
		if (!r)
			break;
		if (nkeys == keycap) {
			keycap *= 2;
			*keys = xrealloc(*keys, keycap * sizeof(char *));
		}
		(*keys)[nkeys++] = xstrdup(str(r, "key", NULL));
		csv_row(csv, r);
		cJSON_Delete(r);
		good += len;
	}
	free(line);
	fclose(f);
	fclose(csv);
	if (truncate(path, good) != 0) {
		snprintf(err, errlen, "cannot repair %.400s: %s", path, strerror(errno));
		return -1;
	}
	return (long)nkeys;
}

static char *
command_output(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char buf[256] = "";
	size_t n;

	if (!p)
		return xstrdup("");
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	pclose(p);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return xstrdup(buf);
}

static void
add_host(cJSON *obj)
{
	cJSON *hw = cJSON_AddObjectToObject(obj, "hardware");
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], model[256] = "unknown";
	struct spec host;
	char err[256], buf[1024];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "model name : %255[^\n]", model) == 1)
			break;
	if (f)
		fclose(f);
	cJSON_AddStringToObject(hw, "cpu_model", model);
	cJSON_AddNumberToObject(hw, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
	if (spec_parse("host", &host, err, sizeof(err)) == 0)
		cJSON_AddStringToObject(hw, "caches", spec_format(&host, buf, sizeof(buf)));
	else
		cJSON_AddStringToObject(hw, "caches", err);
	{
		char *gov = command_output(
			"cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null");

		cJSON_AddStringToObject(hw, "cpu_governor_at_run", gov[0] ? gov : "unavailable");
		free(gov);
	}
}

static int
write_manifest(const char *dir, const struct sweep_plan *p, size_t total, long done, long errors,
	       long exact_within, long lab_in_regime, long lab_in_regime_within, int argc,
	       char **argv, char *err, size_t errlen)
{
	cJSON *m = cJSON_CreateObject(), *v, *cfg, *sum, *caches;
	char path[4096], date[64];
	time_t now = time(NULL);
	char *vg = command_output("valgrind --version 2>/dev/null");
	int rc;

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	cJSON_AddStringToObject(m, "experiment", "memsim sweep");
	cJSON_AddStringToObject(m, "date", date);
	cJSON_AddNumberToObject(m, "seed", (double)p->seed);
	report_add_header(m, argc, argv);
	v = cJSON_AddObjectToObject(m, "versions");
	cJSON_AddStringToObject(v, "memsim", MEMSIM_VERSION);
	cJSON_AddStringToObject(v, "compiler", __VERSION__);
	cJSON_AddStringToObject(v, "valgrind", vg[0] ? vg : "not installed");
#if defined(HAVE_PAPI) && HAVE_PAPI
	cJSON_AddStringToObject(v, "papi", MEMSIM_PAPI_VERSION);
#else
	cJSON_AddStringToObject(v, "papi", "not built in");
#endif
	free(vg);
	add_host(m);
	cfg = cJSON_AddObjectToObject(m, "config");
	cJSON_AddNumberToObject(cfg, "configurations", (double)total);
	cJSON_AddBoolToObject(cfg, "flush", p->flush);
	cJSON_AddStringToObject(cfg, "mode", p->simulate ? "simulated" : "formula");
	caches = cJSON_AddArrayToObject(cfg, "caches");
	for (unsigned i = 0; i < p->ncaches; i++)
		cJSON_AddItemToArray(caches, cJSON_CreateString(p->caches[i]));
	sum = cJSON_AddObjectToObject(m, "results_summary");
	cJSON_AddNumberToObject(sum, "runs_done", (double)done);
	cJSON_AddNumberToObject(sum, "runs_failed", (double)errors);
	cJSON_AddNumberToObject(sum, "exact_within_5pct", (double)exact_within);
	cJSON_AddNumberToObject(sum, "lab_runs_in_regime", (double)lab_in_regime);
	cJSON_AddNumberToObject(sum, "lab_in_regime_within_30pct", (double)lab_in_regime_within);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rc = report_write_json(path, m, err, errlen);
	cJSON_Delete(m);
	return rc;
}

/* ---- workers ---- */

struct worker {
	pid_t pid;
	int to, from; /* task pipe (write end), result pipe (read end) */
	char *buf;
	size_t len, cap;
	long task; /* index being run, or -1 */
};

/* The worker loop: read an index, run it, write one JSON line. */
static void
worker_main(int in, int out, const struct sweep_plan *p, const struct sweep_item *items)
{
	FILE *fin = fdopen(in, "r"), *fout = fdopen(out, "w");
	char line[64];

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	while (fgets(line, sizeof(line), fin)) {
		long idx = strtol(line, NULL, 10);
		const struct sweep_item *it = &items[idx];
		struct spec spec;
		struct evaluation st;
		char err[512];
		cJSON *r;
		char *text;

		if (spec_parse(p->caches[it->cache], &spec, err, sizeof(err)) ||
		    evaluation_run(&st, &it->cfg, &spec, p->flush, p->seed, p->simulate, err,
				   sizeof(err))) {
			r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "error", err);
			report_add_config(r, &it->cfg, &spec, p->flush, p->seed);
		} else {
			r = evaluation_json(&st, 0, NULL);
			evaluation_finish(&st);
		}
		cJSON_AddNumberToObject(r, "index", (double)idx);
		cJSON_AddStringToObject(r, "key", it->key);
		text = cJSON_PrintUnformatted(r);
		fprintf(fout, "%s\n", text);
		fflush(fout);
		cJSON_free(text);
		cJSON_Delete(r);
	}
	fclose(fout);
	_exit(0);
}

static bool
send_task(struct worker *w, long idx)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", idx);

	w->task = idx;
	return write(w->to, line, (size_t)n) == n;
}

void
usage_sweep(FILE *f)
{
	fprintf(f,
		"Usage: memsim sweep --out DIR [--kernel LIST] [--N LIST] [--d LIST] [--heads LIST]\n"
		"                    [--kv-heads LIST] [--batch LIST] [--dtype LIST] [--Br LIST]\n"
		"                    [--Bc LIST] [--causal[=no,yes]] [--softmax-separate]\n"
		"                    [--cache SPEC]... [--cache-sweep LEVEL=lo:hi:xF] [--no-flush]\n"
		"                    [--seed N] [--jobs J] [--resume] [--shard i/n] [--formula-only]\n"
		"\n"
		"Runs every combination of the lists (memsim run for each) on all cores and streams the\n"
		"reports to DIR/results.json (one object per line), DIR/results.csv and\n"
		"DIR/manifest.json. A LIST is values separated by commas, or a range lo:hi:xF\n"
		"(geometric) or lo:hi:+S: --N 256:16384:x2, --kernel naive,flash2, --Br 32,64,128.\n"
		"--cache may be given several times (a spec or preset each); --cache-sweep\n"
		"L2=32K:64M:x2 replaces that level's size in each --cache. Defaults: as memsim run,\n"
		"--causal no, --cache lab, --jobs = cores.\n"
		"\n"
		"  --resume        skip configurations already in DIR/results.json\n"
		"  --shard i/n     run only configurations i, i + n, i + 2n, ... (0 <= i < n)\n"
		"  --formula-only  evaluate the formulas without simulating (instant, any size)\n"
		"\n"
		"Interrupting keeps every finished run; --resume continues. memsim merge joins shards.\n");
}

int
cmd_sweep(int argc, char **argv)
{
	enum {
		OPT_OUT = OPT_FIRST_FREE,
		OPT_CACHE_SWEEP,
		OPT_JOBS,
		OPT_RESUME,
		OPT_SHARD,
		OPT_FORMULA_ONLY,
	};
	/* The shared options, but --causal takes an optional list (--causal=no,yes). */
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, OPT_KERNEL },
		{ "N", required_argument, NULL, OPT_N },
		{ "d", required_argument, NULL, OPT_D },
		{ "heads", required_argument, NULL, OPT_HEADS },
		{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "Br", required_argument, NULL, OPT_BR },
		{ "Bc", required_argument, NULL, OPT_BC },
		{ "causal", optional_argument, NULL, OPT_CAUSAL },
		{ "softmax-separate", no_argument, NULL, OPT_SEPARATE },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "no-flush", no_argument, NULL, OPT_NO_FLUSH },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "cache-sweep", required_argument, NULL, OPT_CACHE_SWEEP },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "formula-only", no_argument, NULL, OPT_FORMULA_ONLY },
		{ NULL, 0, NULL, 0 }
	};
	struct sweep_plan p;
	const char *out = NULL, *cache_sweep = NULL, *caches[MAX_CACHES];
	unsigned ncache_args = 0;
	uint64_t jobs = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN), shard_i = 0, shard_n = 1;
	bool resume = false;
	struct sweep_item *items = NULL;
	size_t nitems = 0, todo_n = 0, next = 0;
	long *todo = NULL;
	char **done_keys = NULL;
	long ndone = 0, finished = 0, errors = 0, exact_within = 0, lab_in = 0, lab_in_ok = 0;
	struct worker *w = NULL;
	char path[4096], err[512];
	FILE *rj = NULL, *csv = NULL;
	int opt, rc = EXIT_RUNTIME;
	double t0 = now_seconds();
	bool tty = isatty(STDERR_FILENO);
	long shown = -1;

	memset(&p, 0, sizeof(p));
	p.flush = true;
	p.seed = 1;
	p.simulate = true;
	p.N.v[0] = 1024, p.N.n = 1;
	p.d.v[0] = 64, p.d.n = 1;
	p.heads.v[0] = 1, p.heads.n = 1;
	p.batch.v[0] = 1, p.batch.n = 1;
	p.Br.v[0] = 64, p.Br.n = 1;
	p.Bc.v[0] = 64, p.Bc.n = 1;
	p.dtypes[0] = ATTN_FP32, p.ndtypes = 1;
	p.causal[0] = false, p.ncausal = 1;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		int r = 0;

		switch (opt) {
		case OPT_HELP:
			usage_sweep(stdout);
			return EXIT_OK;
		case OPT_OUT:
			out = optarg;
			break;
		case OPT_KERNEL: {
			char *copy = xstrdup(optarg), *save = NULL;

			p.nkernels = 0;
			for (char *k = strtok_r(copy, ",", &save); k;
			     k = strtok_r(NULL, ",", &save)) {
				if (p.nkernels == ATTN_KERNEL_COUNT ||
				    !attn_kernel_parse(k, &p.kernels[p.nkernels])) {
					int e = usage_error("sweep",
							    "--kernel: unknown kernel '%s'", k);

					free(copy);
					return e;
				}
				p.nkernels++;
			}
			free(copy);
			break;
		}
		case OPT_DTYPE: {
			char *copy = xstrdup(optarg), *save = NULL;

			p.ndtypes = 0;
			for (char *k = strtok_r(copy, ",", &save); k;
			     k = strtok_r(NULL, ",", &save)) {
				if (p.ndtypes == 3 || !attn_dtype_parse(k, &p.dtypes[p.ndtypes])) {
					int e = usage_error("sweep", "--dtype: unknown dtype '%s'",
							    k);

					free(copy);
					return e;
				}
				p.ndtypes++;
			}
			free(copy);
			break;
		}
		case OPT_CAUSAL:
			if (!optarg) {
				p.causal[0] = true;
				p.ncausal = 1;
				break;
			}
			p.ncausal = 0;
			{
				char *copy = xstrdup(optarg), *save = NULL;

				for (char *v = strtok_r(copy, ",", &save); v;
				     v = strtok_r(NULL, ",", &save)) {
					bool yes = strcmp(v, "yes") == 0 || strcmp(v, "1") == 0;

					if ((!yes && strcmp(v, "no") != 0 && strcmp(v, "0") != 0) ||
					    p.ncausal == 2) {
						int e = usage_error(
							"sweep", "--causal: '%s' is not no or yes",
							v);

						free(copy);
						return e;
					}
					p.causal[p.ncausal++] = yes;
				}
				free(copy);
			}
			break;
		case OPT_N:
			r = parse_list("--N", optarg, &p.N, false);
			break;
		case OPT_D:
			r = parse_list("--d", optarg, &p.d, false);
			break;
		case OPT_HEADS:
			r = parse_list("--heads", optarg, &p.heads, false);
			break;
		case OPT_KV_HEADS:
			r = parse_list("--kv-heads", optarg, &p.kv_heads, false);
			p.kv_given = true;
			break;
		case OPT_BATCH:
			r = parse_list("--batch", optarg, &p.batch, false);
			break;
		case OPT_BR:
			r = parse_list("--Br", optarg, &p.Br, false);
			break;
		case OPT_BC:
			r = parse_list("--Bc", optarg, &p.Bc, false);
			break;
		case OPT_SEPARATE:
			p.softmax_separate = true;
			break;
		case OPT_CACHE:
			if (ncache_args == MAX_CACHES)
				return usage_error("sweep", "more than %d --cache", MAX_CACHES);
			caches[ncache_args++] = optarg;
			break;
		case OPT_CACHE_SWEEP:
			cache_sweep = optarg;
			break;
		case OPT_NO_FLUSH:
			p.flush = false;
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, &p.seed))
				return usage_error("sweep", "--seed: '%s' is not a number", optarg);
			break;
		case OPT_JSON:
			return usage_error("sweep", "sweep writes DIR/results.json; use --out DIR");
		case OPT_JOBS:
			if (!parse_u64(optarg, &jobs) || jobs == 0 || jobs > 256)
				return usage_error("sweep", "--jobs: '%s' is not 1 to 256", optarg);
			break;
		case OPT_RESUME:
			resume = true;
			break;
		case OPT_SHARD:
			if (sscanf(optarg, "%llu/%llu", (unsigned long long *)&shard_i,
				   (unsigned long long *)&shard_n) != 2 ||
			    shard_n == 0 || shard_i >= shard_n)
				return usage_error("sweep",
						   "--shard: '%s' is not i/n with 0 <= i < n",
						   optarg);
			break;
		case OPT_FORMULA_ONLY:
			p.simulate = false;
			break;
		default:
			return option_error("sweep", opt, argv);
		}
		if (r)
			return r;
	}
	if (optind != argc)
		return usage_error("sweep", "unexpected argument '%s'", argv[optind]);
	if (!out)
		return usage_error("sweep", "sweep needs --out DIR");
	if (p.nkernels == 0)
		return usage_error("sweep", "sweep needs --kernel LIST");
	if (ncache_args == 0)
		caches[ncache_args++] = "lab";
	for (unsigned i = 0; i < ncache_args; i++) {
		struct spec s;
		char buf[1024];

		if (cache_sweep) {
			if ((rc = expand_cache_sweep(&p, caches[i], cache_sweep)))
				return rc;
			continue;
		}
		if (spec_parse(caches[i], &s, err, sizeof(err)))
			return usage_error("sweep", "--cache: %s", err);
		/* A preset keeps its name (reports show it); a spec its canonical form. */
		p.caches[p.ncaches++] =
			xstrdup(s.preset[0] ? s.preset : spec_format(&s, buf, sizeof(buf)));
	}
	items = plan_items(&p, &nitems);
	/* Every configuration is checked up front, so a bad one is a usage error before any run
	 * starts, not a failed row. */
	for (size_t i = 0; i < nitems; i++) {
		int crc = attn_config_check(&items[i].cfg, err, sizeof(err));

		if (crc && (p.simulate || crc != -ENOMEM)) {
			rc = usage_error("sweep", "%s", err);
			goto out;
		}
	}
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "memsim: cannot create %s: %s\n", out, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/results.json", out);
	if (!resume && access(path, F_OK) == 0) {
		rc = usage_error("sweep",
				 "%s exists: pass --resume to continue it, or another --out", path);
		goto out;
	}
	ndone = load_results(out, &done_keys, err, sizeof(err));
	if (ndone < 0) {
		fprintf(stderr, "memsim: %s\n", err);
		goto out;
	}
	todo = xzalloc((nitems + 1) * sizeof(*todo));
	for (size_t i = 0; i < nitems; i++) {
		bool seen = false;

		if (i % shard_n != shard_i)
			continue;
		for (long k = 0; k < ndone && !seen; k++)
			seen = strcmp(done_keys[k], items[i].key) == 0;
		if (!seen)
			todo[todo_n++] = (long)i;
	}
	rj = fopen(path, "a");
	snprintf(path, sizeof(path), "%s/results.csv", out);
	csv = fopen(path, "a");
	if (!rj || !csv) {
		fprintf(stderr, "memsim: cannot write %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (ndone == 0)
		fputs(csv_header, csv);
	if (write_manifest(out, &p, nitems, ndone, 0, 0, 0, 0, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		goto out;
	}
	fprintf(stderr,
		"memsim: sweep: %zu configurations, %ld already done, %zu to run on %llu "
		"workers -> %s\n",
		nitems, ndone, todo_n, (unsigned long long)jobs, out);
	if (jobs > todo_n)
		jobs = todo_n ? todo_n : 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	w = xzalloc(jobs * sizeof(*w));
	for (uint64_t j = 0; j < jobs && todo_n; j++) {
		int tp[2], rp[2];

		if (pipe(tp) || pipe(rp)) {
			fprintf(stderr, "memsim: pipe: %s\n", strerror(errno));
			goto out;
		}
		fflush(NULL);
		w[j].pid = fork();
		if (w[j].pid == 0) {
			close(tp[1]);
			close(rp[0]);
			for (uint64_t k = 0; k < j; k++) {
				close(w[k].to);
				close(w[k].from);
			}
			worker_main(tp[0], rp[1], &p, items);
		}
		close(tp[0]);
		close(rp[1]);
		w[j].to = tp[1];
		w[j].from = rp[0];
		w[j].task = -1;
		if (next < todo_n)
			send_task(&w[j], todo[next++]);
	}
	while (finished < (long)todo_n && !interrupted) {
		struct pollfd fds[256];
		int nf = 0, pr;

		for (uint64_t j = 0; j < jobs; j++)
			if (w[j].task >= 0)
				fds[nf++] = (struct pollfd){ w[j].from, POLLIN, 0 };
		if (nf == 0)
			break;
		pr = poll(fds, (nfds_t)nf, 1000);
		if (pr < 0 && errno == EINTR)
			continue;
		for (uint64_t j = 0; j < jobs; j++) {
			struct worker *wk = &w[j];
			char *nl;
			bool ready = false;

			for (int k = 0; k < nf; k++)
				if (fds[k].fd == wk->from && (fds[k].revents & (POLLIN | POLLHUP)))
					ready = true;
			if (!ready || wk->task < 0)
				continue;
			if (wk->len + 65536 > wk->cap) {
				wk->cap = wk->cap ? wk->cap * 2 : 1 << 20;
				wk->buf = xrealloc(wk->buf, wk->cap);
			}
			{
				ssize_t got =
					read(wk->from, wk->buf + wk->len, wk->cap - wk->len - 1);

				if (got <= 0) {
					/* The worker died mid-run (killed, out of memory). */
					fprintf(stderr,
						"\nmemsim: sweep: a worker died running %s\n",
						items[wk->task].key);
					wk->task = -1;
					finished++;
					errors++;
					continue;
				}
				wk->len += (size_t)got;
				wk->buf[wk->len] = '\0';
			}
			while ((nl = strchr(wk->buf, '\n'))) {
				cJSON *r;

				*nl = '\0';
				r = cJSON_Parse(wk->buf);
				fprintf(rj, "%s\n", wk->buf);
				fflush(rj);
				if (r) {
					const cJSON *c, *e;

					csv_row(csv, r);
					fflush(csv);
					errors += cJSON_GetObjectItem(r, "error") != NULL;
					c = cJSON_GetObjectItem(r, "compare");
					cJSON_ArrayForEach (e, c) {
						if (strcmp(str(e, "formula", NULL), "exact") == 0)
							exact_within += flag(e, "within", NULL);
						else if (flag(r, "regime",
							      "within_lab_assumptions")) {
							lab_in++;
							lab_in_ok += flag(e, "within", NULL);
						}
					}
					cJSON_Delete(r);
				}
				memmove(wk->buf, nl + 1, wk->len - (size_t)(nl + 1 - wk->buf) + 1);
				wk->len -= (size_t)(nl + 1 - wk->buf);
				finished++;
				wk->task = -1;
				if (next < todo_n && !interrupted)
					send_task(wk, todo[next++]);
			}
		}
		if (finished != shown) {
			double el = now_seconds() - t0;
			double eta = finished ? el / (double)finished *
							(double)(todo_n - (size_t)finished)
					      : 0;

			/* A terminal gets one line rewritten in place; a log a line per tenth. */
			if (tty || finished * 10 / (long)todo_n != shown * 10 / (long)todo_n ||
			    finished == (long)todo_n)
				fprintf(stderr,
					"%smemsim: sweep: %ld/%zu done, %ld failed, %.0f s elapsed, "
					"about %.0f s left%s",
					tty ? "\r" : "", finished, todo_n, errors, el, eta,
					tty ? "   " : "\n");
			shown = finished;
		}
	}
	if (tty)
		fprintf(stderr, "\n");
	rc = EXIT_OK;
	if (interrupted) {
		fprintf(stderr,
			"memsim: sweep interrupted: %ld of %zu runs kept in %s; --resume "
			"continues\n",
			finished, todo_n, out);
		rc = EXIT_RUNTIME;
	}
out:
	if (w) {
		for (uint64_t j = 0; j < jobs; j++) {
			if (w[j].pid <= 0)
				continue;
			close(w[j].to);
			if (interrupted)
				kill(w[j].pid, SIGTERM);
			close(w[j].from);
			waitpid(w[j].pid, NULL, 0);
			free(w[j].buf);
		}
		free(w);
	}
	if (rj)
		fclose(rj);
	if (csv)
		fclose(csv);
	if (rc == EXIT_OK || interrupted) {
		if (write_manifest(out, &p, nitems, ndone + finished, errors, exact_within, lab_in,
				   lab_in_ok, argc, argv, err, sizeof(err)))
			fprintf(stderr, "memsim: %s\n", err);
		if (rc == EXIT_OK && errors)
			rc = EXIT_RUNTIME;
	}
	for (long k = 0; k < ndone; k++)
		free(done_keys[k]);
	free(done_keys);
	for (unsigned i = 0; i < p.ncaches; i++)
		free(p.caches[i]);
	free(todo);
	free(items);
	return rc;
}

/* ---- merge ---- */

void
usage_merge(FILE *f)
{
	fprintf(f,
		"Usage: memsim merge --out DIR SHARD_DIR...\n"
		"\n"
		"Joins the results.json of several sweep shards into DIR/results.json (one object\n"
		"per line, each configuration once), writes DIR/results.csv and a manifest.json\n"
		"naming the shards.\n");
}

int
cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const char *out = NULL;
	char path[4096], err[512];
	FILE *rj, *csv;
	char **keys = NULL;
	size_t nkeys = 0, cap = 0;
	long runs = 0, dups = 0;
	int opt;
	cJSON *m, *shards;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage_merge(stdout);
			return EXIT_OK;
		}
		if (opt == 'o')
			out = optarg;
		else
			return option_error("merge", opt, argv);
	}
	if (!out)
		return usage_error("merge", "merge needs --out DIR");
	if (optind == argc)
		return usage_error("merge", "merge needs at least one shard directory");
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "memsim: cannot create %s: %s\n", out, strerror(errno));
		return EXIT_RUNTIME;
	}
	snprintf(path, sizeof(path), "%s/results.json", out);
	rj = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/results.csv", out);
	csv = fopen(path, "w");
	if (!rj || !csv) {
		fprintf(stderr, "memsim: cannot write in %s: %s\n", out, strerror(errno));
		if (rj)
			fclose(rj);
		if (csv)
			fclose(csv);
		return EXIT_RUNTIME;
	}
	fputs(csv_header, csv);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "experiment", "memsim merge");
	report_add_header(m, argc, argv);
	shards = cJSON_AddArrayToObject(m, "shards");
	for (int i = optind; i < argc; i++) {
		FILE *f;
		char *line = NULL;
		size_t lcap = 0;
		ssize_t len;
		long lineno = 0;

		snprintf(path, sizeof(path), "%s/results.json", argv[i]);
		f = fopen(path, "r");
		if (!f) {
			fprintf(stderr, "memsim: cannot read %s: %s\n", path, strerror(errno));
			fclose(rj);
			fclose(csv);
			cJSON_Delete(m);
			return EXIT_RUNTIME;
		}
		cJSON_AddItemToArray(shards, cJSON_CreateString(argv[i]));
		while ((len = getline(&line, &lcap, f)) > 0) {
			cJSON *r;
			const char *key;
			bool seen = false;

			lineno++;
			if (line[len - 1] != '\n') {
				fprintf(stderr, "memsim: %s:%ld: torn last line left out\n", path,
					lineno);
				break;
			}
			r = cJSON_Parse(line);
			if (!r) {
				fprintf(stderr, "memsim: %s:%ld: not JSON; left out\n", path,
					lineno);
				continue;
			}
			key = str(r, "key", NULL);
			for (size_t k = 0; k < nkeys && !seen; k++)
				seen = strcmp(keys[k], key) == 0;
			if (seen) {
				dups++;
			} else {
				if (nkeys == cap) {
					cap = cap ? cap * 2 : 64;
					keys = xrealloc(keys, cap * sizeof(*keys));
				}
				keys[nkeys++] = xstrdup(key);
				fputs(line, rj);
				csv_row(csv, r);
				runs++;
			}
			cJSON_Delete(r);
		}
		free(line);
		fclose(f);
	}
	fclose(rj);
	fclose(csv);
	cJSON_AddNumberToObject(m, "runs", (double)runs);
	cJSON_AddNumberToObject(m, "duplicates_dropped", (double)dups);
	add_host(m);
	snprintf(path, sizeof(path), "%s/manifest.json", out);
	if (report_write_json(path, m, err, sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		cJSON_Delete(m);
		return EXIT_RUNTIME;
	}
	cJSON_Delete(m);
	for (size_t k = 0; k < nkeys; k++)
		free(keys[k]);
	free(keys);
	printf("merged %ld runs (%ld duplicates dropped) into %s\n", runs, dups, out);
	return EXIT_OK;
}
