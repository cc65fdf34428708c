/*
 * libFuzzer harness: the ELF function-symbol reader (measure/elfsyms.c), which `memsim xcheck
 * --kernel PATH` runs on a user's plugin. For each input:
 *  - elf_functions_parse() accepts it or refuses it with a message naming the input;
 *  - what it accepts is sorted by name, every name non-empty, and each name is found by
 *    elf_functions_has(); elf_function_at() at each function's start names a function whose
 *    range holds that address.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/elfsyms.h"

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-elf: %s:%d: ", __FILE__, __LINE__);                  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_functions f;
	char err[512] = "";
	/* Aligned as a mapped file is; exactly size bytes, so ASan sees a read past them. */
	void *image = aligned_alloc(64, size ? (size + 63) / 64 * 64 : 64);

	memcpy(image, data, size);
	if (elf_functions_parse(image, size, "input", &f, err, sizeof(err))) {
		CHECK(strncmp(err, "input: ", 7) == 0, "a refusal that does not name the input: %s",
		      err);
		CHECK(f.n == 0 && f.f == NULL, "a refusal that left functions behind");
		free(image);
		return 0;
	}
	for (unsigned i = 0; i < f.n; i++) {
		const char *at;

		CHECK(f.f[i].name[0], "an empty name");
		CHECK(i == 0 || strcmp(f.f[i - 1].name, f.f[i].name) <= 0, "not sorted");
		CHECK(elf_functions_has(&f, f.f[i].name), "'%s' not found", f.f[i].name);
		if (f.f[i].end > f.f[i].start) {
			at = elf_function_at(&f, f.f[i].start);
			CHECK(at != NULL, "no function at 0x%llx",
			      (unsigned long long)f.f[i].start);
		}
	}
	elf_functions_free(&f);
	free(image);
	return 0;
}
