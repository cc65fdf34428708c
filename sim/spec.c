#include "sim/spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

const struct spec_preset spec_presets[] = {
	{ "host", NULL, "this machine's data caches, read from sysfs, else from sysconf()",
	  "/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,ways_of_associativity,"
	  "coherency_line_size}, else glibc's sysconf(_SC_LEVEL1_DCACHE_SIZE, ...), which asks "
	  "cpuid on x86; replacement modelled as LRU" },
	{ "i5-8250u", "L1=32K:8:64,L2=256K:4:64,L3=6M:12:64:incl",
	  "Intel Core i5-8250U (Kaby Lake R), the labs' machine",
	  "Intel 64 and IA-32 Optimization Reference Manual (Skylake client cache table) and "
	  "WikiChip: L1d 32 KiB 8-way, L2 256 KiB 4-way, L3 6 MiB 12-way shared and inclusive; "
	  "64 B lines; LRU stands in for Intel's undocumented adaptive policies" },
	{ "cachegrind",
	  "I1=32K:8:64:straddle=once,L1=32K:8:64:straddle=once,L2=1M:16:64:quietwb:straddle=once",
	  "Cachegrind's model: I1 and D1 over one LL, LRU, write-allocate, write-backs ignored, "
	  "an access over two lines one reference",
	  "valgrind cachegrind/cg_sim.c; run Cachegrind with --I1=32768,8,64 --D1=32768,8,64 "
	  "--LL=1048576,16,64 for the same geometry" },
	{ "callgrind", "I1=32K:8:64,L1=32K:8:64:wt,L2=1M:16:64",
	  "Callgrind's --simulate-wb=yes model: write-through D1, write-back LL that counts "
	  "dirty evictions",
	  "valgrind callgrind/sim.c (cachesim_D1_Write: every store, hit or miss in D1, also "
	  "references LL and dirties its line); run Callgrind with --cache-sim=yes "
	  "--simulate-wb=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64" },
	{ "h100", "L1=22M:22:128:wv,tiles=scratch",
	  "NVIDIA H100 SXM as one kernel sees it: a 22 MiB L2 (of the 50 MB), tiles in shared memory",
	  "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 50 MB of L2 in two "
	  "partitions, 128-byte lines with 32-byte sectors (sectors not modelled), up to 228 KB "
	  "of shared memory per SM holding the tiles, write-back L2 that takes partial writes "
	  "without fetching (write-validate). Measured with Nsight Compute on an H100 80GB HBM3, "
	  "2026-11-22 (memsim gpucheck; docs/gpu.md): a kernel keeps at most 20 to 23 MB of the data it "
	  "wrote in L2 when it ends, whatever it wrote from 19 to 302 MB, so the L2 is modelled as "
	  "one 22 MiB cache (22 ways, 8192 sets); h100-50m has the whitepaper's size" },
	{ "h100-50m", "L1=50M:25:128:wv,tiles=scratch",
	  "NVIDIA H100 SXM by the whitepaper: the 50 MiB L2 as the one cache level",
	  "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 50 MB L2 (taken as 50 MiB), "
	  "128-byte lines; 25 ways give a power-of-two set count (16384). A kernel keeps less "
	  "than half of it (see the h100 preset)" },
	{ "h200", "L1=28M:28:128:wv,tiles=scratch",
	  "NVIDIA H200 SXM as one kernel sees it: a 28 MiB L2 (of the 60 MiB), tiles in shared memory",
	  "NVIDIA H200 datasheet: the H100's Hopper SMs with 4.8 TB/s of HBM3e; the L2 as the "
	  "device reports it, 62914560 bytes (cudaDeviceProp::l2CacheSize), 128-byte lines, "
	  "write-back, partial writes without fetching (write-validate). Measured with Nsight "
	  "Compute on an H200 (driver 580.159.04, 2026-12-02; docs/gpu.md): a kernel that writes "
	  "32 to 128 MiB keeps 28.0 to 28.5 MiB of it in L2 when it ends, so the L2 is modelled "
	  "as one 28 MiB cache (28 ways, 8192 sets), as the h100 preset's 22 MiB of 50" },
	{ "lab", "none,tiles=scratch",
	  "the lab formulas' machine: tiles in on-chip scratch, no cache below them",
	  "the course's lab 01, 'The Bytes-Moved Delta of Flash vs Naive': every load or store of "
	  "an array in memory moves its own bytes to or from DRAM" },
	{ NULL, NULL, NULL, NULL },
};

