/*
 * `memsim study`: the default study, and `memsim table`: its comparison tables for any sweep.
 *
 * The study is the bytes-moved lab's sweep (shared/seeds/002): naive vs flash2, d = 64,
 * B_r = B_c = 64, fp32 and fp16, N from 256 doubling to --max-N, on the lab preset and the
 * lab machine's preset (i5-8250u); then the exactness sweep: every kernel at N = 256 .. 2048
 * on a fully associative LRU cache from 32 KiB to 64 MiB with tiles in scratch.
 */

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/xcheck.h"
#include "cli/commands.h"
#include "measure/spawn.h"
#include "sim/util.h"

struct row {
	char kernel[16], dtype[8], cache[256], regime[320], why_not[320];
	double N, measured, lab, exact, lab_measured, lab_ratio, exact_ratio, intensity;
	bool lab_within, exact_within, arrays_within, in_regime, has_lab;
	char worst_array[32];
	double worst_ratio;
};

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->cache, y->cache);

	if (!c)
		c = strcmp(x->kernel, y->kernel);
	if (!c)
		c = strcmp(x->dtype, y->dtype);
	if (!c)
		c = (x->N > y->N) - (x->N < y->N);
	return c;
}

/* Reads DIR/results.json into rows; returns how many, -1 if unreadable. */
static long
read_rows(const char *dir, struct row **out)
{
	char path[4096];
	FILE *f;
	char *line = NULL;
	size_t cap = 0, n = 0, rcap = 64;
	struct row *rows = xzalloc(rcap * sizeof(*rows));

	snprintf(path, sizeof(path), "%s/results.json", dir);
	f = fopen(path, "r");
	if (!f) {
		free(rows);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		cJSON *r = cJSON_Parse(line), *cfg, *cmp, *e, *per;
		struct row *w;

		if (!r)
			continue;
		if (cJSON_GetObjectItem(r, "error")) {
			cJSON_Delete(r);
			continue;
		}
		if (n == rcap) {
			rcap *= 2;
			rows = xrealloc(rows, rcap * sizeof(*rows));
		}
		w = &rows[n++];
		memset(w, 0, sizeof(*w));
		cfg = cJSON_GetObjectItem(r, "config");
		snprintf(w->kernel, sizeof(w->kernel), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "kernel")));
		snprintf(w->dtype, sizeof(w->dtype), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "dtype")));
		snprintf(w->cache, sizeof(w->cache), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "preset"))[0]
				 ? cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "preset"))
				 : cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "cache")));
		w->N = cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "N"));
		w->intensity = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "intensity"));
		w->in_regime = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "regime"),
								"within_lab_assumptions"));
		snprintf(w->regime, sizeof(w->regime), "%s",
			 cJSON_GetStringValue(
				 cJSON_GetObjectItem(cJSON_GetObjectItem(r, "regime"), "text")));
		w->lab = cJSON_GetNumberValue(cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(r, "formulas"), "lab"), "bytes"));
		w->arrays_within = cJSON_IsTrue(cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(r, "formulas"), "exact"),
			"arrays_within"));
		cmp = cJSON_GetObjectItem(r, "compare");
		cJSON_ArrayForEach (e, cmp) {
			const char *fm = cJSON_GetStringValue(cJSON_GetObjectItem(e, "formula"));

			if (strcmp(fm, "lab") == 0) {
				w->has_lab = true;
				w->lab_measured = cJSON_GetNumberValue(
					cJSON_GetObjectItem(e, "measured_bytes"));
				w->lab_ratio =
					cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ratio"));
				w->lab_within = cJSON_IsTrue(cJSON_GetObjectItem(e, "within"));
				snprintf(w->why_not, sizeof(w->why_not), "%s",
					 cJSON_GetStringValue(cJSON_GetObjectItem(e, "why_not")));
			} else {
				w->measured = cJSON_GetNumberValue(
					cJSON_GetObjectItem(e, "measured_bytes"));
				w->exact = cJSON_GetNumberValue(
					cJSON_GetObjectItem(e, "predicted_bytes"));
				w->exact_ratio =
					cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ratio"));
				w->exact_within = cJSON_IsTrue(cJSON_GetObjectItem(e, "within"));
			}
		}
		/* The array furthest from its formula. */
		per = cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(r, "formulas"), "exact"),
			"per_array");
		w->worst_ratio = 1;
		snprintf(w->worst_array, sizeof(w->worst_array), "-");
		cJSON_ArrayForEach (e, per) {
			double ratio = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "ratio"));
			double m = cJSON_GetNumberValue(
					   cJSON_GetObjectItem(e, "measured_read_bytes")) +
				   cJSON_GetNumberValue(
					   cJSON_GetObjectItem(e, "measured_write_bytes"));

			if (m > 0 && ratio > 0 && fabs(log(ratio)) > fabs(log(w->worst_ratio))) {
				w->worst_ratio = ratio;
				snprintf(w->worst_array, sizeof(w->worst_array), "%s", e->string);
			}
		}
		cJSON_Delete(r);
	}
	free(line);
	fclose(f);
	qsort(rows, n, sizeof(*rows), row_cmp);
	*out = rows;
	return (long)n;
}

