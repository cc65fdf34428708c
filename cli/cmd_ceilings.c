/*
 * `memsim ceilings`: the roofline's ceilings measured on this machine (measure/ceilings.h), kept
 * in DIR/ceilings.json and reused while the CPU model and the core count are the same; DIR is
 * by default this machine's directory in the user's cache (ceilings_cache_dir()), never the
 * working directory.
 */

#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/optparse.h"
#include "cli/steps.h"
#include "measure/ceilings.h"
#include "sim/spec.h"

/* Assumed when the host preset cannot be read: larger than most server LLCs. */
#define FALLBACK_LLC_BYTES (UINT64_C(256) << 20)

void
usage_ceilings(FILE *f)
{
	fprintf(f,
		"Usage: memsim ceilings [--out DIR] [--refresh] [--quick] [--json FILE]\n"
		"\n"
		"Measures the roofline's ceilings on this machine, on one core and on all cores:\n"
		"memory bandwidth with a STREAM-like triad a[i] = b[i] + s*c[i] on doubles over\n"
		"three arrays of 4.25x the last-level cache each (from the host preset; the three\n"
		"at most half of MemAvailable), 24 bytes counted per element, best of 10; and\n"
		"peak fp32 FLOP/s with an FMA-bound loop (AVX2+FMA where the CPU has them, else\n"
		"SSE2), best of 5. Measures again, 3 times at most, while the numbers are\n"
		"inconsistent (all cores over 5%% slower than one, or repetitions over 25%%\n"
		"apart), and warns where they stay so. Writes DIR/ceilings.json and prints a\n"
		"table.\n"
		"\n"
		"  --out DIR     where ceilings.json goes [this machine's cache directory,\n"
		"                $XDG_CACHE_HOME/memsim/ceilings/CPU-Ncores, else\n"
		"                ~/.cache/memsim/ceilings/CPU-Ncores: what --bandwidth measured\n"
		"                reads]; an existing one measured on the same CPU model and core\n"
		"                count is reused (not a quick one for a full run, nor an\n"
		"                inconsistent one)\n"
		"  --refresh     measure again even so\n"
		"  --quick       arrays of at most 256 MiB for the three (may fit in the cache: not\n"
		"                a DRAM bandwidth), 3 repetitions, short FLOP runs; for tests\n"
		"  --json FILE   also write the document to FILE ('-' for stdout)\n");
}

/* Whether the numbers hold together, and what that means for what is drawn from them. */
static void
print_consistency(FILE *f, const struct ceilings *c)
{
	if (!c->checked)
		fprintf(f, "note: not checked for consistency (measured by an older memsim)\n");
	else if (!c->consistent)
		fprintf(f,
			"WARNING: inconsistent measurement, %u times in a row: %s.\n"
			"  Something else ran on this machine meanwhile: these ceilings, the ridge "
			"point and every memory- or compute-bound verdict drawn from them (memsim "
			"report) are unreliable. Measure again on a quiet machine: memsim ceilings "
			"--refresh.\n",
			c->rounds, c->inconsistency);
	else if (c->rounds > 1)
		fprintf(f,
			"note: measured %u times: the earlier %s inconsistent (all cores slower "
			"than one core by over %.0f%%, or repetitions over %.0f%% apart); the last "
			"holds together\n",
			c->rounds, c->rounds > 2 ? "ones were" : "one was",
			100 * CEILINGS_SLOWER_MAX, 100 * CEILINGS_SPREAD_MAX);
}

static void
print_table(FILE *f, const struct ceilings *c)
{
	fprintf(f, "ceilings: %s, %u cores, measured %s (memsim %s)%s\n", c->cpu, c->cores, c->date,
		c->memsim_version, c->quick ? ", quick" : "");
	fprintf(f, "%-34s %14s %14s\n", "", "one core", "all cores");
	fprintf(f, "%-34s %14.2f %14.2f  (%u threads)\n", "bandwidth, triad (GB/s)",
		c->one_core_bytes_per_s / 1e9, c->all_cores_bytes_per_s / 1e9, c->bw_threads);
	fprintf(f, "%-20s %-13s %14.2f %14.2f  (%u threads)\n", "peak fp32 (GFLOP/s)", c->isa,
		c->one_core_flops_per_s / 1e9, c->all_cores_flops_per_s / 1e9, c->flops_threads);
	fprintf(f, "%-34s %14.2f %14.2f%s\n", "ridge point (FLOP/byte)",
		c->one_core_flops_per_s / c->one_core_bytes_per_s,
		c->all_cores_flops_per_s / c->all_cores_bytes_per_s,
		c->checked && !c->consistent ? "  (unreliable: see below)" : "");
	fprintf(f, "bandwidth: %s\n", c->bw_method);
	fprintf(f, "peak:      %s\n", c->flops_method);
	print_consistency(f, c);
}

