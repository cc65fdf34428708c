/*
 * Set sampling's judgement as a user meets it (issue 17 item 7): a footprint of a few lines at
 * --sample-sets 64 is refused when no access reaches the sampled sets (exit 2, one line) and
 * warned about when too few chunks do (one stderr line, the text's "sample too small", the
 * JSON's estimate fields); a realistic footprint is not; sweep rows, their CSV and the
 * manifest carry the same fields, and replay judges as run does.
 */

#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-sampling"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define DIN TEST_DATA_DIR "/dinero/t4_mixed.din"
#define RUN "run --kernel naive --trace-only --cache L1=32K:8:64,L2=256K:8:64 "

/* estimate.sample_too_small and the other fields of a report with a sample: present, typed;
 * no part of the estimated error above it. */
static bool
too_small(const cJSON *report)
{
	const cJSON *e = cJSON_GetObjectItem(report, "estimate");
	const cJSON *ev = cJSON_GetObjectItem(e, "sample_events");
	const cJSON *flag = cJSON_GetObjectItem(e, "sample_too_small");

	assert_non_null(e);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(e, "estimated_error")));
	assert_true(cJSON_GetObjectItem(e, "error_bound")->valuedouble == 0.10);
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(e, "sample_empty")));
	assert_true(cJSON_IsString(cJSON_GetObjectItem(e, "reason")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ev, "references")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ev, "dram_effective_chunks")));
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(ev, "misses")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ev, "set_classes")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ev, "read_bytes")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ev, "write_bytes")));
	for (int i = 0; i < 4; i++) {
		static const char *parts[] = { "chunks", "set_classes", "loads", "stores" };
		const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "error_parts"), parts[i]);

		/* the estimated error is the largest part (or 1: nothing moved) */
		assert_true(cJSON_IsNumber(p));
		assert_true(p->valuedouble <=
			    cJSON_GetObjectItem(e, "estimated_error")->valuedouble + 1e-4);
	}
	assert_true(cJSON_IsBool(flag));
	/* The reason is given exactly when the flag is up. */
	assert_int_equal(cJSON_IsTrue(flag),
			 cJSON_GetObjectItem(e, "reason")->valuestring[0] != '\0');
	return cJSON_IsTrue(flag);
}

/* No access of naive at N = d = 4 reaches 1 set in 64: refused, nothing written. At N = 16 on
 * a 128-byte L2 a few chunks do (the estimate is 5.6 times the exact bytes), among them 15 times
 * their share of the stores: a warning line that says so, the text says so and the JSON flags
 * it. */
static void
test_run_few_lines(void **state)
{
	struct result r;
	cJSON *o;

	(void)state;
	r = memsim(RUN "--N 4 --d 4 --sample-sets 64 --json few.json");
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "--sample-sets 64: no access reached the sampled sets"));
	assert_string_equal(r.out, "");
	assert_null(read_json("few.json"));
	result_free(&r);

	r = memsim("run --kernel naive --trace-only --cache L1=64K:8:64,L2=512K:8:128 --N 16 --d 8 "
		   "--sample-sets 64 --json few.json");
	assert_int_equal(r.rc, 0);
	assert_true(one_line_with(r.err, "memsim: warning: --sample-sets 64: the sampled sets "
					 "saw 1490% of their share of the bytes stored"));
	assert_non_null(strstr(r.err, "estimate.sample_too_small"));
	assert_non_null(strstr(r.out, "sample: "));
	assert_non_null(strstr(r.out, ": sample too small\n"));
	result_free(&r);
	o = read_json("few.json");
	assert_non_null(o);
	assert_true(too_small(o));
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "estimate"), "estimated_error")
			    ->valuedouble > 0.10);
	cJSON_Delete(o);
}

/* A realistic footprint, at K = 8 and 64: no warning, not flagged; without sampling no
 * estimate at all. */
