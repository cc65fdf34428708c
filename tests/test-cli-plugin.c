/*
 * Kernel plugins (run/plugin.c) through the memsim binary: tests/plugin-copy.c's counters
 * against a hand count and its formula, and the one-line refusals of what is not a plugin;
 * `run --kernel ./x.so --record FILE` replayed against `run` under the same and another cache;
 * tests/plugin-bad.c's misbehaviour (names, messages, exit()) refused or reported in one line.
 */

#define TMPDIR_NAME "plugin"

#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

/* tmpdir.h defines what cli-run.h uses. */
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define COPY PLUGIN_DIR "/plugin-copy.so"
#define BAD PLUGIN_DIR "/plugin-bad.so"

/* How a worker that crashed is reported: ASan catches the SIGSEGV and exits 1 instead. */
static const char *
crash_text(void)
{
	return getenv("MEMSIM_SANITIZED") ? "the worker running it exited with status 1"
					  : "the worker running it was killed by signal 11";
}

static double
num(const cJSON *o, const char *a, const char *b, const char *c)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	if (c)
		x = cJSON_GetObjectItemCaseSensitive(x, c);
	assert_true(cJSON_IsNumber(x));
	return x->valuedouble;
}

/* A 64 x 16 fp32 copy (4096 bytes each of A and B, 64 lines), twice: on a cache holding both
 * everything after the first pass hits; on one of 64 lines every access misses. */
static void
test_plugin_run_hand_count(void **state)
{
	static const struct {
		const char *cache;
		double a_read, b_read, b_write;
	} cases[] = {
		{ "L1=64K:full:64,tiles=scratch", 4096, 4096, 4096 },
		{ "L1=4K:full:64,tiles=scratch", 8192, 8192, 8192 },
	};
	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct result r =
			memsim("run --kernel " COPY " --N 64 --d 16 --Br 16 --param passes=2 "
			       "--cache %s --json out.json",
			       cases[i].cache);
		cJSON *o, *f;

		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "byte-equal"));
		result_free(&r);
		o = read_json("out.json");
		assert_non_null(o);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(
					    cJSON_GetObjectItemCaseSensitive(o, "config"), "kernel")
					    ->valuestring,
				    "copy");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(
					    cJSON_GetObjectItemCaseSensitive(o, "config"), "plugin")
					    ->valuestring,
				    COPY);
		assert_true(num(o, "arrays", "A", "read_bytes") == cases[i].a_read);
		assert_true(num(o, "arrays", "A", "write_bytes") == 0);
		assert_true(num(o, "arrays", "B", "read_bytes") == cases[i].b_read);
		assert_true(num(o, "arrays", "B", "write_bytes") == cases[i].b_write);
		assert_true(num(o, "dram", "total_bytes", NULL) ==
			    cases[i].a_read + cases[i].b_read + cases[i].b_write);
		assert_true(num(o, "flops", NULL, NULL) == 2048);
		f = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o, "formulas"), "exact");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "scope")->valuestring,
				    "exact");
		assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "byte_equal")));
		cJSON_Delete(o);
	}
}

