/*
 * One-pass sweeps through the real binary (issue 18 items 1 and 11).
 *
 * Every row of a one-pass `memsim sweep --cache-sweep` against `memsim run` of the cache its
 * key names, whole report for report: sizes whose swept level has one set (first, last, the
 * base --cache's own size), the stack pass and fan-out, L1 and L2 swept, trace-only. A one-set
 * size keeps the ways the --cache gave, and its label reads back as the cache that ran.
 *
 * Under an address-space limit (RLIMIT_AS in the child that runs memsim): a pass whose models
 * do not fit runs in passes that do, row for row as --separate-runs; a pass that cannot be
 * allocated after all (MEMSIM_MEMORY promising more than the limit) runs as halves; a size
 * whose model cannot be allocated at all is that row's error; the rest are written.
 */

#include "config.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-onepass"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

/* Room for memsim, its arrays' mapping (attn_data_create() reserves 1 GiB more while it maps)
 * and one model of a few hundred MiB, not for all sizes of a sweep at once. */
#define AS_LIMIT 1400000000ull

/* Runs "ENV memsim ARGS" in tmpdir through the shell, under an address-space limit of
 * as_limit bytes (0: none); captures stdout and stderr. */
static struct result
memsim_in(unsigned long long as_limit, const char *env, const char *fmt, ...)
{
	char args[2048], line[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s %s %s", env ? env : "", MEMSIM_BIN, args);
	return run_line(as_limit, line);
}

/* The rows of tmpdir/dir/results.json as one JSON array (caller frees), in file order. */
static cJSON *
read_rows(const char *dir)
{
	char path[700], *text, *save = NULL;
	cJSON *rows = cJSON_CreateArray();

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp(path, NULL);
	assert_non_null(text);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *r = cJSON_Parse(line);

		assert_non_null(r);
		cJSON_AddItemToArray(rows, r);
	}
	free(text);
	return rows;
}

/* A copy of report r without what differs between two runs of one configuration, or between
 * a sweep's row and `memsim run`: times, memory, the command, the row's own fields. */
static cJSON *
stripped(const cJSON *r)
{
	static const char *const volatile_keys[] = { "traced_seconds", "peak_rss_bytes", "command",
						     "onepass",        "index",          "key",
						     "memsim_version", "model_revision" };
	cJSON *c = cJSON_Duplicate(r, true);

	for (size_t i = 0; i < sizeof(volatile_keys) / sizeof(volatile_keys[0]); i++)
		cJSON_DeleteItemFromObject(c, volatile_keys[i]);
	return c;
}

/* The cache a row's key names ("... cache=SPEC flush=..."), in buf. */
static const char *
key_cache(const cJSON *row, char *buf, size_t len)
{
	const char *key = cJSON_GetObjectItem(row, "key")->valuestring;
	const char *from = strstr(key, " cache="), *to;

	assert_non_null(from);
	from += strlen(" cache=");
	to = strstr(from, " flush=");
	assert_non_null(to);
	assert_true((size_t)(to - from) < len);
	memcpy(buf, from, (size_t)(to - from));
	buf[to - from] = '\0';
	return buf;
}

/* The part of cache that spells the level a --cache-sweep names ("L2=1K:4:64:lru:..."), in
 * buf. */
static const char *
level_spec(const char *cache, const char *sweep, char *buf, size_t len)
{
	char name[8];
	const char *at;
	size_t n = strcspn(sweep, "=");

	assert_true(n + 2 <= sizeof(name));
	memcpy(name, sweep, n);
	name[n] = '=';
	name[n + 1] = '\0';
	at = strstr(cache, name);
	assert_non_null(at);
	n = strcspn(at, ",");
	assert_true(n < len);
	memcpy(buf, at, n);
	buf[n] = '\0';
	return buf;
}

/* Whether two reports are equal but for stripped()'s fields; the first top-level field that
 * differs in *which. */
