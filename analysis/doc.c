#include "analysis/doc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

struct buf {
	char *s;
	size_t n, cap;
};

struct doc {
	char dir[1024];
	struct buf md, html;
	bool in_list;
	char err[1300];
};

static void
put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static char *
vfmt(const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *s;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	s = xzalloc((size_t)(n > 0 ? n : 0) + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* Inline text to HTML: `code`, **bold**, the rest escaped. */
static void
inline_html(struct buf *b, const char *s)
{
	bool code = false, bold = false;

	for (; *s; s++) {
		if (*s == '`') {
			puts_(b, code ? "</code>" : "<code>");
			code = !code;
		} else if (!code && s[0] == '*' && s[1] == '*') {
			puts_(b, bold ? "</strong>" : "<strong>");
			bold = !bold;
			s++;
		} else if (*s == '<') {
			puts_(b, "&lt;");
		} else if (*s == '>') {
			puts_(b, "&gt;");
		} else if (*s == '&') {
			puts_(b, "&amp;");
		} else if (*s == '"') {
			puts_(b, "&quot;");
		} else {
			put(b, s, 1);
		}
	}
	if (code)
		puts_(b, "</code>");
	if (bold)
		puts_(b, "</strong>");
}

static void
end_list(struct doc *d)
{
	if (d->in_list) {
		puts_(&d->html, "</ul>\n");
		puts_(&d->md, "\n");
		d->in_list = false;
	}
}

struct doc *
doc_create(const char *dir, const char *title)
{
	struct doc *d = xzalloc(sizeof(*d));

	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	puts_(&d->md, "# ");
	puts_(&d->md, title);
	puts_(&d->md, "\n\n");
	puts_(&d->html,
	      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	inline_html(&d->html, title);
	puts_(&d->html,
	      "</title>\n<style>\n"
	      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
	      "line-height:1.45;color:#222}\n"
	      "table{border-collapse:collapse;margin:1em 0;font-size:0.92em}\n"
	      "th,td{border:1px solid #bbb;padding:0.25em 0.6em;text-align:right}\n"
	      "th{background:#eee}td:first-child,th:first-child{text-align:left}\n"
	      "code{background:#f3f3f3;padding:0 0.2em}pre{background:#f6f6f6;padding:0.8em;"
	      "overflow-x:auto}\n"
	      "figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}\n"
	      "figcaption{font-size:0.9em;color:#555}\n</style>\n</head>\n<body>\n<h1>");
	inline_html(&d->html, title);
	puts_(&d->html, "</h1>\n");
	return d;
}

void
doc_destroy(struct doc *d)
{
	if (!d)
		return;
	free(d->md.s);
	free(d->html.s);
	free(d);
}

void
doc_heading(struct doc *d, int level, const char *fmt, ...)
{
	va_list ap;
	char *s, tag[8];

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	end_list(d);
	level = level < 2 ? 2 : level > 4 ? 4 : level;
	puts_(&d->md, level == 2 ? "## " : level == 3 ? "### " : "#### ");
	puts_(&d->md, s);
	puts_(&d->md, "\n\n");
	snprintf(tag, sizeof(tag), "<h%d>", level);
	puts_(&d->html, tag);
	inline_html(&d->html, s);
	snprintf(tag, sizeof(tag), "</h%d>\n", level);
	puts_(&d->html, tag);
	free(s);
}

void
doc_para(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	end_list(d);
	puts_(&d->md, s);
	puts_(&d->md, "\n\n");
	puts_(&d->html, "<p>");
	inline_html(&d->html, s);
	puts_(&d->html, "</p>\n");
	free(s);
}

void
doc_bullet(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	if (!d->in_list) {
		puts_(&d->html, "<ul>\n");
		d->in_list = true;
	}
	puts_(&d->md, "- ");
	puts_(&d->md, s);
	puts_(&d->md, "\n");
	puts_(&d->html, "<li>");
	inline_html(&d->html, s);
	puts_(&d->html, "</li>\n");
	free(s);
}

/* Cells of a '|'-separated line, as a Markdown row and an HTML row with tag th or td. */
static void
cells(struct doc *d, const char *line, const char *tag)
{
	const char *s = line;

	puts_(&d->md, "|");
	puts_(&d->html, "<tr>");
	for (;;) {
		size_t n = strcspn(s, "|");
		char *cell = xzalloc(n + 1), open[8], close[8];

		memcpy(cell, s, n);
		puts_(&d->md, " ");
		puts_(&d->md, cell);
		puts_(&d->md, " |");
		snprintf(open, sizeof(open), "<%s>", tag);
		snprintf(close, sizeof(close), "</%s>", tag);
		puts_(&d->html, open);
		inline_html(&d->html, cell);
		puts_(&d->html, close);
		free(cell);
		if (!s[n])
			break;
		s += n + 1;
	}
	puts_(&d->md, "\n");
	puts_(&d->html, "</tr>\n");
}

void
doc_table(struct doc *d, const char *header)
{
	size_t ncols = 1;

	end_list(d);
	for (const char *s = header; *s; s++)
		ncols += *s == '|';
	puts_(&d->html, "<table>\n");
	cells(d, header, "th");
	puts_(&d->md, "|");
	for (size_t i = 0; i < ncols; i++)
		puts_(&d->md, "---|");
	puts_(&d->md, "\n");
}

void
doc_row(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	cells(d, s, "td");
	free(s);
}

void
doc_table_end(struct doc *d)
{
	puts_(&d->md, "\n");
	puts_(&d->html, "</table>\n");
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
base64(struct buf *b, const unsigned char *p, size_t n)
{
	char q[4];

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		put(b, q, 4);
	}
}

void
doc_image(struct doc *d, const char *path, const char *alt, const char *caption)
{
	char full[1200], why[1300] = "";
	FILE *f;
	unsigned char *data = NULL;
	long n;
	int fd;

	end_list(d);
	puts_(&d->md, "![");
	puts_(&d->md, alt);
	puts_(&d->md, "](");
	puts_(&d->md, path);
	puts_(&d->md, ")\n\n*");
	puts_(&d->md, caption);
	puts_(&d->md, "*\n\n");
	snprintf(full, sizeof(full), "%s/%s", d->dir, path);
	fd = open_regular_read(full, why, sizeof(why));
	f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f && fd >= 0)
		close(fd);
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(data = xzalloc((size_t)n)) || fread(data, 1, (size_t)n, f) != (size_t)n) {
		if (!d->err[0] && why[0])
			snprintf(d->err, sizeof(d->err), "cannot read the image %s", why);
		else if (!d->err[0])
			snprintf(d->err, sizeof(d->err), "cannot read the image %s", full);
		if (f)
			fclose(f);
		free(data);
		return;
	}
	fclose(f);
	puts_(&d->html, "<figure><img alt=\"");
	inline_html(&d->html, alt);
	puts_(&d->html, "\" src=\"data:image/png;base64,");
	base64(&d->html, data, (size_t)n);
	puts_(&d->html, "\"><figcaption>");
	inline_html(&d->html, caption);
	puts_(&d->html, "</figcaption></figure>\n");
	free(data);
}

static int
write_file(const char *path, const struct buf *b, char *err, size_t errlen)
{
	return write_file_whole(path, b->s, b->n, err, errlen) ? -1 : 0;
}

int
doc_write(struct doc *d, const char *name, char *err, size_t errlen)
{
	char path[1200];

	if (d->err[0]) {
		snprintf(err, errlen, "%s", d->err);
		return -1;
	}
	end_list(d);
	/* The check a headless browser reads back: every image decoded, no script error. */
	puts_(&d->html, "<script>\n"
			"window.onerror=function(m){document.body.dataset.check='error: '+m;};\n"
			"window.addEventListener('load',function(){\n"
			"  var bad=[].filter.call(document.images,function(i){"
			"return !i.complete||i.naturalWidth===0;});\n"
			"  if(!document.body.dataset.check)document.body.dataset.check="
			"bad.length?'error: '+bad.length+' image(s) did not load':'ok';\n"
			"});\n"
			"</script>\n</body>\n</html>\n");
	snprintf(path, sizeof(path), "%s/%s.md", d->dir, name);
	if (write_file(path, &d->md, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/%s.html", d->dir, name);
	return write_file(path, &d->html, err, errlen);
}
