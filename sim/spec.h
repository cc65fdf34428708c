#pragma once

/*
 * Cache specs and presets.
 *
 *   SPEC   := PRESET | ITEM (',' ITEM)*
 *   ITEM   := LEVEL '=' SIZE ':' ASSOC ':' LINE (':' WORD)*  |  'tiles=' ('scratch' | 'dram')
 *   LEVEL  := L1 | L2 | L3 | L4 | I1        (data levels in order, each once)
 *   SIZE   := digits [B|K|M|G]              (powers of 1024)
 *   ASSOC  := ways | 'full'
 *   WORD   := lru | fifo | random | plru | wb | wt | wa | nwa | wv | nine | incl | excl | quietwb
 *
 * The special spec "none" has no cache at all. A level maps to Cachegrind's
 * --D1/--LL=size,assoc,line triple with size in bytes: L1=32K:8:64 is --D1=32768,8,64.
 */

#include <stdbool.h>
#include <stddef.h>

#include "sim/cache.h"

struct spec {
	struct cache_config cache;
	bool tiles_in_scratch; /* kernels' tile buffers live in on-chip scratch, not memory */
	char preset[32];       /* preset name, or "" for an explicit spec */
	char note[512];        /* adjustments made while reading it (host preset) */
};

struct spec_preset {
	const char *name;
	const char *spec; /* NULL: built at run time (host) */
	const char *summary;
	const char *source; /* where the numbers come from */
};

/* The built-in presets, terminated by a row with name NULL. */
extern const struct spec_preset spec_presets[];

/* Parses a spec or preset name. Returns 0, or -EINVAL with a one-line message naming the bad
 * part in err. */
int spec_parse(const char *text, struct spec *out, char *err, size_t errlen);

/* Reads the host's data caches from sysfs_dir (normally /sys/devices/system/cpu/cpu0/cache).
 * A level whose set count is not a power of two is modelled with the next power of two and
 * fewer ways (said in out->note). Returns 0, or a negative errno with the reason in err. */
int spec_from_sysfs(const char *sysfs_dir, struct spec *out, char *err, size_t errlen);

/* Writes the config in spec syntax, every word explicit ("L1=32K:8:64:lru:wb:wa:nine,...").
 * Returns buf. */
char *spec_format(const struct spec *s, char *buf, size_t len);

/* Writes one level in spec syntax, without its name ("32K:8:64:lru:wb:wa:nine"). */
char *spec_format_level(const struct cache_level_config *l, char *buf, size_t len);

/* The DRAM bandwidth of a preset in GB/s (10^9 bytes/s) and where it comes from, or 0 (and
 * NULL) for presets without a documented one (CPU presets, lab, an explicit spec). */
double spec_preset_bandwidth(const char *preset, const char **source);
