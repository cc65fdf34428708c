/*
 * `memsim sweep --slurm-args`: its text split into words as a shell would, with no shell.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "run/sweep_slurm.h"

/* One word of text from *p on (past blanks) into out; *p after it. Returns 1 for a word, 0
 * at the end, -1 for an unterminated quote. */
static int
next_word(const char **p, char *out)
{
	const char *c = *p + strspn(*p, " \t\n");
	char quote = 0;

	if (!*c)
		return 0;
	for (; *c && (quote || !strchr(" \t\n", *c)); c++) {
		if (quote == '\'' && *c != '\'') {
			*out++ = *c;
		} else if (*c == quote) {
			quote = 0;
		} else if (!quote && (*c == '\'' || *c == '"')) {
			quote = *c;
		} else if (*c == '\\' && c[1] && (!quote || strchr("\"\\$`", c[1]))) {
			*out++ = *++c;
		} else {
			*out++ = *c;
		}
	}
	*out = '\0';
	*p = c;
	return quote ? -1 : 1;
}

int
sweep_slurm_split(const char *text, unsigned max, char ***words, char *err, size_t errlen)
{
	char *word = xzalloc(strlen(text) + 1);
	const char *p = text;
	int n = 0, r;

	*words = NULL;
	while ((r = next_word(&p, word)) == 1 && (unsigned)n < max) {
		*words = xrealloc(*words, (size_t)(n + 1) * sizeof(**words));
		(*words)[n++] = xstrdup(word);
	}
	free(word);
	if (r == 0)
		return n;
	if (r < 0)
		snprintf(err, errlen, "--slurm-args: unterminated quote in '%s'", text);
	else
		snprintf(err, errlen, "--slurm-args: more than %u words", max);
	for (int i = 0; i < n; i++)
		free((*words)[i]);
	free(*words);
	*words = NULL;
	return -1;
}