/* Byte-equal over a grid on fully associative LRU caches; an estimate elsewhere. */
static void
test_plugin_formula_grid(void **state)
{
	static const char *caches[] = { "L1=2K:full:64,tiles=scratch",
					"L1=16K:full:64,tiles=scratch",
					"L1=1M:full:128,tiles=scratch" };
	static const unsigned Ns[] = { 8, 33, 100 }, passes[] = { 1, 3 };
	struct result r;

	(void)state;
	for (unsigned c = 0; c < 3; c++)
		for (unsigned n = 0; n < 3; n++)
			for (unsigned p = 0; p < 2; p++) {
				r = memsim("run --kernel " COPY " --N %u --d 16 --Br 7 --param "
					   "passes=%u --cache %s",
					   Ns[n], passes[p], caches[c]);
				assert_int_equal(r.rc, 0);
				if (!strstr(r.out, ": byte-equal"))
					fprintf(stderr, "%s", r.out);
				assert_non_null(strstr(r.out, ": byte-equal"));
				result_free(&r);
			}
	r = memsim("run --kernel " COPY " --N 64 --d 16 --cache L1=4K:4:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "estimate: the cache is not fully associative"));
	assert_null(strstr(r.out, "byte-equal"));
	result_free(&r);
}

static void
test_plugin_errors(void **state)
{
	struct result r;

	(void)state;
	assert_int_equal(sh("printf 'not a plugin\\n' > text.so"), 0);
	expect_error("run --kernel ./text.so", 2, "cannot load ./text.so");
	/* the plugin ABI has one length: N_kv is refused, never silently dropped */
	expect_error("run --kernel " COPY " --N 4 --N-kv 64", 2,
		     "--N-kv: a kernel plugin takes N_kv = N only");
	expect_error("sweep --out pk --kernel " COPY " --N-kv 64", 2,
		     "--N-kv: a kernel plugin takes N_kv = N only");
	expect_error("sweep --out pk --kernel " COPY " --N 64 --threads 2", 2,
		     "--threads is for built-in kernels");
	expect_error("run --kernel ./missing.so", 2, "cannot load ./missing.so");
	/* A name without '/' is the file in this directory, not one on the library path. */
	assert_int_equal(sh("cp " COPY " copy.so"), 0);
	r = memsim("run --kernel copy.so --N 64 --d 16 --cache L1=64K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "plugin copy (copy.so)"));
	result_free(&r);
	expect_error("run --kernel " PLUGIN_DIR "/plugin-noentry.so", 2,
		     "not a memsim plugin: no memsim_kernel_plugin_v1");
	expect_error("run --kernel " PLUGIN_DIR "/plugin-badabi.so", 2,
		     "built for plugin ABI 99, this memsim takes 1");
	expect_error("run --kernel " PLUGIN_DIR "/plugin-copy-native.so", 2,
		     "a native build (-DMEMSIM_NATIVE) where the traced one is needed");
	expect_error("run --kernel " COPY " --param window=3", 2,
		     "--param: copy takes no 'window' (it takes: passes, crash, fail, wrap, endless)");
	expect_error("run --kernel " COPY " --param passes=2 --param passes=3", 2,
		     "--param: 'passes' given twice");
	expect_error("run --kernel " COPY " --param passes", 2, "'passes' is not key=value");
	expect_error("run --kernel flash2 --param passes=2", 2, "--param is for plugins");
	expect_error("run --kernel " COPY " --dtype fp16", 2, "copy: copy takes fp32 only");
	expect_error("run --kernel " COPY " --N 1000000000000", 2, "copy: the arrays need");
	expect_error("formula --kernel " COPY, 2, "formula does not take plugins");
	expect_error("run --kernel " PLUGIN_DIR "/plugin-norun.so", 2, "it has no run() callback");
	expect_error("run --kernel " COPY " --N 64 --param fail=64", 1,
		     "copy: asked to fail at N=64");
	/* An access past the end of the address space: refused, on every cache, recording too. */
	for (unsigned i = 0; i < 4; i++) {
		static const char *const opts[] = { "--cache lab", "--cache none",
						    "--cache L1=32K:8:64", "--record w.mt" };
		char args[256];

		snprintf(args, sizeof(args), "run --kernel " COPY " --N 64 --param wrap=64 %s",
			 opts[i]);
		expect_error(args, 1,
			     "copy: memsim_load of 128 bytes at 0xffffffffffffffc0 wraps past "
			     "address 2^64 (not counted)");
	}
}

/* " --param KEY=VALUE" for each of a row's config.params into buf: its --param options. */
static const char *
row_params(const cJSON *cfg, char *buf, size_t len)
{
	const cJSON *p;

	buf[0] = '\0';
	cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive(cfg, "params"))
		snprintf(buf + strlen(buf), len - strlen(buf), " --param %s=%s", p->string,
			 p->valuestring);
	return buf;
}

/* Each row of DIR/results.json (n of them, one failed where crash_n) against `memsim run` of
 * its configuration: the same levels, DRAM, arrays and formula comparison. params NULL: the
 * row's own. */
static void
rows_equal_run(const char *dir, unsigned n, const char *params, unsigned crash_n)
{
	char path[700], *text, *line, *save = NULL, own[512];
	unsigned rows = 0, failed = 0;

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp(path, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(line), *cfg, *run;
		static const char *keys[] = { "levels", "dram", "arrays", "formulas" };
		struct result r;

		assert_non_null(row);
		rows++;
		cfg = cJSON_GetObjectItemCaseSensitive(row, "config");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cfg, "kernel")->valuestring,
				    "copy");
		if (cJSON_GetObjectItemCaseSensitive(row, "error")) {
			assert_non_null(
				strstr(cJSON_GetObjectItemCaseSensitive(row, "error")->valuestring,
				       crash_text()));
			assert_true(num(row, "config", "N", NULL) == crash_n);
			assert_string_equal(
				cJSON_GetObjectItemCaseSensitive(
					cJSON_GetObjectItemCaseSensitive(cfg, "params"), "crash")
					->valuestring,
				"32");
			failed++;
			cJSON_Delete(row);
			continue;
		}
		r = memsim("run --kernel " COPY " --N %.0f --d 16 --Br 8 %s --cache '%s' --json "
			   "run.json",
			   num(row, "config", "N", NULL),
			   params ? params : row_params(cfg, own, sizeof(own)),
			   cJSON_GetObjectItemCaseSensitive(cfg, "cache")->valuestring);
		assert_int_equal(r.rc, 0);
		result_free(&r);
		run = read_json("run.json");
		assert_non_null(run);
		for (unsigned k = 0; k < 4; k++)
			assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(row, keys[k]),
						  cJSON_GetObjectItemCaseSensitive(run, keys[k]),
						  true));
		cJSON_Delete(run);
		cJSON_Delete(row);
	}
	free(text);
	assert_int_equal(rows, n);
	assert_int_equal(failed, crash_n ? 1 : 0);
}

/* A plugin that dies in one configuration fails that row alone. */
static void
test_plugin_sweep_crash(void **state)
{
	struct result r;

	(void)state;
	r = memsim("sweep --out crash --jobs 2 --kernel " COPY " --N 16,32,64 --d 16 --Br 8 "
		   "--param crash=32 --param passes=2 --cache L1=1K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, crash_text()));
	result_free(&r);
	rows_equal_run("crash", 3, "--param crash=32 --param passes=2", 32);
}

/* --cache-sweep's one pass, --shard and --resume give the rows `memsim run` gives. */
static void
test_plugin_sweep_rows_as_run(void **state)
{
	struct result r;

	(void)state;
	r = memsim("sweep --out cs --jobs 2 --kernel " COPY " --N 16,40 --d 16 --Br 8 "
		   "--param passes=3 --cache L1=1K:full:64,tiles=scratch --cache-sweep "
		   "L1=1K:8K:x2");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	rows_equal_run("cs", 8, "--param passes=3", 0);
	/* The pass's memory budget is what the plugin's arrays leave, not a built-in kernel's:
	 * 3 MiB holds these 2 MiB of arrays and the models, not flash2's 4 MiB. */
	assert_int_equal(sh("MEMSIM_MEMORY=3M %s sweep --out mem2 --jobs 1 --kernel " COPY
			    " --N 4096 --d 64 --Br 8 --cache L1=1K:full:64,tiles=scratch "
			    "--cache-sweep L1=1K:8K:x2 2>/dev/null && grep -c '\"sizes\":4' "
			    "mem2/results.json | grep -qx 4",
			    MEMSIM_BIN),
			 0);
	r = memsim("sweep --out sh --jobs 1 --shard 1/2 --kernel " COPY " --N 16,24,40 --d 16 "
		   "--Br 8 --cache L1=2K:full:64,tiles=scratch --cache L1=4K:4:64");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	rows_equal_run("sh", 3, "", 0);
	r = memsim("sweep --out sh --jobs 2 --resume --kernel " COPY " --N 16,24,40 --d 16 "
		   "--Br 8 --cache L1=2K:full:64,tiles=scratch --cache L1=4K:4:64");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "3 already done"));
	result_free(&r);
	rows_equal_run("sh", 6, "", 0);
	expect_error("sweep --out x --kernel " COPY " --param window=2", 2,
		     "--param: copy takes no 'window' (it takes: passes, crash, fail, wrap, endless)");
	expect_error("sweep --out x --kernel " PLUGIN_DIR "/plugin-badabi.so", 2,
		     "built for plugin ABI 99, this memsim takes 1");
	expect_error("sweep --out x --kernel naive,flash2 --kernel " COPY, 2,
		     "one plugin a sweep, without built-in kernels");
}