static bool
same_report(const cJSON *a, const cJSON *b, const char **which)
{
	cJSON *x = stripped(a), *y = stripped(b);
	bool same = cJSON_Compare(x, y, true);

	*which = "";
	for (const cJSON *f = x->child; f && !same && !(*which)[0]; f = f->next)
		if (!cJSON_Compare(f, cJSON_GetObjectItem(y, f->string), true))
			*which = f->string;
	cJSON_Delete(x);
	cJSON_Delete(y);
	return same;
}

static const cJSON *
onepass_of(const cJSON *row)
{
	const cJSON *o = cJSON_GetObjectItem(row, "onepass");

	assert_true(cJSON_IsObject(o));
	return o;
}

static const char *
onepass_str(const cJSON *row, const char *name)
{
	const cJSON *v = cJSON_GetObjectItem(onepass_of(row), name);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static const struct differential {
	const char *run;    /* kernel and sizes, for sweep and run alike */
	const char *cache;  /* the sweep's --cache */
	const char *sweep;  /* its --cache-sweep */
	const char *mode;   /* "" or "--trace-only" */
	const char *method; /* what the rows' pass must be, or NULL: not checked */
	const char *ways;   /* each key's swept level must say this (":4:64:"), or NULL */
} differentials[] = {
	/* The case: the one-set 256B size first made every size fully associative. */
	{ "--kernel naive --N 256", "L1=4K:8:64,L2=64K:4:64", "L2=256B:64K:x4", "", "stack",
	  ":4:64:" },
	/* The one-set size last, and in the middle. */
	{ "--kernel naive --N 128 --d 32", "L1=4K:8:64,L2=64K:4:64", "L2=64K,16K,1K,256B", "",
	  "stack", ":4:64:" },
	{ "--kernel naive --N 128 --d 32", "L1=4K:8:64,L2=64K:4:64", "L2=1K,256B,16K", "", "stack",
	  ":4:64:" },
	/* A base --cache whose own size has one set: 4 ways at every size. */
	{ "--kernel naive --N 128 --d 32", "L1=4K:8:64,L2=256B:4:64", "L2=256B:64K:x4", "", "stack",
	  ":4:64:" },
	/* Fan-out (a FIFO L2), and a fully associative L2 (one set at every size). */
	{ "--kernel naive --N 128 --d 32", "L1=4K:8:64,L2=64K:4:64:fifo", "L2=256B:64K:x4", "",
	  "fanout", ":4:64:" },
	{ "--kernel flash2 --N 128 --d 32", "L1=4K:8:64,L2=64K:full:64", "L2=256B:64K:x4", "",
	  "stack", ":full:64:" },
	/* The L1 case, both orders: 512B has one set of 2 ways. */
	{ "--kernel naive --N 256", "L1=8K:2:256:wv", "L1=512B,1K", "", NULL, ":2:256:" },
	{ "--kernel naive --N 256", "L1=8K:2:256:wv", "L1=1K,512B", "", NULL, ":2:256:" },
	/* L1 swept at 4 ways, alone (stack) and above an L2 (fan-out), one-set first and last:
	 * the tracing layer walks a one-set L1 otherwise. */
	{ "--kernel naive --N 128 --d 32", "L1=4K:4:64", "L1=256B,1K,4K", "", NULL, ":4:64:" },
	{ "--kernel naive --N 128 --d 32", "L1=4K:4:64", "L1=4K,1K,256B", "", NULL, ":4:64:" },
	{ "--kernel flash2 --N 128 --d 32", "L1=256B:4:64,L2=64K:8:64", "L1=256B,1K,4K", "", NULL,
	  ":4:64:" },
	{ "--kernel naive --N 128 --d 32", "L1=4K:full:64,L2=64K:8:64", "L1=256B,1K,4K", "",
	  "fanout", ":full:64:" },
	/* Trace-only, a one-set 8-way L2 among others. */
	{ "--kernel flash2 --N 128 --d 32", "L1=4K:4:64,L2=64K:8:64", "L2=2K,512B,8K",
	  "--trace-only", "stack", ":8:64:" },
};

/* Each row of each one-pass sweep is the report `memsim run` gives for the cache its key
 * names; the swept level keeps the ways the --cache gave at every size. */
static void
test_onepass_rows_as_run(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(differentials) / sizeof(differentials[0]); i++) {
		const struct differential *d = &differentials[i];
		char dir[32], cache[1024], level[256];
		const char *which;
		struct result r;
		cJSON *rows;
		int n = 0;

		snprintf(dir, sizeof(dir), "diff%zu", i);
		r = memsim_in(0, NULL, "sweep --out %s %s --cache %s --cache-sweep %s %s --jobs 1",
			      dir, d->run, d->cache, d->sweep, d->mode);
		if (r.rc != 0)
			fail_msg("%s %s: exit %d: %s", d->cache, d->sweep, r.rc, r.err);
		result_free(&r);
		rows = read_rows(dir);
		for (cJSON *row = rows->child; row; row = row->next, n++) {
			cJSON *alone;

			key_cache(row, cache, sizeof(cache));
			if (d->ways &&
			    !strstr(level_spec(cache, d->sweep, level, sizeof(level)), d->ways))
				fail_msg("%s %s: key %s lost the ways %s", d->cache, d->sweep,
					 cache, d->ways);
			if (d->method && strcmp(onepass_str(row, "method"), d->method) != 0)
				fail_msg("%s %s: %s ran by %s, not %s", d->cache, d->sweep, cache,
					 onepass_str(row, "method"), d->method);
			r = memsim_in(0, NULL, "run %s --cache %s %s --json alone.json", d->run,
				      cache, d->mode);
			assert_int_equal(r.rc, 0);
			result_free(&r);
			alone = read_json("alone.json");
			assert_non_null(alone);
			if (!same_report(row, alone, &which))
				fail_msg(
					"%s --cache-sweep %s: the row of %s differs from memsim run "
					"in %s (DRAM %.0f vs %.0f bytes)",
					d->cache, d->sweep, cache, which,
					cJSON_GetObjectItem(cJSON_GetObjectItem(row, "dram"),
							    "total_bytes")
						->valuedouble,
					cJSON_GetObjectItem(cJSON_GetObjectItem(alone, "dram"),
							    "total_bytes")
						->valuedouble);
			cJSON_Delete(alone);
		}
		assert_int_equal(n, cJSON_GetArraySize(rows));
		assert_true(n >= 2);
		cJSON_Delete(rows);
	}
}

