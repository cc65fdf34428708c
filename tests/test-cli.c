/*
 * The memsim command as a user meets it: exit status 0 / 1 / 2, a one-line message naming
 * the problem for every bad input, JSON that parses with the documented keys, stdin traces,
 * and results already written never lost.
 */

#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define DIN TEST_DATA_DIR "/dinero/t4_mixed.din"

/* Shell words that wait (up to 20 s) until DIR/results.json holds a first whole row: an
 * interrupt test then interrupts a run that has rows to keep, however fast the machine. */
#define WAIT_FOR_ROW(dir)                                                                          \
	"for i in $(seq 400); do grep -q . " dir "/results.json 2>/dev/null && break; "            \
	"sleep 0.05; done;"

static char out_path[600], err_path[600];
static void
test_usage_errors(void **state)
{
	(void)state;
	expect_error("", 2, "no command given");
	expect_error("frobnicate", 2, "unknown command 'frobnicate'");
	expect_error("replay", 2, "replay needs a trace FILE");
	expect_error("replay " DIN, 2, "replay needs --cache");
	expect_error("replay " DIN " --cache L1=48K:8:64", 2, "L1: 96 sets");
	expect_error("replay " DIN " --cache L1=32K:8:64:lfu", 2, "unknown policy word 'lfu'");
	expect_error("replay " DIN " --cache L1=32K:8:64,L2=1M:0:64", 2,
		     "L2: associativity is zero");
	expect_error("replay " DIN " --cache L1=99999999999999999999G:8:64", 2, "overflows");
	expect_error("replay " DIN " --cache nosuchpreset", 2,
		     "unknown cache spec or preset 'nosuchpreset'");
	expect_error("replay --format xyz " DIN " --cache lab", 2, "unknown format 'xyz'");
	expect_error("replay " DIN " " DIN " --cache lab", 2, "replay takes one trace FILE");
	expect_error("replay " DIN " --cache lab --seed -1", 2, "--seed");
	expect_error("replay " DIN " --cache lab --bogus", 2, "unknown option '--bogus'");
	expect_error("replay " DIN " --cache lab -z", 2, "unknown option '-z'");
	expect_error("replay " DIN " --cache", 2, "option '--cache' needs a value");
	expect_error("help nosuch", 2, "unknown command 'nosuch'");
	expect_error("presets extra", 2, "presets takes no arguments");
}

static void
test_runtime_errors(void **state)
{
	char path[700];

	(void)state;
	expect_error("replay /nonexistent/t.din --cache lab", 1,
		     "cannot open trace /nonexistent/t.din");
	write_file("bad.din", "0 100\n1 200\n0 zz\n");
	expect_error("replay bad.din --cache lab", 1, "bad.din:3: bad address");
	write_file("bad.lackey", " L 100,4\n S 200\n");
	expect_error("replay --format lackey bad.lackey --cache lab", 1,
		     "bad.lackey:2: bad address,size");
	write_file("unknown.txt", "hello\n");
	expect_error("replay unknown.txt --cache lab", 1, "cannot tell the trace format");
	/* A truncated binary trace: record one, cut it. */
	{
		struct result r = memsim("run --kernel naive --N 64 --d 16 --trace-only --record "
					 "whole.mtr");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	snprintf(path, sizeof(path), "cd %s && head -c 3000 whole.mtr > cut.mtr", tmpdir);
	assert_int_equal(system(path), 0);
	expect_error("replay cut.mtr --cache cachegrind", 1, "truncated");
	/* The table is printed and kept even when the JSON cannot be written. */
	{
		struct result r = memsim("replay %s --cache lab --json /nonexistent/x.json", DIN);

		assert_int_equal(r.rc, 1);
		assert_non_null(strstr(r.out, "DRAM"));
		assert_non_null(strstr(r.err, "/nonexistent/x.json"));
		result_free(&r);
	}
}

static void
test_replay_json(void **state)
{
	struct result r;
	char *json;
	cJSON *root, *levels, *dram, *cfg;
	char path[700];

	(void)state;
	r = memsim("replay %s --cache L1=4K:4:32,L2=32K:8:64 --json out.json", DIN);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "L2"));
	result_free(&r);
	snprintf(path, sizeof(path), "%s/out.json", tmpdir);
	json = slurp_text(path);
	root = cJSON_Parse(json);
	assert_non_null(root);
	assert_non_null(cJSON_GetObjectItem(root, "memsim_version"));
	/* every JSON report says which revision of the model made its numbers */
	assert_true(cJSON_IsString(cJSON_GetObjectItem(root, "model_revision")));
	assert_non_null(
		strstr(cJSON_GetObjectItem(root, "model_revision")->valuestring, " model "));
	assert_non_null(strstr(cJSON_GetObjectItem(root, "command")->valuestring, "memsim replay"));
	cfg = cJSON_GetObjectItem(root, "config");
	assert_string_equal(cJSON_GetObjectItem(cfg, "cache")->valuestring,
			    "L1=4K:4:32:lru:wb:wa:nine,L2=32K:8:64:lru:wb:wa:nine,tiles=dram");
	levels = cJSON_GetObjectItem(root, "levels");
	assert_int_equal(cJSON_GetArraySize(levels), 2);
	/* Dinero IV's numbers for this trace and geometry (tests/data/dinero/expected.tsv). */
	assert_int_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(levels, 1), "read_misses")->valuedouble,
		7186);
	assert_int_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(levels, 0), "line_bytes")->valuedouble, 32);
	dram = cJSON_GetObjectItem(root, "dram");
	assert_int_equal(cJSON_GetObjectItem(dram, "read_bytes")->valuedouble, 460992);
	assert_int_equal(cJSON_GetObjectItem(dram, "write_bytes")->valuedouble, 199040);
	assert_non_null(cJSON_GetObjectItem(dram, "rfo_bytes"));
	assert_non_null(cJSON_GetObjectItem(dram, "flush_write_bytes"));
	assert_non_null(cJSON_GetObjectItem(root, "scratch"));
	cJSON_Delete(root);
	free(json);

	/* The same trace from stdin, without the flush. */
	r = memsim("replay - --cache L1=4K:4:32,L2=32K:8:64 --no-flush --json - < %s", DIN);
	assert_int_equal(r.rc, 0);
	json = strchr(r.out, '{');
	assert_non_null(json);
	root = cJSON_Parse(json);
	assert_non_null(root);
	dram = cJSON_GetObjectItem(root, "dram");
	assert_int_equal(cJSON_GetObjectItem(dram, "flush_write_bytes")->valuedouble, 0);
	assert_int_equal(cJSON_GetObjectItem(dram, "read_bytes")->valuedouble, 460992);
	cJSON_Delete(root);
	result_free(&r);
}

static void
test_help_and_presets(void **state)
{
	struct result r;

	(void)state;
	r = memsim("help replay");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "Usage: memsim replay"));
	assert_non_null(strstr(r.out, "Dinero IV"));
	result_free(&r);
	r = memsim("replay --help");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	/* native's help lists --papi's strategies from the table, best first */
	r = memsim("help native");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "--papi's strategies, best first: skx-imc, icx-imc,"));
	assert_non_null(strstr(r.out, " papi-l3-tcm, none.\n"));
	result_free(&r);
	r = memsim("presets");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "cachegrind"));
	assert_non_null(strstr(r.out, "--D1=32768,8,64"));
	assert_non_null(strstr(r.out, "lab"));
	assert_non_null(strstr(r.out, "i5-8250u"));
	result_free(&r);
}

static void
test_kernel_option_errors(void **state)
{
	(void)state;
	expect_error("run --kernel naive --N 0", 2, "--N must be at least 1");
	expect_error("run --kernel naive --d 0", 2, "--d must be at least 1");
	expect_error("run --kernel naive --heads 4 --kv-heads 3", 2,
		     "--kv-heads 3 does not divide --heads 4");
	expect_error("run --kernel flash2 --Br 0", 2, "--Br must be at least 1");
	expect_error("run --kernel flash2 --Bc 0", 2, "--Bc must be at least 1");
	expect_error("run --kernel flash3", 2, "unknown kernel 'flash3'");
	expect_error("run --kernel naive --dtype fp8", 2, "unknown dtype 'fp8'");
	expect_error("run --kernel naive --N 1000000", 2, "the arrays and tiles need");
	expect_error("run --kernel naive --N x12", 2, "--N: 'x12' is not a whole number");
	expect_error("run --N 64", 2, "run needs --kernel");
	expect_error("run --kernel naive --cache L1=3K:8:64", 2, "--cache: L1:");
	expect_error("native --kernel naive --N 0", 2, "--N must be at least 1");
	expect_error("formula --kernel naive --d 0", 2, "--d must be at least 1");
	expect_error("sweep --kernel naive", 2, "sweep needs --out DIR");
	expect_error("sweep --out x --kernel naive --N 64:32:x2", 2, "--N: bad range");
	expect_error("sweep --out x --kernel naive --N 0", 2, "--N must be at least 1");
	expect_error("sweep --out x --kernel naive --shard 2/2", 2, "--shard");
	expect_error("sweep --out x --kernel naive --causal=maybe", 2, "--causal: 'maybe'");
	expect_error("sweep --out x --kernel naive --cache-sweep L3=1M:2M:x2", 2,
		     "L3 is not a level");
	expect_error("merge --out x", 2, "merge needs at least one shard directory");
	expect_error("table", 2, "table takes a sweep directory");
}

