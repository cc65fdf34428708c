/*
 * flashdecode as a user meets it (issue 22 item 2): --splits parsed and refused where it must
 * be (0, other kernels, plugins, with --softmax-separate), clamped to the key blocks with a
 * note, S from FlashAttention's heuristic on an h100 preset and 1 on a CPU preset (the JSON
 * config's "splits" and "splits_source"), the phases of a run, formula and sweep.
 */

#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-decode"
#include "tests/tmpdir.h"
/* after tmpdir.h: it uses tmpdir */
#include "tests/cli-run.h"

static void
test_refusals(void **state)
{
	(void)state;
	expect_error("run --kernel flashdecode --splits 0", 2, "--splits must be at least 1");
	expect_error("formula --kernel flashdecode --splits x", 2,
		     "--splits: 'x' is not a whole number");
	expect_error("run --kernel flash2 --splits 2", 2, "--splits is for --kernel flashdecode");
	expect_error("formula --kernel naive --splits 1", 2,
		     "--splits is for --kernel flashdecode");
	expect_error("run --kernel ./plugin.so --splits 2", 2,
		     "--splits is for --kernel flashdecode");
	expect_error("run --kernel flashdecode --softmax-separate", 2,
		     "--softmax-separate is for --kernel naive, not flashdecode");
	expect_error("run --kernel flashdecode --N 64 --N-kv 32 --causal", 2,
		     "--causal with --N 64 > --N-kv 32");
	expect_error("sweep --out x --kernel flashdecode --splits 0", 2,
		     "--splits must be at least 1");
	expect_error("sweep --out x --kernel flash2,naive --splits 2", 2,
		     "--splits is for --kernel flashdecode");
	expect_error("gpucheck --kernel flashdecode --no-gpu", 2,
		     "--kernel: the GPU kernels are naive and flash2");
	expect_error("profile --kernel flashdecode --out p", 2,
		     "--kernel: the attention kernels are naive, flash1, flash2");
}

/* Config "splits" and "splits_source" of a run's JSON. */
static void
expect_splits(const char *json, double splits, const char *source)
{
	cJSON *o = read_json(json), *cfg;

	assert_non_null(o);
	cfg = cJSON_GetObjectItem(o, "config");
	assert_true(cJSON_GetObjectItem(cfg, "splits")->valuedouble == splits);
	assert_string_equal(cJSON_GetObjectItem(cfg, "splits_source")->valuestring, source);
	cJSON_Delete(o);
}

/* S given, clamped, from the heuristic (h100: N = 1 over 128 key blocks, 8 heads: 8 blocks on
 * 264 slots; 32 splits of 4 blocks fill 97% of a wave) and 1 on a CPU preset. */
