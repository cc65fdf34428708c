/*
 * A hashed set-associative L2, line by line on sampled sets (gpu/l2sets.h).
 *
 * Notes: a tile's sampled lines are those whose offset o has (o + h) % sample == 0, h a hash
 * of the tile id, so that every tile, however few lines it has, is sampled in proportion, and
 * the lines not sampled are never visited (a 16 KiB tile costs 128 / sample line steps). A
 * sampled line's set is a hash of (tile, offset) over the simulated sets.
 */

#include "gpu/l2sets_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RRPV_MAX 3
#define RRPV_INSERT 2

/* by_page (gpu/l2sets.h): 2 MiB pages of 2^14 lines; y takes 9 bits, x adds the line's address
 * bits 17 to 20 (page line bits 10 to 13) to its page's colour; the partition is the H100's
 * XOR of address bits 12, 13, 16, 17 and 19 within the page (03313eb:docs/gpu-run/l2-reread/),
 * flipped by a page term. */
#define PAGE_SHIFT 21
#define PAGE_LINE_BITS 14
#define PAGE_YBITS 9
#define PAGE_KSHIFT 10
#define PAGE_KVALUES 16
#define PAGE_PART_MASK ((1u << 5) | (1u << 6) | (1u << 9) | (1u << 10) | (1u << 12))

struct way {
	uint64_t key;           /* (tile << 16 | offset) + 1; 0: empty */
	uint64_t used, written; /* stamps of the last access and the last store */
	uint8_t rrpv, bytes, cls;
	bool dirty;
};

struct l2sets {
	struct l2sets_config c;
	uint32_t nsets; /* simulated, in all partitions */
	uint32_t parts; /* partitions: 1 or 2 */
	struct way *ways;
	uint64_t clock, rng;
	uint64_t read[TILELRU_CLASSES], write[TILELRU_CLASSES]; /* sampled bytes */
	uint64_t lookup_miss[TILELRU_CLASSES]; /* sampled load bytes the SM's partition lacked */
	/* by_page: a page's line i (14 bits) has y bit j = parity(i & yrow[j]) */
	uint16_t yrow[PAGE_YBITS];
	uint32_t nx, ysim; /* x values; y values simulated per x (512 / sample) */
};

static const char *const names[] = { "lru", "srrip", "random" };

int
l2sets_policy_parse(const char *text, enum l2sets_policy *out)
{
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(text, names[i]) == 0) {
			*out = (enum l2sets_policy)i;
			return 0;
		}
	return -EINVAL;
}

