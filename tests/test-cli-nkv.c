/*
 * Queries and keys of different lengths as a user meets them (issue 22 items 1 and 4):
 * --N-kv parsed and refused where it must be (0, N > N_kv with --causal, flash1 and proj),
 * the JSON config's "N_kv", sweep lists of it, and the bytes per generated token with the
 * tokens/s bound (--bandwidth, the h100 preset's, none on a CPU preset) in text and JSON.
 */

#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-nkv"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

static void
test_refusals(void **state)
{
	(void)state;
	expect_error("run --kernel flash2 --N-kv 0", 2, "--N-kv must be at least 1");
	expect_error("formula --kernel naive --N-kv 0", 2, "--N-kv must be at least 1");
	expect_error("run --kernel flash2 --N-kv x", 2, "--N-kv: 'x' is not a whole number");
	expect_error("run --kernel flash2 --N 64 --N-kv 32 --causal", 2,
		     "--causal with --N 64 > --N-kv 32");
	expect_error("formula --kernel naive --N 64 --N-kv 32 --causal", 2,
		     "--causal with --N 64 > --N-kv 32");
	expect_error("run --kernel flash1 --N 4 --N-kv 256", 2,
		     "--N-kv 256 != --N 4: kernel flash1 takes N_kv = N only");
	expect_error("formula --kernel proj --N 4 --N-kv 256", 2,
		     "--N-kv 256 != --N 4: kernel proj takes N_kv = N only");
	expect_error("run --kernel flash2 --bandwidth 0", 2,
		     "--bandwidth: '0' is not a positive number of GB/s");
	expect_error("formula --kernel flash2 --bandwidth fast", 2,
		     "--bandwidth: 'fast' is not a positive number of GB/s");
	expect_error("sweep --out x --kernel flash2 --N-kv 0", 2, "--N-kv must be at least 1");
	expect_error("sweep --out x --kernel flash1,proj --N 4 --N-kv 64", 2,
		     "2 with N_kv != N under flash1 or proj");
}

/* gpucheck takes decode shapes and bf16 (the CUDA kernels do): memsim's side on the h100
 * preset, the shape passed on to memsim-gpu under ncu, and a side of another N_kv refused. */
