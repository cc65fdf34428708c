/*
 * The host preset: this machine's caches, read from what the system says of them.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "sim/spec.h"

static int
read_sysfs_line(const char *dir, const char *entry, const char *file, char *buf, size_t len)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, entry, file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

static int
read_sysfs_u64(const char *dir, const char *entry, const char *file, uint64_t *out, bool size)
{
	char buf[64];
	int rc = read_sysfs_line(dir, entry, file, buf, sizeof(buf));

	if (rc)
		return rc;
	if (size)
		return parse_size_bytes(buf, out) ? -EINVAL : 0;
	return parse_u64(buf, out) ? 0 : -EINVAL;
}

/* Appends a clause to out->note ("; " between clauses). */
static void add_note(struct spec *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_note(struct spec *out, const char *fmt, ...)
{
	size_t used = strlen(out->note);
	va_list ap;

	if (used && used + 2 < sizeof(out->note)) {
		memcpy(out->note + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(out->note + used, sizeof(out->note) - used, fmt, ap);
	va_end(ap);
}

/* One level from what the system reports (size, ways and line in bytes, all nonzero, size at
 * least a line). A set count that is not a power of two (sliced LLCs) cannot be bit-indexed:
 * the line stays, the sets become the next power of two and the ways as many as keep the size
 * at or just under the real one (said in out->note). */
static void
host_level(struct cache_level_config *l, const char *name, uint64_t size, uint64_t ways,
	   uint64_t line, struct spec *out)
{
	uint64_t sets = size / line / ways;

	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->line_bytes = (uint32_t)line;
	l->assoc = (uint32_t)ways;
	l->size_bytes = size;
	if (sets == 0 || !is_pow2(sets) || sets * ways * line != size) {
		uint64_t lines = size / line;
		uint64_t p2 = sets ? UINT64_C(1) << log2_u64(sets) : 1;
		char a[24], b[24];

		if (p2 < sets)
			p2 <<= 1;
		while (p2 > 1 && lines / p2 == 0)
			p2 >>= 1;
		l->assoc = (uint32_t)(lines / p2);
		l->size_bytes = p2 * l->assoc * line;
		add_note(out,
			 "%s: %llu sets is not a power of two; modelled as %llu sets x %u ways (%s "
			 "of %s)",
			 name, (unsigned long long)sets, (unsigned long long)p2, l->assoc,
			 format_size_bytes(l->size_bytes, a, sizeof(a)),
			 format_size_bytes(size, b, sizeof(b)));
	}
	if (l->assoc == size / line)
		l->fully_assoc = true;
}

int
spec_from_sysfs(const char *sysfs_dir, struct spec *out, char *err, size_t errlen)
{
	DIR *d = opendir(sysfs_dir);
	struct dirent *de;
	struct cache_level_config found[CACHE_MAX_LEVELS + 1];
	bool have[CACHE_MAX_LEVELS + 1] = { false };
	bool have_i = false;
	struct cache_level_config icache;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(found, 0, sizeof(found));
	if (!d) {
		rc = -errno;
		snprintf(err, errlen, "cannot read %s: %s", sysfs_dir, strerror(errno));
		return rc;
	}
	while ((de = readdir(d))) {
		char type[32], name[8];
		uint64_t level, size, ways, line;
		struct cache_level_config l;

		if (strncmp(de->d_name, "index", 5) != 0)
			continue;
		if (read_sysfs_line(sysfs_dir, de->d_name, "type", type, sizeof(type)) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "level", &level, false) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "size", &size, true) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "ways_of_associativity", &ways, false) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "coherency_line_size", &line, false)) {
			snprintf(err, errlen, "%s/%s is missing or has unreadable fields",
				 sysfs_dir, de->d_name);
			rc = -EINVAL;
			goto out;
		}
		if (level < 1 || level > CACHE_MAX_LEVELS || !line || !ways || size < line) {
			snprintf(err, errlen, "%s/%s describes an unusable cache (level %llu)",
				 sysfs_dir, de->d_name, (unsigned long long)level);
			rc = -EINVAL;
			goto out;
		}
		snprintf(name, sizeof(name), "%c%u", strcmp(type, "Instruction") ? 'L' : 'I',
			 (unsigned)level);
		host_level(&l, name, size, ways, line, out);
		if (l.name[0] == 'I') {
			if (level == 1) {
				icache = l;
				have_i = true;
			}
			continue;
		}
		if (level == 1 && strcmp(type, "Data") != 0 && strcmp(type, "Unified") != 0)
			continue;
		found[level] = l;
		have[level] = true;
	}
	for (unsigned lv = 1; lv <= CACHE_MAX_LEVELS && have[lv]; lv++)
		out->cache.level[out->cache.levels++] = found[lv];
	if (out->cache.levels == 0) {
		snprintf(err, errlen, "no data cache found under %s", sysfs_dir);
		rc = -ENOENT;
		goto out;
	}
	if (have_i) {
		out->cache.icache = icache;
		out->cache.has_icache = true;
	}
	snprintf(out->preset, sizeof(out->preset), "host");
	snprintf(out->source, sizeof(out->source), "sysfs, %.200s", sysfs_dir);
