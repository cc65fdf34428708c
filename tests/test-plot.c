/*
 * `memsim plot` on the fixtures of tests/data/plot/study (a cut-down real study, a made-up
 * profile and ceilings; make-fixtures.py there writes them): every plot drawn, each image
 * checked as a PNG (signature, IHDR size) and as well-formed SVG; only the plots whose inputs
 * are there; a missing or failing gnuplot in one line with the data kept. The readers'
 * errors and the --format parser are checked on the module itself.
 *
 * Cases that are not about the images run a stand-in gnuplot that writes small files, so they
 * run (fast) without gnuplot; the image checks skip without it.
 */

#include "config.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/plot.h"
#include "analysis/plot_input.h"
#include "tests/slurp.h"
#include "tests/unit.h"
#include "tests/xmlcheck.h"

#define TMPDIR_NAME "plot"
#include "tests/tmpdir.h"

#define FIXTURE TEST_DATA_DIR "/plot/study"

static char out_path[600], err_path[600];

static const char *const all_plots[] = { "bytes_vs_n_lab",
					 "bytes_vs_n_i5-8250u",
					 "intensity_ratio",
					 "dram_vs_cache_size",
					 "perf",
					 "perf_bytes",
					 "roofline",
					 "decode_per_token",
					 "decode_tokens_per_s",
					 NULL };

struct result {
	int rc;
	char *out;
	char *err;
};

/* Runs "ENV memsim ARGS" in tmpdir through the shell; captures stdout and stderr. */
static struct result
memsim(const char *env, const char *fmt, ...)
{
	char args[2048], cmd[4096];
	va_list ap;
	struct result r;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s %s >%s 2>%s", tmpdir, env, MEMSIM_BIN, args,
		 out_path, err_path);
	status = system(cmd);
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r.out = slurp(out_path, NULL);
	r.err = slurp(err_path, NULL);
	return r;
}

static void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static int
count_substr(const char *s, const char *what)
{
	int n = 0;

	while (s && (s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

static void
shell(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* A fresh directory DIR in tmpdir holding copies of inputs (paths, space-separated). */
static void
study_dir(const char *dir, const char *inputs)
{
	shell("cd %s && rm -rf %s && mkdir -p %s && cp -r %s %s/", tmpdir, dir, dir, inputs, dir);
}

/* A copy of the line of text that starts with start ("" when none); caller frees. */
static char *
line_starting(const char *text, const char *start)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, start, strlen(start)))
			return strndup(l, strcspn(l, "\n"));
	return strdup("");
}

static bool
file_exists(const char *dir, const char *name, const char *ext)
{
	char path[800];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/plots/%s%s", tmpdir, dir, name, ext);
	return stat(path, &st) == 0 && st.st_size > 0;
}

/* A stand-in for gnuplot: the script body runs with gnuplot's arguments. */
static void
fake_gnuplot(const char *name, const char *body)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* The stand-in that draws: a small file per image beside the script. */
static char fake_ok_env[700];

static bool
have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static int
setup(void **state)
{
	if (tmpdir_setup(state))
		return -1;
	snprintf(out_path, sizeof(out_path), "%s/stdout", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", tmpdir);
	fake_gnuplot("gnuplot-ok", "b=\"${1%.gp}\"; echo png >\"$b.png\"; echo svg >\"$b.svg\"");
	snprintf(fake_ok_env, sizeof(fake_ok_env), "MEMSIM_GNUPLOT=%s/gnuplot-ok", tmpdir);
	return 0;
}

/* ---- image checks ---- */

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
check_png(const char *path)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	long len;
	unsigned char *p = (unsigned char *)slurp(path, &len);

	if (!p)
		fail_msg("%s: missing", path);
	if (len < 10 * 1024)
		fail_msg("%s: %ld bytes, expected more than 10 KB", path, len);
	if (memcmp(p, sig, 8) != 0)
		fail_msg("%s: no PNG signature", path);
	/* The first chunk is IHDR: length 13, then width and height. */
	if (be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4) != 0)
		fail_msg("%s: the first chunk is not IHDR", path);
	if (be32(p + 16) <= 300 || be32(p + 20) <= 300)
		fail_msg("%s: %u x %u pixels", path, be32(p + 16), be32(p + 20));
	free(p);
}

