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
	char source[256];      /* where the host preset's numbers came from; "" for the others */
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

/* The host preset: this machine's caches, from sysfs (MEMSIM_SYSFS_ROOT, default /sys, then
 * devices/system/cpu/cpu0/cache), else from sysconf(); out->source names the one used, out->note
 * what was adjusted or assumed. MEMSIM_HOST_SOURCES ("sysfs,sysconf") limits the sources tried
 * (a test knob). Returns 0, or -ENOENT with each source's reason in err. */
int spec_from_host(struct spec *out, char *err, size_t errlen);

/* Where memsim reads sysfs: MEMSIM_SYSFS_ROOT where set (a test knob), else "/sys". */
const char *spec_sysfs_root(void);

/* Reads the host's data caches from sysfs_dir (normally /sys/devices/system/cpu/cpu0/cache).
 * A level whose set count is not a power of two is modelled with the next power of two and
 * fewer ways (said in out->note). Returns 0, or a negative errno with the reason in err. */
int spec_from_sysfs(const char *sysfs_dir, struct spec *out, char *err, size_t errlen);

/* The ways taken for a level that sysconf() reports without its associativity. */
#define SPEC_HOST_ASSUMED_WAYS 16u

/* Reads the data caches from sysconf()'s _SC_LEVEL{1..4}_*CACHE_{SIZE,ASSOC,LINESIZE} through
 * query (spec_sysconf(), or a stand-in in tests): the levels from L1 down to the first it does
 * not report. A level without its associativity is taken as SPEC_HOST_ASSUMED_WAYS ways (said
 * in out->note). Returns 0, or -ENOENT with the reason in err. */
int spec_from_sysconf(long (*query)(int name), struct spec *out, char *err, size_t errlen);

/* sysconf(name), -1 for a name the C library lacks (given as -1). */
long spec_sysconf(int name);

/* Writes the config in spec syntax, every word explicit ("L1=32K:8:64:lru:wb:wa:nine,...").
 * Returns buf. */
char *spec_format(const struct spec *s, char *buf, size_t len);

/* Writes one level in spec syntax, without its name ("32K:8:64:lru:wb:wa:nine"). */
char *spec_format_level(const struct cache_level_config *l, char *buf, size_t len);

/* The DRAM bandwidth of a preset in GB/s (10^9 bytes/s) and where it comes from, or 0 (and
 * NULL) for presets without a documented one (CPU presets, lab, an explicit spec). */
double spec_preset_bandwidth(const char *preset, const char **source);
