#include "base/name_index.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* FNV-1a: short names, no adversary that could not just declare fewer. */
static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

void
name_index_init(struct name_index *x, const void *owner,
		const char *(*name_at)(const void *owner, uint32_t i))
{
	memset(x, 0, sizeof(*x));
	x->owner = owner;
	x->name_at = name_at;
}

void
name_index_finish(struct name_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->cap = x->n = 0;
}

int64_t
name_index_find(const struct name_index *x, const char *name)
{
	if (!x->cap)
		return -1;
	for (uint32_t s = hash(name) & (x->cap - 1);; s = (s + 1) & (x->cap - 1)) {
		uint32_t v = x->slots[s];

		if (!v)
			return -1;
		if (strcmp(x->name_at(x->owner, v - 1), name) == 0)
			return v - 1;
	}
}

static void
put(uint32_t *slots, uint32_t cap, uint32_t h, uint32_t value)
{
	uint32_t s = h & (cap - 1);

	while (slots[s])
		s = (s + 1) & (cap - 1);
	slots[s] = value;
}

void
name_index_add(struct name_index *x, const char *name, uint32_t i)
{
	/* At most half full, so probes stay short and an empty slot always ends them. */
	if (2 * (x->n + 1) > x->cap) {
		uint32_t cap = x->cap ? 2 * x->cap : 16;
		uint32_t *slots = xzalloc(cap * sizeof(*slots));

		for (uint32_t s = 0; s < x->cap; s++)
			if (x->slots[s])
				put(slots, cap, hash(x->name_at(x->owner, x->slots[s] - 1)),
				    x->slots[s]);
		free(x->slots);
		x->slots = slots;
		x->cap = cap;
	}
	put(x->slots, x->cap, hash(name), i + 1);
	x->n++;
}