static void
check_svg(const char *path)
{
	char *text = slurp(path, NULL);
	const char *why;
	int paths;

	if (!text)
		fail_msg("%s: missing", path);
	if (!strstr(text, "<svg"))
		fail_msg("%s: no <svg", path);
	why = xml_check(text, &paths);
	if (why)
		fail_msg("%s: not well-formed XML: %s", path, why);
	if (paths == 0)
		fail_msg("%s: no <path or <polyline", path);
	free(text);
}

/* The checker itself, on small documents. */
static void
test_xml_checker(void **state)
{
	static const struct {
		const char *xml;
		bool ok;
	} cases[] = {
		{ "<?xml version=\"1.0\"?>\n<svg a=\"1\"><path d='M 0'/><g><!-- <x --></g></svg>\n",
		  true },
		{ "<svg><text>a &lt; b &amp; c</text><polyline points=\"1\"/></svg>", true },
		{ "<svg><g></svg>", false },
		{ "<svg><g></h></g></svg>", false },
		{ "<svg a=1><path/></svg>", false },
		{ "<svg><text>a < b</text><path/></svg>", false },
		{ "<svg><text>a & b</text><path/></svg>", false },
		{ "<svg><path/></svg><svg/>", false },
		{ "<html><path/></html>", false },
		{ "<svg a=\"x<y\"><path/></svg>", false },
		{ "<svg><path/>", false },
		{ NULL, false },
	};
	int paths;

	(void)state;
	for (int i = 0; cases[i].xml; i++) {
		const char *why = xml_check(cases[i].xml, &paths);

		if ((why == NULL) != cases[i].ok)
			fail_msg("case %d (%s): %s", i, cases[i].xml, why ? why : "accepted");
	}
}

/* index.json names every plot in names, with images when drawn is true. */
static void
check_index(const char *dir, const char *const *names, size_t nskipped, bool drawn)
{
	char path[800], *text;
	cJSON *root, *plots, *p;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s/plots/index.json", tmpdir, dir);
	text = slurp(path, NULL);
	assert_non_null(text);
	root = cJSON_Parse(text);
	assert_non_null(root);
	plots = cJSON_GetObjectItem(root, "plots");
	assert_true(cJSON_IsArray(plots));
	while (names[n])
		n++;
	assert_int_equal(cJSON_GetArraySize(plots), n);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "skipped")), nskipped);
	for (size_t i = 0; i < n; i++) {
		bool found = false;

		cJSON_ArrayForEach (p, plots) {
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
			char file[128];

			if (!name || strcmp(name, names[i]))
				continue;
			found = true;
			snprintf(file, sizeof(file), "%s.png", name);
			if (drawn)
				assert_string_equal(
					cJSON_GetStringValue(cJSON_GetObjectItem(p, "png")), file);
			else
				assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "png")));
			snprintf(file, sizeof(file), "%s.svg", name);
			if (drawn)
				assert_string_equal(
					cJSON_GetStringValue(cJSON_GetObjectItem(p, "svg")), file);
			snprintf(file, sizeof(file), "%s.gp", name);
			assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "script")),
					    file);
			assert_true(strlen(cJSON_GetStringValue(
					    cJSON_GetObjectItem(p, "description"))) > 20);
			assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(p, "inputs")) >= 1);
		}
		if (!found)
			fail_msg("index.json does not name %s", names[i]);
	}
	cJSON_Delete(root);
	free(text);
}

/* Every plot, drawn by the real gnuplot: PNGs, SVGs, index.json; the scripts redraw by hand
 * from another directory. */