/* --param KEY=V1,V2 is a list like --N's: one configuration each value, every combination of
 * the lists, each row as `memsim run` with its values, its key and its column param_KEY in
 * results.csv naming them; --resume and merge know the rows by them. */
static void
test_plugin_sweep_param_lists(void **state)
{
	char path[700], *csv, *text;
	struct result r;

	(void)state;
	r = memsim("sweep --out pl --jobs 2 --kernel " COPY " --N 16,32 --d 16 --Br 8 "
		   "--param passes=1,3 --param fail=99 --cache L1=1K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "4 configurations"));
	result_free(&r);
	rows_equal_run("pl", 4, NULL, 0);
	snprintf(path, sizeof(path), "%s/pl/results.json", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(text);
	assert_non_null(
		strstr(text, "\"key\":\"plugin=" COPY " param:passes=3 param:fail=99 N=32 "));
	assert_non_null(strstr(text, "\"params\":{\"passes\":\"1\",\"fail\":\"99\"}"));
	free(text);
	/* Each row's params in their columns, last; a plugin's exact verdicts filled as a
	 * built-in kernel's (exact_bytes, exact_ratio, exact_within, arrays_within). */
	snprintf(path, sizeof(path), "%s/pl/results.csv", tmpdir);
	csv = slurp(path, NULL);
	assert_non_null(csv);
	assert_non_null(strstr(csv, ",splits,kv_page,param_passes,param_fail\n"));
	assert_non_null(strstr(csv, ",1,1,1,,,,,,\"\","));
	assert_non_null(strstr(csv, ",,,1,99\n"));
	assert_non_null(strstr(csv, ",,,3,99\n"));
	free(csv);
	/* table tells the rows apart by their params */
	r = memsim("table pl");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " passes=1 fail=99 "));
	assert_non_null(strstr(r.out, " passes=3 fail=99 "));
	result_free(&r);
	/* a longer list resumes: the rows of passes 1 and 3 kept */
	r = memsim("sweep --out pl --jobs 2 --resume --kernel " COPY " --N 16,32 --d 16 --Br 8 "
		   "--param passes=1,2,3 --param fail=99 --cache L1=1K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "4 already done"));
	result_free(&r);
	rows_equal_run("pl", 6, NULL, 0);
	/* shards merged: the same columns */
	for (int i = 0; i < 2; i++) {
		r = memsim("sweep --out ps%d --jobs 1 --shard %d/2 --kernel " COPY " --N 16 --d 16 "
			   "--Br 8 --param passes=1,2 --cache L1=1K:full:64,tiles=scratch",
			   i, i);
		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	r = memsim("merge --out pm ps0 ps1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/pm/results.csv", tmpdir);
	csv = slurp(path, NULL);
	assert_non_null(csv);
	assert_non_null(strstr(csv, ",kv_page,param_passes\n"));
	assert_non_null(strstr(csv, ",,,2\n"));
	free(csv);
	/* a comma separates a sweep's values; memsim run takes one value */
	expect_error("sweep --out x --kernel " COPY " --param passes=1,,2", 2,
		     "--param: empty item in 'passes=1,,2'");
	expect_error("sweep --out x --kernel " COPY " --param passes=2,1,2", 2,
		     "--param passes: '2' is listed twice");
	expect_error("run --kernel " COPY " --param passes=1,2", 2,
		     "--param passes=1,2: one value per key here");
}

/* `table` of a plugin's sweep: each row's measured DRAM bytes and its formula's (kept as
 * predicted_bytes) in MiB and their ratio, as the row's JSON holds them; "-" for the lab
 * formula, which a plugin has not. */
static void
test_plugin_sweep_table(void **state)
{
	char path[700], *text, *line, *save = NULL, cells[16][64], want[64];
	struct result r;
	int rows = 0;

	(void)state;
	expect_ok("sweep --out tb --jobs 1 --kernel " COPY " --N 512,1024 --d 64 --Br 8 "
		  "--cache L1=1K:full:64,tiles=scratch");
	r = memsim("table tb");
	assert_int_equal(r.rc, 0);
	snprintf(path, sizeof(path), "%s/tb/results.json", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(line);
		double measured = num(row, "dram", "read_bytes", NULL) +
				  num(row, "dram", "write_bytes", NULL);
		double exact = num(row, "formulas", "exact", "predicted_bytes");

		assert_true(measured > 0 && exact > 0);
		if (table_cells(r.out, "copy", num(row, "config", "N", NULL), cells, 16) < 10)
			fail_msg("no table line for N=%.0f:\n%s", num(row, "config", "N", NULL),
				 r.out);
		snprintf(want, sizeof(want), "%.3f", measured / 1048576);
		assert_string_equal(cells[4], want);
		assert_string_equal(cells[5], "-");
		snprintf(want, sizeof(want), "%.3f", exact / 1048576);
		assert_string_equal(cells[6], want);
		assert_string_equal(cells[7], "-");
		snprintf(want, sizeof(want), "%.3f", measured / exact);
		assert_string_equal(cells[8], want);
		cJSON_Delete(row);
		rows++;
	}
	assert_int_equal(rows, 2);
	free(text);
	result_free(&r);
}

/* native runs NAME-native.so beside NAME.so, with the traced build's arrays. */
static void
test_plugin_native(void **state)
{
	struct result r;

	(void)state;
	r = memsim("native --kernel " COPY " --N 64 --d 16 --param passes=2 --repeat 3");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "native plugin copy (" PLUGIN_DIR "/plugin-copy-native.so)"));
	assert_non_null(strstr(r.out, "run 3: "));
	assert_non_null(strstr(r.out, "median "));
	result_free(&r);
	expect_error("native --kernel " PLUGIN_DIR "/plugin-badabi.so", 2,
		     "plugin-badabi-native.so: built for plugin ABI 99, this memsim takes 1");
	expect_error("native --kernel " PLUGIN_DIR "/plugin-copy-native.so", 2,
		     "cannot load " PLUGIN_DIR "/plugin-copy-native-native.so");
	expect_error("native --kernel " COPY " --check", 2, "--check is for built-in kernels");
	expect_error("native --kernel " COPY " --param window=1", 2,
		     "--param: copy takes no 'window'");
}

