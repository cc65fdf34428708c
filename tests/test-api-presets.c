/*
 * memsim_preset_count(), memsim_preset_name() and memsim_preset_description(): the presets
 * `memsim presets` prints, in its order, each with the line under its name there; every one
 * makes a hierarchy (where `memsim presets` can show its spec: host needs sysfs). NULL past the
 * last.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define MEMSIM_NO_TR_MACROS
#include "memsim/memsim.h"

struct listed {
	char name[64], description[512];
	bool available;
};

/* `memsim presets`: a name at the start of a line, its description on the next. */
static unsigned
read_listing(struct listed *out, unsigned max)
{
	FILE *p = popen(MEMSIM_BIN " presets", "r");
	char line[4096];
	unsigned n = 0;
	bool want_description = false;

	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] && line[0] != ' ') {
			assert_true(n < max);
			assert_true(strlen(line) < sizeof(out[n].name));
			memcpy(out[n].name, line, strlen(line) + 1);
			out[n].available = true;
			n++;
			want_description = true;
		} else if (want_description) {
			assert_true(strncmp(line, "  ", 2) == 0);
			assert_true(strlen(line + 2) < sizeof(out[n - 1].description));
			memcpy(out[n - 1].description, line + 2, strlen(line + 2) + 1);
			want_description = false;
		} else if (n && strstr(line, "  spec:   unavailable here")) {
			out[n - 1].available = false;
		}
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

static void
test_presets_as_listed(void **state)
{
	struct listed l[32];
	unsigned n = read_listing(l, 32);
	char err[512];

	(void)state;
	assert_true(n >= 7);
	assert_int_equal(memsim_preset_count(), n);
	for (unsigned i = 0; i < n; i++) {
		struct memsim_hierarchy *h;

		assert_non_null(memsim_preset_name(i));
		assert_string_equal(memsim_preset_name(i), l[i].name);
		assert_non_null(memsim_preset_description(i));
		assert_string_equal(memsim_preset_description(i), l[i].description);
		if (!l[i].available)
			continue;
		h = memsim_hierarchy_create(memsim_preset_name(i), err, sizeof(err));
		if (!h)
			print_message("# %s: %s\n", l[i].name, err);
		assert_non_null(h);
		memsim_hierarchy_destroy(h);
	}
	assert_null(memsim_preset_name(n));
	assert_null(memsim_preset_description(n));
	assert_null(memsim_preset_name(~0u));
	assert_null(memsim_preset_description(~0u));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets_as_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