static void
test_images(void **state)
{
	struct result r;
	char path[800];

	(void)state;
	study_dir("full", FIXTURE "/*");
	r = memsim("", "plot full");
	if (r.rc != 0)
		fail_msg("memsim plot full: exit %d: %s", r.rc, r.err);
	assert_string_equal(r.err, "");
	assert_null(strstr(r.out, "skipped "));
	result_free(&r);
	for (int i = 0; all_plots[i]; i++) {
		snprintf(path, sizeof(path), "%s/full/plots/%s.png", tmpdir, all_plots[i]);
		check_png(path);
		snprintf(path, sizeof(path), "%s/full/plots/%s.svg", tmpdir, all_plots[i]);
		check_svg(path);
		/* gnuplot's stderr is kept only when it fails. */
		assert_false(file_exists("full", all_plots[i], ".log"));
	}
	check_index("full", all_plots, 0, true);

	/* By hand, from elsewhere, one format. */
	shell("rm %s/full/plots/roofline.svg && cd / && gnuplot -e 'formats=\"svg\"' "
	      "%s/full/plots/roofline.gp",
	      tmpdir, tmpdir);
	snprintf(path, sizeof(path), "%s/full/plots/roofline.svg", tmpdir);
	check_svg(path);

	/* --format svg: no PNG, and none left from the run before. */
	r = memsim("", "plot full --format svg");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_false(file_exists("full", "perf", ".png"));
	snprintf(path, sizeof(path), "%s/full/plots/perf.svg", tmpdir);
	check_svg(path);
}

/* The data files and scripts: what each plot is drawn from. */
static void
test_data_files(void **state)
{
	struct result r;
	char path[800], *text, *line;
	double v[6];

	(void)state;
	study_dir("data", FIXTURE "/*");
	r = memsim(fake_ok_env, "plot data");
	if (r.rc != 0)
		fail_msg("memsim plot data: exit %d: %s", r.rc, r.err);
	for (int i = 0; all_plots[i]; i++) {
		assert_true(file_exists("data", all_plots[i], ".dat"));
		assert_true(file_exists("data", all_plots[i], ".gp"));
		assert_non_null(strstr(r.out, all_plots[i]));
	}
	result_free(&r);
	check_index("data", all_plots, 0, true);

	/* fp32 only; N = 256 on the lab preset is the crossover and already 2.6x. */
	snprintf(path, sizeof(path), "%s/data/plots/bytes_vs_n_lab.dat", tmpdir);
	text = slurp(path, NULL);
	assert_int_equal(text[0], '#');
	assert_non_null(strstr(text, "# 10 runs of other dtypes"));
	assert_non_null(strstr(text, "\n256 "));
	assert_non_null(strstr(text, "1703936"));
	assert_non_null(strstr(text, "656384"));
	assert_null(strstr(text, "\n8192 "));
	free(text);
	snprintf(path, sizeof(path), "%s/data/plots/bytes_vs_n_lab.gp", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "crossover: flash2 below naive from N = 256"));
	assert_non_null(strstr(text, "flash2 moves ≥ 2× fewer bytes from N = 256"));
	assert_non_null(strstr(text, "gnuplot DIR/plots/bytes_vs_n_lab.gp"));
	assert_non_null(strstr(text, "set xlabel"));
	assert_non_null(strstr(text, "set ylabel"));
	assert_non_null(strstr(text, "set title"));
	free(text);
	/* The largest N of the exactness sweep, its working sets. */
	snprintf(path, sizeof(path), "%s/data/plots/dram_vs_cache_size.gp", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "at N = 2048"));
	assert_non_null(strstr(text, "S = N² × 4 B = 16 MiB"));
	assert_non_null(strstr(text, "K + V = 2·N·d × 4 B = 1 MiB"));
	free(text);
	/* The naive layer per T; the projections dominate at T = 64 in the fixture. */
	snprintf(path, sizeof(path), "%s/data/plots/perf.dat", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "dominant"));
	assert_int_equal(count_lines(text), 4 + 6);
	line = line_starting(text, "64 ");
	assert_non_null(strstr(line, " qkv_proj "));
	free(line);
	line = line_starting(text, "2048 ");
	assert_non_null(strstr(line, " softmax "));
	free(line);
	free(text);
	/* Every op at every T but the layer rows: 7 series x 6 T. */
	snprintf(path, sizeof(path), "%s/data/plots/roofline.dat", tmpdir);
	text = slurp(path, NULL);
	assert_int_equal(count_lines(text), 5 + 42);
	assert_null(strstr(text, "_layer"));
	assert_int_equal(count_substr(text, "flash2_attention"), 6);
	free(text);
	snprintf(path, sizeof(path), "%s/data/plots/roofline.gp", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "bw_all = 2.4e+10"));
	assert_non_null(strstr(text, "ridge"));
	free(text);
	/* Decode: bytes per token per layout (MHA, GQA, MQA), then the exact formula's. */
	snprintf(path, sizeof(path), "%s/data/plots/decode_per_token.dat", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "bytes_kv32        bytes_kv8        bytes_kv1       "
				     "exact_kv32        exact_kv8        exact_kv1"));
	assert_int_equal(count_lines(text), 4 + 3);
	line = line_starting(text, "1024 ");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "%*s %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3],
				&v[4], &v[5]),
			 6);
	assert_true(v[0] == 16793728 && v[1] == 4210816 && v[2] == 540800);
	assert_true(v[3] == v[0] && v[4] == v[1] && v[5] == v[2]);
	free(line);
	free(text);
	snprintf(path, sizeof(path), "%s/data/plots/decode_per_token.gp", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "MQA (1 KV head), exact formula"));
	assert_non_null(strstr(text, "set logscale y"));
	free(text);
	snprintf(path, sizeof(path), "%s/data/plots/decode_tokens_per_s.dat", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "at 3350 GB/s"));
	line = line_starting(text, "4096 ");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "%*s %lf %lf %lf", &v[0], &v[1], &v[2]), 3);
	assert_true(fabs(v[0] / 49906.6105789858 - 1) < 1e-12);
	assert_true(fabs(v[2] / 1584925.513231999 - 1) < 1e-12);
	free(line);
	free(text);
}

