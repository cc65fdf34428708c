#pragma once

/*
 * A small XML well-formedness check for the SVG files the tests read: declarations,
 * comments, CDATA and DOCTYPE skipped; start and end tags balanced; attributes quoted;
 * entities well formed; exactly one root element, <svg>.
 */

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define XML_DEPTH_MAX 256

static bool
xml_fail(char *why, size_t len, const char *msg, const char *at, const char *start)
{
	snprintf(why, len, "%s at byte %ld", msg, (long)(at - start));
	return false;
}

static bool
xml_well_formed(const char *s, char *why, size_t len)
{
	const char *start = s, *stack[XML_DEPTH_MAX];
	size_t names[XML_DEPTH_MAX];
	int depth = 0, roots = 0;

	while (*s) {
		if (*s == '&') {
			const char *semi = strchr(s, ';');

			if (!semi || semi - s > 10 || semi == s + 1)
				return xml_fail(why, len, "bad entity", s, start);
			s = semi + 1;
			continue;
		}
		if (*s != '<') {
			if (depth == 0 && !isspace((unsigned char)*s))
				return xml_fail(why, len, "text outside the root", s, start);
			s++;
			continue;
		}
		if (strncmp(s, "<!--", 4) == 0) {
			const char *e = strstr(s + 4, "-->");

			if (!e)
				return xml_fail(why, len, "unterminated comment", s, start);
			s = e + 3;
		} else if (strncmp(s, "<![CDATA[", 9) == 0) {
			const char *e = strstr(s + 9, "]]>");

			if (!e)
				return xml_fail(why, len, "unterminated CDATA", s, start);
			s = e + 3;
		} else if (strncmp(s, "<?", 2) == 0) {
			const char *e = strstr(s + 2, "?>");

			if (!e)
				return xml_fail(why, len, "unterminated declaration", s, start);
			s = e + 2;
		} else if (strncmp(s, "<!", 2) == 0) {
			const char *e = strchr(s + 2, '>');

			if (!e)
				return xml_fail(why, len, "unterminated DOCTYPE", s, start);
			s = e + 1;
		} else if (s[1] == '/') {
			const char *n = s + 2;
			size_t k = strcspn(n, " \t\r\n>");

			if (depth == 0 || k != names[depth - 1] ||
			    strncmp(n, stack[depth - 1], k) != 0)
				return xml_fail(why, len, "end tag does not match", s, start);
			depth--;
			s = strchr(n, '>');
			if (!s)
				return xml_fail(why, len, "unterminated end tag", n, start);
			s++;
		} else {
			const char *n = s + 1, *p;
			size_t k = strcspn(n, " \t\r\n/>");

			if (k == 0 || !(isalpha((unsigned char)*n) || *n == '_'))
				return xml_fail(why, len, "stray '<'", s, start);
			if (depth == 0) {
				if (++roots > 1)
					return xml_fail(why, len, "a second root element", s,
							start);
				if (k != 3 || strncmp(n, "svg", 3) != 0)
					return xml_fail(why, len, "the root is not <svg>", s,
							start);
			}
			p = n + k;
			/* attributes: name="value" or name='value' */
			for (;;) {
				while (isspace((unsigned char)*p))
					p++;
				if (*p == '>' || (p[0] == '/' && p[1] == '>'))
					break;
				if (!*p)
					return xml_fail(why, len, "unterminated tag", s, start);
				while (*p && *p != '=' && *p != '>' && !isspace((unsigned char)*p))
					p++;
				if (*p != '=' || (p[1] != '"' && p[1] != '\''))
					return xml_fail(why, len, "unquoted attribute", p, start);
				{
					char q = p[1];
					const char *e = strchr(p + 2, q);

					if (!e || memchr(p + 2, '<', (size_t)(e - p - 2)))
						return xml_fail(why, len, "bad attribute value", p,
								start);
					p = e + 1;
				}
			}
			if (*p == '/') {
				s = p + 2;
			} else {
				if (depth == XML_DEPTH_MAX)
					return xml_fail(why, len, "nested too deep", s, start);
				stack[depth] = n;
				names[depth++] = k;
				s = p + 1;
			}
		}
	}
	if (depth)
		return xml_fail(why, len, "unclosed element", s, start);
	if (roots != 1)
		return xml_fail(why, len, "no root element", s, start);
	return true;
}