/* xcheck's refusals of a plugin, before any tool runs (a stand-in for valgrind): one whose
 * function has a name memsim has, or whose native build has no symbol table, cannot be picked
 * out of cachegrind.out; a bad plugin or configuration is refused as run refuses it. */
static void
test_plugin_xcheck_refusals(void **state)
{
	const char *saved = memsim_env;

	(void)state;
	memsim_env = "MEMSIM_VALGRIND=/bin/true";
	expect_error("xcheck --kernel " PLUGIN_DIR "/plugin-clash.so --with cachegrind", 2,
		     "plugin-clash-native.so: its function 'now_seconds' has the name of one of "
		     "memsim's own");
	expect_error("xcheck --kernel " PLUGIN_DIR "/plugin-stripped.so", 2,
		     "plugin-stripped-native.so: its run() has no name in its symbol table");
	expect_error("xcheck --kernel " PLUGIN_DIR "/plugin-badabi.so", 2,
		     "built for plugin ABI 99, this memsim takes 1");
	expect_error("xcheck --kernel " PLUGIN_DIR "/plugin-copy-native.so", 2,
		     "a native build (-DMEMSIM_NATIVE) where the traced one is needed");
	expect_error("xcheck --kernel " COPY " --param passes=0", 2,
		     "copy: passes must be at least 1");
	expect_error("xcheck --kernel " COPY " --param window=1", 2, "copy takes no 'window'");
	memsim_env = saved;
}

/* The ratio of xcheck report j's row `source` for quantity q, and whether it is within. */
static bool
xcheck_within(const cJSON *j, const char *source, const char *q, double *ratio)
{
	const cJSON *row;

	cJSON_ArrayForEach (row, cJSON_GetObjectItemCaseSensitive(j, "rows")) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(row, "source"), *r;

		if (!cJSON_IsString(s) || strcmp(s->valuestring, source) != 0)
			continue;
		r = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(row, "ratios"), q);
		if (!r)
			fail_msg("xcheck row %s has no %s ratio", source, q);
		*ratio = num(r, "ratio", NULL, NULL);
		return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "within"));
	}
	fail_msg("xcheck report has no row %s", source);
	return false;
}

/* xcheck --kernel PATH under Valgrind: the stream plugin, whose trace is every access of its
 * native build, agrees with Cachegrind and Callgrind within their tolerances (and its formula
 * with memsim exactly); the copy plugin, whose run() fills A without tracing it, is caught
 * (Cachegrind's LL misses out of tolerance); the clash plugin runs under Callgrind, which
 * tells objects apart. */
static void
test_plugin_xcheck(void **state)
{
	static const char *const tool_q[][2] = {
		{ "Cachegrind", "d1_misses" }, { "Cachegrind", "ll_misses" },
		{ "Callgrind", "d1_misses" },  { "Callgrind", "ll_misses" },
		{ "Callgrind", "writebacks" },
	};
	struct result r;
	cJSON *j;
	double ratio;

	(void)state;
	expect_ok("xcheck --kernel " PLUGIN_DIR "/plugin-stream.so --N 512 --d 64 --with "
		  "cachegrind,callgrind --json x.json");
	j = read_json("x.json");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(j, "config"), "kernel")
				    ->valuestring,
			    "stream");
	for (unsigned i = 0; i < sizeof(tool_q) / sizeof(tool_q[0]); i++)
		if (!xcheck_within(j, tool_q[i][0], tool_q[i][1], &ratio))
			fail_msg("stream: %s %s ratio %.4f out of tolerance", tool_q[i][0],
				 tool_q[i][1], ratio);
	assert_true(xcheck_within(j, "stream's formula", "dram_bytes", &ratio));
	assert_true(ratio == 1.0);
	cJSON_Delete(j);

	expect_ok("xcheck --kernel " COPY " --N 64 --d 16 --param passes=2 --with cachegrind "
		  "--json c.json");
	j = read_json("c.json");
	assert_string_equal(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(j, "config"), "params"),
			"passes")
			->valuestring,
		"2");
	assert_false(xcheck_within(j, "Cachegrind", "ll_misses", &ratio));
	assert_true(ratio > 1.3); /* A's 64 lines written untraced */
	cJSON_Delete(j);

	r = memsim("xcheck --kernel " PLUGIN_DIR
		   "/plugin-clash.so --N 512 --d 64 --with callgrind");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "every function in " PLUGIN_DIR "/plugin-clash-native.so"));
	result_free(&r);
}

