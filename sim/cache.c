/*
 * Notes:
 *  - A line is named by its line address (addr >> line_shift). A set's slots hold
 *    (line << 1) | dirty, or TAG_INVALID when empty.
 *  - LRU and FIFO keep each set's slots in order, most recently used (LRU) or newest (FIFO)
 *    first, the valid slots a prefix; so the victim is always the last slot and an LRU hit on
 *    slot 0 changes nothing. Random and tree-PLRU keep lines in fixed slots and fill the first
 *    empty slot before evicting anything.
 *  - A miss that allocates takes its victim out of the set, sends the fetch below, installs
 *    the line, and only then writes the victim back (or hands it to an exclusive level below):
 *    Dinero IV's order (its pending stack is LIFO and the copy-back is pushed first), so after
 *    an L1 miss the level below has the victim's line as its most recent.
 *  - A write-back from above is a write access to the level below (Dinero IV): it updates
 *    recency, and on a miss a write-allocate level allocates the line, fetching it first only
 *    if the write does not cover the whole line. A level marked quiet_writebacks instead marks
 *    a present line dirty without touching recency and passes an absent one down, which is how
 *    Cachegrind (which ignores write-backs) behaves.
 *  - The final flush writes dirty lines back level by level from L1 down; inside a level it
 *    goes from the last set to the first and, inside a set, from the least recent slot up:
 *    the order in which Dinero IV's end-of-trace copy-back reaches the level below.
 *  - An access that straddles lines touches every line it spans and counts once per line,
 *    except on a straddle_once level, which counts an access over two lines as Cachegrind
 *    does (cg_sim.c cachesim_ref_is_miss()): one reference, a miss if either line misses, and
 *    on a miss the level below is referenced with both lines, the one that hit too, again as
 *    one reference where that level counts once. Lines still move one by one: fills,
 *    evictions, write-backs and DRAM bytes are per line.
 *  - Merged repeats (count > 1): the first access is simulated and the others are hits on the
 *    line it just made most recent, which changes no replacement state under any policy here.
 *    Where repeats still travel (write-through, a no-write-allocate miss) they travel with
 *    their count. Below an inclusive level the first access's own victim can take the line
 *    back (repeat_ref()): the repeats then go one by one until it stays.
 *  - Write-validate keeps a valid-bit per granule (a byte for lines up to 64 bytes, line/64
 *    bytes above): a store miss allocates without a fetch; a load that touches a granule no
 *    store made valid fetches the line then (counted as a read miss and a fill). Dirty lines
 *    are written back whole.
 *  - DRAM bytes: a fill moves the requesting level's line; a write-back moves a line; a write
 *    that passes the last level (write-through, no-write-allocate) moves its own bytes.
 */

#include "sim/cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/name_index.h"
#include "base/util.h"
#include "sim/cache_internal.h"

/* ---- accounting ---- */

static inline unsigned
find_array(struct cache *c, uint64_t addr)
{
	const struct array *a = &c->arrays[c->last_array];

	if (c->last_array && addr - a->base < a->len)
		return c->last_array;
	/* Loops walk two or three arrays in turn: the one before the last is the next guess. */
	a = &c->arrays[c->prev_array];
	if (c->prev_array && addr - a->base < a->len) {
		unsigned i = c->prev_array;

		c->prev_array = c->last_array;
		c->last_array = i;
		return i;
	}
	for (unsigned i = c->narrays; i-- > 1;) {
		a = &c->arrays[i];
		if (addr - a->base < a->len) {
			c->prev_array = c->last_array;
			c->last_array = i;
			return i;
		}
	}
	return 0;
}

static inline void
traffic_add(struct cache_traffic *t, uint64_t bytes, bool write, unsigned flags)
{
	if (write) {
		t->write_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_write_bytes += bytes;
	} else {
		t->read_bytes += bytes;
		if (flags & F_RFO)
			t->rfo_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_read_bytes += bytes;
	}
}

/* cache_dram_transfer() of an address in array a. */
static inline void
array_transfer(struct cache *c, unsigned a, uint64_t bytes, bool write, unsigned flags)
{
	struct phase *p = &c->phases[c->cur_phase];

	/* Only the (phase, array) cell: the totals are summed from the cells when asked for. */
	traffic_add(&p->per_array[a], bytes, write, flags);
}

/* find_array() and traffic_add() for the one-pass driver, which counts its fills apart. */
unsigned
cache_array_of(struct cache *c, uint64_t addr)
{
	return find_array(c, addr);
}

void
cache_traffic_add(struct cache_traffic *t, uint64_t bytes, bool write, unsigned flags)
{
	traffic_add(t, bytes, write, flags);
}

/* ---- set operations ---- */

static inline int
scan_way(const uint64_t *set, uint32_t ways, uint64_t line)
{
	size_t i = 0;

	/* Four slots a step, so the loop's own test and count come once per four slots: on a
	 * miss of a 16-way level the loop was a third of the lookup. (A size_t index: with a
	 * 32-bit one the compiler widens each i + k on its own.) */
	for (; i + 4 <= ways; i += 4) {
		if ((set[i] >> 1) == line)
			return (int)i;
		if ((set[i + 1] >> 1) == line)
			return (int)i + 1;
		if ((set[i + 2] >> 1) == line)
			return (int)i + 2;
		if ((set[i + 3] >> 1) == line)
			return (int)i + 3;
	}
	for (; i < ways; i++)
		if ((set[i] >> 1) == line)
			return (int)i;
	return -1;
}

/* -- the index of high-associativity levels -- */

static inline uint64_t
hash_home(const struct level *L, uint64_t line)
{
	return (line * UINT64_C(0x9e3779b97f4a7c15)) >> L->hash_shift;
}

static inline int
index_find(const struct level *L, uint64_t set_idx, uint64_t line)
{
	for (uint64_t i = hash_home(L, line);; i = (i + 1) & L->hash_mask) {
		uint32_t h = L->hash[i];

		if (h == 0)
			return -1;
		if ((L->tags[h - 1] >> 1) == line)
			return (int)(h - 1 - set_idx * L->ways);
	}
}

