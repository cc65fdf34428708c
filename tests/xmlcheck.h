#pragma once

/*
 * An XML well-formedness check for the SVG files the tests read (tests/test-plot.c,
 * tests/test-report.c).
 */

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A small XML well-formedness checker: declarations, comments and CDATA are skipped; tags
 * must nest and match, attributes must be name="value" or name='value' with no '<' in the
 * value, text may hold no '<' or bare '&', and there is one root element, <svg>. Returns
 * NULL or what is wrong; counts the elements named path and polyline. */
static const char *
xml_check(const char *s, int *paths)
{
	static char why[160];
	char stack[64][32];
	int depth = 0, roots = 0;

	*paths = 0;
	while (*s) {
		if (*s == '&') {
			size_t n = strspn(s + 1,
					  "#abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789");

			if (n == 0 || s[1 + n] != ';')
				return "a bare '&' in text";
			s += n + 2;
			continue;
		}
		if (*s != '<') {
			if (depth == 0 && !isspace((unsigned char)*s))
				return "text outside the root element";
			s++;
			continue;
		}
		if (!strncmp(s, "<?", 2)) {
			s = strstr(s, "?>");
			if (!s)
				return "an unclosed <?";
			s += 2;
		} else if (!strncmp(s, "<!--", 4)) {
			s = strstr(s + 4, "-->");
			if (!s)
				return "an unclosed comment";
			s += 3;
		} else if (!strncmp(s, "<![CDATA[", 9)) {
			s = strstr(s, "]]>");
			if (!s)
				return "an unclosed CDATA section";
			s += 3;
		} else if (!strncmp(s, "<!DOCTYPE", 9)) {
			s = strchr(s, '>');
			if (!s)
				return "an unclosed DOCTYPE";
			s++;
		} else {
			bool closing = s[1] == '/';
			const char *name = s + 1 + closing;
			size_t n =
				strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789_:.-");

			if (n == 0 || n >= sizeof(stack[0]) || isdigit((unsigned char)name[0]))
				return "a stray '<'";
			s = name + n;
			if (closing) {
				s += strspn(s, " \t\r\n");
				if (*s != '>')
					return "junk in a closing tag";
				if (depth == 0 || strlen(stack[depth - 1]) != n ||
				    strncmp(stack[depth - 1], name, n)) {
					snprintf(why, sizeof(why), "</%.*s> closes <%s>", (int)n,
						 name, depth ? stack[depth - 1] : "nothing");
					return why;
				}
				depth--;
				s++;
				continue;
			}
			if (depth == 0) {
				if (roots++)
					return "more than one root element";
				if (n != 3 || strncmp(name, "svg", 3))
					return "the root element is not <svg>";
			}
			if ((n == 4 && !strncmp(name, "path", 4)) ||
			    (n == 8 && !strncmp(name, "polyline", 8)))
				(*paths)++;
			/* Attributes. */
			for (;;) {
				size_t ws = strspn(s, " \t\r\n"), an;
				char q;

				s += ws;
				if (*s == '>' || !strncmp(s, "/>", 2))
					break;
				if (!ws)
					return "attributes not separated by space";
				an = strspn(s,
					    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					    "0123456789_:.-");
				if (an == 0)
					return "a bad attribute name";
				s += an;
				s += strspn(s, " \t\r\n");
				if (*s != '=')
					return "an attribute without a value";
				s++;
				s += strspn(s, " \t\r\n");
				q = *s;
				if (q != '"' && q != '\'')
					return "an unquoted attribute value";
				s++;
				while (*s && *s != q) {
					if (*s == '<')
						return "a '<' in an attribute value";
					s++;
				}
				if (!*s)
					return "an unclosed attribute value";
				s++;
			}
			if (*s == '/') {
				s += 2;
				continue;
			}
			if (depth == (int)(sizeof(stack) / sizeof(stack[0])))
				return "nesting too deep";
			snprintf(stack[depth++], sizeof(stack[0]), "%.*s", (int)n, name);
			s++;
		}
	}
	if (depth)
		return "unclosed elements at the end";
	if (!roots)
		return "no root element";
	return NULL;
}
