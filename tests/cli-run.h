#pragma once

/*
 * Running the memsim binary from a CLI test: memsim("ARGS", ...) runs "memsim ARGS" through
 * the shell in tmpdir (tests/tmpdir.h, included first) and captures its exit status, stdout
 * and stderr; read_json() reads a JSON document written there.
 */

#include <cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/slurp.h"

struct result {
	int rc;
	char *out, *err;
};

/* Runs "memsim ARGS" in tmpdir through the shell; captures stdout and stderr. */
static struct result
memsim(const char *fmt, ...)
{
	char args[2048], cmd[4096], out[700], err[700];
	struct result r;
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s >%s 2>%s", tmpdir, MEMSIM_BIN, args, out, err);
	status = system(cmd);
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r.out = slurp_text(out);
	r.err = slurp_text(err);
	return r;
}

static void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* True when s is exactly one line holding what. */
static bool
one_line_with(const char *s, const char *what)
{
	const char *nl = strchr(s, '\n');

	return strstr(s, what) && nl && nl[1] == '\0';
}

/* The JSON document in tmpdir/name (caller frees with cJSON_Delete()), or NULL. */
static cJSON *
read_json(const char *name)
{
	char path[700], *text;
	cJSON *o;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path, NULL);
	o = text ? cJSON_Parse(text) : NULL;
	free(text);
	return o;
}