double
spec_preset_bandwidth(const char *preset, const char **source)
{
	/* Both H100 presets model the SXM part: one bandwidth, by NVIDIA's datasheet. */
	if (strcmp(preset, "h100") == 0 || strcmp(preset, "h100-50m") == 0) {
		*source = "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, 3.35 TB/s of HBM3";
		return 3350;
	}
	if (strcmp(preset, "h200") == 0) {
		*source = "NVIDIA H200 Tensor Core GPU datasheet: H200 SXM, 4.8 TB/s of HBM3e";
		return 4800;
	}
	*source = NULL;
	return 0;
}

/* Policy word groups: replacement, write, write miss, inclusion, quietwb, straddle. */
#define WORD_GROUPS 6

static const char *word_list =
	"lru|fifo|random|plru|wb|wt|wa|nwa|wv|nine|incl|excl|quietwb|straddle=line|straddle=once";

/* Applies one policy word; `seen` tracks which group was already given. */
static int
apply_word(struct cache_level_config *l, const char *w, unsigned *seen, const char **prev,
	   char *err, size_t errlen)
{
	static const struct {
		const char *word;
		unsigned group;
		int value;
	} words[] = {
		{ "lru", 0, CACHE_REPL_LRU },
		{ "fifo", 0, CACHE_REPL_FIFO },
		{ "random", 0, CACHE_REPL_RANDOM },
		{ "plru", 0, CACHE_REPL_PLRU },
		{ "wb", 1, CACHE_WRITE_BACK },
		{ "wt", 1, CACHE_WRITE_THROUGH },
		{ "wa", 2, CACHE_ALLOC_FETCH },
		{ "nwa", 2, CACHE_ALLOC_NONE },
		{ "wv", 2, CACHE_ALLOC_VALIDATE },
		{ "nine", 3, CACHE_INCL_NINE },
		{ "incl", 3, CACHE_INCL_INCLUSIVE },
		{ "excl", 3, CACHE_INCL_EXCLUSIVE },
		{ "quietwb", 4, 1 },
		{ "straddle=line", 5, 0 },
		{ "straddle=once", 5, 1 },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		unsigned g = words[i].group;

		if (strcasecmp(w, words[i].word) != 0)
			continue;
		if (*seen & (1u << g)) {
			snprintf(err, errlen, "%s: '%s' and '%s' both given", l->name, prev[g], w);
			return -EINVAL;
		}
		*seen |= 1u << g;
		prev[g] = words[i].word;
		switch (g) {
		case 0:
			l->repl = (enum cache_repl)words[i].value;
			break;
		case 1:
			l->write = (enum cache_write_policy)words[i].value;
			break;
		case 2:
			l->alloc = (enum cache_alloc_policy)words[i].value;
			break;
		case 3:
			l->inclusion = (enum cache_inclusion)words[i].value;
			break;
		case 4:
			l->quiet_writebacks = true;
			break;
		default:
			l->straddle_once = words[i].value;
			break;
		}
		return 0;
	}
	snprintf(err, errlen, "%s: unknown policy word '%s' (expected %s)", l->name, w, word_list);
	return -EINVAL;
}

static int
parse_size_field(const char *lname, const char *what, const char *s, uint64_t *out, char *err,
		 size_t errlen)
{
	int rc = parse_size_bytes(s, out);

	if (rc == -ERANGE) {
		snprintf(err, errlen, "%s: %s '%s' overflows 64 bits", lname, what, s);
		return -EINVAL;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s '%s' is not a size (digits with optional B, K, M, G)",
			 lname, what, s);
		return -EINVAL;
	}
	return 0;
}

/* Cuts the field up to the next sep off *rest, terminating it in place; *rest becomes NULL
 * after the last field. Unlike strtok_r(), which skips empty fields, it returns them, so that
 * a stray separator ("32K::8:64", "L1=...,,L2=...") is an error instead of going unnoticed. */
static char *
next_field(char **rest, char sep)
{
	char *field = *rest, *end = strchr(field, sep);

	if (end) {
		*end = '\0';
		*rest = end + 1;
	} else {
		*rest = NULL;
	}
	return field;
}