static inline void
index_insert(struct level *L, uint64_t line, uint32_t g)
{
	uint64_t i = hash_home(L, line);

	while (L->hash[i])
		i = (i + 1) & L->hash_mask;
	L->hash[i] = g + 1;
}

/* Linear-probing removal with backward shift: later entries of the run move into the hole
 * when their home position allows it, so lookups never need tombstones. */
static inline void
index_remove(struct level *L, uint64_t line)
{
	uint64_t i = hash_home(L, line), j;

	while ((L->tags[L->hash[i] - 1] >> 1) != line)
		i = (i + 1) & L->hash_mask;
	for (j = i;;) {
		uint64_t k;

		j = (j + 1) & L->hash_mask;
		if (L->hash[j] == 0)
			break;
		k = hash_home(L, L->tags[L->hash[j] - 1] >> 1);
		/* Move entry j into hole i unless its home lies cyclically in (i, j]. */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			L->hash[i] = L->hash[j];
			i = j;
		}
	}
	L->hash[i] = 0;
}

static inline void
list_unlink(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t p = L->prev[g], n = L->next[g];

	if (p == NIL)
		L->head[set_idx] = n;
	else
		L->next[p] = n;
	if (n == NIL)
		L->tail[set_idx] = p;
	else
		L->prev[n] = p;
}

static inline void
list_push_front(struct level *L, uint64_t set_idx, uint32_t g)
{
	uint32_t h = L->head[set_idx];

	L->prev[g] = NIL;
	L->next[g] = h;
	if (h == NIL)
		L->tail[set_idx] = g;
	else
		L->prev[h] = g;
	L->head[set_idx] = g;
}

static inline int
find_way(const struct level *L, const uint64_t *set, uint64_t set_idx, uint64_t line)
{
	return L->indexed ? index_find(L, set_idx, line) : scan_way(set, L->ways, line);
}

static inline void
plru_touch(struct level *L, uint64_t set_idx, uint32_t way)
{
	uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned depth = log2_u64(L->ways);
	unsigned node = 1;

	/* Each node points to the half that holds the next victim: away from this way. */
	for (unsigned d = depth; d-- > 0;) {
		unsigned go = (way >> d) & 1;

		bits[node] = (uint8_t)!go;
		node = node * 2 + go;
	}
}

static inline uint32_t
plru_victim(const struct level *L, uint64_t set_idx)
{
	const uint8_t *bits = L->plru + set_idx * L->ways;
	unsigned node = 1;

	while (node < L->ways)
		node = node * 2 + bits[node];
	return node - L->ways;
}

static inline uint64_t
rng_next(struct level *L)
{
	/* xorshift64*: small, fast and reproducible from the seed. */
	L->rng ^= L->rng >> 12;
	L->rng ^= L->rng << 25;
	L->rng ^= L->rng >> 27;
	return L->rng * UINT64_C(2685821657736338717);
}

/* touch() for indexed, random and tree-PLRU levels. */
static inline uint32_t
touch_other(struct level *L, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		if (L->cfg.repl == CACHE_REPL_LRU && L->head[set_idx] != g) {
			list_unlink(L, set_idx, g);
			list_push_front(L, set_idx, g);
		} else if (L->cfg.repl == CACHE_REPL_PLRU) {
			plru_touch(L, set_idx, w);
		}
		return w;
	}
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Marks slot w used; returns where the line sits afterwards. */
static inline uint32_t
touch(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->lru_order) {
		if (w > 0) {
			uint64_t e = set[w];

			slots_up(set, w);
			set[0] = e;
			if (L->mask) {
				uint64_t *m = L->mask + set_idx * L->ways;
				uint64_t me = m[w];

				slots_up(m, w);
				m[0] = me;
			}
		}
		return 0;
	}
	if (L->ordered)
		return w; /* FIFO: a hit changes nothing */
	return touch_other(L, set_idx, w);
}

static inline void
remove_slot(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	if (L->indexed) {
		uint32_t g = (uint32_t)(set_idx * L->ways + w);

		index_remove(L, set[w] >> 1);
		list_unlink(L, set_idx, g);
		set[w] = TAG_INVALID;
		if (L->mask)
			L->mask[g] = 0;
		L->next[g] = L->free_head[set_idx];
		L->free_head[set_idx] = g;
		return;
	}
	if (L->ordered) {
		uint32_t tail = L->ways - 1 - w;

		slots_down(set + w, tail);
		set[L->ways - 1] = TAG_INVALID;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_down(m + w, tail);
			m[L->ways - 1] = 0;
		}
		return;
	}
	set[w] = TAG_INVALID;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = 0;
}

/* Returns a free slot, or -1 when the set is full. */
static inline int
free_slot(const struct level *L, const uint64_t *set, uint64_t set_idx)
{
	if (L->indexed)
		return L->free_head[set_idx] == NIL
			       ? -1
			       : (int)(L->free_head[set_idx] - set_idx * L->ways);
	if (L->ordered)
		return set[L->ways - 1] == TAG_INVALID ? (int)L->ways - 1 : -1;
	for (uint32_t i = 0; i < L->ways; i++)
		if (set[i] == TAG_INVALID)
			return (int)i;
	return -1;
}

static inline uint32_t
choose_victim(struct level *L, uint64_t set_idx)
{
	switch (L->cfg.repl) {
	case CACHE_REPL_RANDOM:
		return (uint32_t)(rng_next(L) % L->ways);
	case CACHE_REPL_PLRU:
		return plru_victim(L, set_idx);
	default:
		/* LRU and FIFO: the end of the order. */
		return L->indexed ? (uint32_t)(L->tail[set_idx] - set_idx * L->ways) : L->ways - 1;
	}
}

