#include "measure/ncu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCU_FIELDS_MAX 1024
#define NCU_FIELD_LEN 160

/* Splits one CSV line into fields ("quoted, with commas" or bare); returns their count. */
static unsigned
split(const char *line, char fields[][NCU_FIELD_LEN], unsigned max)
{
	unsigned n = 0;
	const char *p = line;

	while (*p && *p != '\n' && n < max) {
		size_t k = 0;

		if (*p == '"') {
			p++;
			while (*p && !(*p == '"' && p[1] != '"')) {
				if (*p == '"')
					p++; /* "" inside quotes */
				if (k + 1 < NCU_FIELD_LEN)
					fields[n][k++] = *p;
				p++;
			}
			if (*p == '"')
				p++;
		} else {
			while (*p && *p != ',' && *p != '\n') {
				if (k + 1 < NCU_FIELD_LEN)
					fields[n][k++] = *p;
				p++;
			}
		}
		fields[n++][k] = '\0';
		if (*p == ',')
			p++;
		else
			break;
	}
	return n;
}

/* A number with optional thousands separators; false if it is not one. */
static bool
number(const char *s, double *out)
{
	char buf[NCU_FIELD_LEN], *end;
	size_t k = 0;

	for (; *s && k + 1 < sizeof(buf); s++)
		if (*s != ',')
			buf[k++] = *s;
	buf[k] = '\0';
	if (!k)
		return false;
	errno = 0;
	*out = strtod(buf, &end);
	return !errno && *end == '\0';
}

int
ncu_parse(const char *text, const char *const *metrics, unsigned nmetrics, struct ncu_result *out,
	  char *err, size_t errlen)
{
	static char f[NCU_FIELDS_MAX][NCU_FIELD_LEN];
	int col[NCU_METRICS_MAX], name_col = -1;
	const char *line = text;
	bool header = false, units = false;
	unsigned lineno = 0;

	memset(out, 0, sizeof(*out));
	if (nmetrics > NCU_METRICS_MAX) {
		snprintf(err, errlen, "too many metrics");
		return -1;
	}
	for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned n;

		lineno++;
		if (line[0] != '"')
			continue; /* ==PROF== lines and the program's own output */
		n = split(line, f, NCU_FIELDS_MAX);
		if (!header) {
			if (n == 0 || strcmp(f[0], "ID") != 0)
				continue;
			for (unsigned m = 0; m < nmetrics; m++) {
				col[m] = -1;
				for (unsigned i = 0; i < n; i++)
					if (strcmp(f[i], metrics[m]) == 0)
						col[m] = (int)i;
				if (col[m] < 0) {
					snprintf(err, errlen, "ncu's CSV has no column %s",
						 metrics[m]);
					return -1;
				}
			}
			for (unsigned i = 0; i < n; i++)
				if (strcmp(f[i], "Kernel Name") == 0)
					name_col = (int)i;
			if (name_col < 0) {
				snprintf(err, errlen, "ncu's CSV has no column \"Kernel Name\"");
				return -1;
			}
			header = true;
			continue;
		}
		if (!units && n > 0 && f[0][0] == '\0') {
			units = true; /* the row of units under the header */
			continue;
		}
		if (out->nkernels == NCU_KERNELS_MAX) {
			snprintf(err, errlen, "more than %d kernel rows in ncu's CSV",
				 NCU_KERNELS_MAX);
			return -1;
		}
		{
			struct ncu_kernel *k = &out->kernels[out->nkernels];

			if ((unsigned)name_col >= n) {
				snprintf(err, errlen, "ncu's CSV line %u is short", lineno);
				return -1;
			}
			snprintf(k->name, sizeof(k->name), "%s", f[name_col]);
			for (unsigned m = 0; m < nmetrics; m++)
				if ((unsigned)col[m] >= n || !number(f[col[m]], &k->value[m])) {
					snprintf(err, errlen,
						 "ncu's CSV line %u: %s is '%s', not a number",
						 lineno, metrics[m],
						 (unsigned)col[m] < n ? f[col[m]] : "");
					return -1;
				}
			out->nkernels++;
		}
	}
	if (!header) {
		snprintf(err, errlen, "no CSV table in ncu's output (was the kernel profiled?)");
		return -1;
	}
	if (out->nkernels == 0) {
		snprintf(err, errlen, "ncu's CSV has no kernel row");
		return -1;
	}
	return 0;
}