static void
test_run_and_formula(void **state)
{
	struct result r;
	char *json;
	cJSON *root, *cmp, *e;
	int lab = 0, exact = 0;

	(void)state;
	r = memsim("run --kernel flash2 --N 256 --cache lab --json run.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "lab    formula"));
	assert_non_null(strstr(r.out, "within 30%"));
	result_free(&r);
	{
		char path[700];

		snprintf(path, sizeof(path), "%s/run.json", tmpdir);
		json = slurp_text(path);
	}
	root = cJSON_Parse(json);
	assert_non_null(root);
	/* the keys of docs/schema.md. */
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "kernel")->valuestring,
		"flash2");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "formulas"), "lab"));
	assert_non_null(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(root, "formulas"), "exact"), "arrays"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "arrays"), "K"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "phases"), "flash_tile"));
	assert_true(cJSON_GetObjectItem(root, "flops")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(root, "intensity")->valuedouble > 0);
	cmp = cJSON_GetObjectItem(root, "compare");
	cJSON_ArrayForEach (e, cmp) {
		const char *f = cJSON_GetObjectItem(e, "formula")->valuestring;

		assert_non_null(cJSON_GetObjectItem(e, "basis"));
		assert_non_null(cJSON_GetObjectItem(e, "why_not"));
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "within")));
		lab += strcmp(f, "lab") == 0;
		exact += strcmp(f, "exact") == 0;
	}
	assert_int_equal(lab, 1);
	assert_int_equal(exact, 1);
	cJSON_Delete(root);
	free(json);

	/* Sizes run refuses (its arrays would not fit): the formulas alone (no cache level here:
	 * a set-associative one evaluates in time that grows with N). */
	r = memsim("formula --kernel naive --N 1000000 --d 128 --cache lab");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "lab formula:"));
	assert_non_null(strstr(r.out, "FLOPs"));
	result_free(&r);
	r = memsim("native --kernel naive --N 96 --d 24 --check");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "check: max error"));
	assert_non_null(strstr(r.out, "pass"));
	result_free(&r);
}

static int
lines_of(const char *path)
{
	char *text = slurp_text(path);
	int n = 0;

	for (char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	return n;
}

/* The report of `run` less what may differ between a computing and a trace-only run: the
 * command, the timing and memory fields, and config.trace_only (checked to be want). */
static cJSON *
report_without_timing(const char *name, bool want)
{
	char path[700], *text;
	cJSON *root, *cfg;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp_text(path);
	root = cJSON_Parse(text);
	free(text);
	assert_non_null(root);
	cfg = cJSON_GetObjectItem(root, "config");
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(cfg, "trace_only")));
	assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(cfg, "trace_only")), want);
	cJSON_DeleteItemFromObject(cfg, "trace_only");
	cJSON_DeleteItemFromObject(root, "command");
	cJSON_DeleteItemFromObject(root, "traced_seconds");
	cJSON_DeleteItemFromObject(root, "peak_rss_bytes");
	return root;
}

/* --trace-only: the same report but for config.trace_only and timing; arrays larger than
 * memory pass the option checks; a sweep keys its rows and records its command with it. */
static void
test_trace_only(void **state)
{
	static const char *const runs[] = {
		"--kernel naive --N 200 --heads 2 --dtype fp16 --causal --cache h100",
		"--kernel flash1 --N 150 --Br 48 --Bc 32 --cache L1=8K:4:64,L2=64K:8:64",
	};
	char path[700], *text;
	struct result r;
	cJSON *a, *b;

	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		r = memsim("run %s --json to-a.json", runs[i]);
		assert_int_equal(r.rc, 0);
		result_free(&r);
		r = memsim("run %s --trace-only --json to-b.json", runs[i]);
		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "traced (trace-only) in"));
		result_free(&r);
		a = report_without_timing("to-a.json", false);
		b = report_without_timing("to-b.json", true);
		if (!cJSON_Compare(a, b, true))
			fail_msg("run %s: the trace-only report differs", runs[i]);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	/* 256 GiB of S: refused for a computing run; trace-only goes on to the next check. */
	expect_error("run --kernel naive --N 65536 --heads 32 --dtype fp16 --cache L1=1K:3:64", 2,
		     "the arrays and tiles need");
	expect_error("run --kernel naive --N 65536 --heads 32 --dtype fp16 --cache L1=1K:3:64 "
		     "--trace-only",
		     2, "--cache: L1:");
	expect_error("run --kernel naive --N 1099511627776 --trace-only", 2,
		     "more than 2^64 bytes");
	expect_error("sweep --out to-x --kernel naive --formula-only --trace-only", 2,
		     "--trace-only simulates");

	r = memsim("sweep --out to-sw --kernel naive,flash2 --N 64,96 --cache h100 --trace-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/to-sw/results.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "seed=1 simulated trace-only\""));
	assert_non_null(strstr(text, "\"trace_only\":true"));
	assert_null(strstr(text, "\"trace_only\":false"));
	free(text);
	snprintf(path, sizeof(path), "%s/to-sw/manifest.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "--trace-only"));
	free(text);
	/* The exactness summary counts the runs equal to the byte (h100 is set-associative:
	 * the interval's verdict, yet these small runs are equal to the byte). */
	r = memsim("table to-sw --exact");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "byte-equal"));
	assert_non_null(strstr(r.out, "naive        2           2"));
	result_free(&r);
}

/* A sweep interrupted mid-way keeps every finished row; --resume runs only the rest; shards
 * merge into the same set of rows. */
static void
test_sweep_resume_merge(void **state)
{
	char path[700], cmd[1600];
	struct result r;
	int before, after;

	(void)state;
	/* Interrupt a sweep a moment after it starts (several rows take longer than that). */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && (%s sweep --out sw --kernel naive,flash2 --N 512:2048:x2 --dtype "
		 "fp32,fp16 --cache i5-8250u --jobs 2 >/dev/null 2>&1 & pid=$!; " WAIT_FOR_ROW(
			 "sw") " kill -INT $pid; wait $pid; echo $? > sw.rc)",
		 tmpdir, MEMSIM_BIN);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/sw/results.json", tmpdir);
	before = lines_of(path);
	/* Interrupted after its first row: rows kept, not all of them, exit 1. */
	assert_true(before >= 1 && before < 12);
	{
		char rcpath[700], *rc;

		snprintf(rcpath, sizeof(rcpath), "%s/sw.rc", tmpdir);
		rc = slurp_text(rcpath);
		assert_string_equal(rc, "1\n");
		free(rc);
	}
	/* Every kept line is a whole JSON object. */
	{
		char *text = slurp_text(path), *save = NULL;

		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			cJSON *o = cJSON_Parse(l);

			assert_non_null(o);
			assert_non_null(cJSON_GetObjectItem(o, "key"));
			cJSON_Delete(o);
		}
		free(text);
	}
	/* A new sweep into the same directory refuses to overwrite it... */
	expect_error("sweep --out sw --kernel naive --N 512", 2, "pass --resume");
	/* ... --resume finishes it without repeating a row. */
	r = memsim("sweep --out sw --kernel naive,flash2 --N 512:2048:x2 --dtype fp32,fp16 "
		   "--cache i5-8250u --resume");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	after = lines_of(path);
	assert_int_equal(after, 12);
	snprintf(path, sizeof(path), "%s/sw/results.csv", tmpdir);
	assert_int_equal(lines_of(path), 13);
	snprintf(path, sizeof(path), "%s/sw/manifest.json", tmpdir);
	{
		char *m = slurp_text(path);
		cJSON *o = cJSON_Parse(m);

		assert_non_null(o);
		assert_non_null(cJSON_GetObjectItem(o, "date"));
		assert_non_null(cJSON_GetObjectItem(o, "versions"));
		assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "hardware"), "caches"));
		assert_non_null(cJSON_GetObjectItem(o, "seed"));
		assert_non_null(cJSON_GetObjectItem(o, "command"));
		cJSON_Delete(o);
		free(m);
	}
	/* Shards: two halves, merged, give the 12 rows again. */
	r = memsim("sweep --out s0 --kernel naive,flash2 --N 512:2048:x2 --dtype fp32,fp16 "
		   "--cache i5-8250u --shard 0/2 --formula-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("sweep --out s1 --kernel naive,flash2 --N 512:2048:x2 --dtype fp32,fp16 "
		   "--cache i5-8250u --shard 1/2 --formula-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("merge --out sm s0 s1 s0");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "merged 12 runs (6 duplicates dropped)"));
	result_free(&r);
	r = memsim("table sw");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "within 30%, in regime"));
	assert_non_null(strstr(r.out, "crossover:"));
	result_free(&r);
	(void)before;
}

/* lines_of() of a file in tmpdir. */
static int
lines_of_in(const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return lines_of(path);
}

/* A row's key (sorted_rows()). */
static char *
key_of(cJSON *row)
{
	return strdup(cJSON_GetStringValue(cJSON_GetObjectItem(row, "key")));
}

/* A sweep's manifest records the sweep as one command (lists spelled out, a --cache-sweep
 * expanded, the shard): run into another directory, it gives the same configurations. */
static void
test_sweep_command(void **state)
{
	char path[700], cmd[4096], *m, *a, *b;
	cJSON *o;
	const char *sc;
	struct result r;

	(void)state;
	r = memsim("sweep --out sc-a --kernel naive,flash1 --N 256:1024:x2 --d 32,64 --Bc 32 "
		   "--causal=no,yes --kv-heads 1 --heads 2 --cache L1=32K:full:64,tiles=scratch "
		   "--cache-sweep L1=32K:128K:x2 --shard 1/3 --formula-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sc-a/manifest.json", tmpdir);
	m = slurp_text(path);
	o = cJSON_Parse(m);
	assert_non_null(o);
	sc = cJSON_GetStringValue(cJSON_GetObjectItem(o, "sweep_command"));
	assert_non_null(sc);
	assert_non_null(strstr(sc, "--out sc-a "));
	assert_non_null(strstr(sc, "--shard 1/3"));
	/* The same command into sc-b. */
	snprintf(cmd, sizeof(cmd), "%s", sc + strlen("memsim "));
	memcpy(strstr(cmd, "--out sc-a") + strlen("--out sc-"), "b", 1);
	r = memsim("%s", cmd);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	a = sorted_rows("sc-a", key_of);
	b = sorted_rows("sc-b", key_of);
	assert_true(strlen(a) > 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
	cJSON_Delete(o);
	free(m);
}

/* A row without what differs between two ways of running them (times, memory, the row's index
 * and its "onepass" note) (sorted_rows()). */
static char *
stable_row(cJSON *row)
{
	cJSON_DeleteItemFromObject(row, "traced_seconds");
	cJSON_DeleteItemFromObject(row, "peak_rss_bytes");
	cJSON_DeleteItemFromObject(row, "index");
	cJSON_DeleteItemFromObject(row, "onepass");
	return cJSON_PrintUnformatted(row);
}

/* manifest.json's config.onepass[i].key of a sweep directory, or "". */
static char *
onepass_of(const char *dir, int i, const char *key)
{
	static char buf[512];
	char path[700], *m;
	cJSON *o, *e;

	snprintf(path, sizeof(path), "%s/%s/manifest.json", tmpdir, dir);
	m = slurp_text(path);
	assert_non_null(m);
	o = cJSON_Parse(m);
	e = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "config"), "onepass"), i);
	snprintf(buf, sizeof(buf), "%s",
		 e ? cJSON_GetStringValue(cJSON_GetObjectItem(e, key)) : "");
	cJSON_Delete(o);
	free(m);
	return buf;
}