/* Installs a line into the free slot w; returns its slot. */
static inline uint32_t
install(struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w, uint64_t line, bool dirty,
	uint64_t mask)
{
	uint64_t e = (line << 1) | (dirty ? 1 : 0);

	if (L->indexed) {
		/* Any free slot will do: take the first of the free list. */
		uint32_t g = L->free_head[set_idx];

		L->free_head[set_idx] = L->next[g];
		w = (uint32_t)(g - set_idx * L->ways);
		set[w] = e;
		if (L->mask)
			L->mask[g] = mask;
		index_insert(L, line, g);
		list_push_front(L, set_idx, g);
		if (L->cfg.repl == CACHE_REPL_PLRU)
			plru_touch(L, set_idx, w);
		return w;
	}
	if (L->ordered) {
		slots_up(set, L->ways - 1);
		set[0] = e;
		if (L->mask) {
			uint64_t *m = L->mask + set_idx * L->ways;

			slots_up(m, L->ways - 1);
			m[0] = mask;
		}
		return 0;
	}
	set[w] = e;
	if (L->mask)
		L->mask[set_idx * L->ways + w] = mask;
	if (L->cfg.repl == CACHE_REPL_PLRU)
		plru_touch(L, set_idx, w);
	return w;
}

/* Granules of [addr, addr + size) inside one line: touched ones, or only fully written ones. */
static inline uint64_t
granules(const struct level *L, uint64_t addr, uint32_t size, bool whole_only)
{
	uint64_t off = addr & (L->cfg.line_bytes - 1);
	uint64_t g = UINT64_C(1) << L->granule_shift;
	uint64_t first = whole_only ? (off + g - 1) >> L->granule_shift : off >> L->granule_shift;
	uint64_t end = whole_only ? (off + size) >> L->granule_shift
				  : ((off + size - 1) >> L->granule_shift) + 1;
	uint64_t n;

	if (end <= first)
		return 0;
	n = end - first;
	return (n >= 64 ? UINT64_MAX : ((UINT64_C(1) << n) - 1)) << first;
}

/* ---- inclusion ---- */

/* Inclusive levels: a line leaving one takes its copies out of every level above it (rare). */
/* Removes the lines inside line `line` of level li from every level above li. Returns true if
 * any removed copy was dirty (its data joins li's write-back). */
static bool
back_invalidate(struct cache *c, int li, uint64_t line)
{
	unsigned shift = c->lv[li].line_shift;
	uint64_t base = line << shift, last = base + ((UINT64_C(1) << shift) - 1);
	bool dirty = false;

	for (unsigned u = 0; u < c->nlv; u++) {
		struct level *U = &c->lv[u];

		/* Levels above li: data levels 0..li-1, and I1 when it feeds a level at or above
		 * li. */
		if ((int)u == li || (u < c->ndata && (int)u > li))
			continue;
		if ((int)u == c->icache && (U->below < 0 || U->below > li))
			continue;
		for (uint64_t a = base;; a += U->cfg.line_bytes) {
			uint64_t ul = a >> U->line_shift;
			uint64_t si = ul & U->set_mask;
			uint64_t *set = U->tags + si * U->ways;
			int w = find_way(U, set, si, ul);

			if (w >= 0) {
				dirty |= set[w] & 1;
				remove_slot(U, set, si, (uint32_t)w);
				U->st.invalidations++;
			}
			if (last - a < U->cfg.line_bytes)
				break;
		}
	}
	return dirty;
}

/* array_transfer() of addr's array. Out of line and not static (cache_flush.c and the one-pass
 * driver call it): inlined at every miss, it grew the access path's functions past the size
 * where line_below() is still inlined into them. */
void
cache_dram_transfer(struct cache *c, uint64_t addr, uint64_t bytes, bool write, unsigned flags)
{
	array_transfer(c, find_array(c, addr), bytes, write, flags);
}

/* ---- the hierarchy ---- */

/* The functions below take the level itself (struct level *), not its index: a miss passes
 * through several of them per level, and each would otherwise index c->lv again. */

static unsigned level_ref(struct cache *c, struct level *L, uint64_t addr, uint32_t size,
			  enum req req, uint32_t count, unsigned flags);

/* Sends a request for [addr, addr + size) to level B of model c, split into B's lines. */
static inline unsigned
span_ref(struct cache *c, struct level *B, uint64_t addr, uint64_t size, enum req req,
	 uint32_t count, unsigned flags)
{
	uint64_t last = addr + (size - 1); /* the last byte: [addr, addr + size) may end at 2^64 */
	unsigned res = 0;

	for (;;) {
		uint64_t piece_last = addr | (B->cfg.line_bytes - 1);

		if (piece_last > last)
			piece_last = last;
		res |= level_ref(c, B, addr, (uint32_t)(piece_last - addr + 1), req, count, flags);
		if (piece_last == last)
			break;
		addr = piece_last + 1;
	}
	return res;
}

static int
level_index(const struct cache *c, const struct level *L)
{
	return (int)(L - c->lv);
}

/* Sends a request for [addr, addr + size) to what lies below level L, split into the lines of
 * the level below. */
static unsigned
to_below(struct cache *c, const struct level *L, uint64_t addr, uint64_t size, enum req req,
	 uint32_t count, unsigned flags)
{
	struct level *B = L->lower;

	if (!B)
		return c->drive->below(c, addr, size, req, count, flags);
	return span_ref(c, B, addr, size, req, count, flags);
}

/* Sends line `line` of level L below, whole, once (a fill, a write-back, a victim): to_below()
 * without the split where the level below's lines are at least as large. */
static inline unsigned
line_below(struct cache *c, const struct level *L, uint64_t line, enum req req, unsigned flags)
{
	uint64_t addr = line << L->line_shift;

	if (L->lower_whole)
		return level_ref(c, L->lower, addr, L->cfg.line_bytes, req, 1, flags);
	if (!L->lower)
		return c->drive->below(c, addr, L->cfg.line_bytes, req, 1, flags);
	return to_below(c, L, addr, L->cfg.line_bytes, req, 1, flags);
}

/* A dirty line of level L written back below by the final flush: line_below() for
 * cache_flush.c, which inline stays here on the access path. */
void
cache_flush_writeback(struct cache *c, const struct level *L, uint64_t line)
{
	line_below(c, L, line, REQ_WRITEBACK, F_FLUSH);
}

