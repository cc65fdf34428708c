/*
 * The one results-file reader (analysis/results.h): complete rows in order, blank lines
 * skipped, a torn last line left out and said, any other bad line an error naming path:line;
 * paths with selectors; the CSV row.
 */

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/results.h"
#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "results"
#include "tests/tmpdir.h"

struct seen {
	int n;
	double N[8];
	unsigned long line[8];
};

static int
collect(const cJSON *r, unsigned long line, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->N[s->n] = results_number(r, "config.N", -1);
		s->line[s->n] = line;
	}
	s->n++;
	return 0;
}

static int
stop_at_second(const cJSON *r, unsigned long line, void *ctx)
{
	(void)r;
	(void)ctx;
	return line == 2 ? 42 : 0;
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_read(void **state)
{
	static const struct {
		const char *text;
		int rc;            /* results_read()'s return */
		int rows;          /* rows handed over */
		double first_N;    /* the first row's config.N */
		bool torn;         /* the last line was left out */
		long long good;    /* bytes up to the end of the last complete row */
		const char *error; /* in err, where rc < 0 */
	} cases[] = {
		{ "{\"config\":{\"N\":1}}\n{\"config\":{\"N\":2}}\n", 0, 2, 1, false, 38, NULL },
		{ "\n{\"config\":{\"N\":3}}\n  \n", 0, 1, 3, false, 23, NULL },
		{ "{\"config\":{\"N\":1}}\n{\"config\":{\"N\":", 0, 1, 1, true, 19, NULL },
		/* A whole object without its newline is still a cut-off write. */
		{ "{\"config\":{\"N\":1}}\n{\"config\":{\"N\":2}}", 0, 1, 1, true, 19, NULL },
		{ "{\"config\":{\"N\":1}}\ngarbage\n{\"config\":{\"N\":2}}\n", -EINVAL, 1, 1, false,
		  19, ":2: not a JSON object" },
		{ "[1,2]\n", -EINVAL, 0, -1, false, 0, ":1: not a JSON object" },
		{ "", 0, 0, -1, false, 0, NULL },
		{ NULL, 0, 0, 0, false, 0, NULL },
	};
	char path[600], err[700];

	(void)state;
	snprintf(path, sizeof(path), "%s/r.json", tmpdir);
	for (int i = 0; cases[i].text; i++) {
		struct seen s = { 0 };
		struct results_info info;
		int rc;

		write_text(path, cases[i].text);
		err[0] = '\0';
		rc = results_read(path, collect, &s, &info, err, sizeof(err));
		if (rc != cases[i].rc || s.n != cases[i].rows || info.torn != cases[i].torn ||
		    info.good_bytes != cases[i].good || (s.n && s.N[0] != cases[i].first_N) ||
		    (cases[i].error && !strstr(err, cases[i].error)))
			fail_msg("case %d: rc %d rows %d torn %d good %lld err '%s'", i, rc, s.n,
				 info.torn, info.good_bytes, err);
	}
	/* The callback's value stops the read and comes back. */
	write_text(path, "{}\n{}\n{}\n");
	assert_int_equal(results_read(path, stop_at_second, NULL, NULL, err, sizeof(err)), 42);
	/* A missing file: -ENOENT, named. */
	snprintf(path, sizeof(path), "%s/none.json", tmpdir);
	assert_int_equal(results_read(path, collect, &(struct seen){ 0 }, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "none.json"));
}

static void
test_paths(void **state)
{
	cJSON *r = cJSON_Parse(
		"{\"config\":{\"kernel\":\"naive\",\"N\":256,\"causal\":false},"
		"\"compare\":[{\"formula\":\"lab\",\"ratio\":1.5},{\"formula\":\"exact\",\"ratio\":1,"
		"\"within\":true}],\"a.b\":1}");

	(void)state;
	assert_non_null(r);
	assert_true(results_number(r, "config.N", 0) == 256);
	assert_string_equal(results_string(r, "config.kernel"), "naive");
	assert_string_equal(results_string(r, "config.N"), "");
	assert_true(results_number(r, "compare[formula=lab].ratio", 0) == 1.5);
	assert_true(results_number(r, "compare[1].ratio", 0) == 1);
	assert_true(results_true(r, "compare[formula=exact].within"));
	assert_false(results_true(r, "compare[formula=lab].within"));
	assert_null(results_get(r, "compare[formula=none].ratio"));
	assert_null(results_get(r, "compare[5]"));
	assert_null(results_get(r, "config.N.x"));
	assert_true(results_matches(r, "config.kernel=naive,config.N=256,config.causal=false"));
	assert_false(results_matches(r, "config.kernel=naive,config.N=255"));
	assert_false(results_matches(r, "config.N"));
	assert_true(results_matches(r, ""));
	assert_true(results_number(r, "missing", -7) == -7);
	cJSON_Delete(r);
}

static void
test_csv(void **state)
{
	cJSON *r = cJSON_Parse(
		"{\"index\":3,\"config\":{\"kernel\":\"flash2\",\"N\":256,\"d\":64,\"heads\":2,"
		"\"kv_heads\":1,\"batch\":1,\"dtype\":\"fp16\",\"Br\":64,\"Bc\":32,\"causal\":true,"
		"\"cache\":\"L1=32K:8:64,tiles=\\\"x\\\"\",\"flush\":true},\"mode\":\"simulated\","
		"\"dram\":{\"read_bytes\":100,\"write_bytes\":50,\"rfo_bytes\":0,"
		"\"flush_write_bytes\":10},\"regime\":{\"text\":\"in\",\"within_lab_assumptions\":true},"
		"\"compare\":[{\"formula\":\"exact\",\"ratio\":1,\"within\":true}],\"flops\":7}");
	char path[600], *text;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/r.csv", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_row(f, r), 0);
	fclose(f);
	text = slurp_text(path);
	assert_string_equal(
		text, "3,flash2,256,256,64,2,1,1,fp16,64,32,1,\"L1=32K:8:64,tiles=\"\"x\"\"\","
		      "1,simulated,100,50,0,10,,1,1,,,,,,1,\"in\",7,,,\"\",exact,0,0,,\n");
	free(text);
	/* The header names as many columns as a row has. */
	{
		int commas = 0;

		for (const char *c = results_csv_header; *c; c++)
			commas += *c == ',';
		assert_int_equal(commas, 37);
	}
	cJSON_Delete(r);
	/* config.N_kv given: its own column */
	r = cJSON_Parse("{\"index\":1,\"config\":{\"kernel\":\"flash2\",\"N\":4,\"N_kv\":4096}}");
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_row(f, r), 0);
	fclose(f);
	text = slurp_text(path);
	assert_true(strncmp(text, "1,flash2,4,4096,,", 17) == 0);
	free(text);
	cJSON_Delete(r);
	/* flashdecode's splits: the last column (rows of another S were alike before) */
	r = cJSON_Parse("{\"index\":2,\"config\":{\"kernel\":\"flashdecode\",\"N\":1,"
			"\"N_kv\":4096,\"splits\":8}}");
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_row(f, r), 0);
	fclose(f);
	text = slurp_text(path);
	assert_non_null(strstr(text, ",,,,8,\n"));
	free(text);
	cJSON_Delete(r);
	/* a paged run's P: the column after splits (rows of another P were alike) */
	r = cJSON_Parse("{\"index\":3,\"config\":{\"kernel\":\"flash2\",\"N\":1,"
			"\"N_kv\":4096,\"kv_page\":16}}");
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_row(f, r), 0);
	fclose(f);
	text = slurp_text(path);
	assert_non_null(strstr(text, ",,,,,16\n"));
	free(text);
	cJSON_Delete(r);
}

