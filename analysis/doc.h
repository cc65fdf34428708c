#pragma once

/*
 * A small document written once and rendered twice: Markdown (report.md) and a self-contained
 * HTML page (report.html, images inlined as base64 data URIs). Blocks are headings,
 * paragraphs, bullet items, tables, images and preformatted text. Inline text may use `code`
 * spans and **bold**; everything else is escaped for HTML.
 */

#include <stdbool.h>
#include <stddef.h>

struct doc;

/* A document to be written into dir (images are read from there). Free with doc_destroy(). */
struct doc *doc_create(const char *dir, const char *title);
void doc_destroy(struct doc *d);

/* Level 2 or 3 heading. */
void doc_heading(struct doc *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void doc_para(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_bullet(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A table: doc_table() with the header cells separated by '|', then doc_row() per row, the
 * same way; doc_table_end() closes it. */
void doc_table(struct doc *d, const char *header);
void doc_row(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_table_end(struct doc *d);

/* An image: path relative to the document's directory, alt text; caption below it. */
void doc_image(struct doc *d, const char *path, const char *alt, const char *caption);

/* Writes dir/name.md and dir/name.html. Returns 0, or -1 with a message in err. An image that
 * could not be read is an error (the HTML would show a hole). The HTML carries a small script
 * that marks <body data-check="ok"> once every image has decoded, or data-check="error: ..."
 * (for a headless browser test). */
int doc_write(struct doc *d, const char *name, char *err, size_t errlen);