const char *
l2sets_policy_str(enum l2sets_policy p)
{
	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

static uint64_t
mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned
parity(uint64_t v)
{
	return (unsigned)__builtin_parityll(v);
}

/* The rank over GF(2) of rows[0 .. n), PAGE_LINE_BITS wide. */
static unsigned
gf2_rank(uint16_t *rows, unsigned n)
{
	unsigned r = 0;

	for (unsigned b = 0; b < PAGE_LINE_BITS && r < n; b++) {
		unsigned piv = r;

		while (piv < n && !(rows[piv] >> b & 1))
			piv++;
		if (piv == n)
			continue;
		uint16_t t = rows[piv];

		rows[piv] = rows[r], rows[r] = t;
		for (unsigned i = 0; i < n; i++)
			if (i != r && (rows[i] >> b & 1))
				rows[i] ^= rows[r];
		r++;
	}
	return r;
}

/* y's rows drawn from the seed until y, x's address bits and the partition bit tell a page's
 * lines apart (a bijection, as the GPU's sets hold one line of a page each: l2-evict). */
static int
page_hash_init(struct l2sets *s, uint64_t per, const char **why)
{
	uint64_t z = s->c.seed;

	if (per % (1u << PAGE_YBITS) || per >> PAGE_YBITS < PAGE_KVALUES ||
	    s->c.sample > (1u << PAGE_YBITS)) {
		if (why)
			*why = "hashing by page needs n x 512 sets a partition, n at least 16 (the "
			       "H100: 25 MiB of 16-way sets), and a sample of at most 512";
		return -EINVAL;
	}
	s->nx = (uint32_t)(per >> PAGE_YBITS);
	s->ysim = (1u << PAGE_YBITS) / s->c.sample;
	s->nsets = s->parts * s->nx * s->ysim;
	for (;;) {
		uint16_t rows[PAGE_LINE_BITS];
		unsigned n = 0;

		for (unsigned j = 0; j < PAGE_YBITS; j++) {
			z = mix(z);
			s->yrow[j] = (uint16_t)(z & ((1u << PAGE_LINE_BITS) - 1));
			rows[n++] = s->yrow[j];
		}
		for (unsigned j = 0; j < 4; j++)
			rows[n++] = (uint16_t)(1u << (PAGE_KSHIFT + j));
		rows[n++] = PAGE_PART_MASK;
		if (gf2_rank(rows, n) == PAGE_LINE_BITS)
			return 0;
	}
}

struct l2sets *
l2sets_create(const struct l2sets_config *c, const char **why)
{
	uint32_t sample = c->sample ? c->sample : 1;
	uint64_t sets = c->ways ? c->capacity_bytes / ((uint64_t)L2SETS_LINE * c->ways) : 0;
	struct l2sets *s;

	if (why)
		*why = NULL;
	if (c->ways == 0 || c->ways > L2SETS_WAYS_MAX) {
		if (why)
			*why = "ways must be 1 to 64";
		return NULL;
	}
	uint32_t parts = c->partitions == 2 ? 2 : 1;

	if (c->partitions > 2) {
		if (why)
			*why = "partitions must be 1 or 2";
		return NULL;
	}
	if ((sample & (sample - 1)) || sets < (uint64_t)sample * parts ||
	    sets / sample > (1u << 24)) {
		if (why)
			*why = "the sets (capacity / (128 x ways)) must be at least the sample, "
			       "a power of two, and at most 2^24 of them simulated";
		return NULL;
	}
	if (c->dirty_ways > c->ways || c->policy > L2SETS_RANDOM) {
		if (why)
			*why = "dirty ways above the ways, or an unknown policy";
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->c = *c;
	s->c.sample = sample;
	s->parts = parts;
	s->nsets = (uint32_t)(sets / sample / parts * parts);
	s->rng = mix(c->seed) | 1;
	if (c->by_page && page_hash_init(s, sets / parts, why)) {
		free(s);
		return NULL;
	}
	s->ways = calloc((size_t)s->nsets * c->ways, sizeof(*s->ways));
	if (!s->ways) {
		free(s);
		return NULL;
	}
	return s;
}

void
l2sets_destroy(struct l2sets *s)
{
	if (!s)
		return;
	free(s->ways);
	free(s);
}

/* The way to fill in set w[0 .. n): an empty one, else the policy's victim. */
static struct way *
victim(struct l2sets *s, struct way *w, uint32_t n)
{
	struct way *v = NULL;

	for (uint32_t i = 0; i < n; i++)
		if (!w[i].key)
			return &w[i];
	switch (s->c.policy) {
	case L2SETS_LRU:
		v = &w[0];
		for (uint32_t i = 1; i < n; i++)
			if (w[i].used < v->used)
				v = &w[i];
		return v;
	case L2SETS_SRRIP:
		for (;;) {
			for (uint32_t i = 0; i < n; i++)
				if (w[i].rrpv >= RRPV_MAX)
					return &w[i];
			for (uint32_t i = 0; i < n; i++)
				w[i].rrpv++;
		}
	case L2SETS_RANDOM:
	default:
		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		return &w[s->rng % n];
	}
}

/* Cleans the set's oldest-written dirty line but keep when the set has more dirty lines than
 * the cap. */
static void
cap_dirty(struct l2sets *s, struct way *w, uint32_t n, const struct way *keep)
{
	struct way *old = NULL;
	uint32_t dirty = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!w[i].dirty)
			continue;
		dirty++;
		if (&w[i] != keep && (!old || w[i].written < old->written))
			old = &w[i];
	}
	if (dirty > s->c.dirty_ways && old) {
		s->write[old->cls] += old->bytes;
		old->dirty = false;
	}
}

