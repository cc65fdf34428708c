/*
 * `memsim table DIR`: a sweep directory's comparison tables (analysis/tables.h).
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/tables.h"
#include "cli/commands.h"
#include "cli/optparse.h"

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
	bool exact = false, xcheck = false;
	const struct optparse_option opts[] = {
		{ "exact", 0, OPTPARSE_FLAG, .dest = &exact },
		{ "xcheck", 0, OPTPARSE_FLAG, .dest = &xcheck },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "table",
					      .usage = usage_table,
					      .options = opts };
	struct table_rows t;
	char err[700];
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
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