/* Only the plots whose inputs are there; a line for each of the others. */
static void
test_missing_inputs(void **state)
{
	static const char *const lab_only[] = { "bytes_vs_n_lab", "bytes_vs_n_i5-8250u",
						"intensity_ratio", NULL };
	static const char *const no_ceilings[] = { "dram_vs_cache_size", "perf", "perf_bytes",
						   NULL };
	struct result r;

	(void)state;
	study_dir("lab", FIXTURE "/lab");
	r = memsim(fake_ok_env, "plot lab");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(count_substr(r.out, "skipped "), 6);
	assert_int_equal(
		count_substr(r.out, "skipped dram_vs_cache_size: no lab/exact/results.json"), 1);
	assert_int_equal(
		count_substr(r.out, "skipped decode_per_token: no lab/decode/results.json"), 1);
	assert_int_equal(count_substr(r.out, "skipped perf: no lab/profile/results.json"), 1);
	assert_int_equal(count_substr(r.out, "skipped perf_bytes: "), 1);
	assert_int_equal(count_substr(r.out, "skipped roofline: no lab/profile/results.json"), 1);
	result_free(&r);
	check_index("lab", lab_only, 6, true);
	assert_false(file_exists("lab", "perf", ".dat"));
	assert_false(file_exists("lab", "roofline", ".gp"));

	/* The profile without the ceilings; the exactness sweep without the lab's. */
	study_dir("noceil", FIXTURE "/exact " FIXTURE "/profile");
	r = memsim(fake_ok_env, "plot noceil");
	assert_int_equal(r.rc, 0);
	assert_int_equal(count_substr(r.out, "skipped "), 5);
	assert_non_null(strstr(r.out, "skipped roofline: no noceil/ceilings.json"));
	assert_non_null(strstr(r.out, "skipped bytes_vs_n: no noceil/lab/results.json"));
	assert_non_null(strstr(r.out, "skipped intensity_ratio: "));
	result_free(&r);
	check_index("noceil", no_ceilings, 5, true);

	/* Plots of an earlier run whose inputs went away are removed with it. */
	shell("cp -r %s/* %s/noceil/ && rm -r %s/noceil/profile", FIXTURE, tmpdir, tmpdir);
	r = memsim(fake_ok_env, "plot noceil");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_false(file_exists("noceil", "perf", ".dat"));
	assert_false(file_exists("noceil", "perf", ".png"));
	assert_true(file_exists("noceil", "bytes_vs_n_lab", ".png"));

	/* Nothing to plot at all: no plots directory left behind. */
	shell("mkdir -p %s/empty", tmpdir);
	r = memsim(fake_ok_env, "plot empty");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_substr(r.out, "skipped "), 8);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "nothing to plot in empty: neither a sweep's results.json "
				      "nor any of lab/, exact/, profile/, decode/results.json"));
	result_free(&r);
	shell("test ! -e %s/empty/plots", tmpdir);
	/* nor the index of an earlier run whose inputs went away; others' files stay */
	study_dir("gone", FIXTURE "/lab");
	r = memsim(fake_ok_env, "plot gone");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	shell("rm -r %s/gone/lab", tmpdir);
	r = memsim(fake_ok_env, "plot gone");
	assert_int_equal(r.rc, 1);
	result_free(&r);
	shell("test ! -e %s/gone/plots", tmpdir);
	shell("mkdir -p %s/gone/plots && touch %s/gone/plots/mine.txt", tmpdir, tmpdir);
	r = memsim(fake_ok_env, "plot gone");
	assert_int_equal(r.rc, 1);
	result_free(&r);
	shell("test -e %s/gone/plots/mine.txt && test ! -e %s/gone/plots/index.json", tmpdir,
	      tmpdir);

	/* Decode rows without a bandwidth: bytes per token only, the bound skipped. */
	shell("mkdir -p %s/nobw/decode && sed 's/\"tokens_per_s_bound\":[0-9.e+]*/"
	      "\"tokens_per_s_bound\":null/; s/\"bandwidth_gbps\":[0-9]*/\"bandwidth_gbps\":null/' "
	      "%s/decode/results.json >%s/nobw/decode/results.json",
	      tmpdir, FIXTURE, tmpdir);
	r = memsim(fake_ok_env, "plot nobw");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "skipped decode_tokens_per_s: the rows of nobw/decode/"
				      "results.json have no bandwidth"));
	result_free(&r);
	assert_true(file_exists("nobw", "decode_per_token", ".dat"));
	assert_false(file_exists("nobw", "decode_tokens_per_s", ".dat"));
}