/* A line taken out of a set to make room, waiting to be written back. */
struct victim {
	bool valid;
	bool dirty;
	uint64_t line;
};

/* Takes slot w of level L's set as a victim: counts the eviction, removes the line from the
 * set unless L->keep_victim lets it stay until install() overwrites it, and, for an inclusive
 * level, back-invalidates the levels above (their dirty data joins the victim). */
static ALWAYS_INLINE struct victim
take_victim(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint32_t w)
{
	struct victim v = { true, set[w] & 1, set[w] >> 1 };

	L->st.evictions++;
	if (!L->keep_victim)
		remove_slot(L, set, set_idx, w);
	if (L->cfg.inclusion == CACHE_INCL_INCLUSIVE)
		v.dirty |= back_invalidate(c, level_index(c, L), v.line);
	return v;
}

/* Sends a victim below: a write-back if dirty, or the hand-over to an exclusive level. */
static void
dispose_victim(struct cache *c, struct level *L, const struct victim *v, unsigned flags)
{
	flags &= F_FLUSH;
	if (v->dirty) {
		L->st.writebacks++;
		if (flags & F_FLUSH)
			L->st.flush_writebacks++;
	}
	if (L->below_exclusive)
		line_below(c, L, v->line, REQ_VICTIM, flags | (v->dirty ? F_DIRTY : 0));
	else if (v->dirty)
		line_below(c, L, v->line, REQ_WRITEBACK, flags);
}

/* Allocates `line` in level L after a miss, in Dinero IV's order: the victim leaves the set,
 * the fetch (with F_FETCH) reaches the level below, the line is installed (dirty with
 * F_NEW_DIRTY, with write-validate mask `mask`), and only then does the victim's write-back
 * go down. */
static void
allocate(struct cache *c, struct level *L, uint64_t *set, uint64_t line, uint64_t mask,
	 unsigned flags)
{
	uint64_t set_idx = line & L->set_mask;
	bool dirty = flags & F_NEW_DIRTY;
	struct victim v = { false, false, 0 };
	int w;

	if (L->ordered) {
		/* The valid slots are a prefix, in order: the last slot is free or the victim,
		 * and after a removal the free slot is the last one again. */
		w = (int)L->ways - 1;
		if (set[w] != TAG_INVALID)
			v = take_victim(c, L, set, set_idx, (uint32_t)w);
	} else {
		w = free_slot(L, set, set_idx);
		if (w < 0) {
			w = (int)choose_victim(L, set_idx);
			v = take_victim(c, L, set, set_idx, (uint32_t)w);
		}
	}
	if (flags & F_FETCH) {
		unsigned res =
			line_below(c, L, line, REQ_READ, flags & (F_RFO | F_IFETCH | F_FLUSH));

		L->st.fills++;
		dirty |= res & RES_DIRTY;
	}
	install(L, set, set_idx, (uint32_t)w, line, dirty, mask);
	if (v.valid)
		dispose_victim(c, L, &v, flags);
}

static void
count_read_miss(struct level *L, unsigned flags)
{
	L->st.read_misses++;
	if (flags & F_RFO)
		L->st.rfo_misses++;
	if (flags & F_IFETCH)
		L->st.ifetch_misses++;
}

static unsigned
level_read(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line, int w,
	   uint64_t addr, uint32_t size, unsigned flags)
{
	if (L->cfg.inclusion == CACHE_INCL_EXCLUSIVE) {
		/* A victim cache hands the line up and forgets it; a miss is fetched from below
		 * straight into the level above. */
		if (w >= 0) {
			unsigned res = (set[w] & 1) ? RES_DIRTY : 0;

			remove_slot(L, set, set_idx, (uint32_t)w);
			return res;
		}
		count_read_miss(L, flags);
		return line_below(c, L, line, REQ_READ, flags & (F_RFO | F_IFETCH | F_FLUSH));
	}
	if (w >= 0) {
		uint32_t nw = touch(L, set, set_idx, (uint32_t)w);

		if (L->mask) {
			uint64_t *m = &L->mask[set_idx * L->ways + nw];

			if ((*m & granules(L, addr, size, false)) !=
			    granules(L, addr, size, false)) {
				/* Write-validated line with bytes never written: fetch them now. */
				count_read_miss(L, flags);
				line_below(c, L, line, REQ_READ,
					   flags & (F_RFO | F_IFETCH | F_FLUSH));
				L->st.fills++;
				*m = L->full_mask;
			}
		}
		return 0;
	}
	count_read_miss(L, flags);
	allocate(c, L, set, line, L->mask ? L->full_mask : 0, flags | F_FETCH);
	return 0;
}

static void
level_write(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line, int w,
	    uint64_t addr, uint32_t size, enum req req, uint32_t count, unsigned flags)
{
	bool through = L->cfg.write == CACHE_WRITE_THROUGH;
	uint64_t wmask = L->mask ? granules(L, addr, size, true) : 0;

	if (w >= 0) {
		uint32_t nw = (req == REQ_WRITEBACK && L->cfg.quiet_writebacks)
				      ? (uint32_t)w
				      : touch(L, set, set_idx, (uint32_t)w);

		if (L->mask)
			L->mask[set_idx * L->ways + nw] |= wmask;
		if (through)
			to_below(c, L, addr, size, req, count, flags & F_FLUSH);
		else
			set[nw] |= 1;
		return;
	}
	if (L->cfg.inclusion == CACHE_INCL_EXCLUSIVE || L->cfg.alloc == CACHE_ALLOC_NONE ||
	    (req == REQ_WRITEBACK && L->cfg.quiet_writebacks)) {
		/* No allocation: every repeat misses and passes down. */
		L->st.write_misses += count;
		to_below(c, L, addr, size, req, count, flags & F_FLUSH);
		return;
	}
	L->st.write_misses++;
	if (L->cfg.alloc == CACHE_ALLOC_VALIDATE) {
		allocate(c, L, set, line, wmask, flags | (through ? 0 : F_NEW_DIRTY));
	} else {
		/* Write-allocate fetches the line unless the write covers all of it (a write-back
		 * of an equal-sized line): nothing would be merged, so Dinero IV skips the fetch.
		 */
		bool whole = size == L->cfg.line_bytes;

		allocate(c, L, set, line, L->mask ? L->full_mask : 0,
			 flags | F_RFO | (whole ? 0 : F_FETCH) | (through ? 0 : F_NEW_DIRTY));
	}
	if (through)
		to_below(c, L, addr, size, req, count, flags & F_FLUSH);
}