/* True (after saying so) in a sanitized run, where a case that sets an address-space limit
 * cannot run: ASan's shadow memory needs far more. (cmocka's skip() would count as a failure.) */
static bool
sanitized(void)
{
	if (!test_sanitized())
		return false;
	print_message("# not run: an address-space limit in a sanitized build\n");
	return true;
}

/* The rows of sweep dir, and of `dir-sep` run with --separate-runs, under the same limit:
 * report for report equal, none an error, each one's onepass says it did not run in one pass
 * of all sizes and why (why_has). */
static void
check_apart(const char *dir, const char *args, const char *env, const char *why_has, int n)
{
	struct result r;
	cJSON *rows, *sep, *m;
	const cJSON *entry;
	const char *which;
	char name[64];
	int k = 0;

	r = memsim_in(AS_LIMIT, env, "sweep --out %s %s --jobs 1", dir, args);
	if (r.rc != 0)
		fail_msg("%s: exit %d: %s", args, r.rc, r.err);
	result_free(&r);
	snprintf(name, sizeof(name), "%s-sep", dir);
	r = memsim_in(AS_LIMIT, NULL, "sweep --out %s %s --jobs 1 --separate-runs", name, args);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	rows = read_rows(dir);
	sep = read_rows(name);
	assert_int_equal(cJSON_GetArraySize(rows), n);
	assert_int_equal(cJSON_GetArraySize(sep), n);
	for (const cJSON *a = rows->child, *b = sep->child; a && b; a = a->next, b = b->next, k++) {
		const cJSON *sizes = cJSON_GetObjectItem(onepass_of(a), "sizes");

		assert_null(cJSON_GetObjectItem(a, "error"));
		assert_string_equal(cJSON_GetObjectItem(a, "key")->valuestring,
				    cJSON_GetObjectItem(b, "key")->valuestring);
		if (!same_report(a, b, &which))
			fail_msg("row %d differs from --separate-runs in %s", k, which);
		assert_true(cJSON_IsNumber(sizes) && sizes->valueint < n);
		if (!strstr(onepass_str(a, "why"), why_has))
			fail_msg("row %d: onepass.why '%s' does not say '%s'", k,
				 onepass_str(a, "why"), why_has);
	}
	/* The manifest says how many rows ran apart, and why. */
	snprintf(name, sizeof(name), "%s/manifest.json", dir);
	m = read_json(name);
	assert_non_null(m);
	entry = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "config"), "onepass"),
				   0);
	assert_int_equal(cJSON_GetObjectItem(entry, "rows_apart")->valueint, n);
	assert_non_null(strstr(cJSON_GetObjectItem(entry, "apart_why")->valuestring, why_has));
	cJSON_Delete(m);
	cJSON_Delete(sep);
	cJSON_Delete(rows);
}