/* A sweep's directory (memsim sweep --out DIR, its rows in DIR/results.json; the fixtures'
 * lab, exact and decode sweeps stand for three): each plot its rows allow is drawn, from
 * "results.json"; what they do not allow says what it needs; rows allowing none leave no
 * plots directory and one line on stderr (the audit: a plain sweep's directory was refused
 * and left an empty plots/). */
static void
test_sweep_dir(void **state)
{
	static const char *const lab[] = { "bytes_vs_n_lab", "bytes_vs_n_i5-8250u",
					   "intensity_ratio", NULL };
	static const char *const decode[] = { "decode_per_token", "decode_tokens_per_s", NULL };
	char path[800], *text;
	struct result r;

	(void)state;
	study_dir("swlab", FIXTURE "/lab/results.json");
	r = memsim(fake_ok_env, "plot swlab");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "skipped dram_vs_cache_size: swlab/results.json has none "
				      "of what it needs: naive, flash1 or flash2 rows over two or "
				      "more sizes of one cache level (memsim sweep --cache-sweep"));
	assert_non_null(strstr(r.out, "skipped decode_per_token: swlab/results.json has none of "
				      "what it needs: decode rows, fewer queries than keys, over "
				      "two or more N_kv"));
	result_free(&r);
	check_index("swlab", lab, 6, true);
	snprintf(path, sizeof(path), "%s/swlab/plots/index.json", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "\"inputs\":\t[\"results.json\"]"));
	free(text);
	snprintf(path, sizeof(path), "%s/swlab/plots/bytes_vs_n_lab.dat", tmpdir);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "# from DIR/results.json "));
	free(text);

	/* a sweep over the cache's size: DRAM vs cache size */
	study_dir("swexact", FIXTURE "/exact/results.json");
	r = memsim(fake_ok_env, "plot swexact");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_true(file_exists("swexact", "dram_vs_cache_size", ".dat"));

	/* a decode sweep: the decode plots only */
	study_dir("swdecode", FIXTURE "/decode/results.json");
	r = memsim(fake_ok_env, "plot swdecode");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "skipped bytes_vs_n: swdecode/results.json has none of "
				      "what it needs: naive or flash2 rows over two or more N on "
				      "one cache (memsim sweep --kernel naive,flash2 --N "));
	assert_non_null(strstr(r.out, "skipped intensity_ratio: swdecode/results.json has none"));
	result_free(&r);
	check_index("swdecode", decode, 6, true);

	/* one row: nothing drawn, each plot's needs said, no plots directory */
	shell("mkdir -p %s/one && head -n 1 %s/lab/results.json > %s/one/results.json", tmpdir,
	      FIXTURE, tmpdir);
	r = memsim(fake_ok_env, "plot one");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_substr(r.out, "has none of what it needs: "), 5);
	assert_int_equal(count_substr(r.out, "skipped "), 8);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "memsim: plot: nothing to plot in one: the rows of its "
				      "sweep (results.json) allow none of the plots (what each "
				      "needs is said above)"));
	result_free(&r);
	shell("test ! -e %s/one/plots", tmpdir);

	/* a broken results.json: its error, in one line */
	shell("mkdir -p %s/broken && echo '{\"config\": 1}' > %s/broken/results.json", tmpdir,
	      tmpdir);
	r = memsim(fake_ok_env, "plot broken");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "nothing to plot in broken: broken/results.json:1: "));
	result_free(&r);
	shell("test ! -e %s/broken/plots", tmpdir);
}