static void
level_victim(struct cache *c, struct level *L, uint64_t *set, uint64_t set_idx, uint64_t line,
	     int w, unsigned flags)
{
	bool dirty = flags & F_DIRTY;

	L->st.victims_in++;
	if (w >= 0) {
		uint32_t nw = touch(L, set, set_idx, (uint32_t)w);

		set[nw] |= dirty ? 1 : 0;
		return;
	}
	allocate(c, L, set, line, L->mask ? L->full_mask : 0,
		 (flags & F_FLUSH) | (dirty ? F_NEW_DIRTY : 0));
}

/* One request to level L for bytes inside one of its lines. */
static unsigned
level_ref(struct cache *c, struct level *L, uint64_t addr, uint32_t size, enum req req,
	  uint32_t count, unsigned flags)
{
	uint64_t line = addr >> L->line_shift;
	uint64_t set_idx = line & L->set_mask;
	uint64_t *set = L->tags + set_idx * L->ways;
	int w = find_way(L, set, set_idx, line);

	switch (req) {
	case REQ_READ:
		if (!(flags & F_COUNTED))
			L->st.reads += count;
		return level_read(c, L, set, set_idx, line, w, addr, size, flags & ~F_COUNTED);
	case REQ_VICTIM:
		level_victim(c, L, set, set_idx, line, w, flags);
		return 0;
	default:
		if (!(flags & F_COUNTED))
			L->st.writes += count;
		level_write(c, L, set, set_idx, line, w, addr, size, req, count,
			    flags & ~F_COUNTED);
		return 0;
	}
}

bool
cache_scratch_bytes(struct cache *c, uint64_t addr, enum cache_op op, uint64_t bytes)
{
	struct array *a;

	if (addr - c->scratch_lo >= c->scratch_len)
		return false;
	/* The array owning addr (the last declared where ranges overlap), as for DRAM traffic. */
	a = &c->arrays[find_array(c, addr)];
	if (!a->scratch)
		return false;
	a->scratch_bytes[op == CACHE_OP_STORE] += bytes;
	if (op == CACHE_OP_STORE)
		c->cpu.scratch_write_bytes += bytes;
	else
		c->cpu.scratch_read_bytes += bytes;
	return true;
}

bool
cache_scratch_access(struct cache *c, uint64_t addr, enum cache_op op, uint32_t count,
		     uint64_t bytes)
{
	if (!c->nscratch || op > CACHE_OP_STORE || !cache_scratch_bytes(c, addr, op, bytes))
		return false;
	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	return true;
}

static uint64_t
misses_of(const struct cache_level_stats *st)
{
	return st->read_misses + st->write_misses;
}

/* What an access over two lines added to the access level's counters since `before`, counted
 * as one reference (count of them, its repeats) and at most one miss, Cachegrind's way. */
static void
count_once(struct cache_level_stats *st, const struct cache_level_stats *before, bool write,
	   uint32_t count)
{
	bool missed = misses_of(st) > misses_of(before);

	if (write) {
		st->writes = before->writes + count;
		st->write_misses = before->write_misses + missed;
	} else {
		st->reads = before->reads + count;
		st->read_misses = before->read_misses + missed;
	}
	if (st->ifetch_misses > before->ifetch_misses)
		st->ifetch_misses = before->ifetch_misses + missed;
}

/* The same for a level below: the fills it served for the two lines (and the read of the line
 * that hit above) are one reference and at most one miss; writes (write-backs from above)
 * stay as they are. */
static void
count_once_below(struct cache_level_stats *st, const struct cache_level_stats *before)
{
	bool missed = st->read_misses > before->read_misses;

	if (st->reads > before->reads)
		st->reads = before->reads + 1;
	st->read_misses = before->read_misses + missed;
	if (st->rfo_misses > before->rfo_misses)
		st->rfo_misses = before->rfo_misses + missed;
	if (st->ifetch_misses > before->ifetch_misses)
		st->ifetch_misses = before->ifetch_misses + missed;
}

static void level_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
			uint32_t count, unsigned flags);

/* An access over exactly two lines of a straddle_once level L (see Notes). */
static void
access_once(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	    uint32_t count, unsigned flags)
{
	struct cache_level_stats before[CACHE_MAX_LEVELS + 1];
	int li = (int)(L - c->lv);
	uint64_t split = ((addr >> L->line_shift) + 1) << L->line_shift;
	uint64_t m0 = misses_of(&L->st), m1;
	bool miss_a, miss_b;

	for (unsigned i = 0; i < c->nlv; i++)
		before[i] = c->lv[i].st;
	level_lines(c, L, addr, (uint32_t)(split - addr), write, count, flags);
	m1 = misses_of(&L->st);
	level_lines(c, L, split, (uint32_t)(addr + size - split), write, count, flags);
	miss_a = m1 > m0;
	miss_b = misses_of(&L->st) > m1;
	/* One line missed, the other hit: the level below sees the hit line too. */
	if (miss_a != miss_b && L->below >= 0) {
		uint64_t a = miss_a ? split : addr, n = miss_a ? addr + size - split : split - addr;

		to_below(c, L, a, n, REQ_READ, 1, flags & (F_IFETCH | F_FLUSH));
	}
	count_once(&L->st, &before[li], write, count);
	for (int b = L->below; b >= 0; b = c->lv[b].below)
		if (c->lv[b].cfg.straddle_once)
			count_once_below(&c->lv[b].st, &before[b]);
}