/* The lab comparison: every run with its lab verdict and regime. */
static void
print_lab_table(const struct row *rows, long n)
{
	printf("%-10s %-6s %-5s %6s %12s %12s %12s %8s %8s  %s\n", "cache", "kernel", "dtype", "N",
	       "measured MiB", "lab MiB", "exact MiB", "meas/lab", "meas/ex", "lab verdict");
	for (long i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		printf("%-10.10s %-6s %-5s %6.0f %12.3f %12.3f %12.3f %8.3f %8.3f  %s%s%s\n",
		       r->cache, r->kernel, r->dtype, r->N, r->measured / 1048576,
		       r->has_lab ? r->lab / 1048576 : 0.0, r->exact / 1048576,
		       r->has_lab ? r->lab_ratio : 0.0, r->exact_ratio,
		       !r->has_lab     ? "no lab formula"
		       : r->lab_within ? (r->in_regime ? "within 30%, in regime"
						       : "within 30%, out of regime")
				       : (r->in_regime ? "OUTSIDE 30% in regime" : "outside: "),
		       r->has_lab && !r->lab_within && !r->in_regime ? r->regime : "", "");
	}
}

/* The smallest N from which flash2 moves fewer bytes than naive, per cache and dtype. */
static void
print_crossover(const struct row *rows, long n)
{
	for (long i = 0; i < n; i++) {
		const struct row *f = &rows[i];
		double first = -1;

		if (strcmp(f->kernel, "flash2") != 0 ||
		    (i > 0 && !strcmp(rows[i - 1].kernel, "flash2") &&
		     !strcmp(rows[i - 1].cache, f->cache) && !strcmp(rows[i - 1].dtype, f->dtype)))
			continue;
		for (long k = i;
		     k < n && !strcmp(rows[k].kernel, "flash2") &&
		     !strcmp(rows[k].cache, f->cache) && !strcmp(rows[k].dtype, f->dtype);
		     k++) {
			for (long j = 0; j < n; j++) {
				if (strcmp(rows[j].kernel, "naive") ||
				    strcmp(rows[j].cache, f->cache) ||
				    strcmp(rows[j].dtype, f->dtype) || rows[j].N != rows[k].N)
					continue;
				if (rows[k].measured < rows[j].measured && first < 0)
					first = rows[k].N;
			}
		}
		if (first > 0)
			printf("crossover: flash2 moves fewer DRAM bytes than naive from N = %.0f "
			       "(%s, %s)\n",
			       first, f->cache, f->dtype);
		else
			printf("crossover: flash2 never moves fewer DRAM bytes than naive in this "
			       "sweep (%s, %s)\n",
			       f->cache, f->dtype);
	}
}

