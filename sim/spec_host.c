/*
 * The host preset: this machine's caches, read from what the system says of them.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/spec.h"
#include "sim/util.h"

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
		snprintf(err, errlen, "host: cannot read %s: %s", sysfs_dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		char type[32];
		uint64_t level, size, ways, line, sets;
		struct cache_level_config l;

		if (strncmp(de->d_name, "index", 5) != 0)
			continue;
		if (read_sysfs_line(sysfs_dir, de->d_name, "type", type, sizeof(type)) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "level", &level, false) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "size", &size, true) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "ways_of_associativity", &ways, false) ||
		    read_sysfs_u64(sysfs_dir, de->d_name, "coherency_line_size", &line, false)) {
			snprintf(err, errlen, "host: %s/%s is missing or has unreadable fields",
				 sysfs_dir, de->d_name);
			rc = -EINVAL;
			goto out;
		}
		if (level < 1 || level > CACHE_MAX_LEVELS || !line || !ways || size < line) {
			snprintf(err, errlen,
				 "host: %s/%s describes an unusable cache (level %llu)", sysfs_dir,
				 de->d_name, (unsigned long long)level);
			rc = -EINVAL;
			goto out;
		}
		memset(&l, 0, sizeof(l));
		snprintf(l.name, sizeof(l.name), "%c%u", strcmp(type, "Instruction") ? 'L' : 'I',
			 (unsigned)level);
		l.line_bytes = (uint32_t)line;
		l.assoc = (uint32_t)ways;
		l.size_bytes = size;
		sets = size / line / ways;
		if (sets == 0 || !is_pow2(sets) || sets * ways * line != size) {
			/* Non-power-of-two set counts (sliced LLCs) cannot be bit-indexed: keep the
			 * line, take the next power of two of sets and as many ways as keep the
			 * size at or just under the real one. */
			uint64_t lines = size / line;
			uint64_t p2 = sets ? UINT64_C(1) << log2_u64(sets) : 1;
			char a[24], b[24];
			size_t used = strlen(out->note);

			if (p2 < sets)
				p2 <<= 1;
			while (p2 > 1 && lines / p2 == 0)
				p2 >>= 1;
			l.assoc = (uint32_t)(lines / p2);
			l.size_bytes = p2 * l.assoc * line;
			snprintf(
				out->note + used, sizeof(out->note) - used,
				"%s%s: %llu sets is not a power of two; modelled as %llu sets x %u "
				"ways (%s of %s)",
				used ? "; " : "", l.name, (unsigned long long)sets,
				(unsigned long long)p2, l.assoc,
				format_size_bytes(l.size_bytes, a, sizeof(a)),
				format_size_bytes(size, b, sizeof(b)));
		}
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
		snprintf(err, errlen, "host: no data cache found under %s", sysfs_dir);
		rc = -ENOENT;
		goto out;
	}
	if (have_i) {
		out->cache.icache = icache;
		out->cache.has_icache = true;
	}
	snprintf(out->preset, sizeof(out->preset), "host");
out:
	closedir(d);
	return rc;
}
