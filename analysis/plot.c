/*
 * The set of plots of `memsim plot`: writing each one's data file and gnuplot script, the
 * skipped list and index.json. Notes:
 * - Scripts find their data and write their images through `here`, the directory in ARG0
 *   (the script's path as gnuplot was given it), so they run from any directory and the
 *   plots directory can be moved.
 * - Text is drawn noenhanced: names such as qkv_proj keep their underscores. Labels use
 *   UTF-8 (×, ², ≥), which pngcairo and svg both render.
 * - Missing values in data files are NaN, which gnuplot skips.
 */

#include "config.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/plot.h"
#include "analysis/plot_impl.h"
#include "analysis/report.h"
#include "base/util.h"

/* Image size in pixels, and fonts for each terminal. */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 700
#define PLOT_FONT_PNG "DejaVu Sans,11"
#define PLOT_FONT_SVG "DejaVu Sans,12"

const char *
plot_parse_formats(const char *s, unsigned *formats)
{
	unsigned f = 0;

	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 3 && strncmp(s, "png", 3) == 0)
			f |= PLOT_FORMAT_PNG;
		else if (n == 3 && strncmp(s, "svg", 3) == 0)
			f |= PLOT_FORMAT_SVG;
		else
			return "--format: formats are png and svg, separated by commas";
		s += n;
		if (*s == ',' && !*++s)
			return "--format: a format is empty";
	}
	if (!f)
		return "--format: no format given";
	*formats = f;
	return NULL;
}

char *
plot_quote(const char *s, char *buf, size_t len)
{
	size_t j = 0;

	for (; *s && j + 2 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[j++] = '\\';
		buf[j++] = *s == '\n' ? ' ' : *s;
	}
	buf[j] = '\0';
	return buf;
}

char *
plot_number_label(double x, int n, char *buf, size_t len)
{
	if (x >= 1e-3 && x < 1e6) {
		/* %g without an exponent: as many decimals as n significant digits need. */
		int decimals = n - 1 - (int)floor(log10(x));

		snprintf(buf, len, "%.*f", decimals > 0 ? decimals : 0, x);
	} else {
		snprintf(buf, len, "%.*g", n, x);
	}
	return buf;
}

char *
plot_bytes_label(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	char num[32];

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	if (bytes == floor(bytes))
		snprintf(num, sizeof(num), "%.0f", bytes);
	else
		plot_number_label(bytes, 3, num, sizeof(num));
	snprintf(buf, len, "%s %s", num, units[u]);
	return buf;
}

