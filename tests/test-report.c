/*
 * The study end to end, small: `memsim study --small` into a scratch directory, then
 *  - every PNG the study drew is a PNG of non-trivial size and every SVG is well-formed XML;
 *  - the report names no number absent from the results: every number in report.md (outside
 *    `code`, which holds the labs' formulas) is one recorded in report-numbers.json, and every
 *    recorded number, re-read from its sources and recomputed, prints the same;
 *  - the decode step wrote its rows (MHA, GQA, MQA at every N_kv), its two plots, and the
 *    report's decode section prints the rows' own numbers;
 *  - report.html opens in headless Chromium with every image decoded and no script error
 *    (its own check, read back from the DOM), and a screenshot is taken (kept when
 *    MEMSIM_REPORT_SHOT names a path, for a person to look at).
 */

#include "config.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "analysis/lookup.h"
#include "analysis/results.h"
#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "report"
#include "tests/tmpdir.h"
#include "tests/xmlcheck.h"

static char study[700];

static int
sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

static bool
have(const char *prog)
{
	return sh("command -v %s >/dev/null 2>&1", prog) == 0;
}

static void
test_study(void **state)
{
	(void)state;
	snprintf(study, sizeof(study), "%s/study", tmpdir);
	/* A sanitized memsim cannot run under valgrind: the study then skips its cross-checks,
	 * as on a machine without valgrind. */
	if (sh("%s%s study --small --out %s >%s/study.log 2>&1",
	       test_sanitized() ? "MEMSIM_VALGRIND=/nonexistent/valgrind " : "", MEMSIM_BIN, study,
	       tmpdir) != 0) {
		sh("tail -20 %s/study.log >&2", tmpdir);
		fail_msg("memsim study --small failed");
	}
}

static void
test_images(void **state)
{
	char dir[800], path[1100];
	DIR *d;
	struct dirent *e;
	int png = 0, svg = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/plots", study);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		long n;
		char *data;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".png") == 0) {
			data = slurp(path, &n);
			assert_non_null(data);
			if (n < 10000 || memcmp(data, "\x89PNG\r\n\x1a\n", 8) != 0 ||
			    memcmp(data + 12, "IHDR", 4) != 0)
				fail_msg("%s is not a PNG of non-trivial size (%zu bytes)", path,
					 n);
			png++;
			free(data);
		} else if (len > 4 && strcmp(e->d_name + len - 4, ".svg") == 0) {
			const char *why;
			int paths;

			data = slurp(path, &n);
			assert_non_null(data);
			if ((why = xml_check(data, &paths)) || paths == 0)
				fail_msg("%s is not a well-formed SVG with paths: %s", path,
					 why ? why : "no path");
			svg++;
			free(data);
		}
	}
	closedir(d);
	print_message("# %d PNG and %d SVG files checked\n", png, svg);
	assert_true(png >= 5 && svg == png);
}

/* Blanks every occurrence of s in buf. */
static void
blank(char *buf, const char *s)
{
	size_t n = strlen(s);

	if (!n)
		return;
	for (char *p = strstr(buf, s); p; p = strstr(p + n, s))
		memset(p, ' ', n);
}

static int
longer_first(const void *a, const void *b)
{
	size_t x = strlen(*(const char *const *)a), y = strlen(*(const char *const *)b);

	return (x < y) - (x > y);
}

/* The op names of report-numbers.json, in enum lookup_op's order. */
static const char *const op_names[] = { "value", "ratio",    "product", "sum",
					"diff",  "quotient", "slope" };

/* Checks one recorded number of report-numbers.json against the results under l: re-reads
 * each source, recomputes and reformats it (lookup_num()). Returns true, or false with the
 * reason in why. */