#define REC_CACHE_A "L1=4K:4:64,tiles=scratch"
#define REC_CACHE_B "L1=2K:2:128:random:wb:wv"
#define REC_RUN "run --kernel " COPY " --N 64 --d 16 --Br 16 --param passes=2"

/* tmpdir's JSON files x and y have the same counters in each of keys. */
static void
same_fields(const char *x, const char *y, const char *const *keys, unsigned n)
{
	cJSON *a = read_json(x), *b = read_json(y);

	assert_non_null(a);
	assert_non_null(b);
	for (unsigned k = 0; k < n; k++) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(a, keys[k]);

		assert_non_null(u);
		if (!cJSON_Compare(u, cJSON_GetObjectItemCaseSensitive(b, keys[k]), true))
			fail_msg("%s and %s differ in %s", x, y, keys[k]);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* Runs "memsim ARGS", which must succeed. */
static void
ok(const char *args)
{
	struct result r = memsim("%s", args);

	if (r.rc != 0)
		fail_msg("memsim %s: exit %d: %s", args, r.rc, r.err);
	result_free(&r);
}

/* A plugin's recording replays as `memsim run --kernel ./x.so` under the same cache and under
 * another (tiles in memory there); the recorded run's own counters are those without --record. */
static void
test_plugin_record_replay(void **state)
{
	static const char *const live[] = { "dram", "arrays", "phases", "levels", "cpu" };
	static const char *const bytes[] = { "dram", "arrays", "phases" };
	cJSON *r, *tr, *arrays;
	struct result p;

	(void)state;
	ok(REC_RUN " --cache " REC_CACHE_A " --record f.mt --json a.json");
	ok(REC_RUN " --cache " REC_CACHE_A " --json l.json");
	same_fields("a.json", "l.json", live, 5);
	ok("replay f.mt --cache " REC_CACHE_A " --json r.json");
	same_fields("l.json", "r.json", bytes, 3);
	ok(REC_RUN " --cache " REC_CACHE_B " --json lb.json");
	ok("replay f.mt --cache " REC_CACHE_B " --json rb.json");
	same_fields("lb.json", "rb.json", bytes, 3);
	/* The header: the command, the plugin's arrays (the tile with its space) and phase. */
	r = read_json("rb.json");
	assert_non_null(r);
	tr = cJSON_GetObjectItemCaseSensitive(r, "trace");
	assert_string_equal(
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tr, "recorded_command")),
		"memsim " REC_RUN " --cache " REC_CACHE_A " --record f.mt --json a.json");
	arrays = cJSON_GetObjectItemCaseSensitive(r, "arrays");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(arrays, "A"));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(arrays, "B"));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(arrays, "T"));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(r, "phases"), "copy"));
	cJSON_Delete(r);
	/* --record -: the trace on stdout, the text report on stderr. */
	p = shell("{ %s " REC_RUN " --cache lab --record - | %s replay - --cache " REC_CACHE_B
		  " --json p.json >/dev/null; }",
		  MEMSIM_BIN, MEMSIM_BIN);
	assert_int_equal(p.rc, 0);
	assert_non_null(strstr(p.err, "memsim run: plugin copy"));
	result_free(&p);
	same_fields("lb.json", "p.json", bytes, 3);
	assert_int_equal(sh("rm -f ./*.mt ./*.json"), 0);
}

static void
test_plugin_record_errors(void **state)
{
	struct result r;

	(void)state;
	expect_error(REC_RUN " --record - --json -", 2, "--record - and --json - both want stdout");
	expect_error(REC_RUN " --record ''", 2, "--record: the file name is empty");
	assert_int_equal(sh("mkdir -p dir"), 0);
	expect_error(REC_RUN " --record dir", 1, "recording: cannot create dir: Is a directory");
	expect_error(REC_RUN " --record nodir/f.mt", 1, "recording: cannot create nodir/f.mt");
	expect_error(REC_RUN " --record /dev/full", 1,
		     "recording: writing /dev/full: No space left on device");
	/* A file size limit: SIGXFSZ ignored, the torn file removed. The copy kernel's loops
	 * fold into repeat records: 65536 rows take some 8 KiB. */
	r = shell("ulimit -f 4 && %s run --kernel " COPY " --N 65536 --d 64 --cache lab "
		  "--record big.mt >/dev/null",
		  MEMSIM_BIN);
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "recording: writing big.mt: File too large (the "
					 "incomplete recording was removed)"));
	result_free(&r);
	assert_int_equal(sh("test ! -e big.mt"), 0);
	/* The plugin's own failure while recording: its message, no recording left; a recording
	 * that was there stays as it was. */
	expect_error("run --kernel " COPY " --N 64 --param fail=64 --record fail.mt", 1,
		     "copy: asked to fail at N=64 (the incomplete recording was removed)");
	assert_int_equal(sh("test ! -e fail.mt"), 0);
	assert_int_equal(sh("%s run --kernel " COPY " --N 64 --record fail.mt >/dev/null && "
			    "cp fail.mt fail.old",
			    MEMSIM_BIN),
			 0);
	expect_error("run --kernel " COPY " --N 64 --param fail=64 --record fail.mt", 1,
		     "copy: asked to fail at N=64 (the incomplete recording was removed)");
	assert_int_equal(sh("cmp fail.mt fail.old && rm fail.mt fail.old"), 0);
	assert_int_equal(sh("rm -rf dir"), 0);
}