static void
test_gpucheck_decode(void **state)
{
	char env_buf[1024];
	struct result r;
	cJSON *o, *l;

	(void)state;
	r = memsim("gpucheck --kernel flash2 --N 1 --N-kv 256 --heads 2 --dtype bf16 --no-gpu "
		   "--json side.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	o = read_json("side.json");
	assert_non_null(o);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "config"), "N_kv")->valuedouble ==
		    256);
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "memsim"), "launches"),
			       0);
	/* K and V (2 heads x 256 x 64 x 2 bytes each) and Q's two 128-byte rows, once */
	assert_true(cJSON_GetObjectItem(l, "memsim_read_bytes")->valuedouble ==
		    2 * 2 * 256 * 64 * 2 + 2 * 128);
	cJSON_Delete(o);
	/* the grouped-query decode of test-cuda-blocks: K and V read once when the group's
	 * blocks run together (the default model), four times one after another */
	r = memsim("gpucheck --kernel flash2 --N 1 --N-kv 4096 --heads 8 --kv-heads 2 --no-gpu "
		   "--cache L1=64K:full:128:wv");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "model: thread blocks in flight (--model blocks, --l2-model "
				      "lru): flash2 264 at once"));
	assert_non_null(strstr(r.out, "\ntotal           2.098 "));
	result_free(&r);
	r = memsim("gpucheck --kernel flash2 --N 1 --N-kv 4096 --heads 8 --kv-heads 2 --no-gpu "
		   "--cache L1=64K:full:128:wv --model sequential");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\ntotal           8.390 "));
	result_free(&r);
	expect_error("gpucheck --kernel flash2 --model fast --no-gpu", 2,
		     "--model: blocks or sequential, not 'fast'");
	/* the H100's L2 as measured (50 MiB, hashed): it holds the 2 MiB, read once too */
	r = memsim("gpucheck --kernel flash2 --N 1 --N-kv 4096 --heads 8 --kv-heads 2 --no-gpu "
		   "--l2-model hashed --json hashed.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\ntotal           2.098 "));
	result_free(&r);
	expect_error("gpucheck --kernel flash2 --model sequential --l2-model hashed --no-gpu", 2,
		     "--l2-model hashed: only with --model blocks");
	expect_error("gpucheck --kernel flash2 --l2-model plru --no-gpu", 2,
		     "--l2-model: lru or hashed, not 'plru'");
	/* what memsim-gpu is asked to run, through a stand-in ncu that records it */
	assert_int_equal(sh("echo '#!/bin/sh' > gpu-ok && echo 'exit 0' >> gpu-ok && "
			    "echo '#!/bin/sh' > ncu-rec && "
			    "echo 'echo \"$*\" > ncu-args; exit 3' >> ncu-rec && "
			    "chmod +x gpu-ok ncu-rec"),
			 0);
	snprintf(env_buf, sizeof(env_buf), "TMPDIR=%s MEMSIM_GPU=%s/gpu-ok MEMSIM_NCU=%s/ncu-rec",
		 tmpdir, tmpdir, tmpdir);
	memsim_env = env_buf;
	expect_error("gpucheck --kernel flash2 --N 1 --N-kv 256 --heads 2 --dtype bf16 --no-idle "
		     "--memsim-from side.json",
		     1, "ncu failed (exit status 3)");
	expect_error("gpucheck --kernel flash2 --N 1 --N-kv 512 --heads 2 --dtype bf16 "
		     "--memsim-from side.json",
		     1, "not memsim's side of this configuration");
	expect_error("gpucheck --kernel flash2 --N 1 --N-kv 4096 --heads 8 --kv-heads 2 "
		     "--memsim-from hashed.json",
		     1, "hashed.json: memsim's side under --model blocks --l2-model hashed, not "
			"blocks --l2-model lru");
	memsim_env = "";
	r = shell("cat ncu-args");
	assert_non_null(strstr(r.out, "run --kernel flash2 --N 1 --N-kv 256 --d 64 --heads 2"));
	assert_non_null(strstr(r.out, "--dtype bf16"));
	result_free(&r);
}

/* --bandwidth measured: this machine's all-core bandwidth from ceilings.json in the cache
 * (memsim ceilings' own file, a quick one here to stay fast, with consistent numbers given:
 * a loaded machine's would be inconsistent, and said), named as the bound's source; what
 * ceilings says goes to stderr, not into the report. */
static void
test_bandwidth_measured(void **state)
{
	struct result r;
	cJSON *o, *pt, *c;
	double gbps;

	(void)state;
	assert_int_equal(sh("MEMSIM_TEST_CEILINGS=12.5,25,95,190 %s ceilings --quick --json "
			    "ceil.json > /dev/null",
			    MEMSIM_BIN),
			 0);
	c = read_json("ceil.json");
	assert_non_null(c);
	gbps = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "bandwidth"), "all_cores_bytes_per_s")
		       ->valuedouble /
	       1e9;
	cJSON_Delete(c);
	r = memsim("formula --kernel flash2 --N 1 --N-kv 4096 --bandwidth measured --json bw.json");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, ""); /* reused quietly: the report names the file */
	result_free(&r);
	o = read_json("bw.json");
	assert_non_null(o);
	pt = cJSON_GetObjectItem(o, "per_token");
	assert_true(fabs(cJSON_GetObjectItem(pt, "bandwidth_gbps")->valuedouble - gbps) <
		    1e-9 * gbps);
	assert_non_null(strstr(cJSON_GetObjectItem(pt, "bandwidth_source")->valuestring,
			       "--bandwidth measured: this machine's triad on "));
	cJSON_Delete(o);
	r = memsim("run --kernel flash2 --N 1 --N-kv 256 --bandwidth measured");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "(--bandwidth measured: this machine's triad on "));
	assert_null(strstr(r.out, "reusing"));
	result_free(&r);
	expect_error("run --kernel flash2 --bandwidth measure", 2,
		     "--bandwidth: 'measure' is not a positive number of GB/s");
}