/* The way holding key in set w[0 .. n), or NULL. */
static struct way *
find(struct way *w, uint32_t n, uint64_t key)
{
	for (uint32_t i = 0; i < n; i++)
		if (w[i].key == key)
			return &w[i];
	return NULL;
}

/* Accesses key (already + 1) in set w: a hit renews it; a miss fills a victim's way (writing
 * the victim if dirty) and, for a load that counts (fetch), reads its bytes, and for a load
 * looked up first here (lookup), counts a lookup miss. */
static struct way *
set_access(struct l2sets *s, struct way *w, uint64_t key, uint8_t bytes, unsigned cls, bool write,
	   bool fetch, bool lookup)
{
	uint32_t n = s->c.ways;
	struct way *e = find(w, n, key);

	if (e) {
		e->rrpv = 0;
	} else {
		e = victim(s, w, n);
		if (e->key && e->dirty)
			s->write[e->cls] += e->bytes;
		*e = (struct way){ .key = key, .rrpv = RRPV_INSERT, .bytes = bytes };
		if (!write && fetch)
			s->read[cls] += bytes;
		if (!write && lookup)
			s->lookup_miss[cls] += bytes;
	}
	e->used = ++s->clock;
	e->cls = (uint8_t)cls;
	if (write) {
		e->dirty = true;
		e->written = s->clock;
		if (s->c.dirty_ways)
			cap_dirty(s, w, n, e);
	}
	return e;
}

/* The home set of key (not yet + 1): its partition's half of the sets, then a hash. */
static uint32_t
home_set(const struct l2sets *s, uint64_t key, unsigned *home)
{
	uint64_t h = mix(key ^ s->c.seed), per = s->nsets / s->parts;

	*home = s->parts == 2 ? (unsigned)(h >> 63) : 0;
	return (uint32_t)(*home * per + h % per);
}

uint32_t
l2sets_set_of(const struct l2sets *s, uint64_t id, uint32_t line)
{
	unsigned home;

	return home_set(s, id << 16 | line, &home);
}

/* by_page: the line at addr's x and y in its partition, the partition in *home. */
static void
page_xy(const struct l2sets *s, uint64_t addr, uint32_t *x, uint32_t *y, unsigned *home)
{
	uint64_t page = addr >> PAGE_SHIFT;
	uint32_t i = (uint32_t)(addr / L2SETS_LINE) & ((1u << PAGE_LINE_BITS) - 1);
	uint64_t h = mix(page ^ s->c.seed);

	*y = 0;
	for (unsigned j = 0; j < PAGE_YBITS; j++)
		*y |= parity(i & s->yrow[j]) << j;
	*x = (uint32_t)((h % s->nx + (i >> PAGE_KSHIFT)) % s->nx);
	*home = s->parts == 2 ? parity(i & PAGE_PART_MASK) ^ (unsigned)(h >> 63) : 0;
}

uint32_t
l2sets_page_set_of(const struct l2sets *s, uint64_t addr, unsigned *home)
{
	uint32_t x, y;

	page_xy(s, addr, &x, &y, home);
	return x << PAGE_YBITS | y;
}

/* One line (key not yet + 1) in set `set` of partition `home`, from an SM on side `side`. Two
 * partitions: stores go to the home; a load from the other side looks for a copy in its own
 * partition first, then reads the home (from DRAM on a miss there) and keeps a clean copy. */
