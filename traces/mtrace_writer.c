/* The memsim trace writer (traces/mtrace.h); its reader is mtrace.c. */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "traces/mtrace.h"
#include "traces/mtrace_fold.h"
#include "traces/reader_impl.h"

#define WRITER_BUF_BYTES (1u << 20)
#define FAR_DELTA (UINT64_C(1) << 16) /* beyond this, a slot is reused by recency */

/* ---- writer ---- */

struct decl {
	bool is_array;
	char name[32];
	uint64_t base, bytes;
	enum trace_space space;
};

struct mtrace_writer {
	int fd;
	bool owns_fd; /* out is open: the file, written whole */
	struct whole_file out;
	int error;
	char *path;
	char *command;
	uint8_t *buf;
	size_t len;
	bool header_done;
	struct decl *decls; /* declared before the header was written */
	unsigned ndecls, decls_cap;
	unsigned narrays, nphases;
	uint64_t slot_addr[MTRACE_SLOTS];
	uint32_t slot_size[MTRACE_SLOTS];
	uint64_t slot_used[MTRACE_SLOTS];
	uint64_t tick;
	bool have_pending;
	struct cache_ref pending;
	uint64_t records, accesses;
	struct mtrace_fold fold; /* access records go through it */
};

static void
flush_buf(struct mtrace_writer *w)
{
	size_t off = 0;

	while (off < w->len && !w->error) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->error = errno;
		} else {
			off += (size_t)n;
		}
	}
	w->len = 0;
}

static inline void
reserve(struct mtrace_writer *w, size_t n)
{
	if (w->len + n > WRITER_BUF_BYTES)
		flush_buf(w);
}

static inline void
put_u8(struct mtrace_writer *w, uint8_t v)
{
	w->buf[w->len++] = v;
}

static inline void
put_varint(struct mtrace_writer *w, uint64_t v)
{
	mtrace_put_varint(w->buf, &w->len, v);
}

