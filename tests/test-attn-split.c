/*
 * A kernel's values on several threads (run/attn_split.h) against its native run on one:
 * every output array equal byte for byte, for every kernel, causal and not, grouped-query
 * heads, batch 2 and 3, each dtype, queries and keys of different lengths, paged K/V,
 * flashdecode's splits and its packed grouped decode, proj; on 1 to 7 threads, more threads
 * than units included. The outputs are poisoned first, so an element no unit wrote differs.
 * Also: the units each config splits into.
 */

#include <errno.h>

#include "run/attn_split.h"
#include "tests/unit.h"

static const char *const configs[] = {
	"naive N=100 d=24 heads=4 kv=2 batch=2",
	"naive N=64 d=16 heads=2 kv=2 batch=1 causal separate fp16",
	"naive N=70 N_kv=130 d=16 heads=3 kv=1 batch=2 bf16",
	"flash1 N=96 d=32 heads=4 kv=4 batch=2 causal",
	"flash2 N=128 d=32 heads=4 kv=2 batch=2 causal fp16",
	"flash2 N=50 N_kv=200 d=40 heads=6 kv=3 batch=1",
	"flash2 N=64 N_kv=200 d=32 heads=4 kv=2 batch=3 page=48 bf16",
	"flashdecode N=1 N_kv=512 d=64 heads=8 kv=2 batch=2 splits=3",
	"flashdecode N=4 N_kv=300 d=32 heads=4 kv=4 batch=2 splits=4 causal fp16",
	"flashdecode N=1 N_kv=260 d=32 heads=4 kv=1 batch=3 splits=2 page=32",
	"flashdecode N=5 N_kv=100 d=16 heads=2 kv=2 batch=1",
	"proj N=64 d=32 heads=2 kv=1 batch=3",
};

/* A config from the words above (Br 32, Bc 16 unless the kernel is proj). */
static struct attn_config
parse(const char *text)
{
	struct attn_config c = { .Br = 32, .Bc = 16, .kv_seed = 7 };
	char buf[200], *w, *save = NULL;
	unsigned long long v;

	snprintf(buf, sizeof(buf), "%s", text);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "naive"))
			c.kernel = ATTN_NAIVE;
		else if (!strcmp(w, "flash1"))
			c.kernel = ATTN_FLASH1;
		else if (!strcmp(w, "flash2"))
			c.kernel = ATTN_FLASH2;
		else if (!strcmp(w, "flashdecode"))
			c.kernel = ATTN_FLASHDECODE;
		else if (!strcmp(w, "proj"))
			c.kernel = ATTN_PROJ;
		else if (!strcmp(w, "causal"))
			c.causal = true;
		else if (!strcmp(w, "separate"))
			c.softmax_separate = true;
		else if (!strcmp(w, "fp16"))
			c.dtype = ATTN_FP16;
		else if (!strcmp(w, "bf16"))
			c.dtype = ATTN_BF16;
		else if (sscanf(w, "N=%llu", &v) == 1)
			c.N = v;
		else if (sscanf(w, "N_kv=%llu", &v) == 1)
			c.N_kv = v;
		else if (sscanf(w, "d=%llu", &v) == 1)
			c.d = v;
		else if (sscanf(w, "heads=%llu", &v) == 1)
			c.heads = v;
		else if (sscanf(w, "kv=%llu", &v) == 1)
			c.kv_heads = v;
		else if (sscanf(w, "batch=%llu", &v) == 1)
			c.batch = v;
		else if (sscanf(w, "splits=%llu", &v) == 1)
			c.splits = v;
		else if (sscanf(w, "page=%llu", &v) == 1)
			c.kv_page = v;
		else
			fail_msg("bad word %s", w);
	}
	return c;
}

/* The row tile (between the arrays for naive and flashdecode) zeroed, and the arena's bytes up
 * to the first tile: every array a kernel reads or writes, none of its scratch. */
static size_t
arrays_end(struct attn_data *d)
{
	const struct attn_config *c = &d->cfg;

	if (d->row)
		memset(d->row, 0,
		       (c->kernel == ATTN_NAIVE ? attn_nkv(c) : attn_splits(c)) * sizeof(float));
	return (size_t)((char *)d->Qt - (char *)d->arena);
}

static void
test_outputs_equal(void **state)
{
	unsigned cases = 0;

	(void)state;
	for (unsigned i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		struct attn_config c = parse(configs[i]);
		char err[256];
		struct attn_data *one = attn_data_create(&c, err, sizeof(err));

		assert_non_null(one);
		attn_data_fill(one, 42);
		attn_data_poison(one);
		attn_run_native(one);
		for (unsigned threads = 1; threads <= 7; threads += 2) {
			struct attn_data *many = attn_data_create(&c, err, sizeof(err));
			struct attn_native_split *sp;
			size_t end;

			assert_non_null(many);
			attn_data_fill(many, 42);
			attn_data_poison(many);
			sp = attn_native_split_start(many, threads, err, sizeof(err));
			assert_non_null(sp);
			assert_int_equal(attn_native_split_threads(sp),
					 threads < attn_native_units(&c) ? threads
									 : attn_native_units(&c));
			assert_int_equal(attn_native_split_join(sp), 0);
			end = arrays_end(many);
			assert_int_equal(end, arrays_end(one));
			if (memcmp(one->arena, many->arena, end) != 0)
				fail_msg("%s on %u threads: outputs differ", configs[i], threads);
			{
				struct attn_error e = attn_check(many);

				if (!e.pass || e.nonfinite)
					fail_msg("%s on %u threads: check failed", configs[i],
						 threads);
			}
			attn_data_destroy(many);
			cases++;
		}
		attn_data_destroy(one);
	}
	print_message("# %u split runs equal to one thread's\n", cases);
	assert_int_equal(cases, 4 * sizeof(configs) / sizeof(configs[0]));
}

static void
test_units(void **state)
{
	struct attn_config c = parse("flash2 N=64 d=32 heads=8 kv=2 batch=3");

	(void)state;
	assert_int_equal(attn_native_units(&c), 6); /* 3 batch elements x 2 KV heads */
	c.kv_page = 16;
	assert_int_equal(attn_native_units(&c), 3);
	c = parse("proj N=64 d=32 heads=8 kv=8 batch=2");
	assert_int_equal(attn_native_units(&c), 2);
	c = parse("naive N=64 d=32 heads=8 kv=8 batch=1");
	assert_int_equal(attn_native_units(&c), 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outputs_equal),
		cmocka_unit_test(test_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
