#pragma once

/*
 * The lines memsim writes to stderr as it works: "memsim: " and one line of text, whatever a
 * user or a file put in it. Errors go back to the caller as a message in err (every layer's
 * err/errlen); what is said along the way (a sweep's counts, warnings and notes, a worker that
 * died) goes here, so that code below the command line need not call it back.
 */

#include <stdarg.h>

/* Writes "memsim: ", the message fmt gives and a newline to stderr, the message on one line:
 * control characters (a newline too), DEL, C1 controls and bytes that are not UTF-8 are shown
 * as \xNN, printable ASCII and valid UTF-8 as they are (utf8_printable()). */
void message_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void message_vline(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