static void
put_str(struct mtrace_writer *w, const char *s)
{
	size_t n = strlen(s);

	/* Strings are short (names, a command line); cut anything absurd. */
	if (n > 65536)
		n = 65536;
	reserve(w, n + 10);
	put_varint(w, n);
	if (n + w->len > WRITER_BUF_BYTES) {
		flush_buf(w);
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void
put_decl_body(struct mtrace_writer *w, const struct decl *d)
{
	put_str(w, d->name);
	if (d->is_array) {
		reserve(w, 32);
		put_varint(w, d->base);
		put_varint(w, d->bytes);
		put_u8(w, (uint8_t)d->space);
	}
}

static void
write_header(struct mtrace_writer *w)
{
	uint32_t v = MTRACE_VERSION;
	unsigned na = 0, np = 0;

	reserve(w, 16);
	memcpy(w->buf + w->len, MTRACE_MAGIC, 8);
	w->len += 8;
	for (int i = 0; i < 4; i++)
		put_u8(w, (uint8_t)(v >> (8 * i)));
	put_str(w, MEMSIM_VERSION);
	put_str(w, w->command ? w->command : "");
	for (unsigned i = 0; i < w->ndecls; i++)
		na += w->decls[i].is_array;
	np = w->ndecls - na;
	reserve(w, 10);
	put_varint(w, na);
	for (unsigned i = 0; i < w->ndecls; i++)
		if (w->decls[i].is_array)
			put_decl_body(w, &w->decls[i]);
	reserve(w, 10);
	put_varint(w, np);
	for (unsigned i = 0; i < w->ndecls; i++)
		if (!w->decls[i].is_array)
			put_decl_body(w, &w->decls[i]);
	free(w->decls);
	w->decls = NULL;
	w->ndecls = 0;
	w->header_done = true;
}

/* Writes what the repeat finder hands on. */
static void
put_records(void *ctx, const uint8_t *bytes, size_t n, uint64_t records)
{
	struct mtrace_writer *w = ctx;

	reserve(w, n);
	memcpy(w->buf + w->len, bytes, n);
	w->len += n;
	w->records += records;
}

struct mtrace_writer *
mtrace_writer_open(const char *path, const char *command, char *err, size_t errlen)
{
	struct mtrace_writer *w = xzalloc(sizeof(*w));

	if (strcmp(path, "-") == 0) {
		w->fd = STDOUT_FILENO;
	} else {
		int rc = whole_file_open(&w->out, path);

		if (rc) {
			snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
			free(w);
			return NULL;
		}
		w->fd = w->out.fd;
		w->owns_fd = true;
	}
	w->path = xstrdup(path);
	w->command = xstrdup(command);
	w->buf = xzalloc(WRITER_BUF_BYTES);
	mtrace_fold_init(&w->fold, put_records, w);
	for (int i = 0; i < MTRACE_SLOTS; i++)
		w->slot_size[i] = 4;
	return w;
}

static void
rec_varint(struct mtrace_rec *r, uint64_t v)
{
	size_t n = r->len;

	mtrace_put_varint(r->bytes, &n, v);
	r->len = (uint8_t)n;
}

/* The slot for an access that no short record can take: the nearest, or, far from all of
 * them, the least recently used. */
static int
far_slot(const struct mtrace_writer *w, uint64_t addr)
{
	int best = 0, lru = 0;
	uint64_t best_dist = UINT64_MAX;

	for (int s = 0; s < MTRACE_SLOTS; s++) {
		int64_t d = (int64_t)(addr - w->slot_addr[s]);
		uint64_t dist = d < 0 ? (uint64_t)-d : (uint64_t)d;

		if (dist < best_dist) {
			best_dist = dist;
			best = s;
		}
		if (w->slot_used[s] < w->slot_used[lru])
			lru = s;
	}
	return best_dist > FAR_DELTA ? lru : best;
}

/* Encodes e against the slots into r, updating them. */
static void
encode(struct mtrace_writer *w, const struct cache_ref *e, struct mtrace_rec *r)
{
	int s;
	int64_t delta;
	uint64_t zig;
	bool size_field, count_field;

	r->len = 0;
	r->addr = e->addr;
	w->tick++;
	for (s = 0; s < MTRACE_SLOTS; s++) {
		int64_t d = (int64_t)(e->addr - w->slot_addr[s]);

		if (e->kind <= TRACE_EV_STORE && e->count == 1 && e->size == w->slot_size[s] &&
		    d % (int64_t)e->size == 0 && d / (int64_t)e->size >= -8 &&
		    d / (int64_t)e->size <= 7) {
			r->bytes[r->len++] =
				(uint8_t)((e->kind << 6) | (s << 4) | (d / (int64_t)e->size + 8));
			goto done;
		}
	}
	s = far_slot(w, e->addr);
	delta = (int64_t)(e->addr - w->slot_addr[s]);
	zig = ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63);
	size_field = e->size != w->slot_size[s];
	count_field = e->count != 1;
	r->bytes[r->len++] = (uint8_t)(0x80 | (e->kind << 5) | (s << 3) | (size_field << 2) |
				       (count_field << 1));
	rec_varint(r, zig);
	if (size_field)
		rec_varint(r, e->size);
	if (count_field)
		rec_varint(r, e->count);
done:
	r->delta = e->addr - w->slot_addr[s];
	r->key = (uint64_t)e->size | (uint64_t)e->kind << 32 | (uint64_t)e->count << 40 |
		 (uint64_t)s << 56;
	w->slot_addr[s] = e->addr;
	w->slot_size[s] = e->size;
	w->slot_used[s] = w->tick;
}

static void
emit(struct mtrace_writer *w, const struct cache_ref *e)
{
	struct mtrace_rec r;

	if (!w->header_done)
		write_header(w);
	encode(w, e, &r);
	mtrace_fold_push(&w->fold, &r);
}

static void
flush_pending(struct mtrace_writer *w)
{
	if (w->have_pending) {
		emit(w, &w->pending);
		w->have_pending = false;
	}
}

/* Writes every access taken so far: before a control record and at the end. */
static void
flush_records(struct mtrace_writer *w)
{
	flush_pending(w);
	mtrace_fold_flush(&w->fold);
}

void
mtrace_writer_access(struct mtrace_writer *w, enum trace_event_kind kind, uint64_t addr,
		     uint32_t size, uint32_t count)
{
	struct cache_ref *p = &w->pending;

	if (size > TRACE_MAX_ACCESS_BYTES) {
		/* In pieces readers accept, each with the count: the model repeats an access line
		 * by line (cache_access()), so the lines and their repeats come in the same order.
		 */
		for (uint64_t off = 0; off < size; off += TRACE_MAX_ACCESS_BYTES)
			mtrace_writer_access(w, kind, addr + off,
					     size - off < TRACE_MAX_ACCESS_BYTES
						     ? (uint32_t)(size - off)
						     : TRACE_MAX_ACCESS_BYTES,
					     count);
		return;
	}
	w->accesses += count;
	if (w->have_pending && p->kind == kind && p->addr == addr && p->size == size &&
	    p->count + count <= MAX_COUNT) {
		p->count = (uint16_t)(p->count + count);
		return;
	}
	flush_pending(w);
	while (count > MAX_COUNT) {
		struct cache_ref e = { addr, size, (uint16_t)kind, (uint16_t)MAX_COUNT };

		emit(w, &e);
		count -= MAX_COUNT;
	}
	p->addr = addr;
	p->size = size;
	p->kind = (uint16_t)kind;
	p->count = (uint16_t)count;
	w->have_pending = true;
}

void
mtrace_writer_ref(struct mtrace_writer *w, const struct cache_ref *e)
{
	flush_pending(w);
	w->accesses += e->count;
	emit(w, e);
}

static int
add_decl(struct mtrace_writer *w, const struct decl *d)
{
	flush_records(w);
	if (!w->header_done) {
		if (w->ndecls == w->decls_cap) {
			w->decls_cap = w->decls_cap ? w->decls_cap * 2 : 16;
			w->decls = xrealloc(w->decls, w->decls_cap * sizeof(*w->decls));
		}
		w->decls[w->ndecls++] = *d;
	} else {
		reserve(w, 8);
		put_u8(w, (uint8_t)(0xe0 |
				    (d->is_array ? MTRACE_CTRL_ARRAY : MTRACE_CTRL_DECLARE_PHASE)));
		put_decl_body(w, d);
		w->records++;
	}
	return d->is_array ? (int)w->narrays++ : (int)w->nphases++;
}

int
mtrace_writer_array(struct mtrace_writer *w, const char *name, uint64_t base, uint64_t bytes,
		    enum trace_space space)
{
	struct decl d = { .is_array = true, .base = base, .bytes = bytes, .space = space };

	snprintf(d.name, sizeof(d.name), "%s", name);
	return add_decl(w, &d);
}

int
mtrace_writer_phase(struct mtrace_writer *w, const char *name)
{
	if (w->nphases == CACHE_MAX_PHASES)
		return -ENOSPC; /* readers refuse more */
	struct decl d = { .is_array = false };

	snprintf(d.name, sizeof(d.name), "%s", name);
	return add_decl(w, &d);
}

void
mtrace_writer_set_phase(struct mtrace_writer *w, int phase)
{
	flush_records(w);
	if (!w->header_done)
		write_header(w);
	reserve(w, 16);
	put_u8(w, 0xe0 | MTRACE_CTRL_PHASE);
	put_varint(w, (uint64_t)phase);
	w->records++;
}

static int
sink_array(void *w, const char *name, uint64_t base, uint64_t bytes, enum trace_space space)
{
	return mtrace_writer_array(w, name, base, bytes, space);
}

static int
sink_phase(void *w, const char *name)
{
	return mtrace_writer_phase(w, name);
}

static void
sink_set_phase(void *w, int phase)
{
	mtrace_writer_set_phase(w, phase);
}

static void
sink_access(void *w, enum trace_event_kind kind, uint64_t addr, uint32_t size, uint32_t count)
{
	mtrace_writer_access(w, kind, addr, size, count);
}

struct trace_sink
mtrace_writer_sink(struct mtrace_writer *w)
{
	return (struct trace_sink){ w, sink_array, sink_phase, sink_set_phase, sink_access };
}

static void
writer_free(struct mtrace_writer *w)
{
	free(w->decls);
	free(w->buf);
	free(w->path);
	free(w->command);
	free(w);
}

/* The note a message ends with where a recording that did not complete was removed: the
 * file at the path, if any, is the one that was there before. */
static const char *
removed_note(bool removed)
{
	return removed ? " (the incomplete recording was removed)" : "";
}

int
mtrace_writer_close(struct mtrace_writer *w, char *err, size_t errlen)
{
	char why[4300];
	int rc = 0;

	flush_records(w);
	if (!w->header_done)
		write_header(w);
	reserve(w, 32);
	put_u8(w, 0xe0 | MTRACE_CTRL_END);
	put_varint(w, w->records + 1); /* the end record counts itself */
	put_varint(w, w->accesses);
	flush_buf(w);
	if (w->error) {
		snprintf(err, errlen, "writing %s: %s%s", w->path, strerror(w->error),
			 removed_note(w->owns_fd && whole_file_discard(&w->out)));
		rc = -w->error;
	} else if (w->owns_fd && (rc = whole_file_commit(&w->out, why, sizeof(why)))) {
		snprintf(err, errlen, "writing %s: %s", w->path, strerror(-rc));
	}
	writer_free(w);
	return rc;
}

bool
mtrace_writer_discard(struct mtrace_writer *w)
{
	bool removed = false;

	/* What reached a file written in place stays, without an end record: readers see it cut
	 * short. */
	flush_records(w);
	if (!w->header_done)
		write_header(w);
	flush_buf(w);
	if (w->owns_fd)
		removed = whole_file_discard(&w->out);
	writer_free(w);
	return removed;
}