/* Array names every table, CSV and JSON can tell apart: one each, printable UTF-8, in a
 * space memsim knows; anything else refused in one line before the run, naming the plugin and
 * the array (two arrays "A" gave a false "DIFFERS" from the first one's traffic). */
static void
test_plugin_array_names(void **state)
{
	static const struct {
		const char *mode, *msg;
	} cases[] = {
		{ "dup", "bad: arrays(): two arrays named 'A'" },
		{ "empty", "bad: arrays(): array 2 has no name" },
		{ "ctrl",
		  "bad: arrays(): array name '\\x1b[31m\"x\\x0a\\' is not printable UTF-8" },
		{ "not-utf8", "bad: arrays(): array name 'B\\xff\\xfe' is not printable UTF-8" },
		{ "space",
		  "bad: arrays(): array 'B' has space 77, not MEMSIM_SPACE_DRAM, _SCRATCH or "
		  "_TILE" },
	};
	struct result r;
	char args[256];
	cJSON *o;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), "run --kernel " BAD " --N 16 --d 4 --param mode=%s",
			 cases[i].mode);
		expect_error(args, 2, cases[i].msg);
	}
	/* In a sweep, that configuration's row fails with the message. */
	r = memsim("sweep --out names --kernel " BAD " --N 16 --d 4 --param mode=dup");
	assert_int_equal(r.rc, 1);
	result_free(&r);
	assert_int_equal(sh("grep -q \"\\\"error\\\":\\\"bad: arrays(): two arrays named 'A'\" "
			    "names/results.json && rm -rf names"),
			 0);
	/* A name in UTF-8 is a name. */
	expect_ok("run --kernel " BAD " --N 16 --d 4 --param mode=utf8 --json u.json");
	o = read_json("u.json");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "arrays"), "B\xc3\xa4"));
	cJSON_Delete(o);
	assert_int_equal(sh("rm -f u.json"), 0);
}

/* Whether s holds exactly n of c in a row, and no more. */
static bool
run_of(const char *s, char c, size_t n)
{
	const char *p = strchr(s, c);

	return p && strspn(p, (char[]){ c, '\0' }) == n;
}

/* A plugin's message that fills err to its end without a NUL is read to the buffer's end and
 * no further (ASan: stack-buffer-overflow), and shown as one printable line. */
static void
test_plugin_messages(void **state)
{
	struct result r;

	(void)state;
	r = memsim("run --kernel " BAD " --N 16 --d 4 --param mode=check-nonul");
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "memsim: bad: CCC"));
	assert_true(run_of(r.err, 'C', 511));
	result_free(&r);
	r = memsim("run --kernel " BAD " --N 16 --d 4 --param mode=arrays-nonul");
	assert_int_equal(r.rc, 2);
	assert_true(run_of(r.err, 'R', 511));
	result_free(&r);
	r = memsim("run --kernel " BAD " --N 16 --d 4 --param mode=run-nonul");
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "memsim: bad: E\\x1b\\x0a\\xffEEE"));
	result_free(&r);
	r = memsim("native --kernel " BAD " --N 16 --d 4 --param mode=run-nonul");
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "memsim: bad: E\\x1b\\x0a\\xffEEE"));
	result_free(&r);
	/* A sweep's row keeps it as the same printable line. */
	r = memsim("sweep --out msg --jobs 1 --kernel " BAD " --N 16 --d 4 --param mode=run-nonul");
	assert_int_equal(r.rc, 1);
	result_free(&r);
	assert_int_equal(sh("grep -q '\"error\":\"bad: E\\\\\\\\x1b\\\\\\\\x0a\\\\\\\\xffEEE' "
			    "msg/results.json"),
			 0);
	assert_int_equal(sh("rm -rf msg"), 0);
}

/* What dlopen() must not be given: a FIFO (it would wait for a writer) and a device; an entry
 * that is data, not code (calling it would crash). */
static void
test_plugin_not_loadable(void **state)
{
	struct result r;

	(void)state;
	assert_int_equal(sh("mkfifo fifo.so"), 0);
	r = shell("timeout 10 %s run --kernel ./fifo.so --N 16", MEMSIM_BIN);
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "--kernel: ./fifo.so: a FIFO, not a shared object file"));
	result_free(&r);
	expect_error("sweep --out f --kernel ./fifo.so --N 16", 2, "a FIFO, not a shared object");
	expect_error("run --kernel /dev/null --N 16", 2,
		     "--kernel: /dev/null: a character device, not a shared object file");
	assert_int_equal(sh("mkdir -p dir.so && rm -f fifo.so"), 0);
	expect_error("run --kernel dir.so --N 16", 2, "--kernel: dir.so: a directory, not a");
	assert_int_equal(sh("rmdir dir.so"), 0);
	expect_error("run --kernel " PLUGIN_DIR "/plugin-bad-data.so --N 16", 2,
		     "plugin-bad-data.so: not a memsim plugin: its memsim_kernel_plugin_v1 is not "
		     "a function");
}

/* A plugin that calls exit() in run(): never a success, one line (exit(0) gave status 0 and
 * no report at all). */
static void
test_plugin_exit(void **state)
{
	struct result r;

	(void)state;
	r = memsim("run --kernel " BAD " --N 16 --d 4 --param mode=exit");
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "memsim: bad: its run() called exit(): the run did not "
					 "finish"));
	assert_string_equal(r.out, "");
	result_free(&r);
	expect_error("native --kernel " BAD " --N 16 --d 4 --param mode=exit", 1,
		     "bad: its run() called exit()");
	r = memsim("sweep --out ex --jobs 1 --kernel " BAD " --N 16 --d 4 --param mode=exit");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "bad: its run() called exit()"));
	result_free(&r);
	assert_int_equal(sh("grep -q 'exited with status 1' ex/results.json && rm -rf ex"), 0);
}

