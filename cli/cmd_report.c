/*
 * `memsim report DIR`: the labs' questions answered from a study directory (see
 * analysis/labreport.h).
 */

#include <stdio.h>
#include <string.h>

#include "analysis/labreport.h"
#include "cli/commands.h"
#include "cli/steps.h"

void
usage_report(FILE *f)
{
	fprintf(f,
		"Usage: memsim report DIR\n"
		"\n"
		"Writes DIR/report.md and a self-contained DIR/report.html (plots inlined) that\n"
		"answer the labs' questions from the results in DIR (a `memsim study` directory):\n"
		"where flash starts to win in DRAM bytes, the flash/naive intensity ratio at\n"
		"N = 8192, d = 128 with the working, which operations are memory-bound at which T\n"
		"and their gap to the roofline, and how far each formula is from the simulated and\n"
		"cross-checked bytes and why. Also DIR/manifest.json in the labs' format and\n"
		"DIR/report-numbers.json: every number the report prints, with its source.\n");
}

int
cmd_report(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage_report(stdout);
		return EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-')
		return usage_error("report", "report takes one study directory");
	return report_into(argv[1]);
}

int
report_into(const char *dir)
{
	char err[1024];

	if (lab_report(dir, err, sizeof(err))) {
		print_error("report: %s", err);
		return EXIT_RUNTIME;
	}
	printf("memsim report: wrote %s/report.md, %s/report.html, %s/manifest.json and "
	       "%s/report-numbers.json\n",
	       dir, dir, dir, dir);
	return EXIT_OK;
}
