/*
 * memsim/hierarchy.h's counters: the model's (sim/cache.h) copied into the public structs,
 * and the report as the JSON `memsim run --json` writes (analysis/report.c builds both).
 */

#include "config.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#define MEMSIM_NO_TR_MACROS
#pragma GCC visibility push(default)
#include "memsim/memsim.h"
#pragma GCC visibility pop

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "api/api.h"

static void
copy_traffic(struct memsim_dram_stats *out, const struct cache_traffic *t)
{
	out->read_bytes = t->read_bytes;
	out->write_bytes = t->write_bytes;
	out->rfo_bytes = t->rfo_bytes;
	out->flush_write_bytes = t->flush_write_bytes;
}

static void
copy_level(struct memsim_level_stats *out, const struct cache_level_config *l,
	   const struct cache_level_stats *st)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", l->name);
	out->size_bytes = l->size_bytes;
	out->line_bytes = l->line_bytes;
	out->assoc = l->assoc;
	out->reads = st->reads;
	out->writes = st->writes;
	out->read_misses = st->read_misses;
	out->write_misses = st->write_misses;
	out->misses = st->read_misses + st->write_misses;
	out->hits = st->reads + st->writes - out->misses; /* as the report's "hits" */
	out->fills = st->fills;
	out->evictions = st->evictions;
	out->writebacks = st->writebacks;
}

int
memsim_stats_total(const struct memsim_hierarchy *h, struct memsim_stats *out)
{
	struct cache *c;
	const struct cache_cpu_stats *cs;

	if (!h || !out)
		return -1;
	c = h->cache;
	cs = cache_cpu(c);
	memset(out, 0, sizeof(*out));
	copy_traffic(&out->dram, cache_dram(c));
	out->cpu.loads = cs->ops[CACHE_OP_LOAD];
	out->cpu.stores = cs->ops[CACHE_OP_STORE];
	out->cpu.load_bytes = cs->bytes[CACHE_OP_LOAD];
	out->cpu.store_bytes = cs->bytes[CACHE_OP_STORE];
	out->cpu.scratch_read_bytes = cs->scratch_read_bytes;
	out->cpu.scratch_write_bytes = cs->scratch_write_bytes;
	out->levels = h->spec.cache.levels; /* data levels: an I1 comes after them */
	for (unsigned i = 0; i < out->levels; i++)
		copy_level(&out->level[i], cache_level_config(c, i), cache_level_stats(c, i));
	return 0;
}

unsigned
memsim_stats_arrays(const struct memsim_hierarchy *h)
{
	return h ? cache_array_count(h->cache) : 0;
}

const char *
memsim_stats_array_name(const struct memsim_hierarchy *h, unsigned i)
{
	return h && i < cache_array_count(h->cache) ? cache_array_name(h->cache, i) : NULL;
}

unsigned
memsim_stats_phases(const struct memsim_hierarchy *h)
{
	return h ? cache_phase_count(h->cache) : 0;
}

const char *
memsim_stats_phase_name(const struct memsim_hierarchy *h, unsigned i)
{
	return h && i < cache_phase_count(h->cache) ? cache_phase_name(h->cache, i) : NULL;
}

int
memsim_stats_array(const struct memsim_hierarchy *h, unsigned i, struct memsim_stats *out)
{
	const uint64_t *scratch;

	if (!h || !out || i >= cache_array_count(h->cache))
		return -1;
	memset(out, 0, sizeof(*out));
	copy_traffic(&out->dram, cache_array_traffic(h->cache, i));
	scratch = cache_array_scratch(h->cache, i);
	out->cpu.scratch_read_bytes = scratch[0];
	out->cpu.scratch_write_bytes = scratch[1];
	return 0; /* the model keeps no level counters per array: levels stays 0 */
}

int
memsim_stats_phase(const struct memsim_hierarchy *h, unsigned i, struct memsim_stats *out)
{
	struct cache *c;

	if (!h || !out || i >= cache_phase_count(h->cache))
		return -1;
	c = h->cache;
	memset(out, 0, sizeof(*out));
	copy_traffic(&out->dram, cache_phase_traffic(c, i));
	out->levels = h->spec.cache.levels;
	for (unsigned l = 0; l < out->levels; l++)
		copy_level(&out->level[l], cache_level_config(c, l),
			   cache_phase_level_stats(c, i, l));
	return 0;
}

char *
memsim_report_json(const struct memsim_hierarchy *h)
{
	cJSON *root;
	cJSON *cfg;
	char spec[1024];
	char *text = NULL;

	if (!h)
		return NULL;
	root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cfg = cJSON_AddObjectToObject(root, "config");
	if (cfg &&
	    cJSON_AddStringToObject(cfg, "cache", spec_format(&h->spec, spec, sizeof(spec)))) {
		report_add_cache(root, h->cache);
		text = json_text_print(root, true);
	}
	cJSON_Delete(root);
	return text;
}