/* A --cache-sweep in one pass (fan-out, stack) gives the rows of separate runs, and the
 * manifest and rows say which pass ran; where one pass does not apply (an inclusive L2,
 * caches that differ above the swept level), each size runs on its own. Set sampling is
 * labelled and refused where there are no sets to sample. */
static void
test_sweep_onepass(void **state)
{
	static const char *specs[] = { "L1=4K:4:64,L2=64K:full:64", "L1=4K:4:64,L2=64K:8:64",
				       "L1=4K:4:64,L2=64K:8:64:fifo" };
	static const char *methods[] = { "stack", "stack", "fanout" };
	struct result r;

	(void)state;
	for (int i = 0; i < 3; i++) {
		char *a, *b;

		r = memsim("sweep --out op-a%d --kernel naive,flash2 --N 96 --d 32 --cache %s "
			   "--cache-sweep L2=8K:64K:x2 --trace-only --no-flush --jobs 2",
			   i, specs[i]);
		assert_int_equal(r.rc, 0);
		result_free(&r);
		r = memsim("sweep --out op-b%d --kernel naive,flash2 --N 96 --d 32 --cache %s "
			   "--cache-sweep L2=8K:64K:x2 --trace-only --no-flush --separate-runs",
			   i, specs[i]);
		assert_int_equal(r.rc, 0);
		result_free(&r);
		{
			char da[16], db[16];

			snprintf(da, sizeof(da), "op-a%d", i);
			snprintf(db, sizeof(db), "op-b%d", i);
			a = sorted_rows(da, stable_row);
			b = sorted_rows(db, stable_row);
			assert_int_equal(strlen(a) > 0, 1);
			assert_string_equal(a, b);
			assert_string_equal(onepass_of(da, 0, "method"), methods[i]);
			assert_string_equal(onepass_of(db, 0, "method"), "separate");
		}
		free(a);
		free(b);
	}
	r = memsim("sweep --out op-c --kernel naive --N 96 --d 32 --cache "
		   "L1=4K:4:64,L2=64K:8:64:incl --cache-sweep L2=8K:64K:x2 --trace-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_string_equal(onepass_of("op-c", 0, "method"), "separate");
	assert_non_null(strstr(onepass_of("op-c", 0, "why"), "inclusive"));
	/* Levels above that change: separate runs, no group at all. */
	r = memsim("sweep --out op-d --kernel naive --N 96 --d 32 --cache L1=4K:4:64,L2=64K:8:64 "
		   "--cache L1=8K:4:64,L2=128K:8:64 --trace-only");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_string_equal(onepass_of("op-d", 0, "method"), "");
	/* Sampling: labelled, and refused where it cannot sample. */
	r = memsim("run --kernel naive --N 128 --d 32 --trace-only --cache L1=8K:4:64,L2=64K:8:64 "
		   "--sample-sets 4");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "estimate: set sampling, 1 set in 4"));
	result_free(&r);
	expect_error("run --kernel naive --cache L1=32K:full:64 --sample-sets 4", 2,
		     "L1 is fully associative (one set)");
	expect_error("run --kernel naive --cache L1=32K:8:64 --sample-sets 6", 2,
		     "not a power of two");
	expect_error("sweep --out op-e --kernel naive --cache L1=1K:8:64 --sample-sets 4", 2,
		     "L1 has 2 sets");
	/* On replay too: labelled in the text and JSON, the same refusals. */
	r = memsim("replay %s --cache L1=4K:4:64,L2=64K:8:64 --sample-sets 4 --json -", DIN);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\"estimate\""));
	assert_non_null(strstr(r.out, "\"sample_sets\""));
	result_free(&r);
	r = memsim("replay %s --cache L1=4K:4:64 --sample-sets 4", DIN);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "estimate: set sampling, 1 set in 4"));
	result_free(&r);
	expect_error("replay " DIN " --cache L1=4K:full:64 --sample-sets 4", 2,
		     "L1 is fully associative (one set)");
	expect_error("replay " DIN " --cache L1=4K:4:64 --sample-sets 0", 2, "not a power of two");
}

/* memsim report refuses a results file it cannot read, naming path and line; table too. */
static void
test_report_bad_results(void **state)
{
	struct result r;

	(void)state;
	r = memsim("sweep --out rb/lab --kernel naive --N 256 --cache lab");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	{
		char cmd[800];

		snprintf(cmd, sizeof(cmd),
			 "cd %s && printf 'not json\\n{}\\n' >> rb/lab/results.json", tmpdir);
		assert_int_equal(system(cmd), 0);
	}
	expect_error("report rb", 1, "rb/lab/results.json:2: not a JSON object");
	expect_error("table rb/lab", 1, "rb/lab/results.json:2: not a JSON object");
}

/* --json never replaces what is not a regular file: a device is written in place (a full one
 * is an error, exit 1), a symlink stays a link to the file it names; a regular file is
 * replaced whole. */
static void
test_json_targets(void **state)
{
	char cmd[1200], path[700];
	struct stat st;
	struct result r;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && rm -f jfull jnull jlink jtarget && ln -s /dev/full jfull && "
		 "ln -s /dev/null jnull && echo old > jtarget && ln -s jtarget jlink",
		 tmpdir);
	assert_int_equal(system(cmd), 0);
	expect_error("formula --kernel naive --json jfull", 1,
		     "cannot write jfull: No space left on device");
	snprintf(path, sizeof(path), "%s/jfull", tmpdir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	r = memsim("run --kernel naive --N 64 --json jnull");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/jnull", tmpdir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	r = memsim("formula --kernel flash2 --json jlink");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/jlink", tmpdir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	snprintf(path, sizeof(path), "%s/jtarget", tmpdir);
	{
		char *text = slurp_text(path);
		cJSON *o = cJSON_Parse(text);

		assert_non_null(o);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
					    cJSON_GetObjectItem(o, "config"), "kernel")),
				    "flash2");
		cJSON_Delete(o);
		free(text);
	}
	/* A device node itself, where this machine lets us make one (root): written in place. */
	snprintf(cmd, sizeof(cmd), "cd %s && rm -f jdev && mknod jdev c 1 7 2>/dev/null", tmpdir);
	if (system(cmd) == 0) {
		expect_error("replay " DIN " --cache lab --json jdev", 1, "cannot write jdev");
		snprintf(path, sizeof(path), "%s/jdev", tmpdir);
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	/* No temporary file is left behind. */
	snprintf(cmd, sizeof(cmd), "ls %s | grep -q '\\.tmp'", tmpdir);
	assert_int_not_equal(system(cmd), 0);
}

/* Runs "memsim ARGS" with standard output on /dev/full; exit 1 and stderr's last line with msg
 * (its only line unless the command prints its table there, as with --json -), every byte
 * printable (no stray buffer bytes). */