static void
test_run_realistic(void **state)
{
	static const char *ks[] = { "--sample-sets 8", "--sample-sets 64", "" };
	struct result r;
	cJSON *o;

	(void)state;
	for (int i = 0; i < 3; i++) {
		r = memsim(RUN "--N 1024 --d 64 %s --json real.json", ks[i]);
		assert_int_equal(r.rc, 0);
		assert_string_equal(r.err, "");
		assert_null(strstr(r.out, "sample too small"));
		result_free(&r);
		o = read_json("real.json");
		assert_non_null(o);
		if (ks[i][0])
			assert_false(too_small(o));
		else
			assert_null(cJSON_GetObjectItem(o, "estimate"));
		cJSON_Delete(o);
	}
}

/* A sweep does not refuse: each row carries the judgement (the few-lines one flagged and
 * empty, the realistic one not), the CSV its columns, the manifest the count, and stderr one
 * warning line with the count. */
static void
test_sweep_rows(void **state)
{
	char path[700], *text, *line, *save = NULL, want[64];
	struct result r;
	int rows = 0, flagged = 0, seen = 0;
	cJSON *m;

	(void)state;
	r = memsim("sweep --out sw --kernel naive --N 4,1024 --d 4,64 --trace-only --cache "
		   "L1=32K:8:64,L2=256K:8:64 --sample-sets 64 --jobs 2");
	assert_int_equal(r.rc, 0);
	snprintf(path, sizeof(path), "%s/sw/results.json", tmpdir);
	text = slurp_text(path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(line);
		const cJSON *cfg = cJSON_GetObjectItem(row, "config");
		double n = cJSON_GetObjectItem(cfg, "N")->valuedouble;
		double d = cJSON_GetObjectItem(cfg, "d")->valuedouble;
		const cJSON *e = cJSON_GetObjectItem(row, "estimate");
		bool flag = too_small(row);

		rows++;
		flagged += flag;
		if (n == 4 && d == 4) {
			assert_true(flag);
			assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "sample_empty")));
			seen++;
		} else if (n == 1024 && d == 64) {
			assert_false(flag);
			seen++;
		}
		cJSON_Delete(row);
	}
	free(text);
	assert_int_equal(rows, 4);
	assert_int_equal(seen, 2);
	snprintf(want, sizeof(want), "warning: %d of 4 rows sampled too few", flagged);
	assert_non_null(strstr(r.err, want));
	result_free(&r);
	snprintf(path, sizeof(path), "%s/sw/results.csv", tmpdir);
	text = slurp_text(path);
	assert_non_null(
		strstr(text, ",estimate,estimated_error,sample_too_small,splits,kv_page\n"));
	assert_non_null(strstr(text, ",sampled 1/64,1,1,,\n")); /* the empty row */
	free(text);
	m = read_json("sw/manifest.json");
	assert_int_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(m, "results_summary"), "sample_too_small")
			->valueint,
		flagged);
	cJSON_Delete(m);
}

/* Replay judges as run does: a trace whose addresses all miss the sampled sets is refused; a
 * small trace at 1 set in 16 is flagged in the JSON with a warning line. */
static void
test_replay(void **state)
{
	char path[700];
	struct result r;
	FILE *f;
	cJSON *o;

	(void)state;
	snprintf(path, sizeof(path), "%s/few.din", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0 1000\n1 1040\n0 2000\n", f);
	fclose(f);
	r = memsim("replay few.din --cache L1=4K:4:64 --sample-sets 4");
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "--sample-sets 4: no access reached the sampled sets"));
	result_free(&r);
	r = memsim("replay %s --cache L1=4K:4:64 --sample-sets 16 --json rp.json", DIN);
	assert_int_equal(r.rc, 0);
	assert_true(one_line_with(r.err, "memsim: warning: --sample-sets 16:"));
	result_free(&r);
	o = read_json("rp.json");
	assert_non_null(o);
	assert_true(too_small(o));
	cJSON_Delete(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_few_lines),
		cmocka_unit_test(test_run_realistic),
		cmocka_unit_test(test_sweep_rows),
		cmocka_unit_test(test_replay),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
