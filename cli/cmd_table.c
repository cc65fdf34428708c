/*
 * `memsim table DIR`: a sweep directory's comparison tables (analysis/tables.h).
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/tables.h"
#include "cli/commands.h"

void
usage_table(FILE *f)
{
	fprintf(f,
		"Usage: memsim table DIR [--exact | --xcheck]\n"
		"\n"
		"Prints the comparison table of a sweep directory: measured bytes, lab and exact\n"
		"formulas, ratios and the lab verdict with its regime; the N from which flash2\n"
		"moves fewer bytes than naive. --exact prints the per-kernel exactness summary.\n"
		"--xcheck summarizes the `memsim xcheck --json` reports in DIR (*.json): each\n"
		"tool's ratio to memsim per configuration.\n");
}

int
cmd_table(int argc, char **argv)
{
	static const struct option opts[] = { { "exact", no_argument, NULL, 'e' },
					      { "xcheck", no_argument, NULL, 'x' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	bool exact = false, xcheck = false;
	struct table_rows t;
	char err[700];
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage_table(stdout);
			return EXIT_OK;
		} else if (opt == 'e') {
			exact = true;
		} else if (opt == 'x') {
			xcheck = true;
		} else {
			return option_error("table", opt, argv);
		}
	}
	if (optind + 1 != argc || (exact && xcheck))
		return usage_error("table",
				   "table takes a sweep directory (and --exact or --xcheck)");
	if (xcheck) {
		if (tables_print_xcheck(stdout, argv[optind], err, sizeof(err))) {
			print_error("table: %s", err);
			return EXIT_RUNTIME;
		}
		return EXIT_OK;
	}
	if (tables_read(argv[optind], &t, err, sizeof(err))) {
		print_error("table: %s", err);
		return EXIT_RUNTIME;
	}
	if (exact) {
		tables_print_exact(stdout, &t);
	} else {
		tables_print_lab(stdout, &t);
		tables_print_crossover(stdout, &t);
	}
	tables_finish(&t);
	return EXIT_OK;
}
