#pragma once

/*
 * The one option parser of the `memsim` commands. A command describes its options in a table
 * (a row per long option: its kind, where its value goes, the bounds) and optparse_argv() runs
 * getopt_long over it: each value is parsed strictly and a bad one, an unknown option or a
 * missing value is a one-line usage error (exit 2):
 *
 *   memsim: --repeat: '0' is not a number from 1 to 100 (see 'memsim help bench')
 *
 * A repeated option is applied again: the last value wins (a OPTPARSE_CALL option may keep
 * them all). What is the command's own stays in the command: checks of options together,
 * operands, actions.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum optparse_kind {
	OPTPARSE_HELP,     /* no value: prints the command's usage to stdout and stops */
	OPTPARSE_FLAG,     /* no value: bool *dest = true (dest may be NULL) */
	OPTPARSE_CLEAR,    /* no value: bool *dest = false (--no-flush) */
	OPTPARSE_STRING,   /* const char **dest = the value, as given */
	OPTPARSE_U64,      /* uint64_t *dest: a whole number (parse_u64()) in [min, max] */
	OPTPARSE_POW2,     /* uint64_t *dest: a power of two in [min, max] */
	OPTPARSE_SIZE,     /* uint64_t *dest: bytes with a K/M/G/T suffix (parse_size_bytes()),
			      in [min, max] */
	OPTPARSE_DOUBLE,   /* double *dest: a finite number */
	OPTPARSE_POSITIVE, /* double *dest: a finite number above 0 */
	OPTPARSE_CHOICE,   /* unsigned *dest: the index of the value in words */
	OPTPARSE_CALL,     /* call(cmd, row, value) parses the value itself */
};

struct optparse_option {
	const char *name; /* the long name without its dashes: "repeat" */
	char letter;      /* the short option ('r' for -r), or 0 */
	enum optparse_kind kind;
	void *dest; /* where the value goes; its type is the kind's */
	/* OPTPARSE_U64, _POW2, _SIZE: the bounds; max 0 stands for no upper bound */
	uint64_t min, max;
	/* the end of the bad-value message "--NAME: 'VALUE' is not EXPECT"; NULL: the kind's
	 * ("a whole number", "a power of two", "a size", "a number", "a positive number",
	 * "W1, W2 or W3") */
	const char *expect;
	const char *const *words; /* OPTPARSE_CHOICE: the values, NULL-terminated */
	/* OPTPARSE_CALL: 0, or EXIT_USAGE after a one-line usage_error(cmd, ...) */
	int (*call)(const char *cmd, const struct optparse_option *opt, const char *value);
	bool *given;         /* set to true once the option is given, or NULL */
	bool value_optional; /* OPTPARSE_CALL: --NAME alone calls with value NULL (--NAME=V) */
};

/* A command's options; the table ends with a row whose name is NULL. */
struct optparse_command {
	const char *name; /* "bench": for the messages */
	void (*usage)(FILE *f);
	const struct optparse_option *options;
	const struct optparse_option *extra; /* a second table (its own rows), or NULL */
	/* options stop at the first operand (getopt's "+") */
	bool operands_last;
	/* called after each option is applied (NULL: none), with ctx; 0 or EXIT_USAGE */
	int (*each)(void *ctx, const struct optparse_option *o, const char *value);
	void *ctx;
};

#define OPTPARSE_HELP_SHOWN (-1)

/* A macro's value as a string, for an expect text: "1 to " OPTPARSE_STR(MAX) */
#define OPTPARSE_STR(x) OPTPARSE_STR_(x)
#define OPTPARSE_STR_(x) #x

/* Parses argv[1 .. argc) by cmd's table. Returns 0 with the operands in argv[optind .. argc),
 * OPTPARSE_HELP_SHOWN after printing the usage (OPTPARSE_HELP), or EXIT_USAGE after a one-line
 * message. */
int optparse_argv(const struct optparse_command *cmd, int argc, char **argv);

/* Applies one row to its value as optparse_argv() does (for an OPTPARSE_CALL that hands a
 * value on): 0, or EXIT_USAGE after a one-line message. */
int optparse_value(const char *cmd, const struct optparse_option *o, const char *value);
