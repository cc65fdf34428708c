/*
 * The paged KV cache as a user meets it (issue 22 item 3): --kv-page parsed and refused where
 * it must be (0, not a number, kernels other than flash2 and flashdecode, plugins, gpucheck,
 * sweep), the JSON
 * config's kv_page and kv_seed with the block_table array, native runs checked against the
 * reference, sweep lists of it (keys, results.csv's kv_page column, table labels), and what
 * paging changes: nothing for K and V on a fully associative LRU cache, re-reads on a
 * set-associative one where a kv head's rows, [P][kv_heads][d] in a page, crowd a quarter of
 * the sets.
 */

#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-paged"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

static void
test_refusals(void **state)
{
	(void)state;
	expect_error("run --kernel flash2 --kv-page 0", 2, "--kv-page must be at least 1");
	expect_error("formula --kernel flash2 --kv-page 0", 2, "--kv-page must be at least 1");
	expect_error("run --kernel flash2 --kv-page x", 2, "--kv-page: 'x' is not a whole number");
	expect_error("run --kernel flash2 --kv-page -16", 2,
		     "--kv-page: '-16' is not a whole number");
	expect_error("run --kernel naive --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode, not naive");
	expect_error("formula --kernel flash1 --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode, not flash1");
	expect_error("run --kernel proj --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode, not proj");
	expect_error("native --kernel naive --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode, not naive");
	expect_error("run --kernel ./x.so --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode, not a plugin");
	expect_error("gpucheck --kernel flash2 --N 64 --kv-page 16 --no-gpu", 2,
		     "--kv-page: the GPU kernels take an unpaged KV cache");
	expect_error("formula --kernel flash2 --N 1 --N-kv 4294967296 --kv-page 1", 2,
		     "past the int32 block table's 2^31 pages");
	expect_error("sweep --out x --kernel flash2 --kv-page 0", 2,
		     "--kv-page must be at least 1");
	expect_error("sweep --out x --kernel naive,flash1 --kv-page 16", 2,
		     "--kv-page is for --kernel flash2 or flashdecode");
}

/* config.kv_page and kv_seed (= --seed), the block table among the arrays; a page past N_kv
 * (one page, partly used) and one not dividing it run; --help says it. */
static void
test_run_json(void **state)
{
	struct result r;
	cJSON *o, *cfg, *bt;

	(void)state;
	r = memsim("run --kernel flash2 --N 4 --N-kv 1000 --heads 4 --kv-heads 2 --kv-page 16 "
		   "--seed 9 --cache L1=16K:4:64 --json p.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "kv_page=16"));
	assert_non_null(strstr(r.out, "block_table"));
	result_free(&r);
	o = read_json("p.json");
	cfg = cJSON_GetObjectItem(o, "config");
	assert_true(cJSON_GetObjectItem(cfg, "kv_page")->valuedouble == 16);
	assert_true(cJSON_GetObjectItem(cfg, "kv_seed")->valuedouble == 9);
	bt = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "arrays"), "block_table");
	assert_non_null(bt);
	/* 63 entries of 4 bytes: at least its 4 lines */
	assert_true(cJSON_GetObjectItem(bt, "read_bytes")->valuedouble >= 4 * 64);
	cJSON_Delete(o);
	/* unpaged: no kv_page, no block table */
	r = memsim("run --kernel flash2 --N 4 --N-kv 1000 --cache L1=16K:4:64 --json u.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	o = read_json("u.json");
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "config"), "kv_page"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "arrays"), "block_table"));
	cJSON_Delete(o);
	expect_ok("run --kernel flash2 --N 4 --N-kv 100 --kv-page 256 --cache lab");
	/* flashdecode, packed grouped-query decode at S = 4 */
	r = memsim("run --kernel flashdecode --N 1 --N-kv 1000 --heads 8 --kv-heads 2 --splits 4 "
		   "--kv-page 16 --cache L1=16K:4:64 --json fd.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "splits=4 gqa-packed kv_page=16"));
	result_free(&r);
	o = read_json("fd.json");
	cfg = cJSON_GetObjectItem(o, "config");
	assert_true(cJSON_GetObjectItem(cfg, "kv_page")->valuedouble == 16);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "arrays"), "block_table"));
	cJSON_Delete(o);
	r = memsim("run --help");
	assert_non_null(strstr(r.out, "--kv-page P"));
	result_free(&r);
}

/* The native build reads K and V through the block table: correct against the reference. */
static void
test_native_check(void **state)
{
	struct result r;

	(void)state;
	r = memsim("native --kernel flash2 --N 40 --N-kv 300 --heads 4 --kv-heads 2 --batch 2 "
		   "--d 32 --Br 16 --Bc 32 --kv-page 7 --causal --check");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "kv_page=7"));
	assert_non_null(strstr(r.out, "0 non-finite: pass"));
	result_free(&r);
	r = memsim("native --kernel flashdecode --N 1 --N-kv 300 --heads 4 --kv-heads 1 --batch 2 "
		   "--d 32 --splits 3 --kv-page 16 --causal --check");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "kv_page=16"));
	assert_non_null(strstr(r.out, "0 non-finite: pass"));
	result_free(&r);
}

/* K or V read bytes of a run's JSON. */
static double
array_read(const char *name, const char *array)
{
	cJSON *o = read_json(name);
	double v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "arrays"), array),
				       "read_bytes")
			   ->valuedouble;

	cJSON_Delete(o);
	return v;
}