/* The LLC of the host preset, or FALLBACK_LLC_BYTES with a line saying why. */
static uint64_t
host_llc_bytes(FILE *f)
{
	struct spec host;
	char err[512];

	if (spec_parse("host", &host, err, sizeof(err)) || host.cache.levels == 0) {
		fprintf(f,
			"note: the host preset is unavailable (%s): assuming a last-level cache of "
			"%llu MiB\n",
			err, (unsigned long long)(FALLBACK_LLC_BYTES >> 20));
		return FALLBACK_LLC_BYTES;
	}
	if (host.note[0])
		fprintf(f, "note: host preset: %s\n", host.note);
	return host.cache.level[host.cache.levels - 1].size_bytes;
}

/* Whether the document at path can stand for this machine; says why not on f. An
 * inconsistent one stands only with inconsistent_ok (the caller then says so). */
static bool
reusable(FILE *f, const char *path, bool quick, bool inconsistent_ok, struct ceilings *c)
{
	char err[512], cpu[256];
	cJSON *doc;
	int rc;

	if (access(path, F_OK) != 0)
		return false;
	doc = report_read_json(path, err, sizeof(err));
	if (!doc) {
		fprintf(f, "%s cannot be reused (%s): measuring again\n", path, err);
		return false;
	}
	rc = ceilings_from_json(doc, c, err, sizeof(err));
	cJSON_Delete(doc);
	if (rc) {
		fprintf(f, "%s cannot be reused (%s): measuring again\n", path, err);
		return false;
	}
	ceilings_cpu_model(cpu, sizeof(cpu));
	if (strcmp(c->cpu, cpu) != 0 || c->cores != ceilings_cores()) {
		fprintf(f, "%s was measured on another machine (%s, %u cores): measuring again\n",
			path, c->cpu, c->cores);
		return false;
	}
	if (c->quick && !quick) {
		fprintf(f, "%s is a quick measurement: measuring again in full\n", path);
		return false;
	}
	if (!c->checked) {
		fprintf(f,
			"%s was measured by a memsim that did not check its consistency: measuring "
			"again\n",
			path);
		return false;
	}
	if (!c->consistent && !inconsistent_ok) {
		fprintf(f, "%s is inconsistent (%s): measuring again\n", path, c->inconsistency);
		return false;
	}
	return true;
}