/* --bandwidth measured keeps its measurement in the user's cache, keyed by the machine, and
 * nothing in the working directory (the audit found ./out/ceilings made by a notebook):
 * $XDG_CACHE_HOME first, else $HOME/.cache (a relative XDG_CACHE_HOME does not count); it
 * says before measuring that it measures and where it keeps it, and reuses it quietly; where
 * no cache is usable it measures all the same and says so in one line. */
static void
test_bandwidth_measured_cache(void **state)
{
	struct result r;
	cJSON *o;

	(void)state;
	assert_int_equal(sh("mkdir -p wd home && echo > afile"), 0);
	memsim_env =
		"cd wd && env -u XDG_CACHE_HOME HOME=$PWD/../home MEMSIM_TEST_CEILINGS=12.5,25,95,190";
	r = memsim("formula --kernel flash2 --N 1 --N-kv 4096 --bandwidth measured --json -");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "memsim: --bandwidth measured: measuring this machine's "
				      "bandwidth (a minute or so), to be cached in "));
	assert_non_null(strstr(r.err, "/home/.cache/memsim/ceilings/"));
	assert_non_null(strstr(r.err, "memsim: --bandwidth measured: 25.00 GB/s, the triad on "));
	o = cJSON_Parse(r.out);
	assert_non_null(o);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "per_token"), "bandwidth_gbps")
			    ->valuedouble == 25);
	cJSON_Delete(o);
	result_free(&r);
	assert_int_equal(sh("test -z \"$(ls -A wd)\""), 0); /* nothing in the working directory */
	assert_int_equal(sh("ls home/.cache/memsim/ceilings/*cores/ceilings.json >/dev/null"), 0);

	/* reused quietly, the relative XDG_CACHE_HOME ignored */
	memsim_env = "cd wd && XDG_CACHE_HOME=rel HOME=$PWD/../home MEMSIM_TEST_CEILINGS=1,2,3,4";
	r = memsim("formula --kernel flash2 --N 1 --N-kv 4096 --bandwidth measured --json -");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "measuring"));
	o = cJSON_Parse(r.out);
	assert_non_null(o);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "per_token"), "bandwidth_gbps")
			    ->valuedouble == 25);
	assert_non_null(
		strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "per_token"), "bandwidth_source")
			       ->valuestring,
		       "/home/.cache/memsim/ceilings/"));
	cJSON_Delete(o);
	result_free(&r);

	/* memsim ceilings without --out reads and writes the same file */
	r = memsim("ceilings");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "reusing "));
	assert_non_null(strstr(r.out, "/home/.cache/memsim/ceilings/"));
	result_free(&r);
	assert_int_equal(sh("test -z \"$(ls -A wd)\""), 0);
	memsim_env = "cd wd && env -u XDG_CACHE_HOME -u HOME MEMSIM_TEST_CEILINGS=12.5,30,95,190";
	r = memsim("ceilings --quick");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "note: neither XDG_CACHE_HOME nor HOME is an absolute path: "
				      "measuring, not caching\n"));
	assert_null(strstr(r.out, "wrote"));
	result_free(&r);

	/* no cache: measured, said in one line, kept nowhere */
	memsim_env = "cd wd && env -u XDG_CACHE_HOME -u HOME MEMSIM_TEST_CEILINGS=12.5,30,95,190";
	r = memsim("run --kernel flash2 --N 1 --N-kv 256 --bandwidth measured");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "memsim: --bandwidth measured: measuring this machine's "
				      "bandwidth (a minute or so), not cached: neither "
				      "XDG_CACHE_HOME nor HOME is an absolute path\n"));
	assert_non_null(strstr(r.out, "not cached"));
	assert_non_null(strstr(r.out, "at 30 GB/s"));
	result_free(&r);
	memsim_env = "cd wd && XDG_CACHE_HOME=$PWD/../afile MEMSIM_TEST_CEILINGS=12.5,30,95,190";
	r = memsim("run --kernel flash2 --N 1 --N-kv 256 --bandwidth measured");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "not cached: cannot create "));
	assert_non_null(strstr(r.err, "/afile/memsim/ceilings/"));
	assert_non_null(strstr(r.err, "(Not a directory)\n"));
	result_free(&r);
	memsim_env = "";
	assert_int_equal(sh("test -z \"$(ls -A wd)\""), 0);
}

