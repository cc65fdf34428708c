/*
 * JSON text in and out (analysis/json_text.h): cJSON's printer and parser, with base/utf8.h's
 * escapes for the bytes that are not UTF-8 (cJSON copies such bytes as they are).
 */

#include "config.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/json_text.h"
#include "base/utf8.h"
#include "base/util.h"

char *
json_text_print(const cJSON *obj, bool formatted)
{
	char *raw = formatted ? cJSON_Print(obj) : cJSON_PrintUnformatted(obj), *text;

	if (!raw)
		return NULL;
	text = utf8_json_escape(raw);
	cJSON_free(raw);
	return text;
}

cJSON *
json_text_parse(const char *text, size_t len, bool whole)
{
	char *copy = xzalloc(len + 1);
	cJSON *root;

	memcpy(copy, text, len);
	len = utf8_json_unescape(copy, len);
	/* The NUL counted: "whole" finds it after the value and the white space that follows. */
	root = cJSON_ParseWithLengthOpts(copy, len + 1, NULL, whole);
	free(copy);
	return root;
}
