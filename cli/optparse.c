#include "cli/optparse.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/commands.h"

/* getopt_long's val for row i: past every short option's character */
#define ROW_VAL(i) (256 + (i))

enum { ROWS_MAX = 96 };

/* The rows of both tables, in order. Returns how many, or -1 past ROWS_MAX. */
static int
rows_of(const struct optparse_command *cmd, const struct optparse_option **rows)
{
	const struct optparse_option *tables[2] = { cmd->options, cmd->extra };
	int n = 0;

	for (int t = 0; t < 2; t++)
		for (const struct optparse_option *o = tables[t]; o && o->name; o++) {
			if (n == ROWS_MAX)
				return -1;
			rows[n++] = o;
		}
	return n;
}

static bool
takes_value(const struct optparse_option *o)
{
	return o->kind != OPTPARSE_HELP && o->kind != OPTPARSE_FLAG && o->kind != OPTPARSE_CLEAR;
}

/* "W1, W2 or W3" into buf. */
static const char *
words_text(const char *const *words, char *buf, size_t len)
{
	size_t n = 0, used = 0;

	while (words[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0       ? ""
					 : i + 1 == n ? " or "
						      : ", ",
					 words[i]);
	return buf;
}

static int
bad_value(const char *cmd, const struct optparse_option *o, const char *value, const char *kind)
{
	char words[256];

	if (!o->expect && o->kind == OPTPARSE_CHOICE)
		kind = words_text(o->words, words, sizeof(words));
	return usage_error(cmd, "--%s: '%s' is not %s", o->name, value,
			   o->expect ? o->expect : kind);
}

/* A number of kind U64, POW2 or SIZE within the row's bounds into *v. */
static bool
whole_value(const struct optparse_option *o, const char *value, uint64_t *v)
{
	bool ok = o->kind == OPTPARSE_SIZE ? parse_size_bytes(value, v) == 0 : parse_u64(value, v);

	return ok && *v >= o->min && (o->max == 0 || *v <= o->max) &&
	       (o->kind != OPTPARSE_POW2 || is_pow2(*v));
}

static bool
double_value(const char *value, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(value, &end);
	return value[0] && !*end && !errno && isfinite(*v);
}

int
optparse_value(const char *cmd, const struct optparse_option *o, const char *value)
{
	uint64_t u;
	double d;

	switch (o->kind) {
	case OPTPARSE_HELP:
		return 0;
	case OPTPARSE_FLAG:
	case OPTPARSE_CLEAR:
		if (o->dest)
			*(bool *)o->dest = o->kind == OPTPARSE_FLAG;
		return 0;
	case OPTPARSE_STRING:
		*(const char **)o->dest = value;
		return 0;
	case OPTPARSE_U64:
	case OPTPARSE_POW2:
	case OPTPARSE_SIZE:
		if (!whole_value(o, value, &u))
			return bad_value(cmd, o, value,
					 o->kind == OPTPARSE_SIZE   ? "a size"
					 : o->kind == OPTPARSE_POW2 ? "a power of two"
								    : "a whole number");
		*(uint64_t *)o->dest = u;
		return 0;
	case OPTPARSE_DOUBLE:
	case OPTPARSE_POSITIVE:
		if (!double_value(value, &d) || (o->kind == OPTPARSE_POSITIVE && !(d > 0)))
			return bad_value(cmd, o, value,
					 o->kind == OPTPARSE_DOUBLE ? "a number"
								    : "a positive number");
		*(double *)o->dest = d;
		return 0;
	case OPTPARSE_CHOICE:
		for (unsigned i = 0; o->words[i]; i++)
			if (strcmp(value, o->words[i]) == 0) {
				*(unsigned *)o->dest = i;
				return 0;
			}
		return bad_value(cmd, o, value, NULL);
	case OPTPARSE_CALL:
		return o->call(cmd, o, value);
	}
	return 0;
}

/* The row without a value that "--NAME=..." names, by its whole name or a prefix of one
 * (as getopt_long takes it), or NULL. */
static const struct optparse_option *
valueless_row(const struct optparse_option **rows, int n, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const struct optparse_option *found = NULL;
	size_t len;

	if (strncmp(arg, "--", 2) != 0 || !eq)
		return NULL;
	len = (size_t)(eq - arg - 2);
	for (int i = 0; i < n; i++) {
		if (strncmp(rows[i]->name, arg + 2, len) != 0)
			continue;
		if (rows[i]->name[len] == '\0')
			return takes_value(rows[i]) ? NULL : rows[i];
		if (found)
			return NULL; /* ambiguous: getopt's "unknown" stands */
		found = rows[i];
	}
	return found && !takes_value(found) ? found : NULL;
}

/* After getopt_long() returned '?' or ':': names the unknown option, the one missing its value,
 * or the flag given one. */
static int
getopt_error(const char *cmd, int opt, char **argv, const struct optparse_option **rows, int n)
{
	const char *arg = argv[optind - 1];
	const struct optparse_option *flag;

	if (opt == ':')
		return usage_error(cmd, "option '%s' needs a value", arg);
	if ((flag = valueless_row(rows, n, arg)))
		return usage_error(cmd, "option '--%s' takes no value: '%s'", flag->name, arg);
	if (optopt && strncmp(arg, "--", 2) != 0)
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", arg);
}

/* The row of getopt_long's answer opt, or NULL. */
static const struct optparse_option *
row_of(const struct optparse_option **rows, int n, int opt)
{
	if (opt >= ROW_VAL(0) && opt < ROW_VAL(n))
		return rows[opt - ROW_VAL(0)];
	for (int i = 0; i < n && opt > 0 && opt < 256; i++)
		if (rows[i]->letter == opt)
			return rows[i];
	return NULL;
}

int
optparse_argv(const struct optparse_command *cmd, int argc, char **argv)
{
	const struct optparse_option *rows[ROWS_MAX], *o;
	struct option longs[ROWS_MAX + 1];
	char shorts[2 + 2 * ROWS_MAX + 1], *s = shorts;
	int n = rows_of(cmd, rows), opt, rc;

	if (n < 0)
		return usage_error(cmd->name, "more than %d options in the table", ROWS_MAX);
	if (cmd->operands_last)
		*s++ = '+';
	*s++ = ':'; /* '?' and ':' tell an unknown option from a missing value */
	for (int i = 0; i < n; i++) {
		longs[i] = (struct option){ rows[i]->name,
					    !takes_value(rows[i])     ? no_argument
					    : rows[i]->value_optional ? optional_argument
								      : required_argument,
					    NULL, ROW_VAL(i) };
		if (rows[i]->letter) {
			*s++ = rows[i]->letter;
			if (takes_value(rows[i]))
				*s++ = ':';
		}
	}
	*s = '\0';
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
	/* 0, not 1: glibc and musl then start afresh, reading the '+' of this table's shorts
	 * and not a previous parse's state */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == '?' || opt == ':' || !(o = row_of(rows, n, opt)))
			return getopt_error(cmd->name, opt, argv, rows, n);
		if (o->kind == OPTPARSE_HELP) {
			cmd->usage(stdout);
			return OPTPARSE_HELP_SHOWN;
		}
		if ((rc = optparse_value(cmd->name, o, optarg)))
			return rc;
		if (o->given)
			*o->given = true;
		if (cmd->each && (rc = cmd->each(cmd->ctx, o, optarg)))
			return rc;
	}
	return 0;
}