static void
test_splits(void **state)
{
	struct result r;

	(void)state;
	r = memsim("run --kernel flashdecode --N 2 --N-kv 640 --heads 2 --splits 3 --trace-only "
		   "--cache L1=64K:full:64,tiles=scratch --json a.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "flashdecode N=2 N_kv=640 d=64"));
	assert_non_null(strstr(r.out, "splits=3"));
	assert_non_null(strstr(r.out, "O_accum"));
	assert_non_null(strstr(r.out, "lse_accum"));
	assert_non_null(strstr(r.out, "combine"));
	assert_string_equal(r.err, "");
	result_free(&r);
	expect_splits("a.json", 3, "given");
	/* S > 1 on a cache smaller than its lines, rows of 160 bytes (not whole lines): exact,
	 * walked line by line, paged too, on 512-byte lines too (write-validate: granules of 8
	 * bytes, wider than the 4-byte stores), and equal to the run's every array */
	r = memsim("formula --kernel flashdecode --N 2 --N-kv 640 --d 40 --splits 3 "
		   "--cache L1=64K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "an estimate"));
	result_free(&r);
	r = memsim("formula --kernel flashdecode --N 2 --N-kv 640 --d 40 --splits 3 --heads 2 "
		   "--kv-page 16 --cache L1=64K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "an estimate"));
	result_free(&r);
	r = memsim("formula --kernel flashdecode --N 2 --N-kv 640 --d 40 --splits 3 --heads 2 "
		   "--kv-page 16 --cache L1=64K:full:512,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "an estimate"));
	result_free(&r);
	r = memsim("run --kernel flashdecode --N 2 --N-kv 640 --d 40 --splits 3 --heads 2 "
		   "--kv-page 16 --cache L1=16K:full:512:wv,tiles=scratch --trace-only");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "scope: exact, byte-equal claimed"));
	assert_non_null(strstr(r.out, "ratio  1.000  within 5%\n"));
	result_free(&r);
	/* walked: too many line touches (a second or more): an estimate, at once */
	r = memsim("formula --kernel flashdecode --N 100 --N-kv 131072 --heads 64 --d 40 "
		   "--splits 16 --cache L1=1M:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "up to 1.53e+08 line touches of 42237840 lines are too "
				      "many to follow line by line"));
	result_free(&r);
	r = memsim("formula --kernel flashdecode --N 100 --N-kv 131072 --heads 64 --d 40 "
		   "--splits 16 --kv-page 16 --cache L1=1M:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "paged with rows of 160 bytes, not whole 64-byte lines: up "
				      "to 1.53e+08 line touches are too many"));
	result_free(&r);
	/* rows of whole lines: exact line by line on the same cache */
	r = memsim("formula --kernel flashdecode --N 2 --N-kv 640 --splits 3 "
		   "--cache L1=64K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "an estimate"));
	result_free(&r);
	/* too many partial rows times splits to follow line by line (hours): an estimate, at
	 * once */
	r = memsim("formula --kernel flashdecode --N 16 --N-kv 131072 --heads 64 --batch 16 "
		   "--d 128 --dtype fp16 --splits 2048 --cache L1=50M:full:128,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "6.87e+10 steps (B H N S^2) are too many to follow line by "
				      "line"));
	result_free(&r);
	/* a cache that holds all 5162 lines: exact */
	r = memsim("formula --kernel flashdecode --N 2 --N-kv 640 --splits 3 "
		   "--cache L1=331K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "an estimate"));
	result_free(&r);
	r = memsim("run --kernel flashdecode --N 2 --N-kv 640 --splits 100 --trace-only "
		   "--json b.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "memsim: note: --splits 100 is more than the 10 key "
				      "blocks of B_c = 64: 10 splits"));
	result_free(&r);
	expect_splits("b.json", 10, "given");
	r = memsim("formula --kernel flashdecode --N 1 --N-kv 8192 --heads 8 --dtype fp16 "
		   "--cache h100 --json c.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	expect_splits("c.json", 32, "heuristic");
	r = memsim("formula --kernel flashdecode --N 1 --N-kv 8192 --heads 8 --cache i5-8250u "
		   "--json d.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	expect_splits("d.json", 1, "cpu");
	/* S = 1: no partial arrays, no combine */
	r = memsim("run --kernel flashdecode --N 1 --N-kv 640 --trace-only "
		   "--cache L1=64K:full:64,tiles=scratch");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "O_accum"));
	assert_null(strstr(r.out, "combine"));
	result_free(&r);
}

/* Config "gqa_packed" of a run's JSON, and K's DRAM read bytes. */
static double
packed_k_reads(const char *json, bool packed)
{
	cJSON *o = read_json(json), *cfg, *k;
	double bytes;

	assert_non_null(o);
	cfg = cJSON_GetObjectItem(o, "config");
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(cfg, "gqa_packed")));
	assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(cfg, "gqa_packed")), packed);
	k = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "arrays"), "K");
	bytes = k ? cJSON_GetObjectItem(k, "read_bytes")->valuedouble : NAN;
	cJSON_Delete(o);
	return bytes;
}

/* Grouped-query decode packed as FlashAttention packs it: N = 1 with 8 query heads on 2 KV
 * heads reads each KV head's K once (2 MiB in all) where a 256 KiB cache cannot hold it
 * between query heads; N = 2 is not packed (each of the 4 query heads of a group reads it:
 * 4x). The heuristic counts kv_heads x ceil(g / B_r) blocks: 32 heads on 8 KV heads get the
 * 8-head count (32 splits), not the 32-head one (7). */
