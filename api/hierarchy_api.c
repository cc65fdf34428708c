/*
 * memsim/hierarchy.h's hierarchy itself (its counters: api/stats_api.c), and memsim/memsim.h.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMSIM_NO_TR_MACROS
#pragma GCC visibility push(default)
#include "memsim/memsim.h"
#pragma GCC visibility pop

#include "api/api.h"
#include "base/util.h"

const char *
memsim_version(void)
{
	return MEMSIM_VERSION;
}

struct memsim_hierarchy *
memsim_hierarchy_create(const char *spec, char *err, size_t errlen)
{
	struct memsim_hierarchy *h;
	char scratch[256];

	api_err_buffer(&err, &errlen, scratch, sizeof(scratch));
	if (!spec) {
		snprintf(err, errlen, "no cache spec given");
		return NULL;
	}
	h = xzalloc(sizeof(*h));
	if (spec_parse(spec, &h->spec, err, errlen)) {
		free(h);
		return NULL;
	}
	h->spec.cache.seed = 1;
	/* A model even for "none": it counts every access's own bytes as DRAM traffic. */
	h->cache = cache_create(&h->spec.cache);
	if (!h->cache) {
		snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
			 (double)cache_model_bytes(&h->spec.cache) / 1048576.0);
		free(h);
		return NULL;
	}
	return h;
}

void
memsim_hierarchy_destroy(struct memsim_hierarchy *h)
{
	if (!h)
		return;
	cache_destroy(h->cache);
	free(h);
}

char *
memsim_hierarchy_spec(const struct memsim_hierarchy *h, char *buf, size_t len)
{
	if (!h || !buf || len == 0)
		return NULL;
	return spec_format(&h->spec, buf, len);
}

unsigned
memsim_hierarchy_levels(const struct memsim_hierarchy *h)
{
	return h ? h->spec.cache.levels : 0;
}

int
memsim_hierarchy_reset(struct memsim_hierarchy *h)
{
	struct cache *fresh;

	if (!h) {
		errno = EINVAL;
		return -1;
	}
	/* A live trace's context holds the model (and its fast path a copy of L1's state):
	 * replacing the model under it would feed freed memory. */
	if (h->live_traces) {
		errno = EBUSY;
		return -1;
	}
	fresh = cache_create(&h->spec.cache);
	if (!fresh) {
		errno = ENOMEM;
		return -1;
	}
	cache_destroy(h->cache);
	h->cache = fresh;
	return 0;
}

unsigned
memsim_preset_count(void)
{
	unsigned n = 0;

	while (spec_presets[n].name)
		n++;
	return n;
}

const char *
memsim_preset_name(unsigned i)
{
	return i < memsim_preset_count() ? spec_presets[i].name : NULL;
}

const char *
memsim_preset_description(unsigned i)
{
	return i < memsim_preset_count() ? spec_presets[i].summary : NULL;
}

void
memsim_free(void *p)
{
	free(p);
}