/* Eight sizes of 128 MiB to 1 GiB of a fully associative FIFO L2 (fan-out: a model each, 1.6
 * GiB in all) and four of 384 MiB to 3 GiB of an LRU one (the stack pass: its stack is as
 * large as the largest size's lines, 1.5 GiB) under a 1.4 GB address-space limit: passes
 * that fit, every row written, as --separate-runs writes them. Before: the worker aborted, 0
 * rows. */
static void
test_onepass_memory_split(void **state)
{
	(void)state;
	if (sanitized())
		return;
	check_apart("fifo",
		    "--kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=1G:full:64:fifo "
		    "--cache-sweep L2=128M:1G:+128M",
		    NULL, "left under RLIMIT_AS", 8);
	check_apart("lru",
		    "--kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=1G:full:64 "
		    "--cache-sweep L2=384M:3G:x2",
		    NULL, "left under RLIMIT_AS", 4);
}

/* MEMSIM_MEMORY promises more than the limit allows, so the pass is planned whole and cannot
 * be allocated: it runs as halves that can, every row written. */
static void
test_onepass_allocation_fails(void **state)
{
	(void)state;
	if (sanitized())
		return;
	check_apart("promise",
		    "--kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=1G:full:64:fifo "
		    "--cache-sweep L2=128M:1G:+128M",
		    "MEMSIM_MEMORY=64G", "cannot allocate the one-pass model of 8 sizes", 8);
}

/* MEMSIM_MEMORY is the machine's memory, shared by the sweep's workers: eight FIFO sizes of
 * 128 MiB to 1 GiB (1.6 GiB of models) fit whole in 2500 MiB, but not in the 1250 MiB each of
 * two workers gets, so with --jobs 2 each configuration runs in passes that fit (its rows say
 * the budget is shared) and with --jobs 1 in one pass. Before, each of two workers planned
 * for the whole 2500 MiB. */
