/*
 * memsim built without PAPI: measure/papi_count.c compiled again with MEMSIM_FORCE_NO_PAPI (so
 * this test runs in a PAPI build too). papi_measure() does not run the function and says
 * "not-built" with the install hint; the JSON and the one-line summary say the same.
 */

#include <cJSON.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/papi_count.h"
#include "tests/unit.h"

static void
must_not_run(void *arg)
{
	*(bool *)arg = true;
}

static void
test_not_built(void **state)
{
	struct papi_report *r = calloc(1, sizeof(*r));
	bool ran = false;
	char line[256];
	cJSON *o = cJSON_CreateObject();

	(void)state;
	assert_non_null(r);
	assert_int_equal(papi_measure(must_not_run, &ran, 64, r), -ENOTSUP);
	assert_false(ran);
	assert_false(r->ran);
	assert_int_equal(r->status, PAPI_STATUS_NOT_BUILT);
	assert_string_equal(r->reason,
			    "memsim was built without PAPI (install libpapi-dev and rebuild)");
	papi_report_json(r, o);
	assert_string_equal(cJSON_GetObjectItem(o, "status")->valuestring, "not-built");
	assert_string_equal(cJSON_GetObjectItem(o, "reason")->valuestring, r->reason);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "dram_read_bytes")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "task_clock_ns")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "seconds")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "papi_version")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "strategy")));
	papi_report_line(r, line, sizeof(line));
	assert_string_equal(line,
			    "not-built: memsim was built without PAPI (install libpapi-dev and "
			    "rebuild)");
	cJSON_Delete(o);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_built),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
