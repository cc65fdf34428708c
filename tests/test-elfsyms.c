/*
 * The ELF function-symbol reader (measure/elfsyms.c) on the fuzz seeds, whose symbols nm and
 * readelf list (tests/fuzz/seeds/elf/README): a file with .symtab, the same file stripped, and
 * damaged copies of it, each refused with one message.
 */

#include "measure/elfsyms.h"
#include "tests/unit.h"

#define SEEDS TEST_DATA_DIR "/../fuzz/seeds/elf"

/* The file at path, whole, into a buffer of its size (caller frees). */
static char *
read_whole(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*n = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *n, f), *n);
	fclose(f);
	return buf;
}

/* nm -S symtab.so: helper (t) at 0x290, 4 bytes; tiny_run (T) at 0x294, 5 bytes; tiny_ptr is
 * an object. */
static void
test_symtab(void **state)
{
	struct elf_functions f;
	char err[512];

	(void)state;
	assert_int_equal(elf_functions_read(SEEDS "/symtab.so", &f, err, sizeof(err)), 0);
	assert_true(f.from_symtab);
	assert_int_equal(f.n, 2);
	assert_true(elf_functions_has(&f, "helper"));
	assert_true(elf_functions_has(&f, "tiny_run"));
	assert_false(elf_functions_has(&f, "tiny_ptr"));
	assert_string_equal(elf_function_at(&f, 0x290), "helper");
	assert_string_equal(elf_function_at(&f, 0x293), "helper");
	assert_string_equal(elf_function_at(&f, 0x294), "tiny_run");
	assert_null(elf_function_at(&f, 0x299));
	elf_functions_free(&f);
}

/* Stripped: .dynsym alone, so the exported function only. */
static void
test_stripped(void **state)
{
	struct elf_functions f;
	char err[512];

	(void)state;
	assert_int_equal(elf_functions_read(SEEDS "/stripped.so", &f, err, sizeof(err)), 0);
	assert_false(f.from_symtab);
	assert_int_equal(f.n, 1);
	assert_true(elf_functions_has(&f, "tiny_run"));
	assert_false(elf_functions_has(&f, "helper"));
	elf_functions_free(&f);
}

/* symtab.so with `bytes` of it, and 8 bytes at `at` set to v (at < 0: none), parsed. */
static int
parse_damaged(size_t bytes, long at, uint64_t v, char *err, size_t errlen)
{
	size_t n;
	char *image = read_whole(SEEDS "/symtab.so", &n);
	struct elf_functions f;
	void *aligned;
	int rc;

	assert_non_null(image);
	assert_true(bytes <= n);
	aligned = aligned_alloc(64, (bytes + 64) / 64 * 64);
	memcpy(aligned, image, bytes);
	if (at >= 0)
		memcpy((char *)aligned + at, &v, sizeof(v));
	rc = elf_functions_parse(aligned, bytes, "damaged", &f, err, errlen);
	if (rc == 0)
		elf_functions_free(&f);
	free(aligned);
	free(image);
	return rc;
}

/* Offsets in symtab.so (readelf -S): section headers at 1432, 64 bytes each; .symtab is
 * section 12 (sh_offset at +24, sh_size at +32, sh_link at +40), its first symbol at 0x410. */
static void
test_damaged(void **state)
{
	char err[512];
	const long symtab = 1432 + 12 * 64;

	(void)state;
	assert_int_equal(parse_damaged(3, -1, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "damaged: not an ELF file");
	assert_int_equal(parse_damaged(1000, -1, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "damaged: no readable section headers");
	assert_int_equal(parse_damaged(2392, symtab + 24, 1ull << 40, err, sizeof(err)), -1);
	assert_string_equal(err, "damaged: a damaged symbol table");
	assert_int_equal(parse_damaged(2392, symtab + 32, 1ull << 40, err, sizeof(err)), -1);
	assert_string_equal(err, "damaged: a damaged symbol table");
	assert_int_equal(parse_damaged(2392, symtab + 40, 99, err, sizeof(err)), -1);
	assert_string_equal(err, "damaged: a damaged symbol table");
	/* A name offset past the string table: helper's (symbol 2) st_name, its st_info (FUNC,
	 * LOCAL: 0x02) and section (6) kept. */
	assert_int_equal(
		parse_damaged(2392, 0x410 + 2 * 24, 0x0006000200ffffffull, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "name is outside its string table"));
	assert_int_equal(parse_damaged(2392, -1, 0, err, sizeof(err)), 0);
}

static void
test_not_elf(void **state)
{
	struct elf_functions f;
	char err[512];

	(void)state;
	assert_int_equal(elf_functions_read(SEEDS "/README", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "README: not an ELF file"));
	assert_int_equal(elf_functions_read("/nonexistent.so", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read /nonexistent.so"));
	assert_int_equal(elf_functions_read("/", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular, non-empty file"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symtab),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