/* One access through level L (L1, or I1 for instruction fetches), line by line. */
static void
access_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	     uint32_t count, unsigned flags)
{
	if (L->cfg.straddle_once &&
	    (addr >> L->line_shift) + 1 == (addr + size - 1) >> L->line_shift) {
		access_once(c, L, addr, size, write, count, flags);
		return;
	}
	level_lines(c, L, addr, size, write, count, flags);
}

/* Whether a level below L is inclusive: its back-invalidations can take from L a line that
 * an access to L just brought in (the access's own victim, written back below, may evict the
 * line's neighbour there, whose range covers it). */
static bool
back_invalidated(const struct level *L)
{
	for (const struct level *B = L->lower; B; B = B->lower)
		if (B->cfg.inclusion == CACHE_INCL_INCLUSIVE)
			return true;
	return false;
}

/* count repeats of one access to a line of L, as level_ref() takes them (the first simulated,
 * the others hits) only once the line stays in L after one: where a back-invalidation took it
 * they miss again, one at a time. A no-write-allocate store never stays: its repeats travel
 * below as they are. */
static void
repeat_ref(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	   uint32_t count, unsigned flags)
{
	uint64_t line = addr >> L->line_shift, set_idx = line & L->set_mask;
	const uint64_t *set = L->tags + set_idx * L->ways;
	enum req req = write ? REQ_WRITE : REQ_READ;

	while (count > 1 && find_way(L, set, set_idx, line) < 0 &&
	       !(write && L->cfg.alloc == CACHE_ALLOC_NONE)) {
		level_ref(c, L, addr, size, req, 1, flags);
		count--;
		if (find_way(L, set, set_idx, line) >= 0)
			break;
	}
	level_ref(c, L, addr, size, req, count, flags);
}

static void
level_lines(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
	    uint32_t count, unsigned flags)
{
	uint64_t first = addr >> L->line_shift;
	uint64_t last = (addr + size - 1) >> L->line_shift;

	for (uint64_t line = first;; line++) {
		uint64_t piece = line == first ? addr : line << L->line_shift;
		uint64_t piece_end = line == last ? addr + size : (line + 1) << L->line_shift;
		uint64_t *set = L->tags + (line & L->set_mask) * L->ways;

		/* Hit on the most recent slot: no replacement state changes (see Notes). */
		if ((set[0] >> 1) == line && (write ? L->fast_write : L->fast_read)) {
			if (write) {
				L->st.writes += count;
				set[0] |= 1;
			} else {
				L->st.reads += count;
			}
		} else if (count > 1 && back_invalidated(L)) {
			repeat_ref(c, L, piece, (uint32_t)(piece_end - piece), write, count, flags);
		} else {
			level_ref(c, L, piece, (uint32_t)(piece_end - piece),
				  write ? REQ_WRITE : REQ_READ, count, flags);
		}
		if (line == last)
			break;
	}
}

void
cache_level_access(struct cache *c, struct level *L, uint64_t addr, uint32_t size, bool write,
		   uint32_t count, unsigned flags)
{
	access_lines(c, L, addr, size, write, count, flags);
}

void
cache_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count)
{
	c->drive->access(c, addr, size, op, count, (uint64_t)size * count);
}

void
cache_access_merged(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
		    uint64_t bytes)
{
	c->drive->access(c, addr, size, op, count, bytes);
}

void
cache_plain_access(struct cache *c, uint64_t addr, uint32_t size, enum cache_op op, uint32_t count,
		   uint64_t bytes)
{
	bool write = op == CACHE_OP_STORE;

	c->cpu.ops[op] += count;
	c->cpu.bytes[op] += bytes;
	if (op == CACHE_OP_IFETCH) {
		if (c->icache >= 0)
			access_lines(c, &c->lv[c->icache], addr, size, false, count, F_IFETCH);
		return;
	}
	if (c->nscratch && cache_scratch_bytes(c, addr, op, bytes))
		return;
	if (c->ndata == 0) {
		cache_dram_transfer(c, addr, bytes, write, 0);
		return;
	}
	access_lines(c, &c->lv[0], addr, size, write, count, 0);
}

void
cache_scratch_add(struct cache *c, unsigned i, enum cache_op op, uint64_t accesses, uint64_t bytes)
{
	struct array *a = &c->arrays[i];

	c->cpu.ops[op] += accesses;
	c->cpu.bytes[op] += bytes;
	a->scratch_bytes[op == CACHE_OP_STORE] += bytes;
	if (op == CACHE_OP_STORE)
		c->cpu.scratch_write_bytes += bytes;
	else
		c->cpu.scratch_read_bytes += bytes;
}

/* ---- plain levels' misses ---- */

/* The miss path of plain levels (struct level's `plain`): LRU in ordered slots, write-back,
 * write-allocate, neither inclusive nor exclusive, no write-validate, no quiet write-backs,
 * lines as large as the plain level below, if any, and nothing but plain levels below. For
 * them, level_ref()/level_read()/level_write()/allocate() above reduce to what is here: a whole
 * line goes down at a time, nothing below hands a dirty line up, a victim keeps its slot until
 * the new line takes it. The same steps in the same order, so the same counters, without the
 * tests and arguments of the general path. */

static inline void plain_read(struct cache *c, struct level *L, uint64_t line, unsigned flags);
static inline void plain_writeback(struct cache *c, struct level *L, uint64_t line, unsigned flags);

/* A whole line read or written back at plain level B: the one place that calls
 * plain_read() and plain_writeback(), so that the compiler inlines both here. */
static void
plain_line(struct cache *c, struct level *B, uint64_t line, bool write, unsigned flags)
{
	if (write)
		plain_writeback(c, B, line, flags);
	else
		plain_read(c, B, line, flags);
}

/* A whole line of plain level L to what lies below it: line_below() for plain levels. Only what
 * a driver puts below the last level (c->drive->below) may answer RES_DIRTY. */
static inline unsigned
plain_below(struct cache *c, const struct level *L, uint64_t line, bool write, unsigned flags)
{
	uint64_t addr = line << L->line_shift;

	if (L->lower) {
		plain_line(c, L->lower, line, write, flags);
		return 0;
	}
	return c->drive->below(c, addr, L->cfg.line_bytes, write ? REQ_WRITEBACK : REQ_READ, 1,
			       flags);
}