static void
line_access_in(struct l2sets *s, uint64_t key, uint32_t set, unsigned home, uint8_t bytes,
	       unsigned cls, bool write, unsigned side)
{
	uint32_t per = s->nsets / s->parts;
	struct way *hw = &s->ways[(size_t)set * s->c.ways], *nw, *c;

	key++;
	if (write || home == side || s->parts == 1) {
		set_access(s, hw, key, bytes, cls, write, true, true);
		return;
	}
	nw = &s->ways[(size_t)(side * per + set % per) * s->c.ways];
	if ((c = find(nw, s->c.ways, key))) {
		set_access(s, nw, key, bytes, cls, false, false, false);
		return;
	}
	s->lookup_miss[cls] += bytes;
	set_access(s, hw, key, bytes, cls, false, true, false);
	set_access(s, nw, key, bytes, cls, false, false, false);
}

/* One line of a tile: its home and set a hash of its key. */
static void
line_access(struct l2sets *s, uint64_t key, uint8_t bytes, unsigned cls, bool write, unsigned side)
{
	unsigned home;
	uint32_t set = home_set(s, key, &home);

	line_access_in(s, key, set, home, bytes, cls, write, side);
}

void
l2sets_access_at(struct l2sets *s, uint64_t addr, uint32_t bytes, unsigned cls, bool write,
		 unsigned side)
{
	uint32_t mask = s->c.sample - 1, per = s->nsets / s->parts;

	for (uint64_t a = addr / L2SETS_LINE * L2SETS_LINE; a < addr + bytes; a += L2SETS_LINE) {
		uint64_t lo = a > addr ? a : addr, hi = a + L2SETS_LINE;
		uint32_t x, y;
		unsigned home;

		if (hi > addr + bytes)
			hi = addr + bytes;
		page_xy(s, a, &x, &y, &home);
		if (y & mask)
			continue;
		line_access_in(s, a / L2SETS_LINE,
			       home * per + x * s->ysim + (y >> __builtin_ctz(s->c.sample)), home,
			       (uint8_t)(hi - lo), cls, write, side & 1);
	}
}

void
l2sets_access(struct l2sets *s, uint64_t id, uint32_t bytes, unsigned cls, bool write,
	      unsigned side)
{
	uint32_t k = s->c.sample, lines = (bytes + L2SETS_LINE - 1) / L2SETS_LINE;
	uint32_t o = (uint32_t)((k - mix(id ^ ~s->c.seed) % k) % k);

	for (; o < lines && o < (1u << 16); o += k) {
		uint32_t rest = bytes - o * L2SETS_LINE;

		line_access(s, id << 16 | o, (uint8_t)(rest < L2SETS_LINE ? rest : L2SETS_LINE),
			    cls, write, side & 1);
	}
}

struct tilelru_traffic
l2sets_dram(const struct l2sets *s, unsigned cls)
{
	struct tilelru_traffic t = { 0, 0 };

	for (unsigned i = 0; i < TILELRU_CLASSES; i++) {
		if (cls < TILELRU_CLASSES && i != cls)
			continue;
		t.read_bytes += s->read[i] * s->c.sample;
		t.write_bytes += s->write[i] * s->c.sample;
	}
	return t;
}

uint64_t
l2sets_read_lookup_misses(const struct l2sets *s, unsigned cls)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < TILELRU_CLASSES; i++)
		if (cls >= TILELRU_CLASSES || i == cls)
			n += s->lookup_miss[i];
	return n * s->c.sample;
}

uint64_t
l2sets_held_lines(const struct l2sets *s, uint64_t *dirty)
{
	uint64_t n = 0, d = 0;

	for (size_t i = 0; i < (size_t)s->nsets * s->c.ways; i++) {
		n += s->ways[i].key != 0;
		d += s->ways[i].dirty;
	}
	if (dirty)
		*dirty = d;
	return n;
}

uint32_t
l2sets_nsets(const struct l2sets *s)
{
	return s->nsets;
}