/* An input that is there but unusable: its plots skipped with the reason, the others drawn,
 * exit status 1 with one line naming the file. A torn last line is an interrupted sweep. */
static void
test_bad_inputs(void **state)
{
	struct result r;

	(void)state;
	study_dir("bad", FIXTURE "/*");
	shell("cd %s/bad && echo '{\"bandwidth\": {}}' > ceilings.json && "
	      "printf '{\"config\": {\"kernel\": \"naive\", \"N\": 4' >> lab/results.json",
	      tmpdir);
	r = memsim(fake_ok_env, "plot bad");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.out, "skipped roofline: bad/ceilings.json: "
				      "bandwidth.one_core_bytes_per_s is missing"));
	assert_non_null(strstr(r.out, "bytes_vs_n_lab"));
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "bad/ceilings.json: bandwidth.one_core_bytes_per_s"));
	result_free(&r);
}

/* Without gnuplot: the data and scripts, then one line saying how to install it. */
static void
test_no_gnuplot(void **state)
{
	struct result r;

	(void)state;
	study_dir("nognu", FIXTURE "/*");
	r = memsim("MEMSIM_GNUPLOT=/nonexistent/gnuplot", "plot nognu");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "/nonexistent/gnuplot not found"));
	assert_non_null(strstr(r.err, "apt-get install gnuplot-nox"));
	result_free(&r);
	for (int i = 0; all_plots[i]; i++) {
		assert_true(file_exists("nognu", all_plots[i], ".dat"));
		assert_true(file_exists("nognu", all_plots[i], ".gp"));
		assert_false(file_exists("nognu", all_plots[i], ".png"));
	}
	check_index("nognu", all_plots, 0, false);

	r = memsim("PATH=/nonexistent", "plot nognu");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "gnuplot not found on PATH"));
	assert_non_null(strstr(r.err, "apt-get install gnuplot-nox"));
	result_free(&r);
}

/* A failing gnuplot: its last words in one line, exit 1, the data kept. */
static void
test_gnuplot_fails(void **state)
{
	char env[700];
	struct result r;

	(void)state;
	study_dir("fails", FIXTURE "/*");
	fake_gnuplot("gnuplot-fails", "echo 'line 3: warming up' >&2\n"
				      "echo 'gnuplot: fake failure for the test' >&2\nexit 1");
	snprintf(env, sizeof(env), "MEMSIM_GNUPLOT=%s/gnuplot-fails", tmpdir);
	r = memsim(env, "plot fails");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "gnuplot failed on bytes_vs_n_lab.gp (exit status 1): "
				      "gnuplot: fake failure for the test"));
	result_free(&r);
	for (int i = 0; all_plots[i]; i++)
		assert_true(file_exists("fails", all_plots[i], ".dat"));
	assert_true(file_exists("fails", "bytes_vs_n_lab", ".log"));

	/* Exits 0 but draws nothing. */
	fake_gnuplot("gnuplot-idle", "exit 0");
	snprintf(env, sizeof(env), "MEMSIM_GNUPLOT=%s/gnuplot-idle", tmpdir);
	r = memsim(env, "plot fails");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "gnuplot wrote no"));
	result_free(&r);
}