/* A decode step: config.N_kv, and per_token = DRAM bytes / (batch N) with the bound. */
static void
test_run_decode(void **state)
{
	struct result r;
	cJSON *o, *pt, *cfg;
	double dram, bytes;

	(void)state;
	r = memsim("run --kernel flash2 --N 4 --N-kv 2048 --batch 2 --heads 4 --kv-heads 1 "
		   "--causal --cache L1=64K:full:64,tiles=scratch --bandwidth 100 --json nkv.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "flash2 N=4 N_kv=2048 d=64"));
	assert_non_null(strstr(r.out, "per generated token (DRAM bytes / (batch x N)): "));
	assert_non_null(strstr(r.out, "tokens/s bound at 100 GB/s (--bandwidth): "));
	result_free(&r);
	o = read_json("nkv.json");
	assert_non_null(o);
	cfg = cJSON_GetObjectItem(o, "config");
	assert_true(cJSON_GetObjectItem(cfg, "N_kv")->valuedouble == 2048);
	assert_true(cJSON_GetObjectItem(cfg, "N")->valuedouble == 4);
	dram = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "dram"), "read_bytes")->valuedouble +
	       cJSON_GetObjectItem(cJSON_GetObjectItem(o, "dram"), "write_bytes")->valuedouble;
	pt = cJSON_GetObjectItem(o, "per_token");
	bytes = cJSON_GetObjectItem(pt, "bytes")->valuedouble;
	assert_true(bytes == dram / (2 * 4));
	/* K and V of the one kv head of each batch are read at least once */
	assert_true(bytes * 8 >= 2 * 2 * 2048 * 64 * 4.0);
	assert_true(fabs(cJSON_GetObjectItem(pt, "tokens_per_s_bound")->valuedouble -
			 100e9 / bytes) < 1e-6 * 100e9 / bytes);
	assert_true(cJSON_GetObjectItem(pt, "bandwidth_gbps")->valuedouble == 100);
	assert_string_equal(cJSON_GetObjectItem(pt, "bandwidth_source")->valuestring,
			    "--bandwidth");
	cJSON_Delete(o);
	/* without --N-kv: N_kv = N in the config, the text as before */
	r = memsim("run --kernel flash2 --N 64 --cache lab --json eq.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "flash2 N=64 d=64"));
	result_free(&r);
	o = read_json("eq.json");
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "config"), "N_kv")->valuedouble ==
		    64);
	cJSON_Delete(o);
}

/* formula: the preset's bandwidth (h100), none on a CPU preset unless given. */
static void
test_formula_per_token(void **state)
{
	struct result r;
	cJSON *o, *pt;

	(void)state;
	r = memsim("formula --kernel flash2 --N 1 --N-kv 131072 --heads 32 --kv-heads 8 --d 128 "
		   "--dtype bf16 --cache h100 --json h.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	o = read_json("h.json");
	pt = cJSON_GetObjectItem(o, "per_token");
	/* 8 kv heads of 32 MiB each for K and V, over the 22 MiB L2: read by each of the 4 query
	 * heads of a group, 2 GiB; Q, O and lse 20 KiB */
	assert_true(cJSON_GetObjectItem(pt, "bytes")->valuedouble == 2147504128.0);
	assert_true(cJSON_GetObjectItem(pt, "bandwidth_gbps")->valuedouble == 3350);
	assert_non_null(
		strstr(cJSON_GetObjectItem(pt, "bandwidth_source")->valuestring, "NVIDIA H100"));
	assert_true(fabs(cJSON_GetObjectItem(pt, "tokens_per_s_bound")->valuedouble -
			 3350e9 / 2147504128.0) < 1e-6);
	cJSON_Delete(o);
	r = memsim("formula --kernel naive --N 4 --N-kv 4096 --cache i5-8250u --json c.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "per generated token"));
	assert_null(strstr(r.out, "tokens/s"));
	result_free(&r);
	o = read_json("c.json");
	pt = cJSON_GetObjectItem(o, "per_token");
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(pt, "bytes")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(pt, "tokens_per_s_bound")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(pt, "bandwidth_gbps")));
	cJSON_Delete(o);
}

