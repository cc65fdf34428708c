#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "sim/spec.h"

void
usage_presets(FILE *f)
{
	fprintf(f,
		"Usage: memsim presets\n\n"
		"Lists the cache presets: the geometry each stands for, in spec syntax with every\n"
		"policy word explicit, and where its numbers come from.\n");
}

int
cmd_presets(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			usage_presets(stdout);
			return EXIT_OK;
		}
		return usage_error("presets", "presets takes no arguments");
	}
	for (const struct spec_preset *p = spec_presets; p->name; p++) {
		struct spec s;
		char err[512], buf[1024];

		printf("%s\n  %s\n", p->name, p->summary);
		memset(&s, 0, sizeof(s));
		if (spec_parse(p->name, &s, err, sizeof(err)) == 0) {
			printf("  spec:   %s\n", spec_format(&s, buf, sizeof(buf)));
			if (s.note[0])
				printf("  note:   %s\n", s.note);
		} else {
			printf("  spec:   unavailable here: %s\n", err);
		}
		printf("  source: %s\n\n", s.source[0] ? s.source : p->source);
	}
	return EXIT_OK;
}