static void
expect_full_stdout(const char *args, const char *msg)
{
	bool table_on_stderr = strstr(args, "--json -") != NULL;
	const char *last;
	char cmd[2048];
	int status;
	char *err;

	snprintf(cmd, sizeof(cmd), "cd %s && %s %s >/dev/full 2>%s", tmpdir, MEMSIM_BIN, args,
		 err_path);
	status = system(cmd);
	err = slurp_text(err_path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
		fail_msg("memsim %s >/dev/full: status %d, expected exit 1", args, status);
	last = err + strlen(err) - 1;
	while (last > err && last[-1] != '\n')
		last--;
	if (!strstr(last, msg) || (!table_on_stderr && last != err))
		fail_msg("memsim %s >/dev/full: stderr '%s' does not end with one line with '%s'",
			 args, err, msg);
	for (const char *c = err; *c; c++)
		if ((*c < ' ' || *c > '~') && *c != '\n')
			fail_msg("memsim %s >/dev/full: stderr has byte %#x", args,
				 (unsigned char)*c);
	free(err);
}

/* Standard output that cannot be written is an error; an output directory that is a file is
 * named as such. */
static void
test_output_errors(void **state)
{
	(void)state;
	expect_full_stdout("presets", "cannot write standard output: No space left on device");
	expect_full_stdout("help", "cannot write standard output");
	expect_full_stdout("formula --kernel naive", "cannot write standard output");
	expect_full_stdout("replay " DIN " --cache lab --json -",
			   "cannot write standard output: No space left on device");
	expect_full_stdout("run --kernel flash2 --N 64 --json -", "cannot write standard output");
	write_file("afile", "x\n");
	expect_error("sweep --out afile --kernel naive --N 64", 1,
		     "cannot create afile: Not a directory");
	expect_error("sweep --out afile/sub --kernel naive --N 64", 1,
		     "cannot create afile/sub: Not a directory");
	expect_error("profile --out afile --T 64", 1, "afile: Not a directory");
	expect_error("study --out afile --small", 1, "cannot create afile: Not a directory");
}

/* bench --shape naive: one query row of naive attention, a quarter of its accesses missing
 * L1, and the floor (the binary file read without the model) beside the replay, and the din
 * file parsed without the model, in the table and the JSON. */
static void
test_bench_naive(void **state)
{
	struct result r;
	char path[800], *json;
	cJSON *root, *runs, *floor;
	double miss;

	(void)state;
	if (!bench_begin())
		return;
	r = memsim("bench --shape naive --accesses 1 --repeat 1 --dir . --json naive.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "memsim bench: 134208 accesses, naive trace, cache "));
	assert_non_null(strstr(r.out, "memsim binary, read only (the floor)"));
	assert_non_null(strstr(r.out, "binary replay/floor: "));
	assert_non_null(strstr(r.out, "din text, parse only (no model)"));
	assert_non_null(strstr(r.out, "din parse: "));
	assert_non_null(strstr(r.out, "binary floor/raw read: "));
	assert_non_null(strstr(r.out, "binary replay, 2 threads/1 thread: "));
	assert_non_null(strstr(r.out, "counters identical across the four: yes"));
	result_free(&r);
	snprintf(path, sizeof(path), "%s/naive.json", tmpdir);
	json = slurp_text(path);
	root = cJSON_Parse(json);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "shape")->valuestring, "naive");
	assert_null(cJSON_GetObjectItem(root, "pad")); /* no V^T rows to pad */
	miss = cJSON_GetObjectItem(root, "l1_miss_percent")->valuedouble;
	if (miss < 22 || miss > 30)
		fail_msg("naive: L1 miss rate %.2f%%, not about a quarter", miss);
	assert_true(cJSON_GetObjectItem(root, "replay_over_floor")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(root, "floor_over_raw_read")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(root, "threads2_over_threads1")->valuedouble > 0);
	runs = cJSON_GetObjectItem(root, "runs");
	assert_int_equal(cJSON_GetArraySize(runs), 8);
	floor = cJSON_GetArrayItem(runs, 3);
	assert_string_equal(cJSON_GetObjectItem(floor, "source")->valuestring,
			    "memsim binary, read only (the floor)");
	assert_true(cJSON_GetObjectItem(floor, "accesses_per_second")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(floor, "best_user_seconds")->valuedouble >= 0);
	floor = cJSON_GetArrayItem(runs, 4); /* the din file decoded without the model */
	assert_string_equal(cJSON_GetObjectItem(floor, "source")->valuestring,
			    "din text, parse only (no model)");
	assert_true(cJSON_GetObjectItem(floor, "accesses_per_second")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(root, "din_parse_over_raw_read")->valuedouble > 0);
	cJSON_Delete(root);
	free(json);
	bench_end();
}

/* memsim bench replays its three traces with the same counters, as a table or one JSON
 * document on standard output; keeps its files in a fresh directory of its own (mode 0700, a
 * name no one can predict) inside --dir, and leaves nothing behind without --keep; bad options
 * exit 2 in one line. */
static void
test_bench_files(void **state)
{
	char cmd[1200], path[800];
	struct result r;
	struct stat st;
	char *list;
	cJSON *o;

	(void)state;
	if (!bench_begin())
		return;
	r = memsim("bench --accesses 50000 --repeat 1 --dir %s", tmpdir);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "accesses/s"));
	assert_non_null(strstr(r.out, "counters identical across the four: yes"));
	result_free(&r);
	r = memsim("bench --accesses 20000 --repeat 1 --json -");
	o = cJSON_Parse(r.out);
	if (r.rc != 0 || !o || !cJSON_IsObject(o) || strlen(r.err) < 20)
		fail_msg("bench --json -: exit %d, stdout %.200s", r.rc, r.out);
	cJSON_Delete(o);
	result_free(&r);
	expect_error("bench --accesses 0", 2, "--accesses");
	expect_error("bench --shape nave", 2, "--shape: 'nave' is not blocked, unblocked or naive");
	expect_error("bench --trace-only", 2, "it needs --kernels");
	snprintf(cmd, sizeof(cmd), "cd %s && rm -rf bd && mkdir bd", tmpdir);
	assert_int_equal(system(cmd), 0);
	r = memsim("bench --accesses 20000 --repeat 1 --dir bd");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(cmd, sizeof(cmd), "cd %s && ls -A bd > bd.list", tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/bd.list", tmpdir);
	list = slurp_text(path);
	assert_string_equal(list, "");
	free(list);
	r = memsim("bench --accesses 20000 --repeat 1 --dir bd --keep");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "the trace files are in bd/memsim-bench-"));
	result_free(&r);
	snprintf(cmd, sizeof(cmd), "cd %s && ls -A bd > bd.list", tmpdir);
	assert_int_equal(system(cmd), 0);
	list = slurp_text(path);
	assert_int_equal(strncmp(list, "memsim-bench-", 13), 0);
	assert_int_equal(strlen(list), strlen("memsim-bench-XXXXXX\n"));
	list[strlen(list) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/bd/%s", tmpdir, list);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/bd/%s/trace.mtr", tmpdir, list);
	assert_int_equal(access(path, F_OK), 0);
	free(list);
	bench_end();
}

/* bench --kernels measures, in one run, each kernel natively, traced, trace-only and (with
 * valgrind) under Cachegrind, and names each ratio's target; its reports stay in its own
 * directory under TMPDIR, removed at the end. */
static void
test_bench_kernels(void **state)
{
	static const char *const keys[] = { "native_seconds",
					    "traced_seconds",
					    "traced_over_native",
					    "trace_only_seconds",
					    "trace_only_over_native",
					    "accesses",
					    "traced_accesses_per_second",
					    NULL };
	char cmd[1200], path[800], *list;
	const char *saved = memsim_env;
	struct result r;
	cJSON *o, *k;
	int n = 0;

	(void)state;
	if (!bench_begin())
		return;
	snprintf(cmd, sizeof(cmd), "cd %s && rm -rf bk && mkdir bk", tmpdir);
	assert_int_equal(system(cmd), 0);
	memsim_env = "TMPDIR=bk";
	r = memsim("bench --kernels --N 64 --json -");
	memsim_env = saved;
	if (r.rc != 0)
		fail_msg("bench --kernels: exit %d: %s", r.rc, r.err);
	assert_non_null(strstr(r.err, "traced/native"));
	assert_non_null(strstr(r.err, "< 10: "));
	assert_non_null(strstr(r.err, "trace-only/native"));
	assert_non_null(strstr(r.err, "cachegrind/traced"));
	assert_non_null(strstr(r.err, "accesses/s, traced (model)"));
	o = cJSON_Parse(r.out);
	assert_non_null(o);
	cJSON_ArrayForEach (k, cJSON_GetObjectItem(o, "kernels")) {
		for (int i = 0; keys[i]; i++)
			if (!cJSON_IsNumber(cJSON_GetObjectItem(k, keys[i])) ||
			    cJSON_GetObjectItem(k, keys[i])->valuedouble <= 0)
				fail_msg("bench --kernels: no positive '%s'", keys[i]);
		assert_true(cJSON_GetObjectItem(k, "traced_over_native_target")->valuedouble == 10);
		assert_true(cJSON_GetObjectItem(k, "trace_only_over_native_target")->valuedouble ==
			    1);
		n++;
	}
	assert_int_equal(n, 2);
	cJSON_Delete(o);
	result_free(&r);
	snprintf(cmd, sizeof(cmd), "cd %s && ls -A bk > bk.list", tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/bk.list", tmpdir);
	list = slurp_text(path);
	assert_string_equal(list, "");
	free(list);
	expect_error("bench --instructions", 2, "it needs --kernels");
	bench_end();
}

/* --json - puts one JSON document on standard output: the readable table goes to stderr. */
static void
test_json_stdout(void **state)
{
	static const char *const cmds[] = {
		"run --kernel naive --N 64 --json -",
		"formula --kernel flash2 --json -",
		"replay " DIN " --cache lab --json -",
		NULL,
	};

	(void)state;
	for (int i = 0; cmds[i]; i++) {
		struct result r = memsim("%s", cmds[i]);
		cJSON *o = cJSON_Parse(r.out);

		if (r.rc != 0 || !o || !cJSON_IsObject(o))
			fail_msg("memsim %s: exit %d, stdout is not one JSON object: %.200s",
				 cmds[i], r.rc, r.out);
		if (strlen(r.err) < 20)
			fail_msg("memsim %s: the table did not go to stderr", cmds[i]);
		cJSON_Delete(o);
		result_free(&r);
	}
}

/* A row's DRAM bytes, as "key=read,write" (sorted_rows()). */
static char *
dram_of(cJSON *row)
{
	cJSON *d = cJSON_GetObjectItem(row, "dram");
	char buf[1400];

	snprintf(buf, sizeof(buf), "%s=%.0f,%.0f",
		 cJSON_GetStringValue(cJSON_GetObjectItem(row, "key")),
		 cJSON_GetNumberValue(cJSON_GetObjectItem(d, "read_bytes")),
		 cJSON_GetNumberValue(cJSON_GetObjectItem(d, "write_bytes")));
	return strdup(buf);
}

/* A sweep's rows do not depend on the order its runs happen in, nor on the process: one
 * worker running them in turn, two workers sharing them, and the shards apart give the same
 * bytes for every configuration on set-associative presets. */
static void
test_sweep_reproducible(void **state)
{
	static const char *const dirs[] = { "rp1", "rp2", "rs0", "rs1" };
	static const char *const extra[] = { "--jobs 1", "--jobs 2", "--shard 0/2 --jobs 1",
					     "--shard 1/2 --jobs 1" };
	char *ref = NULL;

	(void)state;
	for (int i = 0; i < 4; i++) {
		struct result r = memsim("sweep --out %s --kernel naive,flash2,flash1 --N 192,320 "
					 "--d 48 --Bc 32 --cache i5-8250u --cache "
					 "L1=16K:4:64,L2=64K:2:64 %s",
					 dirs[i], extra[i]);

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	{
		struct result r = memsim("merge --out rsm rs0 rs1");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	ref = sorted_rows("rp1", dram_of);
	assert_true(strlen(ref) > 0);
	{
		char *b = sorted_rows("rp2", dram_of), *c = sorted_rows("rsm", dram_of);

		assert_string_equal(ref, b);
		assert_string_equal(ref, c);
		free(b);
		free(c);
	}
	free(ref);
	expect_error("run --kernel naive --N 2147483648 --d 1 --dtype fp16 --softmax-separate", 2,
		     "more than 2^64 bytes");
}

/* The first cache level's counters of the first row of DIR/results.json, or of a report
 * (DIR NULL: text), as one JSON text; the caller frees. */
static char *
level0_of(const char *dir, const char *text)
{
	char path[700], *data = NULL, *out;
	cJSON *o;

	if (dir) {
		snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
		data = slurp_text(path);
		data[strcspn(data, "\n")] = '\0';
	}
	o = cJSON_Parse(dir ? data : text);
	assert_non_null(o);
	out = cJSON_PrintUnformatted(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "levels"), 0));
	cJSON_Delete(o);
	free(data);
	return out;
}

/* --seed drives random replacement in a sweep as in a run: a sweep's row equals memsim run's
 * with the same seed, one pass or not, and another seed gives other counters. */
static void
test_sweep_seed(void **state)
{
	static const char *const cfg = "--kernel flash2 --N 3 --d 64 --Br 32 --Bc 3 --dtype bf16 "
				       "--cache L1=2K:2:64:random:wb:nwa";
	char *runs[2];

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct result r = memsim("run %s --seed %d --json -", cfg, i ? 2 : 803122);
		char dir[16];

		assert_int_equal(r.rc, 0);
		runs[i] = level0_of(NULL, r.out);
		result_free(&r);
		for (int sep = 0; sep < 2; sep++) {
			char *row;

			snprintf(dir, sizeof(dir), "sd%d%d", i, sep);
			/* the first row is of L1=2K, alone or in one pass with 4K */
			r = memsim("sweep --out %s %s --seed %d --jobs 1%s", dir, cfg,
				   i ? 2 : 803122, sep ? " --cache-sweep L1=2K,4K" : "");
			assert_int_equal(r.rc, 0);
			result_free(&r);
			row = level0_of(dir, NULL);
			assert_string_equal(row, runs[i]);
			free(row);
		}
	}
	assert_string_not_equal(runs[0], runs[1]);
	free(runs[0]);
	free(runs[1]);
}

