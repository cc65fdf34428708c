#include "measure/elfsyms.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif
#if __SIZEOF_POINTER__ == 8
#define HOST_CLASS ELFCLASS64
#else
#define HOST_CLASS ELFCLASS32
#endif

/* Whether [off, off + len) lies in a file of `bytes`. */
static bool
within(uint64_t off, uint64_t len, size_t bytes)
{
	return off <= bytes && len <= bytes - off;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct elf_function *)a)->name,
		      ((const struct elf_function *)b)->name);
}

/* The section of type `type` (SHT_SYMTAB, SHT_DYNSYM), or NULL. */
static const ElfW(Shdr) * find_section(const ElfW(Shdr) * sh, unsigned n, uint32_t type)
{
	for (unsigned i = 0; i < n; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	return NULL;
}

/* Adds the defined function symbols of table (its string table strtab) to out. */
static int
read_symbols(const char *img, size_t bytes, const ElfW(Shdr) * table, const ElfW(Shdr) * strtab,
	     const char *label, struct elf_functions *out, char *err, size_t errlen)
{
	const ElfW(Sym) * sym;
	uint64_t count;
	unsigned cap = 0;

	if (table->sh_entsize != sizeof(ElfW(Sym)) ||
	    !within(table->sh_offset, table->sh_size, bytes) ||
	    !within(strtab->sh_offset, strtab->sh_size, bytes) || strtab->sh_size == 0 ||
	    img[strtab->sh_offset + strtab->sh_size - 1] != '\0') {
		snprintf(err, errlen, "%s: a damaged symbol table", label);
		return -1;
	}
	sym = (const ElfW(Sym) *)(const void *)(img + table->sh_offset);
	count = table->sh_size / sizeof(ElfW(Sym));
	for (uint64_t i = 0; i < count; i++) {
		unsigned type = ELF64_ST_TYPE(sym[i].st_info);
		const char *name;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF)
			continue;
		if (sym[i].st_name >= strtab->sh_size) {
			snprintf(err, errlen, "%s: symbol %llu's name is outside its string table",
				 label, (unsigned long long)i);
			return -1;
		}
		name = img + strtab->sh_offset + sym[i].st_name;
		if (!*name)
			continue;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 64;
			out->f = xrealloc(out->f, cap * sizeof(*out->f));
		}
		out->f[out->n].name = xstrdup(name);
		out->f[out->n].start = sym[i].st_value;
		out->f[out->n].end = sym[i].st_value + sym[i].st_size;
		out->n++;
	}
	return 0;
}

int
elf_functions_parse(const void *image, size_t bytes, const char *label, struct elf_functions *out,
		    char *err, size_t errlen)
{
	const char *img = image;
	const ElfW(Ehdr) *eh = image;
	const ElfW(Shdr) * sh, *table;

	memset(out, 0, sizeof(*out));
	if (bytes < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(err, errlen, "%s: not an ELF file", label);
		return -1;
	}
	if (eh->e_ident[EI_CLASS] != HOST_CLASS || eh->e_ident[EI_DATA] != HOST_DATA) {
		snprintf(err, errlen, "%s: an ELF file for another kind of machine", label);
		return -1;
	}
	if (eh->e_shnum == 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    !within(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), bytes) ||
	    eh->e_shoff % _Alignof(ElfW(Shdr))) {
		snprintf(err, errlen, "%s: no readable section headers", label);
		return -1;
	}
	sh = (const ElfW(Shdr) *)(const void *)(img + eh->e_shoff);
	table = find_section(sh, eh->e_shnum, SHT_SYMTAB);
	out->from_symtab = table != NULL;
	if (!table)
		table = find_section(sh, eh->e_shnum, SHT_DYNSYM);
	if (!table) {
		snprintf(err, errlen, "%s: no symbol table", label);
		return -1;
	}
	if (table->sh_link >= eh->e_shnum || sh[table->sh_link].sh_type != SHT_STRTAB ||
	    table->sh_offset % _Alignof(ElfW(Sym))) {
		snprintf(err, errlen, "%s: a damaged symbol table", label);
		return -1;
	}
	if (read_symbols(img, bytes, table, &sh[table->sh_link], label, out, err, errlen)) {
		elf_functions_free(out);
		return -1;
	}
	if (out->n)
		qsort(out->f, out->n, sizeof(*out->f), by_name);
	return 0;
}

int
elf_functions_read(const char *path, struct elf_functions *out, char *err, size_t errlen)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	memset(out, 0, sizeof(*out));
	if (fd < 0) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(err, errlen, "%s: not a regular, non-empty file", path);
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", path, strerror(errno));
		return -1;
	}
	rc = elf_functions_parse(map, (size_t)st.st_size, path, out, err, errlen);
	munmap(map, (size_t)st.st_size);
	return rc;
}

bool
elf_functions_has(const struct elf_functions *f, const char *name)
{
	struct elf_function key = { (char *)name, 0, 0 };

	return f->n && bsearch(&key, f->f, f->n, sizeof(*f->f), by_name) != NULL;
}

const char *
elf_function_at(const struct elf_functions *f, uint64_t addr)
{
	for (unsigned i = 0; i < f->n; i++)
		if (addr >= f->f[i].start && addr < f->f[i].end)
			return f->f[i].name;
	return NULL;
}

void
elf_functions_free(struct elf_functions *f)
{
	for (unsigned i = 0; i < f->n; i++)
		free(f->f[i].name);
	free(f->f);
	memset(f, 0, sizeof(*f));
}