out:
	closedir(d);
	return rc;
}

/* sysconf()'s names for each level's size, associativity and line: L1 data, L2, L3, L4 (glibc;
 * -1 where the C library has no such name). */
static const int sysconf_names[CACHE_MAX_LEVELS][3] = {
#ifdef _SC_LEVEL1_DCACHE_SIZE
	{ _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE },
	{ _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE },
	{ _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE },
	{ _SC_LEVEL4_CACHE_SIZE, _SC_LEVEL4_CACHE_ASSOC, _SC_LEVEL4_CACHE_LINESIZE },
#else
	{ -1, -1, -1 },
	{ -1, -1, -1 },
	{ -1, -1, -1 },
	{ -1, -1, -1 },
#endif
};

long
spec_sysconf(int name)
{
	return name < 0 ? -1 : sysconf(name);
}

int
spec_from_sysconf(long (*query)(int name), struct spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	for (unsigned lv = 0; lv < CACHE_MAX_LEVELS; lv++) {
		long size = query(sysconf_names[lv][0]), ways = query(sysconf_names[lv][1]);
		long line = query(sysconf_names[lv][2]);
		char name[8];

		snprintf(name, sizeof(name), "L%u", lv + 1);
		if (size <= 0 || line <= 0 || size < line || !is_pow2((uint64_t)line))
			break;
		if (ways <= 0) {
			/* glibc says 0 where cpuid gives no way count (AMD's leaf 0x80000006
			 * pointing to a leaf the machine may not have) */
			add_note(out, "%s: no associativity reported; modelled as %u ways", name,
				 SPEC_HOST_ASSUMED_WAYS);
			ways = SPEC_HOST_ASSUMED_WAYS;
		}
		if ((uint64_t)ways > (uint64_t)size / (uint64_t)line)
			ways = size / line;
		host_level(&out->cache.level[out->cache.levels++], name, (uint64_t)size,
			   (uint64_t)ways, (uint64_t)line, out);
	}
	if (out->cache.levels == 0) {
		snprintf(err, errlen, "sysconf() reports no data cache (_SC_LEVEL1_DCACHE_*)");
		return -ENOENT;
	}
	snprintf(out->preset, sizeof(out->preset), "host");
	snprintf(out->source, sizeof(out->source), "sysconf (glibc: cpuid on x86)");
	return 0;
}

/* Whether the word is in MEMSIM_HOST_SOURCES (a comma list; unset: every source). */
static bool
source_wanted(const char *word)
{
	const char *list = getenv("MEMSIM_HOST_SOURCES");
	size_t n = strlen(word);

	if (!list)
		return true;
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && strncmp(p, word, n) == 0)
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

const char *
spec_sysfs_root(void)
{
	const char *root = getenv("MEMSIM_SYSFS_ROOT");

	return root && *root ? root : "/sys";
}

int
spec_from_host(struct spec *out, char *err, size_t errlen)
{
	char dir[1024], why_sysfs[640], why_sysconf[256];

	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu0/cache", spec_sysfs_root());
	snprintf(why_sysfs, sizeof(why_sysfs), "not tried (MEMSIM_HOST_SOURCES)");
	snprintf(why_sysconf, sizeof(why_sysconf), "not tried (MEMSIM_HOST_SOURCES)");
	if (source_wanted("sysfs") && spec_from_sysfs(dir, out, why_sysfs, sizeof(why_sysfs)) == 0)
		return 0;
	if (source_wanted("sysconf") &&
	    spec_from_sysconf(spec_sysconf, out, why_sysconf, sizeof(why_sysconf)) == 0) {
		char note[sizeof(out->note)];

		snprintf(note, sizeof(note), "%s", out->note);
		snprintf(out->note, sizeof(out->note),
			 "no cache description in sysfs (%.200s)%s%.270s", why_sysfs,
			 note[0] ? "; " : "", note);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	snprintf(err, errlen,
		 "host: this machine's caches are unknown here: sysfs: %s; sysconf: %s", why_sysfs,
		 why_sysconf);
	return -ENOENT;
}