/* A comma list with a plugin in it: one line saying so, not "cannot load naive,./x.so"; a
 * plugin whose path holds a comma still loads. */
static void
test_plugin_in_list(void **state)
{
	(void)state;
	expect_error("sweep --out l --kernel naive," COPY " --N 16", 2,
		     "--kernel naive," COPY ": a plugin cannot be listed with other kernels (one "
		     "plugin a sweep, without built-in kernels)");
	expect_error("sweep --out l --kernel " COPY ",flash2 --N 16", 2,
		     "a plugin cannot be listed with other kernels");
	expect_error("run --kernel naive," COPY " --N 16", 2,
		     "--kernel naive," COPY ": one kernel, not a list");
	expect_error("formula --kernel naive," COPY " --N 16", 2, "one kernel, not a list");
	assert_int_equal(sh("mkdir -p a,b && cp " COPY " a,b/k.so"), 0);
	expect_ok("run --kernel a,b/k.so --N 16 --d 4");
	assert_int_equal(sh("rm -rf a,b"), 0);
}

/* --param values that are not UTF-8: the rows' JSON is ASCII there (\udcff), and --resume
 * reads the keys back as the same bytes. */
static void
test_plugin_params_not_utf8(void **state)
{
	struct result r;

	(void)state;
	expect_ok("sweep --out pu --jobs 1 --kernel " COPY " --N 16,32 --d 4 --param "
		  "\"$(printf 'crash=\\377')\"");
	assert_int_equal(sh("grep -c '\"crash\":\"\\\\udcff\"' pu/results.json | grep -qx 2 && "
			    "! LC_ALL=C grep -q \"$(printf '[\\200-\\377]')\" pu/results.json"),
			 0);
	r = memsim("sweep --out pu --jobs 1 --kernel " COPY " --N 16,32,48 --d 4 --param "
		   "\"$(printf 'crash=\\377')\" --resume");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "2 already done"));
	result_free(&r);
	assert_int_equal(sh("rm -rf pu"), 0);
}

#define REBUILT "--kernel ./k.so --d 16 --Br 8 --jobs 1"

/* The plugin_hash of every row of tmpdir/dir/results.json, which must all be one: "fnv1a64:"
 * and 16 hex digits; caller frees. */
static char *
rows_plugin_hash(const char *dir)
{
	char path[700], *text, *save = NULL, *hash = NULL;

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp_text(path);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(l);
		const cJSON *h = cJSON_GetObjectItem(row, "plugin_hash");

		assert_true(cJSON_IsString(h));
		assert_int_equal(strlen(h->valuestring), strlen("fnv1a64:") + 16);
		assert_int_equal(strncmp(h->valuestring, "fnv1a64:", 8), 0);
		if (hash)
			assert_string_equal(hash, h->valuestring);
		else
			hash = strdup(h->valuestring);
		cJSON_Delete(row);
	}
	free(text);
	assert_non_null(hash);
	return hash;
}

/* A plugin rebuilt at the same path (here its file changed by bytes appended) is another
 * build: every row and the manifest record the file's hash, and --resume refuses rows of
 * another build in one line naming the plugin (results.json untouched, nothing run), as it
 * refuses rows with no hash; --rerun-other-revisions moves them to superseded.json and runs
 * them again; merge refuses shards of two builds; --slurm again refuses shards of another
 * build before submitting, and with --rerun-other-revisions submits them again. */
static void
test_plugin_sweep_rebuilt(void **state)
{
	char *old, *now;
	struct result r;
	cJSON *m;

	(void)state;
	assert_int_equal(sh("cp " COPY " k.so"), 0);
	expect_ok("sweep --out pr " REBUILT " --N 16,32");
	expect_ok("sweep --out pm0 " REBUILT " --N 16,32 --shard 0/2");
	old = rows_plugin_hash("pr");
	m = read_json("pr/manifest.json");
	assert_string_equal(cJSON_GetObjectItem(m, "plugin_hash")->valuestring, old);
	cJSON_Delete(m);
	assert_int_equal(sh("cp pr/results.json pr.was && printf rebuilt >>k.so"), 0);

	r = memsim("sweep --out pr " REBUILT " --N 16,32,64 --resume");
	print_commented(r.err);
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "pr/results.json holds 2 rows of plugin ./k.so made by "
					 "another build of it (fnv1a64:"));
	assert_non_null(strstr(r.err, old));
	assert_non_null(strstr(r.err, "the plugin changed; sweep into another --out, or pass "
				      "--rerun-other-revisions to run them again"));
	result_free(&r);
	assert_int_equal(sh("cmp pr/results.json pr.was"), 0);

	expect_ok("sweep --out pm1 " REBUILT " --N 16,32 --shard 1/2");
	r = memsim("merge --out pmm pm0 pm1");
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "pm0 holds rows of plugin ./k.so as one build of it made "
					 "them (fnv1a64:"));
	assert_non_null(strstr(r.err, "pm1/results.json:1 as another (fnv1a64:"));
	result_free(&r);
	assert_int_equal(sh("test ! -e pmm/results.json"), 0);

	r = memsim("sweep --out pr " REBUILT " --N 16,32,64 --resume --rerun-other-revisions");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "2 rows of another build of plugin ./k.so moved to "
				      "pr/superseded.json: they run again"));
	assert_non_null(strstr(r.err, "3 configurations, 0 already done, 3 to run"));
	result_free(&r);
	now = rows_plugin_hash("pr");
	assert_string_not_equal(now, old);
	assert_int_equal(sh("test $(wc -l <pr/results.json) = 3 && "
			    "test $(wc -l <pr/superseded.json) = 2"),
			 0);
	/* Rows of a memsim from before rows recorded the build. */
	assert_int_equal(sh("sed -i 's/,\"plugin_hash\":\"[^\"]*\"//' pr/results.json"), 0);
	expect_error("sweep --out pr " REBUILT " --N 16,32,64 --resume", 2,
		     "pr/results.json holds 3 rows of plugin ./k.so that record no build of it");

	/* --slurm: the shards' manifests say which build made their rows. */
	memsim_env = "MEMSIM_SBATCH=/nonexistent/sbatch";
	expect_ok("sweep --out ps " REBUILT " --N 16,32 --slurm 2 --dry-run");
	assert_int_equal(sh("for i in 0 1; do SLURM_ARRAY_TASK_ID=$i sh ps/slurm/sweep.sbatch "
			    "2>/dev/null || exit 1; done && printf again >>k.so"),
			 0);
	expect_error("sweep --out ps " REBUILT " --N 16,32 --slurm 2 --dry-run", 2,
		     "/ps/shards/0 (and others) holds rows of plugin ./k.so made by another "
		     "build of it (fnv1a64:");
	r = memsim("sweep --out ps " REBUILT " --N 16,32 --slurm 2 --dry-run "
		   "--rerun-other-revisions");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "--array=0-1 "));
	result_free(&r);
	memsim_env = "";
	free(old);
	free(now);
	assert_int_equal(sh("rm -rf k.so pr pr.was pm0 pm1 pmm ps"), 0);
}