static bool
verify_number(struct lookup *l, const cJSON *number, char *why, size_t whylen)
{
	struct lookup_src src[LOOKUP_SRC_MAX];
	unsigned nsrc = 0;
	int op = -1;
	const cJSON *s;
	const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(number, "text"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(number, "op"));
	const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItem(number, "format"));
	const char *again;

	if (!text || !name) {
		snprintf(why, whylen, "a recorded number lacks text or op");
		return false;
	}
	if (strcmp(name, "text") == 0) {
		const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(number, "sources"), 0);
		const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(s0, "file"));
		const char *row = cJSON_GetStringValue(cJSON_GetObjectItem(s0, "row"));
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(s0, "path"));
		const cJSON *r = file && row && path ? lookup_row(l, file, row) : NULL;
		const cJSON *v = r ? results_get(r, path) : NULL;

		if (!cJSON_IsString(v) || strcmp(v->valuestring, text) != 0) {
			snprintf(why, whylen, "text '%.60s' is not at %s [%s] %s", text,
				 file ? file : "?", row ? row : "?", path ? path : "?");
			return false;
		}
		return true;
	}
	if (!fmt) {
		snprintf(why, whylen, "'%s' has no format", text);
		return false;
	}
	for (int i = 0; i < (int)(sizeof(op_names) / sizeof(op_names[0])); i++)
		if (strcmp(name, op_names[i]) == 0)
			op = i;
	if (op < 0) {
		snprintf(why, whylen, "'%s': unknown op '%s'", text, name);
		return false;
	}
	cJSON_ArrayForEach (s, cJSON_GetObjectItem(number, "sources")) {
		const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(s, "file"));
		const char *row = cJSON_GetStringValue(cJSON_GetObjectItem(s, "row"));
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(s, "path"));
		double recorded = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "value"));

		if (nsrc == LOOKUP_SRC_MAX || !file || !row || !path) {
			snprintf(why, whylen, "'%s': bad sources", text);
			return false;
		}
		if (!lookup_get(l, file, row, path, &src[nsrc])) {
			snprintf(why, whylen, "'%s': %s [%s] %s is not in the results", text, file,
				 row, path);
			return false;
		}
		if (src[nsrc].value != recorded) {
			snprintf(why, whylen, "'%s': %s [%s] %s is %.17g, recorded %.17g", text,
				 file, row, path, src[nsrc].value, recorded);
			return false;
		}
		nsrc++;
	}
	if (nsrc == 0) {
		snprintf(why, whylen, "'%s' has no source", text);
		return false;
	}
	again = lookup_num(l, (enum lookup_op)op, src, nsrc,
			   cJSON_GetNumberValue(cJSON_GetObjectItem(number, "scale")), fmt);
	if (strcmp(again, text) != 0) {
		snprintf(why, whylen, "'%s': recomputed from the results it is '%s'", text, again);
		return false;
	}
	return true;
}

static void
test_numbers(void **state)
{
	char path[800], why[1024];
	char *md, *json;
	cJSON *nums, *e;
	struct lookup *l = lookup_create(study);
	bool code = false;
	int checked = 0, tokens = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/report.md", study);
	md = slurp(path, NULL);
	assert_non_null(md);
	snprintf(path, sizeof(path), "%s/report-numbers.json", study);
	json = slurp(path, NULL);
	assert_non_null(json);
	nums = cJSON_Parse(json);
	assert_non_null(nums);
	/* Every recorded number comes from the results. */
	cJSON_ArrayForEach (e, nums) {
		if (!verify_number(l, e, why, sizeof(why)))
			fail_msg("report-numbers.json: %s", why);
		checked++;
	}
	/* Texts read from the results carry their own numbers; the longest first, so that a
	 * short text inside a longer one (a preset's name in its bandwidth's source) does not
	 * break the longer one's match. */
	{
		const char *texts[256];
		size_t nt = 0;

		cJSON_ArrayForEach (e, nums) {
			if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "op")), "text") ==
				    0 &&
			    nt < 256)
				texts[nt++] = cJSON_GetStringValue(cJSON_GetObjectItem(e, "text"));
		}
		qsort(texts, nt, sizeof(*texts), longer_first);
		for (size_t i = 0; i < nt; i++)
			blank(md, texts[i]);
	}
	/* Every number token outside `code` must be a recorded number. */
	for (char *p = md; *p; p++) {
		char tok[64];
		size_t n = 0;
		bool found = false;

		if (*p == '`') {
			code = !code;
			continue;
		}
		if (code || !isdigit((unsigned char)*p) ||
		    (p > md && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')))
			continue;
		while ((isdigit((unsigned char)p[n]) || p[n] == '.') && n < sizeof(tok) - 8)
			n++;
		/* an exponent belongs to the number: 3.47e+10 */
		if ((p[n] == 'e' || p[n] == 'E') &&
		    (isdigit((unsigned char)p[n + 1]) ||
		     ((p[n + 1] == '+' || p[n + 1] == '-') && isdigit((unsigned char)p[n + 2])))) {
			n += p[n + 1] == '+' || p[n + 1] == '-' ? 2 : 1;
			while (isdigit((unsigned char)p[n]) && n < sizeof(tok) - 1)
				n++;
		}
		if (isalpha((unsigned char)p[n]) || p[n] == '_') {
			p += n;
			continue; /* part of a name: i5, 8250u, L1 */
		}
		while (n && p[n - 1] == '.')
			n--; /* a full stop */
		memcpy(tok, p, n);
		tok[n] = '\0';
		p += n - 1;
		tokens++;
		cJSON_ArrayForEach (e, nums) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "text"));

			found |= t &&
				 (strcmp(t, tok) == 0 || (t[0] == '-' && strcmp(t + 1, tok) == 0));
		}
		if (!found)
			fail_msg("report.md names %s, which is not a number read from the results",
				 tok);
	}
	print_message("# %d numbers in report.md, %d recorded numbers and texts verified against "
		      "the results\n",
		      tokens, checked);
	assert_true(tokens > 50);
	cJSON_Delete(nums);
	free(json);
	free(md);
	lookup_destroy(l);
}

