/*
 * The progress line (base/progress.h). Notes: the line is rewritten in place with '\r' and
 * ended with the erase-to-end-of-line sequence, cut to the terminal's width less one so it
 * never wraps (a wrapped line cannot be rewritten); a terminal that reports no width counts
 * as 80 columns.
 */

#include "base/progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/util.h"

#define REDRAW_S 0.1

static struct {
	bool enabled, active, drawn;
	unsigned depth; /* tasks begun and not ended: only the outermost shows */
	char what[64];
	double t0, last_draw;
	/* the rate's start: when unit or total last changed, and the units done then */
	const char *unit;
	double total, rate_t0, rate_done0;
	double fraction, done; /* the last report, for progress_tick() */
} pr;

void
progress_enable(bool on)
{
	if (!on) {
		pr.depth = 1;
		progress_end();
	}
	pr.enabled = on;
}

bool
progress_enabled(void)
{
	return pr.enabled;
}

void
progress_begin(const char *what)
{
	if (!pr.enabled || pr.depth++ > 0)
		return;
	snprintf(pr.what, sizeof(pr.what), "%s", what);
	pr.active = true;
	pr.t0 = now_seconds();
	pr.last_draw = 0;
	pr.unit = NULL;
	pr.total = -1;
}

/* The terminal's columns, or 80 when it does not say (a width of 0, not a terminal). */
static unsigned
columns(void)
{
#ifdef TIOCGWINSZ
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
#endif
	return 80;
}

/* s seconds as "45s", "6m10s" or "2h05m". */
static void
duration(double s, char *buf, size_t len)
{
	long n = s < 0 ? 0 : (long)(s + 0.5);

	if (n < 60)
		snprintf(buf, len, "%lds", n);
	else if (n < 3600)
		snprintf(buf, len, "%ldm%02lds", n / 60, n % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", n / 3600, n / 60 % 60);
}

static void
draw(double now, double fraction, double done, double total, const char *unit)
{
	char line[512], left[32];
	double el = now - pr.t0, rel = now - pr.rate_t0;
	size_t n, width = columns() - 1;
	int k;

	k = snprintf(line, sizeof(line), "memsim: %s:", pr.what);
	if (fraction >= 0)
		k += snprintf(line + k, sizeof(line) - (size_t)k, " %.1f%%,", 100 * fraction);
	if (total > 0)
		k += snprintf(line + k, sizeof(line) - (size_t)k, " %.0f/%.0f %s", done, total,
			      unit);
	else
		k += snprintf(line + k, sizeof(line) - (size_t)k, " %.0f %s", done, unit);
	if (rel > 0 && done > pr.rate_done0) {
		k += snprintf(line + k, sizeof(line) - (size_t)k, ", %.3g/s",
			      (done - pr.rate_done0) / rel);
	} else {
		/* nothing done yet (a tool running): the time so far says it is alive */
		duration(el, left, sizeof(left));
		k += snprintf(line + k, sizeof(line) - (size_t)k, ", %s so far", left);
	}
	if (fraction > 0 && fraction < 1) {
		duration(el / fraction * (1 - fraction), left, sizeof(left));
		snprintf(line + k, sizeof(line) - (size_t)k, ", about %s left", left);
	}
	n = strlen(line);
	if (n > width)
		n = width;
	fprintf(stderr, "\r%.*s\033[K", (int)n, line);
	fflush(stderr);
	pr.drawn = true;
	pr.last_draw = now;
}

void
progress_report(double fraction, double done, double total, const char *unit)
{
	double now;

	if (!pr.active || pr.depth > 1)
		return;
	pr.fraction = fraction;
	pr.done = done;
	now = now_seconds();
	/* a new phase counts from its start */
	if (unit != pr.unit || total != pr.total || done < pr.rate_done0) {
		pr.unit = unit;
		pr.total = total;
		pr.rate_t0 = now;
		pr.rate_done0 = done;
	}
	if (now - pr.t0 < PROGRESS_DELAY_S || now - pr.last_draw < REDRAW_S)
		return;
	draw(now, fraction > 1 ? 1 : fraction, done, total, unit);
}

void
progress_tick(void)
{
	if (pr.active && pr.depth == 1 && pr.unit)
		progress_report(pr.fraction, pr.done, pr.total, pr.unit);
}

void
progress_end(void)
{
	if (pr.depth > 1) {
		pr.depth--;
		return;
	}
	pr.depth = 0;
	if (pr.drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pr.active = false;
	pr.drawn = false;
}