#define SMALL_SWEEP "sweep --kernel naive,flash2 --N 128,256,512 --cache i5-8250u --jobs 1"

/* A full disk (here a file-size limit) stops a sweep with exit 1 naming the file, keeps the
 * whole rows written before (no torn one), and --resume finishes it; an empty results.json
 * resumes with one CSV header. */
static void
test_sweep_full_disk(void **state)
{
	char path[700];
	char *text, *err;
	int lines;

	(void)state;
	assert_int_equal(sh("rm -rf fd && (ulimit -f 40; trap '' XFSZ; %s " SMALL_SWEEP
				   " --out fd) 2>fd.err",
				   MEMSIM_BIN),
			 1);
	snprintf(path, sizeof(path), "%s/fd.err", tmpdir);
	err = slurp_text(path);
	assert_non_null(strstr(err, "cannot write fd/results.json: File too large"));
	free(err);
	snprintf(path, sizeof(path), "%s/fd/results.json", tmpdir);
	text = slurp_text(path);
	lines = lines_of(path);
	assert_true(lines >= 1 && lines < 6);
	assert_true(text[strlen(text) - 1] == '\n');
	free(text);
	{
		struct result r = memsim(SMALL_SWEEP " --out fd --resume");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	assert_int_equal(lines_of(path), 6);
	snprintf(path, sizeof(path), "%s/fd/results.csv", tmpdir);
	assert_int_equal(lines_of(path), 7);
	/* An empty results.json: --resume runs everything, under one CSV header. */
	assert_int_equal(sh("rm -rf fe && mkdir fe && : > fe/results.json"), 0);
	{
		struct result r = memsim(SMALL_SWEEP " --out fe --resume");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	snprintf(path, sizeof(path), "%s/fe/results.csv", tmpdir);
	assert_int_equal(lines_of(path), 7);
	assert_int_equal(sh("grep -c '^index,' fe/results.csv | grep -qx 1"), 0);
}

/* A second sweep into a directory in use is refused, naming the first one's pid; killing a
 * sweep kills its workers too. */
static void
test_sweep_lock_and_workers(void **state)
{
	char path[700];
	char *pid;

	(void)state;
	/* A sweep long enough to be caught running: two workers on large runs. */
	assert_int_equal(sh("rm -rf lk && (%s sweep --out lk --kernel naive --N 3000,3100 "
				   "--cache i5-8250u --jobs 2 >/dev/null 2>&1 & echo $! > lk.pid; "
				   "sleep 1)",
				   MEMSIM_BIN),
			 0);
	snprintf(path, sizeof(path), "%s/lk.pid", tmpdir);
	pid = slurp_text(path);
	pid[strcspn(pid, "\n")] = '\0';
	{
		struct result r = memsim("sweep --out lk --kernel naive --N 3000,3100 --cache "
					 "i5-8250u --resume");
		char want[64];

		snprintf(want, sizeof(want), "lk is in use by another memsim (pid %s)", pid);
		assert_int_equal(r.rc, 1);
		if (!strstr(r.err, want))
			fail_msg("stderr '%s' lacks '%s'", r.err, want);
		result_free(&r);
	}
	/* SIGKILL the parent: no worker of it may be left. */
	assert_int_equal(
		sh("kill -KILL %s; sleep 0.5; ! pgrep -P %s >/dev/null && "
			  "! pgrep -f '[s]weep --out lk --kernel naive --N 3000,3100 --cache "
			  "i5-8250u --jobs 2' >/dev/null",
			  pid, pid),
		0);
	free(pid);
}

/* memsim merge refuses to overwrite a shard or an earlier result, and shards of different
 * sweeps; every shard there, the merged manifest records the whole sweep as one command. */
static void
test_merge_checks(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		struct result r = memsim("sweep --out m%d --kernel naive,flash2 --N 256,512 "
					 "--shard %d/2 --formula-only",
					 i, i);

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	{
		struct result r = memsim("sweep --out mx --kernel naive,flash2 --N 256,512 "
					 "--shard 1/2 --seed 7 --formula-only");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	expect_error("merge --out m0 m0 m1", 2, "--out m0 is also a shard");
	assert_int_equal(lines_of_in("m0/results.json"), 2);
	expect_error("merge --out mm m0 mx", 2, "m0 and mx are shards of different sweeps");
	expect_error("merge --out mm m0 nosuch", 2, "nosuch is not a directory");
	{
		struct result r = memsim("merge --out mm m0 m1");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	expect_error("merge --out mm m0 m1", 2, "mm/results.json exists");
	assert_int_equal(sh("grep -q '\"sweep_command\":.*--out mm --kernel naive,flash2' "
				   "mm/manifest.json && ! grep -q -- '--shard' mm/manifest.json"),
			 0);
	expect_error("sweep --out ms --kernel naive --shard 0/2xyz", 2, "--shard: '0/2xyz'");
	expect_error("run --kernel naive --cache 'L1=32K:8:64\nL2=1M'", 2, "\\x0aL2=1M");
}

/* memsim native --papi: exit 0 and PAPI's status and reason; on a kernel without a CPU PMU
 * (a VM without a virtual PMU) the no-PMU reason. Built without PAPI: exit 1, the hint. */
static void
test_native_papi(void **state)
{
#if HAVE_PAPI
	struct result r = memsim("native --kernel flash2 --N 64 --papi");
	bool no_cpu_pmu = access("/sys/bus/event_source/devices/cpu", F_OK) != 0 &&
			  access("/sys/bus/event_source/devices/cpu_core", F_OK) != 0;

	(void)state;
	assert_int_equal(r.rc, 0);
	if (no_cpu_pmu || strstr(r.out, "papi: no-pmu: "))
		assert_non_null(strstr(r.out, "papi: no-pmu: no hardware PMU: "));
	if (strstr(r.out, "papi: no-pmu: "))
		assert_non_null(strstr(r.out, "PAPI_ENOEVNT (Event does not exist)"));
	else if (!strstr(r.out, "papi: counted: ") && !strstr(r.out, "papi: no-permission: ") &&
		 !strstr(r.out, "papi: component-disabled: "))
		fail_msg("no PAPI status line in '%s'", r.out);
	assert_non_null(strstr(r.out, "papi: strategy "));
	assert_non_null(strstr(r.out, " page faults ("));
	result_free(&r);
#else
	(void)state;
	expect_error("native --kernel flash2 --N 64 --papi", 1,
		     "memsim was built without PAPI (install libpapi-dev and rebuild)");
#endif
}

/* The JSON document in tmpdir/name; fails the test when there is none. */
static cJSON *
must_read_json(const char *name)
{
	cJSON *o = read_json(name);

	if (!o)
		fail_msg("%s is not JSON", name);
	return o;
}

/* A number under key, failing when it is missing or not a number. */
static double
num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("'%s' is missing or not a number", key);
	return v->valuedouble;
}

static const char *
str(const cJSON *o, const char *key)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));

	if (!v)
		fail_msg("'%s' is missing or not a string", key);
	return v;
}

/* memsim ceilings --quick: the documented keys, positive numbers; a second call reuses a
 * consistent file and says so, --refresh measures again, a damaged file is measured again. */