static void
test_manifest(void **state)
{
	char path[800];
	char *text;
	cJSON *m;
	static const char *const keys[] = { "experiment", "date",     "seed",           "versions",
					    "config",     "hardware", "results_summary" };

	(void)state;
	snprintf(path, sizeof(path), "%s/manifest.json", study);
	text = slurp(path, NULL);
	assert_non_null(text);
	m = cJSON_Parse(text);
	assert_non_null(m);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!cJSON_GetObjectItem(m, keys[i]))
			fail_msg("manifest.json lacks %s", keys[i]);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "results_summary"),
						       "softmax_GFLOPS_at_T_max")));
	cJSON_Delete(m);
	free(text);
}

static void
test_html_in_chromium(void **state)
{
	char dom[800], shot[800];
	const char *keep = getenv("MEMSIM_REPORT_SHOT");
	char *text;

	(void)state;
	snprintf(dom, sizeof(dom), "%s/dom.html", tmpdir);
	snprintf(shot, sizeof(shot), "%s", keep && *keep ? keep : "");
	if (!shot[0])
		snprintf(shot, sizeof(shot), "%s/report.png", tmpdir);
	/* --virtual-time-budget lets the load event and the page's check run before the dump. */
	assert_int_equal(sh("timeout 120 chromium --headless --no-sandbox --disable-gpu "
			    "--virtual-time-budget=5000 --dump-dom file://%s/report.html >%s "
			    "2>%s/chromium.log",
			    study, dom, tmpdir),
			 0);
	text = slurp(dom, NULL);
	assert_non_null(text);
	if (!strstr(text, "data-check=\"ok\""))
		fail_msg("report.html did not pass its own check in Chromium: %.200s",
			 strstr(text, "data-check") ? strstr(text, "data-check") : "no data-check");
	free(text);
	assert_int_equal(sh("timeout 120 chromium --headless --no-sandbox --disable-gpu "
			    "--hide-scrollbars --window-size=1200,4000 --screenshot=%s "
			    "file://%s/report.html >/dev/null 2>>%s/chromium.log",
			    shot, study, tmpdir),
			 0);
	text = slurp(shot, NULL);
	assert_non_null(text);
	assert_true(memcmp(text, "\x89PNG", 4) == 0);
	free(text);
	print_message("# report.html passed its check in Chromium; screenshot %s\n", shot);
}