/* The exactness summary: per kernel, runs whose every array is within 5%, and the worst. */
static bool
print_exact_summary(const struct row *rows, long n)
{
	static const char *kernels[] = { "naive", "flash1", "flash2", "proj" };
	bool all = n > 0;

	printf("%-7s %6s %22s %18s %s\n", "kernel", "runs", "every array within 5%",
	       "total within 5%", "worst array (ratio measured/exact, cache, N)");
	for (int k = 0; k < 4; k++) {
		long runs = 0, ok = 0, tot_ok = 0;
		const struct row *worst = NULL;

		for (long i = 0; i < n; i++) {
			if (strcmp(rows[i].kernel, kernels[k]))
				continue;
			runs++;
			ok += rows[i].arrays_within;
			tot_ok += rows[i].exact_within;
			if (!worst ||
			    fabs(log(rows[i].worst_ratio)) > fabs(log(worst->worst_ratio)))
				worst = &rows[i];
		}
		if (!runs)
			continue;
		all &= ok == runs;
		if (worst->worst_ratio == 1)
			printf("%-7s %6ld %22ld %18ld every array equal to the byte\n", kernels[k],
			       runs, ok, tot_ok);
		else
			printf("%-7s %6ld %22ld %18ld %s %.4f, %s, N=%.0f\n", kernels[k], runs, ok,
			       tot_ok, worst->worst_array, worst->worst_ratio, worst->cache,
			       worst->N);
	}
	return all;
}

static const char *
kernel_of(const cJSON *config)
{
	const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(config, "kernel"));

	return k ? k : "";
}

/* xcheck reports by kernel, then B_r, B_c (larger first), N; unreadable ones (NULL) last. */
static int
report_cmp(const void *a, const void *b)
{
	const cJSON *x = *(cJSON *const *)a, *y = *(cJSON *const *)b;
	static const char *const keys[] = { "Br", "Bc", "N" };
	const cJSON *cx, *cy;
	int c;

	if (!x || !y)
		return (x == NULL) - (y == NULL);
	cx = cJSON_GetObjectItem(x, "config");
	cy = cJSON_GetObjectItem(y, "config");
	c = strcmp(kernel_of(cx), kernel_of(cy));
	if (c)
		return c;
	for (int i = 0; i < 3; i++) {
		double vx = cJSON_GetNumberValue(cJSON_GetObjectItem(cx, keys[i]));
		double vy = cJSON_GetNumberValue(cJSON_GetObjectItem(cy, keys[i]));

		if (vx != vy)
			return (i < 2 ? (vx < vy) - (vx > vy) : (vx > vy) - (vx < vy));
	}
	return 0;
}

/* The summary of DIR's xcheck reports, in file-name order. */
static int
xcheck_table(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4200], err[512];
	cJSON **reports;
	size_t n = 0, cap = 0, bad = 0, good = 0;
	int rc = EXIT_OK;

	if (!d) {
		fprintf(stderr, "memsim: table: cannot read %s: %s\n", dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "memsim: table: no xcheck report (*.json) in %s\n", dir);
		free(names);
		return EXIT_RUNTIME;
	}
	reports = xzalloc(n * sizeof(*reports));
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		reports[i] = report_read_json(path, err, sizeof(err));
		if (!reports[i] || !cJSON_GetObjectItem(reports[i], "rows")) {
			fprintf(stderr, "memsim: table: %s\n",
				reports[i] ? "not an xcheck report" : err);
			cJSON_Delete(reports[i]);
			reports[i] = NULL;
			rc = EXIT_RUNTIME;
		}
		free(names[i]);
	}
	free(names);
	qsort(reports, n, sizeof(*reports), report_cmp);
	xcheck_summary_header(stdout);
	for (size_t i = 0; i < n && reports[i]; i++) {
		good++;
		if (!xcheck_summary_line(stdout, reports[i]))
			bad++;
		cJSON_Delete(reports[i]);
	}
	free(reports);
	n = good;
	printf("%zu of %zu configurations have every tool's ratio within its tolerance\n", n - bad,
	       n);
	return rc;
}

