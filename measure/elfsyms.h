#pragma once

/*
 * The function symbols of an ELF shared object or executable of this machine's class, as
 * Valgrind names the functions it counts: from .symtab where the file has one (every static
 * function too), else from .dynsym (exported ones only: a stripped file). `memsim xcheck
 * --kernel PATH` picks a plugin's functions out of cachegrind.out with them.
 *
 * The file is read whole and every offset checked against it: a damaged or foreign file is a
 * one-line error, never a read past the end.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_function {
	char *name;
	uint64_t start, end; /* [start, end) as st_value and st_size give it */
};

struct elf_functions {
	unsigned n;
	struct elf_function *f; /* sorted by name */
	bool from_symtab;       /* false: .dynsym alone (the file is stripped) */
};

/* Reads path's function symbols (defined ones: STT_FUNC or STT_GNU_IFUNC, not undefined).
 * Returns 0, or -1 with "path: what" in err. */
int elf_functions_read(const char *path, struct elf_functions *out, char *err, size_t errlen);

/* Reads an ELF image already in memory (bytes of it); label names it in messages. */
int elf_functions_parse(const void *image, size_t bytes, const char *label,
			struct elf_functions *out, char *err, size_t errlen);

/* Whether a function of that name is in f. */
bool elf_functions_has(const struct elf_functions *f, const char *name);

/* The name of the function whose [start, end) holds addr (an address as st_value gives it),
 * or NULL. */
const char *elf_function_at(const struct elf_functions *f, uint64_t addr);

void elf_functions_free(struct elf_functions *f);