/* The decode row of kv_heads kv at N_kv (rows of decode/results.json); fails when absent. */
static const cJSON *
decode_row(cJSON *const *rows, int n, double kv, double nkv)
{
	for (int i = 0; i < n; i++) {
		const cJSON *c = cJSON_GetObjectItem(rows[i], "config");

		if (cJSON_GetNumberValue(cJSON_GetObjectItem(c, "kv_heads")) == kv &&
		    cJSON_GetNumberValue(cJSON_GetObjectItem(c, "N_kv")) == nkv)
			return rows[i];
	}
	fail_msg("decode/results.json has no row kv_heads = %g, N_kv = %g", kv, nkv);
	return NULL;
}

static double
per_token(const cJSON *row, const char *key)
{
	return cJSON_GetNumberValue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(row, "per_token"), key));
}

/* DRAM bytes of array name in a row; 0 where the row has no such array. */
static double
array_bytes(const cJSON *row, const char *name)
{
	const cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(row, "arrays"), name);

	return a ? cJSON_GetNumberValue(cJSON_GetObjectItem(a, "total_bytes")) : 0;
}

/* The decode step: 3 layouts x 4 N_kv rows, its plots, and the report's section with the
 * rows' numbers (issue 22 item 6). */
static void
test_decode(void **state)
{
	static const double kvs[] = { 32, 8, 1 };
	char path[800], want[400], *text, *md, *line, *save = NULL;
	cJSON *rows[64];
	int n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/decode/results.json", study);
	text = slurp(path, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line && n < 64; line = strtok_r(NULL, "\n", &save))
		assert_non_null(rows[n++] = cJSON_Parse(line));
	assert_int_equal(n, 12);
	assert_int_equal(
		sh("grep -q '\"complete\":[[:space:]]*true' %s/decode/manifest.json", study), 0);
	snprintf(path, sizeof(path), "%s/report.md", study);
	md = slurp(path, NULL);
	assert_non_null(md);
	assert_non_null(strstr(md, "## Decode: bytes per generated token"));
	assert_non_null(strstr(md, "HBM-bandwidth bound of one decode step of one layer's "
				   "attention"));
	assert_non_null(strstr(md, "3350 GB/s"));
	/* flashdecode, S from the heuristic, grouped heads packed (GQA and MQA) */
	assert_non_null(strstr(md, "The kernel is FlashAttention's split-KV decode"));
	assert_non_null(strstr(md, "`gqa_packed` in the rows' config: GQA and MQA), so each K "
				   "and V block is read once for the whole group."));
	assert_null(strstr(md, "ran them in turn"));
	for (int k = 0; k < 3; k++) {
		const cJSON *lo = decode_row(rows, n, kvs[k], 1024);
		const cJSON *hi = decode_row(rows, n, kvs[k], 8192);
		const cJSON *prev = decode_row(rows, n, kvs[k], 4096);
		const cJSON *cfg = cJSON_GetObjectItem(hi, "config");
		double slope = (per_token(hi, "bytes") - per_token(prev, "bytes")) / 4096;
		double part = array_bytes(hi, "O_accum") + array_bytes(hi, "lse_accum");
		double s = cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "splits"));

		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "splits_source")),
				    "heuristic");
		assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(cfg, "gqa_packed")), k > 0);
		/* K and V read once (the K array's bytes), the partial arrays on top */
		assert_true(array_bytes(hi, "K") == kvs[k] * 8192 * 128 * 2);
		assert_true(slope >= 2 * kvs[k] * 128 * 2);
		assert_true(per_token(hi, "bandwidth_gbps") == 3350);
		snprintf(want, sizeof(want),
			 "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | 1 | %.0f | %.0f | %.0f |",
			 k == 0   ? "MHA"
			 : k == 1 ? "GQA"
				  : "MQA",
			 kvs[k], per_token(lo, "bytes"), per_token(hi, "bytes"), slope,
			 2 * kvs[k] * 128 * 2, s, part, per_token(hi, "tokens_per_s_bound"));
		if (!strstr(md, want))
			fail_msg("report.md lacks the decode row '%s'", want);
		if (k > 0) {
			snprintf(want, sizeof(want),
				 "at N_kv = 8192: MHA / %s bytes per token = **%.3g**",
				 k == 1 ? "GQA" : "MQA",
				 per_token(decode_row(rows, n, 32, 8192), "bytes") /
					 per_token(hi, "bytes"));
			if (!strstr(md, want))
				fail_msg("report.md lacks '%s'", want);
		}
	}
	free(md);
	free(text);
	for (int i = 0; i < n; i++)
		cJSON_Delete(rows[i]);
	snprintf(path, sizeof(path), "%s/plots/decode_per_token.dat", study);
	text = slurp(path, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "\n8192 "));
	free(text);
	snprintf(path, sizeof(path), "%s/plots/decode_tokens_per_s.gp", study);
	text = slurp(path, NULL);
	assert_non_null(text);
	free(text);
}