void
plot_skip(struct plot_set *set, const char *name, bool error, const char *fmt, ...)
{
	struct plot_skip *s;
	va_list ap;

	set->skipped = xrealloc(set->skipped, (set->nskipped + 1) * sizeof(*set->skipped));
	s = &set->skipped[set->nskipped++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->error = error;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
}

void
plot_skip_source(struct plot_set *set, const char *name, const struct plot_input *in,
		 enum plot_source s, const char *hint, const char *empty)
{
	if (in->present[s] && !in->usable[s])
		plot_skip(set, name, true, "%s", in->error[s]);
	else if (!in->present[s])
		plot_skip(set, name, false, "no %s/%s%s%s%s", in->dir, plot_source_path(s),
			  hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
	else
		plot_skip(set, name, false, "%s in %s/%s", empty, in->dir, plot_source_path(s));
}

/* text as "# " comment lines of at most 96 columns, broken between words. */
static void
comment_wrapped(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strlen(text), cut = n;

		if (n > 94) {
			cut = 94;
			while (cut > 0 && text[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = strcspn(text, " ");
		}
		fprintf(f, "# %.*s\n", (int)cut, text);
		text += cut;
		text += strspn(text, " ");
	}
}

int
plot_begin(struct plot_out *o, struct plot_set *set, const char *name, const char *title,
	   const char *description, const enum plot_source *inputs, unsigned ninputs, char *err,
	   size_t errlen)
{
	char from[256] = "", q[512];
	int rc;

	memset(o, 0, sizeof(*o));
	o->set = set;
	snprintf(o->info.name, sizeof(o->info.name), "%s", name);
	snprintf(o->info.description, sizeof(o->info.description), "%s", description);
	for (unsigned i = 0; i < ninputs && i < 3; i++) {
		o->info.inputs[o->info.ninputs++] = inputs[i];
		snprintf(from + strlen(from), sizeof(from) - strlen(from), "%sDIR/%s",
			 i ? " and " : "", plot_source_path(inputs[i]));
	}
	snprintf(o->dat_path, sizeof(o->dat_path), "%s/%s.dat", set->dir, name);
	snprintf(o->gp_path, sizeof(o->gp_path), "%s/%s.gp", set->dir, name);
	o->dat = fopen(o->dat_path, "w");
	if (!o->dat) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", o->dat_path, strerror(errno));
		return rc;
	}
	o->gp = fopen(o->gp_path, "w");
	if (!o->gp) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", o->gp_path, strerror(errno));
		fclose(o->dat);
		return rc;
	}
	fprintf(o->dat, "# %s: %s\n# from %s (memsim %s, memsim plot)\n", name, title, from,
		MEMSIM_VERSION);
	fprintf(o->gp, "# %s: %s\n#\n", name, title);
	comment_wrapped(o->gp, description);
	fprintf(o->gp,
		"# Data: %s.dat beside this script; written by memsim %s (memsim plot) from\n"
		"# %s of the study directory DIR.\n"
		"# Redraw by hand, from any directory:\n"
		"#     gnuplot DIR/plots/%s.gp                       (the images beside it)\n"
		"#     gnuplot -e 'formats=\"svg\"' DIR/plots/%s.gp    (one format)\n"
		"\n"
		"name = \"%s\"\n"
		"here = exists(\"ARG0\") && strlen(ARG0) > strlen(name . \".gp\") ? \\\n"
		"\tARG0[1:strlen(ARG0) - strlen(name . \".gp\")] : \"\"\n"
		"data = here . name . \".dat\"\n"
		"if (!exists(\"formats\")) formats = \"%s%s%s\"\n"
		"\n"
		"set encoding utf8\n"
		"set title \"%s\" font \",14\"\n"
		"set grid lc rgb \"#d8d8d8\" lw 1\n"
		"set border lw 1.2\n"
		"set key box opaque samplen 3 spacing 1.15 width 1\n",
		name, MEMSIM_VERSION, from, name, name, name,
		set->formats & PLOT_FORMAT_PNG ? "png" : "",
		set->formats == (PLOT_FORMAT_PNG | PLOT_FORMAT_SVG) ? " " : "",
		set->formats & PLOT_FORMAT_SVG ? "svg" : "", plot_quote(title, q, sizeof(q)));
	return 0;
}

void
plot_draw(struct plot_out *o)
{
	fprintf(o->gp,
		"\n"
		"do for [fmt in formats] {\n"
		"\tif (fmt eq \"svg\") {\n"
		"\t\tset terminal svg size %d,%d font \"%s\" noenhanced background rgb \"white\"\n"
		"\t} else {\n"
		"\t\tset terminal pngcairo size %d,%d font \"%s\" noenhanced\n"
		"\t}\n"
		"\tset output here . name . \".\" . fmt\n",
		PLOT_WIDTH, PLOT_HEIGHT, PLOT_FONT_SVG, PLOT_WIDTH, PLOT_HEIGHT, PLOT_FONT_PNG);
}

int
plot_end(struct plot_out *o, char *err, size_t errlen)
{
	struct plot_set *set = o->set;
	int rc = 0;

	fprintf(o->gp, "\tset output\n}\n");
	if (ferror(o->dat) || fclose(o->dat) != 0) {
		rc = -(errno ? errno : EIO);
		snprintf(err, errlen, "%s: %s", o->dat_path, strerror(-rc));
	}
	if (ferror(o->gp) || fclose(o->gp) != 0) {
		if (!rc) {
			rc = -(errno ? errno : EIO);
			snprintf(err, errlen, "%s: %s", o->gp_path, strerror(-rc));
		}
	}
	if (rc)
		return rc;
	set->plots = xrealloc(set->plots, (set->nplots + 1) * sizeof(*set->plots));
	set->plots[set->nplots++] = o->info;
	return 0;
}

int
plot_set_write(struct plot_set *set, const struct plot_input *in, unsigned formats, char *err,
	       size_t errlen)
{
	int rc;

	memset(set, 0, sizeof(*set));
	set->formats = formats;
	snprintf(set->dir, sizeof(set->dir), "%s/plots", in->dir);
	rc = mkdir_p(set->dir);
	if (rc) {
		snprintf(err, errlen, "cannot create %s: %s", set->dir, strerror(-rc));
		return rc;
	}
	rc = plot_study_write(set, in, err, errlen);
	if (!rc)
		rc = plot_profile_write(set, in, err, errlen);
	if (!rc)
		rc = plot_decode_write(set, in, err, errlen);
	return rc;
}

/* Whether name (without extension) is one of memsim's plots. */
static bool
plot_name(const char *name, size_t len)
{
	static const char *const fixed[] = {
		"intensity_ratio",  "dram_vs_cache_size", "perf", "perf_bytes", "roofline",
		"decode_per_token", "decode_tokens_per_s"
	};

	if (len > 11 && strncmp(name, "bytes_vs_n_", 11) == 0)
		return true;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strlen(fixed[i]) == len && strncmp(name, fixed[i], len) == 0)
			return true;
	return false;
}