/* Parses "SIZE:ASSOC:LINE[:WORD...]" into l (l->name already set). */
static int
parse_level(char *value, struct cache_level_config *l, char *err, size_t errlen)
{
	char *fields[16];
	unsigned n = 0, seen = 0;
	const char *prev[WORD_GROUPS] = { 0 };
	uint64_t v;

	for (char *rest = value; rest;) {
		char *tok = next_field(&rest, ':');

		if (!*tok) {
			snprintf(err, errlen,
				 "%s: empty field (expected size:assoc:line[:word...])", l->name);
			return -EINVAL;
		}
		if (n == sizeof(fields) / sizeof(fields[0])) {
			snprintf(err, errlen, "%s: too many ':' fields", l->name);
			return -EINVAL;
		}
		fields[n++] = tok;
	}
	if (n < 3) {
		snprintf(err, errlen, "%s: expected size:assoc:line, e.g. %s=32K:8:64", l->name,
			 l->name);
		return -EINVAL;
	}
	if (parse_size_field(l->name, "size", fields[0], &l->size_bytes, err, errlen))
		return -EINVAL;
	if (strcasecmp(fields[1], "full") == 0) {
		l->fully_assoc = true;
	} else if (!parse_u64(fields[1], &v)) {
		snprintf(err, errlen, "%s: associativity '%s' is not a number or 'full'", l->name,
			 fields[1]);
		return -EINVAL;
	} else if (v > UINT32_MAX) {
		snprintf(err, errlen, "%s: associativity '%s' is too large", l->name, fields[1]);
		return -EINVAL;
	} else {
		l->assoc = (uint32_t)v;
	}
	if (parse_size_field(l->name, "line size", fields[2], &v, err, errlen))
		return -EINVAL;
	if (v > (UINT64_C(1) << 20)) {
		snprintf(err, errlen, "%s: line size '%s' is too large", l->name, fields[2]);
		return -EINVAL;
	}
	l->line_bytes = (uint32_t)v;
	for (unsigned i = 3; i < n; i++)
		if (apply_word(l, fields[i], &seen, prev, err, errlen))
			return -EINVAL;
	if (!l->fully_assoc && l->assoc && l->line_bytes && l->size_bytes / l->line_bytes &&
	    l->assoc == l->size_bytes / l->line_bytes)
		l->fully_assoc = true;
	return 0;
}

static const struct spec_preset *
find_preset(const char *name)
{
	for (const struct spec_preset *p = spec_presets; p->name; p++)
		if (strcasecmp(p->name, name) == 0)
			return p;
	return NULL;
}

static int parse_items(const char *text, struct spec *out, char *err, size_t errlen);

int
spec_parse(const char *text, struct spec *out, char *err, size_t errlen)
{
	const struct spec_preset *p;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!text || !*text) {
		snprintf(err, errlen, "empty cache spec");
		return -EINVAL;
	}
	p = find_preset(text);
	if (p && !p->spec) {
		rc = spec_from_host(out, err, errlen);
		if (rc)
			return rc;
	} else if (p) {
		rc = parse_items(p->spec, out, err, errlen);
		if (rc)
			return rc;
	} else {
		rc = parse_items(text, out, err, errlen);
		if (rc)
			return rc;
	}
	if (p)
		snprintf(out->preset, sizeof(out->preset), "%s", p->name);
	if (cache_config_validate(&out->cache, err, errlen))
		return -EINVAL;
	return 0;
}

/* The level an item names ("L2", "i1"): its slot in c, named ("L2") and counted; NULL
 * after a message for a name not a level, a second I1, a level past the last, one given
 * twice or before the one above it. */
static struct cache_level_config *
level_slot(const char *item, struct cache_config *c, char *err, size_t errlen)
{
	struct cache_level_config *l;
	char name[8];

	if (strlen(item) != 2 || !strchr("LlIi", item[0]) || item[1] < '1' || item[1] > '9') {
		snprintf(err, errlen, "unknown cache level '%s' (expected L1..L4 or I1)", item);
		return NULL;
	}
	name[0] = (char)toupper((unsigned char)item[0]);
	name[1] = item[1];
	name[2] = '\0';
	if (name[0] == 'I') {
		if (name[1] != '1' || c->has_icache) {
			snprintf(err, errlen, "%s: only one instruction cache, I1, is modelled",
				 name);
			return NULL;
		}
		l = &c->icache;
		c->has_icache = true;
	} else {
		unsigned idx = (unsigned)(name[1] - '1');

		if (idx >= CACHE_MAX_LEVELS) {
			snprintf(err, errlen, "%s: at most %d data levels (L1..L4)", name,
				 CACHE_MAX_LEVELS);
			return NULL;
		}
		if (idx != c->levels) {
			if (idx < c->levels)
				snprintf(err, errlen, "%s given twice", name);
			else
				snprintf(err, errlen, "%s given before L%u", name, c->levels + 1);
			return NULL;
		}
		l = &c->level[idx];
		c->levels++;
	}
	memcpy(l->name, name, 3);
	return l;
}