static void
test_onepass_memory_shared(void **state)
{
	static const char *args = "--kernel naive --N 64,128 --d 16 "
				  "--cache L1=4K:4:64,L2=1G:full:64:fifo "
				  "--cache-sweep L2=128M:1G:+128M";
	struct result r;
	cJSON *rows;

	(void)state;
	if (sanitized())
		return;
	for (unsigned jobs = 1; jobs <= 2; jobs++) {
		char dir[32];
		int k = 0;

		snprintf(dir, sizeof(dir), "shared%u", jobs);
		r = memsim_in(0, "MEMSIM_MEMORY=2500M", "sweep --out %s %s --jobs %u", dir, args,
			      jobs);
		if (r.rc != 0)
			fail_msg("--jobs %u: exit %d: %s", jobs, r.rc, r.err);
		result_free(&r);
		rows = read_rows(dir);
		assert_int_equal(cJSON_GetArraySize(rows), 16);
		for (const cJSON *a = rows->child; a; a = a->next, k++) {
			const cJSON *sizes = cJSON_GetObjectItem(onepass_of(a), "sizes");
			bool split = cJSON_IsNumber(sizes) && sizes->valueint < 8;

			assert_null(cJSON_GetObjectItem(a, "error"));
			if (jobs == 2 && (!split || !strstr(onepass_str(a, "why"),
							    "MEMSIM_MEMORY shared by 2 workers")))
				fail_msg("--jobs 2, row %d: one pass of %d sizes (why '%s')", k,
					 sizes ? sizes->valueint : -1, onepass_str(a, "why"));
			if (jobs == 1 && split)
				fail_msg("--jobs 1, row %d: split (why '%s')", k,
					 onepass_str(a, "why"));
		}
		cJSON_Delete(rows);
	}
}

/* A size whose model alone cannot be allocated (8 GiB of 64-byte lines: 3 GiB of tags and
 * index) is its row's error, exit 1; the other size's row is written; run, replay and
 * gpucheck --no-gpu say so in one line. A bad MEMSIM_MEMORY is a usage error. */
static void
test_onepass_model_too_large(void **state)
{
	struct result r;
	cJSON *rows;
	const cJSON *small, *large;

	(void)state;
	if (sanitized())
		return;
	r = memsim_in(
		AS_LIMIT, NULL,
		"sweep --out big --kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=1G:full:64 "
		"--cache-sweep L2=128M,8G --jobs 1");
	assert_int_equal(r.rc, 1);
	result_free(&r);
	rows = read_rows("big");
	assert_int_equal(cJSON_GetArraySize(rows), 2);
	small = cJSON_GetArrayItem(rows, 0);
	large = cJSON_GetArrayItem(rows, 1);
	assert_null(cJSON_GetObjectItem(small, "error"));
	assert_non_null(cJSON_GetObjectItem(small, "dram"));
	assert_non_null(strstr(cJSON_GetObjectItem(large, "error")->valuestring,
			       "cannot allocate the cache model (3.0 GiB)"));
	assert_string_equal(onepass_str(large, "method"), "separate");
	cJSON_Delete(rows);

	/* The same model for run and replay: one line, exit 1, no abort. */
	r = memsim_in(AS_LIMIT, NULL,
		      "run --kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=8G:full:64");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, "memsim: cannot allocate the cache model (3.0 GiB)\n");
	result_free(&r);
	r = memsim_in(AS_LIMIT, NULL,
		      "replay --format din --cache L1=8G:full:64 " TEST_DATA_DIR
		      "/dinero/t4_mixed.din");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "cannot allocate the cache model (3072.0 MiB)"));
	result_free(&r);
	/* gpucheck's model too (it said "invalid cache configuration"). */
	r = memsim_in(AS_LIMIT, NULL,
		      "gpucheck --kernel flash2 --N 64 --no-gpu --cache L1=8G:full:64");
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err,
			    "memsim: gpucheck: cannot allocate the cache model (3072.0 MiB)\n");
	result_free(&r);

	r = memsim_in(0, "MEMSIM_MEMORY=lots",
		      "sweep --out bad --kernel naive --N 64 --cache L1=4K:4:64,L2=64K:8:64 "
		      "--cache-sweep L2=16K,32K");
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "MEMSIM_MEMORY: 'lots' is not a size"));
	result_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_onepass_rows_as_run),
		cmocka_unit_test(test_onepass_memory_split),
		cmocka_unit_test(test_onepass_allocation_fails),
		cmocka_unit_test(test_onepass_memory_shared),
		cmocka_unit_test(test_onepass_model_too_large),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
