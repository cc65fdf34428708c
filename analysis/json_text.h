#pragma once

/*
 * JSON text in and out: every JSON text memsim writes is printed here and every one it reads
 * parsed here, so that a string holding bytes that are not UTF-8 (a path, a --param value, a
 * name) is written as valid UTF-8 and read back as the same bytes (base/utf8.h's rule: each
 * such byte as the escape \udcXX, as Python's os.fsdecode() names it).
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* obj's JSON text, formatted or on one line. Caller frees with free(); NULL where cJSON
 * cannot print it. */
char *json_text_print(const cJSON *obj, bool formatted);

/* The JSON value in the len bytes at text (a NUL there or not), \udcXX escapes back into their
 * bytes. whole: nothing but white space may follow the value. NULL where it does not parse.
 * Caller frees with cJSON_Delete(). */
cJSON *json_text_parse(const char *text, size_t len, bool whole);
