/*
 * `memsim plot DIR`: every plot DIR's results allow (analysis/plot.h), a study's or a sweep's,
 * drawn by gnuplot into DIR/plots. The data files and scripts are written first, so they survive a
 * missing or failing gnuplot; each script is then run by itself, its stderr in NAME.log (removed
 * when it succeeds), and the first failure stops the run with gnuplot's last words.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/plot.h"
#include "analysis/plot_input.h"
#include "cli/commands.h"
#include "cli/steps.h"
#include "measure/spawn.h"

void
usage_plot(FILE *f)
{
	fprintf(f,
		"Usage: memsim plot DIR [--format png,svg]\n"
		"\n"
		"Draws every plot the results in DIR allow into DIR/plots: for each, NAME.dat\n"
		"(its data, whitespace columns), NAME.gp (a gnuplot script: `gnuplot\n"
		"DIR/plots/NAME.gp` redraws it from anywhere) and NAME.png and NAME.svg; then\n"
		"index.json, which lists them. A plot whose inputs are missing is skipped with\n"
		"one line saying why; with none drawn, DIR/plots is not left behind.\n"
		"\n"
		"DIR is a study's directory (memsim study --out DIR), read as below, or a sweep's\n"
		"(memsim sweep --out DIR): its DIR/results.json stands for lab, exact and decode\n"
		"below, each plot drawn where the rows allow it, else a line says what it needs.\n"
		"\n"
		"  bytes_vs_n_CACHE    DRAM bytes vs N, naive and flash2, simulated and both\n"
		"                      formulas, the crossover marked    (DIR/lab/results.json;\n"
		"                      a sweep: naive or flash2 over two or more N)\n"
		"  intensity_ratio     flash2 / naive arithmetic intensity vs N, per cache (same)\n"
		"  dram_vs_cache_size  DRAM bytes vs cache size at the largest N, the working\n"
		"                      sets marked                       (DIR/exact/results.json;\n"
		"                      a sweep: --cache-sweep over two or more sizes)\n"
		"  perf, perf_bytes    the naive layer's per-operation p50 time and DRAM bytes,\n"
		"                      stacked, per T                    (DIR/profile/results.json)\n"
		"  roofline            every profiled operation under the measured ceilings\n"
		"                      (DIR/profile/results.json and DIR/ceilings.json)\n"
		"  decode_per_token    bytes per generated token vs N_kv, per head layout\n"
		"                      (DIR/decode/results.json; a sweep: rows with N < N_kv\n"
		"                      over two or more N_kv)\n"
		"  decode_tokens_per_s the tokens/s bound at the rows' bandwidth vs N_kv (same,\n"
		"                      with a bandwidth: the h100 preset's)\n"
		"\n"
		"  --format LIST   image formats, png (pngcairo) and svg, both 1000x700 [png,svg]\n"
		"\n"
		"Needs gnuplot (apt-get install gnuplot-nox); MEMSIM_GNUPLOT names another program\n"
		"[gnuplot on PATH]. Without it the data files and scripts are still written and\n"
		"the exit status is 1.\n");
}

static bool
nonempty_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* Runs gnuplot on each script; marks the images drawn. Returns false after printing the
 * first failure. */
static bool
draw_all(struct plot_set *set, const char *gnuplot)
{
	for (size_t i = 0; i < set->nplots; i++) {
		struct plot_info *p = &set->plots[i];
		char gp[4400], log[4400], png[4400], svg[4400], why[512], words[1024];
		char *argv[] = { (char *)gnuplot, gp, NULL };
		int rc;

		snprintf(gp, sizeof(gp), "%s/%s.gp", set->dir, p->name);
		snprintf(log, sizeof(log), "%s/%s.log", set->dir, p->name);
		snprintf(png, sizeof(png), "%s/%s.png", set->dir, p->name);
		snprintf(svg, sizeof(svg), "%s/%s.svg", set->dir, p->name);
		unlink(png);
		unlink(svg);
		rc = spawn_wait(argv, NULL, log, why, sizeof(why));
		if (rc < 0) {
			print_error("plot: %s (its log: %s)", why, log);
			return false;
		}
		if (rc != 0) {
			spawn_last_line(log, words, sizeof(words));
			print_error("plot: gnuplot failed on %s.gp (exit status %d): %s "
				    "(its log: %s)",
				    p->name, rc, words[0] ? words : "no message", log);
			return false;
		}
		p->png = nonempty_file(png);
		p->svg = nonempty_file(svg);
		if (((set->formats & PLOT_FORMAT_PNG) && !p->png) ||
		    ((set->formats & PLOT_FORMAT_SVG) && !p->svg)) {
			print_error("plot: gnuplot wrote no %s (its log: %s)",
				    !p->png && (set->formats & PLOT_FORMAT_PNG) ? png : svg, log);
			return false;
		}
		unlink(log);
		printf("%-22s %s/%s.%s%s\n", p->name, set->dir, p->name, p->png ? "png" : "svg",
		       p->png && p->svg ? ", .svg" : "");
	}
	return true;
}

