#pragma once

/*
 * The lab report's shared state and the helpers its sections use (analysis/labreport.c);
 * one section per file where a section is large (analysis/labreport_roofline.c).
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis/doc.h"
#include "analysis/lookup.h"

#define MIB (1.0 / (1024.0 * 1024.0))
#define LAB "lab/results.json"
#define EXACT "exact/results.json"
#define FORMULAS "formulas/results.json"
#define PROFILE "profile/results.json"
#define CEILINGS "ceilings.json"

struct rep {
	const char *dir;
	struct lookup *l;
	struct doc *d;
	cJSON *summary; /* the manifest's results_summary */
};

/* The text of one number at file/row/path, scaled and formatted; NULL when absent. */
const char *rep_num(struct rep *r, const char *file, const char *row, const char *path,
		    double scale, const char *fmt);

/* Two sources combined by op; NULL when either is absent. */
const char *rep_num2(struct rep *r, enum lookup_op op, const char *f1, const char *r1,
		     const char *p1, const char *f2, const char *r2, const char *p2, double scale,
		     const char *fmt);

/* A raw value for decisions (not printed); NAN when absent. */
double rep_val(struct rep *r, const char *file, const char *row, const char *path);

/* Whether the report's directory holds rel, readable. */
bool rep_exists(struct rep *r, const char *rel);

/* plots/NAME.png with its caption, where the plot was drawn. */
void rep_image(struct rep *r, const char *name, const char *caption);

/* The distinct values of a number field over rows matching a selector, sorted. */
size_t rep_distinct(struct rep *r, const char *file, const char *select, const char *path,
		    double *out, size_t max);

/* The distinct strings at path over every row of file, in first-seen order. */
size_t rep_distinct_str(struct rep *r, const char *file, const char *path, char out[][32],
			size_t max);

/* text as a number under key in the manifest's summary (null when text is NULL). */
void rep_summary_number(struct rep *r, const char *key, const char *text);

/* The section on memory-bound operations and the roofline. */
void labreport_section_roofline(struct rep *r);
