#pragma once

/*
 * Internal to traces/: the memsim writer's repeat finder (traces/mtrace.h, repeat records).
 * It takes the writer's access records one by one and writes them through put(), folding a
 * run of periods of one body into a repeat record where that saves bytes and decoding.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/mtrace.h"

/* One access record as the writer encoded it, and what a repeat would give again. */
struct mtrace_rec {
	uint64_t addr;
	uint64_t delta; /* from the slot's address before it */
	uint64_t key;   /* size, kind, count and slot */
	uint8_t len;    /* bytes */
	uint8_t bytes[31];
};

/* Writes n bytes holding records records (a repeat counts its header and its body's). */
typedef void (*mtrace_put_fn)(void *ctx, const uint8_t *bytes, size_t n, uint64_t records);

#define MTRACE_FOLD_HISTORY (2 * MTRACE_REPEAT_MAX_RECORDS)

struct mtrace_fold {
	mtrace_put_fn put;
	void *ctx;
	/* Searching: the last records, hist[i % MTRACE_FOLD_HISTORY] for i in [begin, end);
	 * those from unwritten on are not written yet. match[L]: how many records at the end
	 * equal the record L before them. */
	struct mtrace_rec hist[MTRACE_FOLD_HISTORY];
	uint64_t begin, end, unwritten;
	unsigned match[MTRACE_REPEAT_MAX_RECORDS + 1];
	/* Repeating (period > 0): body, the periods matched so far (the body counts), pos
	 * records into the next; held: matched records not covered by a repeat worth writing
	 * yet (committed: the repeat is worth it; held then keeps the period under way). */
	unsigned period, pos, nheld;
	uint64_t periods;
	bool committed;
	struct mtrace_rec body[MTRACE_REPEAT_MAX_RECORDS];
	uint64_t last_addr[MTRACE_REPEAT_MAX_RECORDS]; /* each body record's, last period */
	struct mtrace_rec held[MTRACE_FOLD_HISTORY];
};

/* Appends v as a LEB128 varint at b + *n (at most 10 bytes), advancing *n. */
static inline void
mtrace_put_varint(uint8_t *b, size_t *n, uint64_t v)
{
	while (v >= 0x80) {
		b[(*n)++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[(*n)++] = (uint8_t)v;
}

void mtrace_fold_init(struct mtrace_fold *f, mtrace_put_fn put, void *ctx);
/* Takes the next access record. */
void mtrace_fold_push(struct mtrace_fold *f, const struct mtrace_rec *r);
/* Writes everything taken so far: before a control record and at the end. */
void mtrace_fold_flush(struct mtrace_fold *f);