static int
parse_items(const char *text, struct spec *out, char *err, size_t errlen)
{
	char *copy = xstrdup(text);
	int rc = -EINVAL;
	bool have_none = false;

	for (char *rest = copy; rest;) {
		char *item = next_field(&rest, ',');
		char *eq = strchr(item, '=');
		struct cache_level_config *l;

		if (!*item) {
			snprintf(err, errlen, "cache spec '%s' has an empty item (a stray ',')",
				 text);
			goto out;
		}
		if (strcasecmp(item, "none") == 0) {
			have_none = true;
			continue;
		}
		if (!eq) {
			if (find_preset(item))
				snprintf(err, errlen,
					 "preset '%s' cannot be combined with other spec items",
					 item);
			else
				snprintf(
					err, errlen,
					"unknown cache spec or preset '%s' (presets: host, "
					"i5-8250u, cachegrind, callgrind, h100, h100-50m, lab; or a spec like "
					"L1=32K:8:64,L2=1M:16:64)",
					item);
			goto out;
		}
		*eq = '\0';
		if (strcasecmp(item, "tiles") == 0) {
			if (strcasecmp(eq + 1, "scratch") == 0) {
				out->tiles_in_scratch = true;
			} else if (strcasecmp(eq + 1, "dram") == 0) {
				out->tiles_in_scratch = false;
			} else {
				snprintf(err, errlen, "tiles: '%s' is not 'scratch' or 'dram'",
					 eq + 1);
				goto out;
			}
			continue;
		}
		if (!(l = level_slot(item, &out->cache, err, errlen)))
			goto out;
		if (parse_level(eq + 1, l, err, errlen))
			goto out;
	}
	if (have_none && (out->cache.levels || out->cache.has_icache)) {
		snprintf(err, errlen,
			 "'none' means no cache levels; it cannot be combined with "
			 "level items");
		goto out;
	}
	if (!have_none && !out->cache.levels && !out->cache.has_icache) {
		snprintf(err, errlen, "cache spec '%s' names no level (use 'none' for no cache)",
			 text);
		goto out;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/* ---- formatting ---- */

char *
spec_format_level(const struct cache_level_config *l, char *buf, size_t len)
{
	char size[24], line[24], assoc[24];

	if (l->fully_assoc)
		snprintf(assoc, sizeof(assoc), "full");
	else
		snprintf(assoc, sizeof(assoc), "%u", l->assoc);
	format_size_bytes(l->size_bytes, size, sizeof(size));
	snprintf(line, sizeof(line), "%u", l->line_bytes);
	snprintf(buf, len, "%s:%s:%s:%s:%s:%s:%s%s%s", size, assoc, line, cache_repl_str(l->repl),
		 cache_write_str(l->write), cache_alloc_str(l->alloc),
		 cache_inclusion_str(l->inclusion), l->quiet_writebacks ? ":quietwb" : "",
		 l->straddle_once ? ":straddle=once" : "");
	return buf;
}

char *
spec_format(const struct spec *s, char *buf, size_t len)
{
	size_t used = 0;
	char lv[128];

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (s->cache.has_icache)
		used += (size_t)snprintf(buf + used, len - used, "I1=%s,",
					 spec_format_level(&s->cache.icache, lv, sizeof(lv)));
	for (unsigned i = 0; i < s->cache.levels && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s=%s,", s->cache.level[i].name,
					 spec_format_level(&s->cache.level[i], lv, sizeof(lv)));
	if (s->cache.levels == 0 && used < len)
		used += (size_t)snprintf(buf + used, len - used, "none,");
	if (used < len)
		snprintf(buf + used, len - used, "tiles=%s",
			 s->tiles_in_scratch ? "scratch" : "dram");
	return buf;
}
