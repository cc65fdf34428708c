#include "measure/vgout.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

bool
vg_counts_get(const struct vg_counts *c, const char *name, uint64_t *out)
{
	for (unsigned i = 0; i < c->n; i++)
		if (strcmp(c->names[i], name) == 0) {
			*out = c->v[i];
			return true;
		}
	return false;
}

uint64_t
vg_counts_sum(const struct vg_counts *c, const char *const *names, unsigned n, bool *all_found)
{
	uint64_t sum = 0, v;
	bool all = true;

	for (unsigned i = 0; i < n; i++) {
		if (vg_counts_get(c, names[i], &v))
			sum += v;
		else
			all = false;
	}
	if (all_found)
		*all_found = all;
	return sum;
}

/* A reader of one file: the current line and its number, for messages. */
struct reader {
	FILE *f;
	const char *path;
	char *line;
	size_t cap;
	unsigned long lineno;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->errlen, "%s:%lu: ", r->path, r->lineno);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Next line without its newline; false at the end of the file. A last line without a newline
 * is a truncated file. */
static bool
next_line(struct reader *r, bool *truncated)
{
	ssize_t n = getline(&r->line, &r->cap, r->f);

	if (n < 0)
		return false;
	r->lineno++;
	if (n > 0 && r->line[n - 1] == '\n')
		r->line[--n] = '\0';
	else
		*truncated = true;
	return true;
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "events:" line: the column names. */
static int
parse_events(struct reader *r, const char *s, struct vg_counts *out)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	out->n = 0;
	for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (out->n == VG_EVENTS_MAX)
			return fail(r, "more than %d events", VG_EVENTS_MAX);
		if (strlen(tok) >= VG_EVENT_NAME_MAX)
			return fail(r, "event name '%s' is too long", tok);
		snprintf(out->names[out->n++], VG_EVENT_NAME_MAX, "%s", tok);
	}
	if (out->n == 0)
		return fail(r, "'events:' names no event");
	return 0;
}

/* Up to n counts from s (trailing ones may be missing: zero); more than n is an error. */
static int
parse_counts(struct reader *r, const char *s, unsigned n, uint64_t *v)
{
	unsigned i = 0;

	memset(v, 0, n * sizeof(*v));
	while (*s) {
		char *end;
		unsigned long long x;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (!isdigit((unsigned char)*s))
			return fail(r, "'%s' is not a count", s);
		if (i == n)
			return fail(r, "more counts than the %u events", n);
		errno = 0;
		x = strtoull(s, &end, 10);
		if (errno || (*end && *end != ' ' && *end != '\t'))
			return fail(r, "'%s' is not a count", s);
		v[i++] = x;
		s = end;
	}
	return 0;
}

/* A cost line: a position (digits, or +n, -n, * in callgrind's compressed form), then the
 * counts into v. It must follow the events line and a function. */
static int
cost_line(struct reader *r, const char *s, bool have_events, bool in_fn, unsigned n, uint64_t *v)
{
	const char *p = s + 1;

	if (!have_events)
		return fail(r, "cost line before 'events:'");
	if (!in_fn)
		return fail(r, "cost line outside a function");
	while (isdigit((unsigned char)*p))
		p++;
	return parse_counts(r, p, n, v);
}