static void
test_gqa_packed(void **state)
{
	struct result r;

	(void)state;
	r = memsim("run --kernel flashdecode --N 1 --N-kv 4096 --heads 8 --kv-heads 2 --splits 1 "
		   "--trace-only --cache L1=256K:full:64,tiles=scratch --json p.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "splits=1 gqa-packed"));
	result_free(&r);
	assert_true(packed_k_reads("p.json", true) == 2 * 4096 * 64 * 4);
	r = memsim("run --kernel flashdecode --N 2 --N-kv 4096 --heads 8 --kv-heads 2 --splits 1 "
		   "--trace-only --cache L1=256K:full:64,tiles=scratch --json q.json");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "gqa-packed"));
	result_free(&r);
	assert_true(packed_k_reads("q.json", false) == 4.0 * 2 * 4096 * 64 * 4);
	r = memsim("formula --kernel flashdecode --N 1 --N-kv 8192 --heads 32 --kv-heads 8 "
		   "--dtype fp16 --cache h100 --json r.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	expect_splits("r.json", 32, "heuristic");
	r = memsim("formula --kernel flashdecode --N 1 --N-kv 8192 --heads 32 --dtype fp16 "
		   "--cache h100 --json s.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	expect_splits("s.json", 7, "heuristic");
}

/* The native build computes it (memsim native --check against the reference). */
static void
test_native(void **state)
{
	struct result r;

	(void)state;
	r = memsim("native --kernel flashdecode --N 3 --N-kv 300 --d 32 --heads 4 --kv-heads 2 "
		   "--Bc 32 --splits 4 --causal --dtype fp16 --check");
	assert_int_equal(r.rc, 0);
	result_free(&r);
}

/* A sweep over S: each row keeps its S (key, JSON); flash2 runs once. */
static void
test_sweep(void **state)
{
	struct result r;
	char path[600], *text;

	(void)state;
	r = memsim("sweep --out sw --kernel flashdecode,flash2 --N 1 --N-kv 1024 --splits 1,4 "
		   "--cache L1=64K:full:64,tiles=scratch --formula-only --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sw/results.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "flashdecode N=1 N_kv=1024 splits=1 d=64"));
	assert_non_null(strstr(text, "flashdecode N=1 N_kv=1024 splits=4 d=64"));
	assert_non_null(strstr(text, "\"splits_source\":\"given\""));
	/* flash2 once, not once per S */
	{
		const char *p = strstr(text, "\"key\":\"flash2 N=1");

		assert_non_null(p);
		assert_null(strstr(p + 1, "\"key\":\"flash2 N=1"));
	}
	free(text);
	snprintf(path, sizeof(path), "%s/sw/manifest.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "--splits 1,4"));
	free(text);
	/* results.csv tells the two S apart in its last column; flash2's is empty (formulas:
	 * no counts, so no estimate columns either) */
	snprintf(path, sizeof(path), "%s/sw/results.csv", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, ",sample_too_small,splits,kv_page\n"));
	assert_non_null(strstr(text, "\"\",,,,1,\n"));
	assert_non_null(strstr(text, "\"\",,,,4,\n"));
	assert_non_null(strstr(text, "\"\",,,,,\n"));
	free(text);
	/* without --splits: the heuristic on h100, 1 on lab */
	r = memsim("sweep --out sw2 --kernel flashdecode --N 1 --N-kv 8192 --heads 8 --dtype fp16 "
		   "--cache h100 --cache lab --formula-only --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sw2/results.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "splits=32 d=64"));
	assert_non_null(strstr(text, "splits=1 d=64"));
	assert_non_null(strstr(text, "\"splits_source\":\"heuristic\""));
	assert_non_null(strstr(text, "\"splits_source\":\"cpu\""));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_splits),
		cmocka_unit_test(test_gqa_packed),
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