/* Starts "memsim run" of the plugin recording to w.mt without end (--param endless) in the
 * background, as the start of a shell group ("{ ...; }": sh() puts "cd tmpdir &&" before it)
 * that goes on once the recording has begun (its temporary exists, or w.mt is no longer
 * w.old): $p is its pid. */
#define ENDLESS_RECORDING                                                                          \
	"{ %s run --kernel " COPY " --N 4096 --d 64 --cache lab --param endless=4096 "             \
	"--record w.mt >/dev/null 2>&1 & p=$!; "                                                   \
	"i=0; while ! ls w.mt.tmp* >/dev/null 2>&1 && cmp -s w.mt w.old && [ $i -lt 400 ]; do "    \
	"sleep 0.02; i=$((i + 1)); done; "

/* --record writes the recording whole: a run stopped while it records (SIGTERM) leaves the
 * recording that was there byte for byte and no temporary; another run recording to the same
 * path meanwhile (a built-in kernel) writes its own whole file, which the first one's later
 * writes do not touch, and which replays. */
static void
test_plugin_record_whole(void **state)
{
	struct result r;

	(void)state;
	assert_int_equal(sh("%s run --kernel flash2 --N 64 --record w.mt >/dev/null && "
			    "cp w.mt w.old",
			    MEMSIM_BIN),
			 0);
	assert_int_equal(sh(ENDLESS_RECORDING "sleep 0.1; kill -TERM $p; wait $p; test $? = 143; }",
			    MEMSIM_BIN),
			 0);
	assert_int_equal(sh("cmp w.mt w.old && ! ls w.mt.tmp* 2>/dev/null"), 0);
	assert_int_equal(sh(ENDLESS_RECORDING "%s run --kernel flash1 --N 64 --record w.mt "
					      ">/dev/null && cp w.mt w.flash1 && sleep 0.2; "
					      "kill -TERM $p; wait $p; test $? = 143; }",
			    MEMSIM_BIN, MEMSIM_BIN),
			 0);
	assert_int_equal(sh("cmp w.mt w.flash1 && ! ls w.mt.tmp* 2>/dev/null"), 0);
	r = memsim("replay w.mt --cache lab --json -");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "--kernel flash1 --N 64 --record w.mt"));
	result_free(&r);
	assert_int_equal(sh("rm w.mt w.old w.flash1"), 0);
}

int
main(void)
{
	/* test_plugin_xcheck last: it runs valgrind, so a sanitized build or a machine without
	 * valgrind leaves it out of the plan (cmocka 1.1.5's skip() reads as a failure). */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_run_hand_count),
		cmocka_unit_test(test_plugin_formula_grid),
		cmocka_unit_test(test_plugin_errors),
		cmocka_unit_test(test_plugin_native),
		cmocka_unit_test(test_plugin_xcheck_refusals),
		cmocka_unit_test(test_plugin_sweep_crash),
		cmocka_unit_test(test_plugin_sweep_rows_as_run),
		cmocka_unit_test(test_plugin_sweep_param_lists),
		cmocka_unit_test(test_plugin_sweep_table),
		cmocka_unit_test(test_plugin_record_replay),
		cmocka_unit_test(test_plugin_record_errors),
		cmocka_unit_test(test_plugin_array_names),
		cmocka_unit_test(test_plugin_messages),
		cmocka_unit_test(test_plugin_not_loadable),
		cmocka_unit_test(test_plugin_exit),
		cmocka_unit_test(test_plugin_in_list),
		cmocka_unit_test(test_plugin_params_not_utf8),
		cmocka_unit_test(test_plugin_record_whole),
		cmocka_unit_test(test_plugin_sweep_rebuilt),
		cmocka_unit_test(test_plugin_xcheck),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (test_sanitized() || system("valgrind --version >/dev/null 2>&1") != 0) {
		printf("# test_plugin_xcheck left out: %s\n",
		       test_sanitized() ? "valgrind cannot run a sanitized build"
					: "valgrind is not installed");
		n--;
	}
	return _cmocka_run_group_tests("tests", tests, n, tmpdir_setup, tmpdir_teardown);
}