/* A sweep over N_kv: rows keep their N_kv (JSON, CSV), refused combinations left out. */
/* The regime line of a grouped-query decode says how often K and V are read, judged on the
 * exact formula's bytes: 4 times where the L2 cannot keep a KV head between its 4 query heads
 * (it once said "read once" there), once where it can. */
static void
test_decode_regime(void **state)
{
	static const struct {
		const char *nkv, *kvh, *want, *not_want;
	} cases[] = {
		{ "131072", "8", "K and V are read 4 times in all", "so K and V are read once" },
		{ "4096", "8", "so K and V are read once", "times in all" },
		{ "131072", "32", "so K and V are read once", "times in all" },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result r = memsim("formula --kernel flash2 --N 1 --N-kv %s --heads 32 "
					 "--kv-heads %s --d 128 --dtype fp16 --cache h100",
					 cases[i].nkv, cases[i].kvh);

		assert_int_equal(r.rc, 0);
		if (!strstr(r.out, cases[i].want) || strstr(r.out, cases[i].not_want))
			fail_msg("N_kv %s, kv_heads %s: '%s' wanted, '%s' not: %s", cases[i].nkv,
				 cases[i].kvh, cases[i].want, cases[i].not_want, r.out);
		result_free(&r);
	}
}

static void
test_sweep(void **state)
{
	struct result r;
	char path[600], *text;

	(void)state;
	r = memsim("sweep --out sw --kernel flash2,flash1 --N 4 --N-kv 4,300 --causal "
		   "--cache L1=16K:full:64,tiles=scratch --formula-only --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sw/results.csv", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "index,kernel,N,N_kv,d,"));
	assert_non_null(strstr(text, ",flash2,4,300,64,"));
	assert_non_null(strstr(text, ",flash2,4,4,64,"));
	assert_non_null(strstr(text, ",flash1,4,4,64,"));
	assert_null(strstr(text, ",flash1,4,300,"));
	free(text);
	/* a row's per_token: the exact formula's bytes of a --formula-only row / (batch N) */
	snprintf(path, sizeof(path), "%s/sw/results.json", tmpdir);
	text = slurp_text(path);
	{
		char *nl = strchr(text, '\n');
		cJSON *row;

		assert_non_null(nl);
		*nl = '\0';
		row = cJSON_Parse(text);
		assert_non_null(row);
		assert_true(
			cJSON_GetObjectItem(cJSON_GetObjectItem(row, "per_token"), "bytes")
				->valuedouble ==
			cJSON_GetObjectItem(
				cJSON_GetObjectItem(cJSON_GetObjectItem(row, "formulas"), "exact"),
				"bytes")
					->valuedouble /
				4);
		cJSON_Delete(row);
	}
	free(text);
	snprintf(path, sizeof(path), "%s/sw/manifest.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "--N-kv 4,300"));
	free(text);
	/* memsim table tells the rows apart by N_kv where it differs from N; a sweep over N
	 * alone is labelled as before */
	r = memsim("sweep --out sw2 --kernel flash2 --N 4 --N-kv 300,600 --trace-only "
		   "--cache L1=64K:full:64,tiles=scratch --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("table sw2");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "N_kv=300"));
	assert_non_null(strstr(r.out, "N_kv=600"));
	result_free(&r);
	r = memsim("sweep --out sw3 --kernel flash2 --N 64,96 --trace-only "
		   "--cache L1=64K:full:64,tiles=scratch --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("table sw3");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "N_kv"));
	result_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_run_decode),
		cmocka_unit_test(test_gpucheck_decode),
		cmocka_unit_test(test_bandwidth_measured),
		cmocka_unit_test(test_bandwidth_measured_cache),
		cmocka_unit_test(test_formula_per_token),
		cmocka_unit_test(test_decode_regime),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