static void
test_usage(void **state)
{
	struct result r;

	(void)state;
	r = memsim("", "plot /nonexistent/study");
	assert_int_equal(r.rc, 1);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "cannot read /nonexistent/study: No such file"));
	result_free(&r);
	r = memsim("", "plot");
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "plot needs a study's or a sweep's directory DIR"));
	result_free(&r);
	r = memsim("", "plot . --format gif");
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "--format: formats are png and svg"));
	result_free(&r);
	r = memsim("", "help plot");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "Usage: memsim plot DIR [--format png,svg]"));
	assert_non_null(strstr(r.out, "MEMSIM_GNUPLOT"));
	/* Every plot the command can draw is listed (bytes_vs_n_CACHE for each cache). */
	for (int i = 0; all_plots[i]; i++) {
		const char *name = strncmp(all_plots[i], "bytes_vs_n_", 11) ? all_plots[i]
									    : "bytes_vs_n_CACHE";
		const char *at = r.out;

		while ((at = strstr(at, name)) &&
		       !(at > r.out && (at[-1] == ' ' || at[-1] == '\n') &&
			 (at[strlen(name)] == ' ' || at[strlen(name)] == ',')))
			at++;
		if (!at)
			fail_msg("memsim help plot does not list %s", name);
	}
	result_free(&r);
	r = memsim("", "help");
	assert_non_null(strstr(r.out, "  plot "));
	result_free(&r);
}

static void
test_parse_formats(void **state)
{
	static const struct {
		const char *arg;
		unsigned formats; /* 0: rejected */
	} cases[] = {
		{ "png,svg", PLOT_FORMAT_PNG | PLOT_FORMAT_SVG },
		{ "svg", PLOT_FORMAT_SVG },
		{ "png", PLOT_FORMAT_PNG },
		{ "svg,png,svg", PLOT_FORMAT_PNG | PLOT_FORMAT_SVG },
		{ "", 0 },
		{ "png,", 0 },
		{ ",png", 0 },
		{ "pdf", 0 },
		{ "PNG", 0 },
		{ "pngsvg", 0 },
		{ NULL, 0 },
	};

	(void)state;
	for (int i = 0; cases[i].arg; i++) {
		unsigned f = 0;
		const char *msg = plot_parse_formats(cases[i].arg, &f);

		if (cases[i].formats == 0 && !msg)
			fail_msg("'%s' accepted", cases[i].arg);
		if (cases[i].formats && (msg || f != cases[i].formats))
			fail_msg("'%s': %s", cases[i].arg, msg ? msg : "wrong formats");
	}
}

/* The readers: a bad row names its file, line and key; a torn last line is dropped; rows
 * without DRAM bytes are left out. */