/* allocate() at a plain level: the victim is the last slot, the fetch (when `fetch`) goes
 * below, the line is installed at the front, then the victim is written back if dirty. */
static ALWAYS_INLINE void
plain_allocate(struct cache *c, struct level *L, uint64_t *set, uint64_t line, bool dirty,
	       bool fetch, unsigned flags)
{
	uint64_t victim = set[L->ways - 1];

	if (victim != TAG_INVALID)
		L->st.evictions++;
	if (fetch) {
		dirty |= plain_below(c, L, line, false, flags & (F_RFO | F_IFETCH | F_FLUSH)) &
			 RES_DIRTY;
		L->st.fills++;
	}
	slots_up(set, L->ways - 1);
	set[0] = (line << 1) | (dirty ? 1 : 0);
	if (victim != TAG_INVALID && (victim & 1)) {
		L->st.writebacks++;
		if (flags & F_FLUSH)
			L->st.flush_writebacks++;
		plain_below(c, L, victim >> 1, true, flags & F_FLUSH);
	}
}

/* touch() at a plain level: slot w's line moves to the front. */
static ALWAYS_INLINE void
plain_touch(uint64_t *set, uint32_t w)
{
	uint64_t e = set[w];

	slots_up(set, w);
	set[0] = e;
}

/* level_ref(REQ_READ) of a whole line at plain level L, from the level above. */
static inline void
plain_read(struct cache *c, struct level *L, uint64_t line, unsigned flags)
{
	uint64_t *set = L->tags + (line & L->set_mask) * L->ways;
	int w = scan_way(set, L->ways, line);

	L->st.reads++;
	if (w >= 0) {
		plain_touch(set, (uint32_t)w);
		return;
	}
	L->st.read_misses++;
	if (flags & F_RFO)
		L->st.rfo_misses++;
	if (flags & F_IFETCH)
		L->st.ifetch_misses++;
	plain_allocate(c, L, set, line, false, true, flags);
}

/* level_ref(REQ_WRITEBACK) of a whole line at plain level L: a hit marks it dirty and most
 * recent; a miss allocates it dirty without a fetch (the write covers the line). */
static inline void
plain_writeback(struct cache *c, struct level *L, uint64_t line, unsigned flags)
{
	uint64_t *set = L->tags + (line & L->set_mask) * L->ways;
	int w = scan_way(set, L->ways, line);

	L->st.writes++;
	if (w >= 0) {
		plain_touch(set, (uint32_t)w);
		set[0] |= 1;
		return;
	}
	L->st.write_misses++;
	plain_allocate(c, L, set, line, true, false, flags | F_RFO);
}

unsigned
cache_span_refs(struct cache *const *m, unsigned n, unsigned li, uint64_t addr, uint64_t size,
		enum req req, uint32_t count, unsigned flags)
{
	const struct level *L0 = &m[0]->lv[li];
	uint64_t line = addr >> L0->line_shift;
	unsigned res = 0;

	if (count != 1 || size != L0->cfg.line_bytes || (addr & (size - 1)) ||
	    (req != REQ_READ && req != REQ_WRITEBACK)) {
		for (unsigned k = 0; k < n; k++)
			res |= span_ref(m[k], &m[k]->lv[li], addr, size, req, count, flags);
		return res;
	}
	/* One whole line, as a plain level above sends it. Every model's set is asked for before
	 * the first is looked at: the sizes' tags lie far apart, and each lookup would otherwise
	 * wait for memory in turn. */
	for (unsigned k = 0; k < n; k++) {
		const struct level *L = &m[k]->lv[li];

		__builtin_prefetch(L->tags + (line & L->set_mask) * L->ways);
	}
	for (unsigned k = 0; k < n; k++) {
		struct level *L = &m[k]->lv[li];

		if (L->plain)
			plain_line(m[k], L, line, req == REQ_WRITEBACK, flags);
		else
			res |= level_ref(m[k], L, addr, (uint32_t)size, req, 1, flags);
	}
	return res;
}

/* cache_fast_miss() at a plain L1: a load or store of [addr, addr + size) inside one line
 * that the set does not hold, counted as an access already. */
static inline void
plain_miss(struct cache *c, struct level *L, uint64_t *set, uint64_t line, uint32_t size,
	   unsigned op)
{
	if (op) {
		L->st.write_misses++;
		plain_allocate(c, L, set, line, true, size != L->cfg.line_bytes, F_RFO);
	} else {
		L->st.read_misses++;
		plain_allocate(c, L, set, line, false, true, 0);
	}
}

void
cache_fast_miss(struct cache *c, uint64_t addr, uint32_t size, unsigned op)
{
	struct level *L = &c->lv[0];
	uint64_t line = addr >> L->line_shift;
	uint64_t set_idx = line & L->set_mask;
	uint64_t *set = L->tags + set_idx * L->ways;

	/* level_ref() without the lookup the caller has made, and with the access counted. */
	if (L->plain)
		plain_miss(c, L, set, line, size, op);
	else if (op)
		level_write(c, L, set, set_idx, line, -1, addr, size, REQ_WRITE, 1, 0);
	else
		level_read(c, L, set, set_idx, line, -1, addr, size, 0);
}

bool
cache_merge_is_exact(const struct cache *c)
{
	const struct cache_level_config *l1 = &c->cfg.level[0];

	/* Write-through and no-write-allocate send every repeated store below; write-validate
	 * repeats can validate more bytes; with no cache each access is its own transfer. */
	return c->cfg.levels > 0 && l1->write == CACHE_WRITE_BACK && l1->alloc == CACHE_ALLOC_FETCH;
}

/* Whether a store repeated to the line of addr that L just took (a write-through level's hit)
 * hits at every level below it without changing its state, or passes a no-write-allocate level
 * unallocated, down to a write-back level that holds the line dirty or to DRAM. */