/* What paging changes. Four kv heads of 1 MiB of K each, 8 query blocks: on a fully
 * associative LRU cache K and V move what they move unpaged (paging relabels lines); on the
 * default CPU preset (i5-8250u: L3 6 MiB 12-way) unpaged one kv head's K and V (2 MiB) stay
 * cached across its query blocks, paged its rows sit on a quarter of the sets ([P][kv_heads][d]
 * pages) and are read again. */
static void
test_set_associative(void **state)
{
	static const char *shape = "run --kernel flash2 --N 32 --N-kv 4096 --Br 16 --heads 4 "
				   "--kv-heads 4 --trace-only";
	struct result r;
	double k0, k1;

	(void)state;
	r = memsim("%s --cache L1=4M:full:64,tiles=scratch --json f0.json", shape);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("%s --cache L1=4M:full:64,tiles=scratch --kv-page 16 --json f1.json", shape);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_true(array_read("f0.json", "K") == array_read("f1.json", "K"));
	assert_true(array_read("f0.json", "V") == array_read("f1.json", "V"));
	r = memsim("%s --cache i5-8250u --json s0.json", shape);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("%s --cache i5-8250u --kv-page 16 --json s1.json", shape);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	k0 = array_read("s0.json", "K");
	k1 = array_read("s1.json", "K");
	/* unpaged: each K line once */
	assert_true(k0 == 4 * 4096 * 64 * 4.0);
	if (!(k1 >= 1.5 * k0))
		fail_msg("paged K %.0f bytes, unpaged %.0f: paging should re-read K here", k1, k0);
	assert_true(array_read("s1.json", "V") >= 1.5 * array_read("s0.json", "V"));
}

/* sweep --kv-page LIST: flash2 once per P, other kernels once unpaged; keys, CSV, table. */
static void
test_sweep(void **state)
{
	struct result r;
	char path[600], *text;

	(void)state;
	r = memsim("sweep --out sw --kernel flash2,naive,flashdecode --N 4 --N-kv 300 "
		   "--kv-page 16,64 --cache L1=16K:full:64,tiles=scratch --trace-only --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sw/results.csv", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, ",splits,kv_page\n"));
	assert_non_null(strstr(text, ",exact,0,0,,16\n"));
	assert_non_null(strstr(text, ",exact,0,0,,64\n"));
	assert_non_null(strstr(text, ",exact,0,0,,\n")); /* naive, unpaged */
	assert_non_null(strstr(text, ",naive,"));
	assert_non_null(strstr(text, ",exact,0,0,1,16\n")); /* flashdecode, S = 1 */
	assert_non_null(strstr(text, ",exact,0,0,1,64\n"));
	free(text);
	snprintf(path, sizeof(path), "%s/sw/results.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "kv_page=16"));
	assert_non_null(strstr(text, "kv_page=64"));
	free(text);
	snprintf(path, sizeof(path), "%s/sw/manifest.json", tmpdir);
	text = slurp_text(path);
	assert_non_null(strstr(text, "--kv-page 16,64"));
	free(text);
	r = memsim("table sw");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "kv_page=16"));
	assert_non_null(strstr(r.out, "kv_page=64"));
	result_free(&r);
}

/* The computing and trace-only builds record the same accesses: their recordings replay to
 * the same counters, every level, DRAM, per array (block_table too) and per phase. */
static void
test_record(void **state)
{
	static const char *shape = "run --kernel flash2 --N 24 --N-kv 200 --heads 4 --kv-heads 2 "
				   "--d 24 --Br 16 --Bc 32 --kv-page 7 --causal --cache L1=8K:4:64";
	static const char *const fields[] = { "levels", "dram", "arrays", "phases", "cpu" };
	cJSON *a, *b;

	(void)state;
	expect_ok("%s --record c.mt >/dev/null", shape);
	expect_ok("%s --trace-only --record t.mt >/dev/null", shape);
	expect_ok("replay c.mt --cache L1=4K:2:64,L2=32K:8:64 --json rc.json");
	expect_ok("replay t.mt --cache L1=4K:2:64,L2=32K:8:64 --json rt.json");
	a = read_json("rc.json");
	b = read_json("rt.json");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "arrays"), "block_table"));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!cJSON_Compare(cJSON_GetObjectItem(a, fields[i]),
				   cJSON_GetObjectItem(b, fields[i]), true))
			fail_msg("computing and trace-only recordings differ in %s", fields[i]);
	cJSON_Delete(a);
	cJSON_Delete(b);
	assert_int_equal(sh("rm -f c.mt t.mt rc.json rt.json"), 0);
}

/* A trace-only run holds the block table's values on the heap: where they do not fit (an
 * address-space limit that the arena fits under), one line and exit 1, not an abort. */
static void
test_table_memory(void **state)
{
	struct result r;

	(void)state;
	if (test_sanitized()) {
		/* ASan's shadow memory does not fit under an address-space limit */
		print_message("# not run: an address-space limit in a sanitized build\n");
		return;
	}
	/* arena 4 GiB (5 with the alignment's slack), table 2 GiB more */
	r = run_line(5600ULL << 20, MEMSIM_BIN " run --kernel flash2 --N 1 --N-kv 536870912 "
					       "--d 1 --dtype fp16 --kv-page 1 --trace-only --cache lab");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "cannot allocate the block table of 536870912 pages "
				      "(2.00 GiB)"));
	assert_true(one_line_with(r.err, "block table"));
	result_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),     cmocka_unit_test(test_run_json),
		cmocka_unit_test(test_native_check), cmocka_unit_test(test_set_associative),
		cmocka_unit_test(test_sweep),        cmocka_unit_test(test_record),
		cmocka_unit_test(test_table_memory),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
