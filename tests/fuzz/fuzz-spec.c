/*
 * libFuzzer harness: cache specs (sim/spec.c) and the model built from them (sim/cache.c).
 *
 * The input's first line is the spec; the bytes after it, four at a time, are accesses. For
 * each input:
 *  - spec_parse() accepts it, or refuses it with a message;
 *  - an accepted spec follows the grammar of sim/spec.h: no empty item or field;
 *  - each field of it parses with parse_u64() as a plain reading of util.h says it should:
 *    decimal, or 0x and hex digits, at most UINT64_MAX;
 *  - an accepted spec passes cache_config_validate(), and spec_format() writes a spec that
 *    parses back to one that formats the same (the text --help and reports print is a spec);
 *  - a model of modest size is built, runs the accesses one by one and, on a second model, as
 *    one cache_access_refs() batch, with the same counters; it is flushed and destroyed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/spec.h"
#include "base/util.h"

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-spec: %s:%d: ", __FILE__, __LINE__);                 \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define MAX_REFS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* parse_u64() as util.h describes it, written the obvious way. */
static bool
reference_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* Every field between the separators of a spec (',', '=', ':'), empty ones included. */
static void
check_numbers(const char *text)
{
	char field[64];

	for (const char *p = text;;) {
		size_t n = strcspn(p, ",=:");

		if (n < sizeof(field)) {
			uint64_t a = 0, b = 0;
			bool ok_a, ok_b;

			memcpy(field, p, n);
			field[n] = '\0';
			ok_a = parse_u64(field, &a);
			ok_b = reference_u64(field, &b);
			CHECK(ok_a == ok_b && a == b,
			      "parse_u64(\"%s\"): %s %llu, expected %s %llu", field,
			      ok_a ? "accepts" : "refuses", (unsigned long long)a,
			      ok_b ? "to accept" : "to refuse", (unsigned long long)b);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
}

/* An accepted spec that is not a preset name has no empty item (",,", or a ',' at either
 * end) and no empty field in a level ("L1=32K::8:64", or a ':' at either end). */
static void
check_grammar(const char *text, const struct spec *s)
{
	size_t len = strlen(text);

	if (s->preset[0])
		return;
	CHECK(text[0] != ',' && text[len - 1] != ',' && !strstr(text, ",,"),
	      "'%s' is accepted with an empty item", text);
	CHECK(!strstr(text, "=:") && !strstr(text, "::") && !strstr(text, ":,") &&
		      text[len - 1] != ':',
	      "'%s' is accepted with an empty field", text);
}

/* Models of up to 64 Ki lines in all are built: bigger ones are fine but cost the fuzzer
 * its speed in calloc and the flush. */
static bool
small_enough(const struct cache_config *cfg)
{
	uint64_t lines = 0;

	for (unsigned i = 0; i < cfg->levels; i++)
		lines += cfg->level[i].size_bytes / cfg->level[i].line_bytes;
	if (cfg->has_icache)
		lines += cfg->icache.size_bytes / cfg->icache.line_bytes;
	return lines <= 65536;
}

static void
check_level_stats(struct cache *c)
{
	for (unsigned i = 0; i < cache_level_count(c); i++) {
		const struct cache_level_stats *s = cache_level_stats(c, i);

		CHECK(s->read_misses <= s->reads && s->write_misses <= s->writes,
		      "%s: more misses than accesses", cache_level_config(c, i)->name);
	}
}

static void
run_model(const struct spec *s, const uint8_t *p, size_t n)
{
	struct cache_ref refs[MAX_REFS + 3] = {
		/* A byte, a straddling load, an instruction fetch, whatever the input. */
		{ .addr = 0, .size = 1, .kind = CACHE_OP_LOAD, .count = 1 },
		{ .addr = 60, .size = 8, .kind = CACHE_OP_STORE, .count = 2 },
		{ .addr = 4096, .size = 4, .kind = CACHE_OP_IFETCH, .count = 1 },
	};
	size_t nrefs = 3;
	struct cache *one = cache_create(&s->cache);
	struct cache *batch = cache_create(&s->cache);

	CHECK(one && batch, "cache_create refused a validated config");
	/* b0: op (2 bits), count - 1 (2 bits), region (4 bits); b1 b2: offset / 8; b3: size - 1. */
	for (; n >= 4 && nrefs < MAX_REFS + 3; p += 4, n -= 4) {
		struct cache_ref *r = &refs[nrefs++];

		r->kind = (uint16_t)((p[0] & 3) % CACHE_OP_COUNT);
		r->count = (uint16_t)(1 + ((p[0] >> 2) & 3));
		r->addr = ((uint64_t)(p[0] >> 4) << 20) + (((uint64_t)p[1] << 8 | p[2]) << 3);
		r->size = 1u + p[3];
	}
	for (size_t i = 0; i < nrefs; i++)
		cache_access(one, refs[i].addr, refs[i].size, (enum cache_op)refs[i].kind,
			     refs[i].count);
	CHECK(cache_access_refs(batch, refs, nrefs) == nrefs, "a batch of accesses stopped early");
	CHECK(memcmp(cache_cpu(one), cache_cpu(batch), sizeof(struct cache_cpu_stats)) == 0,
	      "processor counts differ between cache_access and cache_access_refs");
	for (unsigned i = 0; i < cache_level_count(one); i++)
		CHECK(memcmp(cache_level_stats(one, i), cache_level_stats(batch, i),
			     sizeof(struct cache_level_stats)) == 0,
		      "%s: counters differ between cache_access and cache_access_refs",
		      cache_level_config(one, i)->name);
	CHECK(memcmp(cache_dram(one), cache_dram(batch), sizeof(struct cache_traffic)) == 0,
	      "DRAM traffic differs between cache_access and cache_access_refs");
	cache_flush(one);
	check_level_stats(one);
	cache_destroy(batch);
	cache_destroy(one);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t len = nl ? (size_t)(nl - data) : size;
	char *text = xzalloc(len + 1);
	char err[512], once[1024], twice[1024];
	struct spec s, again;

	memcpy(text, data, len);
	check_numbers(text);
	if (spec_parse(text, &s, err, sizeof(err)) != 0) {
		CHECK(err[0] && strlen(err) < sizeof(err), "refused without a message");
		free(text);
		return 0;
	}
	check_grammar(text, &s);
	CHECK(cache_config_validate(&s.cache, err, sizeof(err)) == 0,
	      "'%s' parses, but the config is invalid: %s", text, err);
	spec_format(&s, once, sizeof(once));
	CHECK(spec_parse(once, &again, err, sizeof(err)) == 0,
	      "'%s' formats as '%s', which does not parse: %s", text, once, err);
	spec_format(&again, twice, sizeof(twice));
	CHECK(strcmp(once, twice) == 0, "'%s' formats as '%s', then as '%s'", text, once, twice);
	CHECK(again.tiles_in_scratch == s.tiles_in_scratch, "'%s': tiles lost in '%s'", text, once);
	if (small_enough(&s.cache))
		run_model(&s, nl ? nl + 1 : data + size, nl ? size - len - 1 : 0);
	free(text);
	return 0;
}