void
usage_table(FILE *f)
{
	fprintf(f,
		"Usage: memsim table DIR [--exact | --xcheck]\n"
		"\n"
		"Prints the comparison table of a sweep directory: measured bytes, lab and exact\n"
		"formulas, ratios and the lab verdict with its regime; the N from which flash2\n"
		"moves fewer bytes than naive. --exact prints the per-kernel exactness summary.\n"
		"--xcheck summarizes the `memsim xcheck --json` reports in DIR (*.json): each\n"
		"tool's ratio to memsim per configuration.\n");
}

int
cmd_table(int argc, char **argv)
{
	struct row *rows;
	long n;
	bool exact = argc > 2 && strcmp(argv[2], "--exact") == 0;
	bool xcheck = argc > 2 && strcmp(argv[2], "--xcheck") == 0;

	if (argc < 2 || (argc > 2 && !exact && !xcheck) || argc > 3)
		return usage_error("table",
				   "table takes a sweep directory (and --exact or --xcheck)");
	if (strcmp(argv[1], "--help") == 0) {
		usage_table(stdout);
		return EXIT_OK;
	}
	if (xcheck)
		return xcheck_table(argv[1]);
	n = read_rows(argv[1], &rows);
	if (n < 0) {
		fprintf(stderr, "memsim: cannot read %s/results.json\n", argv[1]);
		return EXIT_RUNTIME;
	}
	if (exact) {
		print_exact_summary(rows, n);
	} else {
		print_lab_table(rows, n);
		print_crossover(rows, n);
	}
	free(rows);
	return EXIT_OK;
}

void
usage_study(FILE *f)
{
	fprintf(f,
		"Usage: memsim study [--out DIR] [--max-N N] [--resume] [--small]\n"
		"\n"
		"The default study, every step into DIR [out/study]:\n"
		"  lab/       the bytes-moved lab's sweep: naive vs flash2, d = 64, B_r = B_c = 64,\n"
		"             fp32 and fp16, N = 256 doubling to --max-N [8192], on the lab and\n"
		"             i5-8250u presets\n"
		"  exact/     the exactness sweep: every kernel, N = 256 to 2048, fully associative\n"
		"             LRU caches of 32 KiB to 64 MiB, tiles in scratch\n"
		"  formulas/  the formulas alone for the labs' sizes (N = 64 .. 32768, d = 64, 128)\n"
		"  ceilings.json  memory bandwidth and peak FLOP/s of this machine (memsim ceilings)\n"
		"  profile/   the attention layer timed natively per operation (memsim profile)\n"
		"  xcheck/    memsim against Cachegrind and Callgrind (when valgrind is installed)\n"
		"  plots/     every plot (memsim plot), then report.md and report.html (memsim report)\n"
		"--resume continues an interrupted study; --small runs a reduced study (N up to 512,\n"
		"one exact size, quick ceilings, T = 64 and 128) for tests.\n");
}

/* Runs one memsim command in this process; argv ends with NULL. */
static int
step(const char *title, int (*cmd)(int, char **), char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	printf("== %s\n", title);
	fflush(stdout);
	return cmd(argc, argv);
}