void
plot_set_remove_stale(const struct plot_set *set)
{
	static const char *const exts[] = { ".dat", ".gp", ".png", ".svg", ".log" };
	DIR *d = opendir(set->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *dot = strrchr(e->d_name, '.');
		size_t len = dot ? (size_t)(dot - e->d_name) : 0;
		const struct plot_info *p = NULL;
		bool ours = false, keep;
		char path[4500];

		for (size_t i = 0; dot && i < sizeof(exts) / sizeof(exts[0]); i++)
			ours |= strcmp(dot, exts[i]) == 0;
		if (!ours || !plot_name(e->d_name, len))
			continue;
		for (size_t i = 0; i < set->nplots && !p; i++)
			if (strlen(set->plots[i].name) == len &&
			    strncmp(set->plots[i].name, e->d_name, len) == 0)
				p = &set->plots[i];
		keep = p && (strcmp(dot, ".png") || (set->formats & PLOT_FORMAT_PNG)) &&
		       (strcmp(dot, ".svg") || (set->formats & PLOT_FORMAT_SVG));
		if (keep)
			continue;
		snprintf(path, sizeof(path), "%s/%s", set->dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

void
plot_set_finish(struct plot_set *set)
{
	free(set->plots);
	free(set->skipped);
	set->plots = NULL;
	set->skipped = NULL;
	set->nplots = set->nskipped = 0;
}

int
plot_write_index(const struct plot_set *set, char *err, size_t errlen)
{
	cJSON *root = cJSON_CreateObject(), *plots, *skipped;
	char path[4300], file[128];
	int rc;

	cJSON_AddStringToObject(root, "memsim_version", MEMSIM_VERSION);
	cJSON_AddStringToObject(root, "dir", set->dir);
	plots = cJSON_AddArrayToObject(root, "plots");
	for (size_t i = 0; i < set->nplots; i++) {
		const struct plot_info *p = &set->plots[i];
		cJSON *o = cJSON_CreateObject(), *inputs;

		cJSON_AddStringToObject(o, "name", p->name);
		snprintf(file, sizeof(file), "%s.png", p->name);
		if (p->png)
			cJSON_AddStringToObject(o, "png", file);
		else
			cJSON_AddNullToObject(o, "png");
		snprintf(file, sizeof(file), "%s.svg", p->name);
		if (p->svg)
			cJSON_AddStringToObject(o, "svg", file);
		else
			cJSON_AddNullToObject(o, "svg");
		snprintf(file, sizeof(file), "%s.dat", p->name);
		cJSON_AddStringToObject(o, "data", file);
		snprintf(file, sizeof(file), "%s.gp", p->name);
		cJSON_AddStringToObject(o, "script", file);
		cJSON_AddStringToObject(o, "description", p->description);
		inputs = cJSON_AddArrayToObject(o, "inputs");
		for (unsigned k = 0; k < p->ninputs; k++)
			cJSON_AddItemToArray(inputs,
					     cJSON_CreateString(plot_source_path(p->inputs[k])));
		cJSON_AddItemToArray(plots, o);
	}
	skipped = cJSON_AddArrayToObject(root, "skipped");
	for (size_t i = 0; i < set->nskipped; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", set->skipped[i].name);
		cJSON_AddStringToObject(o, "reason", set->skipped[i].reason);
		cJSON_AddItemToArray(skipped, o);
	}
	snprintf(path, sizeof(path), "%s/index.json", set->dir);
	rc = report_write_json(path, root, err, errlen);
	cJSON_Delete(root);
	return rc;
}