/* No plot drawn: one line saying why, and no plots directory left behind (what an earlier run
 * drew there went with plot_set_remove_stale(); a directory holding other files stays). */
static void
nothing_to_plot(const struct plot_set *set, const struct plot_input *in)
{
	char index[4400];

	snprintf(index, sizeof(index), "%s/index.json", set->dir);
	unlink(index);
	rmdir(set->dir);
	if (in->sweep && !in->usable[PLOT_SOURCE_SWEEP])
		print_error("plot: nothing to plot in %s: %s", in->dir,
			    in->error[PLOT_SOURCE_SWEEP]);
	else if (in->sweep)
		print_error("plot: nothing to plot in %s: the rows of its sweep (results.json) "
			    "allow none of the plots (what each needs is said above)",
			    in->dir);
	else
		print_error("plot: nothing to plot in %s: neither a sweep's results.json nor any "
			    "of lab/, exact/, profile/, decode/results.json is usable",
			    in->dir);
}

static int
formats_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	const char *msg = plot_parse_formats(arg, opt->dest);

	return msg ? usage_error(cmd, "%s", msg) : 0;
}

int
cmd_plot(int argc, char **argv)
{
	unsigned formats = PLOT_FORMAT_PNG | PLOT_FORMAT_SVG;
	const struct optparse_option opts[] = {
		{ "format", 'f', OPTPARSE_CALL, .dest = &formats, .call = formats_value },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "plot",
					      .usage = usage_plot,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	if (optind == argc)
		return usage_error("plot", "plot needs a study's or a sweep's directory DIR");
	if (argc - optind > 1)
		return usage_error("plot", "plot takes one directory, not '%s' too",
				   argv[optind + 1]);
	return plot_into(argv[optind], formats);
}

int
plot_into(const char *dir, unsigned formats)
{
	struct plot_input in;
	struct plot_set set = { 0 };
	const char *env = getenv("MEMSIM_GNUPLOT");
	char err[1024], gnuplot[4096];
	bool input_error = false;
	int rc;

	rc = plot_input_load(&in, dir);
	if (rc) {
		print_error("plot: cannot read %s: %s", dir, strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = plot_set_write(&set, &in, formats, err, sizeof(err));
	if (rc) {
		print_error("plot: %s", err);
		rc = EXIT_RUNTIME;
		goto out;
	}
	plot_set_remove_stale(&set);
	for (size_t i = 0; i < set.nskipped; i++) {
		printf("skipped %s: %s\n", set.skipped[i].name, set.skipped[i].reason);
		input_error |= set.skipped[i].error;
	}
	rc = EXIT_OK;
	if (set.nplots == 0) {
		nothing_to_plot(&set, &in);
		rc = EXIT_RUNTIME;
		goto out;
	} else if (!spawn_find(env && *env ? env : "gnuplot", gnuplot, sizeof(gnuplot))) {
		print_error(
			"plot: %s not found%s; the data (.dat) and gnuplot scripts (.gp) "
			"are in %s (install gnuplot with `apt-get install gnuplot-nox`, then run "
			"memsim plot again or gnuplot %s/NAME.gp)",
			env && *env ? env : "gnuplot", env && *env ? "" : " on PATH", set.dir,
			set.dir);
		rc = EXIT_RUNTIME;
	} else if (!draw_all(&set, gnuplot)) {
		rc = EXIT_RUNTIME;
	}
	if (plot_write_index(&set, err, sizeof(err))) {
		print_error("plot: %s", err);
		rc = EXIT_RUNTIME;
	} else if (rc == EXIT_OK) {
		printf("index: %s/index.json (%zu plots drawn, %zu skipped)\n", set.dir, set.nplots,
		       set.nskipped);
	}
	/* An input there but unusable: its plots were skipped above; the status says so. */
	if (input_error && rc == EXIT_OK) {
		for (int s = 0; s < PLOT_SOURCES; s++)
			if (in.present[s] && !in.usable[s])
				print_error("plot: %s", in.error[s]);
		rc = EXIT_RUNTIME;
	}
out:
	plot_set_finish(&set);
	plot_input_finish(&in);
	return rc;
}