/* The CSV row of JSON text, without its newline, into buf. */
static void
csv_of(const char *json, char *buf, size_t len)
{
	cJSON *r = cJSON_Parse(json);
	char path[600], *text;
	FILE *f;

	assert_non_null(r);
	snprintf(path, sizeof(path), "%s/row.csv", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_row(f, r), 0);
	fclose(f);
	cJSON_Delete(r);
	text = slurp_text(path);
	text[strcspn(text, "\n")] = '\0';
	snprintf(buf, len, "%s", text);
	free(text);
}

/* A value the row does not hold is an empty field, never a 0 that reads as a count: a failed
 * run's bytes, a formula's measurement, the lab formula a kernel has not; a plugin's formula
 * bytes, ratio and time are read where its rows keep them. */
static void
test_csv_absent(void **state)
{
	static const struct {
		const char *what, *json, *row;
	} cases[] = {
		{ "a failed run",
		  "{\"index\":1,\"error\":\"cannot map 6.0 GiB\",\"config\":{\"kernel\":\"naive\","
		  "\"N\":64,\"N_kv\":64,\"d\":16,\"heads\":1,\"kv_heads\":1,\"batch\":1,"
		  "\"dtype\":\"fp32\",\"Br\":64,\"Bc\":64,\"causal\":false,\"cache\":\"lab\","
		  "\"flush\":true}}",
		  "1,naive,64,64,16,1,1,1,fp32,64,64,0,\"lab\",1,,,,,,,,,,,,,,,\"\",,,,"
		  "\"cannot map 6.0 GiB\",,,,," },
		{ "a formula, not run",
		  "{\"index\":0,\"config\":{\"kernel\":\"naive\",\"N\":64},\"mode\":\"formula\","
		  "\"formulas\":{\"lab\":{\"bytes\":114688,\"applicable\":true},"
		  "\"exact\":{\"bytes\":131072}},\"flops\":1069056,\"intensity\":8.15625}",
		  "0,naive,64,64,,,,,,,,,\"\",,formula,,,,,131072,,,,114688,,,,,\"\",1.06906e+06,"
		  "8.15625,,\"\",,,,," },
		{ "a plugin's row",
		  "{\"index\":0,\"config\":{\"kernel\":\"stream\",\"N\":64},"
		  "\"dram\":{\"read_bytes\":32768,\"write_bytes\":16384,\"rfo_bytes\":0,"
		  "\"flush_write_bytes\":2048},\"formulas\":{\"exact\":{\"scope\":\"estimate\","
		  "\"predicted_bytes\":49152,\"measured_bytes\":49152,\"ratio\":1}},"
		  "\"timing\":{\"traced_seconds\":0.25}}",
		  "0,stream,64,64,,,,,,,,,\"\",,,32768,16384,0,2048,49152,1,,,,,,,,\"\",,,0.25,"
		  "\"\",exact,0,0,," },
		{ "a plugin's row with its verdicts",
		  "{\"index\":0,\"config\":{\"kernel\":\"stream\",\"N\":64},"
		  "\"dram\":{\"read_bytes\":32768,\"write_bytes\":16384},\"formulas\":{\"exact\":"
		  "{\"bytes\":49152,\"ratio\":1,\"within\":true,\"arrays_within\":false}}}",
		  "0,stream,64,64,,,,,,,,,\"\",,,32768,16384,,,49152,1,1,0,,,,,,\"\",,,,\"\",exact,0,"
		  "0,," },
		{ "a kernel the lab has no formula for",
		  "{\"index\":0,\"config\":{\"kernel\":\"proj\",\"N\":64},\"mode\":\"simulated\","
		  "\"dram\":{\"read_bytes\":10},\"formulas\":{\"lab\":{\"bytes\":0,"
		  "\"applicable\":false},\"exact\":{\"bytes\":10,\"arrays_within\":true}},"
		  "\"compare\":[{\"formula\":\"exact\",\"ratio\":1,\"within\":true}]}",
		  "0,proj,64,64,,,,,,,,,\"\",,simulated,10,,,,10,1,1,1,,,,,,\"\",,,,\"\",exact,0,0,," },
		{ "an empty row: as many fields as the header", "{}",
		  ",,,,,,,,,,,,\"\",,,,,,,,,,,,,,,,\"\",,,,\"\",,,,," },
		{ NULL, NULL, NULL },
	};
	char row[1024];

	(void)state;
	for (int i = 0; cases[i].what; i++) {
		csv_of(cases[i].json, row, sizeof(row));
		if (strcmp(row, cases[i].row) != 0)
			fail_msg("%s:\n  got  %s\n  want %s", cases[i].what, row, cases[i].row);
	}
}

/* A plugin sweep's columns param_KEY, after the others: the row's config.params.KEY by name
 * (a key may hold a dot or a comma), empty where the row has none. */
static void
test_csv_params(void **state)
{
	static const char *const keys[] = { "window", "a.b,c" };
	cJSON *r = cJSON_Parse("{\"config\":{\"kernel\":\"sink\",\"params\":{\"a.b,c\":\"x y\","
			       "\"window\":\"64\"}}}");
	char path[600], *text;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/p.csv", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(results_csv_header_params(f, keys, 2), 0);
	assert_int_equal(results_csv_row_params(f, r, keys, 2), 0);
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "config"), "params");
	assert_int_equal(results_csv_row_params(f, r, keys, 2), 0);
	fclose(f);
	cJSON_Delete(r);
	text = slurp_text(path);
	assert_non_null(strstr(text, ",splits,kv_page,param_window,\"param_a.b,c\"\n"));
	assert_non_null(strstr(text, ",,,,,,64,x y\n"));
	assert_non_null(strstr(text, ",,,,,,,\n"));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),       cmocka_unit_test(test_paths),
		cmocka_unit_test(test_csv),        cmocka_unit_test(test_csv_absent),
		cmocka_unit_test(test_csv_params),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
