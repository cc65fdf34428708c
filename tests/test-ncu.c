/*
 * Nsight Compute's CSV (measure/ncu.c) on a real one: `ncu --csv --page raw --print-units base
 * --print-kernel-base function` of memsim-gpu's naive kernels (N = 1024, 16 heads, fp16) on an
 * H100, 2026-11-22 (tests/data/ncu/); and every way one can be wrong.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/ncu.h"
#include "tests/slurp.h"
#include "tests/unit.h"

#define CSV TEST_DATA_DIR "/ncu/naive-N1024-h16-fp16.csv"

static const char *const metrics[] = { "dram__bytes_read.sum", "dram__bytes_write.sum",
				       "gpu__time_duration.sum" };

static void
test_real_csv(void **state)
{
	struct ncu_result r;
	char err[256], *text = slurp(CSV, NULL);

	(void)state;
	assert_non_null(text);
	assert_int_equal(ncu_parse(text, metrics, 3, &r, err, sizeof(err)), 0);
	assert_int_equal(r.nkernels, 3);
	assert_string_equal(r.kernels[0].name, "scores_kernel");
	assert_string_equal(r.kernels[1].name, "softmax_kernel");
	assert_string_equal(r.kernels[2].name, "av_kernel");
	/* "4,202,752" and friends, thousands separators dropped */
	assert_true(r.kernels[0].value[0] == 4202752);
	assert_true(r.kernels[0].value[1] == 13577984);
	assert_true(r.kernels[2].value[2] == 365664);
	free(text);
}

static void
expect(const char *text, const char *msg)
{
	struct ncu_result r;
	char err[256];

	if (ncu_parse(text, metrics, 3, &r, err, sizeof(err)) != -1 || !strstr(err, msg))
		fail_msg("'%.40s': expected '%s', got '%s'", text, msg, err);
}

static void
test_bad_csv(void **state)
{
	(void)state;
	expect("==PROF== nothing profiled\n", "no CSV table");
	expect("\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n",
	       "no column dram__bytes_write.sum");
	expect("\"ID\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"gpu__time_duration.sum\"\n",
	       "no column \"Kernel Name\"");
	expect("\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\","
	       "\"gpu__time_duration.sum\"\n\"\",\"\",\"byte\",\"byte\",\"ns\"\n",
	       "no kernel row");
	expect("\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\","
	       "\"gpu__time_duration.sum\"\n\"\",\"\",\"byte\",\"byte\",\"ns\"\n"
	       "\"0\",\"k\",\"12\",\"n/a\",\"3\"\n",
	       "dram__bytes_write.sum is 'n/a', not a number");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_csv),
		cmocka_unit_test(test_bad_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