static void
test_ceilings(void **state)
{
	struct result r;
	cJSON *c, *bw, *fl, *k;

	(void)state;
	r = memsim("ceilings --quick --out ceil");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "quick"));
	assert_non_null(strstr(r.out, "bandwidth"));
	assert_null(strstr(r.out, "reusing"));
	result_free(&r);
	c = must_read_json("ceil/ceilings.json");
	assert_non_null(strstr(str(c, "memsim_version"), "."));
	assert_int_equal(strlen(str(c, "date")), 20);
	assert_true(str(c, "date")[10] == 'T' && str(c, "date")[19] == 'Z');
	assert_true(strlen(str(c, "cpu")) > 0);
	assert_true(num(c, "cores") >= 1);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "quick")));
	bw = cJSON_GetObjectItem(c, "bandwidth");
	assert_true(strlen(str(bw, "method")) > 20);
	assert_true(num(bw, "array_bytes") > 0);
	assert_true(num(bw, "array_bytes") * 3 <= 256.0 * 1024 * 1024);
	assert_true(num(bw, "repetitions") >= 1);
	assert_true(num(bw, "one_core_bytes_per_s") > 0);
	assert_true(num(bw, "all_cores_bytes_per_s") > 0);
	assert_true(num(bw, "threads") == num(c, "cores"));
	fl = cJSON_GetObjectItem(c, "peak_flops");
	assert_true(strlen(str(fl, "method")) > 20);
	assert_true(strcmp(str(fl, "isa"), "avx2+fma") == 0 || strcmp(str(fl, "isa"), "sse2") == 0);
	assert_true(num(fl, "one_core_flops_per_s") > 0);
	assert_true(num(fl, "all_cores_flops_per_s") > 0);
	assert_true(num(fl, "threads") == num(c, "cores"));
	/* consistent or not, it says, after 1 to 3 measurements */
	k = cJSON_GetObjectItem(c, "consistency");
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(k, "consistent")));
	assert_true(num(k, "rounds") >= 1 && num(k, "rounds") <= 3);
	assert_true(num(bw, "one_core_spread") >= 0 && num(fl, "all_cores_spread") >= 0);
	cJSON_Delete(c);

	/* A consistent document is reused: numbers given (a busy machine's measurement is
	 * measured again, test_ceilings_inconsistent). */
	memsim_env = "MEMSIM_TEST_CEILINGS=12.5,25,95,190";
	expect_ok("ceilings --quick --out ceil --refresh");
	memsim_env = "";
	r = memsim("ceilings --quick --out ceil --json ceil2.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "reusing "));
	assert_null(strstr(r.out, "measuring"));
	result_free(&r);
	c = must_read_json("ceil2.json");
	assert_true(num(cJSON_GetObjectItem(c, "bandwidth"), "one_core_bytes_per_s") > 0);
	cJSON_Delete(c);

	r = memsim("ceilings --quick --out ceil --refresh");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "reusing"));
	assert_non_null(strstr(r.out, "measuring"));
	result_free(&r);

	write_file("ceil/ceilings.json", "{\"cpu\": 1}\n");
	r = memsim("ceilings --quick --out ceil");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "cannot be reused ('memsim_version' is missing"));
	assert_non_null(strstr(r.out, "measuring"));
	result_free(&r);
	c = must_read_json("ceil/ceilings.json");
	assert_true(num(c, "cores") >= 1);
	cJSON_Delete(c);
}

/* An inconsistent machine fed through MEMSIM_TEST_CEILINGS (2 threads stream 22 GB/s, 1
 * streams 29: the audit's busy machine), into memsim ceilings' own cache directory: measured 3
 * times, then said in the text, the JSON (consistency) and --bandwidth measured's source;
 * memsim ceilings never reuses such a document; a consistent round after an inconsistent one
 * is kept, and said; a bad knob is one line. */
static void
test_ceilings_inconsistent(void **state)
{
	struct result r;
	cJSON *c, *k;

	(void)state;
	memsim_env = "MEMSIM_TEST_CEILINGS=29,22,9.4,18.8";
	r = memsim("ceilings --quick --refresh --json ci.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "WARNING: inconsistent measurement, 3 times in a row: 2 "
				      "threads stream slower than 1: 22.00 against 29.00 GB/s."));
	assert_non_null(strstr(r.out, "memory- or compute-bound verdict drawn from them"));
	assert_non_null(strstr(r.out, "(unreliable: see below)"));
	result_free(&r);
	c = must_read_json("ci.json");
	k = cJSON_GetObjectItem(c, "consistency");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(k, "consistent")));
	assert_true(num(k, "rounds") == 3);
	assert_string_equal(str(k, "why"),
			    "2 threads stream slower than 1: 22.00 against 29.00 GB/s");
	cJSON_Delete(c);

	/* the tokens/s bound at that bandwidth says it is unreliable (memsim ceilings, not
	 * every run, measures again) */
	r = memsim("run --kernel naive --N 64 --d 16 --bandwidth measured --json -");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "warning: --bandwidth measured: "));
	assert_non_null(strstr(r.err, "/cache/memsim/ceilings/"));
	assert_non_null(strstr(r.err, "/ceilings.json is inconsistent (2 threads stream slower "
				      "than 1"));
	assert_null(strstr(r.err, "measuring again")); /* reused, said */
	c = cJSON_Parse(r.out);
	assert_non_null(strstr(str(cJSON_GetObjectItem(c, "per_token"), "bandwidth_source"),
			       "an inconsistent measurement: unreliable"));
	cJSON_Delete(c);
	result_free(&r);

	/* not reused: measured again, consistent now */
	memsim_env = "MEMSIM_TEST_CEILINGS=12.5,25,95,190";
	r = memsim("ceilings --quick");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "/ceilings.json is inconsistent (2 threads stream slower "
				      "than 1: 22.00 against 29.00 GB/s): measuring again"));
	assert_null(strstr(r.out, "WARNING"));
	assert_null(strstr(r.out, "unreliable"));
	result_free(&r);
	assert_int_equal(sh("cat cache/memsim/ceilings/*/ceilings.json > cached.json"), 0);
	c = must_read_json("cached.json");
	k = cJSON_GetObjectItem(c, "consistency");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(k, "consistent")));
	assert_true(num(k, "rounds") == 1);
	assert_string_equal(str(k, "why"), "");
	cJSON_Delete(c);

	/* inconsistent, then consistent: the second round is kept */
	memsim_env = "MEMSIM_TEST_CEILINGS='29,22,9.4,18.8;12.5,25,95,190,0.02'";
	r = memsim("ceilings --quick --refresh");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "note: measured 2 times: the earlier one was inconsistent"));
	assert_non_null(strstr(r.out, "   12.50          25.00"));
	result_free(&r);

	memsim_env = "MEMSIM_TEST_CEILINGS=29,22";
	expect_error("ceilings --quick --refresh", 1,
		     "MEMSIM_TEST_CEILINGS='29,22': round 1 is not 'BW1,BWN,FL1,FLN[,SPREAD]'");
	memsim_env = "";
}

/* tmpdir/dir/report.md, after `memsim report dir`. Caller frees. */
static char *
report_of(const char *dir)
{
	char path[700];

	expect_ok("report %s", dir);
	snprintf(path, sizeof(path), "%s/%s/report.md", tmpdir, dir);
	return slurp_text(path);
}

/* The report over inconsistent ceilings (the test fixture's profile; the ceilings fed through
 * MEMSIM_TEST_CEILINGS) warns before the ridge point, calls the ridge unreliable and marks
 * every bound unconfirmed; the roofline's title and the manifest say so. Consistent ceilings
 * give none of it; an older memsim's, a line saying they were not checked. */
static void
test_report_inconsistent_ceilings(void **state)
{
	char *md;
	cJSON *m;

	(void)state;
	assert_int_equal(sh("cp -r %s/plot/study rc", TEST_DATA_DIR), 0);
	md = report_of("rc");
	assert_non_null(strstr(md, "These ceilings were measured by a memsim that did not check"));
	assert_null(strstr(md, "inconsistent"));
	free(md);

	memsim_env = "MEMSIM_TEST_CEILINGS=29,22,9.4,18.8";
	expect_ok("ceilings --quick --out rc");
	memsim_env = "";
	md = report_of("rc");
	assert_non_null(strstr(md, "**Warning: these ceilings are inconsistent.** `memsim "
				   "ceilings` measured them 3 times, inconsistent each time; the "
				   "last time: 2 threads stream slower than 1: 22.00 against 29.00 "
				   "GB/s."));
	assert_true(strstr(md, "**Warning") < strstr(md, "the ridge sits at"));
	assert_non_null(strstr(md, "FLOP/byte (unreliable: the ceilings are inconsistent)"));
	assert_non_null(strstr(md, "| compute (unconfirmed) |"));
	assert_null(strstr(md, "| compute |"));
	assert_null(strstr(md, "| memory |"));
	assert_non_null(
		strstr(md, ": memory-bound if the ceilings held (they are inconsistent): "));
	assert_null(strstr(md, ": memory-bound: "));
	free(md);
	/* the roofline's title too (its gnuplot script is written with or without gnuplot) */
	assert_int_equal(sh("%s plot rc --format svg >/dev/null 2>&1; grep -q 'ceilings measured "
			    "on .*, inconsistent: unreliable' rc/plots/roofline.gp",
			    MEMSIM_BIN),
			 0);
	m = must_read_json("rc/manifest.json");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(m, "hardware"), "ceilings_consistency"),
		"consistent")));
	cJSON_Delete(m);

	memsim_env = "MEMSIM_TEST_CEILINGS=14,24,102.4,348";
	expect_ok("ceilings --quick --out rc");
	memsim_env = "";
	md = report_of("rc");
	assert_null(strstr(md, "inconsistent"));
	assert_null(strstr(md, "unconfirmed"));
	assert_null(strstr(md, "did not check"));
	assert_non_null(strstr(md, ": memory-bound: "));
	free(md);
}

static const char *const profile_row_keys[] = {
	"T",      "d_model",    "heads",     "d_head",      "dtype",
	"kernel", "op",         "seconds",   "repetitions", "calls_per_repetition",
	"flops",  "dram_bytes", "intensity", "gflops",      "tokens_per_s",
	"cache",  "preset",     NULL,
};

/* Checks every row of DIR/results.json; returns how many there are. ops lists the
 * "kernel/op" pairs expected for each T, in order. */