int
cmd_ceilings(int argc, char **argv)
{
	const char *out = NULL, *json = NULL;
	bool refresh = false, quick = false;
	const struct optparse_option opts[] = {
		{ "out", 0, OPTPARSE_STRING, .dest = &out },
		{ "refresh", 0, OPTPARSE_FLAG, .dest = &refresh },
		{ "quick", 0, OPTPARSE_FLAG, .dest = &quick },
		{ "json", 0, OPTPARSE_STRING, .dest = &json },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "ceilings",
					      .usage = usage_ceilings,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	if (optind != argc)
		return usage_error("ceilings", "unexpected argument '%s'", argv[optind]);
	if (out && !out[0])
		return usage_error("ceilings", "--out: empty directory name");
	return ceilings_into(out, quick, refresh, json);
}

/* This machine's ceilings, from out/ceilings.json where it stands for this machine (and
 * refresh is false), else measured and written there; out NULL: measured and kept nowhere.
 * What happens is said on f. Returns EXIT_OK or EXIT_RUNTIME with the error printed. */
static int
ceilings_get(FILE *f, const char *out, bool quick, bool refresh, struct ceilings *c)
{
	char path[4096], err[512];
	cJSON *doc;
	int rc;

	if (out && (rc = mkdir_p(out))) {
		print_error("cannot create %s: %s", out, strerror(-rc));
		return EXIT_RUNTIME;
	}
	if (out)
		snprintf(path, sizeof(path), "%s/ceilings.json", out);
	if (out && !refresh && reusable(f, path, quick, false, c)) {
		fprintf(f,
			"reusing %s: measured %s on the same CPU model and core count (--refresh "
			"measures again)\n",
			path, c->date);
		return EXIT_OK;
	}
	{
		uint64_t llc = host_llc_bytes(f);

		fprintf(f, "measuring bandwidth, then peak FLOP/s, on 1 and on %u threads%s...\n",
			ceilings_cores(), quick ? " (quick)" : "");
		fflush(f);
		if ((rc = ceilings_measure(llc, quick, c, err, sizeof(err)))) {
			print_error("ceilings: %s", err);
			return EXIT_RUNTIME;
		}
	}
	if (c->note[0])
		fprintf(f, "note: %s\n", c->note);
	if (!out)
		return EXIT_OK;
	doc = ceilings_json(c);
	rc = report_write_json(path, doc, err, sizeof(err));
	cJSON_Delete(doc);
	if (rc) {
		print_table(f, c);
		print_error("%s", err);
		return EXIT_RUNTIME;
	}
	fprintf(f, "wrote %s\n", path);
	return EXIT_OK;
}

/* The cache's base: $XDG_CACHE_HOME, else $HOME/.cache, each only as an absolute path (the XDG
 * base directory rule), into buf; false where neither is. */
static bool
cache_base(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache", home);
	else
		return false;
	return n > 0 && (size_t)n < len;
}

char *
ceilings_cache_dir(char *buf, size_t len)
{
	char base[3072], cpu[256], key[128];
	size_t k = 0;
	int n;

	if (!cache_base(base, sizeof(base)))
		return NULL;
	/* the CPU model as letters, digits and single '-': "intel-r-xeon-r-gold-6230" */
	ceilings_cpu_model(cpu, sizeof(cpu));
	for (const char *p = cpu; *p && k + 1 < sizeof(key) - 16; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
			key[k++] = *p;
		else if (*p >= 'A' && *p <= 'Z')
			key[k++] = (char)(*p - 'A' + 'a');
		else if (k > 0 && key[k - 1] != '-')
			key[k++] = '-';
	}
	while (k > 0 && key[k - 1] == '-')
		k--;
	key[k] = '\0';
	n = snprintf(buf, len, "%s/memsim/ceilings/%s-%ucores", base, k ? key : "unknown",
		     ceilings_cores());
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* The cache directory made (ceilings_cache_dir()) into buf, or NULL with why there is none in
 * why: the ceilings are then measured and kept nowhere. */
static const char *
made_cache_dir(char *buf, size_t len, char *why, size_t whylen)
{
	int rc;

	if (!ceilings_cache_dir(buf, len)) {
		snprintf(why, whylen, "neither XDG_CACHE_HOME nor HOME is an absolute path");
		return NULL;
	}
	if ((rc = mkdir_p(buf))) {
		snprintf(why, whylen, "cannot create %s (%s)", buf, strerror(-rc));
		return NULL;
	}
	return buf;
}

int
ceilings_into(const char *out, bool quick, bool refresh, const char *json)
{
	FILE *f = text_stream(json);
	struct ceilings c;
	char err[512], dir[4096], why[4200];
	cJSON *doc;
	int rc;

	if (!out && !(out = made_cache_dir(dir, sizeof(dir), why, sizeof(why))))
		fprintf(f, "note: %s: measuring, not caching\n", why);
	if ((rc = ceilings_get(f, out, quick, refresh, &c)))
		return rc;
	print_table(f, &c);
	if (json) {
		doc = ceilings_json(&c);
		rc = report_write_json(json, doc, err, sizeof(err));
		cJSON_Delete(doc);
		if (rc) {
			print_error("%s", err);
			return EXIT_RUNTIME;
		}
	}
	return EXIT_OK;
}

int
bandwidth_option(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct bandwidth *b = opt->dest;
	const struct optparse_option gbps = { "bandwidth", 0, OPTPARSE_POSITIVE, .dest = &b->gbps,
					      .expect = "a positive number of GB/s" };
	struct ceilings c;
	char dir[4096], path[4200], from[4300], why[4200];
	const char *out;
	int rc;

	if (strcmp(arg, "measured") != 0) {
		snprintf(b->source, sizeof(b->source), "--bandwidth");
		return optparse_value(cmd, &gbps, arg);
	}
	/* What ceilings says goes to stderr: stdout holds the command's report. A quick
	 * measurement there will do, and an inconsistent one, said below (memsim ceilings
	 * measures that again); a new one is a full one, said before it starts: it takes a
	 * while, with the progress line on a terminal, and ended by a line of its own
	 * (python/memsim/_cli.py shows what lies between while it runs). */
	out = made_cache_dir(dir, sizeof(dir), why, sizeof(why));
	if (out)
		snprintf(path, sizeof(path), "%s/ceilings.json", out);
	if (!out || !reusable(stderr, path, true, true, &c)) {
		fprintf(stderr,
			"memsim: --bandwidth measured: measuring this machine's bandwidth (a minute "
			"or so), %s%s\n",
			out ? "to be cached in " : "not cached: ", out ? out : why);
		if ((rc = ceilings_get(stderr, out, false, true, &c)))
			return rc;
		fprintf(stderr,
			"memsim: --bandwidth measured: %.2f GB/s, the triad on %u threads\n",
			c.all_cores_bytes_per_s / 1e9, c.bw_threads);
	}
	b->gbps = c.all_cores_bytes_per_s / 1e9;
	if (out)
		snprintf(from, sizeof(from), "%s of %s", path, c.date);
	else
		snprintf(from, sizeof(from), "measured %s, not cached", c.date);
	snprintf(b->source, sizeof(b->source),
		 "--bandwidth measured: this machine's triad on %u threads, %s%s%s", c.bw_threads,
		 from, c.quick ? " (quick)" : "",
		 c.consistent ? "" : ", an inconsistent measurement: unreliable");
	if (!c.consistent)
		print_error("warning: --bandwidth measured: %s is inconsistent (%s): the tokens/s "
			    "bound at %.2f GB/s is unreliable (memsim ceilings --refresh measures "
			    "again)",
			    out ? path : "the measurement", c.inconsistency, b->gbps);
	return 0;
}