/* The lines of study/rel. */
static int
lines_in(const char *rel)
{
	char path[900], *text;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", study, rel);
	text = slurp(path, NULL);
	for (char *c = text; c && *c; c++)
		n += *c == '\n';
	free(text);
	return n;
}

/* A profile cut short (rows missing, its manifest not "complete") is redone by
 * `study --resume`, not kept: the report gets every T again (issue 18 item 6). */
static void
test_resume_redoes_profile(void **state)
{
	int rows;

	(void)state;
	rows = lines_in("profile/results.json");
	assert_true(rows > 4);
	assert_int_equal(sh("grep -q '\"complete\":[[:space:]]*true' %s/profile/manifest.json",
			    study),
			 0);
	/* What an interrupt leaves: some rows, and the manifest written before the first. */
	assert_int_equal(sh("cd %s/profile && head -3 results.json >r && mv r results.json && "
			    "sed 's/\"complete\":[[:space:]]*true/\"complete\": false/' "
			    "manifest.json >m && mv m manifest.json",
			    study),
			 0);
	assert_int_equal(lines_in("profile/results.json"), 3);
	if (sh("%s%s study --small --resume --out %s >%s/resume.log 2>&1",
	       test_sanitized() ? "MEMSIM_VALGRIND=/nonexistent/valgrind " : "", MEMSIM_BIN, study,
	       tmpdir)) {
		sh("tail -20 %s/resume.log >&2", tmpdir);
		fail_msg("memsim study --small --resume failed");
	}
	assert_int_equal(lines_in("profile/results.json"), rows);
	/* The decode step was complete: --resume adds no row. */
	assert_int_equal(lines_in("decode/results.json"), 12);
}

/* The decode step's sweep refuses (rows of another plan under decode/): the study stops there
 * with the sweep's status and its one line, as at its other sweeps; a study without decode/
 * (made before the step) still gets its report, which says the section has no rows. */
static void
test_decode_faults(void **state)
{
	char *md, path[800];

	(void)state;
	assert_int_equal(sh("cp %s/decode/results.json %s/decode.keep && "
			    "sed -i 's/ trace-only\"/\"/' %s/decode/results.json",
			    study, tmpdir, study),
			 0);
	assert_int_equal(sh("%s%s study --small --resume --out %s >%s/refused.log 2>&1",
			    test_sanitized() ? "MEMSIM_VALGRIND=/nonexistent/valgrind " : "",
			    MEMSIM_BIN, study, tmpdir),
			 2);
	assert_int_equal(sh("grep -c 'decode/results.json holds runs of another plan' "
			    "%s/refused.log | grep -qx 1",
			    tmpdir),
			 0);
	assert_int_equal(
		sh("mv %s/decode.keep %s/decode/results.json && mv %s/decode %s/decode.away",
		   tmpdir, study, study, tmpdir),
		0);
	assert_int_equal(sh("%s report %s >/dev/null", MEMSIM_BIN, study), 0);
	snprintf(path, sizeof(path), "%s/report.md", study);
	md = slurp(path, NULL);
	assert_non_null(strstr(md, "No decode rows in `decode/results.json`: run `memsim study`."));
	free(md);
	assert_int_equal(sh("mv %s/decode.away %s/decode", tmpdir, study), 0);
}

int
main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_study),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_html_in_chromium),
		cmocka_unit_test(test_resume_redoes_profile),
		cmocka_unit_test(test_decode_faults),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (!have("gnuplot"))
		test_leave_out(tests, &n, test_images, "gnuplot is not installed");
	if (!have("chromium"))
		test_leave_out(tests, &n, test_html_in_chromium, "chromium is not installed");
	return test_run_planned(tests, n, tmpdir_setup, tmpdir_teardown);
}