static void
test_input_errors(void **state)
{
	static const struct {
		const char *file, *text, *error; /* error NULL: usable */
		size_t rows;
	} cases[] = {
		{ "lab/results.json",
		  "{\"config\":{\"kernel\":\"naive\",\"N\":256,\"d\":64,\"dtype\":\"fp32\",\"Br\":64,"
		  "\"Bc\":64,\"cache\":\"none\"},\"dram\":{\"total_bytes\":10},\"flops\":5}\n"
		  "{\"error\":\"out of memory\"}\n"
		  "{\"config\":{\"kernel\":\"naive\",\"N\":512,\"d\":64,\"dtype\":\"fp32\",\"Br\":64,"
		  "\"Bc\":64,\"cache\":\"none\"},\"mode\":\"native\",\"flops\":5}\n"
		  "{\"config\":{\"kernel\":\"naive\",\"N\":5",
		  NULL, 1 },
		{ "lab/results.json", "{\"config\":{\"kernel\":\"naive\"}}\n",
		  "lab/results.json:1: config.dtype is missing or not a string", 0 },
		{ "lab/results.json",
		  "\n{\"config\":{\"kernel\":\"naive\",\"N\":-2,\"d\":64,\"dtype\":\"fp32\",\"Br\":64,"
		  "\"Bc\":64,\"cache\":\"none\"},\"dram\":{\"total_bytes\":10},\"flops\":5}\n",
		  "lab/results.json:2: config.N is not a positive number", 0 },
		{ "exact/results.json",
		  "{\"config\":{\"kernel\":\"naive\",\"N\":256,\"d\":64,\"dtype\":\"fp8\",\"Br\":64,"
		  "\"Bc\":64,\"cache\":\"none\"},\"dram\":{\"total_bytes\":10},\"flops\":5}\n",
		  "exact/results.json:1: config.dtype is not fp32, fp16 or bf16", 0 },
		{ "exact/results.json", "garbage\n{}\n", "exact/results.json:1: not a JSON object",
		  0 },
		{ "profile/results.json",
		  "{\"T\":64,\"d_model\":64,\"heads\":4,\"d_head\":16,\"dtype\":\"fp32\",\"kernel\":"
		  "\"naive\",\"op\":\"scores\",\"seconds\":{\"p50\":0},\"flops\":1,\"dram_bytes\":1}\n",
		  "profile/results.json:1: seconds.p50 is not a positive number", 0 },
		{ "profile/results.json",
		  "{\"T\":64.5,\"d_model\":64,\"heads\":4,\"d_head\":16,\"dtype\":\"fp32\","
		  "\"kernel\":\"naive\",\"op\":\"scores\",\"seconds\":{\"p50\":1},\"flops\":1,"
		  "\"dram_bytes\":1}\n",
		  "profile/results.json:1: T is not a whole number", 0 },
		{ "ceilings.json", "[1, 2", "ceilings.json: not one valid JSON document", 0 },
		{ "ceilings.json",
		  "{\"bandwidth\":{\"one_core_bytes_per_s\":1,\"all_cores_bytes_per_s\":2},"
		  "\"peak_flops\":{\"one_core_flops_per_s\":3,\"all_cores_flops_per_s\":\"x\"}}",
		  "ceilings.json: peak_flops.all_cores_flops_per_s is not a positive number", 0 },
		{ NULL, NULL, NULL, 0 },
	};
	static const char *const files[] = { "lab/results.json", "exact/results.json",
					     "profile/results.json", "ceilings.json" };
	char dir[700], path[800];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/inputs", tmpdir);
	for (int i = 0; cases[i].file; i++) {
		struct plot_input in;
		int s = 0;
		FILE *f;

		shell("rm -rf %s && mkdir -p %s/lab %s/exact %s/profile", dir, dir, dir, dir);
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].file);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(cases[i].text, f);
		fclose(f);
		while (strcmp(files[s], cases[i].file))
			s++;
		assert_int_equal(plot_input_load(&in, dir), 0);
		assert_true(in.present[s]);
		if (cases[i].error) {
			if (in.usable[s] || !strstr(in.error[s], cases[i].error))
				fail_msg("case %d: '%s', expected '%s'", i,
					 in.usable[s] ? "usable" : in.error[s], cases[i].error);
		} else {
			if (!in.usable[s])
				fail_msg("case %d: %s", i, in.error[s]);
			assert_int_equal(in.nlab, cases[i].rows);
			assert_true(in.lab[0].lab_bytes < 0);
			assert_true(in.lab[0].exact_bytes < 0);
			assert_true(in.lab[0].intensity == 0.5);
			assert_string_equal(in.lab[0].cache, "none");
		}
		for (int k = 0; k < PLOT_SOURCES; k++)
			assert_true(k == s || !in.present[k]);
		plot_input_finish(&in);
	}
	{
		struct plot_input in;

		assert_int_equal(plot_input_load(&in, "/nonexistent/dir"), -ENOENT);
		plot_input_finish(&in);
	}
}

int
main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_checker),  cmocka_unit_test(test_parse_formats),
		cmocka_unit_test(test_input_errors), cmocka_unit_test(test_usage),
		cmocka_unit_test(test_data_files),   cmocka_unit_test(test_missing_inputs),
		cmocka_unit_test(test_sweep_dir),    cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_no_gnuplot),   cmocka_unit_test(test_gnuplot_fails),
		cmocka_unit_test(test_images),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (!have_gnuplot())
		test_leave_out(tests, &n, test_images, "gnuplot is not installed: no image checks");
	return test_run_planned(tests, n, setup, tmpdir_teardown);
}