static bool
have_file(const char *dir, const char *name)
{
	char path[4300];
	FILE *f;

	if (strlen(dir) + strlen(name) + 2 > sizeof(path))
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* memsim xcheck for the study's configurations, when valgrind is installed; a report already
 * there is kept on --resume. */
static int
study_xcheck(const char *out, bool small, bool resume)
{
	static const struct {
		const char *kernel, *N, *Bc;
	} cfgs[] = { { "naive", "256", "64" },
		     { "flash2", "256", "32" },
		     { "flash2", "256", "64" },
		     { "naive", "1024", "64" } };
	char dir[3100], path[3300], vg[4096];
	size_t n = small ? 1 : sizeof(cfgs) / sizeof(cfgs[0]);

	if (!spawn_find(getenv("MEMSIM_VALGRIND") && *getenv("MEMSIM_VALGRIND")
				? getenv("MEMSIM_VALGRIND")
				: "valgrind",
			vg, sizeof(vg))) {
		printf("== cross-checks skipped: valgrind is not installed\n");
		return EXIT_OK;
	}
	snprintf(dir, sizeof(dir), "%s/xcheck", out);
	if (mkdir_p(dir)) {
		fprintf(stderr, "memsim: cannot create %s\n", dir);
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < n; i++) {
		char name[128];
		char *argv[] = { "xcheck",
				 "--kernel",
				 (char *)cfgs[i].kernel,
				 "--N",
				 (char *)cfgs[i].N,
				 "--Bc",
				 (char *)cfgs[i].Bc,
				 "--with",
				 "cachegrind,callgrind",
				 "--json",
				 path,
				 NULL };
		FILE *null;
		int rc, saved;

		snprintf(name, sizeof(name), "%s-N%s-Bc%s.json", cfgs[i].kernel, cfgs[i].N,
			 cfgs[i].Bc);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (resume && have_file(dir, name))
			continue;
		printf("== cross-check %s N=%s B_c=%s -> %s\n", cfgs[i].kernel, cfgs[i].N,
		       cfgs[i].Bc, path);
		fflush(stdout);
		/* The table goes to the JSON; keep the study's output to its summary. */
		saved = dup(STDOUT_FILENO);
		null = fopen("/dev/null", "w");
		if (saved >= 0 && null)
			dup2(fileno(null), STDOUT_FILENO);
		rc = cmd_xcheck(11, argv);
		fflush(stdout);
		if (saved >= 0) {
			dup2(saved, STDOUT_FILENO);
			close(saved);
		}
		if (null)
			fclose(null);
		if (rc != EXIT_OK)
			return rc;
	}
	return EXIT_OK;
}

int
cmd_study(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' }, { "max-N", required_argument, NULL, 'n' },
		{ "resume", no_argument, NULL, 'r' },    { "small", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },      { NULL, 0, NULL, 0 }
	};
	const char *out = "out/study";
	uint64_t maxn = 8192;
	bool resume = false, small = false, maxn_given = false;
	char lab_dir[4096], exact_dir[4096], formulas_dir[4096], profile_dir[4096], nrange[64];
	char *rs = NULL;
	struct row *rows;
	long n;
	int opt, rc;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:n:rsh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			if (!parse_u64(optarg, &maxn) || maxn < 256)
				return usage_error("study", "--max-N: '%s' is not a number >= 256",
						   optarg);
			maxn_given = true;
			break;
		case 'r':
			resume = true;
			break;
		case 's':
			small = true;
			break;
		case 'h':
			usage_study(stdout);
			return EXIT_OK;
		default:
			return option_error("study", opt, argv);
		}
	}
	if (optind != argc)
		return usage_error("study", "unexpected argument '%s'", argv[optind]);
	if (strlen(out) > 3000)
		return usage_error("study", "--out: the path is too long");
	if (small && !maxn_given)
		maxn = 512;
	if (mkdir_p(out)) {
		fprintf(stderr, "memsim: cannot create %s\n", out);
		return EXIT_RUNTIME;
	}
	rs = resume ? "--resume" : NULL;
	snprintf(lab_dir, sizeof(lab_dir), "%s/lab", out);
	snprintf(exact_dir, sizeof(exact_dir), "%s/exact", out);
	snprintf(formulas_dir, sizeof(formulas_dir), "%s/formulas", out);
	snprintf(profile_dir, sizeof(profile_dir), "%s/profile", out);
	snprintf(nrange, sizeof(nrange), "256:%llu:x2", (unsigned long long)maxn);
	{
		char *sw[] = { "sweep",   "--out", lab_dir,   "--kernel", "naive,flash2",
			       "--N",     nrange,  "--d",     "64",       "--Br",
			       "64",      "--Bc",  "64",      "--dtype",  "fp32,fp16",
			       "--cache", "lab",   "--cache", "i5-8250u", rs,
			       NULL };

		if ((rc = step("the bytes-moved lab's sweep -> lab/", cmd_sweep, sw)) != EXIT_OK)
			return rc;
	}
	{
		char *sw[] = { "sweep",
			       "--out",
			       exact_dir,
			       "--kernel",
			       "naive,flash1,flash2,proj",
			       "--N",
			       small ? "256" : "256:2048:x2",
			       "--cache",
			       "L1=32K:full:64,tiles=scratch",
			       "--cache-sweep",
			       small ? "L1=32K:2M:x4" : "L1=32K:64M:x2",
			       rs,
			       NULL };

		if ((rc = step("the exactness sweep -> exact/", cmd_sweep, sw)) != EXIT_OK)
			return rc;
	}
	{
		char *sw[] = { "sweep",      "--out",
			       formulas_dir, "--formula-only",
			       "--kernel",   "naive,flash1,flash2",
			       "--N",        "64,256,1024,2048,4096,8192,16384,32768",
			       "--d",        "64,128",
			       "--dtype",    "fp32,fp16",
			       "--cache",    "lab",
			       "--cache",    "i5-8250u",
			       NULL };

		if ((rc = step("the formulas at the labs' sizes -> formulas/", cmd_sweep, sw)) !=
		    EXIT_OK)
			return rc;
	}
	{
		char *c[] = { "ceilings", "--out", (char *)out, small ? "--quick" : NULL, NULL };

		if ((rc = step("the machine's ceilings -> ceilings.json", cmd_ceilings, c)) !=
		    EXIT_OK)
			return rc;
	}
	if (!(resume && have_file(profile_dir, "results.json"))) {
		/* Bytes on the lab preset: each operation's operands to and from memory, the
		 * lab's own accounting for its roofline. */
		char *p[] = { "profile",
			      "--out",
			      profile_dir,
			      "--cache",
			      "lab",
			      "--T",
			      small ? "64,128" : "64,128,256,512",
			      "--kernel",
			      "naive,flash2",
			      "--min-time",
			      small ? "0.005" : "0.05",
			      "--reps",
			      small ? "5" : "30",
			      NULL };

		if ((rc = step("the attention layer, timed per operation -> profile/", cmd_profile,
			       p)) != EXIT_OK)
			return rc;
	}
	if ((rc = study_xcheck(out, small, resume)) != EXIT_OK)
		return rc;

	printf("\n== lab formulas vs memsim (%s)\n\n", lab_dir);
	n = read_rows(lab_dir, &rows);
	if (n < 0)
		return EXIT_RUNTIME;
	print_lab_table(rows, n);
	printf("\n");
	print_crossover(rows, n);
	free(rows);
	printf("\n== exact formulas vs memsim, every array, fully associative LRU caches (%s)\n\n",
	       exact_dir);
	n = read_rows(exact_dir, &rows);
	if (n < 0)
		return EXIT_RUNTIME;
	rc = print_exact_summary(rows, n) ? EXIT_OK : EXIT_RUNTIME;
	free(rows);
	{
		char *p[] = { "plot", (char *)out, NULL };
		int prc;

		/* Without gnuplot the plots' data and scripts are still written: go on. */
		printf("\n");
		prc = step("plots -> plots/", cmd_plot, p);
		if (prc != EXIT_OK)
			printf("memsim: study: the plots were not drawn (see above); the report goes "
			       "on without them\n");
	}
	{
		char *p[] = { "report", (char *)out, NULL };
		int rrc = step("the report -> report.md, report.html", cmd_report, p);

		if (rrc != EXIT_OK)
			return rrc;
	}
	printf("\nResults: %s/*/results.json, results.csv, manifest.json; the report: "
	       "%s/report.html; memsim table DIR prints a table again.\n",
	       out, out);
	return rc;
}