static int
open_reader(struct reader *r, const char *path, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	r->errlen = errlen;
	r->f = fopen(path, "r");
	if (!r->f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
close_reader(struct reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->line);
}

int
vg_cachegrind_read(const char *path, vg_fn_filter keep, void *arg, struct vg_counts *out, char *err,
		   size_t errlen)
{
	struct reader r;
	uint64_t all[VG_EVENTS_MAX] = { 0 }, v[VG_EVENTS_MAX], summary[VG_EVENTS_MAX];
	bool have_events = false, have_summary = false, in_fn = false, kept = false;
	bool truncated = false;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (open_reader(&r, path, err, errlen))
		return -1;
	while (next_line(&r, &truncated)) {
		const char *s = r.line;

		if (have_summary) {
			if (*s)
				fail(&r, "text after the summary line");
			else
				continue;
			goto out;
		}
		if (starts(s, "events:")) {
			if (have_events) {
				fail(&r, "a second 'events:' line");
				goto out;
			}
			if (parse_events(&r, s + 7, out))
				goto out;
			have_events = true;
		} else if (starts(s, "fl=")) {
			in_fn = false;
		} else if (starts(s, "fn=")) {
			in_fn = true;
			kept = !keep || keep(NULL, s + 3, arg);
			out->functions += kept;
		} else if (starts(s, "summary:")) {
			if (!have_events) {
				fail(&r, "'summary:' before 'events:'");
				goto out;
			}
			if (parse_counts(&r, s + 8, out->n, summary))
				goto out;
			have_summary = true;
		} else if (isdigit((unsigned char)*s)) {
			if (cost_line(&r, s, have_events, in_fn, out->n, v))
				goto out;
			for (unsigned i = 0; i < out->n; i++) {
				all[i] += v[i];
				if (kept)
					out->v[i] += v[i];
			}
		} else if (*s && !starts(s, "desc:") && !starts(s, "cmd:") &&
			   !starts(s, "version:") && !starts(s, "creator:") &&
			   !starts(s, "positions:") && !starts(s, "ob=") && !starts(s, "#")) {
			fail(&r, "unexpected line '%.40s'", s);
			goto out;
		}
	}
	if (ferror(r.f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (truncated || !have_summary) {
		snprintf(err, errlen, "%s: truncated (no 'summary:' line at the end)", path);
		goto out;
	}
	for (unsigned i = 0; i < out->n; i++)
		if (all[i] != summary[i]) {
			snprintf(
				err, errlen,
				"%s: the %s counts add up to %llu, the summary says %llu: the file "
				"is damaged",
				path, out->names[i], (unsigned long long)all[i],
				(unsigned long long)summary[i]);
			goto out;
		}
	if (keep && out->functions == 0) {
		snprintf(err, errlen, "%s: none of the functions asked for has a record", path);
		goto out;
	}
	rc = 0;
out:
	close_reader(&r);
	return rc;
}

/* Callgrind's compressed names: whether function id was kept, and object id's name. */
struct name_ids {
	bool *kept;
	size_t cap;
	char **objects;
	size_t objects_cap;
};

static void
name_ids_free(struct name_ids *ids)
{
	for (size_t i = 0; i < ids->objects_cap; i++)
		free(ids->objects[i]);
	free(ids->objects);
	free(ids->kept);
}

/* "(id)" at s: the id into *id and the text after ") " (or "" for none) into *rest. A name
 * without "(id)" gives *id -1 and rest s. */
static int
compressed_id(struct reader *r, const char *s, long *id, const char **rest)
{
	char *end;
	unsigned long v;

	if (*s != '(') {
		*id = -1;
		*rest = s;
		return 0;
	}
	errno = 0;
	v = strtoul(s + 1, &end, 10);
	if (errno || end == s + 1 || *end != ')' || v > 100000000)
		return fail(r, "bad compressed name '%.40s'", s);
	*id = (long)v;
	end++;
	*rest = *end == ' ' ? end + 1 : "";
	return 0;
}

static void
grow(void **a, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 256;

	if (need < *cap)
		return;
	while (n <= need)
		n *= 2;
	*a = xrealloc(*a, n * elem);
	memset((char *)*a + *cap * elem, 0, (n - *cap) * elem);
	*cap = n;
}

/* "(id) name", "(id)" or "name" after ob= or cob=: the object's name into *object (NULL for an
 * id never defined). */
static int
ob_record(struct reader *r, const char *s, struct name_ids *ids, char *buf, size_t len,
	  const char **object)
{
	const char *rest;
	long id;

	if (compressed_id(r, s, &id, &rest))
		return -1;
	if (id < 0) {
		snprintf(buf, len, "%s", s);
		*object = buf;
		return 0;
	}
	grow((void **)&ids->objects, &ids->objects_cap, (size_t)id, sizeof(*ids->objects));
	if (*rest) {
		free(ids->objects[id]);
		ids->objects[id] = xstrdup(rest);
	}
	*object = ids->objects[id];
	return 0;
}

/* "(id) name", "(id)" or "name" after fn= or cfn=: sets *kept for the function named, in
 * object. A name is defined once, on its first fn= or cfn=. */
static int
fn_record(struct reader *r, const char *s, const char *object, struct name_ids *ids,
	  vg_fn_filter keep, void *arg, bool *kept)
{
	const char *rest;
	long id;

	if (compressed_id(r, s, &id, &rest))
		return -1;
	if (id < 0) {
		*kept = !keep || keep(object, s, arg);
		return 0;
	}
	grow((void **)&ids->kept, &ids->cap, (size_t)id, sizeof(*ids->kept));
	if (*rest)
		ids->kept[id] = !keep || keep(object, rest, arg);
	*kept = ids->kept[id];
	return 0;
}

/* Where a callgrind.out read stands: the objects and functions named so far, the costs summed
 * over every function and over those kept. */
struct cg_parse {
	struct reader r;
	struct name_ids ids;
	char ob_buf[4096], cob_buf[4096];
	const char *object, *callee_object;
	uint64_t all[VG_EVENTS_MAX], tot[VG_EVENTS_MAX];
	bool have_events, have_totals, in_fn, kept, after_calls;
	char found_trigger[256];
	unsigned functions;
};

/* One line of the file into p and out; -1 (the reader's error set) on a bad one. */
static int
cg_line(struct cg_parse *p, const char *s, vg_fn_filter keep, void *arg, struct vg_counts *out)
{
	uint64_t v[VG_EVENTS_MAX];

	if (starts(s, "events:")) {
		if (parse_events(&p->r, s + 7, out))
			return -1;
		p->have_events = true;
	} else if (starts(s, "desc: Trigger:")) {
		const char *t = s + strlen("desc: Trigger:");

		while (*t == ' ')
			t++;
		snprintf(p->found_trigger, sizeof(p->found_trigger), "%s", t);
	} else if (starts(s, "totals:")) {
		if (!p->have_events) {
			fail(&p->r, "'totals:' before 'events:'");
			return -1;
		}
		if (parse_counts(&p->r, s + 7, out->n, p->tot))
			return -1;
		p->have_totals = true;
	} else if (starts(s, "ob=")) {
		return ob_record(&p->r, s + 3, &p->ids, p->ob_buf, sizeof(p->ob_buf), &p->object);
	} else if (starts(s, "cob=")) {
		/* the object of the next cfn= alone */
		return ob_record(&p->r, s + 4, &p->ids, p->cob_buf, sizeof(p->cob_buf),
				 &p->callee_object);
	} else if (starts(s, "fn=")) {
		if (fn_record(&p->r, s + 3, p->object, &p->ids, keep, arg, &p->kept))
			return -1;
		p->in_fn = true;
		p->functions += p->kept;
	} else if (starts(s, "cfn=")) {
		bool callee; /* defines a compressed name; the current function stays */

		if (fn_record(&p->r, s + 4, p->callee_object ? p->callee_object : p->object,
			      &p->ids, keep, arg, &callee))
			return -1;
		p->callee_object = NULL;
	} else if (starts(s, "calls=")) {
		p->after_calls = true;
	} else if (isdigit((unsigned char)*s) || *s == '+' || *s == '-' || *s == '*') {
		if (cost_line(&p->r, s, p->have_events, p->in_fn, out->n, v))
			return -1;
		if (p->after_calls) {
			/* the call's inclusive cost: the callee's, counted there */
			p->after_calls = false;
			return 0;
		}
		for (unsigned i = 0; i < out->n; i++) {
			p->all[i] += v[i];
			if (p->kept)
				out->v[i] += v[i];
		}
	}
	/* Other lines (desc:, fl=, fi=, fe=, cfi=, jump=, ...) name files and jumps; none
	 * carries the current function's cost. */
	return 0;
}

/* The whole file read: refuses a file without events or totals, of another trigger, or whose
 * functions' costs do not add up to its totals. */
static int
cg_check(const struct cg_parse *p, const char *path, const char *trigger, bool truncated,
	 const struct vg_counts *out, char *err, size_t errlen)
{
	if (ferror(p->r.f)) {
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	if (!p->have_events) {
		snprintf(err, errlen, "%s: no 'events:' line: not a callgrind.out file", path);
		return -1;
	}
	if (truncated || !p->have_totals) {
		snprintf(err, errlen, "%s: truncated (no 'totals:' line)", path);
		return -1;
	}
	if (trigger && strcmp(p->found_trigger, trigger) != 0) {
		snprintf(err, errlen, "%s: a dump of '%s', not of '%s'", path,
			 p->found_trigger[0] ? p->found_trigger : "(no trigger)", trigger);
		return -1;
	}
	for (unsigned i = 0; i < out->n; i++)
		if (p->all[i] != p->tot[i]) {
			snprintf(err, errlen,
				 "%s: the functions' %s costs add up to %llu, the totals say %llu: "
				 "the file is damaged",
				 path, out->names[i], (unsigned long long)p->all[i],
				 (unsigned long long)p->tot[i]);
			return -1;
		}
	return 0;
}

int
vg_callgrind_read(const char *path, const char *trigger, vg_fn_filter keep, void *arg,
		  struct vg_counts *out, struct vg_counts *totals, char *err, size_t errlen)
{
	struct cg_parse *p = xzalloc(sizeof(*p));
	bool truncated = false;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	p->ids = (struct name_ids){ NULL, 0, NULL, 0 };
	if (open_reader(&p->r, path, err, errlen)) {
		free(p);
		return -1;
	}
	while (next_line(&p->r, &truncated))
		if (cg_line(p, p->r.line, keep, arg, out))
			goto out;
	if (cg_check(p, path, trigger, truncated, out, err, errlen))
		goto out;
	if (!keep)
		memcpy(out->v, p->tot, sizeof(out->v));
	else if (p->functions == 0) {
		snprintf(err, errlen, "%s: none of the functions asked for has a record", path);
		goto out;
	}
	out->functions = p->functions;
	if (totals) {
		*totals = *out;
		memcpy(totals->v, p->tot, sizeof(totals->v));
	}
	rc = 0;
out:
	name_ids_free(&p->ids);
	close_reader(&p->r);
	free(p);
	return rc;
}