static bool
store_repeats_settled(const struct level *L, uint64_t addr, bool dram_below)
{
	for (const struct level *B = L->lower; B; B = B->lower) {
		uint64_t line = addr >> B->line_shift, set_idx = line & B->set_mask;
		const uint64_t *set = B->tags + set_idx * B->ways;
		int w = find_way(B, set, set_idx, line);

		if (B->mask || B->cfg.inclusion == CACHE_INCL_EXCLUSIVE)
			return false;
		if (w < 0) {
			if (B->cfg.alloc != CACHE_ALLOC_NONE)
				return false;
			continue;
		}
		if (B->cfg.write == CACHE_WRITE_BACK)
			return set[w] & 1;
	}
	return dram_below;
}

bool
cache_repeats_settled(const struct cache *c, const uint64_t *addrs, const bool *stores, unsigned n)
{
	return c->drive->repeats && c->drive->repeats(c, addrs, stores, n);
}

bool
cache_plain_repeats(const struct cache *c, const uint64_t *addrs, const bool *stores, unsigned n,
		    bool dram_below)
{
	const struct level *L = &c->lv[0];

	if (c->ndata == 0 || L->mask)
		return false;
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = addrs[i] >> L->line_shift, set_idx = line & L->set_mask;
		const uint64_t *set = L->tags + set_idx * L->ways;
		int w;

		w = find_way(L, set, set_idx, line);
		if (w < 0)
			return false;
		if (!stores[i])
			continue;
		if (L->cfg.write == CACHE_WRITE_BACK
			    ? !(set[w] & 1)
			    : !store_repeats_settled(L, addrs[i], dram_below))
			return false;
	}
	return true;
}

/* Loads and stores from refs[0] up to the first other kind; returns how many. */
static size_t
data_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	struct level *L = &c->lv[0];
	uint64_t ops = 0, st_ops = 0, bytes = 0, st_bytes = 0, lines = 0, st_lines = 0;
	const uint64_t *tags;
	uint64_t set_mask, ways;
	unsigned shift;
	size_t i, end;

	if (c->ndata == 0 || c->nscratch || !L->fast_write) {
		for (i = 0; i < n && refs[i].kind <= CACHE_OP_STORE; i++)
			cache_access(c, refs[i].addr, refs[i].size, (enum cache_op)refs[i].kind,
				     refs[i].count);
		return i;
	}
	/* The common case: a write-back L1 without scratch ranges, where a load or store that
	 * hits the most recent slot of its set changes at most a dirty bit. The counters are
	 * summed in a pass of their own so the simulation loop keeps its state in registers. */
	shift = L->line_shift;
	for (end = 0; end < n && refs[end].kind <= CACHE_OP_STORE; end++) {
		/* Scalars with k in {0, 1} as a multiplier: arrays indexed by kind would chain
		 * every iteration through store-to-load forwarding. */
		const struct cache_ref *r = &refs[end];
		uint64_t k = r->kind, cnt = r->count, b = (uint64_t)r->size * cnt;
		uint64_t one = ((r->addr ^ (r->addr + r->size - 1)) >> shift) == 0;

		ops += cnt;
		st_ops += k * cnt;
		bytes += b;
		st_bytes += k * b;
		lines += one * cnt;
		st_lines += one * k * cnt;
	}
	c->cpu.ops[CACHE_OP_LOAD] += ops - st_ops;
	c->cpu.ops[CACHE_OP_STORE] += st_ops;
	c->cpu.bytes[CACHE_OP_LOAD] += bytes - st_bytes;
	c->cpu.bytes[CACHE_OP_STORE] += st_bytes;
	L->st.reads += lines - st_lines;
	L->st.writes += st_lines;

	tags = L->tags;
	set_mask = L->set_mask;
	ways = L->ways;
	for (i = 0; i < end; i++) {
		const struct cache_ref *r = &refs[i];
		uint64_t addr = r->addr;
		uint64_t line = addr >> shift;
		unsigned k = r->kind;
		uint64_t *set;

		if (__builtin_expect(((addr + r->size - 1) >> shift) != line, 0)) {
			access_lines(c, L, addr, r->size, k, r->count, 0);
			continue;
		}
		set = (uint64_t *)tags + (line & set_mask) * ways;
		if (__builtin_expect((set[0] >> 1) == line, 1)) {
			set[0] |= k;
			continue;
		}
		level_ref(c, L, addr, r->size, k ? REQ_WRITE : REQ_READ, r->count, F_COUNTED);
	}
	return end;
}

size_t
cache_access_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	return c->drive->refs(c, refs, n);
}

size_t
cache_plain_refs(struct cache *c, const struct cache_ref *refs, size_t n)
{
	size_t i = 0;

	while (i < n) {
		i += data_refs(c, refs + i, n - i);
		for (; i < n && refs[i].kind == CACHE_OP_IFETCH; i++)
			cache_access(c, refs[i].addr, refs[i].size, CACHE_OP_IFETCH, refs[i].count);
		if (i < n && refs[i].kind >= CACHE_OP_COUNT)
			break;
	}
	return i;
}

size_t
cache_refs_each(struct cache *c, const struct cache_ref *refs, size_t n)
{
	size_t i;

	for (i = 0; i < n && refs[i].kind < CACHE_OP_COUNT; i++)
		cache_access(c, refs[i].addr, refs[i].size, (enum cache_op)refs[i].kind,
			     refs[i].count);
	return i;
}

unsigned
cache_dram_below(struct cache *c, uint64_t addr, uint64_t size, enum req req, uint32_t count,
		 unsigned flags)
{
	array_transfer(c, find_array(c, addr), req == REQ_READ ? size : size * count,
		       req != REQ_READ, flags);
	return 0;
}

static bool
plain_repeats(const struct cache *c, const uint64_t *addrs, const bool *stores, unsigned n)
{
	return cache_plain_repeats(c, addrs, stores, n, true);
}

const struct cache_drive cache_plain_drive = {
	.access = cache_plain_access,
	.refs = cache_plain_refs,
	.below = cache_dram_below,
	.repeats = plain_repeats,
	.inline_l1 = true,
};