static int
check_profile_rows(const char *dir, const char *const *ops, int nT)
{
	char path[700];
	char *text, *save = NULL;
	int n = 0, nops = 0;
	double proj_p50 = 0, ops_p50 = 0;

	while (ops[nops])
		nops++;
	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp_text(path);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
		cJSON *o = cJSON_Parse(l), *sec;
		char want[64];
		double p50, flops, bytes;

		assert_non_null(o);
		for (const char *const *k = profile_row_keys; *k; k++)
			if (!cJSON_GetObjectItemCaseSensitive(o, *k))
				fail_msg("row %d lacks '%s': %s", n, *k, l);
		snprintf(want, sizeof(want), "%s/%s", str(o, "kernel"), str(o, "op"));
		if (strcmp(want, ops[n % nops]) != 0)
			fail_msg("row %d is %s, expected %s", n, want, ops[n % nops]);
		assert_string_equal(str(o, "dtype"), "fp32");
		assert_true(num(o, "d_head") * num(o, "heads") == num(o, "d_model"));
		sec = cJSON_GetObjectItem(o, "seconds");
		p50 = num(sec, "p50");
		flops = num(o, "flops");
		bytes = num(o, "dram_bytes");
		assert_true(p50 > 0);
		assert_true(num(sec, "p95") >= p50);
		assert_true(num(sec, "p99") >= num(sec, "p95"));
		assert_true(num(sec, "mean") > 0);
		assert_true(flops > 0);
		assert_true(bytes > 0);
		assert_true(fabs(num(o, "intensity") - flops / bytes) <= 1e-9 * flops / bytes);
		assert_true(fabs(num(o, "gflops") - flops / p50 / 1e9) <= 1e-9 * flops / p50);
		assert_true(fabs(num(o, "tokens_per_s") - num(o, "T") / p50) <=
			    1e-9 * num(o, "T") / p50);
		assert_true(strlen(str(o, "cache")) > 0);
		assert_true(num(o, "repetitions") >= 1);
		if (strcmp(str(o, "op"), "layer") == 0) {
			/* the layer's p50: qkv_proj + out_proj + the kernel's ops */
			assert_true(num(o, "calls_per_repetition") == 0);
			assert_true(fabs(p50 - proj_p50 - ops_p50) <= 1e-9 * p50);
			ops_p50 = 0;
		} else {
			assert_true(num(o, "calls_per_repetition") >= 1);
			if (strcmp(str(o, "op"), "qkv_proj") == 0)
				proj_p50 = p50;
			else if (strcmp(str(o, "op"), "out_proj") == 0)
				proj_p50 += p50;
			else
				ops_p50 += p50;
		}
		cJSON_Delete(o);
	}
	free(text);
	assert_int_equal(n, nops * nT);
	return n;
}

static void
test_profile(void **state)
{
	static const char *const ops[] = {
		"proj/qkv_proj",    "proj/out_proj", "naive/scores",
		"naive/softmax",    "naive/av",      "naive/layer",
		"flash2/attention", "flash2/layer",  NULL,
	};
	static const char *const ops2[] = {
		"proj/qkv_proj", "proj/out_proj", "flash1/attention",
		"flash1/layer",  "naive/scores",  "naive/softmax",
		"naive/av",      "naive/layer",   NULL,
	};
	struct result r;
	cJSON *m, *cfg;

	(void)state;
	r = memsim("profile --T 64 --min-time 0.002 --reps 3 --out prof");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "softmax"));
	assert_non_null(strstr(r.out, "wrote 8 rows"));
	result_free(&r);
	check_profile_rows("prof", ops, 1);
	m = must_read_json("prof/manifest.json");
	assert_true(strlen(str(m, "date")) == 20);
	assert_non_null(strstr(str(m, "command"), "memsim profile --T 64"));
	assert_true(num(m, "seed") == 1);
	assert_true(strlen(str(cJSON_GetObjectItem(m, "versions"), "compiler")) > 0);
	assert_true(strlen(str(cJSON_GetObjectItem(m, "versions"), "memsim")) > 0);
	assert_true(strlen(str(cJSON_GetObjectItem(m, "hardware"), "cpu_model")) > 0);
	assert_true(num(cJSON_GetObjectItem(m, "hardware"), "cores") >= 1);
	cfg = cJSON_GetObjectItem(m, "config");
	assert_true(num(cfg, "d_model") == 64);
	assert_true(num(cfg, "heads") == 4);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cfg, "T")), 1);
	assert_true(strlen(str(cfg, "cache")) > 0);
	assert_true(num(cfg, "min_time") == 0.002);
	assert_true(num(cfg, "reps") == 3);
	cJSON_Delete(m);

	/* Two sizes, flash1 and naive on an explicit cache, --json beside DIR. */
	r = memsim("profile --T 40,24 --d-model 32 --heads 2 --kernel flash1,naive,flash1 "
		   "--cache L1=4K:4:64,L2=64K:8:64 --min-time 0.001 --reps 2 --out prof2 "
		   "--json prof2.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	check_profile_rows("prof2", ops2, 2);
	m = must_read_json("prof2.json");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows")), 16);
	assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "manifest"), "config"),
			"d_head") == 16);
	assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "rows"), 0), "preset"),
			    "");
	cJSON_Delete(m);
}

/* Killed (SIGTERM: a background job of a non-interactive shell ignores SIGINT), profile
 * keeps every row it wrote, each line whole. */
static void
test_profile_interrupted(void **state)
{
	char path[700], cmd[1600];
	char *text, *save = NULL;
	int n = 0;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && (%s profile --T 64,128,256,512 --min-time 0.01 --reps 40 --out pint "
		 ">/dev/null 2>&1 & pid=$!; " WAIT_FOR_ROW("pint") " kill -TERM $pid; wait $pid; "
								   "true)",
		 tmpdir, MEMSIM_BIN);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/pint/results.json", tmpdir);
	text = slurp_text(path);
	/* no torn last line */
	assert_true(text[0] == '\0' || text[strlen(text) - 1] == '\n');
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
		cJSON *o = cJSON_Parse(l);

		assert_non_null(o);
		assert_non_null(cJSON_GetObjectItem(o, "seconds"));
		cJSON_Delete(o);
	}
	free(text);
	print_message("# %d rows kept after the interrupt\n", n);
	assert_true(n >= 1 && n < 32);
	/* The manifest does not claim a whole profile (study --resume redoes it). */
	snprintf(path, sizeof(path), "%s/pint/manifest.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "\"complete\":\tfalse"));
	free(text);
}

static void
test_profile_errors(void **state)
{
	(void)state;
	expect_error("profile --T 0", 2, "--T: sequence lengths must be at least 1");
	expect_error("profile --T 64,0", 2, "--T: sequence lengths must be at least 1");
	expect_error("profile --T 64,x", 2, "--T: 'x' is not a whole number");
	expect_error("profile --T ''", 2, "--T: '' is not a list");
	expect_error("profile --heads 3", 2, "--heads 3 does not divide --d-model 64");
	expect_error("profile --heads 0", 2, "--heads must be at least 1");
	expect_error("profile --d-model 0", 2, "--d-model must be at least 1");
	expect_error("profile --kernel flash3", 2, "--kernel: unknown kernel 'flash3'");
	expect_error("profile --kernel proj", 2, "always profiled");
	expect_error("profile --min-time 0", 2, "--min-time: 0 is not a time");
	expect_error("profile --min-time -1", 2, "--min-time: -1 is not a time");
	expect_error("profile --min-time soon", 2, "--min-time: 'soon' is not a number");
	expect_error("profile --reps 0", 2, "--reps: '0' is not 1 to 100000");
	expect_error("profile --cache L1=3K:8:64", 2, "--cache: L1:");
	expect_error("profile --T 1000000", 2, "the arrays and tiles need");
	expect_error("profile --bogus", 2, "unknown option '--bogus'");
	expect_error("profile extra", 2, "unexpected argument 'extra'");
	expect_error("ceilings --bogus", 2, "unknown option '--bogus'");
	expect_error("ceilings extra", 2, "unexpected argument 'extra'");
	write_file("plainfile", "x\n");
	expect_error("profile --T 64 --min-time 0.001 --reps 1 --out plainfile/sub", 1,
		     "cannot create plainfile/sub");
	expect_error("ceilings --quick --out plainfile/sub", 1, "cannot create plainfile/sub");
	{
		struct result r = memsim("help profile");

		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "Usage: memsim profile"));
		assert_non_null(strstr(r.out, "[64,128,256,512]"));
		result_free(&r);
		r = memsim("help ceilings");
		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "Usage: memsim ceilings"));
		result_free(&r);
	}
}

