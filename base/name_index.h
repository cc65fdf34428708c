#pragma once

/*
 * A hash index over names that their owner keeps in a table of its own (phases, declared
 * names): find a name's index in O(1) on average, however many there are. The index stores
 * indices only; it asks the owner for the name at an index when it compares.
 */

#include <stdint.h>

struct name_index {
	uint32_t *slots; /* index + 1, 0 for an empty slot */
	uint32_t cap;    /* a power of two, or 0 before the first add */
	uint32_t n;
	const char *(*name_at)(const void *owner, uint32_t i);
	const void *owner;
};

/* An empty index over owner's names. Free with name_index_finish(). */
void name_index_init(struct name_index *x, const void *owner,
		     const char *(*name_at)(const void *owner, uint32_t i));
void name_index_finish(struct name_index *x);

/* The index of name, or -1 when it was never added. */
int64_t name_index_find(const struct name_index *x, const char *name);

/* Records that the owner's entry i holds name (not already present). */
void name_index_add(struct name_index *x, const char *name, uint32_t i);