static int
setup(void **state)
{
	if (tmpdir_setup(state))
		return -1;
	snprintf(out_path, sizeof(out_path), "%s/stdout", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", tmpdir);
	return 0;
}

/* A stand-in for valgrind: the script body runs with valgrind's arguments. */
static void
fake_valgrind(const char *name, const char *body)
{
	char path[700], text[2048];

	snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
	write_file(name, text);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(chmod(path, 0755), 0);
}

/* xcheck: a missing, failing or garbled tool is one line and exit 1, never a crash or a
 * silent zero; bad options are usage errors. */
static void
test_xcheck_errors(void **state)
{
	char vg[700];

	(void)state;
	expect_error("xcheck --kernel naive --N 64 --with gdb", 2, "--with: unknown tool 'gdb'");
	expect_error("xcheck --kernel naive --N 64 --cache i5-8250u", 2,
		     "needs exactly two data levels");
	expect_error("xcheck --kernel naive --N 64 --cache L1=32K:8:64:fifo,L2=1M:16:64", 2,
		     "needs LRU replacement");
	expect_error("xcheck --N 64", 2, "xcheck needs --kernel");

	memsim_env = "MEMSIM_VALGRIND=/nonexistent/valgrind";
	expect_error("xcheck --kernel naive --N 64", 1, "/nonexistent/valgrind not found");
	memsim_env = "PATH=/nonexistent";
	expect_error("xcheck --kernel naive --N 64 --with callgrind", 1,
		     "valgrind not found on PATH (install the valgrind package");

	/* A failing tool's files stay for the user (the message names its log): in TMPDIR, here
	 * tmpdir, so that the test removes them. */
	fake_valgrind("vg-fails", "echo '==7== valgrind: fake failure for the test' >&2\nexit 1");
	snprintf(vg, sizeof(vg), "TMPDIR=%s MEMSIM_VALGRIND=%s/vg-fails", tmpdir, tmpdir);
	memsim_env = vg;
	expect_error(
		"xcheck --kernel naive --N 64 --with cachegrind", 1,
		"cachegrind failed (exit status 1): ==7== valgrind: fake failure for the test");

	/* Exits 0 but leaves a cachegrind.out that is not one. */
	fake_valgrind("vg-garbles", "for a; do case $a in --cachegrind-out-file=*) "
				    "printf 'events: Ir D1mr\\nfn=attn_naive_native\\n12 3 x\\n' "
				    ">\"${a#*=}\";; esac; done\nexit 0");
	snprintf(vg, sizeof(vg), "TMPDIR=%s MEMSIM_VALGRIND=%s/vg-garbles", tmpdir, tmpdir);
	expect_error("xcheck --kernel naive --N 64 --with cachegrind", 1,
		     "cachegrind.out:3: 'x' is not a count");

	/* Exits 0 and writes nothing. */
	fake_valgrind("vg-silent", "exit 0");
	snprintf(vg, sizeof(vg), "TMPDIR=%s MEMSIM_VALGRIND=%s/vg-silent", tmpdir, tmpdir);
	expect_error("xcheck --kernel naive --N 64 --with callgrind", 1,
		     "callgrind.out.1: No such file");
	memsim_env = "";
}

/* xcheck --with papi: on a machine without a PMU (this VM) the reason in PAPI's words and
 * exit 0, the memsim row beside it filled; on a build without PAPI, one line saying so. */
static void
test_xcheck_papi(void **state)
{
	(void)state;
#if HAVE_PAPI
	{
		struct result r = memsim("xcheck --kernel flash2 --N 64 --with papi --json x.json");
		bool no_cpu_pmu = access("/sys/bus/event_source/devices/cpu", F_OK) != 0 &&
				  access("/sys/bus/event_source/devices/cpu_core", F_OK) != 0;

		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "memsim                     host preset"));
		assert_non_null(strstr(r.out, "PAPI (this machine): "));
		if (no_cpu_pmu)
			assert_non_null(strstr(r.out, "PAPI (this machine): no-pmu: "));
		if (strstr(r.out, "PAPI (this machine): no-pmu: "))
			assert_non_null(strstr(r.out, "PAPI_ENOEVNT (Event does not exist)"));
		assert_non_null(strstr(r.out, "exact formula              LL fully assoc. LRU"));
		result_free(&r);
		{
			char path[700];
			char *json;
			cJSON *root, *papi;

			snprintf(path, sizeof(path), "%s/x.json", tmpdir);
			json = slurp_text(path);
			root = cJSON_Parse(json);
			papi = cJSON_GetObjectItem(root, "papi");
			assert_non_null(papi);
			assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(papi, "status")));
			assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(papi, "reason")));
			cJSON_Delete(root);
			free(json);
		}
	}
#else
	expect_error("xcheck --kernel flash2 --N 64 --with papi", 1,
		     "--with papi: this memsim was built without PAPI");
#endif
}

/* gpucheck: without a GPU (CI) one line and exit 1; with stand-ins for memsim-gpu and ncu
 * (ncu printing a CSV kept from a real H100 run) the table and its ratios. */
static void
test_gpucheck(void **state)
{
	char env_buf[1400];
	struct result r;

	(void)state;
	r = memsim("gpucheck --kernel flash2 --N 64 --heads 2");
	assert_int_equal(r.rc, 1);
	if (!strstr(r.err, "memsim-gpu not found") && !strstr(r.err, "not found on PATH") &&
	    !strstr(r.err, "CUDA"))
		fail_msg("gpucheck without a GPU: '%s'", r.err);
	assert_true(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
	result_free(&r);
	expect_error("gpucheck --kernel proj --N 64", 2, "the GPU kernels are naive and flash2");
	expect_error("gpucheck --kernel naive --N 64 --no-gpu --memsim-from x.json", 2,
		     "exclude each other");

	r = memsim("gpucheck --kernel naive --N 256 --heads 2 --no-gpu --json side.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "softmax"));
	result_free(&r);

	fake_valgrind("gpu-ok", "[ \"$1\" = probe ] && echo ok; exit 0");
	/* the stand-in ncu answers the idle kernel with an idle run kept from the H100 */
	fake_valgrind("ncu-csv", "case \"$*\" in *' idle '*) cat " TEST_DATA_DIR
				 "/ncu/idle-77ms.csv;; *) cat " TEST_DATA_DIR
				 "/ncu/naive-N1024-h16-fp16.csv;; esac");
	snprintf(env_buf, sizeof(env_buf), "MEMSIM_GPU=%s/gpu-ok MEMSIM_NCU=%s/ncu-csv", tmpdir,
		 tmpdir);
	memsim_env = env_buf;
	/* the stored side is the sequential model's (written before --model): said so */
	expect_error("gpucheck --kernel naive --N 1024 --heads 16 --memsim-from " TEST_DATA_DIR
		     "/ncu/naive-N1024-h16-fp16-memsim.json",
		     1, "naive-N1024-h16-fp16-memsim.json: memsim's side under --model sequential, "
			"not blocks --l2-model lru");
	r = memsim("gpucheck --kernel naive --N 1024 --heads 16 --model sequential --memsim-from "
		   TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16-memsim.json");
	assert_int_equal(r.rc, 0);
	/* memsim's side and the H100's, launch by launch */
	assert_non_null(strstr(
		r.out,
		"scores          4.194       12.976       33.554       4.203      13.578     0.008"));
	/* the idle kernel: 1,790,720 bytes in 77,002,304 ns, scaled to the three launches'
	 * 799,584 ns: 18,595 bytes, taken off ncu's 97,803,520 */
	assert_non_null(strstr(r.out, "idle: an idle kernel as long as each launch is charged "
				      "0.019 MB"));
	assert_non_null(strstr(r.out, "verdict: ncu's net DRAM bytes are within memsim's"));
	result_free(&r);
	/* without the idle measurement the raw bytes are compared, and the table says so */
	r = memsim(
		"gpucheck --kernel naive --N 1024 --heads 16 --no-idle --model sequential "
		"--memsim-from " TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16-memsim.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "idle: not measured (--no-idle)"));
	assert_non_null(strstr(r.out, "verdict: ncu's raw DRAM bytes are within memsim's"));
	result_free(&r);
	/* a memsim side of another configuration is refused */
	expect_error("gpucheck --kernel naive --N 2048 --heads 16 --model sequential "
		     "--memsim-from " TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16-memsim.json",
		     1, "not memsim's side of this configuration");
	/* ncu failing on the idle kernel is named as such, not taken as zero background */
	fake_valgrind("ncu-idle-fails", "case \"$*\" in *' idle '*) echo '==ERROR== idle: no "
					"permission' >&2; exit 4;; *) cat " TEST_DATA_DIR
					"/ncu/naive-N1024-h16-fp16.csv;; esac");
	/* a failing ncu's files stay (the message names its log): in TMPDIR, here tmpdir */
	snprintf(env_buf, sizeof(env_buf),
		 "TMPDIR=%s MEMSIM_GPU=%s/gpu-ok MEMSIM_NCU=%s/ncu-idle-fails", tmpdir, tmpdir,
		 tmpdir);
	memsim_env = env_buf;
	expect_error("gpucheck --kernel naive --N 1024 --heads 16 --model sequential --memsim-from "
		     TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16-memsim.json",
		     1, "ncu failed (exit status 4): ==ERROR== idle: no permission");
	fake_valgrind("ncu-fails", "echo '==ERROR== the profiler failed' >&2; exit 3");
	snprintf(env_buf, sizeof(env_buf), "TMPDIR=%s MEMSIM_GPU=%s/gpu-ok MEMSIM_NCU=%s/ncu-fails",
		 tmpdir, tmpdir, tmpdir);
	expect_error("gpucheck --kernel naive --N 1024 --heads 16 --model sequential --memsim-from "
		     TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16-memsim.json",
		     1, "ncu failed (exit status 3): ==ERROR== the profiler failed");
	memsim_env = "";
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_replay_json),
		cmocka_unit_test(test_help_and_presets),
		cmocka_unit_test(test_native_papi),
		cmocka_unit_test(test_kernel_option_errors),
		cmocka_unit_test(test_run_and_formula),
		cmocka_unit_test(test_trace_only),
		cmocka_unit_test(test_sweep_resume_merge),
		cmocka_unit_test(test_sweep_command),
		cmocka_unit_test(test_sweep_onepass),
		cmocka_unit_test(test_sweep_reproducible),
		cmocka_unit_test(test_sweep_seed),
		cmocka_unit_test(test_sweep_full_disk),
		cmocka_unit_test(test_sweep_lock_and_workers),
		cmocka_unit_test(test_merge_checks),
		cmocka_unit_test(test_report_bad_results),
		cmocka_unit_test(test_json_targets),
		cmocka_unit_test(test_output_errors),
		cmocka_unit_test(test_bench_files),
		cmocka_unit_test(test_bench_naive),
		cmocka_unit_test(test_bench_kernels),
		cmocka_unit_test(test_json_stdout),
		cmocka_unit_test(test_xcheck_errors),
		cmocka_unit_test(test_xcheck_papi),
		cmocka_unit_test(test_ceilings),
		cmocka_unit_test(test_ceilings_inconsistent),
		cmocka_unit_test(test_report_inconsistent_ceilings),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_profile_interrupted),
		cmocka_unit_test(test_profile_errors),
		cmocka_unit_test(test_gpucheck),
	};

	return cmocka_run_group_tests(tests, setup, tmpdir_teardown);
}
